// SPDX-License-Identifier: GPL-2.0
/*
 * Read faults (which map the shared zero page) race write faults on the same
 * fresh pages: half the threads read every page, half write their own slot of
 * it. A reader must only ever see 0 or the value its writer put in that slot;
 * afterwards every slot holds its writer's value, every page is present as
 * an anonymous page (a write after a zero-page read COWs it), RSS equals the
 * region, and a race over the zero page was lost and counted: a read
 * fault that was mapping the zero page lost to a write (zero_*_lost), or a
 * write fault's COW of the zero page lost (wp_copy_lost). Writer against
 * writer losses (anon_*_lost, pte_fault_same_lost) are printed but are not
 * this test's race. Rounds go on past ROUNDS until a zero-page race was
 * lost (at most RACE_SECS seconds), and "race not reproduced" is a failure
 * of its own.
 */
#include <time.h>
#include "common.h"

#define PAGES 2048
#define ROUNDS 4
#define RACE_SECS 20

#define NLOSSES 6
#define ZERO_LOSSES 3	/* the first ones: races over the zero page */
static const char *const losses[NLOSSES] = {
	"zero_pte_recheck_lost", "zero_cmpxchg_lost", "wp_copy_lost",
	"anon_pte_recheck_lost", "anon_cmpxchg_lost", "pte_fault_same_lost",
};

/* Zero-page races lost since @before. */
static long long zero_moved_since(const long long *before)
{
	long long moved = 0;
	unsigned int j;

	for (j = 0; j < ZERO_LOSSES; j++)
		moved += pfscale_counter(losses[j]) - before[j];
	return moved;
}

struct arg {
	char *base;
	int id, writers, round;
	long bad;
	pthread_barrier_t *bar;
};

static void *worker(void *p)
{
	struct arg *a = p;
	long i;
	int k;

	pthread_barrier_wait(a->bar);
	for (i = 0; i < PAGES; i++) {
		volatile uint64_t *pg = (volatile uint64_t *)(a->base + i * PAGE);

		if (a->id < a->writers) {
			pg[a->id] = slot_value(a->round, a->id, i);
			continue;
		}
		for (k = 0; k < a->writers; k++) {
			uint64_t v = pg[k];

			if (v && v != slot_value(a->round, k, i))
				a->bad++;
		}
	}
	return NULL;
}

static void zero_race(void *unused)
{
	int n = 2 * ncpus(), writers, r, k;
	long long before[NLOSSES], moved;
	long bad_reads = 0, bad = 0, present, rss;
	size_t len = PAGES * PAGE;
	struct arg args[256];
	pthread_barrier_t bar;
	struct team t;
	unsigned int j;
	int ok = 1;
	double t0;

	(void)unused;
	if (n < 4)
		n = 4;
	writers = n / 2;
	for (j = 0; j < NLOSSES; j++)
		before[j] = pfscale_counter(losses[j]);
	t0 = now();
	for (r = 0; ok && (r < fixed_count(ROUNDS) || (before[0] >= 0 && zero_moved_since(before) == 0 &&
					  now() - t0 < RACE_SECS)); r++) {
		char *base = map_anon(len);

		madvise(base, len, MADV_NOHUGEPAGE);
		pthread_barrier_init(&bar, NULL, n);
		for (k = 0; k < n; k++)
			args[k] = (struct arg){ base, k, writers, r, 0, &bar };
		team_start(&t, n, worker, args, sizeof(args[0]));
		team_join(&t);
		pthread_barrier_destroy(&bar);
		for (k = 0; k < n; k++)
			bad_reads += args[k].bad;
		bad += bad_slots(base, PAGES, writers, r);
		present = pagemap_present(base, len);
		rss = smaps_rss(base);
		if (bad_reads || bad || present != PAGES || rss != PAGES) {
			tap_diag("round %d: %ld bad reads, %ld bad slots, %ld present, rss %ld (want %d)",
				 r, bad_reads, bad, present, rss, PAGES);
			ok = 0;
		}
		munmap(base, len);
	}
	tap_check(ok, "%d readers race %d writers on %d fresh pages x %d rounds: reads, content, rss",
		  n - writers, writers, PAGES, r);
	rss_agree_check("after the zero-page races");
	if (before[0] < 0) {
		tap_skip("zero-page races counted (no pfscale counters in this kernel)");
		return;
	}
	for (j = 0; j < NLOSSES; j++) {
		long long d = pfscale_counter(losses[j]) - before[j];

		if (d)
			tap_diag("%s +%lld%s", losses[j], d,
				 j < ZERO_LOSSES ? "" : " (writer against writer: not counted)");
	}
	moved = zero_moved_since(before);
	tap_check(moved > 0, "race reproduced: %s path: races over the zero page were lost and counted (zero_*_lost + wp_copy_lost: %lld in %d rounds)%s",
		  pfscale_path(), moved, r, moved > 0 ? "" : ": race not reproduced");
}

int main(int argc, char **argv)
{
	tap_init(argv[0]);
	(void)argc;
	/* content; RSS; losses counted (or its skip); then the leak checks:
	 * the race runs in a forked child. */
	tap_plan(3 + LEAK_CHECKS);
	leak_watched("zero-page races", zero_race, NULL);
	return tap_exit();
}
