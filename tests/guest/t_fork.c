// SPDX-License-Identifier: GPL-2.0
/*
 * fork (COW) while other threads fault: the parent's threads keep faulting
 * fresh pages and writing their slots while the main thread forks. Each
 * child checks that a region written before the fork holds exactly what was
 * written, writes to it (COW) and exits; the parent checks it is unchanged.
 * The faulting threads check their own writes too: each pass finds the
 * previous pass's value in its slot (a write that fork's write-protection
 * and the COW that followed lost would show), unless a zap came in between:
 * every fourth pass a thread zaps the region (MADV_DONTNEED) for fresh
 * faults, counting zaps begun and done, and a 0 is legal only if a zap
 * began after the thread noted the zaps done before its write.
 * All of it runs in a forked child under the exact leak watch
 * (leak_watched()): fork's COW copies and the losers among the faults must
 * leave nothing behind. The race is the COW's: while a child shares the
 * pages, a faulting thread's write copies one (wp_page_copy() parks the
 * PTE meanwhile) as another thread writes the same page; the forks go on
 * past FORKS, for at most RACE_SECS, until a fault met a PTE that
 * wp_page_copy() parked (parked_by_wp_page_copy: the site is in the marker).
 */
#include <sys/wait.h>
#include "common.h"

#define PAGES 256
#define FORKS 40
#define RACE_SECS 20

static char *stable, *churn;
static volatile int stop;
static long zaps_begun, zaps_done, churn_bad, churn_passes;

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* What faulter @id leaves in page @page in pass @pass (0: never written). */
static uint64_t value(uint64_t pass, long id, long page)
{
	return pass ? (pass << 40) | ((uint64_t)id << 32) | page : 0;
}

static void *faulter(void *p)
{
	long id = (long)p, i, done_before[PAGES], b;
	size_t len = PAGES * PAGE;
	uint64_t pass = 0, got;

	for (i = 0; i < PAGES; i++)
		done_before[i] = load(&zaps_done);
	while (!stop) {
		pass++;
		for (i = 0; i < PAGES; i++) {
			uint64_t *slot = (uint64_t *)(churn + i * PAGE) + id;

			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			b = load(&zaps_begun);
			if (got != value(pass - 1, id, i) && !(got == 0 && b > done_before[i]))
				__atomic_add_fetch(&churn_bad, 1, __ATOMIC_RELAXED);
			done_before[i] = load(&zaps_done);
			__atomic_store_n(slot, value(pass, id, i), __ATOMIC_SEQ_CST);
		}
		if (pass % 4 == 0) {
			__atomic_add_fetch(&zaps_begun, 1, __ATOMIC_SEQ_CST);
			madvise(churn, len, MADV_DONTNEED);
			__atomic_add_fetch(&zaps_done, 1, __ATOMIC_SEQ_CST);
		}
		__atomic_add_fetch(&churn_passes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static long check(uint64_t salt)
{
	long i, bad = 0;

	for (i = 0; i < PAGES; i++)
		if (((uint64_t *)(stable + i * PAGE))[0] != (salt ^ i))
			bad++;
	return bad;
}

static void fork_race(void *unused)
{
	int n = 2 * ncpus(), k, f, status, child_bad = 0;
	struct parked_mark parked;
	long long cow_parked = 0;
	pthread_t tid[128];
	double t0;
	long i;

	(void)unused;
	if (n > 64)
		n = 64;
	stable = map_anon(PAGES * PAGE);
	churn = map_anon(PAGES * PAGE);
	for (i = 0; i < PAGES; i++)
		((uint64_t *)(stable + i * PAGE))[0] = 0x5a5aULL ^ i;
	parked_mark(&parked);
	t0 = now();
	for (k = 0; k < n; k++)
		pthread_create(&tid[k], NULL, faulter, (void *)(long)k);
	for (f = 0; f < fixed_count(FORKS) || (cow_parked == 0 && now() - t0 < RACE_SECS); f++) {
		pid_t pid = fork();

		if (pid == 0) {
			long b = check(0x5a5aULL);

			for (i = 0; i < PAGES; i++)
				((uint64_t *)(stable + i * PAGE))[0] = 0;
			_exit(b ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			child_bad++;
		cow_parked = parked_since(&parked.sites, "parked_by_wp_page_copy");
	}
	stop = 1;
	for (k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
	tap_check(child_bad == 0, "%d forks under %d faulting threads: children saw the pre-fork content",
		  f, n);
	parked_diag("forks under faulting threads", &parked);
	if (cow_parked < 0)
		tap_skip("race reproduced: a fault met a PTE a COW copy parked (no pfscale counters in this kernel)");
	else
		tap_check(cow_parked > 0, "race reproduced: %lld faults met a PTE parked by wp_page_copy (%d forks, %.1f s)%s",
			  cow_parked, f, now() - t0, cow_parked > 0 ? "" : ": race not reproduced");
	tap_check(check(0x5a5aULL) == 0, "parent content unchanged by the children's COW writes");
	tap_check(churn_bad == 0 && churn_passes > n,
		  "%d faulting threads found every previous pass's write across the forks (%ld passes, %ld zaps, %ld lost)",
		  n, churn_passes, zaps_done, churn_bad);
	rss_agree_check("after the forks");
}

int main(int argc, char **argv)
{
	tap_init(argv[0]);
	(void)argc;
	/* Content (children, parent), the COW race met, content (faulting
	 * threads), the RSS views, then the leak checks: the whole race runs
	 * in a forked child. */
	tap_plan(5 + LEAK_CHECKS);
	leak_watched("forks under faulting threads", fork_race, NULL);
	return tap_exit();
}
