// SPDX-License-Identifier: GPL-2.0
/*
 * Page-table walkers that clear accessed bits, racing lockless anonymous
 * faults that install PTEs in the same tables: MGLRU aging, DAMON's vaddr
 * sampling and idle page tracking. They read PTEs under the PTE lock and
 * clear the young bit with ptep_test_and_clear_young(), an atomic bit
 * operation that leaves the PTE present; a lockless fault's cmpxchg from
 * none lands next to them in the same table, or in the entry they have
 * just read as none. design.md argued that this is safe ("configured but
 * not yet raced"); this test races it.
 *
 * One 2 MiB-aligned region of 512 pages (one PTE table maps it all,
 * MADV_NOHUGEPAGE, PROT_NONE guard pages so smaps has its own entry) is
 * raced in three parts, each in a forked child under the leak watch:
 *
 * 1. MGLRU aging (/sys/kernel/mm/lru_gen/enabled must show the core on,
 *    else the first check fails). The child moves itself, before it maps
 *    or starts anything, into a memory cgroup of its own (cg_dir below; the
 *    root's cgroup.subtree_control gets +memory if it has not), so its mm
 *    is the only one on that memcg's MGLRU mm list and the memcg's walk
 *    stats are its alone. An ager thread reads each node's max_seq of that
 *    memcg from /sys/kernel/debug/lru_gen and writes
 *    "+ memcg_id node_id max_seq 1 1" (can_swap 1: the anonymous VMAs are
 *    walked though swap may be off; force_scan 1), again and again:
 *    try_to_inc_max_seq() -> walk_mm() -> walk_pte_range() clears the
 *    young bits of the region's PTEs while faults install. Evidence: every
 *    node's max_seq advanced (N > 0 new generations each), and the memcg's
 *    mm walk stats in /sys/kernel/debug/lru_gen_full (the "LOYNFA" line of
 *    max_seq: without CONFIG_LRU_GEN_STATS one cumulative histogram) show
 *    leaf PTEs walked (L) and young PTEs found and cleared (Y) grown.
 * 2. DAMON vaddr, through its sysfs interface: one kdamond, one context,
 *    operations vaddr, one target (pid_target: the child), whose monitoring
 *    region is set to exactly the 2 MiB region (a user-set region is kept
 *    until the first update of the three regions, update_us 60 s away,
 *    longer than the race), sample_us 1000, aggr_us 10000, and one scheme
 *    with action "stat" for regions with nr_accesses >= 1. Each sample
 *    damon_va_mkold() (PTE lock, ptep_test_and_clear_young()) then
 *    damon_va_young() walk the region's table while faults install.
 *    Evidence: kdamond ran (its pid file nonzero while on); the stat
 *    scheme's stats (update_schemes_stats) show nr_tried and sz_tried > 0:
 *    aggregated regions (pieces of the 2 MiB) in which DAMON's samples
 *    found accesses; and pages of the region carry PG_idle
 *    (/proc/kpageflags KPF_IDLE), which in this part only
 *    damon_ptep_mkold() sets, right after its ptep_test_and_clear_young()
 *    on the page's PTE (a page keeps it until it is freed): DAMON's walk
 *    reached the region's own table. The child turns DAMON off at its
 *    end (kthread_stop() waits for kdamond); the parent sets nr_kdamonds
 *    back to 0 and checks both.
 * 3. Idle page tracking: an idler thread takes the region's PFNs from
 *    /proc/self/pagemap (the test runs as root), writes their bits to
 *    /sys/kernel/mm/page_idle/bitmap (an rmap walk per page:
 *    page_idle_clear_pte_refs() -> ptep_clear_young_notify(), then the
 *    page's idle flag), sees the flag in /proc/kpageflags (KPF_IDLE), and
 *    reads the bits back a little later (another rmap walk: a young PTE
 *    clears the idle flag again). Evidence: pages marked idle (KPF_IDLE
 *    right after the write) > 0, and pages of the never-zapped chunks
 *    found accessed again (bit read back 0, the page still at the same
 *    PFN; a refaulted page in an LRU-add batch would read 0 unwalked)
 *    > 0, with no bitmap read or write failing. (The 64-PFN word that
 *    holds max_pfn - 1, when max_pfn is not a multiple of 64, is processed
 *    but counted 0 bytes by page_idle.c: a short count, its bits read back
 *    unknown, not used.)
 *
 * In each part 2 x CPUs writer threads, pinned round-robin to the CPUs,
 * make passes over the region: for every page an atomic exchange into the
 * writer's own 8-byte slot (a write access first, so that a zapped page
 * comes back through the write fault, not the zero page; it returns what
 * the slot held), then a read-back. A zapper thread MADV_DONTNEEDs the
 * first two of the region's four 128-page chunks in turn, so that faults
 * keep installing fresh PTEs next to the ones being aged; the other two
 * chunks are never zapped. A slot may hold 0 instead of its writer's
 * previous value (or read back 0 after the write) only in a zapped chunk
 * and only if a zap of that chunk began after the write was made (t_zap's
 * zap generations, per chunk, as in t_migrate); anything else is a lost
 * write.
 *
 * Each part: content (no write lost while racing, nor in a last read of
 * every slot once the other threads and the walker have stopped), smaps
 * Rss == pagemap after quiesce, evidence that the race was offered (the
 * counts above, and writes that met a fresh page after a zap, all > 0; the
 * part races at least MIN_SECS and until they are, at most RACE_SECS: "too
 * little work done" fails), and the leak checks of
 * leak_watch_run()/leak_watch_check(); a diagnostic gives the fault path
 * and the faults that met a parked PTE (busy_pte_fault). Every knob
 * changed is put back at the end, and checked: the memory cgroup removed
 * and the root's subtree_control as it was; DAMON off, nr_kdamonds 0.
 */
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "common.h"

