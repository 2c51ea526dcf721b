/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfscale.so: a crash(8) extension that reads the pfscale figures out of
 * a vmcore (or live memory) of a pfscale-patched linux-source-6.1 kernel.
 *
 *   crash> extend crash/pfscale.so
 *   crash> pfcounters            pfscale counters summed over CPUs
 *   crash> pfps                  pid, tgid, comm, mm of every task
 *   crash> pfrss PID             split RSS of PID's mm, as debugfs rss
 *   crash> pfpte PID START END   present PTE runs of PID in [START, END)
 *   crash> pfvma PID             PID's VMAs, from its mm->mm_mt maple tree
 *
 * crash 8.0.2 does not understand 6.1's task table (its ps shows only the
 * idle tasks, "vm PID" and "vtop -u" fail), so this extension finds tasks
 * itself: it walks init_task.tasks and each thread group's
 * signal->thread_head list with readmem(), using member offsets looked up
 * once from the kernel's debug info, and walks user page tables with
 * physical reads from mm->pgd. crash 8.0.2 has no maple tree support
 * either (6.1 keeps the VMAs in mm->mm_mt), so pfvma walks the tree from
 * its nodes (lib/maple_tree.c's encoding).
 *
 * Build: gcc -Wall -shared -fPIC -nostartfiles -D_GNU_SOURCE -DX86_64 \
 *            -I/usr/include/crash -o pfscale.so pfscale.c
 */
#include "defs.h"

#define PFS_MM_COUNTERS 4	/* MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES */
#define PFS_MM_SWAPENTS 2	/* not part of RSS (get_mm_rss()) */
static const char *rss_names[PFS_MM_COUNTERS] = { "file", "anon", "swap", "shmem" };

static struct {
	int init;
	long task_tasks, task_pid, task_tgid, task_comm, task_mm, task_signal,
		task_thread_node, task_rss_stat, signal_thread_head, mm_rss_stat,
		mm_pgd, rss_events, rss_count;
} off;

/* Look up the offsets once; 0 if the kernel lacks something we need. */
static int pfs_offsets(void)
{
	if (off.init)
		return off.init > 0;
	off.task_tasks = MEMBER_OFFSET("task_struct", "tasks");
	off.task_pid = MEMBER_OFFSET("task_struct", "pid");
	off.task_tgid = MEMBER_OFFSET("task_struct", "tgid");
	off.task_comm = MEMBER_OFFSET("task_struct", "comm");
	off.task_mm = MEMBER_OFFSET("task_struct", "mm");
	off.task_signal = MEMBER_OFFSET("task_struct", "signal");
	off.task_thread_node = MEMBER_OFFSET("task_struct", "thread_node");
	off.task_rss_stat = MEMBER_OFFSET("task_struct", "rss_stat");
	off.signal_thread_head = MEMBER_OFFSET("signal_struct", "thread_head");
	off.mm_rss_stat = MEMBER_OFFSET("mm_struct", "rss_stat");
	off.mm_pgd = MEMBER_OFFSET("mm_struct", "pgd");
	off.rss_events = MEMBER_OFFSET("task_rss_stat", "events");
	off.rss_count = MEMBER_OFFSET("task_rss_stat", "count");
	off.init = (off.task_tasks >= 0 && off.task_pid >= 0 && off.task_tgid >= 0 &&
		    off.task_comm >= 0 && off.task_mm >= 0 && off.task_signal >= 0 &&
		    off.task_thread_node >= 0 && off.signal_thread_head >= 0 &&
		    off.mm_pgd >= 0) ? 1 : -1;
	if (off.init < 0)
		error(INFO, "pfscale: task_struct/signal_struct/mm_struct members not found\n");
	return off.init > 0;
}

struct pfs_task {
	ulong task, mm;
	int pid, tgid;
	char comm[TASK_COMM_LEN + 1];
};

static void pfs_read_task(ulong task, struct pfs_task *t)
{
	t->task = task;
	readmem(task + off.task_pid, KVADDR, &t->pid, sizeof(int), "task_struct pid", FAULT_ON_ERROR);
	readmem(task + off.task_tgid, KVADDR, &t->tgid, sizeof(int), "task_struct tgid", FAULT_ON_ERROR);
	readmem(task + off.task_mm, KVADDR, &t->mm, sizeof(ulong), "task_struct mm", FAULT_ON_ERROR);
	memset(t->comm, 0, sizeof(t->comm));
	readmem(task + off.task_comm, KVADDR, t->comm, TASK_COMM_LEN, "task_struct comm", FAULT_ON_ERROR);
}

#define PFS_MAX_TASKS 100000	/* a corrupt list must not loop forever */

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

	head = init_task + off.task_tasks;
	p = init_task;
	do {
		ulong sig, thead, tnext, leader = p;

		pfs_read_task(p, &t);
		if (fn(&t, arg))
			return 1;
		readmem(p + off.task_signal, KVADDR, &sig, sizeof(ulong),
			"task_struct signal", FAULT_ON_ERROR);
		if (sig) {
			thead = sig + off.signal_thread_head;
			readmem(thead, KVADDR, &tnext, sizeof(ulong),
				"signal_struct thread_head", FAULT_ON_ERROR);
			while (tnext && tnext != thead && n++ < PFS_MAX_TASKS) {
				ulong th = tnext - off.task_thread_node;

				if (th != leader) {
					pfs_read_task(th, &t);
					if (fn(&t, arg))
						return 1;
				}
				readmem(tnext, KVADDR, &tnext, sizeof(ulong),
					"task_struct thread_node", FAULT_ON_ERROR);
			}
		}
		readmem(p + off.task_tasks, KVADDR, &next, sizeof(ulong),
			"task_struct tasks", FAULT_ON_ERROR);
		p = next - off.task_tasks;
	} while (next && next != head && n++ < PFS_MAX_TASKS);
	return 0;
}

