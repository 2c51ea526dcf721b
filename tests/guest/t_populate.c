// SPDX-License-Identifier: GPL-2.0
/*
 * Threads fault pages of fresh, never-touched regions at the same moment, so
 * that they race to populate the page table that maps them: a fresh 2 MiB
 * region needs a new PTE table (pmd_install(), or pmd_test_and_populate() on
 * the atomic path), a fresh 1 GiB region also a new PMD table (__pmd_alloc(),
 * pud_test_and_populate()). MADV_NOHUGEPAGE keeps THP out, which is also what
 * lets the atomic path populate PTE tables without the lock. Every page must
 * hold what its thread wrote, RSS must equal the pages touched, and the
 * populate-loss counter of the path in use must have moved.
 */
#include "common.h"

#define MB2 (2UL << 20)
#define GB1 (1UL << 30)
#define PTE_REGIONS 96
#define PMD_REGIONS 128

struct arg {
	char *base;
	unsigned long stride;
	int regions, id;
	pthread_barrier_t *bar;
};

static void *toucher(void *p)
{
	struct arg *a = p;
	int r;

	for (r = 0; r < a->regions; r++) {
		pthread_barrier_wait(a->bar);
		*(volatile long *)(a->base + r * a->stride + a->id * PAGE) =
			((long)r << 16) | a->id;
	}
	return NULL;
}

/* Race n threads over fresh regions; 1 if content and RSS are right. */
static int race(int n, unsigned long stride, int regions, const char *what)
{
	unsigned long len = stride * regions;
	struct arg args[256];
	pthread_barrier_t bar;
	struct team t;
	char *base = map_aligned(len, stride);
	long bad = 0, present = 0, rss;
	int r, k;

	madvise(base, len, MADV_NOHUGEPAGE);
	pthread_barrier_init(&bar, NULL, n);
	for (k = 0; k < n; k++)
		args[k] = (struct arg){ base, stride, regions, k, &bar };
	team_start(&t, n, toucher, args, sizeof(args[0]));
	team_join(&t);
	pthread_barrier_destroy(&bar);
	for (r = 0; r < regions; r++) {
		for (k = 0; k < n; k++)
			if (*(long *)(base + r * stride + k * PAGE) != (((long)r << 16) | k))
				bad++;
		present += pagemap_present(base + r * stride, n * PAGE);
	}
	rss = smaps_rss(base);
	munmap(base, len);
	return tap_check(!bad && present == (long)n * regions && rss == present,
			 "%d threads populate %d fresh %s regions: %ld bad pages, %ld present, rss %ld (want %ld)",
			 n, regions, what, bad, present, rss, (long)n * regions);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), atomic = pfscale_atomic_pte() == 1;
	const char *pte_loss = atomic ? "pte_table_cmpxchg_lost" : "pte_table_populate_lost";
	const char *pmd_loss = atomic ? "pmd_table_cmpxchg_lost" : "pmd_table_populate_lost";
	long long pte0, pmd0, pte1, pmd1;

	tap_init(argv[0]);
	(void)argc;
	if (n < 4)
		n = 4;
	/* Two content checks, then two loss checks (or one skip without pfscale). */
	tap_plan(pfscale_counter(pte_loss) < 0 ? 3 : 4);
	pte0 = pfscale_counter(pte_loss);
	race(n, MB2, PTE_REGIONS, "2 MiB");
	pte1 = pfscale_counter(pte_loss);
	pmd0 = pfscale_counter(pmd_loss);
	race(n, GB1, PMD_REGIONS, "1 GiB");
	pmd1 = pfscale_counter(pmd_loss);
	if (pte0 < 0) {
		tap_skip("populate losses counted (no pfscale counters in this kernel)");
		return tap_exit();
	}
	tap_diag("%s path: %s +%lld, %s +%lld (the 1 GiB run also loses PTE tables)",
		 pfscale_path(), pte_loss, pte1 - pte0, pmd_loss, pmd1 - pmd0);
	tap_check(pte1 - pte0 > 0, "%s path: racing PTE-table populates were lost and counted (%s %lld)",
		  pfscale_path(), pte_loss, pte1 - pte0);
	tap_check(pmd1 - pmd0 > 0, "%s path: racing PMD-table populates were lost and counted (%s %lld)",
		  pfscale_path(), pmd_loss, pmd1 - pmd0);
	return tap_exit();
}
