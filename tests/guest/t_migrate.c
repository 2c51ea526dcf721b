// SPDX-License-Identifier: GPL-2.0
/*
 * Migration and NUMA hinting racing anonymous faults (two nodes: every test
 * boot has numa=fake=2; a guest with one node is a failure, not a skip).
 *
 * One 2 MiB-aligned region of 512 pages (one PTE table maps it all,
 * MADV_NOHUGEPAGE, PROT_NONE guard pages so smaps has its own entry) is
 * raced in three parts, each in a forked child:
 *
 * 1. move_pages(): a migrator moves the region, a quarter per call, to
 *    node 1, then back to node 0, and so on (the raw syscall; it asks
 *    first where each page is, and counts the pages that were on the other
 *    node and whose status then says the target node), so
 *    try_to_migrate_one() parks the PTEs of present pages and
 *    remove_migration_pte() sets them again while faults install
 *    neighbouring PTEs of the same table.
 * 2. compaction: a compactor writes 1 to /proc/sys/vm/compact_memory in a
 *    loop, and compares the PFNs of the never-zapped half of the region
 *    before and after each pass: the pages compaction moved under the
 *    writers. After REPLACE_AFTER passes that moved none of them, it moves
 *    them to the other node (between passes, so that is not counted), for
 *    a new place below where compaction's scanners meet.
 * 3. NUMA hinting: numa_balancing on, its scanner made fast (debugfs
 *    sched/numa_balancing/: scan_delay_ms 0, scan_period_min_ms 10,
 *    scan_period_max_ms 100, scan_size_mb 64), so change_pte_range() makes
 *    the region's PTEs PROT_NONE (ptep_modify_prot_start/commit) and
 *    do_numa_page() restores them (and migrates misplaced pages) while
 *    faults install neighbouring PTEs. The writers' hinting faults are
 *    read from /proc/self/task/TID/sched (total_numa_faults: counted by
 *    task_numa_fault(), which only do_numa_page() calls for small pages;
 *    mm->numa_scan_seq: full scans of the address space made). The scan
 *    flushes the TLB once, after the range: writers that kept their TLB
 *    entries would write through them and never fault on a PTE the scan
 *    has in hand, so here they flush their own every FLUSH_EVERY pages
 *    (tlb_flushers_start(), common.h).
 *
 * In each part 2 x CPUs writer threads, pinned round-robin to the CPUs (so
 * that pages are faulted on, and accessed from, both nodes), make passes
 * over the region: for every page an atomic exchange into the writer's own
 * 8-byte slot (a write access first, so that a zapped page comes back
 * through the write fault, not the zero page; it returns what the slot
 * held), then a read-back. A zapper thread MADV_DONTNEEDs the first two of
 * the region's four 128-page chunks in turn, so that faults keep
 * installing fresh pages next to the pages being migrated; the other two
 * chunks are never zapped. A slot may hold 0 instead of its writer's
 * previous value (or read back 0 after the write) only in a zapped chunk
 * and only if a zap of that chunk began after the write was made (t_zap's
 * zap generations, per chunk); anything else is a lost write. NUMA
 * balancing is off in parts 1 and 2 (their migrations are the migrator's
 * and compaction's), on in part 3.
 *
 * Each part: content (no write lost while racing, nor in a last read of
 * every slot once the other threads have stopped), smaps Rss == pagemap
 * after quiesce, evidence that the race was offered (counts that must be
 * > 0; the part races at least MIN_SECS, part 3 NUMA_MIN_SECS: a scan
 * holds each PTE only for a moment, every few hundred ms; and until they
 * are, at most RACE_SECS: "too little work done" fails), and the leak
 * checks of leak_watch_run()/leak_watch_check(). Where the kernel has VM event
 * counters (CONFIG_VM_EVENT_COUNTERS), their /proc/vmstat deltas
 * (pgmigrate_success; compact_migrate_scanned, compact_isolated;
 * numa_pte_updates, numa_hint_faults) must be > 0 too; the test kernel
 * (tinyconfig based) has none, and the check text says so. Every knob
 * changed is restored at the end, and checked.
 *
 * Under TCG on a small host every TLB shootdown waits for descheduled
 * vCPUs: a 128-page DONTNEED or a 128-page move_pages() takes tens to
 * hundreds of milliseconds while the writers run, so the counts are small.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include "common.h"

#define PAGES 512
#define CHUNKS 4
#define CHUNK (PAGES / CHUNKS)
#define ZAPPED 2		/* chunks 0 .. ZAPPED-1 get MADV_DONTNEED */
#define MOVE CHUNK		/* pages per move_pages() call */
#define MIN_SECS 3		/* each part races at least this long */
#define NUMA_MIN_SECS 10	/* part 3 races at least this long */
#define RACE_SECS 15		/* and at most this long for its evidence */
#define REPLACE_AFTER 4		/* part 2: passes that moved nothing, then move the region */
#define MAX_WRITERS 64
#define MAX_CPUS 64
#define FLUSH_EVERY 16		/* part 3: pages a writer writes between TLB flushes */

