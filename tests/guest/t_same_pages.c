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
 * On the atomic path they also go on until a loser ran the back-out
 * (anon_cmpxchg_backout: most losers find the PTE set before their
 * cmpxchg, with nothing to undo), with the race windows widened after half
 * the time; "back-out not reproduced" fails.
 */
#include <time.h>
#include "common.h"

#define PAGES 2048
#define ROUNDS 6
#define RACE_SECS 20
#define BACKOUTS "anon_cmpxchg_backout"

/* What a child's run() found, in memory shared with the parent. */
struct result {
	int nthreads, thp, ok, rounds, widened;
	long long losses, faults, backouts;
};

/*
 * Rounds of the race; on the atomic path without THP until some loser ran
 * the back-out too (anon_cmpxchg_backout: it lost the cmpxchg itself, after
 * adding the rmap; most losers find the PTE set before, with nothing to
 * undo), widening the windows after half the time if none had.
 */
static int run(struct result *res)
{
	const char *loss = pfscale_anon_loss_counter();
	int r, thp = res->thp, backout = !thp && pfscale_atomic_pte() == 1;
	long long before = pfscale_counter(loss);
	long long backouts_before = pfscale_counter(BACKOUTS);
	long long faults_before = pfscale_counter(pfscale_fault_counter());
	double t0 = now();

	for (r = 0; r < ROUNDS || (!thp && before >= 0 && now() - t0 < RACE_SECS &&
				   (res->losses == 0 || (backout && res->backouts <= 0))); r++) {
		if (backout && res->backouts <= 0 && !res->widened && now() - t0 >= RACE_SECS / 2)
			res->widened = race_windows_widen("50");
		if (!race_round(PAGES, res->nthreads, r, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
			res->rounds = r + 1;
			return 0;
		}
		res->losses = pfscale_counter(loss) - before;
		res->backouts = backouts_before < 0 ? -1 : pfscale_counter(BACKOUTS) - backouts_before;
	}
	if (res->widened)
		race_windows_off();
	res->rounds = r;
	res->faults = pfscale_counter(pfscale_fault_counter()) - faults_before;
	return 1;
}

static void child_run(void *arg)
{
	struct result *r = arg;

	r->ok = run(r);
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), thp, rounds, ok, status;
	int atomic = pfscale_atomic_pte() == 1;
	long long losses, faults;
	struct result *res;
	struct leak_watch w;

	tap_init(argv[0]);
	(void)argc;
	if (n < 4)
		n = 4;
	res = map_shared(sizeof(*res));
	/* Per THP setting a content check; then the loss check or its skip
	 * (THP on: a diagnostic only, with counters), on the atomic path the
	 * back-out check; then the leak checks. */
	tap_plan(2 * LEAK_CHECKS + (pfscale_counter("anon_pte_recheck_lost") < 0 ? 4 : 3) + atomic);
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
		if (atomic && !thp)
			tap_check(res->backouts > 0,
				  "the back-out ran: %lld of the %lld losers lost the cmpxchg itself, after adding the rmap, and undid it (" BACKOUTS "%s; %d rounds)%s%s",
				  res->backouts, losses, res->backouts < 0 ? ": no such counter" : "", rounds,
				  res->widened ? "; race windows widened to 50 us after half the time" : "",
				  res->backouts > 0 ? "" : ": back-out not reproduced");
		leak_watch_check(&w, thp ? "THP madvised" : "THP off");
	}
	return tap_exit();
}
