// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing for the same pages of mlocked memory. A fault on a VM_LOCKED
 * VMA mlocks its new page as it adds it to the LRU
 * (lru_cache_add_inactive_or_unevictable(): PG_mlocked, NR_MLOCK); the
 * atomic path does that before its compare-and-set, so a loser must also
 * munlock the page it backs out (page_remove_rmap() on the VM_LOCKED VMA)
 * before freeing it, or Mlocked stays counted for a page nobody maps, and
 * freeing a page still PG_mlocked is a "Bad page state".
 *
 * Two modes, each round a fresh region that 2 x CPUs slot writers fault
 * together (every writer its own slot of every page, so that they race for
 * every PTE):
 *   - MLOCK_ONFAULT: mlock2(MLOCK_ONFAULT) first, so every fault mlocks;
 *   - mlock() populating: a thread mlock()s the region while the writers
 *     fault it, so GUP's write faults (populate_vma_page_range()) race the
 *     writers' own.
 * Per round, after every CPU's LRU and mlock batches are drained
 * (mm_quiesce()): every slot holds its writer's value, every page is
 * present, and Mlocked rose by exactly the region. Rounds go on past ROUNDS
 * until the path's lost-race counter moved (RACE_SECS at most): "race not
 * reproduced" fails. Each mode runs in a forked child under the leak watch,
 * whose levels include Mlocked.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include "common.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01	/* include/uapi/asm-generic/mman-common.h */
#endif

#define PAGES 1024
#define ROUNDS 4
#define RACE_SECS 20

enum { ONFAULT, POPULATE, NMODES };
static const char *const modes[] = { "MLOCK_ONFAULT", "mlock() populating" };

/* What a child found, in memory shared with the parent. */
struct result {
	int nthreads, mode, rounds, done;
	long bad, absent, mlock_off;	/* slots, pages, rounds */
	long first_mlocked_kb;		/* the first round off: Mlocked's rise */
	long long losses;
	int mlock_errno;
};

static struct result *res;

struct mlocker {
	char *base;
	pthread_barrier_t *bar;
};

static void *mlocker_run(void *p)
{
	struct mlocker *m = p;

	pthread_barrier_wait(m->bar);
	if (mlock(m->base, PAGES * PAGE))
		res->mlock_errno = errno;
	return NULL;
}

/*
 * race_slot_writers() with one more thread behind the same start barrier,
 * which mlock()s the region. Every thread exists before the barrier opens:
 * creating one (mmap of its stack) waits for mmap_lock, which the populate
 * holds for reading, so writers created later would start only after it.
 */
static void race_writers_and_mlock(char *base, int n, int round)
{
	struct slot_writer w[256];
	pthread_barrier_t bar;
	struct mlocker m = { base, &bar };
	struct team t;
	pthread_t tm;
	int k;

	pthread_barrier_init(&bar, NULL, n + 1);
	for (k = 0; k < n; k++)
		w[k] = (struct slot_writer){ base, PAGES, k, round, &bar };
	team_start(&t, n, slot_writer_run, w, sizeof(w[0]));
	if (pthread_create(&tm, NULL, mlocker_run, &m))
		tap_bail("pthread_create");
	team_join(&t);
	pthread_join(tm, NULL);
	pthread_barrier_destroy(&bar);
}

static void child_run(void *unused)
{
	const char *loss = pfscale_anon_loss_counter();
	long long before = pfscale_counter(loss);
	size_t len = PAGES * PAGE;
	double t0 = now();
	int r;

	(void)unused;
	for (r = 0; r < fixed_count(ROUNDS) ||
		    (before >= 0 && res->losses == 0 && now() - t0 < RACE_SECS); r++) {
		char *base = map_anon(len);
		long kb;

		madvise(base, len, MADV_NOHUGEPAGE);
		mm_quiesce();
		kb = meminfo_kb("Mlocked");
		if (res->mode == ONFAULT && syscall(SYS_mlock2, base, len, MLOCK_ONFAULT)) {
			res->mlock_errno = errno;
			break;
		}
		if (res->mode == POPULATE)
			race_writers_and_mlock(base, res->nthreads, r);
		else
			race_slot_writers(base, PAGES, res->nthreads, r);
		res->bad += bad_slots(base, PAGES, res->nthreads, r);
		res->absent += PAGES - pagemap_present(base, len);
		mm_quiesce();
		kb = meminfo_kb("Mlocked") - kb;
		if (kb != (long)(len / 1024) && !res->mlock_off++)
			res->first_mlocked_kb = kb;
		munmap(base, len);
		if (before >= 0)
			res->losses = pfscale_counter(loss) - before;
	}
	res->rounds = r;
	res->done = 1;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), mode;
	struct leak_watch w;

	tap_init(argv[0]);
	(void)argc;
	if (n < 4)
		n = 4;
	res = map_shared(sizeof(*res));
	/* Per mode: content, Mlocked, the race; then the leak checks. */
	tap_plan(NMODES * (3 + LEAK_CHECKS));
	for (mode = 0; mode < NMODES; mode++) {
		int status, ok;

		memset(res, 0, sizeof(*res));
		res->nthreads = n;
		res->mode = mode;
		status = leak_watch_run(&w, child_run, NULL);
		ok = status == 0 && res->done && !res->mlock_errno;
		if (res->mlock_errno)
			tap_diag("%s: mlock failed: %s", modes[mode], strerror(res->mlock_errno));
		tap_check(ok && res->rounds > 0 && res->bad == 0 && res->absent == 0,
			  "%s: %d threads x %d rounds write-fault the same %d pages: %ld bad slots, %ld pages absent",
			  modes[mode], n, res->rounds, PAGES, res->bad, res->absent);
		tap_check(ok && res->mlock_off == 0,
			  "%s: Mlocked rose by exactly the region (%ld kB) in every round, batches drained (%ld rounds off%s%ld kB)",
			  modes[mode], (long)(PAGES * PAGE / 1024), res->mlock_off,
			  res->mlock_off ? "; first: " : ", ", res->mlock_off ? res->first_mlocked_kb :
			  (long)(PAGES * PAGE / 1024));
		if (pfscale_counter(pfscale_anon_loss_counter()) < 0)
			tap_skip("%s: race reproduced (no pfscale counters in this kernel)", modes[mode]);
		else
			tap_check(res->losses > 0,
				  "%s: race reproduced: %s path: %lld faults lost the race (%s, %d rounds)%s",
				  modes[mode], pfscale_path(), res->losses, pfscale_anon_loss_counter(),
				  res->rounds, res->losses > 0 ? "" : ": race not reproduced");
		leak_watch_check(&w, modes[mode]);
	}
	return tap_exit();
}
