// SPDX-License-Identifier: GPL-2.0
/*
 * THP races (issue 13), with content and leak checks, on either path.
 *
 * Huge zero page splits racing faults. 8 threads share an mm. Each round
 * maps a fresh 2 MiB-aligned region, MADV_HUGEPAGE, reads byte 0 so that a
 * huge zero PMD maps it (pagemap must show 512 present pages with
 * contiguous PFNs, which only the huge zero page gives), then
 * MADV_NOHUGEPAGE (the huge zero PMD stays). From a spinning barrier,
 * thread 0 triggers a split of that PMD while threads 1-7 each write a
 * distinct page of the same 2 MiB; all read their page back, and after the
 * round thread 0 checks every written page again. The split comes from
 *   - a write fault (thread 0 writes page 0; do_huge_pmd_wp_page() falls
 *     back and splits),
 *   - a partial MADV_DONTNEED (thread 0 zaps the first 64 KiB, under
 *     mmap_read_lock, then writes page 0),
 *   - an mprotect of part of it (thread 0 adds PROT_EXEC to the first
 *     64 KiB, then writes page 0; mprotect splits under mmap_write_lock, so
 *     there the racing faults come before or after it, not during).
 * The other threads' writes are write faults on the huge zero PMD too, so
 * every round has several splitters and faulters at once, and a loss in the
 * DONTNEED or mprotect scenario need not come from that trigger's split
 * (only faults inside a split's window reach do_anonymous_page(): after
 * the split every PTE maps the zero page and a write there is a COW). A fault that
 * finds the PMD transiently none while __split_huge_zero_page_pmd() fills
 * the PTE table must not install a table (and page) that the split's
 * pmd_populate() then overwrites: that loses the write, leaks the page and
 * the table (AnonPages, PageTables) and leaves the mm's rss and
 * pgtables_bytes wrong ("Bad rss-counter state", "non-zero pgtables_bytes"
 * when the mm is freed).
 *
 * Each scenario runs in a forked child; after it is reaped, mm_quiesce()
 * makes every CPU drop a lazy reference to its mm, so the mm is freed and
 * the kernel's exit-time checks run, and folds the per-CPU vmstat deltas.
 * Then AnonPages and PageTables must be exactly where they were before the
 * fork, and /dev/kmsg must hold no bad-mm, bad-page, BUG or WARNING line.
 */
#include <sys/wait.h>
#include <time.h>
#include "common.h"

#define HPAGE (2UL << 20)
#define HPAGE_PAGES 512
#define NTHREADS 8
/*
 * Rounds each scenario must race (a third in make check), and the time it
 * may take: a scenario that did not race its rounds in time fails, "too
 * little work done". Stock boots race 100 huge zero rounds in ~4 s, the
 * widened boot in ~16 s.
 */
#define HZP_ROUNDS 100		/* per huge zero scenario */
#define THP_WANT 50		/* per THP split scenario */
#define THP_WANT_SLOW 15	/* MADV_COLLAPSE and fork: slower rounds */
#define CAP_SECONDS 60
#define HEAD_PAGES 16		/* what the DONTNEED / mprotect triggers cover */

/* Filled by the child in MAP_SHARED memory, read by the parent. */
struct result {
	long rounds, wanted, huge_rounds, lost_readback, lost_final;
	long compactions, unraced;	/* THP rounds: retried, given up */
	long collapse_compactions;	/* after a round whose collapse failed */
	long long table_lost, anon_lost, locked_lost;
	int done;
};

static struct result *res;

struct scenario {
	const char *name;
	void (*child)(const struct scenario *s);
	void (*report)(const struct scenario *s, int status);
	int nchecks;		/* tap checks report() makes */
	int trigger;		/* scenario-specific */
};

static long long counter(const char *name)
{
	long long v = pfscale_counter(name);

	return v < 0 ? 0 : v;
}

/*
 * Does a huge zero PMD map [p, p + 2 MiB)? All 512 pages present, with
 * contiguous PFNs from a 2 MiB-aligned one (4 KiB zero-page PTEs would all
 * show the one zero PFN). Without PFNs in pagemap (not root), present only:
 * the caller read byte 0 alone, so 512 present pages still mean a PMD.
 */
