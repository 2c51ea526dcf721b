// SPDX-License-Identifier: GPL-2.0
/*
 * Threads fault pages of fresh, never-touched regions at the same moment, so
 * that they race to populate the page table that maps them: a fresh 2 MiB
 * region needs a new PTE table (pmd_install(), or pmd_test_and_populate() on
 * the atomic path), a fresh 1 GiB region also a new PMD table (__pmd_alloc(),
 * pud_test_and_populate()), a fresh 512 GiB region also a new PUD table
 * (__pud_alloc(), under page_table_lock on both paths; the address space
 * is 47 bits: 32 such regions and their tables per batch, MAP_NORESERVE).
 * x86's PUD tables are plain zeroed pages that PageTables does not count
 * (6.1's pud_alloc_one() has no page-table constructor): the leak watch
 * cannot see a PUD-table loser that forgets pud_free(), only the content,
 * race and RSS checks apply there.
 * MADV_NOHUGEPAGE keeps THP out, which is also what
 * lets the atomic path populate PTE tables without the lock. Every page must
 * hold what its thread wrote, RSS must equal the pages touched, and the
 * populate-loss counter of the path in use must have moved. The threads
 * leave a spin barrier together before each region, and batches of regions
 * are raced until the counter moved (at most RACE_SECS s): "race not
 * reproduced" is its own failure, apart from the content checks.
 */
#include <time.h>
#include "common.h"

#define MB2 (2UL << 20)
#define GB1 (1UL << 30)
#define PTE_REGIONS 96
#define PMD_REGIONS 128
#define GB512 (512UL << 30)
#define PUD_REGIONS 32
#define RACE_SECS 20	/* at most, per race to reproduce */

struct arg {
	char *base;
	unsigned long stride;
	int regions, id;
	struct spin_barrier *bar;
};

static void *toucher(void *p)
{
	struct arg *a = p;
	int r;

	for (r = 0; r < a->regions; r++) {
		spin_barrier_wait(a->bar);
		*(volatile long *)(a->base + r * a->stride + a->id * PAGE) =
			((long)r << 16) | a->id;
	}
	return NULL;
}

struct tally {
	long bad, present, rss_bad, want, regions, batches;
};

/*
 * One batch: n threads leave a spin barrier together and each touches its
 * own page of the same fresh region, region after region; then every page
 * must hold its value and RSS must equal the pages present.
 */
static void race(int n, unsigned long stride, int regions, struct tally *t)
{
	unsigned long len = stride * regions;
	struct arg args[256];
	struct spin_barrier bar;
	struct team tm;
	char *base = map_aligned(len, stride);
	long present = 0, rss;
	int r, k;

	madvise(base, len, MADV_NOHUGEPAGE);
	spin_barrier_init(&bar, n);
	for (k = 0; k < n; k++)
		args[k] = (struct arg){ base, stride, regions, k, &bar };
	team_start(&tm, n, toucher, args, sizeof(args[0]));
	team_join(&tm);
	for (r = 0; r < regions; r++) {
		for (k = 0; k < n; k++)
			if (*(long *)(base + r * stride + k * PAGE) != (((long)r << 16) | k))
				t->bad++;
		present += pagemap_present(base + r * stride, n * PAGE);
	}
	rss = smaps_rss(base);
	munmap(base, len);
	if (rss != present)
		t->rss_bad++;
	t->present += present;
	t->want += (long)n * regions;
	t->regions += regions;
	t->batches++;
}

/*
 * Race batches over fresh regions until @loss moved (without pfscale: one
 * batch), at most RACE_SECS seconds: the content check covers every batch,
 * the race check says whether a lost populate was seen and counted.
 */
static void race_until(int n, unsigned long stride, int regions, const char *what,
		       const char *table, const char *loss)
{
	long long c0 = pfscale_counter(loss), moved = 0;
	struct tally t = { 0 };
	double t0 = now();

	do {
		race(n, stride, regions, &t);
		if (c0 >= 0)
			moved = pfscale_counter(loss) - c0;
	} while (c0 >= 0 && moved == 0 && now() - t0 < RACE_SECS);
	tap_check(!t.bad && t.present == t.want && !t.rss_bad,
		  "%d threads populate %ld fresh %s regions: %ld bad pages, %ld present (want %ld), %ld batches with rss != present",
		  n, t.regions, what, t.bad, t.present, t.want, t.rss_bad);
	if (c0 < 0)
		return;
	if (moved > 0)
		tap_check(1, "race reproduced: %s path: racing %s-table populates were lost and counted (%s +%lld, %ld batches, %.1f s)",
			  pfscale_path(), table, loss, moved, t.batches, now() - t0);
	else
		tap_check(0, "race reproduced: %s path: racing %s-table populates were lost and counted (race not reproduced: %s +0 in %ld batches, %.1f s)",
			  pfscale_path(), table, loss, t.batches, now() - t0);
}

/*
 * munmap()'s free_pgtables() beside PTE-table populates in the same PMD
 * table: munmap() downgrades mmap_lock to read once the VMAs are detached,
 * so faults run while it frees the page tables of the range, bounded by
 * the neighbouring VMAs (floor, ceiling). Per batch a fresh 1 GiB (one PMD
 * table): the threads populate the PTE tables of its first BESIDE_BLOCKS
 * 2 MiB blocks, together, while an unmapper maps, touches and unmaps its
 * last block over and over. Content, RSS, and the leak watch (a PTE table
 * freed under a populate, or one left behind, shows in PageTables).
 */
#define BESIDE_BLOCKS 128
static volatile int unmapper_stop;
static long unmaps;

