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
 *
 * Then the switch flips under the other writers of PTEs: the slot race of
 * common.h over one PTE table while a zapper alternates MADV_DONTNEED and
 * MADV_FREE + MADV_PAGEOUT (zaps and reclaim), or, over a MADV_HUGEPAGE
 * region, a fresh mapping in its place (its PTE table freed, the writers'
 * next fault maps a THP: THP is "always" for that part) and MADV_DONTNEED
 * of its first chunk (a split), or over a region registered with
 * userfaultfd (missing faults filled with the zero page by a filler
 * thread: a uffd-armed VMA's faults take the locked path whatever the
 * switch says), MADV_DONTNEED of all of it. Faults that began on one
 * path finish beside zaps and parks decided under the other. Each part races
 * fixed_secs(3) at least and until the switch flipped both ways with
 * faults on both paths (the locked one alone under userfaultfd), zaps, and
 * a reclaim, a THP split or a filled missing fault seen (RACE_SECS
 * at most); a write lost, or that evidence missing, fails.
 */
#include <time.h>
#include "common.h"

#define PAGES 1024
#define ROUNDS 12
#define SWITCH "/sys/kernel/debug/pfscale/atomic_pte"
#define RACE_SECS 20
#define WIDEN_US "20"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

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

/* ---- the switch flipped under zaps, reclaim and THP splits ---------- */

enum { UNDER_ZAP_RECLAIM, UNDER_THP, UNDER_UFFD, NUNDER };
static const char *const unders[] = { "zaps and reclaim", "THP faults and splits",
				      "userfaultfd missing faults" };
static struct slot_race race;
static int under;
static long reclaims, thp_splits, uffd_fills;
static int uffd = -1;
static volatile int uffd_stop;

/*
 * Fills every missing fault of the registered region with the zero page
 * (what a zapped page reads); a fault on a page filled meanwhile gets
 * EEXIST and a wake.
 */
static void *uffd_filler(void *p)
{
	unsigned long addr;

	(void)p;
	while (!uffd_stop) {
		struct uffdio_zeropage z = { .mode = 0 };

		if (uffd_next_fault(uffd, &addr) <= 0)
			continue;
		z.range.start = addr;
		z.range.len = PAGE;
		if (ioctl(uffd, UFFDIO_ZEROPAGE, &z) == 0)
			__atomic_add_fetch(&uffd_fills, 1, __ATOMIC_RELAXED);
		else if (errno == EEXIST)
			uffd_wake(uffd, addr);
	}
	return NULL;
}

/* The region registered for missing faults, and its filler started. */
static void uffd_start(pthread_t *filler)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	uffd = uffd_open();
	if (uffd < 0)
		tap_bail("userfaultfd");
	reg.range.start = (unsigned long)race.base;
	reg.range.len = race.pages * PAGE;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		tap_bail("UFFDIO_REGISTER");
	if (pthread_create(filler, NULL, uffd_filler, NULL))
		tap_bail("pthread_create");
}

/*
 * MADV_DONTNEED or MADV_FREE of the whole region, or (ZAP_REMAP) a fresh
 * VMA in its place, its PTE table freed so that the next fault maps a THP:
 * a zap of every chunk.
 */