/* The pfscale patches add pfscale_counter_desc[]: without it, one line. */
static int pfs_patched(const char *cmd)
{
	if (symbol_exists("pfscale_counter_desc") && symbol_exists("pfscale_counters"))
		return 1;
	fprintf(fp, "%s: this kernel has no pfscale patches (no pfscale_counter_desc symbol)\n", cmd);
	return 0;
}

/* pfcounters */

char *help_pfcounters[] = {
	"pfcounters",
	"pfscale lost page-fault race counters, summed over CPUs",
	" ",
	"  Prints one \"name value\" line per pfscale counter, the sum over every",
	"  CPU of the per-CPU pfscale_counters, in the format of the guest's",
	"  /sys/kernel/debug/pfscale/counters. The names are read from the",
	"  kernel's pfscale_counter_desc[] in the dump, so they always match the",
	"  kernel. On a kernel without the pfscale patches it says so.",
	"\nEXAMPLE",
	"  %s> pfcounters",
	"  anon_fault_locked 1234",
	"  anon_pte_recheck_lost 2",
	"  ...",
	NULL
};

static void cmd_pfcounters(void)
{
	ulong base, desc, nameptr;
	long dsize, dname, csize;
	unsigned int nr = 0, i;
	int cpu;
	char name[128];

	if (argcnt != 1) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_patched("pfcounters"))
		return;
	base = symbol_value("pfscale_counters");
	desc = symbol_value("pfscale_counter_desc");
	dsize = STRUCT_SIZE("pfscale_counter_desc");
	dname = MEMBER_OFFSET("pfscale_counter_desc", "name");
	csize = MEMBER_SIZE("pfscale_counters", "count");
	if (symbol_exists("pfscale_nr_counters"))
		readmem(symbol_value("pfscale_nr_counters"), KVADDR, &nr, sizeof(nr),
			"pfscale_nr_counters", FAULT_ON_ERROR);
	else if (csize > 0)
		nr = csize / sizeof(ulong);
	if (dsize <= 0 || dname < 0 || nr == 0 || nr > 1024) {
		fprintf(fp, "pfcounters: cannot make out pfscale_counter_desc (nr %u)\n", nr);
		return;
	}
	for (i = 0; i < nr; i++) {
		ulong sum = 0, v;

		readmem(desc + i * dsize + dname, KVADDR, &nameptr, sizeof(ulong),
			"pfscale_counter_desc name", FAULT_ON_ERROR);
		if (!nameptr || !read_string(nameptr, name, sizeof(name) - 1))
			snprintf(name, sizeof(name), "counter%u", i);
		for (cpu = 0; cpu < kt->cpus; cpu++) {
			ulong addr = base + i * sizeof(ulong);

			if (kt->flags & PER_CPU_OFF)
				addr += kt->__per_cpu_offset[cpu];
			if (!readmem(addr, KVADDR, &v, sizeof(v), "pfscale_counters",
				     RETURN_ON_ERROR)) {
				error(INFO, "pfcounters: cannot read cpu %d's counter %s\n", cpu, name);
				continue;
			}
			sum += v;
		}
		fprintf(fp, "%s %lu\n", name, sum);
	}
}

/* pfps */

char *help_pfps[] = {
	"pfps",
	"list tasks by walking the task list (works where ps does not)",
	" ",
	"  Lists every task, one line each: PID, TGID, COMM, the task_struct and",
	"  the mm_struct addresses (0 for kernel threads). It walks",
	"  init_task.tasks and each thread group's signal->thread_head list",
	"  itself, so it works on kernels whose task table crash cannot",
	"  initialise (crash 8.0.2 on 6.1: ps shows only the idle tasks).",
	"\nEXAMPLE",
	"  %s> pfps",
	"      PID    TGID  COMM              TASK              MM",
	"        0       0  swapper/0         ffffffff82012940  0",
	"        1       1  init              ffff888003c58000  ffff888003c74000",
	NULL
};

