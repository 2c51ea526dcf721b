/* SPDX-License-Identifier: GPL-2.0 */
/* pfvma (gdb's pf-mm): a process's mm and its VMAs, from its maple tree. */
#include "pfscale.h"

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
	"  pf-mm is the same command, by gdb's name.",
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

/* One mm's VMAs as the maple walk visits them. */
struct pfs_vma_walk {
	ulong brk, start_brk, start_stack;
	long vmas, bad;		/* bad: VMAs unreadable or not as the tree says */
	ulong last_end;
	int print;		/* 0: the counting pass for the header line */
	int say;		/* INFO lines for what is wrong (in one pass only) */
	struct jw *w;		/* -j: the writer */
};

/* A VMA's fields, as /proc/PID/maps shows them. */
struct pfs_vma {
	ulong start, end, flags, pgoff, file, anon_vma;
	const char *kind;
	char perms[5], name[512];
};

/* The path of a dentry up to its filesystem's root (mounts not crossed). */
static void pfs_dentry_path(ulong dentry, char *out, int len)
{
	static char names[PFD_DENTRY_DEPTH + 1][128];
	const char *ptrs[PFD_DENTRY_DEPTH + 1];
	ulong parent, p;
	int n = 0, root = 0;

	while (dentry && n <= PFD_DENTRY_DEPTH && !root) {
		if (!PFS_READ(dentry, dentry_d_parent, parent, RETURN_ON_ERROR | QUIET))
			break;
		names[n][0] = 0;
		if (PFS_READ(dentry + OFF(dentry_d_name), qstr_name, p, RETURN_ON_ERROR | QUIET) &&
		    p)
			read_string(p, names[n], sizeof(names[n]) - 1);
		ptrs[n] = names[n];
		n++;
		root = parent == dentry;
		dentry = parent;
	}
	pfd_dentry_path(ptrs, n, root, out, len);
}

/* kind and name: file (its path), gate, special ([vdso]) or anon ([heap], [stack]). */
static void pfs_vma_name(struct pfs_vma_walk *w, ulong vma, struct pfs_vma *v)
{
	ulong ops = 0, priv = 0, p = 0;

	v->name[0] = 0;
	if (vma == L.gate_vma) {
		v->kind = "gate";
		snprintf(v->name, sizeof(v->name), "[vsyscall]");
		return;
	}
	if (v->file) {
		v->kind = "file";
		if (PFS_READ(v->file + OFF(file_f_path), path_dentry, p, RETURN_ON_ERROR | QUIET) && p)
			pfs_dentry_path(p, v->name, sizeof(v->name));
		return;
	}
	v->kind = "anon";
	PFS_READ(vma, vm_area_struct_vm_ops, ops, RETURN_ON_ERROR | QUIET);
	if (ops && (ops == L.special_ops || ops == L.legacy_special_ops)) {
		v->kind = "special";
		/* special_mapping_name(): the vm_special_mapping's name */
		if (ops == L.special_ops &&
		    PFS_READ(vma, vm_area_struct_vm_private_data, priv, RETURN_ON_ERROR | QUIET) &&
		    priv && PFS_READ(priv, vm_special_mapping_name, p, RETURN_ON_ERROR | QUIET) && p)
			read_string(p, v->name, sizeof(v->name) - 1);
		return;
	}
	/* show_map_vma()'s markers */
	if (v->start <= w->brk && v->end >= w->start_brk)
		snprintf(v->name, sizeof(v->name), "[heap]");
	else if (v->start <= w->start_stack && v->end >= w->start_stack)
		snprintf(v->name, sizeof(v->name), "[stack]");
}

static int pfs_vma_read(ulong vma, struct pfs_vma *v)
{
	v->anon_vma = 0;
	return PFS_READ(vma, vm_area_struct_vm_start, v->start, RETURN_ON_ERROR) &&
	       PFS_READ(vma, vm_area_struct_vm_end, v->end, RETURN_ON_ERROR) &&
	       PFS_READ(vma, vm_area_struct_vm_flags, v->flags, RETURN_ON_ERROR) &&
	       PFS_READ(vma, vm_area_struct_vm_pgoff, v->pgoff, RETURN_ON_ERROR) &&
	       PFS_READ(vma, vm_area_struct_vm_file, v->file, RETURN_ON_ERROR) &&
	       PFS_READ(vma, vm_area_struct_anon_vma, v->anon_vma, RETURN_ON_ERROR);
}

