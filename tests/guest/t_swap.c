// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing swap (guest/init puts swap on zram0):
 *
 * 1. Swap-in races: a region is filled, pushed out with MADV_PAGEOUT (every
 *    page must then be swapped in pagemap, none present), and 2 x CPUs
 *    threads read it back in the same order, so that they fault on the same
 *    swap PTEs. do_swap_page()'s losers recheck the PTE under the lock and
 *    back out: swapin_lost must move, every page must hold its pattern and
 *    be present, and smaps Rss/Swap must agree with pagemap. A forked child
 *    holds the swap entries meanwhile: with a swap count of 1 a synchronous
 *    device (zram) skips the swap cache, and there 6.1.y's swapcache_prepare()
 *    makes concurrent swap-ins wait and retry instead of racing; with a count
 *    of 2 they go through the swap cache, race for the folio lock, and the
 *    second to get it finds the PTE changed.
 *
 * 2. Reclaim racing faults, in a forked child: writer threads keep writing
 *    their own slot of every page, checking that it still holds their
 *    previous pass's value and reading it back, while a pager thread
 *    pushes the range out with MADV_PAGEOUT, PASSES times or for
 *    RECLAIM_SECS (all start from a spin barrier; the writers stop when
 *    the pager is done, then read every slot once more). Nothing is ever
 *    discarded, so every read must return exactly what its writer wrote
 *    last. Reclaim (try_to_unmap_one) takes present PTEs away under the PTE
 *    lock; pfscale kernels park them (a busy marker, not an empty PTE that
 *    a lockless fault could fill), so a bug there shows as a stale slot, a
 *    page the child leaks (AnonPages, PageTables and a bad-mm message, by
 *    leak_watch_run()), or both. How many faults met a PTE that
 *    try_to_unmap_one() parked (parked_by_unmap) is only shown: reclaim
 *    defers its TLB flush, so a writer that caches the page writes
 *    through the old entry and does not fault; boots saw 0 to 4 such
 *    faults per run, plain or widened, with or without writers that flush
 *    their own TLB. t_hwpoison (c) races that park where the flush is
 *    immediate, and requires the faults.
 *    After the last pass every page must be present, none swapped, and
 *    smaps must agree.
 *
 * 3. Swap entries taken away under swap-ins, in a forked child per mode:
 *    rounds of a region paged out (as in 1) that 2 x CPUs readers read
 *    back in the same order while another thread, released by the same
 *    barrier, zaps it with MADV_DONTNEED (zap_pte_range()'s swap-entry
 *    branch outside exit: free_swap_and_cache() against do_swap_page()) or
 *    swaps the device off (try_to_unuse() swaps every entry in and maps it
 *    with unuse_pte(), beside the readers' own swap-ins; swapon again
 *    after). A read must give the page's pattern, or 0 once the zap began;
 *    after swapoff every page is present with its pattern. Evidence: a
 *    round whose readers read patterns and zeros both (the zap passed the
 *    region while they swapped it in); a round in which the readers took
 *    major faults for some pages but not all, so that swapoff swapped in
 *    the rest. Rounds go on until one did (RACE_SECS at most).
 *
 * 4. khugepaged's swap-in under reclaim's parks: __collapse_huge_page_swapin()
 *    reads each PTE of the range without the PTE lock and faults each swap
 *    entry in with do_swap_page(); a PTE parked at that moment is a
 *    non-present entry too, and goes there as well (handle_pte_marker()
 *    waits for its holder once; patch 0004). In a forked child, rounds of a
 *    2 MiB-aligned region (one PTE table) whose first COLLAPSE_SWAPPED
 *    pages are paged out and whose other pages are lazily freed and
 *    written again; a collapser thread MADV_COLLAPSEs it (the
 *    collapse_huge_page() khugepaged runs), and once its swap-in has begun
 *    (the first page is back) COLLAPSE_PAGERS pager threads, one slice of
 *    the present pages each, MADV_PAGEOUT theirs again and again:
 *    try_to_unmap_one() parks each, finds it redirtied and sets it again,
 *    so the parks go on without using the pages up. No thread faults in
 *    the region meanwhile, so a fault that met a park of try_to_unmap_one
 *    (parked_by_unmap) is the swap-in's: it must have met some (at least
 *    COLLAPSE_ROUNDS rounds, until it did, COLLAPSE_RACE_SECS at most (a
 *    busy host starves the pagers: 15 rounds in 20 s met none); windows
 *    widened to 50 us where the kernel can: a park lasts a few
 *    instructions). Then every page must hold its pattern, and be present.
 *
 * The swap-in rounds go on past ROUNDS until swapin_lost moved (at most
 * RACE_SECS seconds): "race not reproduced" is a failure of its own.
 *
 * Once the regions are unmapped, every swap slot must be free, exactly:
 * swapoff of zram0 must succeed (it frees every slot in use, and loops
 * until a signal while one has no owner left to swap it in: a leaked slot
 * shows as SWAPOFF_SECS running out), and after swapon SwapFree must equal
 * SwapTotal. The per-CPU swap slot caches, which made SwapFree inexact,
 * are drained by swapoff.
 */
