/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the crash extension share (pfscale.c lists them):
 * the layout table (layout.c), tasks (tasks.c), the maple walk (maple.c),
 * the pure decode core (decode.h) and the JSON writer (lib/json_writer.h).
 */
#ifndef PFSCALE_H
#define PFSCALE_H

#include "defs.h"
#include "decode.h"
#include "json_writer.h"

#define PFS_MAX_TASKS	100000	/* a corrupt list must not loop forever */
#define PFS_MAX_VMAS	1000000
#define PFS_MAX_COUNTERS 1024
#define PFS_MAX_THREADS 4096
#define PFS_MAX_MM	16	/* MM counters named (6.1 has 4): per thread in pfrss */
#define PFS_MAX_MAPLE_HEIGHT 64	/* a corrupt pfscale-layout must not recurse deep */

/* What the commands need; a missing group makes them say so. */
enum { NEED_TASK = 1, NEED_RSS = 2, NEED_VMA = 4, NEED_COUNTERS = 8, NEED_PTE = 16,
       NEED_LAST = NEED_PTE };

/*
 * The #defines of pfscale-layout, as scripts/layout.def lists them: their
 * index in L.def[] is PFS_DEF_NAME. Only # and ## touch NAME, so that
 * crash's own macros of the same names (PTRS_PER_PTE) do not expand.
 */
enum pfs_define {
#define LAYOUT_ITEM(name, kind, need, lo, hi) PFS_DEF_##name,
#include "../scripts/layout.def"
#undef LAYOUT_ITEM
	PFS_NR_DEFINES
};
#define PFS_DEF(name) (L.def[PFS_DEF_##name])

/*
 * The struct members the extension reads, named struct_member: offset
 * OFF(task_struct_pid), size checked by PFS_READ before a read (as
 * dminfo's GET_VALUE). need: the NEED_* groups that cannot do without
 * it (0: optional, its offset -1 when absent).
 */
#define PFS_MEMBERS(X) \
	X(task_struct, tasks, NEED_TASK) X(task_struct, pid, NEED_TASK) \
	X(task_struct, tgid, NEED_TASK) X(task_struct, comm, NEED_TASK) \
	X(task_struct, mm, NEED_TASK) X(task_struct, signal, NEED_TASK) \
	X(task_struct, thread_node, NEED_TASK) X(signal_struct, thread_head, NEED_TASK) \
	X(list_head, next, NEED_TASK) X(mm_struct, pgd, NEED_TASK) \
	X(mm_struct, mm_users, NEED_VMA) X(mm_struct, mm_count, NEED_VMA) \
	X(mm_struct, map_count, NEED_VMA) X(mm_struct, pgtables_bytes, 0) \
	X(mm_struct, brk, NEED_VMA) X(mm_struct, start_brk, NEED_VMA) \
	X(mm_struct, start_stack, NEED_VMA) X(mm_struct, mm_mt, NEED_VMA) \
	X(mm_struct, mmap_lock, 0) X(mm_struct, page_table_lock, 0) \
	X(rw_semaphore, count, 0) X(rw_semaphore, owner, 0) X(spinlock, rlock, 0) \
	X(raw_spinlock, raw_lock, 0) X(qspinlock, val, 0) X(raw_spinlock, owner_cpu, 0) \
	X(task_struct, rss_stat, NEED_RSS) X(task_rss_stat, events, NEED_RSS) \
	X(task_rss_stat, count, NEED_RSS) X(mm_struct, rss_stat, NEED_RSS) \
	X(mm_rss_stat, count, NEED_RSS) X(maple_tree, ma_root, NEED_VMA) \
	X(maple_tree, ma_flags, NEED_VMA) X(maple_node, slot, NEED_VMA) \
	X(maple_range_64, pivot, NEED_VMA) X(maple_range_64, slot, NEED_VMA) \
	X(maple_arange_64, pivot, NEED_VMA) X(maple_arange_64, slot, NEED_VMA) \
	X(vm_area_struct, vm_start, NEED_VMA) X(vm_area_struct, vm_end, NEED_VMA) \
	X(vm_area_struct, vm_flags, NEED_VMA) X(vm_area_struct, vm_pgoff, NEED_VMA) \
	X(vm_area_struct, vm_file, NEED_VMA) X(vm_area_struct, vm_ops, NEED_VMA) \
	X(vm_area_struct, vm_private_data, 0) X(vm_area_struct, anon_vma, NEED_VMA) \
	X(file, f_path, 0) X(path, dentry, 0) X(dentry, d_name, 0) X(dentry, d_parent, 0) \
	X(qstr, name, 0) X(vm_special_mapping, name, 0) \
	X(pfscale_counter_desc, name, NEED_COUNTERS) \
	/* optional: older pfscale kernels' tables have no kinds ("") */ \
	X(pfscale_counter_desc, kind, 0) X(pfscale_counter_desc, level, 0) \
	X(pfscale_counter_desc, site, NEED_COUNTERS) \
	X(pfscale_counter_desc, meaning, NEED_COUNTERS) \
	X(trace_print_flags, mask, 0) X(trace_print_flags, name, 0)