#define ZAP_REMAP (-1)
static void zap_all(int advice)
{
	size_t len = race.pages * PAGE;
	long c;

	for (c = 0; c < race.chunks; c++)
		slot_race_zap_begin(&race, c);
	if (advice == ZAP_REMAP) {
		mmap(race.base, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
		madvise(race.base, len, MADV_HUGEPAGE);
	} else {
		madvise(race.base, len, advice);
	}
	for (c = 0; c < race.chunks; c++)
		slot_race_zap_end(&race, c);
}

static void *under_zapper(void *p)
{
	long round, chunk_len = race.pages / race.chunks * PAGE;

	(void)p;
	for (round = 0; !race.stop; round++) {
		if (under == UNDER_UFFD) {
			zap_all(MADV_DONTNEED);
		} else if (round % 2) {
			zap_all(under == UNDER_THP ? ZAP_REMAP : MADV_DONTNEED);
		} else if (under == UNDER_ZAP_RECLAIM) {
			zap_all(MADV_FREE);
			madvise(race.base, race.pages * PAGE, MADV_PAGEOUT);
			reclaims++;
		} else {
			/* A THP the writers' faults mapped, split by a partial zap. */
			if (smaps_field(race.base, "AnonHugePages") == race.pages)
				thp_splits++;
			slot_race_zap_begin(&race, 0);
			madvise(race.base, chunk_len, MADV_DONTNEED);
			slot_race_zap_end(&race, 0);
		}
		usleep(2000);
	}
	return NULL;
}

static void switching_under(void *unused)
{
	int n = 2 * ncpus(), boot = pfscale_atomic_pte();
	long long locked0 = pfscale_counter("anon_fault_locked");
	long long atomic0 = pfscale_counter("anon_fault_atomic");
	long long locked = 0, atomic = 0;
	const char *name = unders[under];
	pthread_t sw, zap, filler;
	long done;
	double t0;
	int evidence = 0;

	(void)unused;
	if (n > SLOT_RACE_WRITERS)
		n = SLOT_RACE_WRITERS;
	race.base = map_one_table();
	if (under == UNDER_THP)
		madvise(race.base, 2UL << 20, MADV_HUGEPAGE);
	race.pages = 512;
	race.chunks = SLOT_RACE_CHUNKS;
	race.zappable = SLOT_RACE_CHUNKS;
	if (under == UNDER_UFFD)
		uffd_start(&filler);
	t0 = now();
	slot_race_start(&race, n);
	if (pthread_create(&sw, NULL, switcher, NULL) ||
	    pthread_create(&zap, NULL, under_zapper, NULL))
		tap_bail("pthread_create");
	do {
		usleep(100 * 1000);
		locked = pfscale_counter("anon_fault_locked") - locked0;
		atomic = pfscale_counter("anon_fault_atomic") - atomic0;
		done = under == UNDER_ZAP_RECLAIM ? reclaims :
		       under == UNDER_THP ? thp_splits : __atomic_load_n(&uffd_fills, __ATOMIC_RELAXED);
		/* A uffd-armed VMA's faults all take the locked path. */
		evidence = flips >= 2 && locked > 0 && (atomic > 0 || under == UNDER_UFFD) &&
			   slot_race_load(&race.zaps) > 0 && done > 0;
	} while (now() - t0 < RACE_SECS && (now() - t0 < fixed_secs(3) || !evidence));
	stop = 1;
	pthread_join(sw, NULL);
	race.stop = 1;
	pthread_join(zap, NULL);
	slot_race_finish(&race);	/* its reads fault too: the filler runs on */
	if (under == UNDER_UFFD) {
		uffd_stop = 1;
		pthread_join(filler, NULL);
		close(uffd);
	}
	write_file(SWITCH, boot ? "1" : "0");
	if (race.first_bad[0])
		tap_diag("switching under %s: first lost write: %s", name, race.first_bad);
	tap_check(race.bad == 0 && race.final_bad == 0 && race.cross_bad == 0 && race.passes > 0,
		  "switching under %s: %d writers, %ld passes (%.1f s): %ld lost writes while racing, %ld in the last read, %ld read otherwise from another CPU (%ld zapped writes, legal)",
		  name, n, race.passes, now() - t0, race.bad, race.final_bad, race.cross_bad,
		  race.zeros);
	tap_check(evidence,
		  "switching under %s: race reproduced: the switch flipped %ld times (both ways: 2 at least) while faults ran (anon_fault_locked +%lld, anon_fault_atomic +%lld: %s) beside %ld zaps and %ld %s%s",
		  name, flips, locked, atomic,
		  under == UNDER_UFFD ? "the locked path required, the VMA being uffd-armed" :
					"both paths required",
		  race.zaps, done,
		  under == UNDER_ZAP_RECLAIM ? "MADV_FREE + MADV_PAGEOUT reclaims" :
		  under == UNDER_THP ? "THPs split" : "missing faults filled (UFFDIO_ZEROPAGE)",
		  evidence ? "" : ": race not reproduced");
	tap_check(pfscale_atomic_pte() == boot, "switching under %s: the switch is back where it started (%d)",
		  name, boot);
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
	tap_plan(4 + LEAK_CHECKS + NUNDER * (3 + LEAK_CHECKS));
	leak_watched("switching race", switching_race, NULL);
	for (under = 0; under < NUNDER; under++) {
		char what[64], thp[128] = "";

		snprintf(what, sizeof(what), "switching under %s", unders[under]);
		/*
		 * THP "always" for the THP part: the writers fault a fresh
		 * mapping before the zapper's MADV_HUGEPAGE reaches it.
		 */
		if (under == UNDER_THP && read_file(THP_ENABLED, thp, sizeof(thp)) > 0)
			write_file(THP_ENABLED, "always");
		leak_watched(what, switching_under, NULL);
		if (thp[0]) {
			char *sel = strchr(thp, '['), *end = sel ? strchr(sel, ']') : NULL;

			if (end) {
				*end = 0;
				write_file(THP_ENABLED, sel + 1);
			}
		}
	}
	return tap_exit();
}