#define PAGES 512
#define CHUNKS 4
#define CHUNK (PAGES / CHUNKS)
#define ZAPPED 2		/* chunks 0 .. ZAPPED-1 get MADV_DONTNEED */
#define MIN_SECS 3		/* each part races at least this long */
#define RACE_SECS 15		/* and at most this long for its evidence */
#define MAX_WRITERS 64
#define MAX_NODES 8
#define AGE_US 2000		/* the ager's pause between rounds */
#define IDLE_GAP_US 500		/* the idler's pause between mark and read back */

#define LRU_GEN_ENABLED "/sys/kernel/mm/lru_gen/enabled"
#define LRU_GEN "/sys/kernel/debug/lru_gen"
#define LRU_GEN_FULL "/sys/kernel/debug/lru_gen_full"
#define CGROOT "/sys/fs/cgroup"
/*
 * The memory cgroup of part 1: CGROOT "/pfscale-t_aging.PID" (PID: the
 * main process's). A name of its own per run, since a removed memcg may
 * linger offline, still listed in lru_gen under its old path.
 */
static char cg_name[64], cg_dir[128];
#define DAMON "/sys/kernel/mm/damon/admin/kdamonds/"
#define DCTX DAMON "0/contexts/0/"
#define PAGE_IDLE "/sys/kernel/mm/page_idle/bitmap"
#define KPF_IDLE 25

enum { MGLRU, DAMON_VADDR, IDLE, NPARTS };
static const char *const part_name[NPARTS] = { "MGLRU aging", "DAMON vaddr", "idle page tracking" };

/* The "LOYNFA" mm walk stats of lru_gen_full. */
enum { S_LEAF, S_OLD, S_YOUNG, S_NONLEAF, S_FOUND, S_ADDED, NSTATS };

/* One node of a memcg in lru_gen / lru_gen_full. */
struct lru_node {
	int nid, has_stats;
	unsigned long long max_seq;
	unsigned long long st[NSTATS];
};

/* Everything a part's child found, in memory shared with the parent. */
struct result {
	struct slot_race_result o;
	char why[256];		/* why the walker could not be set up */
	/* MGLRU */
	int memcg_id, nnodes, has_stats;
	int nid[MAX_NODES];
	long long adv[MAX_NODES];	/* max_seq advances per node */
	long long st[NSTATS];		/* stats deltas, all nodes */
	long long agings, aging_err, last_err;
	/* DAMON */
	int damon_touched, kdamond_pid;
	long long nr_tried, sz_tried, updates, idle_max, idle_looks;
	char state_after[16];
	/* idle page tracking */
	long long idle_rounds, idle_pfns, marked, still_idle, accessed, idle_err, idle_short;
};

static struct result *res;
static int part;
static char *base;
static struct slot_race race;

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = 0;
}