static int pfps_one(struct pfs_task *t, void *arg)
{
	(void)arg;
	fprintf(fp, "%8d %7d  %-16s  %-16lx  %lx\n", t->pid, t->tgid, t->comm, t->task, t->mm);
	return 0;
}

static void cmd_pfps(void)
{
	if (argcnt != 1) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_offsets())
		return;
	fprintf(fp, "%8s %7s  %-16s  %-16s  %s\n", "PID", "TGID", "COMM", "TASK", "MM");
	pfs_for_each_task(pfps_one, NULL);
}

/* pfrss */

char *help_pfrss[] = {
	"pfrss",
	"split RSS of a process: per-thread deltas, mm counters, rss_mm, rss_split",
	"pid",
	"  Finds the task with this pid (any thread's), then every task using",
	"  the same mm, and prints, as the guest's /sys/kernel/debug/pfscale/rss",
	"  does (without its page-table scan):",
	"    thread TID events E file F anon A swap S shmem H",
	"                   each thread's unsynced task->rss_stat delta",
	"    threads N      how many tasks use the mm",
	"    mm ...         the mm_struct's rss_stat counters (what /proc shows)",
	"    split ...      those plus every thread's delta",
	"    rss_mm N       file + anon + shmem of the mm counters",
	"    rss_split N    file + anon + shmem of the split sums",
	"  An unknown pid, or a kernel thread, gets one line saying so.",
	"\nEXAMPLE",
	"  %s> pfrss 70",
	"  pid 70",
	"  comm t_rss",
	"  thread 70 events 3 file 0 anon 2 swap 0 shmem 0",
	"  threads 1",
	"  mm file 301 anon 40 swap 0 shmem 0",
	"  split file 301 anon 42 swap 0 shmem 0",
	"  rss_mm 341",
	"  rss_split 343",
	NULL
};

struct pfs_find {
	int pid;
	struct pfs_task found;
	int ok;
};

static int pfs_find_pid(struct pfs_task *t, void *arg)
{
	struct pfs_find *f = arg;

	if (t->pid != f->pid)
		return 0;
	f->found = *t;
	f->ok = 1;
	return 1;
}

struct pfs_rss {
	ulong mm;
	int threads;
	long split[PFS_MM_COUNTERS];
};

static int pfrss_one(struct pfs_task *t, void *arg)
{
	struct pfs_rss *r = arg;
	int events, count[PFS_MM_COUNTERS], i;

	if (t->mm != r->mm)
		return 0;
	r->threads++;
	readmem(t->task + off.task_rss_stat + off.rss_events, KVADDR, &events,
		sizeof(int), "task_struct rss_stat.events", FAULT_ON_ERROR);
	readmem(t->task + off.task_rss_stat + off.rss_count, KVADDR, count,
		sizeof(count), "task_struct rss_stat.count", FAULT_ON_ERROR);
	fprintf(fp, "thread %d events %d", t->pid, events);
	for (i = 0; i < PFS_MM_COUNTERS; i++) {
		r->split[i] += count[i];
		fprintf(fp, " %s %d", rss_names[i], count[i]);
	}
	fprintf(fp, "\n");
	return 0;
}

static int pfs_lookup(char *arg, struct pfs_find *f, const char *cmd)
{
	int err = 0;

	f->ok = 0;
	f->pid = (int)dtol(arg, RETURN_ON_ERROR | QUIET, &err);
	if (err || !decimal(arg, 0)) {
		fprintf(fp, "%s: not a pid: %s\n", cmd, arg);
		return 0;
	}
	pfs_for_each_task(pfs_find_pid, f);
	if (!f->ok) {
		fprintf(fp, "%s: no task with pid %d\n", cmd, f->pid);
		return 0;
	}
	if (!f->found.mm) {
		fprintf(fp, "%s: pid %d (%s) is a kernel thread: no mm\n", cmd, f->pid, f->found.comm);
		return 0;
	}
	return 1;
}

static void cmd_pfrss(void)
{
	struct pfs_find f;
	struct pfs_rss r;
	long mmc[PFS_MM_COUNTERS], rss_mm = 0, rss_split = 0;
	int i;

	if (argcnt != 2) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_offsets())
		return;
	if (off.task_rss_stat < 0 || off.rss_events < 0 || off.rss_count < 0 || off.mm_rss_stat < 0) {
		fprintf(fp, "pfrss: this kernel has no split RSS counting (task_struct.rss_stat)\n");
		return;
	}
	if (!pfs_lookup(args[1], &f, "pfrss"))
		return;
	fprintf(fp, "pid %d\ncomm %s\n", f.found.pid, f.found.comm);
	/* mm_struct.rss_stat.count[] is atomic_long_t: one long each. */
	readmem(f.found.mm + off.mm_rss_stat, KVADDR, mmc, sizeof(mmc),
		"mm_struct rss_stat", FAULT_ON_ERROR);
	memset(&r, 0, sizeof(r));
	r.mm = f.found.mm;
	for (i = 0; i < PFS_MM_COUNTERS; i++)
		r.split[i] = mmc[i];
	pfs_for_each_task(pfrss_one, &r);
	fprintf(fp, "threads %d\nmm", r.threads);
	for (i = 0; i < PFS_MM_COUNTERS; i++)
		fprintf(fp, " %s %ld", rss_names[i], mmc[i]);
	fprintf(fp, "\nsplit");
	for (i = 0; i < PFS_MM_COUNTERS; i++)
		fprintf(fp, " %s %ld", rss_names[i], r.split[i]);
	for (i = 0; i < PFS_MM_COUNTERS; i++) {
		if (i == PFS_MM_SWAPENTS)
			continue;
		rss_mm += mmc[i];
		rss_split += r.split[i];
	}
	fprintf(fp, "\nrss_mm %ld\nrss_split %ld\n", rss_mm, rss_split);
}

