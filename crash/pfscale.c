/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfscale.so: a crash(8) extension that reads the pfscale figures out of
 * a vmcore (or live memory) of a pfscale-patched linux-source-6.1 kernel.
 *
 *   crash> extend build/pfscale.so
 *   crash> pfcounters [-j]             pfscale counters summed over CPUs
 *   crash> pfps [-j]                   pid, tgid, comm, mm of every task
 *   crash> pfrss [-j] PID              split RSS of PID's mm, as debugfs rss
 *   crash> pfpte [-j] PID START END    present PTE runs of PID in [START, END)
 *   crash> pfvma [-j] PID              PID's mm and VMAs, from its maple tree
 *
 * -j prints one JSON object with the keys of the gdb command's --json
 * (pf-counters, pf-rss, pf-range, pf-mm; docs/debuggers.md).
 *
 * crash 8.0.2 does not understand 6.1's task table (its ps shows only the
 * idle tasks, "vm PID" and "vtop -u" fail) and has no maple tree support,
 * so this extension walks init_task.tasks and each thread group's
 * signal->thread_head list itself, user page tables with physical reads
 * from mm->pgd, and mm->mm_mt from its root node.
 *
 * What it knows of the kernel's layout is in one table (struct
 * pfs_layout), filled once per session from the kernel's debug info and
 * tables: member offsets (MEMBER_OFFSET, ANON_MEMBER_OFFSET for members of
 * anonymous unions), enum values (enumerator_value: enum maple_type, the
 * MM counters), mt_slots[] and mt_pivots[], vmaflag_names[], the length of
 * swap_info[]; and the #defines, which have no debug info (page-table
 * and swap-entry bits, the swap types, the maple tree's node-pointer
 * encoding, the rwsem bits), from pfscale-layout: the "NAME VALUE" file
 * that scripts/layout.sh writes next to vmlinux when the kernel is built
 * (the directory of the vmlinux crash loaded; PFSCALE_LAYOUT=FILE
 * overrides; its names, the commands needing each and their bounds are
 * scripts/layout.def's). pfpte and pfvma need it and, without it, say in
 * one line how to make it; the other commands do not. What each field means follows
 * docs/debuggers.md's rules, as gdb-scripts/pfscale_gdb/decode.py does.
 *
 * Build: make build/pfscale.so (the Makefile's one rule).
 */
#include "defs.h"

#define PFS_MAX_TASKS	100000	/* a corrupt list must not loop forever */
#define PFS_MAX_VMAS	1000000
#define PFS_MAX_COUNTERS 1024
#define PFS_NR_MM	4	/* the MM counters this extension names */
#define PFS_MAX_SWP_TYPE_BITS 6	/* swap_kind[] and the walk's counts hold 2^6 */
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

enum { PFS_REQUIRED, PFS_OPTIONAL };
static const struct pfs_define_desc {
	const char *name;
	int optional, need;	/* need: the groups that cannot do without it */
	ulong lo, hi;		/* sanity bounds of the value */
} pfs_schema[PFS_NR_DEFINES] = {
#define LAYOUT_ITEM(name, kind, need, lo, hi) { #name, PFS_##kind, need, lo, hi },
#include "../scripts/layout.def"
#undef LAYOUT_ITEM
};

/* The arrays sized by PFS_MAX_* hold what layout.def's bounds let in. */
enum {
#define LAYOUT_ITEM(name, kind, need, lo, hi) PFS_HI_##name = (hi) < INT_MAX ? (int)(hi) : INT_MAX,
#include "../scripts/layout.def"
#undef LAYOUT_ITEM
};
_Static_assert(PFS_HI_SWP_TYPE_BITS <= PFS_MAX_SWP_TYPE_BITS &&
	       PFS_HI_MAX_SWAPFILES_SHIFT <= PFS_MAX_SWP_TYPE_BITS,
	       "layout.def lets in more swap type bits than swap_kind[] holds");
_Static_assert(PFS_HI_MAPLE_HEIGHT_MAX <= PFS_MAX_MAPLE_HEIGHT,
	       "layout.def lets in a deeper maple tree than the walk recurses");

/* The one table of layout knowledge: -1 (or 0 for addresses) if absent. */
static struct pfs_layout {
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
	/* task_struct, signal_struct, mm_struct */
	long task_tasks, task_pid, task_tgid, task_comm, task_mm, task_signal,
		task_thread_node, signal_thread_head, mm_pgd, mm_users, mm_count,
		mm_map_count, mm_pgtables_bytes, mm_brk, mm_start_brk, mm_start_stack,
		mm_mt, mm_mmap_lock, mm_page_table_lock;
	/* split rss: task_struct.rss_stat, mm_struct.rss_stat */
	long task_rss_stat, trss_events, trss_count, mm_rss_stat, mrss_count;
	long mm_index[PFS_NR_MM], nr_mm_counters;
	/* maple tree */
	long mt_root, mt_flags, r64_pivot, r64_slot, a64_pivot, a64_slot, node_size;
	long maple_dense, maple_leaf_64, maple_range_64, maple_arange_64;
	unsigned char mt_slots[8], mt_pivots[8];
	/* VMAs */
	long vm_start, vm_end, vm_flags, vm_pgoff, vm_file, vm_ops, vm_private,
		vm_anon_vma, file_f_path, path_dentry, dentry_name, dentry_parent,
		qstr_name, special_name;
	ulong vm_read, vm_write, vm_exec, vm_mayshare;
	const char *vm_flags_source;
	ulong special_ops, legacy_special_ops, gate_vma, gate_ops;
	int gate_listed;	/* vsyscall_mode is not NONE: maps lists [vsyscall] */
	/* rwsem / spinlock */
	long rwsem_count, rwsem_owner, spin_rlock, raw_lock, qspin_val, raw_owner_cpu;
	/* page tables and swap */
	int levels;
	/* the #defines, from pfscale-layout: PFS_DEF(NAME) by their kernel names */
	ulong def[PFS_NR_DEFINES];
	/* ... and what follows from them */
	ulong page_size, pte_present, pte_pse, pte_protnone, pte_special, pte_addr_mask;
	int level_bits, swp_type_shift, nr_swp_types;
	const char *swap_kind[1 << PFS_MAX_SWP_TYPE_BITS]; /* per swap type: NULL for swap files */
	/* pfscale counters */
	long desc_size, desc_name, desc_kind, desc_level, desc_site, desc_meaning, nr_counters;
} L;

static const char *mm_names[PFS_NR_MM] = { "filepages", "anonpages", "swapents", "shmempages" };
static const char *mm_enums[PFS_NR_MM] = { "MM_FILEPAGES", "MM_ANONPAGES", "MM_SWAPENTS",
					   "MM_SHMEMPAGES" };

/* A member's offset, also inside an anonymous union or struct. */
static long pfs_member(const char *s, const char *m)
{
	long o = MEMBER_OFFSET((char *)s, (char *)m);

	return o >= 0 ? o : ANON_MEMBER_OFFSET((char *)s, (char *)m);
}

/* Record that the NEED_* groups in group lack what (the first lack is kept). */
static void pfs_lack(int group, const char *what)
{
	int i;

	for (i = 1; i <= NEED_LAST; i <<= 1)
		if ((i & group) && !(L.missing & i))
			snprintf(L.missing_what[i], sizeof(L.missing_what[i]), "%s", what);
	L.missing |= group;
}

/*
 * Record that pfscale-layout does not serve the NEED_* groups in group,
 * and why (printf-style, naming the file; pfs_need adds how to make it).
 */
static void __attribute__((format(printf, 2, 3))) pfs_defs_lack(int group, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 1; i <= NEED_LAST; i <<= 1)
		if ((i & group) && !(L.defs_missing & i)) {
			va_start(ap, fmt);
			vsnprintf(L.defs_what[i], sizeof(L.defs_what[i]), fmt, ap);
			va_end(ap);
		}
	L.defs_missing |= group;
}

struct pfs_member_desc {
	long *off;
	const char *s, *m;
	int need;	/* the groups that cannot do without it; 0: optional */
};

/* What gdb prints for "p EXPR" (after "= "), into out; 0 if nothing. */
static int pfs_gdb_print(const char *expr, char *out, int len)
{
	char cmd[128], line[BUFSIZE], *eq;
	int ok = 0;

	snprintf(cmd, sizeof(cmd), "p %s", expr);
	open_tmpfile();
	if (gdb_pass_through(cmd, pc->tmpfile, GNU_RETURN_ON_ERROR)) {
		rewind(pc->tmpfile);
		while (fgets(line, sizeof(line), pc->tmpfile))
			if (line[0] == '$' && (eq = strstr(line, "= "))) {
				snprintf(out, len, "%s", eq + 2);
				out[strcspn(out, "\n")] = 0;
				ok = 1;
			}
	}
	close_tmpfile();
	return ok;
}

/*
 * An enumerator's value. crash's enumerator_value() refuses names that are
 * also struct tags (maple_range_64): then ask gdb for it in decimal.
 */
static long pfs_enum(const char *name, int need)
{
	char expr[128], val[64];
	long v;

	if (enumerator_value((char *)name, &v))
		return v;
	snprintf(expr, sizeof(expr), "/d %s", name);
	if (pfs_gdb_print(expr, val, sizeof(val)) && sscanf(val, "%ld", &v) == 1)
		return v;
	pfs_lack(need, name);
	return -1;
}

/* A kernel table of small integers (mt_slots[]) into buf. */
static void pfs_byte_table(const char *sym, unsigned char *buf, int len, int need)
{
	int n;

	memset(buf, 0, len);
	if (!symbol_exists((char *)sym) || (n = get_array_length((char *)sym, NULL, 0)) <= 0 ||
	    n > len || !readmem(symbol_value((char *)sym), KVADDR, buf, n, (char *)sym,
				RETURN_ON_ERROR | QUIET))
		pfs_lack(need, sym);
}

/*
 * The VMA flag values, by their names in the kernel's vmaflag_names[]
 * (mm/debug.c, CONFIG_DEBUG_VM); without it include/linux/mm.h's values,
 * which smaps' VmFlags show too and which have not changed since 2.6.
 */
static void pfs_vm_flags(void)
{
	long size = STRUCT_SIZE("trace_print_flags");
	long mask = MEMBER_OFFSET("trace_print_flags", "mask");
	long name = MEMBER_OFFSET("trace_print_flags", "name");
	ulong base, v, p;
	char buf[32];
	int i, found = 0;

	L.vm_read = 0x1, L.vm_write = 0x2, L.vm_exec = 0x4, L.vm_mayshare = 0x80;
	L.vm_flags_source = "include/linux/mm.h";
	if (!symbol_exists("vmaflag_names") || size <= 0 || mask < 0 || name < 0)
		return;
	base = symbol_value("vmaflag_names");
	for (i = 0; i < 64; i++) {
		if (!readmem(base + i * size + name, KVADDR, &p, sizeof(p), "vmaflag_names",
			     RETURN_ON_ERROR | QUIET) || !p ||
		    !readmem(base + i * size + mask, KVADDR, &v, sizeof(v), "vmaflag_names",
			     RETURN_ON_ERROR | QUIET) ||
		    !read_string(p, buf, sizeof(buf) - 1))
			break;
		if (!strcmp(buf, "read"))
			L.vm_read = v, found++;
		else if (!strcmp(buf, "write"))
			L.vm_write = v, found++;
		else if (!strcmp(buf, "exec"))
			L.vm_exec = v, found++;
		else if (!strcmp(buf, "mayshare"))
			L.vm_mayshare = v, found++;
	}
	if (found == 4)
		L.vm_flags_source = "vmaflag_names[]";
	else
		pfs_lack(NEED_VMA, "vmaflag_names[] read, write, exec, mayshare");
}

/*
 * The swap types that are not swap files, allotted upwards from
 * MAX_SWAPFILES as include/linux/swap.h does: SWP_HWPOISON_NUM hwpoison,
 * SWP_MIGRATION_NUM migration, SWP_DEVICE_NUM device-private,
 * SWP_PTE_MARKER_NUM pte-marker types, then SWP_SWAPIN_ERROR_NUM
 * swapin-error, the last; each NUM 0 if not configured. All from
 * pfscale-layout; 0 if they do not add up as swap.h says.
 */
static int pfs_swap_kinds(void)
{
	static const char *const mig[] = { "migration-read", "migration-read-exclusive",
					   "migration-write" };
	static const char *const dev[] = { "device-write", "device-read",
					   "device-exclusive-write", "device-exclusive-read" };
	const struct {
		ulong num;
		const char *const *names;	/* the first names of the group */
		ulong nnames;
		const char *kind;		/* the others' */
	} groups[] = {
		{ PFS_DEF(SWP_HWPOISON_NUM), NULL, 0, "hwpoison" },
		{ PFS_DEF(SWP_MIGRATION_NUM), mig, sizeof(mig) / sizeof(mig[0]), "migration" },
		{ PFS_DEF(SWP_DEVICE_NUM), dev, sizeof(dev) / sizeof(dev[0]), "device" },
		{ PFS_DEF(SWP_PTE_MARKER_NUM), NULL, 0, "pte-marker" },
		{ PFS_DEF(SWP_SWAPIN_ERROR_NUM), NULL, 0, "swapin-error" },
	};
	ulong t = PFS_DEF(MAX_SWAPFILES), i, g, sum = 0;

	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		sum += groups[g].num;
	if (PFS_DEF(MAX_SWAPFILES_SHIFT) > PFS_DEF(SWP_TYPE_BITS) ||
	    PFS_DEF(MAX_SWAPFILES) + sum != 1UL << PFS_DEF(MAX_SWAPFILES_SHIFT)) {
		pfs_defs_lack(NEED_PTE, "%s: MAX_SWAPFILES %lu and the SWP_*_NUM (%lu) do not add up "
			      "to 2^MAX_SWAPFILES_SHIFT %lu (within SWP_TYPE_BITS %lu)",
			      L.layout_file, PFS_DEF(MAX_SWAPFILES), sum,
			      PFS_DEF(MAX_SWAPFILES_SHIFT), PFS_DEF(SWP_TYPE_BITS));
		return 0;
	}
	memset(L.swap_kind, 0, sizeof(L.swap_kind));
	for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (i = 0; i < groups[g].num; i++)
			L.swap_kind[t++] = i < groups[g].nnames ? groups[g].names[i] : groups[g].kind;
	return 1;
}

/* Where pfscale-layout is: $PFSCALE_LAYOUT, else next to crash's vmlinux. */
static void pfs_layout_path(void)
{
	const char *env = getenv("PFSCALE_LAYOUT"), *nl, *slash;
	char dir[PATH_MAX], abs[PATH_MAX];

	if (env && *env) {
		snprintf(L.layout_file, sizeof(L.layout_file), "%s", env);
		return;
	}
	/* namelist_orig: the file named, if crash decompressed it elsewhere */
	nl = pc->namelist_orig ? pc->namelist_orig : pc->namelist;
	slash = nl ? strrchr(nl, '/') : NULL;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == nl ? 1 : (int)(slash - nl), nl);
	else
		snprintf(dir, sizeof(dir), ".");
	/* absolute, for the messages */
	if (realpath(dir, abs))
		snprintf(dir, sizeof(dir), "%s", abs);
	snprintf(L.layout_file, sizeof(L.layout_file), "%s%spfscale-layout", dir,
		 strcmp(dir, "/") ? "/" : "");
}