static void pfs_vma_print(struct pfs_vma_walk *w, ulong vma, struct pfs_vma *v, int odd,
			  ulong first, ulong last)
{
	char range[40];

	if (w->w) {
		jw_start_object(w->w);
		jw_hex_field(w->w, "vma", vma);
		jw_hex_field(w->w, "start", v->start);
		jw_hex_field(w->w, "end", v->end);
		jw_string_field(w->w, "perms", v->perms);
		jw_hex_field(w->w, "flags", v->flags);
		jw_uint_field(w->w, "pgoff", v->pgoff);
		jw_string_field(w->w, "kind", v->kind);
		jw_bool_field(w->w, "anon_vma", v->anon_vma != 0);
		jw_string_field(w->w, "name", v->name);
		if (odd)
			jw_bool_field(w->w, "tree_range_differs", 1);
		jw_end_object(w->w);
		return;
	}
	snprintf(range, sizeof(range), "%08lx-%08lx", v->start, v->end);
	fprintf(fp, "%-25s  %-5s  %08lx  %-7s  %-16lx  %s", range, v->perms, v->pgoff, v->kind,
		vma, v->name);
	if (odd)
		fprintf(fp, "  !! tree range %lx-%lx", first, last + 1);
	fprintf(fp, "\n");
}

/* The maple walk's visitor: one leaf entry, index range [first, last] -> a VMA. */
static void pfs_vma_entry(ulong vma, ulong first, ulong last, void *ctx)
{
	struct pfs_vma_walk *w = ctx;
	struct pfs_vma v;
	int odd;

	/* an internal entry is no pointer: said, not counted (gdb's pf-mm likewise) */
	if (pfd_xa_is_internal(vma)) {
		if (w->say)
			error(INFO, "%lx-%lx: internal maple entry %lx%s\n", first, last + 1, vma,
			      vma < PFS_DEF(MAPLE_RESERVED_RANGE) ?
			      " (XA_ZERO_ENTRY: mm being duplicated?)" : "");
		return;
	}
	if (w->vmas++ >= PFS_MAX_VMAS)
		return;
	if (!pfs_vma_read(vma, &v)) {
		if (w->say)
			error(INFO, "%lx-%lx: unreadable vm_area_struct %lx\n", first, last + 1, vma);
		w->bad++;
		return;
	}
	pfd_perms(&L.vm, v.flags, v.perms);
	/* /proc's offset: bytes for a file VMA, 0 for the others */
	v.pgoff = v.file ? v.pgoff << PFS_DEF(PAGE_SHIFT) : 0;
	/* The tree's range is the VMA's, and VMAs come in address order. */
	odd = v.start != first || v.end != last + 1 || v.start < w->last_end;
	w->bad += odd;
	w->last_end = v.end;
	if (!w->print)
		return;
	pfs_vma_name(w, vma, &v);
	pfs_vma_print(w, vma, &v, odd, first, last);
}