/* Note the first reason the part's walker could not run. */
static void why(const char *fmt, const char *what, int err)
{
	if (res->why[0])
		return;
	snprintf(res->why, sizeof(res->why), fmt, what, strerror(err));
}

/*
 * Part 1. The nodes of memcg @path in @buf, a read of lru_gen (@full 0:
 * max_seq is each node's last generation line) or lru_gen_full (@full 1:
 * the "LOYNFA" stats line, printed for max_seq only). Sets *@id to the
 * memcg's id; returns the number of nodes (-1: no such memcg).
 */
static int lru_gen_parse(char *buf, const char *path, int *id, struct lru_node *nodes,
			 int full)
{
	char *line, *save = NULL, p[256], c[NSTATS];
	unsigned long long v[NSTATS], seq;
	int in = 0, n = 0, found = 0, k, nid, mid;
	unsigned int age;

	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "memcg %d %255s", &mid, p) == 2) {
			in = !strcmp(p, path);
			if (in) {
				*id = mid;
				found = 1;
				n = 0;	/* the last one listed under the path */
			}
			continue;
		}
		if (!in)
			continue;
		if (sscanf(line, " node %d", &nid) == 1) {
			if (n == MAX_NODES)
				break;
			memset(&nodes[n], 0, sizeof(nodes[n]));
			nodes[n++].nid = nid;
			continue;
		}
		if (!n)
			continue;
		if (full) {
			if (sscanf(line, " %llu%c %llu%c %llu%c %llu%c %llu%c %llu%c", &v[0], &c[0],
				   &v[1], &c[1], &v[2], &c[2], &v[3], &c[3], &v[4], &c[4], &v[5],
				   &c[5]) == 2 * NSTATS && !strncmp(c, "LOYNFA", NSTATS)) {
				for (k = 0; k < NSTATS; k++)
					nodes[n - 1].st[k] = v[k];
				nodes[n - 1].has_stats = 1;
			}
		} else if (sscanf(line, " %llu %u", &seq, &age) == 2) {
			nodes[n - 1].max_seq = seq;
		}
	}
	return found ? n : -1;
}

/*
 * The memcg's nodes from lru_gen (@full 0) or lru_gen_full (@full 1), read
 * into @buf of @len bytes (each thread its own).
 */
static int lru_gen_read(char *buf, size_t len, struct lru_node *nodes, int *id, int full)
{
	char path[80];

	if (slurp(full ? LRU_GEN_FULL : LRU_GEN, buf, len) < 0)
		return -1;
	snprintf(path, sizeof(path), "/%s", cg_name);
	return lru_gen_parse(buf, path, id, nodes, full);
}

#define LRU_BUF (256 * 1024)
static char main_buf[LRU_BUF], ager_buf[LRU_BUF];

static struct lru_node seq0[MAX_NODES], stat0[MAX_NODES];
static int nstat0;

/* Aging: a new generation on every node of the memcg, again and again. */
static void *ager(void *p)
{
	struct lru_node nodes[MAX_NODES];
	char cmd[128];
	int n, k, id, err;

	(void)p;
	while (!race.stop) {
		n = lru_gen_read(ager_buf, LRU_BUF, nodes, &id, 0);
		for (k = 0; k < n && !race.stop; k++) {
			snprintf(cmd, sizeof(cmd), "+ %d %d %llu 1 1", id, nodes[k].nid,
				 nodes[k].max_seq);
			err = write_file(LRU_GEN, cmd);
			res->agings++;
			if (err) {
				res->aging_err++;
				res->last_err = -err;
			}
		}
		usleep(AGE_US);
	}
	return NULL;
}

/* The memcg's max_seq advances and stats deltas since the start. */
static void mglru_sample(struct result *r)
{
	struct lru_node nodes[MAX_NODES];
	int n, k, j, i, id;

	n = lru_gen_read(main_buf, LRU_BUF, nodes, &id, 0);
	for (k = 0; k < n; k++)
		for (j = 0; j < r->nnodes; j++)
			if (seq0[j].nid == nodes[k].nid)
				r->adv[j] = nodes[k].max_seq - seq0[j].max_seq;
	n = lru_gen_read(main_buf, LRU_BUF, nodes, &id, 1);
	memset(r->st, 0, sizeof(r->st));
	r->has_stats = n > 0;
	for (k = 0; k < n; k++) {
		if (!nodes[k].has_stats)
			r->has_stats = 0;
		for (j = 0; j < nstat0 && stat0[j].nid != nodes[k].nid; j++)
			;
		for (i = 0; i < NSTATS; i++)
			r->st[i] += nodes[k].st[i] - (j < nstat0 ? stat0[j].st[i] : 0);
	}
}

