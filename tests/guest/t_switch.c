// SPDX-License-Identifier: GPL-2.0
/*
 * Switch the fault path (debugfs atomic_pte) back and forth while threads
 * write-fault the same fresh pages: faults on the locked and the atomic path
 * then race for the same PTEs, which is what set_pte_if_none() and the
 * compare-and-set populates are for. Content, pagemap and RSS must be right
 * and the switch must end where it started.
 */
#include "common.h"

#define PAGES 1024
#define ROUNDS 12
#define SWITCH "/sys/kernel/debug/pfscale/atomic_pte"

struct arg {
	char *base;
	int id, round;
	pthread_barrier_t *bar;
};

static volatile int stop;
static long flips;

static void *writer(void *p)
{
	struct arg *a = p;
	long i;

	pthread_barrier_wait(a->bar);
	for (i = 0; i < PAGES; i++)
		((volatile uint64_t *)(a->base + i * PAGE))[a->id] =
			((uint64_t)(a->round + 1) << 48) | ((uint64_t)a->id << 32) | i;
	return NULL;
}

static void *switcher(void *p)
{
	(void)p;
	while (!stop) {
		if (write_file(SWITCH, flips & 1 ? "0" : "1"))
			break;
		flips++;
		usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), boot = pfscale_atomic_pte(), r, k, ok = 1;
	long long lost0 = pfscale_counter("locked_cmpxchg_lost");
	size_t len = PAGES * PAGE;
	struct arg args[256];
	pthread_barrier_t bar;
	pthread_t sw;
	struct team t;
	long bad, i, present, rss;

	tap_init(argv[0]);
	(void)argc;
	if (boot < 0) {
		tap_skip("switching the fault path under load (no atomic_pte in this kernel)");
		return tap_exit();
	}
	if (n < 4)
		n = 4;
	if (pthread_create(&sw, NULL, switcher, NULL))
		tap_bail("pthread_create");
	for (r = 0; r < ROUNDS && ok; r++) {
		char *base = map_anon(len);

		madvise(base, len, MADV_NOHUGEPAGE);
		pthread_barrier_init(&bar, NULL, n);
		for (k = 0; k < n; k++)
			args[k] = (struct arg){ base, k, r, &bar };
		team_start(&t, n, writer, args, sizeof(args[0]));
		team_join(&t);
		pthread_barrier_destroy(&bar);
		bad = 0;
		for (i = 0; i < PAGES; i++)
			for (k = 0; k < n; k++)
				if (((uint64_t *)(base + i * PAGE))[k] !=
				    (((uint64_t)(r + 1) << 48) | ((uint64_t)k << 32) | i))
					bad++;
		present = pagemap_present(base, len);
		rss = smaps_rss(base);
		if (bad || present != PAGES || rss != PAGES) {
			tap_diag("round %d: %ld bad slots, %ld present, rss %ld (want %d)",
				 r, bad, present, rss, PAGES);
			ok = 0;
		}
		munmap(base, len);
	}
	stop = 1;
	pthread_join(sw, NULL);
	write_file(SWITCH, boot ? "1" : "0");
	tap_diag("%ld switches; locked_cmpxchg_lost +%lld", flips,
		 pfscale_counter("locked_cmpxchg_lost") - lost0);
	tap_check(ok && flips > ROUNDS, "%d threads x %d rounds fault the same pages while the path switches (%ld times): content, pagemap, rss",
		  n, ROUNDS, flips);
	tap_check(pfscale_atomic_pte() == boot, "the switch is back where it started (%d)", boot);
	return tap_exit();
}