/* pfpte */

char *help_pfpte[] = {
	"pfpte",
	"present page runs of a process's user page tables",
	"pid start end",
	"  Walks the x86_64 page tables of pid's mm from mm->pgd, with physical",
	"  reads, over the user addresses [start, end) (hex): 4 levels, or 5 when",
	"  the kernel's __pgtable_l5_enabled (CONFIG_X86_5LEVEL) is set, and",
	"  prints each run of virtually contiguous present pages:",
	"    START-END pages N",
	"  then the total. Huge PMD/PUD mappings count as their 4k pages. Then",
	"  the non-present, non-none PTEs: \"swapped N\", swap entries of swap",
	"  files, and \"other_nonpresent N\": protnone PTEs and swap-format",
	"  entries of the other types (migration, PTE markers such as a PTE",
	"  parked by the pfscale atomic path, hwpoison, swapin errors). It",
	"  does not need crash's task table (vtop -u does, and fails on 6.1).",
	"\nEXAMPLE",
	"  %s> pfpte 70 400000 500000",
	"  400000-403000 pages 3",
	"  total 3",
	"  swapped 0",
	"  other_nonpresent 0",
	NULL
};

#define PFS_PRESENT	0x1UL
#define PFS_PSE		0x80UL
#define PFS_PROTNONE	0x100UL
#define PFS_SWP_TYPE_SHIFT	59	/* x86-64 swap PTE: type in bits 59-63 */
#define PFS_ADDR_MASK	0x000ffffffffff000UL

static ulong run_start, run_end, run_total, nr_swapped, nr_other;

/* MAX_SWAPFILES: swap types below it are swap files (32 without swap). */
static ulong pfs_max_swapfiles(void)
{
	long n = symbol_exists("swap_info") ?
		get_array_length("swap_info", NULL, 0) : 0;

	return n > 0 ? n : 32;
}

/* Count a non-present, non-none PTE: a swap entry or another kind. */
static void pfpte_nonpresent(ulong e, ulong max_swapfiles)
{
	if (!(e & PFS_PROTNONE) && (e >> PFS_SWP_TYPE_SHIFT) < max_swapfiles)
		nr_swapped++;
	else
		nr_other++;
}

static void pfpte_present(ulong va, ulong len)
{
	if (run_end && va == run_end) {
		run_end += len;
	} else {
		if (run_end)
			fprintf(fp, "%lx-%lx pages %lu\n", run_start, run_end,
				(run_end - run_start) >> 12);
		run_start = va;
		run_end = va + len;
	}
	run_total += len >> 12;
}

static int pfs_entry(ulong table_pa, int idx, ulong *e)
{
	return readmem(table_pa + idx * 8, PHYSADDR, e, sizeof(ulong),
		       "page table entry", RETURN_ON_ERROR);
}

/* 5 if the kernel runs 5-level paging, else 4 (no CONFIG_X86_5LEVEL: 4). */
static int pfs_paging_levels(void)
{
	uint l5 = 0;

	if (symbol_exists("__pgtable_l5_enabled"))
		readmem(symbol_value("__pgtable_l5_enabled"), KVADDR, &l5,
			sizeof(l5), "__pgtable_l5_enabled", RETURN_ON_ERROR);
	return l5 ? 5 : 4;
}

