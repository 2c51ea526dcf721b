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
 *
 * crash 8.0.2 does not understand 6.1's task table (its ps shows only the
 * idle tasks, "vm PID" and "vtop -u" fail), so this extension finds tasks
 * itself: it walks init_task.tasks and each thread group's
 * signal->thread_head list with readmem(), using member offsets looked up
 * once from the kernel's debug info, and walks user page tables with
 * physical reads from mm->pgd.
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
	if (!symbol_exists("pfscale_counters") || !symbol_exists("pfscale_counter_desc")) {
		fprintf(fp, "pfcounters: kernel has no pfscale patches\n");
		return;
	}
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
	"  Walks the x86_64 4-level page tables of pid's mm, from mm->pgd, with",
	"  physical reads, over the user addresses [start, end) (hex), and",
	"  prints each run of virtually contiguous present pages:",
	"    START-END pages N",
	"  then the total. Huge PMD/PUD mappings count as their 4k pages. It",
	"  does not need crash's task table (vtop -u does, and fails on 6.1).",
	"\nEXAMPLE",
	"  %s> pfpte 70 400000 500000",
	"  400000-403000 pages 3",
	"  total 3",
	NULL
};

#define PFS_PRESENT	0x1UL
#define PFS_PSE		0x80UL
#define PFS_ADDR_MASK	0x000ffffffffff000UL

static ulong run_start, run_end, run_total;

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

static void cmd_pfpte(void)
{
	struct pfs_find f;
	ulong start, end, pgd, va;
	int err = 0;
	static const int shift[4] = { 39, 30, 21, 12 };

	if (argcnt != 4) {
		cmd_usage(pc->curcmd, SYNOPSIS);
		return;
	}
	if (!pfs_offsets())
		return;
	start = htol(args[2], RETURN_ON_ERROR | QUIET, &err);
	if (!err)
		end = htol(args[3], RETURN_ON_ERROR | QUIET, &err);
	if (err || start >= end || end > (1UL << 47)) {
		fprintf(fp, "pfpte: bad range %s %s (hex user addresses, start < end)\n",
			args[2], args[3]);
		return;
	}
	if (!pfs_lookup(args[1], &f, "pfpte"))
		return;
	readmem(f.found.mm + off.mm_pgd, KVADDR, &pgd, sizeof(ulong), "mm_struct pgd", FAULT_ON_ERROR);
	run_start = run_end = run_total = 0;
	va = start & ~0xfffUL;
	while (va < end) {
		ulong table = VTOP(pgd), e = 0;
		int level;

		for (level = 0; level < 4; level++) {
			ulong size = 1UL << shift[level];
			int idx = (va >> shift[level]) & 511;

			if (!pfs_entry(table, idx, &e) || !(e & PFS_PRESENT)) {
				va = (va & ~(size - 1)) + size;
				break;
			}
			if (level == 3 || (level > 0 && (e & PFS_PSE))) {
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
	fprintf(fp, "total %lu\n", run_total);
}

static struct command_table_entry command_table[] = {
	{ "pfcounters", cmd_pfcounters, help_pfcounters, 0 },
	{ "pfps", cmd_pfps, help_pfps, 0 },
	{ "pfrss", cmd_pfrss, help_pfrss, 0 },
	{ "pfpte", cmd_pfpte, help_pfpte, 0 },
	{ NULL }
};

void __attribute__((constructor)) pfscale_init(void)
{
	register_extension(command_table);
}

void __attribute__((destructor)) pfscale_fini(void) { }