/* Into cg_dir, and the memcg's nodes and stats at the start; 1 if all there. */
static int mglru_setup(struct result *r)
{
	char pid[16], cg[128], procs[160];
	int k, id;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (access(cg_dir, F_OK)) {
		why("%s (made by the parent): %s", cg_dir, ENOENT);
		return 0;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_dir);
	k = write_file(procs, pid);
	if (k) {
		why("move into %s: %s", cg_dir, -k);
		return 0;
	}
	if (read_file("/proc/self/cgroup", cg, sizeof(cg)) < 0)
		strcpy(cg, "(unreadable)");
	chomp(cg);
	if (strncmp(cg, "0::/", 4) || strcmp(cg + 4, cg_name)) {
		snprintf(r->why, sizeof(r->why), "not moved into %s: /proc/self/cgroup \"%s\"",
			 cg_dir, cg);
		return 0;
	}
	r->nnodes = lru_gen_read(main_buf, LRU_BUF, seq0, &r->memcg_id, 0);
	nstat0 = lru_gen_read(main_buf, LRU_BUF, stat0, &id, 1);
	if (r->nnodes <= 0 || nstat0 != r->nnodes) {
		snprintf(r->why, sizeof(r->why), "memcg /%s not found in " LRU_GEN
			 " (%d nodes) or " LRU_GEN_FULL " (%d nodes)", cg_name, r->nnodes, nstat0);
		r->nnodes = 0;
		return 0;
	}
	for (k = 0; k < r->nnodes; k++)
		r->nid[k] = seq0[k].nid;
	return 1;
}

/*
 * Part 2. A DAMON sysfs file written; EBUSY (damon_sysfs_lock taken by a
 * reader or the kdamond's callback) is retried for a while.
 */
static int damon_write(const char *path, const char *val)
{
	double t0 = now();
	int err;

	while ((err = write_file(path, val)) == -EBUSY && now() - t0 < 5)
		usleep(10000);
	return err;
}

/* One kdamond monitoring exactly the region, with a stat scheme; on. */
static int damon_setup(struct result *r)
{
	char pid[16], start[32], end[32], cur[16];
	const char *set[][2] = {
		{ DAMON "nr_kdamonds", "1" },
		{ DAMON "0/contexts/nr_contexts", "1" },
		{ DCTX "operations", "vaddr" },
		{ DCTX "monitoring_attrs/intervals/sample_us", "1000" },
		{ DCTX "monitoring_attrs/intervals/aggr_us", "10000" },
		{ DCTX "monitoring_attrs/intervals/update_us", "60000000" },
		{ DCTX "targets/nr_targets", "1" },
		{ DCTX "targets/0/pid_target", pid },
		{ DCTX "targets/0/regions/nr_regions", "1" },
		{ DCTX "targets/0/regions/0/start", start },
		{ DCTX "targets/0/regions/0/end", end },
		{ DCTX "schemes/nr_schemes", "1" },
		{ DCTX "schemes/0/action", "stat" },
		{ DCTX "schemes/0/access_pattern/sz/min", "0" },
		{ DCTX "schemes/0/access_pattern/sz/max", "1099511627776" },
		{ DCTX "schemes/0/access_pattern/nr_accesses/min", "1" },
		{ DCTX "schemes/0/access_pattern/nr_accesses/max", "1000000" },
		{ DCTX "schemes/0/access_pattern/age/min", "0" },
		{ DCTX "schemes/0/access_pattern/age/max", "1000000000" },
		{ DAMON "0/state", "on" },
	};
	size_t k;
	int err;

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(start, sizeof(start), "%lu", (unsigned long)base);
	snprintf(end, sizeof(end), "%lu", (unsigned long)base + PAGES * PAGE);
	if (read_file(DAMON "nr_kdamonds", cur, sizeof(cur)) <= 0) {
		why("%s: %s", DAMON "nr_kdamonds", errno);
		return 0;
	}
	if (atoi(cur) != 0) {
		snprintf(r->why, sizeof(r->why), DAMON "nr_kdamonds is %d: DAMON in use", atoi(cur));
		return 0;
	}
	r->damon_touched = 1;
	for (k = 0; k < sizeof(set) / sizeof(set[0]); k++) {
		err = damon_write(set[k][0], set[k][1]);
		if (err) {
			snprintf(r->why, sizeof(r->why), "write %s to %s: %s", set[k][1], set[k][0],
				 strerror(-err));
			return 0;
		}
	}
	return 1;
}