#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

#define NODE_SYS "/sys/devices/system/node"
#define CPU_SYS "/sys/devices/system/cpu"
#define NUMA_BALANCING "/proc/sys/kernel/numa_balancing"
#define NUMA_DEBUGFS "/sys/kernel/debug/sched/numa_balancing/"
#define COMPACT_MEMORY "/proc/sys/vm/compact_memory"

enum { MOVE_PAGES, COMPACTION, NUMA_HINTING, NPARTS };
static const char *const part_name[NPARTS] = { "move_pages", "compaction", "NUMA hinting" };
/*
 * The parking site (parked_by_*) whose park each part's faults must meet:
 * try_to_migrate_one() for move_pages() and compaction,
 * ptep_modify_prot_start() (change_pte_range(), do_numa_page()) for NUMA
 * hinting. Not "a fault met some park": reclaim or COW would count there.
 */
static const char *const part_site[NPARTS] = {
	"parked_by_migrate", "parked_by_migrate", "parked_by_modify_prot"
};

/* /proc/vmstat event counters (CONFIG_VM_EVENT_COUNTERS) each part follows. */
enum { V_PGMIGRATE, V_MIGRATE_SCANNED, V_ISOLATED, V_PTE_UPDATES, V_HINT_FAULTS, NVMSTAT };
static const char *const vmstat_name[NVMSTAT] = {
	"pgmigrate_success", "compact_migrate_scanned", "compact_isolated",
	"numa_pte_updates", "numa_hint_faults",
};