enum pfs_member_id {
#define PFS_MEMBER_ID(s, m, need) PFS_M_##s##_##m,
	PFS_MEMBERS(PFS_MEMBER_ID)
#undef PFS_MEMBER_ID
	PFS_NR_MEMBERS
};
#define OFF(s_m) (L.off[PFS_M_##s_m])
/* Read member s_m of the struct at addr into var, whose size must be the member's. */
#define PFS_READ(addr, s_m, var, flags) \
	pfs_read_member((addr), PFS_M_##s_m, &(var), sizeof(var), (flags))

/* The one table of layout knowledge, filled at the first command. */
struct pfs_layout {
	int init, missing;	/* missing: the NEED_* groups lacking something */
	char missing_what[NEED_LAST + 1][96];
	/*
	 * From pfscale-layout: the groups it does not serve (no file, a name
	 * absent, a value out of bounds) and why, in one line each. Unlike
	 * the rest, read again at the next command while something lacks.
	 */
	int defs_missing;
	char defs_what[NEED_LAST + 1][1024];
	char layout_file[PATH_MAX + 16];	/* + "/pfscale-layout" */
	long off[PFS_NR_MEMBERS], size[PFS_NR_MEMBERS];	/* -1 if absent */
	/* the MM counters, by the kernel's enumerators (MM_FILEPAGES: filepages) */
	int nr_mm;
	long mm_index[PFS_MAX_MM], nr_mm_counters;
	char mm_names[PFS_MAX_MM][32];
	struct pfd_maple_geo maple;
	struct pfd_vm_flags vm;
	ulong special_ops, legacy_special_ops, gate_vma, gate_ops;
	int gate_listed;	/* vsyscall_mode is not NONE: maps lists [vsyscall] */
	int levels;		/* page-table levels: 4 or 5 */
	/* the #defines, from pfscale-layout: PFS_DEF(NAME) by their kernel names */
	ulong def[PFS_NR_DEFINES];
	/* ... and what follows from them */
	ulong page_size;
	struct pfd_pte pte;
	struct pfd_rwsem rwsem;
	const char *swap_kind[PFD_MAX_SWP_TYPES];	/* NULL for swap files */
	/* pfscale counters */
	long desc_size, nr_counters;
};
extern struct pfs_layout L;

/* layout.c */
void pfs_need(int need);
int pfs_options(int *json);
int pfs_read_member(ulong addr, int id, void *buf, long len, ulong flags);
int pfs_gdb_print(const char *expr, char *out, int len);

/* tasks.c */
struct pfs_task {
	ulong task, mm;
	int pid, tgid;
	char comm[TASK_COMM_LEN + 1];
};
int pfs_for_each_task(int (*fn)(struct pfs_task *, void *), void *arg);
void pfs_lookup(char *arg, struct pfs_task *t);

/* maple.c: a walk of a maple tree that calls fn for each leaf entry */
struct pfs_maple_walk {
	void (*fn)(ulong entry, ulong first, ulong last, void *ctx);
	void *ctx;
	int quiet;		/* no INFO lines for what is wrong */
	long nodes, bad;	/* nodes read; what was wrong */
};
void pfs_maple_walk(struct pfs_maple_walk *w, ulong ma_root);
uint pfs_maple_height(uint ma_flags);

/* cmd_rss.c: the split rss of an mm, as gdb's pf-rss */
struct pfs_rss {
	struct pfs_task who;
	long mm[PFS_MAX_MM], delta[PFS_MAX_MM];
	int nthreads;
	struct pfs_thread {
		int pid, events;
		char comm[TASK_COMM_LEN + 1];
		long delta[PFS_MAX_MM];
	} *threads;
	long rss_mm, rss_split;
};
void pfs_rss_read(struct pfs_task *t, struct pfs_rss *r);
void pfs_rss_json(struct jw *w, struct pfs_rss *r);
void pfs_threads_json(struct jw *w, struct pfs_rss *r);

/* the commands, one file a group */
void cmd_pfcounters(void);
void cmd_pfps(void);
void cmd_pfrss(void);
void cmd_pfpte(void);
void cmd_pfvma(void);
extern char *help_pfcounters[], *help_pfps[], *help_pfrss[], *help_pfpte[], *help_pfvma[];

#endif