/* Pages of the region whose flags show PG_idle (/proc/kpageflags). */
static long region_idle_pages(void)
{
	static uint64_t e[PAGES];
	uint64_t zero = zero_page_pfn(), f;
	int pm = open("/proc/self/pagemap", O_RDONLY), kpf = open("/proc/kpageflags", O_RDONLY);
	long i, n = -1;

	if (pm >= 0 && kpf >= 0 &&
	    pread(pm, e, sizeof(e), (uintptr_t)base / PAGE * 8) == (ssize_t)sizeof(e))
		for (i = 0, n = 0; i < PAGES; i++) {
			if (!(e[i] & PM_PRESENT) || (e[i] & PM_PFN) == zero)
				continue;
			f = 0;
			if (pread(kpf, &f, 8, (e[i] & PM_PFN) * 8) == 8 && (f & (1ULL << KPF_IDLE)))
				n++;
		}
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return n;
}

/*
 * The stat scheme's stats now, the kdamond's pid while on, and the pages
 * of the region DAMON has marked idle.
 */
static void damon_sample(struct result *r)
{
	long long pid, idle = region_idle_pages();

	r->idle_looks++;
	if (idle > r->idle_max)
		r->idle_max = idle;

	if (damon_write(DAMON "0/state", "update_schemes_stats"))
		return;
	r->updates++;
	r->nr_tried = read_number(DCTX "schemes/0/stats/nr_tried");
	r->sz_tried = read_number(DCTX "schemes/0/stats/sz_tried");
	pid = read_number(DAMON "0/pid");
	if (pid > 0)
		r->kdamond_pid = pid;
}

/*
 * Part 3: mark the region's pages idle, see the flag set, read the bits
 * back a little later; again and again.
 */
static void *idler(void *p)
{
	static uint64_t e[PAGES], e2[PAGES], word[PAGES], mask[PAGES], got[PAGES];
	static int widx[PAGES], marked[PAGES], got_ok[PAGES];
	uint64_t zero = zero_page_pfn(), pfn, f;
	off_t off = (uintptr_t)base / PAGE * 8;
	int pm = open("/proc/self/pagemap", O_RDONLY), bm = open(PAGE_IDLE, O_RDWR),
	    kpf = open("/proc/kpageflags", O_RDONLY);
	long i, nw, k;
	ssize_t ret;

	(void)p;
	if (pm < 0 || bm < 0 || kpf < 0) {
		why("open pagemap, %s, kpageflags: %s", PAGE_IDLE, errno);
		return NULL;
	}
	while (!race.stop) {
		if (pread(pm, e, sizeof(e), off) != (ssize_t)sizeof(e))
			tap_bail("pread pagemap");
		nw = 0;
		for (i = 0; i < PAGES; i++) {
			widx[i] = -1;
			marked[i] = 0;
			if (!(e[i] & PM_PRESENT) || (e[i] & PM_PFN) == zero)
				continue;
			pfn = e[i] & PM_PFN;
			for (k = 0; k < nw && word[k] != pfn / 64; k++)
				;
			if (k == nw) {
				word[nw] = pfn / 64;
				mask[nw++] = 0;
			}
			mask[k] |= 1ULL << (pfn % 64);
			widx[i] = k;
		}
		/*
		 * Mark: an rmap walk clears the young bits, then PG_idle. The
		 * last word below max_pfn, if max_pfn is not a multiple of 64,
		 * is processed but counted as 0 bytes (page_idle.c advances
		 * only at bit 63): a short count, not an error.
		 */
		for (k = 0; k < nw; k++) {
			ret = pwrite(bm, &mask[k], 8, word[k] * 8);
			if (ret < 0) {
				res->idle_err++;
				why("write %s: %s", PAGE_IDLE, errno);
			} else if (ret != 8) {
				res->idle_short++;
			}
		}
		for (i = 0; i < PAGES; i++) {
			if (widx[i] < 0)
				continue;
			res->idle_pfns++;
			pfn = e[i] & PM_PFN;
			f = 0;
			if (pread(kpf, &f, 8, pfn * 8) == 8 && (f & (1ULL << KPF_IDLE))) {
				marked[i] = 1;
				res->marked++;
			}
		}
		usleep(IDLE_GAP_US);
		/* Read back: an rmap walk again; a young PTE clears PG_idle. */
		for (k = 0; k < nw; k++) {
			ret = pread(bm, &got[k], 8, word[k] * 8);
			got_ok[k] = ret == 8;
			if (ret < 0) {
				res->idle_err++;
				why("read %s: %s", PAGE_IDLE, errno);
			} else if (ret != 8) {
				res->idle_short++;	/* that last word: bits unknown */
			}
		}
		if (pread(pm, e2, sizeof(e2), off) != (ssize_t)sizeof(e2))
			tap_bail("pread pagemap");
		/*
		 * Accessed again: only where no zap refaults a page at the same
		 * PFN (a page in an LRU-add batch reads back 0 without a walk).
		 */
		for (i = ZAPPED * CHUNK; i < PAGES; i++) {
			if (!marked[i] || !got_ok[widx[i]])
				continue;
			pfn = e[i] & PM_PFN;
			if (got[widx[i]] & (1ULL << (pfn % 64)))
				res->still_idle++;
			else if ((e2[i] & PM_PRESENT) && (e2[i] & PM_PFN) == pfn)
				res->accessed++;
		}
		res->idle_rounds++;
	}
	close(pm);
	close(bm);
	close(kpf);
	return NULL;
}

