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
 * 2. Reclaim racing faults: writer threads keep writing their own slot of
 *    every page and reading it back while another thread pushes the range
 *    out with MADV_PAGEOUT. Nothing is ever discarded, so every read must
 *    return exactly what its writer wrote last. Reclaim (try_to_unmap_one) takes
 *    present PTEs away under the PTE lock; on the atomic path it parks them
 *    (a busy marker, not an empty PTE that a lockless fault could fill), so
 *    a bug there shows as a zero or stale slot. After quiesce, present +
 *    swapped pages must cover the region and match smaps.
 *
 * The swap-in rounds go on past ROUNDS until swapin_lost moved (at most
 * RACE_SECS seconds): "race not reproduced" is a failure of its own.
 *
 * Once the regions are unmapped, SwapFree must be back (no leaked slots),
 * give or take the per-CPU swap slot caches (64 slots each way per CPU);
 * a leak would be at least a region per round.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "common.h"

#define PAGES 512
#define ROUNDS 8
#define SECONDS 3
#define MAGIC 0x5a5a000000000000ULL
#define SLOT_CACHE_KB (2 * 64 * 4)	/* per CPU: SWAP_SLOTS_CACHE_SIZE x 2 */
#define RACE_SECS 20

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *base;
static volatile int stop;
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

/* One round of swap-in races; 1 if content, pagemap and smaps are right. */
static int swapin_round(int n, int round)
{
	size_t len = PAGES * PAGE;
	long i, swapped, present, rss, swap;
	pthread_t tid[64];
	pid_t child;
	int k, ok;

	base = map_anon(len);
	madvise(base, len, MADV_NOHUGEPAGE);
	for (i = 0; i < PAGES; i++)
		*(uint64_t *)(base + i * PAGE) = MAGIC | i;
	if (madvise(base, len, MADV_PAGEOUT))
		tap_bail("MADV_PAGEOUT");
	swapped = pagemap_count(base, len, PM_SWAPPED);
	present = pagemap_present(base, len);
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

/* What writer @id leaves in page @page in pass @gen (0: never written). */
static uint64_t writer_value(uint64_t gen, long id, long page)
{
	return gen ? (gen << 40) | ((uint64_t)id << 32) | page : 0;
}

/*
 * Each pass checks that the slot still holds the previous pass's value (a
 * write lost with a page that reclaim replaced would show here), writes the
 * new one and reads it back.
 */
static void *writer(void *p)
{
	long id = (long)p, i;
	uint64_t gen = 0;

	while (!stop) {
		gen++;
		for (i = 0; i < PAGES && !stop; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;
			uint64_t v = writer_value(gen, id, i);

			if (*slot != writer_value(gen - 1, id, i))
				__sync_fetch_and_add(&bad, 1);
			*slot = v;
			if (*slot != v)
				__sync_fetch_and_add(&bad, 1);
		}
	}
	return NULL;
}

static void *pager(void *p)
{
	long long *passes = p;

	while (!stop) {
		madvise(base, PAGES * PAGE, MADV_PAGEOUT);
		(*passes)++;
		usleep(500);
	}
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

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), r, ok = 1;
	long long lost0 = pfscale_counter("swapin_lost"), lost = 0, busy, pageouts = 0;
	long long reads, writes, reads_after, writes_after;
	long swap_free = meminfo_kb("SwapFree"), present, swapped, rss, swap;
	size_t len = PAGES * PAGE;
	double t0;

	tap_init(argv[0]);
	(void)argc;
	if (access("/sys/block/zram0", F_OK) && !swap_ready()) {
		tap_plan(1);
		tap_skip("kernel without swap (no zram0): nothing to race");
		return tap_exit();
	}
	/* swap on, swap-in content, swapin_lost (pfscale only), reclaim I/O,
	 * reclaim content, SwapFree. */
	tap_plan(lost0 >= 0 ? 6 : 5);
	if (!tap_check(swap_ready(), "swap is on (SwapTotal %ld kB)", meminfo_kb("SwapTotal")))
		return tap_exit();
	if (n < 4)
		n = 4;
	if (n > 64)
		n = 64;

	t0 = now();
	for (r = 0; r < ROUNDS || (lost0 >= 0 && lost == 0 && now() - t0 < RACE_SECS); r++) {
		ok &= swapin_round(n, r);
		lost = pfscale_counter("swapin_lost") - lost0;
	}
	tap_check(ok, "%d threads x %d rounds swap in the same %d paged-out pages: content, pagemap, rss, swap",
		  n, r, PAGES);
	if (lost0 >= 0)
		tap_check(lost > 0, "race reproduced: %s path: %lld swap-ins lost the race (swapin_lost, %d rounds)%s",
			  pfscale_path(), lost, r, lost > 0 ? "" : ": race not reproduced");

	busy = pfscale_counter("busy_pte_fault");
	zram_io(&reads, &writes);
	base = map_anon(len);
	madvise(base, len, MADV_NOHUGEPAGE);
	bad = 0;
	run_against(n, writer, pager, &pageouts, SECONDS, &stop);
	zram_io(&reads_after, &writes_after);
	present = pagemap_present(base, len);
	swapped = pagemap_count(base, len, PM_SWAPPED);
	rss = smaps_rss(base);
	swap = smaps_field(base, "Swap");
	tap_check(reads >= 0 && writes_after > writes && reads_after > reads,
		  "%d writers racing %lld MADV_PAGEOUT passes: pages went out and back in (zram0 writes +%lld, reads +%lld)",
		  n, pageouts, writes_after - writes, reads_after - reads);
	tap_check(bad == 0 && present + swapped == PAGES && rss == present && swap == swapped,
		  "%d writers racing reclaim: %ld wrong reads, %ld present + %ld swapped == %d, rss %ld, swap %ld",
		  n, bad, present, swapped, PAGES, rss, swap);
	if (busy >= 0)
		tap_diag("%s path: %lld faults found a parked PTE (busy_pte_fault)",
			 pfscale_path(), pfscale_counter("busy_pte_fault") - busy);
	munmap(base, len);

	tap_check(labs(meminfo_kb("SwapFree") - swap_free) <= SLOT_CACHE_KB * ncpus(),
		  "SwapFree back to its level after unmapping (%ld kB -> %ld kB)",
		  swap_free, meminfo_kb("SwapFree"));
	return tap_exit();
}