#include <signal.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <time.h>
#include "common.h"

#define PAGES 512
#define ROUNDS 8
#define PASSES 20
#define RECLAIM_SECS 10
/*
 * Writers sleep SLEEP_US after every SLEEP_EVERY pages. Reclaim parks (stock
 * 6.1: clears) a PTE but defers the TLB flush while other CPUs
 * run the mm, so only a writer whose TLB lacks the page faults in the
 * window before the swap entry is set: one that has not touched it since
 * reclaim's previous flush. And shrink_folio_list() spares every page whose
 * PTE was found young, i.e. touched since a flush. Writers that sweep the
 * region in a tight loop touch every page between any two flushes: reclaim
 * then takes almost nothing, and no fault meets a window. Paced, reclaim takes a part of the region each pass
 * and the writers' first touch of a page after a flush falls anywhere,
 * now and then into that page's window.
 */
#define SLEEP_EVERY 8
#define SLEEP_US 50
#define MAGIC 0x5a5a000000000000ULL
#define SWAP_DEV "/dev/zram0"
#define SWAPOFF_SECS 60
#define RACE_SECS 20
#define COLLAPSE_ROUNDS 6	/* part 4: rounds at least */
#define COLLAPSE_RACE_SECS 45	/* part 4: until a park was met, at most */
#define COLLAPSE_SWAPPED 256	/* part 4: the first pages, paged out before the collapse */
#define COLLAPSE_PAGERS 8	/* part 4: pager threads, one slice of the region each */

static char *base;
static volatile int stop;
/* The parked PTEs met before the reclaim race. */
static struct parked_mark parked;
static volatile long bad;
static pthread_barrier_t bar;

/* Is swap on? (its absence on a kernel with zram is a harness bug) */
static int swap_ready(void)
{
	return meminfo_kb("SwapTotal") > 0;
}

static void *reader(void *p)
{
	long i, wrong = 0;

	(void)p;
	pthread_barrier_wait(&bar);
	for (i = 0; i < PAGES; i++)
		if (*(volatile uint64_t *)(base + i * PAGE) != (MAGIC | i))
			wrong++;
	__sync_fetch_and_add(&bad, wrong);
	return NULL;
}

/* The first page_out_pages pages of the round's region are paged out. */
static long page_out_pages = PAGES;

/* MADV_PAGEOUT of those pages, from the CPU this runs on. */
static void page_out(void *unused)
{
	(void)unused;
	if (madvise(base, page_out_pages * PAGE, MADV_PAGEOUT))
		tap_bail("MADV_PAGEOUT");
}

/*
 * The region at base (PAGES pages, MADV_NOHUGEPAGE) filled, each page with
 * its pattern, and its first @n pages paged out: how many pages are
 * swapped in pagemap and how many present (want @n and the rest).
 *
 * A page can stay in: MADV_PAGEOUT drains only this CPU's LRU add batch,
 * and the pages faulted before the scheduler moved this thread sit in
 * another CPU's batch (up to 15, off the LRU, so reclaim cannot isolate
 * them; seen: 9 of 512 left after 8 tries on one CPU). Or reclaim had one
 * isolated at that moment. So retries page out from every CPU, which
 * drains each CPU's batch, a few times at most before the caller's check
 * calls it a failure.
 */