static void cmd_pfpte(void)
{
	struct pfs_find f;
	ulong start, end, pgd, va;
	int err = 0, levels = pfs_paging_levels();
	ulong max_swapfiles = pfs_max_swapfiles();
	static const int shift5[5] = { 48, 39, 30, 21, 12 };
	const int *shift = levels == 5 ? shift5 : shift5 + 1;

	if (argcnt != 4) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_offsets())
		return;
	start = htol(args[2], RETURN_ON_ERROR | QUIET, &err);
	if (!err)
		end = htol(args[3], RETURN_ON_ERROR | QUIET, &err);
	if (err || start >= end || end > (1UL << (levels == 5 ? 56 : 47))) {
		fprintf(fp, "pfpte: bad range %s %s (hex user addresses, start < end)\n",
			args[2], args[3]);
		return;
	}
	if (!pfs_lookup(args[1], &f, "pfpte"))
		return;
	readmem(f.found.mm + off.mm_pgd, KVADDR, &pgd, sizeof(ulong), "mm_struct pgd", FAULT_ON_ERROR);
	run_start = run_end = run_total = nr_swapped = nr_other = 0;
	va = start & ~0xfffUL;
	while (va < end) {
		ulong table = VTOP(pgd), e = 0;
		int level;

		for (level = 0; level < levels; level++) {
			ulong size = 1UL << shift[level];
			int idx = (va >> shift[level]) & 511;
			int read = pfs_entry(table, idx, &e);

			if (!read || !(e & PFS_PRESENT)) {
				if (read && level == levels - 1 && e)
					pfpte_nonpresent(e, max_swapfiles);
				va = (va & ~(size - 1)) + size;
				break;
			}
			if (level == levels - 1 ||
			    (level >= levels - 3 && (e & PFS_PSE))) {
				ulong next = (va & ~(size - 1)) + size;

				if (next > end)
					next = end;
				pfpte_present(va, next - va);
				va = next;
				break;
			}
			table = e & PFS_ADDR_MASK;
		}
	}
	if (run_end)
		fprintf(fp, "%lx-%lx pages %lu\n", run_start, run_end, (run_end - run_start) >> 12);
	fprintf(fp, "total %lu\nswapped %lu\nother_nonpresent %lu\n", run_total,
		nr_swapped, nr_other);
}

/* pfvma */

char *help_pfvma[] = {
	"pfvma",
	"a process's VMAs, read from its mm->mm_mt maple tree",
	"pid",
	"  Finds the task with this pid and walks its mm's maple tree (mm->mm_mt)",
	"  from the root node itself: crash 8.0.2 has no maple tree support, and",
	"  6.1 keeps the VMAs only there (no mm->mmap list). One line per VMA,",
	"  in address order, with the columns of /proc/PID/maps first:",
	"    START-END          the VMA's [vm_start, vm_end)",
	"    PERMS              rwx and p (private) or s (VM_MAYSHARE)",
	"    PGOFF              vm_pgoff in bytes (0 for anonymous VMAs, as /proc)",
	"    KIND               file, anon, special (vdso, vvar) or gate (vsyscall)",
	"    VMA                the vm_area_struct",
	"    NAME               the file's dentry name, [heap], [stack], [vdso] ...",
	"  The header line gives the tree's height and node count; a tree entry",
	"  whose range disagrees with its VMA's vm_start/vm_end is flagged \"!!\".",
	"  As /proc/PID/maps, the list ends with x86's [vsyscall] gate VMA, which",
	"  is not in the tree (and not in the header's count).",
	"\nEXAMPLE",
	"  %s> pfvma 58",
	"  pid 58 (h_crash_maps) mm ffff888000b58580: 253 vmas, maple tree height 3, 21 nodes",
	"  START-END                  PERMS  PGOFF     KIND     VMA               NAME",
	"  00400000-00401000          r--p   00000000  file     ffff888000318500  h_crash_maps",
	"  00401000-0047b000          r-xp   00001000  file     ffff888000318580  h_crash_maps",
	"  ...",
	"  17541000-17563000          rw-p   00000000  anon     ffff888000318800  [heap]",
	"  7fb0fb973000-7fb0fb975000  rw-s   00000000  file     ffff888000bd1900  dev/zero",
	"  ...",
	"  7ffc8a57e000-7ffc8a57f000  r-xp   00000000  special  ffff888000318980  [vdso]",
	"  ffffffffff600000-ffffffffff601000  --xp   00000000  gate     ffffffff8191b000  [vsyscall]",
	NULL
};

/* lib/maple_tree.c's encoding of a node pointer ("enode"). */
#define PFS_MAPLE_NODE_MASK	255UL	/* low bits of an enode: type and flags */
#define PFS_MAPLE_TYPE_SHIFT	3
#define PFS_MAPLE_TYPE_MASK	0x0f
#define PFS_MAPLE_ROOT_NODE	0x02UL	/* set in ma_root when it points to a node */
#define PFS_MAPLE_RESERVED	4096	/* internal entries below this are not pointers */
#define PFS_MAPLE_HEIGHT_MAX	31
#define PFS_MT_HEIGHT_OFFSET	2	/* MT_FLAGS_HEIGHT_OFFSET */
#define PFS_MT_HEIGHT_MASK	0x7c	/* MT_FLAGS_HEIGHT_MASK */
enum { pfs_maple_dense, pfs_maple_leaf_64, pfs_maple_range_64, pfs_maple_arange_64 };
#define PFS_MAPLE_NODE_SIZE	256
#define PFS_RANGE64_SLOTS	16
#define PFS_ARANGE64_SLOTS	10
#define PFS_MAX_VMAS		1000000

