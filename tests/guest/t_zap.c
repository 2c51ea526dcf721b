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
 * memory pressure), writers must also have seen a zapped write: the modes
 * run until they have (at most RACE_SECS seconds), and "race not
 * reproduced" is a failure of its own.
 */
#include <signal.h>
#include <time.h>
#include "common.h"

#define PAGES 512
#define SECONDS 3
#define RACE_SECS 20

static char *base;
static volatile int stop;
static long bad, zeros, zaps_begun, zaps_done;
static int mode;
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

static void *writer(void *p)
{
	long id = (long)p, i, done_before[PAGES], b;
	uint64_t gen = 0, v, got;

	for (i = 0; i < PAGES; i++)
		done_before[i] = load(&zaps_done);
	while (!stop) {
		gen++;
		for (i = 0; i < PAGES && !stop; i++) {
			uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;

			/* Still the previous pass's value (or legally zapped)? */
			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			b = load(&zaps_begun);
			if (got == 0 && b > done_before[i])
				__atomic_add_fetch(&zeros, 1, __ATOMIC_RELAXED);
			else if (got != value(gen - 1, id, i))
				__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
			/* Write this pass's value and read it back. */
			done_before[i] = load(&zaps_done);
			v = value(gen, id, i);
			__atomic_store_n(slot, v, __ATOMIC_SEQ_CST);
			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			b = load(&zaps_begun);
			if (got == 0 && b > done_before[i])
				__atomic_add_fetch(&zeros, 1, __ATOMIC_RELAXED);
			else if (got != v)
				__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
		}
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
	int n = *(int *)np, runs;
	long present, zero_mapped, rss;
	size_t len = PAGES * PAGE;
	char *guarded;
	char what[64];
	double t0;

	guarded = map_anon(len + 2 * PAGE);
	mprotect(guarded, PAGE, PROT_NONE);
	mprotect(guarded + PAGE + len, PAGE, PROT_NONE);
	base = guarded + PAGE;
	madvise(base, len, MADV_NOHUGEPAGE);
	bad = zeros = zaps_begun = zaps_done = 0;
	t0 = now();
	runs = 0;
	do {
		/* Writers start from pass 0: every slot 0. */
		madvise(base, len, MADV_DONTNEED);
		run_against(n, writer, zapper, NULL, SECONDS, &stop);
		runs++;
	} while (mode != 1 && !bad && !zeros && now() - t0 < RACE_SECS);
	present = pagemap_rss(base, len);
	zero_mapped = pagemap_present(base, len) - present;
	rss = smaps_rss(base);
	tap_check(bad == 0 && present == rss,
		  "%d writers racing %s (%ld zaps): %ld lost writes, rss %ld == present %ld (+%ld zero page)",
		  n, modes[mode], zaps_done, bad, rss, present, zero_mapped);
	if (mode != 1)
		tap_check(zeros > 0, "race reproduced: writers racing %s saw %ld writes zapped (%d runs, %.1f s)%s",
			  modes[mode], zeros, runs, now() - t0,
			  zeros ? "" : ": race not reproduced");
	else
		tap_diag("MADV_FREE: %ld writes zapped (none expected without memory pressure)",
			 zeros);
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