static void fill_paged_out(long n, long *swapped, long *present)
{
	size_t len = PAGES * PAGE;
	long i;
	int k;

	for (i = 0; i < PAGES; i++)
		*(uint64_t *)(base + i * PAGE) = MAGIC | i;
	page_out_pages = n;
	page_out(NULL);
	for (k = 0;; k++) {
		*swapped = pagemap_count(base, len, PM_SWAPPED);
		*present = pagemap_present(base, len);
		if ((*swapped == n && *present == PAGES - n) || k == 3)
			break;
		on_each_cpu_call(page_out, NULL);
	}
}

/* A new region (base) of PAGES pages, each with its pattern, paged out. */
static void map_paged_out(long *swapped, long *present)
{
	base = map_anon(PAGES * PAGE);
	madvise(base, PAGES * PAGE, MADV_NOHUGEPAGE);
	fill_paged_out(PAGES, swapped, present);
}

/* One round of swap-in races; 1 if content, pagemap and smaps are right. */
static int swapin_round(int n, int round)
{
	size_t len = PAGES * PAGE;
	long swapped, present, rss, swap;
	pthread_t tid[64];
	pid_t child;
	int k, ok;

	map_paged_out(&swapped, &present);
	child = fork();
	if (child < 0)
		tap_bail("fork");
	if (!child)
		for (;;)
			pause();
	bad = 0;
	pthread_barrier_init(&bar, NULL, n);
	for (k = 0; k < n; k++)
		pthread_create(&tid[k], NULL, reader, NULL);
	for (k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
	pthread_barrier_destroy(&bar);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ok = swapped == PAGES && present == 0;
	if (!ok)
		tap_diag("round %d: after MADV_PAGEOUT %ld swapped, %ld present (want %d, 0)",
			 round, swapped, present, PAGES);
	swapped = pagemap_count(base, len, PM_SWAPPED);
	present = pagemap_present(base, len);
	rss = smaps_rss(base);
	swap = smaps_field(base, "Swap");
	if (bad || present != PAGES || swapped || rss != PAGES || swap) {
		tap_diag("round %d: %ld wrong reads; after: %ld present, %ld swapped, rss %ld, swap %ld",
			 round, bad, present, swapped, rss, swap);
		ok = 0;
	}
	munmap(base, len);
	return ok;
}

/* The reclaim race, run in a forked child; its threads share these. */
static int nwriters;
static struct spin_barrier start_bar;
static long writer_passes[64];	/* full passes each writer has finished */
static volatile long final_bad;

/*
 * Each pass checks that every slot of its own still holds the previous
 * pass's value (a write lost with a page that reclaim replaced shows
 * here), writes the new one and reads it back. Passes are whole, so that
 * the pager can wait for every page to be written again; once the pager
 * is done, a last pass only reads, and faults back whatever is still out.
 */
static void *writer(void *p)
{
	long id = (long)p, i;
	uint64_t gen = 0;


	spin_barrier_wait(&start_bar);
	while (!stop) {
		gen++;
		for (i = 0; i < PAGES; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;
			uint64_t v = pass_value(gen, id, i);

			/* Paced: see SLEEP_EVERY. */
			if (i % SLEEP_EVERY == SLEEP_EVERY - 1)
				usleep(SLEEP_US);

			if (*slot != pass_value(gen - 1, id, i))
				__sync_fetch_and_add(&bad, 1);
			*slot = v;
			if (*slot != v)
				__sync_fetch_and_add(&bad, 1);
		}
		__atomic_store_n(&writer_passes[id], (long)gen, __ATOMIC_RELEASE);
	}
	for (i = 0; i < PAGES; i++)
		if (((volatile uint64_t *)(base + i * PAGE))[id] != pass_value(gen, id, i))
			__sync_fetch_and_add(&final_bad, 1);
	return NULL;
}

/* Wait (until @deadline) for every writer to have finished @want[k] passes. */
static void wait_writers(const long *want, double deadline)
{
	int k;

	for (k = 0; k < nwriters; k++)
		while (__atomic_load_n(&writer_passes[k], __ATOMIC_ACQUIRE) < want[k] &&
		       now() < deadline)
			usleep(200);
}

/*
 * MADV_PAGEOUT over the region, PASSES times or for RECLAIM_SECS, while
 * the writers run; then stop them. Before each pass every writer has
 * written every page again since the previous one (two of its passes
 * ended after it), so that each pass has the whole region, present and
 * dirty, to reclaim from under the writers.
 */
static void *pager(void *p)
{
	long long *passes = p;
	long want[64];
	double deadline;
	int k;

	spin_barrier_wait(&start_bar);
	deadline = now() + fixed_secs(RECLAIM_SECS);
	for (k = 0; k < nwriters; k++)
		want[k] = 1;
	while (*passes < fixed_count(PASSES) && now() < deadline) {
		wait_writers(want, deadline);
		if (now() >= deadline)
			break;
		madvise(base, PAGES * PAGE, MADV_PAGEOUT);
		(*passes)++;
		for (k = 0; k < nwriters; k++)
			want[k] = __atomic_load_n(&writer_passes[k], __ATOMIC_ACQUIRE) + 2;
	}
	stop = 1;
	return NULL;
}

/*
 * Pages read from and written to the swap device so far: its block stat
 * (the writers fault pages back too fast for pagemap to see them out).
 */
static void zram_io(long long *reads, long long *writes)
{
	long long v[5] = { -1, 0, 0, 0, -1 };
	FILE *f = fopen("/sys/block/zram0/stat", "r");

	if (f) {
		if (fscanf(f, "%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
			v[0] = v[4] = -1;
		fclose(f);
	}
	*reads = v[0];
	*writes = v[4];
}

/* Hits of race window @name so far (-1 if the kernel has no widener). */
static long long race_window_hits(const char *name)
{
	char line[256], n[64];
	long long v, ret = -1;
	FILE *f = fopen("/sys/kernel/debug/pfscale/race_windows", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", n, &v) == 2 && !strcmp(n, name))
			ret = v;
	fclose(f);
	return ret;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * swapoff SWAP_DEV, interrupted after SWAPOFF_SECS, then swapon again: 0,
 * or -1 with what failed in @why.
 */
static int swap_cycle(char *why, size_t len)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	double t0 = now();
	int r;

	sigaction(SIGALRM, &sa, NULL);
	alarm(SWAPOFF_SECS);
	r = swapoff(SWAP_DEV);
	alarm(0);
	if (r) {
		snprintf(why, len, "swapoff failed after %.1f s: %s%s", now() - t0, strerror(errno),
			 errno == EINTR ? " (slots left that nothing maps: leaked)" : "");
		return -1;
	}
	if (swapon(SWAP_DEV, 0)) {
		snprintf(why, len, "swapon again failed: %s", strerror(errno));
		return -1;
	}
	snprintf(why, len, "swapoff took %.1f s", now() - t0);
	return 0;
}

/* What the reclaim race child found, in memory shared with the parent. */
struct reclaim_result {
	int n, done;
	long long passes, writer_passes, reads, writes;
	long bad, final_bad, present, swapped, rss, swap;
	double secs;
};

static void reclaim_child(void *arg)
{
	struct reclaim_result *r = arg;
	size_t len = PAGES * PAGE;
	long long reads, writes;
	pthread_t tid[64], z;
	double t0;
	int k;

	base = map_anon(len);
	madvise(base, len, MADV_NOHUGEPAGE);
	nwriters = r->n;
	stop = 0;
	bad = final_bad = 0;
	spin_barrier_init(&start_bar, nwriters + 1);
	zram_io(&reads, &writes);
	t0 = now();
	for (k = 0; k < nwriters; k++)
		if (pthread_create(&tid[k], NULL, writer, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&z, NULL, pager, &r->passes))
		tap_bail("pthread_create");
	pthread_join(z, NULL);
	for (k = 0; k < nwriters; k++) {
		pthread_join(tid[k], NULL);
		r->writer_passes += writer_passes[k];
	}
	r->secs = now() - t0;
	zram_io(&r->reads, &r->writes);
	r->reads = reads < 0 ? -1 : r->reads - reads;
	r->writes = writes < 0 ? -1 : r->writes - writes;
	r->bad = bad;
	r->final_bad = final_bad;
	r->present = pagemap_present(base, len);
	r->swapped = pagemap_count(base, len, PM_SWAPPED);
	r->rss = smaps_rss(base);
	r->swap = smaps_field(base, "Swap");
	r->done = 1;
}

/* Part 3: swap entries zapped or swapped off under the readers' swap-ins. */
enum { TAKE_ZAP, TAKE_SWAPOFF, NTAKE };
static const char *const takes[] = { "MADV_DONTNEED", "swapoff" };
static int take_begun;
static long take_pattern, take_zero;
static int take_errno;

static void *take_reader(void *p)
{
	long i, wrong = 0, pat = 0, zero = 0;

	(void)p;
	pthread_barrier_wait(&bar);
	for (i = 0; i < PAGES; i++) {
		/* The flag after the value: a 0 read means the zap had begun. */
		uint64_t v = *(volatile uint64_t *)(base + i * PAGE);
		int begun = __atomic_load_n(&take_begun, __ATOMIC_ACQUIRE);

		if (v == (MAGIC | i))
			pat++;
		else if (v == 0 && begun)
			zero++;
		else
			wrong++;
	}
	__sync_fetch_and_add(&bad, wrong);
	__sync_fetch_and_add(&take_pattern, pat);
	__sync_fetch_and_add(&take_zero, zero);
	return NULL;
}

static void *taker(void *p)
{
	int mode = *(int *)p;

	pthread_barrier_wait(&bar);
	__atomic_store_n(&take_begun, 1, __ATOMIC_SEQ_CST);
	if (mode == TAKE_ZAP)
		madvise(base, PAGES * PAGE, MADV_DONTNEED);
	else if (swapoff(SWAP_DEV))
		take_errno = errno;
	return NULL;
}

struct take_result {
	int n, mode, rounds, raced, done, cycle_failed;
	char cycle[160];		/* the swapoff/swapon cycles' outcome */
	long bad, not_out, after_bad;
	long long majflt;	/* the raced round's, or the last one's */
};

static void take_child(void *arg)
{
	struct take_result *t = arg;
	size_t len = PAGES * PAGE;
	double t0 = now();
	int r, k;

	for (r = 0; r < fixed_count(4) || (!t->raced && now() - t0 < RACE_SECS); r++) {
		pthread_t tid[65];
		struct rusage ru0, ru1;
		long i, out, present;

		map_paged_out(&out, &present);
		t->not_out += PAGES - out;
		bad = take_pattern = take_zero = 0;
		__atomic_store_n(&take_begun, 0, __ATOMIC_SEQ_CST);
		pthread_barrier_init(&bar, NULL, t->n + 1);
		getrusage(RUSAGE_SELF, &ru0);
		for (k = 0; k < t->n; k++)
			if (pthread_create(&tid[k], NULL, take_reader, NULL))
				tap_bail("pthread_create");
		if (pthread_create(&tid[t->n], NULL, taker, &t->mode))
			tap_bail("pthread_create");
		for (k = 0; k <= t->n; k++)
			pthread_join(tid[k], NULL);
		getrusage(RUSAGE_SELF, &ru1);
		pthread_barrier_destroy(&bar);
		t->bad += bad;
		if (t->mode == TAKE_SWAPOFF) {
			if (take_errno || swapon(SWAP_DEV, 0))
				tap_bail("swapoff/swapon " SWAP_DEV);
			for (i = 0; i < PAGES; i++)
				if (*(uint64_t *)(base + i * PAGE) != (MAGIC | i))
					t->after_bad++;
			if (pagemap_present(base, len) != PAGES)
				t->after_bad++;
		}
		if (!t->raced) {
			t->majflt = ru1.ru_majflt - ru0.ru_majflt;
			t->raced = t->mode == TAKE_ZAP ? take_pattern > 0 && take_zero > 0 :
				   t->majflt > 0 && t->majflt < PAGES;
		}
		munmap(base, len);
	}
	t->rounds = r;
	t->done = 1;
	/*
	 * A zapped swap entry's page can stay in the swap cache, on the anon
	 * LRU with no owner, when free_swap_and_cache() could not take it:
	 * swapoff frees those, so the leak watch sees only real leaks. A slot
	 * leaked for good makes swapoff loop: swap_cycle() gives up after
	 * SWAPOFF_SECS and says so.
	 */
	if (swap_cycle(t->cycle, sizeof(t->cycle)))
		t->cycle_failed = 1;
}

static void take_race(int n)
{
	struct take_result *t = map_shared(sizeof(*t));
	struct leak_watch w;
	int mode, status;
	char what[96];


	for (mode = 0; mode < NTAKE; mode++) {
		memset(t, 0, sizeof(*t));
		t->n = n;
		t->mode = mode;
		snprintf(what, sizeof(what), "swap entries taken by %s under swap-ins", takes[mode]);
		/* The level from before, without what part 2 left in the swap cache. */
		if (swap_cycle(t->cycle, sizeof(t->cycle))) {
			tap_diag("%s: %s", what, t->cycle);
			tap_bail("swapoff/swapon before it");
		}
		status = leak_watch_run(&w, take_child, t);
		tap_check(status == 0 && !t->cycle_failed && t->done && t->bad == 0 && t->after_bad == 0 && t->not_out == 0,
			  "%s: %d readers x %d rounds: %ld wrong reads (neither the pattern nor, once the zap began, 0), %ld wrong after, %ld pages not paged out; swapoff/swapon around it: %s",
			  what, n, t->rounds, t->bad, t->after_bad, t->not_out, t->cycle);
		if (mode == TAKE_ZAP)
			tap_check(t->raced, "%s: race reproduced: a round's readers read the pattern and zeros both (%d rounds)%s",
				  what, t->rounds, t->raced ? "" : ": race not reproduced");
		else
			tap_check(t->raced, "%s: race reproduced: the readers swapped in %lld of %d pages themselves, swapoff the rest (%d rounds)%s",
				  what, t->majflt, PAGES, t->rounds, t->raced ? "" : ": race not reproduced");
		leak_watch_check(&w, what);
	}
	munmap(t, sizeof(*t));
}

/* Part 4: khugepaged's swap-in under reclaim's parks; what the child found. */
struct collapse_result {
	int need, done, widened, rounds, collapsed, began, cycle_failed;
	long bad, not_out, not_present;
	long long met, pageouts;	/* parks of try_to_unmap_one met; pager passes */
	char parked[200];		/* every park met, by site */
	char cycle[160];
};

static volatile int collapse_over;

static void *collapser(void *p)
{
	struct collapse_result *c = p;

	pthread_barrier_wait(&bar);
	if (madvise(base, PAGES * PAGE, 25 /* MADV_COLLAPSE */) == 0)
		c->collapsed++;
	__atomic_store_n(&collapse_over, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Pager @k of COLLAPSE_PAGERS, over its own slice of the region, until the
 * collapse returns: MADV_PAGEOUT of the pages that were present, lazily
 * freed and written again (their pattern: a present PTE, no fault) before;
 * then that again. try_to_unmap_one() parks each, finds it redirtied and
 * sets it again: a park at every page, pass after pass, that consumes
 * nothing (a page paged out would lock its folio and end the swap-in with a
 * RETRY, and be gone for the next pass). Only this pager touches its slice, so its own writes
 * never meet its parks.
 */
struct collapse_pager_arg {
	struct collapse_result *c;
	long k;
};

/* MADV_FREE of @pages pages from page @first, then a write of each: lazily freed, redirtied. */
static void collapse_redirty(long first, long pages)
{
	long i;

	madvise(base + first * PAGE, pages * PAGE, MADV_FREE);
	for (i = first; i < first + pages; i++)
		*(volatile uint64_t *)(base + i * PAGE) = MAGIC | i;
}

static void *collapse_pager(void *p)
{
	struct collapse_pager_arg *a = p;
	long slice = (PAGES - COLLAPSE_SWAPPED) / COLLAPSE_PAGERS;
	long first = COLLAPSE_SWAPPED + a->k * slice;

	pthread_barrier_wait(&bar);
	/*
	 * Not before the swap-in has begun (the first page, paged out before,
	 * is back): the collapse's scan before it gives up on a page that
	 * reclaim has isolated.
	 */
	while (!pagemap_present(base, PAGE) && !__atomic_load_n(&collapse_over, __ATOMIC_ACQUIRE))
		sched_yield();
	if (a->k == 0 && pagemap_present(base, PAGE))
		a->c->began++;
	while (!__atomic_load_n(&collapse_over, __ATOMIC_ACQUIRE)) {
		madvise(base + first * PAGE, slice * PAGE, MADV_PAGEOUT);
		__atomic_add_fetch(&a->c->pageouts, 1, __ATOMIC_RELAXED);
		collapse_redirty(first, slice);
	}
	return NULL;
}

static void collapse_child(void *arg)
{
	struct collapse_result *c = arg;
	size_t len = PAGES * PAGE;
	struct parked_mark mark;
	double t0 = now();
	int r;

	/*
	 * A park lasts a few instructions, and the swap-in reads each PTE
	 * once: widened (50 us) from the start where the kernel can
	 * (CONFIG_PFSCALE_RACE_WINDOWS; a widened boot keeps its own).
	 */
	c->widened = c->need && race_windows_widen("50");
	parked_mark(&mark);
	for (r = 0; r < fixed_count(COLLAPSE_ROUNDS) ||
		    (c->need && c->met == 0 && now() - t0 < COLLAPSE_RACE_SECS); r++) {
		struct collapse_pager_arg arg[COLLAPSE_PAGERS];
		pthread_t a, b[COLLAPSE_PAGERS];
		long i, swapped, present;
		int k;

		base = map_one_table();
		fill_paged_out(COLLAPSE_SWAPPED, &swapped, &present);
		c->not_out += COLLAPSE_SWAPPED - swapped;
		/* The pagers' first pass parks at once. */
		collapse_redirty(COLLAPSE_SWAPPED, PAGES - COLLAPSE_SWAPPED);
		/* MADV_COLLAPSE refuses a VM_NOHUGEPAGE range. */
		madvise(base, len, MADV_HUGEPAGE);
		collapse_over = 0;
		pthread_barrier_init(&bar, NULL, COLLAPSE_PAGERS + 1);
		if (pthread_create(&a, NULL, collapser, c))
			tap_bail("pthread_create");
		for (k = 0; k < COLLAPSE_PAGERS; k++) {
			arg[k].c = c;
			arg[k].k = k;
			if (pthread_create(&b[k], NULL, collapse_pager, &arg[k]))
				tap_bail("pthread_create");
		}
		pthread_join(a, NULL);
		for (k = 0; k < COLLAPSE_PAGERS; k++)
			pthread_join(b[k], NULL);
		pthread_barrier_destroy(&bar);
		c->met = parked_since(&mark.sites, "parked_by_unmap");
		for (i = 0; i < PAGES; i++)
			if (*(volatile uint64_t *)(base + i * PAGE) != (MAGIC | i))
				c->bad++;
		if (pagemap_present(base, len) != PAGES)
			c->not_present++;
		munmap(base, len);
	}
	if (c->widened)
		race_windows_off();
	parked_moved(&mark.sites, c->parked, sizeof(c->parked));
	c->rounds = r;
	c->done = 1;
	/* What reclaim left in the swap cache, off the anon LRU level. */
	if (swap_cycle(c->cycle, sizeof(c->cycle)))
		c->cycle_failed = 1;
}

static void collapse_race(void)
{
	struct collapse_result *c = map_shared(sizeof(*c));
	struct parked_sites sites;
	const char *what = "MADV_COLLAPSE's swap-in under MADV_PAGEOUT";
	struct leak_watch w;
	int status;

	parked_sites_read(&sites);
	c->need = sites.n >= 0;
	status = leak_watch_run(&w, collapse_child, c);
	tap_check(status == 0 && c->done && !c->cycle_failed && c->bad == 0 && c->not_out == 0 &&
		  c->not_present == 0,
		  "%s: %d rounds (its first %d pages paged out first; the swap-in began in %d; %lld pager passes over a slice; MADV_COLLAPSE succeeded in %d, the pagers hold what it must isolate): %ld wrong reads after, %ld pages not paged out before, %ld rounds with pages not present after; swapoff/swapon after: %s",
		  what, c->rounds, COLLAPSE_SWAPPED, c->began, c->pageouts, c->collapsed, c->bad,
		  c->not_out, c->not_present, c->cycle);
	if (!c->need)
		tap_check(c->done, "%s: race offered in %d rounds (no parking sites counted in this kernel)",
			  what, c->rounds);
	else
		tap_check(c->met > 0,
			  "%s: race reproduced: __collapse_huge_page_swapin() met %lld PTEs parked by try_to_unmap_one (%d rounds; nothing else faults in the region; every park met: %s)%s%s",
			  what, c->met, c->rounds, c->parked,
			  c->widened ? "; race windows widened to 50 us for it" : "",
			  c->met > 0 ? "" : ": race not reproduced");
	leak_watch_check(&w, what);
	munmap(c, sizeof(*c));
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), r, ok = 1, status;
	long long lost0 = pfscale_counter("swapin_lost"), lost = 0, hits, unmapped;
	char why[160];
	struct reclaim_result *res;
	struct leak_watch w;
	double t0;

	tap_init(argv[0]);
	(void)argc;
	if (access("/sys/block/zram0", F_OK) && !swap_ready()) {
		tap_plan(1);
		tap_skip("kernel without swap (no zram0): nothing to race");
		return tap_exit();
	}
	res = map_shared(sizeof(*res));
	/* swap on; swap-in content; swapin_lost (pfscale only); reclaim I/O,
	 * reclaim content, its leak checks; per taker content, race and leak
	 * checks; the collapse's content, race and leak checks; SwapFree. */
	tap_plan(LEAK_CHECKS + (lost0 >= 0 ? 6 : 5) + NTAKE * (2 + LEAK_CHECKS) + 2 + LEAK_CHECKS);
	if (!tap_check(swap_ready(), "swap is on (SwapTotal %ld kB)", meminfo_kb("SwapTotal")))
		return tap_exit();
	if (n < 4)
		n = 4;
	if (n > 64)
		n = 64;

	t0 = now();
	for (r = 0; r < fixed_count(ROUNDS) || (lost0 >= 0 && lost == 0 && now() - t0 < RACE_SECS); r++) {
		ok &= swapin_round(n, r);
		lost = pfscale_counter("swapin_lost") - lost0;
	}
	tap_check(ok, "%d threads x %d rounds swap in the same %d paged-out pages: content, pagemap, rss, swap",
		  n, r, PAGES);
	if (lost0 >= 0)
		tap_check(lost > 0, "race reproduced: %s path: %lld swap-ins lost the race (swapin_lost, %d rounds)%s",
			  pfscale_path(), lost, r, lost > 0 ? "" : ": race not reproduced");

	res->n = n;
	hits = race_window_hits("parked");
	parked_mark(&parked);
	status = leak_watch_run(&w, reclaim_child, res);
	unmapped = parked_since(&parked.sites, "parked_by_unmap");
	if (hits >= 0)
		hits = race_window_hits("parked") - hits;
	if (status != 0 || !res->done)
		tap_diag("reclaim race child: wait status 0x%x, %s", status,
			 res->done ? "finished" : "did not finish");
	tap_check(res->done && res->passes >= 1 && res->writes > 0 && res->reads > 0,
		  "%d writers racing %lld MADV_PAGEOUT passes (%.1f s, %lld writer passes): pages went out and back in (zram0 writes +%lld, reads +%lld)",
		  n, res->passes, res->secs, res->writer_passes, res->writes, res->reads);
	tap_check(status == 0 && res->done && res->bad == 0 && res->final_bad == 0 && res->swapped == 0 &&
		  res->present == PAGES && res->rss == res->present && res->swap == res->swapped,
		  "%d writers racing reclaim: %ld wrong reads while racing, %ld in the last pass; then %ld present, %ld swapped (want %d, 0), rss %ld, swap %ld",
		  n, res->bad, res->final_bad, res->present, res->swapped, PAGES, res->rss, res->swap);
	if (hits >= 0)
		tap_diag("race window 'parked' delayed %lld times", hits);
	parked_diag("writers racing reclaim", &parked);
	if (lost0 >= 0)
		tap_diag("%s path: %lld faults met a PTE parked by try_to_unmap_one (shown only: see the top; t_hwpoison (c) requires them)",
			 pfscale_path(), unmapped);
	leak_watch_check(&w, "writers racing reclaim");

	take_race(n);
	collapse_race();

	r = swap_cycle(why, sizeof(why));
	tap_check(r == 0 && meminfo_kb("SwapFree") == meminfo_kb("SwapTotal"),
		  "every swap slot free after unmapping: swapoff and swapon of " SWAP_DEV " (%s), SwapFree %ld kB == SwapTotal %ld kB",
		  why, meminfo_kb("SwapFree"), meminfo_kb("SwapTotal"));
	return tap_exit();
}
