// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing zaps: the slot race of common.h (writer threads exchange
 * their own slot of every page for this pass's value, a write access first,
 * check what it held and read it back; a 0 is legal only in what a zap
 * drops, and only if a zap of it began after the write) while a zapper
 * thread runs MADV_DONTNEED / MADV_FREE / munmap+mmap (MAP_FIXED) /
 * mprotect (toggling PROT_EXEC, so that the protection really changes and
 * change_pte_range() walks the PTEs, plus MADV_DONTNEED of the first half)
 * over the range. MADV_FREE drops nothing without memory pressure: there a
 * 0 is a lost write. Guard pages (PROT_NONE) around the range keep it from
 * merging with a neighbour, so smaps has its entry. After quiesce smaps'
 * Rss (smaps' own walk of the page tables) must equal the pages pagemap
 * shows mapped, the shared zero page apart, and the mm's RSS counters must
 * agree with the page tables (rss_agree_check()). Where the zap takes pages
 * away, writers must also have read a zapped write back as 0 (a second pass
 * over a page): each mode races until they have (SECONDS at least,
 * RACE_SECS at most), and "race not reproduced" is a failure of its own.
 * MADV_FREE's writers flush their TLB every FLUSH_EVERY pages (the site
 * flushes once, after the range; see tlb_flushers_start()), and race until
 * a fault met a PTE that madvise_free_pte_range() parked (its
 * parked_by_madvise_free counter: the parking site is in the marker).
 * mprotect holds mmap_lock for writing: no fault runs inside its
 * change_pte_range().
 *
 * MADV_FREE + reclaim: the zapper marks the range lazily freed (a zap: a
 * page written before it may read 0 afterwards), then MADV_PAGEOUT
 * reclaims it, outside the zap: try_to_unmap_one() parks each PTE and
 * discards a lazily freed page nobody wrote since (its writes read 0
 * later, legally), or, when a writer dirtied it after MADV_FREE, restores
 * the PTE over the park and makes the page swap-backed again; a write made
 * after MADV_FREE returned must never read 0. Writers write the second
 * half of the pages only every SPARSE_EVERY passes, so that reclaim finds
 * some of them clean. Evidence of both branches, from every other round's
 * snapshot of the pages lazily freed just before MADV_PAGEOUT (pagemap,
 * kpageflags): pages unmapped after it (discarded; and writes read back 0,
 * which only a discard explains here: NUMA balancing may migrate a page,
 * with its contents), and pages at the same PFN, swap-backed again
 * (restored). Faults that met try_to_unmap_one()'s park are shown, not
 * required (reclaim defers its TLB flush: see t_swap).
 */
#include <signal.h>
#include <time.h>
#include <linux/kernel-page-flags.h>
#include "common.h"

#define PAGES 512
#define SECONDS 3
#define RACE_SECS 20
#define FLUSH_EVERY 16	/* pages a writer writes between TLB flushes */
#define SPARSE_EVERY 256	/* MADV_FREE + reclaim: passes per write, second half */

static struct slot_race race;

static long mprotect_errors;
static int mode;
static const char *const modes[] = { "MADV_DONTNEED", "MADV_FREE", "munmap+mmap",
				     "mprotect (PROT_EXEC toggled) + MADV_DONTNEED of half",
				     "MADV_FREE + MADV_PAGEOUT" };
#define NMODES ((int)(sizeof(modes) / sizeof(modes[0])))
#define MODE_FREE_RECLAIM 4

/* MADV_FREE + reclaim: lazily freed pages reclaim discarded and restored. */
static long discarded, restored, snapshots;

/*
 * Each page's PFN if it is mapped and lazily freed (an anonymous page no
 * longer swap-backed), else 0; with @before, count the pages of @before
 * that reclaim discarded (unmapped now) and restored (mapped at the same
 * PFN, swap-backed again).
 */
static void lazy_pages(char *base, uint64_t *pfn, const uint64_t *before)
{
	static uint64_t e[PAGES];
	int pm = open("/proc/self/pagemap", O_RDONLY), kpf = open("/proc/kpageflags", O_RDONLY);
	long i;
	uint64_t f;

	if (pm < 0 || kpf < 0 ||
	    pread(pm, e, sizeof(e), (uintptr_t)base / PAGE * 8) != sizeof(e))
		tap_bail("lazy_pages: pagemap, kpageflags");
	for (i = 0; i < PAGES; i++) {
		uint64_t p = (e[i] & PM_PRESENT) ? e[i] & PM_PFN : 0;

		f = 0;
		if (p && pread(kpf, &f, 8, p * 8) != 8)
			tap_bail("pread kpageflags");
		if (!before)
			pfn[i] = (f & (1ULL << KPF_ANON)) && !(f & (1ULL << KPF_SWAPBACKED)) ? p : 0;
		else if (before[i] && !p)
			__atomic_add_fetch(&discarded, 1, __ATOMIC_RELAXED);
		else if (before[i] && p == before[i] && (f & (1ULL << KPF_SWAPBACKED)))
			__atomic_add_fetch(&restored, 1, __ATOMIC_RELAXED);
	}
	close(pm);
	close(kpf);
}