/* The mmap_lock decoded as gdb's pf-mm does (its "mmap_lock" keys). */
static void pfs_mmap_lock_json(struct jw *w, ulong mm)
{
	ulong lock = mm + OFF(mm_struct_mmap_lock), count = 0, owner = 0, otask;
	const char *flags[2];
	char state[48], who[64] = "";
	int i, n;

	if (OFF(mm_struct_mmap_lock) < 0 || OFF(rw_semaphore_count) < 0 ||
	    OFF(rw_semaphore_owner) < 0) {
		jw_null(w);
		return;
	}
	PFS_READ(lock, rw_semaphore_count, count, FAULT_ON_ERROR);
	PFS_READ(lock, rw_semaphore_owner, owner, FAULT_ON_ERROR);
	pfd_rwsem_state(&L.rwsem, count, state, sizeof(state));
	otask = owner & ~PFS_DEF(RWSEM_OWNER_FLAGS_MASK);
	if (otask) {
		char comm[TASK_COMM_LEN + 1] = "";
		int pid = 0, ok = PFS_READ(otask, task_struct_pid, pid, RETURN_ON_ERROR | QUIET) &&
			 pfs_read_member(otask, PFS_M_task_struct_comm, comm, TASK_COMM_LEN,
					 RETURN_ON_ERROR | QUIET);

		snprintf(who, sizeof(who), "%s", owner & PFS_DEF(RWSEM_READER_OWNED) ?
			 "last reader " : "");
		if (ok)
			snprintf(who + strlen(who), sizeof(who) - strlen(who), "%d (%s)", pid, comm);
		else
			snprintf(who + strlen(who), sizeof(who) - strlen(who), "?");
	}
	jw_start_object(w);
	jw_hex_field(w, "count", count);
	jw_string_field(w, "state", state);
	jw_name(w, "flags");
	jw_start_array(w);
	for (i = 0, n = pfd_rwsem_flags(&L.rwsem, count, flags); i < n; i++)
		jw_string(w, flags[i]);
	jw_end_array(w);
	jw_hex_field(w, "owner", owner);
	jw_string_field(w, "owner_task", who);
	jw_end_object(w);
}

/* The page_table_lock as gdb's pf-mm shows it (a qspinlock's val word). */
static void pfs_page_table_lock_json(struct jw *w, ulong mm)
{
	ulong lock = mm + OFF(mm_struct_page_table_lock) + OFF(spinlock_rlock);
	uint val = 0;
	int cpu = -1;

	if (OFF(mm_struct_page_table_lock) < 0 || OFF(spinlock_rlock) < 0 ||
	    OFF(raw_spinlock_raw_lock) < 0 || OFF(qspinlock_val) < 0) {
		jw_null(w);
		return;
	}
	PFS_READ(lock + OFF(raw_spinlock_raw_lock), qspinlock_val, val, FAULT_ON_ERROR);
	jw_start_object(w);
	jw_hex_field(w, "val", val);
	jw_string_field(w, "state", pfd_qspin_state(val));
	if (OFF(raw_spinlock_owner_cpu) >= 0) {
		PFS_READ(lock, raw_spinlock_owner_cpu, cpu, FAULT_ON_ERROR);
		jw_name(w, "owner_cpu");
		if (cpu >= 0)
			jw_int(w, cpu);
		else
			jw_null(w);
	}
	jw_end_object(w);
}

/* pf-mm's keys before "vmas": the mm, its locks, its rss and threads. */
static void pfs_mm_json(struct jw *w, struct pfs_task *t, uint ma_flags,
			struct pfs_maple_walk *mw, long bad)
{
	ulong pgd = 0, pgtables = 0;
	int mm_users = 0, mm_count = 0, map_count = 0;
	struct pfs_rss r;

	PFS_READ(t->mm, mm_struct_pgd, pgd, FAULT_ON_ERROR);
	PFS_READ(t->mm, mm_struct_mm_users, mm_users, FAULT_ON_ERROR);
	PFS_READ(t->mm, mm_struct_mm_count, mm_count, FAULT_ON_ERROR);
	PFS_READ(t->mm, mm_struct_map_count, map_count, FAULT_ON_ERROR);
	PFS_READ(t->mm, mm_struct_pgtables_bytes, pgtables, FAULT_ON_ERROR);
	jw_int_field(w, "pid", t->pid);
	jw_int_field(w, "tgid", t->tgid);
	jw_string_field(w, "comm", t->comm);
	jw_hex_field(w, "mm", t->mm);
	jw_hex_field(w, "pgd", pgd);
	jw_int_field(w, "mm_users", mm_users);
	jw_int_field(w, "mm_count", mm_count);
	jw_int_field(w, "map_count", map_count);
	jw_int_field(w, "pgtables_bytes", (long)pgtables);
	jw_string_field(w, "vm_flags_source", L.vm.source);
	jw_uint_field(w, "maple_height", pfs_maple_height(ma_flags));
	jw_int_field(w, "maple_nodes", mw->nodes);
	jw_int_field(w, "inconsistencies", bad);
	jw_name(w, "mmap_lock");
	pfs_mmap_lock_json(w, t->mm);
	jw_name(w, "page_table_lock");
	pfs_page_table_lock_json(w, t->mm);
	if (L.missing & NEED_RSS)
		return;
	r.threads = (struct pfs_thread *)GETBUF(PFS_MAX_THREADS * sizeof(*r.threads));
	pfs_rss_read(t, &r);
	jw_name(w, "rss");
	jw_start_object(w);
	pfs_rss_json(w, &r);
	jw_end_object(w);
	pfs_threads_json(w, &r);
	FREEBUF(r.threads);
}