/* A "name value" line's value from text @buf (-1 if missing). */
static long long field(const char *buf, const char *name, const char *sep)
{
	size_t n = strlen(name), m = strlen(sep);
	const char *p = buf;

	while (p && *p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, name, n) && !strncmp(p + n, sep, m)) {
			p += n + m;
			while (*p == ' ' || *p == ':')
				p++;
			return atoll(p);
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* Everything a part's child found, in memory shared with the parent. */
struct result {
	struct slot_race_result o;
	int vm_events;
	long long moved, calls, stable_moved, replaced;
	long long hint_faults, scan_seq, numa_migrated, tlb_flushes, tlb_misses;
	long long site_busy;	/* faults that met a park of part_site[part] */
	long long vm[NVMSTAT];
	double call_max;
};

static struct result *res;
static int part;
static char *base;
static struct slot_race race;

/*
 * Part 1: the region to node 1, then 0, ..., MOVE pages per call; counts
 * the pages that were on the other node and whose status then says the
 * target node.
 */
static void *migrator(void *p)
{
	static void *pages[MOVE];
	static int nodes[MOVE], where[MOVE], status[MOVE];
	long i, first = 0;
	int target = 0;
	double t;

	(void)p;
	while (!race.stop) {
		if (first == 0)
			target = !target;
		for (i = 0; i < MOVE; i++) {
			pages[i] = base + (first + i) * PAGE;
			nodes[i] = target;
			where[i] = status[i] = -1000;
		}
		/* Where each page is now (< 0: not present, or the zero page). */
		syscall(SYS_move_pages, 0, MOVE, pages, NULL, where, 0);
		/* A positive return: pages not moved; later statuses may be unset. */
		t = now();
		syscall(SYS_move_pages, 0, MOVE, pages, nodes, status, MPOL_MF_MOVE);
		t = now() - t;
		if (t > res->call_max)
			res->call_max = t;
		res->calls++;
		for (i = 0; i < MOVE; i++)
			if (where[i] >= 0 && where[i] != target && status[i] == target)
				res->moved++;
		first = (first + MOVE) % PAGES;
	}
	return NULL;
}

/* PFNs of the never-zapped chunks (0: not present). */
static void stable_pfns(uint64_t *pfn)
{
	static uint64_t e[PAGES];
	long n = PAGES - ZAPPED * CHUNK, i;
	int fd = open("/proc/self/pagemap", O_RDONLY);
	off_t off = ((uintptr_t)base / PAGE + ZAPPED * CHUNK) * 8;

	if (fd < 0 || pread(fd, e, n * 8, off) != (ssize_t)(n * 8))
		tap_bail("pagemap");
	close(fd);
	for (i = 0; i < n; i++)
		pfn[i] = (e[i] & PM_PRESENT) ? e[i] & PM_PFN : 0;
}

/*
 * Move the never-zapped chunks to the other node: compaction moves only the
 * pages below where its two scanners meet, and a region placed above that
 * point is never moved (seen: 35 passes, 0 pages). A new place is a new
 * chance; the contents move with the pages.
 */
static void replace_stable(void)
{
	static void *pages[PAGES];
	static int nodes[PAGES], status[PAGES];
	long n = PAGES - ZAPPED * CHUNK, i;

	for (i = 0; i < n; i++)
		pages[i] = base + (ZAPPED * CHUNK + i) * PAGE;
	syscall(SYS_move_pages, 0, 1, pages, NULL, status, 0);
	for (i = 0; i < n; i++)
		nodes[i] = status[0] == 0;
	syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
	res->replaced++;
}

/* Part 2: compact all memory, again and again. */
static void *compactor(void *p)
{
	static uint64_t before[PAGES], after[PAGES];
	int fruitless = 0;
	double t;
	long i;

	(void)p;
	while (!race.stop) {
		if (fruitless == REPLACE_AFTER) {
			replace_stable();
			fruitless = 0;
		}
		stable_pfns(before);
		t = now();
		if (write_file(COMPACT_MEMORY, "1"))
			tap_bail("write " COMPACT_MEMORY);
		t = now() - t;
		if (t > res->call_max)
			res->call_max = t;
		res->calls++;
		stable_pfns(after);
		if (!res->stable_moved)
			fruitless++;
		for (i = 0; i < PAGES - ZAPPED * CHUNK; i++)
			if (before[i] && after[i] && before[i] != after[i])
				res->stable_moved++;
	}
	return NULL;
}

/*
 * Part 3: the writers' NUMA hinting faults so far (total_numa_faults,
 * summed), pages they migrated, and the mm's full scans, from their
 * /proc/self/task/TID/sched. total_numa_faults is decayed at each scan,
 * so the caller keeps the largest sum seen.
 */
static void numa_stats(const struct result *r, long long *faults, long long *migrated,
		       long long *seq)
{
	static char buf[8192];
	char path[64];
	long long v;
	int k;

	*faults = *migrated = *seq = 0;
	for (k = 0; k < r->o.nwriters; k++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/sched", race.tid[k]);
		if (!race.tid[k] || slurp(path, buf, sizeof(buf)) < 0)
			continue;
		if ((v = field(buf, "total_numa_faults", " ")) > 0)
			*faults += v;
		if ((v = field(buf, "numa_pages_migrated", " ")) > 0)
			*migrated += v;
		if ((v = field(buf, "mm->numa_scan_seq", " ")) > *seq)
			*seq = v;
	}
}

static void vm_deltas(const long long *v0, long long *d)
{
	int k;

	for (k = 0; k < NVMSTAT; k++)
		d[k] = v0[k] < 0 ? -1 : vmstat_value(vmstat_name[k]) - v0[k];
}

/* Has the part shown the race it is about? */
static int evidence(const struct result *r)
{
	const long long *d = r->vm;
	int vm = r->vm_events;

	if (r->o.zeros == 0)
		return 0;
	/* A fault met this part's park (-1: a kernel without parking sites). */
	if (r->site_busy == 0)
		return 0;
	switch (part) {
	case MOVE_PAGES:
		return r->moved > 0 && (!vm || d[V_PGMIGRATE] > 0);
	case COMPACTION:
		return r->stable_moved > 0 &&
		       (!vm || (d[V_MIGRATE_SCANNED] > 0 && d[V_ISOLATED] > 0 && d[V_PGMIGRATE] > 0));
	default:
		return r->hint_faults > 0 && r->scan_seq > 0 && r->tlb_flushes > 0 &&
		       (!vm || (d[V_PTE_UPDATES] > 0 && d[V_HINT_FAULTS] > 0));
	}
}

static void race_child(void *arg)
{
	struct result *r = arg;
	void *(*other)(void *) = part == MOVE_PAGES ? migrator :
				 part == COMPACTION ? compactor : NULL;
	long long v0[NVMSTAT], f, m, s;
	struct slot_race_mark mark;
	pthread_t z, o;
	struct tlb_flushers flushers = { 0 };
	double t0;
	int k;

	res = r;
	if (part == NUMA_HINTING)
		tlb_flushers_start(&flushers);
	/* Compaction moves pages up, from below where its scanners meet: start low. */
	if (part == COMPACTION && write_file(COMPACT_MEMORY, "1"))
		tap_bail("write " COMPACT_MEMORY);
	base = map_one_table();
	for (k = 0; k < NVMSTAT; k++)
		v0[k] = vmstat_value(vmstat_name[k]);
	r->vm_events = v0[V_PGMIGRATE] >= 0;
	race.base = base;
	race.pages = PAGES;
	race.chunks = CHUNKS;
	race.zappable = ZAPPED;
	/* Part 3: walk the tables, do not write through the TLB. */
	race.flush_every = part == NUMA_HINTING ? FLUSH_EVERY : 0;
	slot_race_mark(&mark);
	t0 = mark.t0;
	slot_race_start(&race, r->o.nwriters);
	if (pthread_create(&z, NULL, slot_race_chunk_zapper, &race) ||
	    (other && pthread_create(&o, NULL, other, NULL)))
		tap_bail("pthread_create");
	for (;;) {
		usleep(100 * 1000);
		vm_deltas(v0, r->vm);
		r->o.zeros = race.zeros;
		r->o.zaps = race.zaps;
		r->tlb_flushes = flushers.flushes;
		r->o.busy = parked_busy(&mark.parked);
		r->site_busy = parked_since(&mark.parked.sites, part_site[part]);
		if (part == NUMA_HINTING) {
			numa_stats(r, &f, &m, &s);
			if (f > r->hint_faults)
				r->hint_faults = f;
			if (m > r->numa_migrated)
				r->numa_migrated = m;
			if (s > r->scan_seq)
				r->scan_seq = s;
		}
		if (now() - t0 >= RACE_SECS ||
		    (now() - t0 >= fixed_secs(part == NUMA_HINTING ? NUMA_MIN_SECS : MIN_SECS) && evidence(r)))
			break;
	}
	race.stop = 1;
	pthread_join(z, NULL);
	if (other)
		pthread_join(o, NULL);
	slot_race_finish(&race);
	/* The mm's RSS counters, while its threads are gone, against its tables. */
	rss_agree_check(part_name[part]);
	r->tlb_flushes = flushers.flushes;
	r->tlb_misses = flushers.misses;
	tlb_flushers_stop(&flushers);
	vm_deltas(v0, r->vm);
	slot_race_collect(&race, &mark, &r->o);
}

/* Knobs this test changes, with the values they had, for the end. */
struct knob {
	const char *path;
	char saved[64];
	int changed;
};

enum { K_BALANCING, K_DELAY, K_PERIOD_MIN, K_PERIOD_MAX, K_SIZE, NKNOBS };
static struct knob knobs[NKNOBS] = {
	[K_BALANCING] = { .path = NUMA_BALANCING },
	[K_DELAY] = { .path = NUMA_DEBUGFS "scan_delay_ms" },
	[K_PERIOD_MIN] = { .path = NUMA_DEBUGFS "scan_period_min_ms" },
	[K_PERIOD_MAX] = { .path = NUMA_DEBUGFS "scan_period_max_ms" },
	[K_SIZE] = { .path = NUMA_DEBUGFS "scan_size_mb" },
};
static pid_t main_pid;

static void chomp(char *s)
{
	char *nl = strchr(s, '\n');

	if (nl)
		*nl = 0;
}

/* Knob @k to @val (its old value saved the first time), or bail out. */
static void set_knob(int k, const char *val)
{
	struct knob *kn = &knobs[k];
	int err;

	if (!kn->changed) {
		if (read_file(kn->path, kn->saved, sizeof(kn->saved)) < 0)
			tap_bail(kn->path);
		chomp(kn->saved);
		kn->changed = 1;
	}
	err = write_file(kn->path, val);
	if (err) {
		errno = -err;
		tap_bail(kn->path);
	}
}

/* Every changed knob back; the number that do not read back as saved. */
static int restore_knobs(void)
{
	char val[64];
	int k, wrong = 0;

	if (getpid() != main_pid)
		return 0;
	for (k = 0; k < NKNOBS; k++) {
		if (!knobs[k].changed)
			continue;
		write_file(knobs[k].path, knobs[k].saved);
		read_file(knobs[k].path, val, sizeof(val));
		chomp(val);
		if (strcmp(val, knobs[k].saved)) {
			tap_diag("%s: %s, was %s", knobs[k].path, val, knobs[k].saved);
			wrong++;
		}
		knobs[k].changed = 0;
	}
	return wrong;
}

static void restore_at_exit(void)
{
	restore_knobs();
}

/*
 * Nodes 0 and 1 online, each with memory and a CPU? The CPUs of each node
 * into @cpul from the cpuN/nodeM links (with numa=fake each fake node's
 * cpulist lists every CPU of its physical node, all of them here).
 */
static int two_nodes(char cpul[2][128], char *online, size_t len)
{
	char path[128];
	long cpu, n = sysconf(_SC_NPROCESSORS_CONF);
	int k, cpus_on[2] = { 0, 0 };

	if (read_file(NODE_SYS "/online", online, len) < 0)
		strcpy(online, "(none)");
	chomp(online);
	for (k = 0; k < 2; k++)
		cpul[k][0] = 0;
	for (cpu = 0; cpu < n && cpu < MAX_CPUS; cpu++)
		for (k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), CPU_SYS "/cpu%ld/node%d", cpu, k);
			if (access(path, F_OK))
				continue;
			snprintf(cpul[k] + strlen(cpul[k]), 128 - strlen(cpul[k]), "%s%ld",
				 cpus_on[k]++ ? "," : "", cpu);
		}
	for (k = 0; k < 2; k++)
		if (!cpus_on[k])
			strcpy(cpul[k], "none");
	return access(NODE_SYS "/node1", F_OK) == 0 && cpus_on[0] && cpus_on[1] &&
	       (!strncmp(online, "0-", 2) || !strncmp(online, "0,1", 3));
}