static int huge_zero_mapped(char *p)
{
	static uint64_t e[HPAGE_PAGES];
	uint64_t pfn0;
	int fd = open("/proc/self/pagemap", O_RDONLY), i;

	if (fd < 0)
		tap_bail("open pagemap");
	if (pread(fd, e, sizeof(e), (uintptr_t)p / PAGE * 8) != sizeof(e))
		tap_bail("pread pagemap");
	close(fd);
	pfn0 = e[0] & ((1ULL << 55) - 1);
	if (pfn0 % HPAGE_PAGES)
		return 0;
	for (i = 0; i < HPAGE_PAGES; i++) {
		if (!(e[i] & PM_PRESENT))
			return 0;
		if (pfn0 && (e[i] & ((1ULL << 55) - 1)) != pfn0 + i)
			return 0;
	}
	return 1;
}

/* ---- huge zero page split racing faults ---------------------------- */

enum { SPLIT_WRITE, SPLIT_DONTNEED, SPLIT_MPROTECT };

static char *volatile region;
static int trigger, round_no;
static volatile int stop;
static struct spin_barrier start_bar, end_bar;

/* The page thread k writes: 0 for thread 0, the others spread over 2 MiB. */
static long page_of(int k)
{
	return k ? k * 64 + 1 : 0;
}