/* [vsyscall], which /proc/PID/maps lists last: get_gate_vma(), unless vsyscall=none. */
static void pfs_gate_vma(struct pfs_vma_walk *vw)
{
	ulong s = 0, e = 0;

	if (!L.gate_listed)
		return;
	PFS_READ(L.gate_vma, vm_area_struct_vm_start, s, RETURN_ON_ERROR);
	PFS_READ(L.gate_vma, vm_area_struct_vm_end, e, RETURN_ON_ERROR);
	if (e > s) {
		vw->last_end = 0;
		pfs_vma_entry(L.gate_vma, s, e - 1, vw);
	}
}

void cmd_pfvma(void)
{
	struct pfs_task t;
	struct pfs_vma_walk vw;
	struct pfs_maple_walk mw = { pfs_vma_entry, &vw, 1, 0, 0 };
	struct jw w;
	ulong root = 0;
	uint ma_flags = 0;
	int json;

	if (pfs_options(&json) != argcnt - 1)
		cmd_usage(pc->curcmd, SYNOPSIS);
	pfs_need(NEED_TASK | NEED_VMA);
	pfs_lookup(args[optind], &t);
	memset(&vw, 0, sizeof(vw));
	PFS_READ(t.mm + OFF(mm_struct_mm_mt), maple_tree_ma_root, root, FAULT_ON_ERROR);
	PFS_READ(t.mm + OFF(mm_struct_mm_mt), maple_tree_ma_flags, ma_flags, FAULT_ON_ERROR);
	PFS_READ(t.mm, mm_struct_brk, vw.brk, FAULT_ON_ERROR);
	PFS_READ(t.mm, mm_struct_start_brk, vw.start_brk, FAULT_ON_ERROR);
	PFS_READ(t.mm, mm_struct_start_stack, vw.start_stack, FAULT_ON_ERROR);
	/*
	 * a counting pass first: the header line has the counts. What is
	 * wrong is said in INFO lines in the pass that prints the table, but
	 * with -j in this one, before the JSON starts (it is one line).
	 */
	vw.say = json;
	mw.quiet = !json;
	pfs_maple_walk(&mw, root);
	if (json) {
		jw_init(&w, fp, JW_SPACED);
		jw_start_object(&w);
		pfs_mm_json(&w, &t, ma_flags, &mw, mw.bad + vw.bad);
		jw_name(&w, "vmas");
		jw_start_array(&w);
		vw.w = &w;
	} else {
		fprintf(fp, "pid %d (%s) mm %lx: %ld vmas, maple tree height %u, %ld nodes",
			t.pid, t.comm, t.mm, vw.vmas, pfs_maple_height(ma_flags), mw.nodes);
		if (mw.bad + vw.bad)
			fprintf(fp, ", %ld inconsistencies (marked !!)", mw.bad + vw.bad);
		fprintf(fp, "\n%-25s  %-5s  %-8s  %-7s  %-16s  %s\n",
			"START-END", "PERMS", "PGOFF", "KIND", "VMA", "NAME");
	}
	vw.print = 1;
	vw.say = !json;
	vw.vmas = vw.bad = 0;
	vw.last_end = 0;
	mw.quiet = json;
	pfs_maple_walk(&mw, root);
	pfs_gate_vma(&vw);
	if (json) {
		jw_end_array(&w);
		jw_end_object(&w);
	}
}