/* VMA flags, as include/linux/mm.h */
#define PFS_VM_READ	0x1UL
#define PFS_VM_WRITE	0x2UL
#define PFS_VM_EXEC	0x4UL
#define PFS_VM_MAYSHARE	0x80UL

static struct {
	int init;
	long mm_mt, mt_root, mt_flags, r64_pivot, r64_slot, a64_pivot, a64_slot,
		vm_start, vm_end, vm_flags, vm_pgoff, vm_file, vm_ops, vm_private,
		file_dentry, dentry_name, qstr_name, mm_brk, mm_start_brk, mm_start_stack,
		special_name;
	ulong special_ops, legacy_special_ops, gate_vma, gate_ops;
} moff;

static long pfs_off_or(const char *s, const char *m, long dflt)
{
	long o = MEMBER_OFFSET((char *)s, (char *)m);

	return o >= 0 ? o : dflt;
}

static int pfs_vma_offsets(void)
{
	if (moff.init)
		return moff.init > 0;
	moff.mm_mt = MEMBER_OFFSET("mm_struct", "mm_mt");
	moff.mt_root = MEMBER_OFFSET("maple_tree", "ma_root");
	moff.mt_flags = MEMBER_OFFSET("maple_tree", "ma_flags");
	/* The slot arrays sit in anonymous unions: fall back to the 64-bit layout. */
	moff.r64_pivot = pfs_off_or("maple_range_64", "pivot", 8);
	moff.r64_slot = pfs_off_or("maple_range_64", "slot", 8 + 8 * (PFS_RANGE64_SLOTS - 1));
	moff.a64_pivot = pfs_off_or("maple_arange_64", "pivot", 8);
	moff.a64_slot = pfs_off_or("maple_arange_64", "slot", 8 + 8 * (PFS_ARANGE64_SLOTS - 1));
	moff.vm_start = MEMBER_OFFSET("vm_area_struct", "vm_start");
	moff.vm_end = MEMBER_OFFSET("vm_area_struct", "vm_end");
	moff.vm_flags = MEMBER_OFFSET("vm_area_struct", "vm_flags");
	moff.vm_pgoff = MEMBER_OFFSET("vm_area_struct", "vm_pgoff");
	moff.vm_file = MEMBER_OFFSET("vm_area_struct", "vm_file");
	moff.vm_ops = MEMBER_OFFSET("vm_area_struct", "vm_ops");
	moff.vm_private = MEMBER_OFFSET("vm_area_struct", "vm_private_data");
	moff.file_dentry = MEMBER_OFFSET("file", "f_path") + MEMBER_OFFSET("path", "dentry");
	moff.dentry_name = MEMBER_OFFSET("dentry", "d_name");
	moff.qstr_name = MEMBER_OFFSET("qstr", "name");
	moff.mm_brk = MEMBER_OFFSET("mm_struct", "brk");
	moff.mm_start_brk = MEMBER_OFFSET("mm_struct", "start_brk");
	moff.mm_start_stack = MEMBER_OFFSET("mm_struct", "start_stack");
	moff.special_name = MEMBER_OFFSET("vm_special_mapping", "name");
	moff.special_ops = symbol_exists("special_mapping_vmops") ?
		symbol_value("special_mapping_vmops") : 0;
	moff.legacy_special_ops = symbol_exists("legacy_special_mapping_vmops") ?
		symbol_value("legacy_special_mapping_vmops") : 0;
	/* x86's [vsyscall]: not in the tree, but /proc/PID/maps lists it last. */
	moff.gate_vma = symbol_exists("gate_vma") ? symbol_value("gate_vma") : 0;
	moff.gate_ops = symbol_exists("gate_vma_ops") ? symbol_value("gate_vma_ops") : 0;
	moff.init = (moff.mm_mt >= 0 && moff.mt_root >= 0 && moff.mt_flags >= 0 &&
		     moff.vm_start >= 0 && moff.vm_end >= 0 && moff.vm_flags >= 0 &&
		     moff.vm_pgoff >= 0 && moff.vm_file >= 0) ? 1 : -1;
	if (moff.init < 0)
		fprintf(fp, "pfvma: this kernel keeps no VMAs in a maple tree (no mm_struct.mm_mt)\n");
	return moff.init > 0;
}

struct pfs_vma_walk {
	struct pfs_task *t;
	ulong brk, start_brk, start_stack;
	long nodes, vmas, bad;
	ulong last_end;
	int print;	/* 0: the counting pass for the header line */
};