/* Has the part shown the race it is about? */
static int evidence(const struct result *r)
{
	int k;

	if (r->o.zeros == 0)
		return 0;
	switch (part) {
	case MGLRU:
		if (r->nnodes <= 0 || !r->has_stats)
			return 0;
		for (k = 0; k < r->nnodes; k++)
			if (r->adv[k] <= 0)
				return 0;
		return r->st[S_LEAF] > 0 && r->st[S_YOUNG] > 0;
	case DAMON_VADDR:
		return r->kdamond_pid > 0 && r->nr_tried > 0 && r->sz_tried > 0 && r->idle_max > 0;
	default:
		return r->idle_rounds > 0 && r->marked > 0 && r->accessed > 0 && r->idle_err == 0;
	}
}

static void race_child(void *arg)
{
	struct result *r = arg;
	void *(*other)(void *) = part == MGLRU ? ager : part == IDLE ? idler : NULL;
	struct slot_race_mark mark;
	pthread_t z, o;
	int walker = 1;
	double t0;

	res = r;
	/* First: a memcg of its own, before anything is mapped or charged. */
	if (part == MGLRU)
		walker = mglru_setup(r);
	zero_page_pfn();
	base = map_one_table();
	race.base = base;
	race.pages = PAGES;
	race.chunks = CHUNKS;
	race.zappable = ZAPPED;
	slot_race_mark(&mark);
	t0 = mark.t0;
	slot_race_start(&race, r->o.nwriters);
	if (pthread_create(&z, NULL, slot_race_chunk_zapper, &race) ||
	    (walker && other && pthread_create(&o, NULL, other, NULL)))
		tap_bail("pthread_create");
	if (part == DAMON_VADDR)
		walker = damon_setup(r);
	for (;;) {
		usleep(100 * 1000);
		r->o.zeros = race.zeros;
		r->o.zaps = race.zaps;
		if (walker && part == MGLRU)
			mglru_sample(r);
		else if (walker && part == DAMON_VADDR)
			damon_sample(r);
		if (now() - t0 >= RACE_SECS || (now() - t0 >= fixed_secs(MIN_SECS) && evidence(r)))
			break;
	}
	race.stop = 1;
	pthread_join(z, NULL);
	if (walker && other)
		pthread_join(o, NULL);
	if (walker && part == MGLRU)
		mglru_sample(r);
	if (r->damon_touched) {
		if (walker)
			damon_sample(r);
		/* Synchronous: kthread_stop() waits for kdamond. */
		damon_write(DAMON "0/state", "off");
		read_file(DAMON "0/state", r->state_after, sizeof(r->state_after));
		chomp(r->state_after);
	}
	slot_race_finish(&race);
	/* The mm's RSS counters, while its threads are gone, against its tables. */
	rss_agree_check(part_name[part]);
	slot_race_collect(&race, &mark, &r->o);
}

