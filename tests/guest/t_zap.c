// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing zaps: writer threads keep write-faulting their own slot of
 * every page of a range, reading it back and checking the previous pass's
 * value, while a zapper thread runs MADV_DONTNEED / MADV_FREE / munmap+mmap
 * (MAP_FIXED) / mprotect (toggling PROT_EXEC, so that the protection really
 * changes and change_pte_range() walks the PTEs, plus MADV_DONTNEED of half
 * the range) over it.
 *
 * A slot may read 0 instead of its writer's value only if a zap overlapped
 * the time since the writer wrote it: the zapper counts zaps begun and done,
 * a writer notes "done" before it writes and "begun" after it reads, and a
 * 0 is legal only if begun-after > done-before. Any other value, or a 0
 * with no zap in between, is a lost write. Guard pages (PROT_NONE) around
 * the range keep it from merging with a neighbour, so smaps has its entry.
 * After quiesce smaps' Rss (the RSS counters' view of the range) must
 * equal the pages pagemap shows mapped, the shared zero page apart (a
 * writer's read-back after a zap maps it; Rss does not count it). Where
 * the zap takes pages away (all but MADV_FREE, which only drops them under
 * memory pressure: there a 0 is a lost write), writers must also have
 * seen a zapped write: the modes
 * run until they have (at most RACE_SECS seconds), and "race not
 * reproduced" is a failure of its own.
 */
#include <signal.h>
#include <time.h>
#include "common.h"

#define PAGES 512
#define SECONDS 3
#define RACE_SECS 20
#define FLUSH_EVERY 16	/* pages a writer writes between TLB flushes */

static char *base;
static volatile int stop;
static long bad, zeros, zaps_begun, zaps_done, passes;
static int mode, flush_tlb;
static const char *const modes[] = { "MADV_DONTNEED", "MADV_FREE", "munmap+mmap",
				     "mprotect (PROT_EXEC toggled) + MADV_DONTNEED of half" };

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* What writer @id leaves in page @page in pass @gen (0: never written). */
static uint64_t value(uint64_t gen, long id, long page)
{
	return gen ? (gen << 40) | ((uint64_t)id << 32) | page : 0;
}

/*
 * Is @got, where @want should be, a lost write? A 0 is a zapped write if a
 * zap began (@begun) after @done_before were done; but MADV_FREE without
 * memory pressure drops nothing, so there a 0 is a lost write too.
 */
static void check(uint64_t got, uint64_t want, long begun, long done_before)
{
	if (got == want)
		return;
	if (got == 0 && mode != 1 && begun > done_before)
		__atomic_add_fetch(&zeros, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
}

static void *writer(void *p)
{
	long id = (long)p, i, done_before[PAGES];
	uint64_t gen = 0, v, got;

	for (i = 0; i < PAGES; i++)
		done_before[i] = load(&zaps_done);
	while (!stop) {
		gen++;
		for (i = 0; i < PAGES && !stop; i++) {
			uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;

			/* Still the previous pass's value (or legally zapped)? */
			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			check(got, value(gen - 1, id, i), load(&zaps_begun), done_before[i]);
			/* Write this pass's value and read it back. */
			done_before[i] = load(&zaps_done);
			v = value(gen, id, i);
			__atomic_store_n(slot, v, __ATOMIC_SEQ_CST);
			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			check(got, v, load(&zaps_begun), done_before[i]);
			if (flush_tlb && i % FLUSH_EVERY == FLUSH_EVERY - 1)
				tlb_flush_self();
		}
		__atomic_add_fetch(&passes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *zapper(void *p)
{
	size_t len = PAGES * PAGE;
	int exec = 0;

	(void)p;
	while (!stop) {
		__atomic_add_fetch(&zaps_begun, 1, __ATOMIC_SEQ_CST);
		switch (mode) {
		case 0:
			madvise(base, len, MADV_DONTNEED);
			break;
		case 1:
			madvise(base, len, MADV_FREE);
			break;
		case 2:
			/* Replace the mapping in one step so writers never SEGV. */
			mmap(base, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			madvise(base, len, MADV_NOHUGEPAGE);
			break;
		case 3:
			exec = !exec;
			if (mprotect(base, len, PROT_READ | PROT_WRITE | (exec ? PROT_EXEC : 0)))
				__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
			madvise(base, len / 2, MADV_DONTNEED);
			break;
		}
		__atomic_add_fetch(&zaps_done, 1, __ATOMIC_SEQ_CST);
		usleep(200);
	}
	return NULL;
}

/* One mode's race (the global mode), then the racing process's RSS views. */
static void zap_race(void *np)
{
	int n = *(int *)np, k;
	pthread_t tid[64], zap;
	long present, zero_mapped, rss;
	size_t len = PAGES * PAGE;
	char *guarded;
	char what[64];
	struct tlb_flushers flushers = { 0 };
	long long busy0 = pfscale_counter("busy_pte_fault"), busy;
	double t0;

	/* The sites that flush once per range: make writers walk the tables. */
	flush_tlb = mode == 1 || mode == 3;
	if (flush_tlb)
		tlb_flushers_start(&flushers);
	guarded = map_anon(len + 2 * PAGE);
	mprotect(guarded, PAGE, PROT_NONE);
	mprotect(guarded + PAGE + len, PAGE, PROT_NONE);
	base = guarded + PAGE;
	madvise(base, len, MADV_NOHUGEPAGE);
	bad = zeros = zaps_begun = zaps_done = passes = 0;
	stop = 0;
	t0 = now();
	/*
	 * Until a writer read back a zapped write (which takes a second pass
	 * over a page: a zapped write reads 0 where the previous pass wrote),
	 * or a write was lost; SECONDS at least, RACE_SECS at most.
	 */
	for (k = 0; k < n; k++)
		if (pthread_create(&tid[k], NULL, writer, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&zap, NULL, zapper, NULL))
		tap_bail("pthread_create");
	do
		usleep(100 * 1000);
	while (now() - t0 < RACE_SECS &&
	       (now() - t0 < SECONDS || (mode != 1 && !load(&bad) && !load(&zeros))));
	stop = 1;
	pthread_join(zap, NULL);
	for (k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
	tlb_flushers_stop(&flushers);
	busy = busy0 < 0 ? -1 : pfscale_counter("busy_pte_fault") - busy0;
	tap_diag("%s: %s path: %lld faults met a parked PTE (busy_pte_fault)%s",
		 modes[mode], pfscale_path(), busy, flush_tlb ? ", writers flushing their TLB" : "");
	present = pagemap_rss(base, len);
	zero_mapped = pagemap_present(base, len) - present;
	rss = smaps_rss(base);
	tap_check(bad == 0 && present == rss,
		  "%d writers racing %s (%ld zaps, %ld passes): %ld lost writes, rss %ld == present %ld (+%ld zero page)",
		  n, modes[mode], zaps_done, passes, bad, rss, present, zero_mapped);
	if (mode != 1)
		tap_check(zeros > 0, "race reproduced: writers racing %s read %ld zapped writes back as 0 (%.1f s)%s",
			  modes[mode], zeros, now() - t0,
			  zeros ? "" : ": race not reproduced");
	snprintf(what, sizeof(what), "after the %s races", modes[mode]);
	rss_agree_check(what);
	munmap(guarded, len + 2 * PAGE);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus();

	tap_init(argv[0]);
	(void)argc;
	if (n > 64)
		n = 64;
	/*
	 * Per mode, in a forked child under the leak watch: a content check,
	 * all but MADV_FREE a race check, the RSS views; then the leak checks.
	 */
	tap_plan(4 + 3 + 4 + 4 * LEAK_CHECKS);
	for (mode = 0; mode < 4; mode++)
		leak_watched(modes[mode], zap_race, &n);
	return tap_exit();
}
