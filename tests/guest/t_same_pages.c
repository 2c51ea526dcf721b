// SPDX-License-Identifier: GPL-2.0
/*
 * Many threads write-fault the same fresh anonymous pages, in the same order,
 * so that they race for every PTE. Each thread writes its own slot of every
 * page; afterwards every slot must hold what its writer wrote (a lost install
 * would lose a whole page of writes), every page must be present and the
 * page-table count (smaps Rss) must equal the region size. With pfscale the
 * lost-race counter of the path in use must have moved: the PTE recheck
 * under the lock on the stock path, the lost cmpxchg on the atomic path.
 * Each run races in a forked child; once it is gone, AnonPages and
 * PageTables must be exactly back where they were (leak_watch_run()): a
 * loser that does not undo its page's rmap would leave it counted (and
 * leaked).
 * Without THP, rounds go on past ROUNDS until the loss counter moved (at
 * most RACE_SECS seconds); "race not reproduced" is a failure of its own.
 */
#include <time.h>
#include "common.h"

#define PAGES 2048
#define ROUNDS 6
#define RACE_SECS 20

static int run(int nthreads, int thp, long long *losses, long long *faults, int *rounds)
{
	int r;
	const char *loss = pfscale_anon_loss_counter();
	long long before = pfscale_counter(loss);
	long long faults_before = pfscale_counter(pfscale_fault_counter());
	double t0 = now();

	*losses = 0;
	for (r = 0; r < ROUNDS || (!thp && before >= 0 && *losses == 0 && now() - t0 < RACE_SECS);
	     r++) {
		if (!race_round(PAGES, nthreads, r, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
			*rounds = r + 1;
			return 0;
		}
		*losses = pfscale_counter(loss) - before;
	}
	*rounds = r;
	*faults = pfscale_counter(pfscale_fault_counter()) - faults_before;
	return 1;
}

/* What a child's run() found, in memory shared with the parent. */
struct result {
	int nthreads, thp, ok, rounds;
	long long losses, faults;
};

static void child_run(void *arg)
{
	struct result *r = arg;

	r->ok = run(r->nthreads, r->thp, &r->losses, &r->faults, &r->rounds);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), thp, rounds, ok, status;
	long long losses, faults;
	struct result *res;
	struct leak_watch w;

	tap_init(argv[0]);
	(void)argc;
	if (n < 4)
		n = 4;
	res = map_shared(sizeof(*res));
	/* Per THP setting a content check; then the loss check or its skip
	 * (THP on: a diagnostic only, with counters); then the leak checks. */
	tap_plan(2 * LEAK_CHECKS + (pfscale_counter("anon_pte_recheck_lost") < 0 ? 4 : 3));
	for (thp = 0; thp < 2; thp++) {
		memset(res, 0, sizeof(*res));
		res->nthreads = n;
		res->thp = thp;
		status = leak_watch_run(&w, child_run, res);
		ok = status == 0 && res->ok;
		losses = res->losses;
		faults = res->faults;
		rounds = res->rounds;
		tap_check(ok,
			  "%d threads x %d rounds write-fault the same %d pages (THP %s): content, pagemap, rss",
			  n, rounds, PAGES, thp ? "madvised" : "off");
		if (pfscale_counter("anon_pte_recheck_lost") < 0)
			tap_skip("lost-race counters move (no pfscale counters in this kernel)");
		else if (thp)
			tap_diag("THP run: %lld PTE losses (huge PMD faults do not lose at PTE level)", losses);
		else
			tap_check(losses > 0 && faults >= (long long)rounds * PAGES,
				  "race reproduced: %s path: %lld of %lld faults lost the race (%s, %d rounds)%s",
				  pfscale_path(), losses, faults, pfscale_anon_loss_counter(), rounds,
				  losses > 0 ? "" : ": race not reproduced");
		leak_watch_check(&w, thp ? "THP madvised" : "THP off");
	}
	return tap_exit();
}