/* The part's checks, from its result @r and leak watch @w. */
static void report(int status, struct result *r, struct leak_watch *w)
{
	const char *name = part_name[part], *done;
	char adv[128] = "", setup[300] = "";
	int ok, k;

	slot_race_check(name, status, &r->o);
	ok = r->o.done && evidence(r);
	done = ok ? "" : ": too little work done";
	if (r->why[0])
		snprintf(setup, sizeof(setup), " [%s]", r->why);
	switch (part) {
	case MGLRU:
		for (k = 0; k < r->nnodes; k++)
			snprintf(adv + strlen(adv), sizeof(adv) - strlen(adv), "%snode %d +%lld",
				 k ? ", " : "", r->nid[k], r->adv[k]);
		tap_check(ok, "%s: race offered: memcg %d max_seq advanced %s by %lld aging writes (%lld failed); its mm walk stats (lru_gen_full%s): %lld leaf PTEs walked, %lld young cleared, %lld old, %lld PTE tables walked; %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->memcg_id, r->nnodes > 0 ? adv : "(no node)", r->agings,
			  r->aging_err, r->has_stats ? "" : ": no LOYNFA line", r->st[S_LEAF],
			  r->st[S_YOUNG], r->st[S_OLD], r->st[S_FOUND], r->o.zeros, r->o.zaps,
			  r->o.minflt, setup, done);
		if (r->aging_err)
			tap_diag("%s: last aging write error: %s", name, strerror(r->last_err));
		break;
	case DAMON_VADDR:
		tap_check(ok, "%s: race offered: kdamond pid %d; its stat scheme (nr_accesses >= 1) tried %lld accessed regions, %lld bytes (%lld stats updates); pages of the region found PG_idle (damon_ptep_mkold(), KPF_IDLE): up to %lld at once in %lld looks; %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->kdamond_pid, r->nr_tried, r->sz_tried, r->updates, r->idle_max,
			  r->idle_looks, r->o.zeros, r->o.zaps, r->o.minflt, setup, done);
		break;
	default:
		tap_check(ok, "%s: race offered: %lld rounds over %lld mapped pages: %lld marked idle (KPF_IDLE after the write), %lld accessed again (bit read back 0, same PFN), %lld still idle, %lld bitmap errors (%lld short counts); %ld writes met a fresh page after %ld zaps (%lld minor faults)%s%s",
			  name, r->idle_rounds, r->idle_pfns, r->marked, r->accessed, r->still_idle,
			  r->idle_err, r->idle_short, r->o.zeros, r->o.zaps, r->o.minflt, setup, done);
	}
	leak_watch_check(w, name);
}

/* What this test changed, to put back at the end (or at exit). */
static pid_t main_pid;
static int enabled_memory, made_cg, damon_changed;

static int cg_errno;

static int remove_cg(void)
{
	double t0 = now();

	cg_errno = 0;
	while (rmdir(cg_dir) && (cg_errno = errno) == EBUSY && now() - t0 < 10)
		usleep(100000);
	made_cg = 0;
	return access(cg_dir, F_OK) != 0;
}

/* The root's subtree_control without +memory again, if it had none. */
static int restore_subtree(void)
{
	char buf[256];

	if (enabled_memory) {
		write_file(CGROOT "/cgroup.subtree_control", "-memory");
		enabled_memory = 0;
		slurp(CGROOT "/cgroup.subtree_control", buf, sizeof(buf));
		return strstr(buf, "memory") == NULL;
	}
	return 1;
}

/* DAMON off and nr_kdamonds 0; 1 if both read back so. */
static int damon_restore(char *state, size_t len)
{
	snprintf(state, len, "(none)");
	if (!access(DAMON "0/state", F_OK)) {
		damon_write(DAMON "0/state", "off");
		read_file(DAMON "0/state", state, len);
		chomp(state);
	}
	damon_write(DAMON "nr_kdamonds", "0");
	damon_changed = 0;
	return read_number(DAMON "nr_kdamonds") == 0 && access(DAMON "0", F_OK) &&
	       (!strcmp(state, "off") || !strcmp(state, "(none)"));
}