static void *unmapper(void *p)
{
	char *x = p;

	while (!unmapper_stop) {
		if (mmap(x, MB2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
			break;
		*(volatile long *)x = 1;
		munmap(x, MB2);
		__atomic_add_fetch(&unmaps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void populate_beside_munmap(void *p)
{
	int n = *(int *)p, k, r, batch;
	long bad = 0, present = 0, want = 0, during = 0, rss_bad = 0;
	double t0 = now();

	for (batch = 0; batch < fixed_count(2) || (during == 0 && now() - t0 < RACE_SECS); batch++) {
		char *base = map_aligned(GB1, GB1), *x = base + GB1 - MB2;
		struct arg args[256];
		struct spin_barrier bar;
		struct team tm;
		pthread_t u;
		long before, batch_present;

		madvise(base, GB1, MADV_NOHUGEPAGE);
		munmap(x, MB2);
		unmapper_stop = 0;
		if (pthread_create(&u, NULL, unmapper, x))
			tap_bail("pthread_create");
		spin_barrier_init(&bar, n);
		for (k = 0; k < n; k++)
			args[k] = (struct arg){ base, MB2, BESIDE_BLOCKS, k, &bar };
		before = __atomic_load_n(&unmaps, __ATOMIC_RELAXED);
		team_start(&tm, n, toucher, args, sizeof(args[0]));
		team_join(&tm);
		/* Unmaps begun after the threads started, ended before they did. */
		if (__atomic_load_n(&unmaps, __ATOMIC_RELAXED) - before > 2)
			during += __atomic_load_n(&unmaps, __ATOMIC_RELAXED) - before - 2;
		unmapper_stop = 1;
		pthread_join(u, NULL);
		for (r = 0, batch_present = 0; r < BESIDE_BLOCKS; r++) {
			for (k = 0; k < n; k++)
				if (*(long *)(base + r * MB2 + k * PAGE) != (((long)r << 16) | k))
					bad++;
			batch_present += pagemap_present(base + r * MB2, n * PAGE);
		}
		present += batch_present;
		want += (long)n * BESIDE_BLOCKS;
		if (smaps_rss(base) != batch_present)
			rss_bad++;
		munmap(base, GB1);
	}
	tap_check(!bad && present == want && !rss_bad,
		  "PTE-table populates beside munmap: %d threads x %d batches x %d fresh 2 MiB blocks: %ld bad pages, %ld present (want %ld), %ld batches with rss != present",
		  n, batch, BESIDE_BLOCKS, bad, present, want, rss_bad);
	tap_check(during > 0,
		  "PTE-table populates beside munmap: race reproduced: %ld munmaps of a block in the same PMD table (free_pgtables() under the downgraded mmap_lock) while the threads populated (%ld in all, %.1f s)%s",
		  during, unmaps, now() - t0, during > 0 ? "" : ": race not reproduced");
	rss_agree_check("after the populates beside munmap");
}

/*
 * 5 if a mapping hinted above 128 TiB lands there (LA57 paging: the user
 * address space reaches 56 bits on request), else 4.
 */
static int paging_levels(void)
{
	char *p = mmap((void *)(1UL << 50), PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int levels = p != MAP_FAILED && (unsigned long)p >= (1UL << 47) ? 5 : 4;

	if (p != MAP_FAILED)
		munmap(p, PAGE);
	return levels;
}

struct level {
	int n;
	unsigned long stride;
	int regions;
	const char *what, *table, *loss;
};

/* One table level's race, then the racing process's RSS views. */
static void populate_race(void *p)
{
	const struct level *l = p;

	char what[64];

	race_until(l->n, l->stride, l->regions, l->what, l->table, l->loss);
	snprintf(what, sizeof(what), "after the %s-table populate races", l->table);
	rss_agree_check(what);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), atomic = pfscale_atomic_pte() == 1;
	const char *pte_loss = atomic ? "pte_table_cmpxchg_lost" : "pte_table_populate_lost";
	const char *pmd_loss = atomic ? "pmd_table_cmpxchg_lost" : "pmd_table_populate_lost";
	struct level pte = { n < 4 ? 4 : n, MB2, PTE_REGIONS, "2 MiB", "PTE", pte_loss };
	struct level pmd = { n < 4 ? 4 : n, GB1, PMD_REGIONS, "1 GiB", "PMD", pmd_loss };
	/* __pud_alloc() takes page_table_lock on either path: one counter. */
	struct level pud = { n < 4 ? 4 : n, GB512, PUD_REGIONS, "512 GiB", "PUD",
			     "pud_table_populate_lost" };
	char cmdline[4096] = "";
	int la57;

	tap_init(argv[0]);
	(void)argc;
	/*
	 * Per table level, in a forked child under the leak watch (a losing
	 * populate frees its table: one that did not would leave PageTables
	 * above its level): a content check, a race check (with pfscale),
	 * the RSS views; then the leak checks. Without pfscale one skip for
	 * the race checks.
	 */
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	la57 = strstr(cmdline, "pfscale.la57=1") != NULL;
	tap_plan((pfscale_counter(pte_loss) < 0 ? 7 : 9) + 3 + 4 * LEAK_CHECKS + la57);
	/* make test's l5 boot asks for 5 levels (pfscale.la57=1): check it. */
	if (la57)
		tap_check(paging_levels() == 5, "the address space has 5 levels (a hint above 128 TiB honoured): %d",
			  paging_levels());
	else
		tap_diag("paging levels: %d", paging_levels());
	leak_watched("PTE-table populates", populate_race, &pte);
	leak_watched("PMD-table populates", populate_race, &pmd);
	leak_watched("PUD-table populates", populate_race, &pud);
	leak_watched("PTE-table populates beside munmap", populate_beside_munmap, &pte.n);
	if (pfscale_counter(pte_loss) < 0)
		tap_skip("populate losses counted (no pfscale counters in this kernel)");
	return tap_exit();
}