/*
 * MADV_FREE (a zap), then reclaim. MADV_PAGEOUT of a page outside the
 * range first drains this CPU's lazy-free batch (lru_add_drain()), so the
 * snapshot sees the pages MADV_FREE marked.
 */
static void free_and_reclaim(char *base, size_t len, char *drain)
{
	static uint64_t lazy[PAGES];
	int snapshot = race.zaps % 2;

	slot_race_zap_begin(&race, 0);
	madvise(base, len, MADV_FREE);
	slot_race_zap_end(&race, 0);
	if (snapshot) {
		madvise(drain, PAGE, MADV_PAGEOUT);
		lazy_pages(base, lazy, NULL);
	}
	madvise(base, len, MADV_PAGEOUT);
	if (snapshot) {
		lazy_pages(base, NULL, lazy);
		snapshots++;
	}
}

/* The zap of each mode, between the zap generations of what it drops. */
static void *zapper(void *p)
{
	size_t len = PAGES * PAGE;
	char *base = race.base, *drain = p;
	int exec = 0;

	while (!race.stop) {
		switch (mode) {
		case 0:
			slot_race_zap_begin(&race, 0);
			madvise(base, len, MADV_DONTNEED);
			slot_race_zap_end(&race, 0);
			break;
		case 1:
			/* Drops nothing without memory pressure: no chunk may read 0. */
			madvise(base, len, MADV_FREE);
			race.zaps++;
			break;
		case 2:
			/* Replace the mapping in one step so writers never SEGV. */
			slot_race_zap_begin(&race, 0);
			mmap(base, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			madvise(base, len, MADV_NOHUGEPAGE);
			slot_race_zap_end(&race, 0);
			break;
		case 3:
			/* Chunk 0 is the half that MADV_DONTNEED drops. */
			exec = !exec;
			slot_race_zap_begin(&race, 0);
			if (mprotect(base, len, PROT_READ | PROT_WRITE | (exec ? PROT_EXEC : 0)))
				mprotect_errors++;
			madvise(base, len / 2, MADV_DONTNEED);
			slot_race_zap_end(&race, 0);
			break;
		case MODE_FREE_RECLAIM:
			free_and_reclaim(base, len, drain);
			break;
		}
		usleep(200);
	}
	return NULL;
}

/* One mode's race (the global mode), then the racing process's RSS views. */
static void zap_race(void *np)
{
	int n = *(int *)np, flush = mode == 1 || mode == MODE_FREE_RECLAIM;
	long present, zero_mapped, rss;
	size_t len = PAGES * PAGE;
	char *guarded;
	char what[128];
	struct tlb_flushers flushers = { 0 };
	struct parked_mark parked;
	long long freed;
	char *drain = map_anon(PAGE);
	pthread_t zap;
	double t0;

	/* MADV_FREE flushes once, after the range: make writers walk the tables. */
	if (flush)
		tlb_flushers_start(&flushers);
	guarded = map_anon(len + 2 * PAGE);
	mprotect(guarded, PAGE, PROT_NONE);
	mprotect(guarded + PAGE + len, PAGE, PROT_NONE);
	race.base = guarded + PAGE;
	madvise(race.base, len, MADV_NOHUGEPAGE);
	race.pages = PAGES;
	race.chunks = mode == 3 ? 2 : 1;
	race.zappable = mode == 1 ? 0 : 1;
	race.flush_every = flush ? FLUSH_EVERY : 0;
	race.sparse_every = mode == MODE_FREE_RECLAIM ? SPARSE_EVERY : 0;
	mprotect_errors = 0;
	drain[0] = 1;
	parked_mark(&parked);
	t0 = now();
	slot_race_start(&race, n);
	if (pthread_create(&zap, NULL, zapper, drain))
		tap_bail("pthread_create");
	/*
	 * Until a writer read back a zapped write (which takes a second pass
	 * over a page: a zapped write reads 0 where the previous pass wrote),
	 * under MADV_FREE until a fault met a PTE MADV_FREE parked, or a write
	 * was lost;
	 * SECONDS at least, RACE_SECS at most.
	 */
	do
		usleep(100 * 1000);
	while (now() - t0 < RACE_SECS &&
	       (now() - t0 < fixed_secs(SECONDS) ||
		(!slot_race_load(&race.bad) &&
		 !(mode == 1 ? parked_since(&parked.sites, "parked_by_madvise_free") != 0 :
		   mode == MODE_FREE_RECLAIM ? slot_race_load(&race.zeros) > 0 &&
					       slot_race_load(&discarded) > 0 &&
					       slot_race_load(&restored) > 0 :
			       slot_race_load(&race.zeros) > 0))));
	race.stop = 1;
	pthread_join(zap, NULL);
	slot_race_finish(&race);
	tlb_flushers_stop(&flushers);
	freed = parked_since(&parked.sites, "parked_by_madvise_free");
	if (race.first_bad[0])
		tap_diag("%s: first lost write: %s", modes[mode], race.first_bad);
	present = pagemap_rss(race.base, len);
	zero_mapped = pagemap_present(race.base, len) - present;
	rss = smaps_rss(race.base);
	tap_check(race.bad == 0 && race.final_bad == 0 && race.cross_bad == 0 &&
		  mprotect_errors == 0 && present == rss,
		  "%d writers racing %s (%ld zaps, %ld passes): %ld lost writes, %ld in the last read, %ld read otherwise from another CPU, %ld failed mprotects; rss %ld == present %ld (+%ld zero page)",
		  n, modes[mode], race.zaps, race.passes, race.bad, race.final_bad,
		  race.cross_bad, mprotect_errors, rss, present, zero_mapped);
	if (mode == MODE_FREE_RECLAIM) {
		tap_check(discarded > 0 && race.zeros > 0,
			  "race reproduced: reclaim discarded %ld clean lazily freed pages under %d writers (%ld rounds looked), %ld writes read back 0 (%.1f s)%s",
			  discarded, n, snapshots, race.zeros, now() - t0,
			  discarded > 0 && race.zeros > 0 ? "" : ": race not reproduced");
		tap_check(restored > 0,
			  "race reproduced: reclaim restored %ld lazily freed pages redirtied after MADV_FREE under %d writers (same PFN, swap-backed again; %ld rounds looked) (%.1f s)%s",
			  restored, n, snapshots, now() - t0, restored ? "" : ": race not reproduced");
		tap_diag("%s: %lld faults met a PTE parked by try_to_unmap_one (%s path; writers flushed their TLB %ld times)",
			 modes[mode], parked_since(&parked.sites, "parked_by_unmap"), pfscale_path(),
			 flushers.flushes);
	} else if (mode != 1)
		tap_check(race.zeros > 0, "race reproduced: writers racing %s read %ld zapped writes back as 0 (%.1f s)%s",
			  modes[mode], race.zeros, now() - t0,
			  race.zeros ? "" : ": race not reproduced");
	else if (freed < 0)
		tap_skip("race reproduced: writers flushing their TLB racing MADV_FREE met a PTE it parked (no pfscale counters in this kernel)");
	else
		tap_check(freed > 0 && flushers.flushes > 0,
			  "race reproduced: writers flushing their TLB (%ld times, %ld yields without a flush) racing MADV_FREE: %lld faults met a PTE parked by madvise_free_pte_range (%s path; %.1f s)%s",
			  flushers.flushes, flushers.misses, freed, pfscale_path(), now() - t0,
			  freed > 0 && flushers.flushes ? "" : ": race not reproduced");
	parked_diag(modes[mode], &parked);
	snprintf(what, sizeof(what), "after the %s races", modes[mode]);
	rss_agree_check(what);
	munmap(guarded, len + 2 * PAGE);
	munmap(drain, PAGE);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus();

	tap_init(argv[0]);
	(void)argc;
	if (n > SLOT_RACE_WRITERS)
		n = SLOT_RACE_WRITERS;
	/*
	 * Per mode, in a forked child under the leak watch: a content check,
	 * a race check (two for MADV_FREE + reclaim), the RSS views; then the
	 * leak checks.
	 */
	tap_plan(NMODES + NMODES + 1 + NMODES + NMODES * LEAK_CHECKS);
	for (mode = 0; mode < NMODES; mode++)
		leak_watched(modes[mode], zap_race, &n);
	return tap_exit();
}
