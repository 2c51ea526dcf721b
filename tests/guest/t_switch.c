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

static volatile int stop;
static long flips;

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
	int n = 2 * ncpus(), boot = pfscale_atomic_pte(), r, ok = 1;
	long long lost0 = pfscale_counter("locked_cmpxchg_lost");
	pthread_t sw;

	tap_init(argv[0]);
	(void)argc;
	if (boot < 0) {
		tap_plan(1);
		tap_skip("switching the fault path under load (no atomic_pte in this kernel)");
		return tap_exit();
	}
	tap_plan(2);
	if (n < 4)
		n = 4;
	if (pthread_create(&sw, NULL, switcher, NULL))
		tap_bail("pthread_create");
	for (r = 0; r < ROUNDS && ok; r++)
		ok = race_round(PAGES, n, r, MADV_NOHUGEPAGE);
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
