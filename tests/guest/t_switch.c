// SPDX-License-Identifier: GPL-2.0
/*
 * Switch the fault path (debugfs atomic_pte) back and forth while threads
 * write-fault the same fresh pages: faults on the locked and the atomic path
 * then race for the same PTEs, which is what set_pte_if_none() and the
 * compare-and-set populates are for. Content, pagemap and RSS must be right
 * and the switch must end where it started. And a locked-path fault must
 * have lost its set_pte_if_none() to an atomic-path install
 * (locked_cmpxchg_lost): rounds go on past ROUNDS until it moved, at most
 * RACE_SECS seconds, and "race not reproduced" is a failure of its own.
 * The window (the locked path's recheck to its set_pte_if_none()) is a few
 * instructions: if half that time passes without a loss and the kernel can
 * widen its race windows (race_window_us), the test widens them for the
 * rest of its rounds, and says so.
 * It is the only test whose locked-path losers back out, so it runs in a
 * forked child under the exact leak watch (leak_watched()): a loser that
 * skipped its rmap removal or its put_page() would leave the anon LRU or
 * AnonPages above their level.
 */
#include <time.h>
#include "common.h"

#define PAGES 1024
#define ROUNDS 12
#define SWITCH "/sys/kernel/debug/pfscale/atomic_pte"
#define RACE_SECS 20
#define WIDEN_US "20"

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

/*
 * Whether this kernel runs the generic lock-taking table operations
 * (CONFIG_PFSCALE_GENERIC_TABLE_OPS, make test-generic): only that build
 * has the out-of-line ptep_cmpxchg_locked() (mm/pgtable-generic.c). There
 * the race this test asserts cannot happen. Keyed on the build, not on a
 * command line any boot can be given.
 */
static int generic_table_ops(void)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		tap_bail("/proc/kallsyms");
	while (!found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		found = name && !strcmp(name + 1, "ptep_cmpxchg_locked\n");
	}
	fclose(f);
	return found;
}

static void switching_race(void *unused)
{
	int n = 2 * ncpus(), boot = pfscale_atomic_pte(), r, ok = 1;
	long long lost0 = pfscale_counter("locked_cmpxchg_lost");
	long long moved = 0;
	pthread_t sw;
	double t0;
	int widened = 0;

	(void)unused;
	if (n < 4)
		n = 4;
	if (pthread_create(&sw, NULL, switcher, NULL))
		tap_bail("pthread_create");
	t0 = now();
	for (r = 0; ok && (r < ROUNDS || (moved == 0 && now() - t0 < RACE_SECS)); r++) {
		/* slot_value() keeps 16 bits of round: plenty. */
		ok = race_round(PAGES, n, r, MADV_NOHUGEPAGE);
		moved = pfscale_counter("locked_cmpxchg_lost") - lost0;
		if (!moved && !widened && now() - t0 > RACE_SECS / 2 && race_windows_widen(WIDEN_US))
			widened = 1;
	}
	if (widened)
		race_windows_off();
	stop = 1;
	pthread_join(sw, NULL);
	write_file(SWITCH, boot ? "1" : "0");
	tap_check(ok && flips > ROUNDS, "%d threads x %d rounds fault the same pages while the path switches (%ld times): content, pagemap, rss",
		  n, r, flips);
	tap_check(pfscale_atomic_pte() == boot, "the switch is back where it started (%d)", boot);
	if (generic_table_ops())
		tap_skip("race reproduced: %lld (generic table operations: every install takes the PTE lock, so a locked install cannot lose)",
			 moved);
	else
		tap_check(moved > 0, "race reproduced: a locked-path fault lost its set_pte_if_none() to an atomic install (locked_cmpxchg_lost +%lld in %d rounds, %.1f s%s%s)",
		  moved, r, now() - t0, widened ? ", race windows widened to " WIDEN_US " us after half of it" : "",
		  moved > 0 ? "" : ": race not reproduced");
	rss_agree_check("after the switching race");
}

int main(int argc, char **argv)
{
	tap_init(argv[0]);
	(void)argc;
	if (pfscale_atomic_pte() < 0) {
		tap_plan(1);
		tap_skip("switching the fault path under load (no atomic_pte in this kernel)");
		return tap_exit();
	}
	tap_plan(4 + LEAK_CHECKS);
	leak_watched("switching race", switching_race, NULL);
	return tap_exit();
}