static void hzp_work(int k)
{
	long pg = page_of(k);
	volatile uint64_t *p = (uint64_t *)(region + pg * PAGE);
	uint64_t v = slot_value(round_no, k, pg);

	if (k == 0 && trigger == SPLIT_DONTNEED)
		madvise(region, HEAD_PAGES * PAGE, MADV_DONTNEED);
	else if (k == 0 && trigger == SPLIT_MPROTECT)
		mprotect(region, HEAD_PAGES * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
	*p = v;
	if (*p != v)
		__atomic_add_fetch(&res->lost_readback, 1, __ATOMIC_RELAXED);
}

static void *hzp_worker(void *arg)
{
	int k = (int)(long)arg;

	for (;;) {
		spin_barrier_wait(&start_bar);
		if (stop)
			break;
		hzp_work(k);
		spin_barrier_wait(&end_bar);
	}
	return NULL;
}

static void hzp_child(const struct scenario *s)
{
	pthread_t tid[NTHREADS];
	double t0 = now();
	long long tl = counter("pte_table_cmpxchg_lost");
	long long al = counter("anon_cmpxchg_lost");
	long long ll = counter("locked_cmpxchg_lost");
	int k, r;

	trigger = s->trigger;
	spin_barrier_init(&start_bar, NTHREADS);
	spin_barrier_init(&end_bar, NTHREADS);
	for (k = 1; k < NTHREADS; k++)
		if (pthread_create(&tid[k], NULL, hzp_worker, (void *)(long)k))
			tap_bail("pthread_create");
	res->wanted = fixed_count(HZP_ROUNDS);
	for (r = 0; r < res->wanted && now() - t0 < CAP_SECONDS; r++) {
		round_no = r;
		region = map_aligned(HPAGE, HPAGE);
		if (madvise(region, HPAGE, MADV_HUGEPAGE))
			tap_bail("MADV_HUGEPAGE");
		(void)*(volatile char *)region;
		if (huge_zero_mapped(region))
			res->huge_rounds++;
		if (madvise(region, HPAGE, MADV_NOHUGEPAGE))
			tap_bail("MADV_NOHUGEPAGE");
		spin_barrier_wait(&start_bar);
		hzp_work(0);
		spin_barrier_wait(&end_bar);
		for (k = 0; k < NTHREADS; k++)
			if (*(uint64_t *)(region + page_of(k) * PAGE) !=
			    slot_value(r, k, page_of(k)))
				res->lost_final++;
		munmap(region, HPAGE);
		res->rounds++;
	}
	stop = 1;
	spin_barrier_wait(&start_bar);
	for (k = 1; k < NTHREADS; k++)
		pthread_join(tid[k], NULL);
	res->table_lost = counter("pte_table_cmpxchg_lost") - tl;
	res->anon_lost = counter("anon_cmpxchg_lost") - al;
	res->locked_lost = counter("locked_cmpxchg_lost") - ll;
	res->done = 1;
}

static void hzp_report(const struct scenario *s, int status)
{
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && res->done;

	if (!ok)
		tap_diag("%s: child ended with status 0x%x after %ld rounds", s->name,
			 status, res->rounds);
	tap_diag("%s: %ld rounds, pte_table_cmpxchg_lost +%lld, anon_cmpxchg_lost +%lld, locked_cmpxchg_lost +%lld",
		 s->name, res->rounds, res->table_lost, res->anon_lost, res->locked_lost);
	tap_check(ok && res->rounds >= res->wanted && res->huge_rounds == res->rounds,
		  "%s: a huge zero PMD mapped the region before the race (%ld of %ld rounds; %ld wanted in %d s, else too little work done)",
		  s->name, res->huge_rounds, res->rounds, res->wanted, CAP_SECONDS);
	tap_check(ok && res->lost_readback == 0 && res->lost_final == 0,
		  "%s: %d threads x %ld rounds, no write lost (%ld lost on read-back, %ld after the round)",
		  s->name, NTHREADS, res->rounds, res->lost_readback, res->lost_final);
}

/* ---- THP splits, collapse and COW racing faults ---------------------- */

/*
 * A fresh 2 MiB region whose every page holds a pattern in its first word:
 * a THP (MADV_HUGEPAGE, the first write allocates it) or, for MADV_COLLAPSE,
 * 512 small pages. Threads 1-7 then write, read back and MADV_DONTNEED
 * their own page ITERS times (each write after a DONTNEED is a fresh
 * anonymous fault on the PTE table of the split PMD), while thread 0
 * splits the THP by partial munmap, partial mprotect or partial
 * MADV_DONTNEED, collapses the range with MADV_COLLAPSE, or forks a child
 * that checks the pattern and writes every page (COW of the THP, which the
 * threads' writes then split and copy in the parent). After the round every
 * thread's page must hold its last write, and every other page the pattern
 * (but the 16 pages thread 0 unmapped or zapped).
 */
enum { THP_MUNMAP, THP_MPROTECT, THP_DONTNEED, THP_COLLAPSE, THP_FORK };

#define ITERS 8
#define THP_ROUNDS 300

static long collapsed, huge_before, child_bad;

static uint64_t pattern(int round, long pg)
{
	return 0x7a7a000000000000ULL | ((uint64_t)round << 16) | pg;
}

/* Is the region's first word in a THP? (smaps AnonHugePages, in pages) */
static int thp_mapped(char *p)
{
	return smaps_field(p, "AnonHugePages") == HPAGE_PAGES;
}

/* Is page pg one that thread 0 unmapped or zapped on purpose? */
static int head_or_tail(long pg)
{
	if (trigger == THP_DONTNEED)
		return pg < HEAD_PAGES;
	if (trigger == THP_MUNMAP)
		return pg >= HPAGE_PAGES - HEAD_PAGES;
	return 0;
}

static long thp_check_pattern(char *p, int round)
{
	long pg, bad = 0;

	for (pg = 0; pg < HPAGE_PAGES; pg++) {
		int k, own = 0;

		for (k = 1; k < NTHREADS; k++)
			own |= page_of(k) == pg;
		/* Word 1: a forked child's COW writes must not show here. */
		if (!own && !head_or_tail(pg) &&
		    (((uint64_t *)(p + pg * PAGE))[0] != pattern(round, pg) ||
		     ((uint64_t *)(p + pg * PAGE))[1] != 0))
			bad++;
	}
	return bad;
}

static void thp_trigger(void)
{
	pid_t pid;
	int status;

	switch (trigger) {
	case THP_MUNMAP:
		munmap(region + HPAGE - HEAD_PAGES * PAGE, HEAD_PAGES * PAGE);
		break;
	case THP_MPROTECT:
		mprotect(region, HEAD_PAGES * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
		break;
	case THP_DONTNEED:
		madvise(region, HEAD_PAGES * PAGE, MADV_DONTNEED);
		break;
	case THP_COLLAPSE:
		if (madvise(region, HPAGE, 25 /* MADV_COLLAPSE */) == 0)
			collapsed++;
		break;
	case THP_FORK:
		pid = fork();
		if (pid == 0) {
			long pg, bad = thp_check_pattern(region, round_no);

			for (pg = 0; pg < HPAGE_PAGES; pg++)
				((uint64_t *)(region + pg * PAGE))[1] = ~0ULL;
			for (pg = 0; pg < HPAGE_PAGES; pg++)
				if (((uint64_t *)(region + pg * PAGE))[1] != ~0ULL)
					bad++;
			_exit(bad ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			child_bad++;
		break;
	}
}

static void thp_work(int k)
{
	long pg = page_of(k);
	volatile uint64_t *p = (uint64_t *)(region + pg * PAGE);
	int it;

	if (k == 0) {
		thp_trigger();
		return;
	}
	for (it = 0; it < ITERS; it++) {
		uint64_t v = slot_value(round_no, k, it);

		p[1] = v;
		if (p[1] != v)
			__atomic_add_fetch(&res->lost_readback, 1, __ATOMIC_RELAXED);
		if (it < ITERS - 1)
			madvise((void *)p, PAGE, MADV_DONTNEED);
	}
}

static void *thp_worker(void *arg)
{
	int k = (int)(long)arg;

	for (;;) {
		spin_barrier_wait(&start_bar);
		if (stop)
			break;
		thp_work(k);
		spin_barrier_wait(&end_bar);
	}
	return NULL;
}

static void thp_child(const struct scenario *s)
{
	pthread_t tid[NTHREADS];
	double t0 = now();
	long long al = counter("anon_cmpxchg_lost");
	long long ll = counter("locked_cmpxchg_lost");
	long pg;
	int k, r, tries;

	trigger = s->trigger;
	spin_barrier_init(&start_bar, NTHREADS);
	spin_barrier_init(&end_bar, NTHREADS);
	for (k = 1; k < NTHREADS; k++)
		if (pthread_create(&tid[k], NULL, thp_worker, (void *)(long)k))
			tap_bail("pthread_create");
	res->wanted = fixed_count(trigger >= THP_COLLAPSE ? THP_WANT_SLOW : THP_WANT);
	/* MADV_COLLAPSE often fails: on (to the cap) until one did. */
	for (r = 0; r < THP_ROUNDS && now() - t0 < CAP_SECONDS &&
		    (res->rounds < res->wanted || (trigger == THP_COLLAPSE && collapsed == 0));
	     r++) {

		round_no = r;
		/*
		 * A THP, or (to be collapsed) small pages. With two NUMA
		 * nodes of half the guest each, after the other tests, a THP
		 * allocation can fail for want of a free 2 MiB block: then
		 * compact and map the round again (a few times at most).
		 */
		for (tries = 0; ; tries++) {
			region = map_aligned(HPAGE, HPAGE);
			if (trigger != THP_COLLAPSE && madvise(region, HPAGE, MADV_HUGEPAGE))
				tap_bail("MADV_HUGEPAGE");
			for (pg = 0; pg < HPAGE_PAGES; pg++)
				*(uint64_t *)(region + pg * PAGE) = pattern(r, pg);
			if (thp_mapped(region) == (trigger != THP_COLLAPSE) || tries == 3)
				break;
			munmap(region, HPAGE);
			write_file("/proc/sys/vm/compact_memory", "1");
			res->compactions++;
		}
		/*
		 * A round that could not get its THP does not race: it would
		 * race small pages under this scenario's name. The report
		 * bounds how many rounds may be given up.
		 */
		if (thp_mapped(region) != (trigger != THP_COLLAPSE)) {
			munmap(region, HPAGE);
			res->unraced++;
			continue;
		}
		huge_before++;
		spin_barrier_wait(&start_bar);
		thp_work(0);
		spin_barrier_wait(&end_bar);
		for (k = 1; k < NTHREADS; k++)
			if (((uint64_t *)(region + page_of(k) * PAGE))[1] !=
			    slot_value(r, k, ITERS - 1))
				res->lost_final++;
		res->lost_final += thp_check_pattern(region, r);
		munmap(region, HPAGE);
		res->rounds++;
		/*
		 * A collapse fails for want of a free 2 MiB block too (in
		 * make check the stock phase follows the widened one in the
		 * same boot): compact before the next round until one did.
		 */
		if (trigger == THP_COLLAPSE && collapsed == 0) {
			write_file("/proc/sys/vm/compact_memory", "1");
			res->collapse_compactions++;
		}
	}
	stop = 1;
	spin_barrier_wait(&start_bar);
	for (k = 1; k < NTHREADS; k++)
		pthread_join(tid[k], NULL);
	res->huge_rounds = huge_before;
	res->anon_lost = counter("anon_cmpxchg_lost") - al;
	res->locked_lost = counter("locked_cmpxchg_lost") - ll;
	res->table_lost = trigger == THP_COLLAPSE ? collapsed : child_bad;
	res->done = 1;
}

static void thp_report(const struct scenario *s, int status)
{
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && res->done;

	if (!ok)
		tap_diag("%s: child ended with status 0x%x after %ld rounds", s->name,
			 status, res->rounds);
	tap_diag("%s: %ld rounds, anon_cmpxchg_lost +%lld, locked_cmpxchg_lost +%lld",
		 s->name, res->rounds, res->anon_lost, res->locked_lost);
	if (res->compactions)
		tap_diag("%s: %ld THP allocations failed and were retried after compact_memory",
			 s->name, res->compactions);
	if (res->collapse_compactions)
		tap_diag("%s: memory compacted after %ld rounds whose collapse failed",
			 s->name, res->collapse_compactions);
	tap_check(ok && res->rounds >= res->wanted && res->huge_rounds == res->rounds &&
		  res->unraced * 10 <= res->rounds,
		  "%s: the region was %s before the race (%ld of %ld rounds, %ld wanted in %d s, else too little work done; %ld given up after 3 compactions, at most a tenth)",
		  s->name, s->trigger == THP_COLLAPSE ? "small pages" : "a THP",
		  res->huge_rounds, res->rounds, res->wanted, CAP_SECONDS, res->unraced);
	if (s->trigger == THP_COLLAPSE)
		tap_check(ok && res->table_lost > 0,
			  "%s: MADV_COLLAPSE succeeded in %lld of %ld rounds", s->name,
			  res->table_lost, res->rounds);
	else if (s->trigger == THP_FORK)
		tap_check(ok && res->table_lost == 0,
			  "%s: %ld forked children saw the pattern and their own COW writes (%lld did not)",
			  s->name, res->rounds, res->table_lost);
	tap_check(ok && res->lost_readback == 0 && res->lost_final == 0,
		  "%s: %d threads x %ld rounds x %d faults, no write lost (%ld lost on read-back, %ld wrong after the round)",
		  s->name, NTHREADS - 1, res->rounds, ITERS, res->lost_readback, res->lost_final);
}

/* ---- the harness ----------------------------------------------------- */

static const struct scenario scenarios[] = {
	{ "huge zero split by write fault", hzp_child, hzp_report, 2, SPLIT_WRITE },
	{ "huge zero split by partial MADV_DONTNEED", hzp_child, hzp_report, 2, SPLIT_DONTNEED },
	{ "huge zero split by partial mprotect", hzp_child, hzp_report, 2, SPLIT_MPROTECT },
	{ "THP split by partial munmap", thp_child, thp_report, 2, THP_MUNMAP },
	{ "THP split by partial mprotect", thp_child, thp_report, 2, THP_MPROTECT },
	{ "THP split by partial MADV_DONTNEED", thp_child, thp_report, 2, THP_DONTNEED },
	{ "MADV_COLLAPSE", thp_child, thp_report, 3, THP_COLLAPSE },
	{ "THP COW after fork", thp_child, thp_report, 3, THP_FORK },
};
#define NSCEN ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

static void scenario_child(void *arg)
{
	const struct scenario *s = arg;

	s->child(s);
}

/* Run @s in a forked child; its checks, then the leak checks. */
static void run_scenario(const struct scenario *s)
{
	struct leak_watch w;
	int status;

	memset(res, 0, sizeof(*res));
	status = leak_watch_run(&w, scenario_child, (void *)s);
	s->report(s, status);
	leak_watch_check(&w, s->name);
}

int main(int argc, char **argv)
{
	char enabled[128], zero[16];
	int i, plan = 1;

	tap_init(argv[0]);
	(void)argc;
	for (i = 0; i < NSCEN; i++)
		plan += scenarios[i].nchecks + LEAK_CHECKS;
	tap_plan(plan);
	res = map_shared(sizeof(*res));
	read_file("/sys/kernel/mm/transparent_hugepage/enabled", enabled, sizeof(enabled));
	read_file("/sys/kernel/mm/transparent_hugepage/use_zero_page", zero, sizeof(zero));
	enabled[strcspn(enabled, "\n")] = 0;
	tap_check((strstr(enabled, "[madvise]") || strstr(enabled, "[always]")) && zero[0] == '1',
		  "THP usable: enabled \"%s\", use_zero_page %c (%s path)", enabled,
		  zero[0] ? zero[0] : '?', pfscale_path());
	for (i = 0; i < NSCEN; i++)
		run_scenario(&scenarios[i]);
	return tap_exit();
}