static void cleanup(void)
{
	char state[16];

	if (getpid() != main_pid)
		return;
	if (made_cg)
		remove_cg();
	restore_subtree();
	if (damon_changed)
		damon_restore(state, sizeof(state));
}

/* The memory cgroup of part 1; its why on failure. */
static int setup_cg(char *why_cg, size_t len)
{
	char buf[256];

	if (slurp(CGROOT "/cgroup.controllers", buf, sizeof(buf)) < 0 || !strstr(buf, "memory")) {
		snprintf(why_cg, len, "no memory controller in " CGROOT "/cgroup.controllers");
		return 0;
	}
	slurp(CGROOT "/cgroup.subtree_control", buf, sizeof(buf));
	if (!strstr(buf, "memory")) {
		if (write_file(CGROOT "/cgroup.subtree_control", "+memory")) {
			snprintf(why_cg, len, "+memory into " CGROOT "/cgroup.subtree_control failed");
			return 0;
		}
		enabled_memory = 1;
	}
	if (mkdir(cg_dir, 0755)) {
		snprintf(why_cg, len, "mkdir %s: %s", cg_dir, strerror(errno));
		return 0;
	}
	made_cg = 1;
	return 1;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), status, ok, cg_ok = 0, removed, subtree;
	char caps[64], why_cg[256] = "", state[16];
	long nkd = -1;
	struct leak_watch w;
	struct result *r;

	tap_init(argv[0]);
	(void)argc;
	main_pid = getpid();
	snprintf(cg_name, sizeof(cg_name), "pfscale-t_aging.%d", main_pid);
	snprintf(cg_dir, sizeof(cg_dir), CGROOT "/%s", cg_name);
	if (n < 4)
		n = 4;
	if (n > MAX_WRITERS)
		n = MAX_WRITERS;
	/* MGLRU on; per part content, rss, evidence and the leak checks; the
	 * memcg removed; DAMON off. */
	tap_plan(1 + NPARTS * (4 + LEAK_CHECKS) + 2);
	r = map_shared(sizeof(*r));
	atexit(cleanup);

	if (read_file(LRU_GEN_ENABLED, caps, sizeof(caps)) < 0)
		strcpy(caps, "(no " LRU_GEN_ENABLED ")");
	chomp(caps);
	tap_check((strtoul(caps, NULL, 0) & 1) && !access(LRU_GEN, W_OK),
		  "MGLRU on: " LRU_GEN_ENABLED " %s (bit 0, the core, must be set; 0x0007 all), " LRU_GEN " %s",
		  caps, access(LRU_GEN, W_OK) ? "missing" : "there");

	for (part = 0; part < NPARTS; part++) {
		if (part == MGLRU) {
			cg_ok = setup_cg(why_cg, sizeof(why_cg));
			if (!cg_ok)
				tap_diag("%s: %s", part_name[part], why_cg);
		}
		if (part == DAMON_VADDR) {
			nkd = read_number(DAMON "nr_kdamonds");
			if (nkd != 0)
				tap_diag("%s: " DAMON "nr_kdamonds %ld at the start", part_name[part], nkd);
		}
		memset(r, 0, sizeof(*r));
		r->o.nwriters = n;
		status = leak_watch_run(&w, race_child, r);
		if (r->damon_touched)
			damon_changed = 1;
		report(status, r, &w);
		if (part == MGLRU) {
			removed = remove_cg();
			subtree = restore_subtree();
			tap_check(cg_ok && removed && subtree,
				  "%s: memory cgroup %s %s and removed (%s), the root's cgroup.subtree_control as it was (%s)",
				  part_name[part], cg_dir, cg_ok ? "made" : why_cg, removed ? "gone" : strerror(cg_errno),
				  subtree ? "ok" : "+memory still there");
		} else if (part == DAMON_VADDR) {
			/* Not someone else's kdamond: only what the child set up. */
			ok = r->damon_touched && damon_restore(state, sizeof(state));
			if (!r->damon_touched)
				strcpy(state, "(not set up)");
			tap_check(ok && !strcmp(r->state_after, "off"),
				  "%s: DAMON turned off by the child (state \"%s\"), then state \"%s\", nr_kdamonds back to %lld (was %ld)",
				  part_name[part], r->state_after, state, read_number(DAMON "nr_kdamonds"), nkd);
		}
	}
	return tap_exit();
}