/*
 * The kernel's GNU build-id, in hex: the NT_GNU_BUILD_ID note among its
 * ELF notes (__start_notes..__stop_notes, read from memory). 0 if none.
 */
static int pfs_build_id(char *hex, int len)
{
	unsigned char notes[1024];
	ulong start, size, at, i;
	uint32_t nh[3];	/* Elf64_Nhdr: namesz, descsz, type */

	if (!symbol_exists("__start_notes") || !symbol_exists("__stop_notes"))
		return 0;
	start = symbol_value("__start_notes");
	size = symbol_value("__stop_notes") - start;
	if (size > sizeof(notes) ||
	    !readmem(start, KVADDR, notes, size, "notes", RETURN_ON_ERROR | QUIET))
		return 0;
	for (at = 0; at + sizeof(nh) <= size; ) {
		ulong name, desc;

		memcpy(nh, notes + at, sizeof(nh));
		name = at + sizeof(nh);
		desc = name + ((nh[0] + 3) & ~3UL);
		at = desc + ((nh[1] + 3) & ~3UL);
		if (at > size)
			break;
		if (nh[2] == 3 && nh[0] == 4 && !memcmp(notes + name, "GNU", 4) &&
		    nh[1] > 0 && (int)nh[1] * 2 < len) {
			for (i = 0; i < nh[1]; i++)
				sprintf(hex + 2 * i, "%02x", notes[desc + i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Fill the #define part of the table from pfscale-layout: "NAME VALUE"
 * lines, VALUE decimal, negative for a value with bit 63 set; '#' lines
 * are comments ("# build-id HEX": the vmlinux it was written for), names
 * not in scripts/layout.def are skipped. Each name
 * serves the groups that cannot do without it and has sanity bounds
 * [lo, hi], both from layout.def.
 */
static void pfs_defines(void)
{
	int found[PFS_NR_DEFINES] = { 0 }, n = PFS_NR_DEFINES, i, lineno = 0;
	char line[BUFSIZE], name[128], value[64], *end, want[130] = "", have[130];
	FILE *f;

	L.defs_missing = 0;
	pfs_layout_path();
	if (!(f = fopen(L.layout_file, "r"))) {
		pfs_defs_lack(NEED_PTE | NEED_VMA, "cannot read %s (%s)", L.layout_file,
			      strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		ulong v = 0;
		char extra;
		int ok;

		lineno++;
		if (sscanf(line, "# build-id %129[0-9a-f]", want) == 1)
			continue;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
			continue;
		ok = sscanf(line, "%127s %63s %c", name, value, &extra) == 2;
		if (ok) {
			/* decimal; negative: bit 63 set (as unsigned 64-bit) */
			errno = 0;
			if (value[0] == '-')
				v = (ulong)strtoll(value, &end, 10);
			else
				v = strtoul(value, &end, 10);
			ok = end != value && !*end && !errno;
		}
		if (!ok) {
			pfs_defs_lack(NEED_PTE | NEED_VMA, "%s line %d is not \"NAME VALUE\"",
				      L.layout_file, lineno);
			break;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(pfs_schema[i].name, name)) {
				L.def[i] = v;
				found[i] = 1;
			}
	}
	fclose(f);
	for (i = 0; i < n; i++) {
		if (!found[i] && !pfs_schema[i].optional)
			pfs_defs_lack(pfs_schema[i].need, "%s has no %s", L.layout_file,
				      pfs_schema[i].name);
		else if (found[i] && (L.def[i] < pfs_schema[i].lo || L.def[i] > pfs_schema[i].hi))
			pfs_defs_lack(pfs_schema[i].need, "%s: %s %ld is out of bounds",
				      L.layout_file, pfs_schema[i].name, (long)L.def[i]);
	}
	if (PFS_DEF(PAGE_SHIFT) <= 30)
		L.page_size = 1UL << PFS_DEF(PAGE_SHIFT);
	if (!(L.defs_missing & NEED_PTE) &&
	    (PFS_DEF(__PHYSICAL_MASK_SHIFT) <= PFS_DEF(PAGE_SHIFT) ||
	     PFS_DEF(PTRS_PER_PTE) & (PFS_DEF(PTRS_PER_PTE) - 1)))
		pfs_defs_lack(NEED_PTE, "%s: __PHYSICAL_MASK_SHIFT %lu or PTRS_PER_PTE %lu is off",
			      L.layout_file, PFS_DEF(__PHYSICAL_MASK_SHIFT), PFS_DEF(PTRS_PER_PTE));
	/*
	 * A file of another kernel: written for another build-id; in a file
	 * without one, swap_info[] does not have MAX_SWAPFILES entries.
	 */
	if (want[0] && pfs_build_id(have, sizeof(have))) {
		if (strcmp(want, have))
			pfs_defs_lack(NEED_PTE | NEED_VMA, "%s is not this vmlinux's: build-id %s, "
				      "vmlinux has %s", L.layout_file, want, have);
	} else if (!(L.defs_missing & NEED_PTE) && symbol_exists("swap_info") &&
		   get_array_length("swap_info", NULL, 0) != (int)PFS_DEF(MAX_SWAPFILES))
		pfs_defs_lack(NEED_PTE | NEED_VMA, "%s is not this vmlinux's: MAX_SWAPFILES %lu, swap_info[] "
			      "has %d", L.layout_file, PFS_DEF(MAX_SWAPFILES),
			      get_array_length("swap_info", NULL, 0));
	if (!(L.defs_missing & NEED_PTE) && pfs_swap_kinds()) {
		L.pte_present = 1UL << PFS_DEF(_PAGE_BIT_PRESENT);
		L.pte_pse = 1UL << PFS_DEF(_PAGE_BIT_PSE);
		/* with PRESENT clear: PROT_NONE */
		L.pte_protnone = 1UL << PFS_DEF(_PAGE_BIT_PROTNONE);
		/* no struct page: not RSS */
		L.pte_special = 1UL << PFS_DEF(_PAGE_BIT_SPECIAL);
		/* PTE_PFN_MASK: PAGE_MASK & __PHYSICAL_MASK */
		L.pte_addr_mask = ((1UL << PFS_DEF(__PHYSICAL_MASK_SHIFT)) - 1) &
				  ~(L.page_size - 1);
		/* every x86-64 table level has PTRS_PER_PTE entries */
		for (L.level_bits = 0; (1UL << L.level_bits) < PFS_DEF(PTRS_PER_PTE);
		     L.level_bits++)
			;
		/* a swap-format PTE keeps its type in its top SWP_TYPE_BITS */
		L.swp_type_shift = 64 - PFS_DEF(SWP_TYPE_BITS);
		L.nr_swp_types = 1 << PFS_DEF(SWP_TYPE_BITS);
	}
}

/* Fill the layout table once (per session: the vmlinux does not change). */
static void pfs_layout_init(void)
{
	struct pfs_member_desc members[] = {
		{ &L.task_tasks, "task_struct", "tasks", NEED_TASK },
		{ &L.task_pid, "task_struct", "pid", NEED_TASK },
		{ &L.task_tgid, "task_struct", "tgid", NEED_TASK },
		{ &L.task_comm, "task_struct", "comm", NEED_TASK },
		{ &L.task_mm, "task_struct", "mm", NEED_TASK },
		{ &L.task_signal, "task_struct", "signal", NEED_TASK },
		{ &L.task_thread_node, "task_struct", "thread_node", NEED_TASK },
		{ &L.signal_thread_head, "signal_struct", "thread_head", NEED_TASK },
		{ &L.mm_pgd, "mm_struct", "pgd", NEED_TASK },
		{ &L.mm_users, "mm_struct", "mm_users", NEED_VMA },
		{ &L.mm_count, "mm_struct", "mm_count", NEED_VMA },
		{ &L.mm_map_count, "mm_struct", "map_count", NEED_VMA },
		{ &L.mm_pgtables_bytes, "mm_struct", "pgtables_bytes", 0 },
		{ &L.mm_brk, "mm_struct", "brk", NEED_VMA },
		{ &L.mm_start_brk, "mm_struct", "start_brk", NEED_VMA },
		{ &L.mm_start_stack, "mm_struct", "start_stack", NEED_VMA },
		{ &L.mm_mt, "mm_struct", "mm_mt", NEED_VMA },
		{ &L.mm_mmap_lock, "mm_struct", "mmap_lock", 0 },
		{ &L.mm_page_table_lock, "mm_struct", "page_table_lock", 0 },
		{ &L.rwsem_count, "rw_semaphore", "count", 0 },
		{ &L.rwsem_owner, "rw_semaphore", "owner", 0 },
		{ &L.spin_rlock, "spinlock", "rlock", 0 },
		{ &L.raw_lock, "raw_spinlock", "raw_lock", 0 },
		{ &L.qspin_val, "qspinlock", "val", 0 },
		{ &L.raw_owner_cpu, "raw_spinlock", "owner_cpu", 0 },
		{ &L.task_rss_stat, "task_struct", "rss_stat", NEED_RSS },
		{ &L.trss_events, "task_rss_stat", "events", NEED_RSS },
		{ &L.trss_count, "task_rss_stat", "count", NEED_RSS },
		{ &L.mm_rss_stat, "mm_struct", "rss_stat", NEED_RSS },
		{ &L.mrss_count, "mm_rss_stat", "count", NEED_RSS },
		{ &L.mt_root, "maple_tree", "ma_root", NEED_VMA },
		{ &L.mt_flags, "maple_tree", "ma_flags", NEED_VMA },
		{ &L.r64_pivot, "maple_range_64", "pivot", NEED_VMA },
		{ &L.r64_slot, "maple_range_64", "slot", NEED_VMA },
		{ &L.a64_pivot, "maple_arange_64", "pivot", NEED_VMA },
		{ &L.a64_slot, "maple_arange_64", "slot", NEED_VMA },
		{ &L.vm_start, "vm_area_struct", "vm_start", NEED_VMA },
		{ &L.vm_end, "vm_area_struct", "vm_end", NEED_VMA },
		{ &L.vm_flags, "vm_area_struct", "vm_flags", NEED_VMA },
		{ &L.vm_pgoff, "vm_area_struct", "vm_pgoff", NEED_VMA },
		{ &L.vm_file, "vm_area_struct", "vm_file", NEED_VMA },
		{ &L.vm_ops, "vm_area_struct", "vm_ops", NEED_VMA },
		{ &L.vm_private, "vm_area_struct", "vm_private_data", 0 },
		{ &L.vm_anon_vma, "vm_area_struct", "anon_vma", NEED_VMA },
		{ &L.file_f_path, "file", "f_path", 0 },
		{ &L.path_dentry, "path", "dentry", 0 },
		{ &L.dentry_name, "dentry", "d_name", 0 },
		{ &L.dentry_parent, "dentry", "d_parent", 0 },
		{ &L.qstr_name, "qstr", "name", 0 },
		{ &L.special_name, "vm_special_mapping", "name", 0 },
		{ &L.desc_name, "pfscale_counter_desc", "name", NEED_COUNTERS },
		/* optional: older pfscale kernels' tables have no kinds ("") */
		{ &L.desc_kind, "pfscale_counter_desc", "kind", 0 },
		{ &L.desc_level, "pfscale_counter_desc", "level", 0 },
		{ &L.desc_site, "pfscale_counter_desc", "site", NEED_COUNTERS },
		{ &L.desc_meaning, "pfscale_counter_desc", "meaning", NEED_COUNTERS },
	};
	char what[96];
	int i;

	memset(&L, 0, sizeof(L));
	for (i = 0; i < (int)(sizeof(members) / sizeof(members[0])); i++) {
		*members[i].off = pfs_member(members[i].s, members[i].m);
		if (*members[i].off < 0 && members[i].need) {
			snprintf(what, sizeof(what), "%s.%s", members[i].s, members[i].m);
			pfs_lack(members[i].need, what);
		}
	}
	L.node_size = STRUCT_SIZE("maple_node");
	L.maple_dense = pfs_enum("maple_dense", NEED_VMA);
	L.maple_leaf_64 = pfs_enum("maple_leaf_64", NEED_VMA);
	L.maple_range_64 = pfs_enum("maple_range_64", NEED_VMA);
	L.maple_arange_64 = pfs_enum("maple_arange_64", NEED_VMA);
	pfs_byte_table("mt_slots", L.mt_slots, sizeof(L.mt_slots), NEED_VMA);
	pfs_byte_table("mt_pivots", L.mt_pivots, sizeof(L.mt_pivots), NEED_VMA);
	for (i = 0; i < PFS_NR_MM; i++)
		L.mm_index[i] = pfs_enum(mm_enums[i], NEED_RSS);
	L.nr_mm_counters = pfs_enum("NR_MM_COUNTERS", NEED_RSS);
	for (i = 0; i < PFS_NR_MM; i++)
		if (L.mm_index[i] < 0 || L.mm_index[i] >= L.nr_mm_counters ||
		    L.nr_mm_counters > 64)	/* the readers' buffers hold 64 */
			pfs_lack(NEED_RSS, "the MM counter enumerators");
	pfs_vm_flags();
	L.special_ops = symbol_exists("special_mapping_vmops") ?
		symbol_value("special_mapping_vmops") : 0;
	L.legacy_special_ops = symbol_exists("legacy_special_mapping_vmops") ?
		symbol_value("legacy_special_mapping_vmops") : 0;
	/* x86's [vsyscall]: not in the tree, but /proc/PID/maps lists it last. */
	L.gate_vma = symbol_exists("gate_vma") ? symbol_value("gate_vma") : 0;
	L.gate_ops = symbol_exists("gate_vma_ops") ? symbol_value("gate_vma_ops") : 0;
	/* get_gate_vma() returns NULL with vsyscall=none: gdb names the value */
	{
		char mode[32] = "";

		L.gate_listed = L.gate_vma && symbol_exists("vsyscall_mode") &&
			pfs_gdb_print("vsyscall_mode", mode, sizeof(mode)) &&
			strcmp(mode, "NONE");
	}
	L.levels = 4;
	if (symbol_exists("__pgtable_l5_enabled")) {
		uint l5 = 0;

		readmem(symbol_value("__pgtable_l5_enabled"), KVADDR, &l5, sizeof(l5),
			"__pgtable_l5_enabled", RETURN_ON_ERROR);
		L.levels = l5 ? 5 : 4;
	}
	pfs_defines();
	if (!symbol_exists("pfscale_counter_desc") || !symbol_exists("pfscale_counters"))
		pfs_lack(NEED_COUNTERS, "pfscale_counter_desc");
	L.desc_size = STRUCT_SIZE("pfscale_counter_desc");
	L.nr_counters = 0;
	if (symbol_exists("pfscale_nr_counters")) {
		uint nr = 0;

		readmem(symbol_value("pfscale_nr_counters"), KVADDR, &nr, sizeof(nr),
			"pfscale_nr_counters", RETURN_ON_ERROR);
		L.nr_counters = nr;
	}
	if (L.nr_counters <= 0 || L.nr_counters > PFS_MAX_COUNTERS || L.desc_size <= 0)
		pfs_lack(NEED_COUNTERS, "pfscale_nr_counters");
	L.init = 1;
}

/* The layout, with what cmd needs, or one error line (crash's FATAL). */
static void pfs_need(int need)
{
	int i, first = !L.init;

	if (first)
		pfs_layout_init();
	for (i = 1; i <= NEED_LAST; i <<= 1) {
		if (!(need & i & L.missing))
			continue;
		if (i == NEED_COUNTERS)
			error(FATAL, "this kernel has no pfscale patches (no %s)\n",
			      L.missing_what[i]);
		error(FATAL, "this kernel lacks %s\n", L.missing_what[i]);
	}
	/* pfscale-layout may have been made since the last command: look again */
	if (!first && (need & L.defs_missing))
		pfs_defines();
	for (i = 1; i <= NEED_LAST; i <<= 1)
		if (need & i & L.defs_missing)
			error(FATAL, "%s: make it with scripts/layout.sh KERNEL_BUILD_DIR > %s%s\n",
			      L.defs_what[i], L.layout_file,
			      getenv("PFSCALE_LAYOUT") && *getenv("PFSCALE_LAYOUT") ?
			      " (PFSCALE_LAYOUT)" : " (or set PFSCALE_LAYOUT)");
}

/* JSON output: strings escaped, keys as the gdb commands print them. */
static void pfs_json_str(const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

/* -j: the commands' one option; the rest are positional arguments. */
static int pfs_options(int *json)
{
	int c;

	*json = 0;
	while ((c = getopt(argcnt, args, "j")) != EOF) {
		if (c == 'j')
			*json = 1;
		else
			argerrs++;
	}
	if (argerrs)
		cmd_usage(pc->curcmd, SYNOPSIS);
	return optind;
}

/* Tasks */

struct pfs_task {
	ulong task, mm;
	int pid, tgid;
	char comm[TASK_COMM_LEN + 1];
};

static void pfs_read_task(ulong task, struct pfs_task *t)
{
	t->task = task;
	readmem(task + L.task_pid, KVADDR, &t->pid, sizeof(int), "task_struct pid", FAULT_ON_ERROR);
	readmem(task + L.task_tgid, KVADDR, &t->tgid, sizeof(int), "task_struct tgid", FAULT_ON_ERROR);
	readmem(task + L.task_mm, KVADDR, &t->mm, sizeof(ulong), "task_struct mm", FAULT_ON_ERROR);
	memset(t->comm, 0, sizeof(t->comm));
	readmem(task + L.task_comm, KVADDR, t->comm, TASK_COMM_LEN, "task_struct comm", FAULT_ON_ERROR);
}

/*
 * Call fn for every task: each process on init_task.tasks (init_task
 * first), then the other threads on its signal->thread_head list.
 * Stops early, returning 1, when fn returns nonzero.
 */
static int pfs_for_each_task(int (*fn)(struct pfs_task *, void *), void *arg)
{
	ulong init_task = symbol_value("init_task"), head, p, next;
	struct pfs_task t;
	int n = 0;

	head = init_task + L.task_tasks;
	p = init_task;
	do {
		ulong sig, thead, tnext, leader = p;

		pfs_read_task(p, &t);
		if (fn(&t, arg))
			return 1;
		readmem(p + L.task_signal, KVADDR, &sig, sizeof(ulong),
			"task_struct signal", FAULT_ON_ERROR);
		if (sig) {
			thead = sig + L.signal_thread_head;
			readmem(thead, KVADDR, &tnext, sizeof(ulong),
				"signal_struct thread_head", FAULT_ON_ERROR);
			while (tnext && tnext != thead && n++ < PFS_MAX_TASKS) {
				ulong th = tnext - L.task_thread_node;

				if (th != leader) {
					pfs_read_task(th, &t);
					if (fn(&t, arg))
						return 1;
				}
				readmem(tnext, KVADDR, &tnext, sizeof(ulong),
					"task_struct thread_node", FAULT_ON_ERROR);
			}
		}
		readmem(p + L.task_tasks, KVADDR, &next, sizeof(ulong),
			"task_struct tasks", FAULT_ON_ERROR);
		p = next - L.task_tasks;
	} while (next && next != head && n++ < PFS_MAX_TASKS);
	return 0;
}

static int pfs_find_pid(struct pfs_task *t, void *arg)
{
	struct pfs_task *want = arg;

	if (t->pid != want->pid)
		return 0;
	*want = *t;
	return 1;
}

/* The user task with pid arg, or one error line. */
static void pfs_lookup(char *arg, struct pfs_task *t)
{
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->pid = (int)dtol(arg, RETURN_ON_ERROR | QUIET, &err);
	if (err || !decimal(arg, 0))
		error(FATAL, "not a pid: %s\n", arg);
	if (!pfs_for_each_task(pfs_find_pid, t))
		error(FATAL, "no task with pid %s\n", arg);
	if (!t->mm)
		error(FATAL, "pid %d (%s) is a kernel thread: no mm\n", t->pid, t->comm);
}

/* pfcounters */

char *help_pfcounters[] = {
	"pfcounters",
	"pfscale lost page-fault race counters, summed over CPUs",
	"[-j]",
	"  Prints one \"name value\" line per pfscale counter, the sum over every",
	"  CPU of the per-CPU pfscale_counters, in the format of the guest's",
	"  /sys/kernel/debug/pfscale/counters. The names are read from the",
	"  kernel's pfscale_counter_desc[] in the dump, so they always match the",
	"  kernel. On a kernel without the pfscale patches it says so.",
	"    -j  one JSON object, as gdb's pf-counters --json: \"counters\"",
	"        {NAME: TOTAL}, \"per_cpu\" {CPU: {NAME: VALUE}}, \"desc\"",
	"        {NAME: {\"kind\", \"level\", \"site\", \"meaning\"}} (kind and level:",
	"        include/linux/pfscale_counters.h)",
	"\nEXAMPLE",
	"  %s> pfcounters",
	"  anon_fault_locked 1234",
	"  anon_pte_recheck_lost 2",
	"  ...",
	NULL
};

static void pfs_desc_string(long i, long member, char *buf, int len)
{
	ulong p = 0;

	buf[0] = 0;
	if (member >= 0)
		readmem(symbol_value("pfscale_counter_desc") + i * L.desc_size + member, KVADDR,
			&p, sizeof(p), "pfscale_counter_desc", FAULT_ON_ERROR);
	if (p)
		read_string(p, buf, len - 1);
}

static void cmd_pfcounters(void)
{
	static char names[PFS_MAX_COUNTERS][64];
	ulong base, *values;
	long i;
	int json, cpu, ncpus = kt->cpus;

	if (pfs_options(&json) != argcnt)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_COUNTERS);
	base = symbol_value("pfscale_counters");
	values = (ulong *)GETBUF(L.nr_counters * ncpus * sizeof(ulong));
#define values(i, cpu) values[(i) * ncpus + (cpu)]
	for (i = 0; i < L.nr_counters; i++) {
		pfs_desc_string(i, L.desc_name, names[i], sizeof(names[i]));
		if (!names[i][0])
			snprintf(names[i], sizeof(names[i]), "counter%ld", i);
		for (cpu = 0; cpu < ncpus; cpu++) {
			ulong addr = base + i * sizeof(ulong);

			if (kt->flags & PER_CPU_OFF)
				addr += kt->__per_cpu_offset[cpu];
			values(i, cpu) = 0;
			if (!readmem(addr, KVADDR, &values(i, cpu), sizeof(ulong),
				     "pfscale_counters", RETURN_ON_ERROR))
				error(INFO, "cannot read cpu %d's counter %s\n", cpu, names[i]);
		}
	}
	if (!json) {
		for (i = 0; i < L.nr_counters; i++) {
			ulong sum = 0;

			for (cpu = 0; cpu < ncpus; cpu++)
				sum += values(i, cpu);
			fprintf(fp, "%s %lu\n", names[i], sum);
		}
		FREEBUF(values);
		return;
	}
	fprintf(fp, "{\"counters\": {");
	for (i = 0; i < L.nr_counters; i++) {
		ulong sum = 0;

		for (cpu = 0; cpu < ncpus; cpu++)
			sum += values(i, cpu);
		fprintf(fp, "%s\"%s\": %lu", i ? ", " : "", names[i], sum);
	}
	fprintf(fp, "}, \"per_cpu\": {");
	for (cpu = 0; cpu < ncpus; cpu++) {
		fprintf(fp, "%s\"%d\": {", cpu ? ", " : "", cpu);
		for (i = 0; i < L.nr_counters; i++)
			fprintf(fp, "%s\"%s\": %lu", i ? ", " : "", names[i], values(i, cpu));
		fprintf(fp, "}");
	}
	fprintf(fp, "}, \"desc\": {");
	for (i = 0; i < L.nr_counters; i++) {
		char kind[32], level[32], site[128], meaning[512];

		pfs_desc_string(i, L.desc_kind, kind, sizeof(kind));
		pfs_desc_string(i, L.desc_level, level, sizeof(level));
		pfs_desc_string(i, L.desc_site, site, sizeof(site));
		pfs_desc_string(i, L.desc_meaning, meaning, sizeof(meaning));
		fprintf(fp, "%s\"%s\": {\"kind\": ", i ? ", " : "", names[i]);
		pfs_json_str(kind);
		fprintf(fp, ", \"level\": ");
		pfs_json_str(level);
		fprintf(fp, ", \"site\": ");
		pfs_json_str(site);
		fprintf(fp, ", \"meaning\": ");
		pfs_json_str(meaning);
		fprintf(fp, "}");
	}
	fprintf(fp, "}}\n");
	FREEBUF(values);
#undef values
}

/* pfps */

char *help_pfps[] = {
	"pfps",
	"list tasks by walking the task list (works where ps does not)",
	"[-j]",
	"  Lists every task, one line each: PID, TGID, COMM, the task_struct and",
	"  the mm_struct addresses (0 for kernel threads). It walks",
	"  init_task.tasks and each thread group's signal->thread_head list",
	"  itself, so it works on kernels whose task table crash cannot",
	"  initialise (crash 8.0.2 on 6.1: ps shows only the idle tasks).",
	"    -j  one JSON object {\"tasks\": [{\"pid\", \"tgid\", \"comm\", \"task\", \"mm\"}]}",
	"\nEXAMPLE",
	"  %s> pfps",
	"      PID    TGID  COMM              TASK              MM",
	"        0       0  swapper/0         ffffffff82012940  0",
	"        1       1  init              ffff888003c58000  ffff888003c74000",
	NULL
};

struct pfps_ctx {
	int json, n;
};

static int pfps_one(struct pfs_task *t, void *arg)
{
	struct pfps_ctx *c = arg;

	if (!c->json) {
		fprintf(fp, "%8d %7d  %-16s  %-16lx  %lx\n", t->pid, t->tgid, t->comm, t->task,
			t->mm);
		return 0;
	}
	fprintf(fp, "%s{\"pid\": %d, \"tgid\": %d, \"comm\": ", c->n++ ? ", " : "", t->pid,
		t->tgid);
	pfs_json_str(t->comm);
	fprintf(fp, ", \"task\": \"0x%lx\", \"mm\": \"0x%lx\"}", t->task, t->mm);
	return 0;
}

static void cmd_pfps(void)
{
	struct pfps_ctx c = { 0, 0 };

	if (pfs_options(&c.json) != argcnt)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK);
	if (c.json)
		fprintf(fp, "{\"tasks\": [");
	else
		fprintf(fp, "%8s %7s  %-16s  %-16s  %s\n", "PID", "TGID", "COMM", "TASK", "MM");
	pfs_for_each_task(pfps_one, &c);
	if (c.json)
		fprintf(fp, "]}\n");
}

/* pfrss: the split rss of an mm (the same report as gdb's pf-rss) */

char *help_pfrss[] = {
	"pfrss",
	"split RSS of a process: per-thread deltas, mm counters, rss_mm, rss_split",
	"[-j] pid",
	"  Finds the task with this pid (any thread's), then every task using",
	"  the same mm, and prints, as the guest's /sys/kernel/debug/pfscale/rss",
	"  does (without its page-table scan):",
	"    thread TID events E filepages F anonpages A swapents S shmempages H",
	"                   each thread's unsynced task->rss_stat delta",
	"    threads N      how many tasks use the mm",
	"    mm ...         the mm_struct's rss_stat counters (what /proc shows)",
	"    split ...      those plus every thread's delta",
	"    rss_mm N       filepages + anonpages + shmempages of the mm counters",
	"    rss_split N    the same of the split sums",
	"  The counter indexes are the kernel's MM_* enumerators. An unknown pid,",
	"  or a kernel thread, gets one line saying so.",
	"    -j  one JSON object with the keys of gdb's pf-rss --json: pid, tgid,",
	"        comm, mm, threads [{pid, comm, events, delta}], mm_counters,",
	"        delta_sum, split_counters, rss_mm, rss_split",
	"\nEXAMPLE",
	"  %s> pfrss 70",
	"  pid 70",
	"  comm t_rss",
	"  thread 70 events 3 filepages 0 anonpages 2 swapents 0 shmempages 0",
	"  threads 1",
	"  mm filepages 301 anonpages 40 swapents 0 shmempages 0",
	"  split filepages 301 anonpages 42 swapents 0 shmempages 0",
	"  rss_mm 341",
	"  rss_split 343",
	NULL
};

#define PFS_MAX_THREADS 4096

struct pfs_rss {
	struct pfs_task who;
	long mm[PFS_NR_MM], delta[PFS_NR_MM];
	int nthreads;
	struct pfs_thread {
		int pid, events;
		char comm[TASK_COMM_LEN + 1];
		long delta[PFS_NR_MM];
	} *threads;
	long rss_mm, rss_split;
};

static int pfs_rss_thread(struct pfs_task *t, void *arg)
{
	struct pfs_rss *r = arg;
	struct pfs_thread *th;
	int count[64], i;

	if (t->mm != r->who.mm || r->nthreads >= PFS_MAX_THREADS)
		return 0;
	th = &r->threads[r->nthreads++];
	th->pid = t->pid;
	strcpy(th->comm, t->comm);
	readmem(t->task + L.task_rss_stat + L.trss_events, KVADDR, &th->events,
		sizeof(int), "task_struct rss_stat.events", FAULT_ON_ERROR);
	readmem(t->task + L.task_rss_stat + L.trss_count, KVADDR, count,
		L.nr_mm_counters * sizeof(int), "task_struct rss_stat.count", FAULT_ON_ERROR);
	for (i = 0; i < PFS_NR_MM; i++) {
		th->delta[i] = count[L.mm_index[i]];
		r->delta[i] += th->delta[i];
	}
	return 0;
}

/* Read the split rss of t's mm into r (r->threads: PFS_MAX_THREADS). */
static void pfs_rss_read(struct pfs_task *t, struct pfs_rss *r)
{
	long mmc[64];
	int i;

	r->who = *t;
	r->nthreads = 0;
	memset(r->delta, 0, sizeof(r->delta));
	/* mm_struct.rss_stat.count[] is atomic_long_t: one long each. */
	readmem(t->mm + L.mm_rss_stat + L.mrss_count, KVADDR, mmc,
		L.nr_mm_counters * sizeof(long), "mm_struct rss_stat", FAULT_ON_ERROR);
	for (i = 0; i < PFS_NR_MM; i++)
		r->mm[i] = mmc[L.mm_index[i]];
	pfs_for_each_task(pfs_rss_thread, r);
	r->rss_mm = r->rss_split = 0;
	for (i = 0; i < PFS_NR_MM; i++) {
		if (!strcmp(mm_names[i], "swapents"))
			continue;	/* not RSS (get_mm_rss()) */
		r->rss_mm += r->mm[i];
		r->rss_split += r->mm[i] + r->delta[i];
	}
}

static void pfs_json_counts(const char *key, const long *a, const long *b)
{
	int i;

	fprintf(fp, "\"%s\": {", key);
	for (i = 0; i < PFS_NR_MM; i++)
		fprintf(fp, "%s\"%s\": %ld", i ? ", " : "", mm_names[i], a[i] + (b ? b[i] : 0));
	fprintf(fp, "}");
}

/* "threads": [...], as gdb's pf-rss and pf-mm print it. */
static void pfs_threads_json(struct pfs_rss *r)
{
	int i, k;

	fprintf(fp, "\"threads\": [");
	for (i = 0; i < r->nthreads; i++) {
		struct pfs_thread *th = &r->threads[i];

		fprintf(fp, "%s{\"pid\": %d, \"comm\": ", i ? ", " : "", th->pid);
		pfs_json_str(th->comm);
		fprintf(fp, ", \"events\": %d, \"delta\": {", th->events);
		for (k = 0; k < PFS_NR_MM; k++)
			fprintf(fp, "%s\"%s\": %ld", k ? ", " : "", mm_names[k], th->delta[k]);
		fprintf(fp, "}}");
	}
	fprintf(fp, "]");
}

/* The keys of gdb's pf-rss --json after "mm" (threads, ... rss_split). */
static void pfs_rss_json_body(struct pfs_rss *r)
{
	pfs_threads_json(r);
	fprintf(fp, ", ");
	pfs_json_counts("mm_counters", r->mm, NULL);
	fprintf(fp, ", ");
	pfs_json_counts("delta_sum", r->delta, NULL);
	fprintf(fp, ", ");
	pfs_json_counts("split_counters", r->mm, r->delta);
	fprintf(fp, ", \"rss_mm\": %ld, \"rss_split\": %ld", r->rss_mm, r->rss_split);
}

static void cmd_pfrss(void)
{
	struct pfs_task t;
	struct pfs_rss r;
	int json, i, k;

	if (pfs_options(&json) != argcnt - 1)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_RSS);
	pfs_lookup(args[optind], &t);
	r.threads = (struct pfs_thread *)GETBUF(PFS_MAX_THREADS * sizeof(*r.threads));
	pfs_rss_read(&t, &r);
	if (json) {
		fprintf(fp, "{\"pid\": %d, \"tgid\": %d, \"comm\": ", t.pid, t.tgid);
		pfs_json_str(t.comm);
		fprintf(fp, ", \"mm\": \"0x%lx\", ", t.mm);
		pfs_rss_json_body(&r);
		fprintf(fp, "}\n");
		FREEBUF(r.threads);
		return;
	}
	fprintf(fp, "pid %d\ncomm %s\n", t.pid, t.comm);
	for (i = 0; i < r.nthreads; i++) {
		fprintf(fp, "thread %d events %d", r.threads[i].pid, r.threads[i].events);
		for (k = 0; k < PFS_NR_MM; k++)
			fprintf(fp, " %s %ld", mm_names[k], r.threads[i].delta[k]);
		fprintf(fp, "\n");
	}
	fprintf(fp, "threads %d\nmm", r.nthreads);
	for (k = 0; k < PFS_NR_MM; k++)
		fprintf(fp, " %s %ld", mm_names[k], r.mm[k]);
	fprintf(fp, "\nsplit");
	for (k = 0; k < PFS_NR_MM; k++)
		fprintf(fp, " %s %ld", mm_names[k], r.mm[k] + r.delta[k]);
	fprintf(fp, "\nrss_mm %ld\nrss_split %ld\n", r.rss_mm, r.rss_split);
	FREEBUF(r.threads);
}

/* pfpte: the present runs of a range (the same report as gdb's pf-range) */

char *help_pfpte[] = {
	"pfpte",
	"present page runs of a process's user page tables",
	"[-j] pid start end",
	"  Walks the x86_64 page tables of pid's mm from mm->pgd, with physical",
	"  reads, over the user addresses [start, end) (hex): 4 levels, or 5 when",
	"  the kernel's __pgtable_l5_enabled (CONFIG_X86_5LEVEL) is set, and",
	"  prints each run of present pages, contiguous both virtually and in",
	"  PFN (PROT_NONE pages are present, as pte_present() says):",
	"    START-END pfn FIRST-LAST pages N [2M xK]",
	"  then the total, and the PTEs that are neither present nor none by",
	"  kind (swap entries of swap files, migration, pte-marker such as a PTE",
	"  parked by the pfscale atomic path, hwpoison, device, swapin-error):",
	"    total N",
	"    not_present KIND N",
	"  It does not need crash's task table (vtop -u does, and fails on 6.1).",
	"  The PTE bits, page and swap-entry layout and swap types are the",
	"  kernel's #defines, read from pfscale-layout next to vmlinux (or",
	"  $PFSCALE_LAYOUT), which scripts/layout.sh writes at kernel build time.",
	"    -j  one JSON object with the keys of gdb's pf-range --json: pid,",
	"        start, end, levels, runs [{start, end, pfn, pages, leaves,",
	"        special (its _PAGE_SPECIAL pages: the zero page, PFN maps)}],",
	"        present_pages, not_present {KIND: N}",
	"\nEXAMPLE",
	"  %s> pfpte 70 400000 500000",
	"  400000-403000 pfn 3c0a1-3c0a3 pages 3",
	"  total 3",
	NULL
};

/* A page-table walk: its output state, instead of file-scope globals. */
struct pfs_walk {
	int json, nruns;
	ulong run_start, run_end, run_pfn, total;
	long leaves[3];			/* 4K, 2M, 1G leaves of the current run */
	long special;			/* its _PAGE_SPECIAL ptes (no struct page) */
	long not_present[1 << PFS_MAX_SWP_TYPE_BITS];	/* by swap type */
};

static const char *pfs_leaf_names[3] = { "4K", "2M", "1G" };

static void pfs_run_flush(struct pfs_walk *w)
{
	ulong pages = (w->run_end - w->run_start) >> PFS_DEF(PAGE_SHIFT);
	int i, n = 0;

	if (!w->run_end)
		return;
	if (w->json) {
		fprintf(fp, "%s{\"start\": \"0x%lx\", \"end\": \"0x%lx\", \"pfn\": %lu, "
			"\"pages\": %lu, \"leaves\": {", w->nruns ? ", " : "", w->run_start,
			w->run_end, w->run_pfn, pages);
		for (i = 0; i < 3; i++)
			if (w->leaves[i])
				fprintf(fp, "%s\"%s\": %ld", n++ ? ", " : "", pfs_leaf_names[i],
					w->leaves[i]);
		fprintf(fp, "}, \"special\": %ld}", w->special);
	} else {
		fprintf(fp, "%lx-%lx pfn %lx-%lx pages %lu", w->run_start, w->run_end, w->run_pfn,
			w->run_pfn + pages - 1, pages);
		for (i = 2; i > 0; i--)
			if (w->leaves[i])
				fprintf(fp, "%s%s x%ld", n++ ? ", " : " ", pfs_leaf_names[i],
					w->leaves[i]);
		fprintf(fp, "\n");
	}
	w->nruns++;
}

/* A present leaf of len bytes at va mapping pfn (level: 0 4K, 1 2M, 2 1G). */
static void pfs_run_add(struct pfs_walk *w, ulong va, ulong pfn, ulong len, int level,
			int special)
{
	if (!w->run_end || va != w->run_end ||
	    pfn != w->run_pfn + ((w->run_end - w->run_start) >> PFS_DEF(PAGE_SHIFT))) {
		pfs_run_flush(w);
		w->run_start = va;
		w->run_end = va;
		w->run_pfn = pfn;
		memset(w->leaves, 0, sizeof(w->leaves));
		w->special = 0;
	}
	w->special += special;
	w->run_end += len;
	w->leaves[level]++;
	w->total += len >> PFS_DEF(PAGE_SHIFT);
}

static int pfs_entry(ulong table_pa, int idx, ulong *e)
{
	return readmem(table_pa + idx * 8, PHYSADDR, e, sizeof(ulong),
		       "page table entry", RETURN_ON_ERROR);
}

static void pfs_walk_range(struct pfs_walk *w, ulong pgd, ulong start, ulong end)
{
	ulong va = start & ~(L.page_size - 1);

	while (va < end) {
		ulong table = VTOP(pgd), e = 0;
		int level;

		for (level = 0; level < L.levels; level++) {
			/* the bits of va that index this level's table */
			int shift = PFS_DEF(PAGE_SHIFT) + L.level_bits * (L.levels - 1 - level);
			ulong size = 1UL << shift;
			int idx = (va >> shift) & (PFS_DEF(PTRS_PER_PTE) - 1);
			int last = level == L.levels - 1;
			int read = pfs_entry(table, idx, &e);

			if (!read || !(e & (L.pte_present | L.pte_protnone))) {
				if (read && last && e)
					w->not_present[e >> L.swp_type_shift]++;
				va = (va & ~(size - 1)) + size;
				break;
			}
			if (last || (level >= L.levels - 3 && (e & L.pte_pse))) {
				ulong next = (va & ~(size - 1)) + size;
				/* a PROT_NONE entry keeps its PFN inverted (L1TF) */
				ulong pfnbits = e & L.pte_present ? e : ~e;
				ulong pa = (pfnbits & L.pte_addr_mask & ~(size - 1)) + (va & (size - 1));

				if (next > end)
					next = end;
				pfs_run_add(w, va, pa >> PFS_DEF(PAGE_SHIFT), next - va,
					    L.levels - 1 - level, last && (e & L.pte_special));
				va = next;
				break;
			}
			table = e & L.pte_addr_mask;
		}
	}
	pfs_run_flush(w);
}

/* The not-present counts by kind ("swap" for the swap files' types). */
static void pfs_not_present(struct pfs_walk *w)
{
	const char *kinds[1 << PFS_MAX_SWP_TYPE_BITS];
	long counts[1 << PFS_MAX_SWP_TYPE_BITS];
	int t, k, n = 0;

	for (t = 0; t < L.nr_swp_types; t++) {
		const char *kind = L.swap_kind[t] ? L.swap_kind[t] : "swap";

		if (!w->not_present[t])
			continue;
		for (k = 0; k < n && strcmp(kinds[k], kind); k++)
			;
		if (k == n) {
			kinds[n] = kind;
			counts[n++] = 0;
		}
		counts[k] += w->not_present[t];
	}
	if (w->json)
		fprintf(fp, "\"not_present\": {");
	for (k = 0; k < n; k++) {
		if (w->json)
			fprintf(fp, "%s\"%s\": %ld", k ? ", " : "", kinds[k], counts[k]);
		else
			fprintf(fp, "not_present %s %ld\n", kinds[k], counts[k]);
	}
	if (w->json)
		fprintf(fp, "}");
}

static void cmd_pfpte(void)
{
	struct pfs_task t;
	struct pfs_walk w;
	ulong start, end = 0, pgd;
	int err = 0, json;

	if (pfs_options(&json) != argcnt - 3)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_PTE);
	start = htol(args[optind + 1], RETURN_ON_ERROR | QUIET, &err);
	if (!err)
		end = htol(args[optind + 2], RETURN_ON_ERROR | QUIET, &err);
	/* user space: the lower half of what the top level maps (2^47, 2^56) */
	if (err || start >= end ||
	    end > 1UL << (PFS_DEF(PAGE_SHIFT) + L.level_bits * L.levels - 1))
		error(FATAL, "bad range %s %s (hex user addresses, start < end)\n",
		      args[optind + 1], args[optind + 2]);
	pfs_lookup(args[optind], &t);
	readmem(t.mm + L.mm_pgd, KVADDR, &pgd, sizeof(ulong), "mm_struct pgd", FAULT_ON_ERROR);
	memset(&w, 0, sizeof(w));
	w.json = json;
	if (json)
		fprintf(fp, "{\"pid\": %d, \"start\": \"0x%lx\", \"end\": \"0x%lx\", "
			"\"levels\": %d, \"runs\": [", t.pid, start, end, L.levels);
	pfs_walk_range(&w, pgd, start, end);
	if (json) {
		fprintf(fp, "], \"present_pages\": %lu, ", w.total);
		pfs_not_present(&w);
		fprintf(fp, "}\n");
	} else {
		fprintf(fp, "total %lu\n", w.total);
		pfs_not_present(&w);
	}
}

/* pfvma: the mm and its VMAs (the same report as gdb's pf-mm) */

char *help_pfvma[] = {
	"pfvma",
	"a process's mm and VMAs, read from its mm->mm_mt maple tree",
	"[-j] pid",
	"  Finds the task with this pid and walks its mm's maple tree (mm->mm_mt)",
	"  from the root node itself: crash 8.0.2 has no maple tree support, and",
	"  6.1 keeps the VMAs only there (no mm->mmap list). One line per VMA,",
	"  in address order, with the columns of /proc/PID/maps first:",
	"    START-END          the VMA's [vm_start, vm_end)",
	"    PERMS              rwx, then s (VM_MAYSHARE) or p, as /proc/PID/maps",
	"    PGOFF              vm_pgoff in bytes for a file VMA, else 0, as /proc",
	"    KIND               file, anon, special (vdso, vvar) or gate (vsyscall)",
	"    VMA                the vm_area_struct",
	"    NAME               the file's path up to its filesystem's root,",
	"                       [heap], [stack], [vdso] ...",
	"  The header line gives the tree's height and node count; a tree entry",
	"  whose range disagrees with its VMA's vm_start/vm_end is flagged \"!!\".",
	"  As /proc/PID/maps, the list ends with x86's [vsyscall] gate VMA, which",
	"  is not in the tree (and not in the header's count). Node geometry comes",
	"  from the kernel's mt_slots[]/mt_pivots[] and enum maple_type; the node",
	"  pointer encoding and the rwsem bits are #defines, read from",
	"  pfscale-layout next to vmlinux (or $PFSCALE_LAYOUT), as for pfpte.",
	"    -j  one JSON object with the keys of gdb's pf-mm --json: pid, tgid,",
	"        comm, mm, pgd, mm_users, mm_count, map_count, pgtables_bytes,",
	"        vm_flags_source, mmap_lock {count, state, flags, owner,",
	"        owner_task}, page_table_lock {val, state, owner_cpu}, rss,",
	"        threads, vmas",
	"        [{vma, start, end, perms, flags, pgoff, kind, anon_vma, name}];",
	"        and maple_height, maple_nodes, inconsistencies",
	"\nEXAMPLE",
	"  %s> pfvma 58",
	"  pid 58 (h_crash_maps) mm ffff888000b58580: 253 vmas, maple tree height 3, 21 nodes",
	"  START-END                  PERMS  PGOFF     KIND     VMA               NAME",
	"  00400000-00401000          r--p   00000000  file     ffff888000318500  /pfscale/bin/h_crash_maps",
	"  ...",
	"  7ffc8a57e000-7ffc8a57f000  r-xp   00000000  special  ffff888000318980  [vdso]",
	"  ffffffffff600000-ffffffffff601000  --xp   00000000  gate     ffffffff8191b000  [vsyscall]",
	NULL
};

/* A maple walk over one mm's VMAs: its state, instead of file-scope globals. */
struct pfs_vma_walk {
	struct pfs_task *t;
	ulong brk, start_brk, start_stack;
	long nodes, vmas, bad;
	ulong last_end;
	int print;	/* 0: the counting pass for the header line */
	int json, printed;
};

/* The path of a dentry up to its filesystem's root (mounts not crossed). */
static void pfs_dentry_path(ulong dentry, char *out, int len)
{
	char names[16][128];
	int n = 0, i;
	ulong parent, p;

	out[0] = 0;
	if (L.dentry_parent < 0 || L.dentry_name < 0 || L.qstr_name < 0)
		return;
	while (dentry && n < 16) {
		if (!readmem(dentry + L.dentry_parent, KVADDR, &parent, sizeof(parent),
			     "dentry d_parent", RETURN_ON_ERROR | QUIET))
			break;
		names[n][0] = 0;
		if (readmem(dentry + L.dentry_name + L.qstr_name, KVADDR, &p, sizeof(p),
			    "dentry name", RETURN_ON_ERROR | QUIET) && p)
			read_string(p, names[n], sizeof(names[n]) - 1);
		if (parent == dentry) {
			/* the root; shmem's root has a name of its own ("dev/zero") */
			if (n == 0 && strcmp(names[0], "/"))
				n++;
			break;
		}
		n++;
		dentry = parent;
	}
	for (i = n - 1; i >= 0; i--) {
		const char *s = names[i];

		while (*s == '/')
			s++;
		snprintf(out + strlen(out), len - strlen(out), "/%s", s);
	}
	if (!out[0])
		snprintf(out, len, "/");
}

static void pfs_vma_name(struct pfs_vma_walk *w, ulong vma, ulong start, ulong end,
			 ulong file, const char **kind, char *name, int len)
{
	ulong ops = 0, priv = 0, p = 0;

	name[0] = 0;
	if (vma == L.gate_vma) {
		*kind = "gate";
		snprintf(name, len, "[vsyscall]");
		return;
	}
	if (file) {
		*kind = "file";
		if (L.file_f_path >= 0 && L.path_dentry >= 0 &&
		    readmem(file + L.file_f_path + L.path_dentry, KVADDR, &p, sizeof(p),
			    "file dentry", RETURN_ON_ERROR | QUIET) && p)
			pfs_dentry_path(p, name, len);
		return;
	}
	*kind = "anon";
	readmem(vma + L.vm_ops, KVADDR, &ops, sizeof(ops), "vm_ops", RETURN_ON_ERROR | QUIET);
	if (ops && (ops == L.special_ops || ops == L.legacy_special_ops)) {
		*kind = "special";
		/* special_mapping_name(): the vm_special_mapping's name */
		if (ops == L.special_ops && L.vm_private >= 0 && L.special_name >= 0 &&
		    readmem(vma + L.vm_private, KVADDR, &priv, sizeof(priv),
			    "vm_private_data", RETURN_ON_ERROR | QUIET) && priv &&
		    readmem(priv + L.special_name, KVADDR, &p, sizeof(p),
			    "vm_special_mapping name", RETURN_ON_ERROR | QUIET) && p)
			read_string(p, name, len - 1);
		return;
	}
	/* show_map_vma()'s markers */
	if (start <= w->brk && end >= w->start_brk)
		snprintf(name, len, "[heap]");
	else if (start <= w->start_stack && end >= w->start_stack)
		snprintf(name, len, "[stack]");
}

/* One leaf entry: index range [first, last] -> the VMA pointer. */
static void pfs_vma_entry(struct pfs_vma_walk *w, ulong vma, ulong first, ulong last)
{
	ulong start, end, flags, pgoff, file, anon_vma = 0;
	const char *kind = "anon";
	char perms[5], name[512], range[40];
	int odd;

	if (!vma)
		return;		/* a gap */
	/* xa_is_internal() (low bits 2) below MAPLE_RESERVED_RANGE: not a pointer */
	if (vma < PFS_DEF(MAPLE_RESERVED_RANGE) && (vma & 3) == 2) {
		if (w->print)
			error(INFO, "%lx-%lx: reserved maple entry %lx (XA_ZERO_ENTRY: mm being duplicated?)\n",
			      first, last + 1, vma);
		return;
	}
	if (w->vmas++ >= PFS_MAX_VMAS)
		return;
	if (!readmem(vma + L.vm_start, KVADDR, &start, sizeof(ulong), "vm_start", RETURN_ON_ERROR) ||
	    !readmem(vma + L.vm_end, KVADDR, &end, sizeof(ulong), "vm_end", RETURN_ON_ERROR) ||
	    !readmem(vma + L.vm_flags, KVADDR, &flags, sizeof(ulong), "vm_flags", RETURN_ON_ERROR) ||
	    !readmem(vma + L.vm_pgoff, KVADDR, &pgoff, sizeof(ulong), "vm_pgoff", RETURN_ON_ERROR) ||
	    !readmem(vma + L.vm_file, KVADDR, &file, sizeof(ulong), "vm_file", RETURN_ON_ERROR) ||
	    !readmem(vma + L.vm_anon_vma, KVADDR, &anon_vma, sizeof(ulong), "anon_vma",
		     RETURN_ON_ERROR)) {
		if (w->print)
			error(INFO, "%lx-%lx: unreadable vm_area_struct %lx\n", first, last + 1, vma);
		w->bad++;
		return;
	}
	perms[0] = flags & L.vm_read ? 'r' : '-';
	perms[1] = flags & L.vm_write ? 'w' : '-';
	perms[2] = flags & L.vm_exec ? 'x' : '-';
	perms[3] = flags & L.vm_mayshare ? 's' : 'p';
	perms[4] = 0;
	/* /proc's offset: bytes for a file VMA, 0 for the others */
	pgoff = file ? pgoff << PFS_DEF(PAGE_SHIFT) : 0;
	/* The tree's range is the VMA's, and VMAs come in address order. */
	odd = start != first || end != last + 1 || start < w->last_end;
	w->bad += odd;
	w->last_end = end;
	if (!w->print)
		return;
	pfs_vma_name(w, vma, start, end, file, &kind, name, sizeof(name));
	if (w->json) {
		fprintf(fp, "%s{\"vma\": \"0x%lx\", \"start\": \"0x%lx\", \"end\": \"0x%lx\", "
			"\"perms\": \"%s\", \"flags\": \"0x%lx\", \"pgoff\": %lu, \"kind\": \"%s\", "
			"\"anon_vma\": %s, \"name\": ", w->printed++ ? ", " : "", vma, start, end,
			perms, flags, pgoff, kind, anon_vma ? "true" : "false");
		pfs_json_str(name);
		fprintf(fp, "%s}", odd ? ", \"tree_range_differs\": true" : "");
		return;
	}
	snprintf(range, sizeof(range), "%08lx-%08lx", start, end);
	fprintf(fp, "%-25s  %-5s  %08lx  %-7s  %-16lx  %s", range, perms, pgoff, kind, vma, name);
	if (odd)
		fprintf(fp, "  !! tree range %lx-%lx", first, last + 1);
	fprintf(fp, "\n");
}

/* The tree's height, as mt_height() reads it from its ma_flags. */
static uint pfs_maple_height(ulong flags)
{
	return (uint)((flags & PFS_DEF(MT_FLAGS_HEIGHT_MASK)) >> PFS_DEF(MT_FLAGS_HEIGHT_OFFSET));
}

/*
 * Walk the node enode covering [min, max], in order, as mt_dump_node()
 * does: slot i covers [pivot[i-1] + 1, pivot[i]]; the last slot ends at
 * max; a zero pivot after the first, or a pivot reaching max, ends the
 * node's data.
 */
static void pfs_maple_node(struct pfs_vma_walk *w, ulong enode, ulong min, ulong max, int depth)
{
	unsigned char buf[1024];
	/* an encoded node pointer: the type in its low MAPLE_NODE_MASK bits */
	ulong node = enode & ~PFS_DEF(MAPLE_NODE_MASK), first = min, *pivot, *slot;
	long type = (long)((enode >> PFS_DEF(MAPLE_NODE_TYPE_SHIFT)) &
			   PFS_DEF(MAPLE_NODE_TYPE_MASK));
	int nslots, npivots, i;

	if (depth > (int)PFS_DEF(MAPLE_HEIGHT_MAX)) {
		if (w->print)
			error(INFO, "maple tree deeper than %lu at node %lx\n",
			      PFS_DEF(MAPLE_HEIGHT_MAX), node);
		w->bad++;
		return;
	}
	if (L.node_size <= 0 || L.node_size > (long)sizeof(buf) ||
	    !readmem(node, KVADDR, buf, L.node_size, "maple_node", RETURN_ON_ERROR)) {
		if (w->print)
			error(INFO, "cannot read maple node %lx\n", node);
		w->bad++;
		return;
	}
	w->nodes++;
	if (type >= (long)sizeof(L.mt_slots)) {
		if (w->print)
			error(INFO, "maple node %lx has type %ld: not a maple_type\n", node, type);
		w->bad++;
		return;
	} else if (type == L.maple_leaf_64 || type == L.maple_range_64) {
		pivot = (ulong *)(buf + L.r64_pivot);
		slot = (ulong *)(buf + L.r64_slot);
	} else if (type == L.maple_arange_64) {
		pivot = (ulong *)(buf + L.a64_pivot);
		slot = (ulong *)(buf + L.a64_slot);
	} else {
		if (w->print)
			error(INFO, "maple node %lx has type %ld (dense?): not a VMA tree\n", node, type);
		w->bad++;
		return;
	}
	nslots = L.mt_slots[type];
	npivots = L.mt_pivots[type];
	for (i = 0; i < nslots; i++) {
		ulong last = max;

		if (i < npivots)
			last = pivot[i];
		else if (!slot[i])	/* range_64's last slot may hold the metadata */
			break;
		if (last == 0 && i > 0)
			break;
		if (last < first || last > max) {
			if (w->print)
				error(INFO, "maple node %lx pivot %d = %lx outside [%lx, %lx]\n",
				      node, i, last, first, max);
			w->bad++;
			break;
		}
		if (type == L.maple_leaf_64)
			pfs_vma_entry(w, slot[i], first, last);
		else if (slot[i])
			pfs_maple_node(w, slot[i], first, last, depth + 1);
		if (last == max)
			break;
		first = last + 1;
	}
}

/* The mmap_lock decoded as gdb's pf-mm does (its "mmap_lock" keys). */
static void pfs_mmap_lock_json(ulong mm)
{
	ulong count = 0, owner = 0, otask, readers;
	struct pfs_task t;
	char state[48], who[64] = "";

	if (L.mm_mmap_lock < 0 || L.rwsem_count < 0 || L.rwsem_owner < 0) {
		fprintf(fp, "null");
		return;
	}
	readmem(mm + L.mm_mmap_lock + L.rwsem_count, KVADDR, &count, sizeof(count),
		"mmap_lock count", FAULT_ON_ERROR);
	readmem(mm + L.mm_mmap_lock + L.rwsem_owner, KVADDR, &owner, sizeof(owner),
		"mmap_lock owner", FAULT_ON_ERROR);
	/* kernel/locking/rwsem.c's count: readers from RWSEM_READER_SHIFT up to bit 62 */
	readers = (count >> PFS_DEF(RWSEM_READER_SHIFT)) &
		  ((1UL << (63 - PFS_DEF(RWSEM_READER_SHIFT))) - 1);
	if (count & PFS_DEF(RWSEM_WRITER_LOCKED))
		snprintf(state, sizeof(state), "write-locked");
	else if (readers)
		snprintf(state, sizeof(state), "read-locked by %lu", readers);
	else
		snprintf(state, sizeof(state), "unlocked");
	otask = owner & ~PFS_DEF(RWSEM_OWNER_FLAGS_MASK);
	if (otask) {
		memset(&t, 0, sizeof(t));
		if (readmem(otask + L.task_pid, KVADDR, &t.pid, sizeof(int), "owner pid",
			    RETURN_ON_ERROR | QUIET) &&
		    readmem(otask + L.task_comm, KVADDR, t.comm, TASK_COMM_LEN, "owner comm",
			    RETURN_ON_ERROR | QUIET))
			snprintf(who, sizeof(who), "%s%d (%s)",
				 owner & PFS_DEF(RWSEM_READER_OWNED) ? "last reader " : "", t.pid,
				 t.comm);
		else
			snprintf(who, sizeof(who), "%s?",
				 owner & PFS_DEF(RWSEM_READER_OWNED) ? "last reader " : "");
	}
	fprintf(fp, "{\"count\": \"0x%lx\", \"state\": \"%s\", \"flags\": [%s%s%s], "
		"\"owner\": \"0x%lx\", \"owner_task\": ", count, state,
		count & PFS_DEF(RWSEM_FLAG_WAITERS) ? "\"waiters\"" : "",
		(count & PFS_DEF(RWSEM_FLAG_WAITERS)) && (count & PFS_DEF(RWSEM_FLAG_HANDOFF)) ?
		", " : "",
		count & PFS_DEF(RWSEM_FLAG_HANDOFF) ? "\"handoff\"" : "", owner);
	pfs_json_str(who);
	fprintf(fp, "}");
}

/* The page_table_lock as gdb's pf-mm shows it (a qspinlock's val word). */
static void pfs_page_table_lock_json(ulong mm)
{
	ulong lock = mm + L.mm_page_table_lock;
	uint val = 0;
	int cpu = -1;

	if (L.mm_page_table_lock < 0 || L.spin_rlock < 0 || L.raw_lock < 0 || L.qspin_val < 0) {
		fprintf(fp, "null");
		return;
	}
	lock += L.spin_rlock;
	readmem(lock + L.raw_lock + L.qspin_val, KVADDR, &val, sizeof(val),
		"page_table_lock val", FAULT_ON_ERROR);
	fprintf(fp, "{\"val\": \"0x%x\", \"state\": \"%s\"", val,
		val & 0xff ? "locked" : "unlocked");
	if (L.raw_owner_cpu >= 0) {
		readmem(lock + L.raw_owner_cpu, KVADDR, &cpu, sizeof(cpu), "owner_cpu",
			FAULT_ON_ERROR);
		if (cpu >= 0)
			fprintf(fp, ", \"owner_cpu\": %d", cpu);
		else
			fprintf(fp, ", \"owner_cpu\": null");
	}
	fprintf(fp, "}");
}

static void cmd_pfvma(void)
{
	struct pfs_task t;
	struct pfs_vma_walk w;
	struct pfs_rss r;
	ulong root, pgd, mm_users = 0, mm_count = 0, pgtables = 0;
	uint flags;
	int json, map_count = 0;

	if (pfs_options(&json) != argcnt - 1)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_VMA);
	pfs_lookup(args[optind], &t);
	memset(&w, 0, sizeof(w));
	w.t = &t;
	w.json = json;
	readmem(t.mm + L.mm_mt + L.mt_root, KVADDR, &root, sizeof(root),
		"mm_struct mm_mt.ma_root", FAULT_ON_ERROR);
	readmem(t.mm + L.mm_mt + L.mt_flags, KVADDR, &flags, sizeof(flags),
		"mm_struct mm_mt.ma_flags", FAULT_ON_ERROR);
	readmem(t.mm + L.mm_brk, KVADDR, &w.brk, sizeof(ulong), "brk", FAULT_ON_ERROR);
	readmem(t.mm + L.mm_start_brk, KVADDR, &w.start_brk, sizeof(ulong), "start_brk",
		FAULT_ON_ERROR);
	readmem(t.mm + L.mm_start_stack, KVADDR, &w.start_stack, sizeof(ulong), "start_stack",
		FAULT_ON_ERROR);
	for (w.print = 0; w.print < 2; w.print++) {
		if (w.print && json) {
			readmem(t.mm + L.mm_pgd, KVADDR, &pgd, sizeof(pgd), "pgd", FAULT_ON_ERROR);
			readmem(t.mm + L.mm_users, KVADDR, &mm_users, sizeof(int), "mm_users",
				FAULT_ON_ERROR);
			readmem(t.mm + L.mm_count, KVADDR, &mm_count, sizeof(int), "mm_count",
				FAULT_ON_ERROR);
			readmem(t.mm + L.mm_map_count, KVADDR, &map_count, sizeof(int), "map_count",
				FAULT_ON_ERROR);
			if (L.mm_pgtables_bytes >= 0)
				readmem(t.mm + L.mm_pgtables_bytes, KVADDR, &pgtables, sizeof(ulong),
					"pgtables_bytes", FAULT_ON_ERROR);
			fprintf(fp, "{\"pid\": %d, \"tgid\": %d, \"comm\": ", t.pid, t.tgid);
			pfs_json_str(t.comm);
			fprintf(fp, ", \"mm\": \"0x%lx\", \"pgd\": \"0x%lx\", \"mm_users\": %d, "
				"\"mm_count\": %d, \"map_count\": %d, \"pgtables_bytes\": %ld, "
				"\"vm_flags_source\": \"%s\", \"maple_height\": %u, "
				"\"maple_nodes\": %ld, \"inconsistencies\": %ld, \"mmap_lock\": ",
				t.mm, pgd, (int)mm_users, (int)mm_count, map_count, (long)pgtables,
				L.vm_flags_source, pfs_maple_height(flags), w.nodes, w.bad);
			pfs_mmap_lock_json(t.mm);
			fprintf(fp, ", \"page_table_lock\": ");
			pfs_page_table_lock_json(t.mm);
			if (!(L.missing & NEED_RSS)) {
				r.threads = (struct pfs_thread *)GETBUF(PFS_MAX_THREADS *
								       sizeof(*r.threads));
				pfs_rss_read(&t, &r);
				fprintf(fp, ", \"rss\": {");
				pfs_json_counts("mm_counters", r.mm, NULL);
				fprintf(fp, ", ");
				pfs_json_counts("delta_sum", r.delta, NULL);
				fprintf(fp, ", ");
				pfs_json_counts("split_counters", r.mm, r.delta);
				fprintf(fp, ", \"rss_mm\": %ld, \"rss_split\": %ld}, ", r.rss_mm,
					r.rss_split);
				pfs_threads_json(&r);
				FREEBUF(r.threads);
			}
			fprintf(fp, ", \"vmas\": [");
			w.nodes = w.vmas = w.bad = 0;
			w.last_end = 0;
		} else if (w.print) {
			fprintf(fp, "pid %d (%s) mm %lx: %ld vmas, maple tree height %u, %ld nodes",
				t.pid, t.comm, t.mm, w.vmas,
				pfs_maple_height(flags), w.nodes);
			if (w.bad)
				fprintf(fp, ", %ld inconsistencies (marked !!)", w.bad);
			fprintf(fp, "\n%-25s  %-5s  %-8s  %-7s  %-16s  %s\n",
				"START-END", "PERMS", "PGOFF", "KIND", "VMA", "NAME");
			w.nodes = w.vmas = w.bad = 0;
			w.last_end = 0;
		}
		/* xa_is_node(): an internal entry above MAPLE_RESERVED_RANGE */
		if (root > PFS_DEF(MAPLE_RESERVED_RANGE) && (root & 3) == PFS_DEF(MAPLE_ROOT_NODE))
			pfs_maple_node(&w, root & ~PFS_DEF(MAPLE_ROOT_NODE), 0, ~0UL, 1);
		else if (root)		/* a single entry at index 0, no node */
			pfs_vma_entry(&w, root, 0, 0);
	}
	/* get_gate_vma(): unless vsyscall=none */
	if (L.gate_listed) {
		ulong s = 0, e = 0;

		readmem(L.gate_vma + L.vm_start, KVADDR, &s, sizeof(s), "gate_vma", RETURN_ON_ERROR);
		readmem(L.gate_vma + L.vm_end, KVADDR, &e, sizeof(e), "gate_vma", RETURN_ON_ERROR);
		if (e > s) {
			w.last_end = 0;
			pfs_vma_entry(&w, L.gate_vma, s, e - 1);
		}
	}
	if (json)
		fprintf(fp, "]}\n");
}

static struct command_table_entry command_table[] = {
	{ "pfcounters", cmd_pfcounters, help_pfcounters, 0 },
	{ "pfps", cmd_pfps, help_pfps, 0 },
	{ "pfrss", cmd_pfrss, help_pfrss, 0 },
	{ "pfpte", cmd_pfpte, help_pfpte, 0 },
	{ "pfvma", cmd_pfvma, help_pfvma, 0 },
	{ NULL }
};

void __attribute__((constructor)) pfscale_init(void)
{
	register_extension(command_table);
	if (!symbol_exists("pfscale_counter_desc"))
		fprintf(fp, "pfscale.so: this kernel has no pfscale patches (no pfscale_counter_desc symbol): pfcounters will not work\n");
}

void __attribute__((destructor)) pfscale_fini(void) { }