static void pfs_vma_name(struct pfs_vma_walk *w, ulong vma, ulong start, ulong end,
			 ulong file, char *kind, char *name, int len)
{
	ulong ops = 0, priv = 0, p = 0;

	name[0] = 0;
	if (file) {
		strcpy(kind, "file");
		if (moff.file_dentry >= 0 && moff.dentry_name >= 0 && moff.qstr_name >= 0 &&
		    readmem(file + moff.file_dentry, KVADDR, &p, sizeof(p), "file dentry",
			    RETURN_ON_ERROR | QUIET) && p &&
		    readmem(p + moff.dentry_name + moff.qstr_name, KVADDR, &p, sizeof(p),
			    "dentry name", RETURN_ON_ERROR | QUIET) && p)
			read_string(p, name, len - 1);
		return;
	}
	strcpy(kind, "anon");
	if (moff.vm_ops >= 0)
		readmem(vma + moff.vm_ops, KVADDR, &ops, sizeof(ops), "vm_ops",
			RETURN_ON_ERROR | QUIET);
	if (ops && ops == moff.gate_ops) {
		strcpy(kind, "gate");
		snprintf(name, len, "[vsyscall]");
		return;
	}
	if (ops && (ops == moff.special_ops || ops == moff.legacy_special_ops)) {
		strcpy(kind, "special");
		/* special_mapping_name(): the vm_special_mapping's name */
		if (ops == moff.special_ops && moff.vm_private >= 0 && moff.special_name >= 0 &&
		    readmem(vma + moff.vm_private, KVADDR, &priv, sizeof(priv),
			    "vm_private_data", RETURN_ON_ERROR | QUIET) && priv &&
		    readmem(priv + moff.special_name, KVADDR, &p, sizeof(p),
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
	ulong start, end, flags, pgoff, file;
	char perms[5], kind[8], name[128], range[40];
	int odd;

	if (!vma)
		return;		/* a gap */
	if (vma < PFS_MAPLE_RESERVED && (vma & 3) == 2) {
		if (w->print)
			fprintf(fp, "%lx-%lx  reserved maple entry %lx (XA_ZERO_ENTRY: mm being duplicated?)\n",
			first, last + 1, vma);
		return;
	}
	if (w->vmas++ >= PFS_MAX_VMAS)
		return;
	if (!readmem(vma + moff.vm_start, KVADDR, &start, sizeof(ulong), "vm_start", RETURN_ON_ERROR) ||
	    !readmem(vma + moff.vm_end, KVADDR, &end, sizeof(ulong), "vm_end", RETURN_ON_ERROR) ||
	    !readmem(vma + moff.vm_flags, KVADDR, &flags, sizeof(ulong), "vm_flags", RETURN_ON_ERROR) ||
	    !readmem(vma + moff.vm_pgoff, KVADDR, &pgoff, sizeof(ulong), "vm_pgoff", RETURN_ON_ERROR) ||
	    !readmem(vma + moff.vm_file, KVADDR, &file, sizeof(ulong), "vm_file", RETURN_ON_ERROR)) {
		if (w->print)
			fprintf(fp, "%lx-%lx  unreadable vm_area_struct %lx\n", first, last + 1, vma);
		w->bad++;
		return;
	}
	perms[0] = flags & PFS_VM_READ ? 'r' : '-';
	perms[1] = flags & PFS_VM_WRITE ? 'w' : '-';
	perms[2] = flags & PFS_VM_EXEC ? 'x' : '-';
	perms[3] = flags & PFS_VM_MAYSHARE ? 's' : 'p';
	perms[4] = 0;
	/* The tree's range is the VMA's, and VMAs come in address order. */
	odd = start != first || end != last + 1 || start < w->last_end;
	w->bad += odd;
	w->last_end = end;
	if (!w->print)
		return;
	pfs_vma_name(w, vma, start, end, file, kind, name, sizeof(name));
	snprintf(range, sizeof(range), "%08lx-%08lx", start, end);
	fprintf(fp, "%-25s  %-5s  %08lx  %-7s  %-16lx  %s", range, perms,
		file ? pgoff << 12 : 0, kind, vma, name);
	if (odd)
		fprintf(fp, "  !! tree range %lx-%lx", first, last + 1);
	fprintf(fp, "\n");
}

/*
 * Walk the node enode covering [min, max], in order, as mt_dump_node()
 * does: slot i covers [pivot[i-1] + 1, pivot[i]]; the last slot ends at
 * max; a zero pivot after the first, or a pivot reaching max, ends the
 * node's data.
 */
static void pfs_maple_node(struct pfs_vma_walk *w, ulong enode, ulong min, ulong max, int depth)
{
	unsigned char buf[PFS_MAPLE_NODE_SIZE];
	ulong node = enode & ~PFS_MAPLE_NODE_MASK, first = min, *pivot, *slot;
	int type = (enode >> PFS_MAPLE_TYPE_SHIFT) & PFS_MAPLE_TYPE_MASK, nslots, i;

	if (depth > PFS_MAPLE_HEIGHT_MAX) {
		if (w->print)
			fprintf(fp, "pfvma: maple tree deeper than %d at node %lx\n", PFS_MAPLE_HEIGHT_MAX, node);
		w->bad++;
		return;
	}
	if (!readmem(node, KVADDR, buf, sizeof(buf), "maple_node", RETURN_ON_ERROR)) {
		if (w->print)
			fprintf(fp, "pfvma: cannot read maple node %lx\n", node);
		w->bad++;
		return;
	}
	w->nodes++;
	switch (type) {
	case pfs_maple_leaf_64:
	case pfs_maple_range_64:
		pivot = (ulong *)(buf + moff.r64_pivot);
		slot = (ulong *)(buf + moff.r64_slot);
		nslots = PFS_RANGE64_SLOTS;
		break;
	case pfs_maple_arange_64:
		pivot = (ulong *)(buf + moff.a64_pivot);
		slot = (ulong *)(buf + moff.a64_slot);
		nslots = PFS_ARANGE64_SLOTS;
		break;
	default:
		if (w->print)
			fprintf(fp, "pfvma: maple node %lx has type %d (dense): not a VMA tree\n", node, type);
		w->bad++;
		return;
	}
	for (i = 0; i < nslots; i++) {
		ulong last = max;

		if (i < nslots - 1)
			last = pivot[i];
		else if (!slot[i])	/* range_64's last slot may hold the metadata */
			break;
		if (last == 0 && i > 0)
			break;
		if (last < first || last > max) {
			if (w->print)
				fprintf(fp, "pfvma: maple node %lx pivot %d = %lx outside [%lx, %lx]\n",
				node, i, last, first, max);
			w->bad++;
			break;
		}
		if (type == pfs_maple_leaf_64)
			pfs_vma_entry(w, slot[i], first, last);
		else if (slot[i])
			pfs_maple_node(w, slot[i], first, last, depth + 1);
		if (last == max)
			break;
		first = last + 1;
	}
}

static void cmd_pfvma(void)
{
	struct pfs_find f;
	struct pfs_vma_walk w;
	ulong root;
	uint flags;

	if (argcnt != 2) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_offsets() || !pfs_vma_offsets())
		return;
	if (!pfs_lookup(args[1], &f, "pfvma"))
		return;
	memset(&w, 0, sizeof(w));
	w.t = &f.found;
	readmem(f.found.mm + moff.mm_mt + moff.mt_root, KVADDR, &root, sizeof(root),
		"mm_struct mm_mt.ma_root", FAULT_ON_ERROR);
	readmem(f.found.mm + moff.mm_mt + moff.mt_flags, KVADDR, &flags, sizeof(flags),
		"mm_struct mm_mt.ma_flags", FAULT_ON_ERROR);
	if (moff.mm_brk >= 0)
		readmem(f.found.mm + moff.mm_brk, KVADDR, &w.brk, sizeof(ulong), "brk", RETURN_ON_ERROR);
	if (moff.mm_start_brk >= 0)
		readmem(f.found.mm + moff.mm_start_brk, KVADDR, &w.start_brk, sizeof(ulong),
			"start_brk", RETURN_ON_ERROR);
	if (moff.mm_start_stack >= 0)
		readmem(f.found.mm + moff.mm_start_stack, KVADDR, &w.start_stack, sizeof(ulong),
			"start_stack", RETURN_ON_ERROR);
	for (w.print = 0; w.print < 2; w.print++) {
		if (w.print) {
			fprintf(fp, "pid %d (%s) mm %lx: %ld vmas, maple tree height %u, %ld nodes",
				f.found.pid, f.found.comm, f.found.mm, w.vmas,
				(flags & PFS_MT_HEIGHT_MASK) >> PFS_MT_HEIGHT_OFFSET, w.nodes);
			if (w.bad)
				fprintf(fp, ", %ld inconsistencies (marked !!)", w.bad);
			fprintf(fp, "\n%-25s  %-5s  %-8s  %-7s  %-16s  %s\n",
				"START-END", "PERMS", "PGOFF", "KIND", "VMA", "NAME");
			w.nodes = w.vmas = w.bad = 0;
			w.last_end = 0;
		}
		if (root > PFS_MAPLE_RESERVED && (root & 3) == PFS_MAPLE_ROOT_NODE)
			pfs_maple_node(&w, root & ~PFS_MAPLE_ROOT_NODE, 0, ~0UL, 1);
		else if (root)		/* a single entry at index 0, no node */
			pfs_vma_entry(&w, root, 0, 0);
	}
	/* get_gate_vma(): unless vsyscall=none (enum value 2) */
	if (moff.gate_vma && symbol_exists("vsyscall_mode")) {
		int mode = 2;
		ulong s = 0, e = 0;

		readmem(symbol_value("vsyscall_mode"), KVADDR, &mode, sizeof(mode),
			"vsyscall_mode", RETURN_ON_ERROR);
		readmem(moff.gate_vma + moff.vm_start, KVADDR, &s, sizeof(s), "gate_vma", RETURN_ON_ERROR);
		readmem(moff.gate_vma + moff.vm_end, KVADDR, &e, sizeof(e), "gate_vma", RETURN_ON_ERROR);
		if (mode != 2 && e > s) {
			w.last_end = 0;
			pfs_vma_entry(&w, moff.gate_vma, s, e - 1);
		}
	}
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