/* The part's checks, from its result @r and leak watch @w. */
static void report(int status, struct result *r, struct leak_watch *w)
{
	const char *name = part_name[part], *done;
	long long *d = r->vm;
	char vm[256] = "", site[96];
	int ok;

	slot_race_check(name, status, &r->o);
	ok = r->o.done && evidence(r);
	done = ok ? "" : ": too little work done";
	if (r->site_busy < 0)
		snprintf(site, sizeof(site), "no parking sites counted in this kernel");
	else
		snprintf(site, sizeof(site), "%lld faults met a PTE its site parked (%s)", r->site_busy,
			 part_site[part]);
	if (!r->vm_events)
		snprintf(vm, sizeof(vm), "; no VM event counters in this kernel");
	else if (part == MOVE_PAGES)
		snprintf(vm, sizeof(vm), "; pgmigrate_success +%lld", d[V_PGMIGRATE]);
	else if (part == COMPACTION)
		snprintf(vm, sizeof(vm), "; compact_migrate_scanned +%lld, compact_isolated +%lld, pgmigrate_success +%lld",
			 d[V_MIGRATE_SCANNED], d[V_ISOLATED], d[V_PGMIGRATE]);
	else
		snprintf(vm, sizeof(vm), "; numa_pte_updates +%lld, numa_hint_faults +%lld",
			 d[V_PTE_UPDATES], d[V_HINT_FAULTS]);
	switch (part) {
	case MOVE_PAGES:
		tap_check(ok, "%s: race offered: %lld pages moved between the nodes by %lld calls (status == target; longest %.2f s), %s, %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->moved, r->calls, r->call_max, site, r->o.zeros, r->o.zaps, r->o.minflt,
			  vm, done);
		break;
	case COMPACTION:
		tap_check(ok, "%s: race offered: %lld compact_memory passes (longest %.2f s) moved %lld never-zapped pages of the region (moved to the other node %lld times after %d passes that moved none), %s, %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->calls, r->call_max, r->stable_moved, r->replaced, REPLACE_AFTER, site, r->o.zeros, r->o.zaps,
			  r->o.minflt, vm, done);
		break;
	default:
		tap_check(ok, "%s: race offered: %lld NUMA hinting faults (total_numa_faults), %lld full scans (numa_scan_seq), %lld pages migrated, writers' TLB flushed %lld times (%lld yields without a flush), %s, %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->hint_faults, r->scan_seq, r->numa_migrated, r->tlb_flushes,
			  r->tlb_misses, site, r->o.zeros, r->o.zaps, r->o.minflt, vm, done);
	}
	leak_watch_check(w, name);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), status;
	char cpul[2][128], online[64];
	struct leak_watch w;
	struct result *r;

	tap_init(argv[0]);
	(void)argc;
	main_pid = getpid();
	if (n < 4)
		n = 4;
	if (n > MAX_WRITERS)
		n = MAX_WRITERS;
	if (!two_nodes(cpul, online, sizeof(online))) {
		tap_plan(1);
		tap_check(0, "two NUMA nodes (online: %s; node0 CPUs %s, node1 CPUs %s): the guest needs numa=fake=2 (qemu/boot.sh adds it for a kernel with CONFIG_NUMA_EMU)",
			  online, cpul[0], cpul[1]);
		return tap_exit();
	}
	/* Nodes; per part content, rss, evidence and the leak checks; knobs back. */
	tap_plan(1 + NPARTS * (4 + LEAK_CHECKS) + 1);
	tap_check(1, "two NUMA nodes (online: %s; node0 CPUs %s, node1 CPUs %s)",
		  online, cpul[0], cpul[1]);
	r = map_shared(sizeof(*r));
	atexit(restore_at_exit);

	for (part = 0; part < NPARTS; part++) {
		if (part == NUMA_HINTING) {
			/* Before the fork: a new mm's first scan waits scan_delay_ms. */
			set_knob(K_DELAY, "0");
			set_knob(K_PERIOD_MIN, "10");
			set_knob(K_PERIOD_MAX, "100");
			set_knob(K_SIZE, "64");
			set_knob(K_BALANCING, "1");
		} else {
			set_knob(K_BALANCING, "0");
		}
		memset(r, 0, sizeof(*r));
		r->o.nwriters = n;
		status = leak_watch_run(&w, race_child, r);
		report(status, r, &w);
	}
	status = restore_knobs();
	tap_check(status == 0, "numa_balancing and its debugfs scan knobs back to their values (%d not)",
		  status);
	return tap_exit();
}
