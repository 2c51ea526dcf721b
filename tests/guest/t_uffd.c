// SPDX-License-Identifier: GPL-2.0
/*
 * Faults on a userfaultfd-registered VMA racing each other, and plain
 * faults in the same mm (issue 13). The atomic path falls back to the
 * locked path for uffd-armed VMAs (a missing fault is delivered to the
 * handler under the PTE lock, and UFFDIO_COPY checks and sets under it);
 * this test runs that fallback next to the lockless path.
 *
 * Each round maps two fresh regions of PAGES pages: U, registered for
 * missing faults, and P, plain (MADV_NOHUGEPAGE). A handler thread serves
 * U's faults: UFFDIO_COPY of a page whose first word is pattern(page) for
 * even pages, UFFDIO_ZEROPAGE for odd ones (a second fault message for a
 * page already filled gets EEXIST and a UFFDIO_WAKE). From a spinning
 * barrier, NTHREADS threads walk both regions in the same order: read
 * U's word 0 (must be the pattern or 0, by parity), write their own slot
 * of U's page (a COW of the zero page for odd pages) and of P's page, and
 * read both back. After the round every slot must hold its value, every
 * U page must have been filled exactly once (copies + zeropages == PAGES),
 * and on a pfscale kernel at least PAGES anonymous faults must have taken
 * the locked path (U's missing faults). The race runs in a forked child;
 * then AnonPages and PageTables must be back and no bad-mm kernel message.
 */
#include <time.h>
#include "common.h"

#define PAGES 128
#define NTHREADS 6
#define MAX_ROUNDS 200
#define SECONDS 8

struct result {
	long rounds, bad_reads, bad_slots, copies, zeropages, eexist, wrong_fill;
	long long locked, atomic;
	int done, api_ok;
};

static struct result *res;
static char *volatile ureg, *volatile preg;
static int uffd, round_no;
static volatile int stop, handler_stop;
static struct spin_barrier start_bar, end_bar;

static uint64_t pattern(int round, long pg)
{
	return 0x3c3c000000000000ULL | ((uint64_t)round << 16) | pg;
}

static long long counter(const char *name)
{
	long long v = pfscale_counter(name);

	return v < 0 ? 0 : v;
}

static void *handler(void *arg)
{
	static char src[PAGE] __attribute__((aligned(4096)));

	(void)arg;
	while (!handler_stop) {
		unsigned long addr;
		int exist = 0, got;
		long pg;

		got = uffd_next_fault(uffd, &addr);
		if (got == 0)
			continue;
		if (got < 0) {
			res->wrong_fill++;
			continue;
		}
		pg = (addr - (unsigned long)ureg) / PAGE;
		if (pg < 0 || pg >= PAGES) {
			res->wrong_fill++;
			continue;
		}
		if (pg % 2 == 0) {
			struct uffdio_copy c = { .dst = addr, .src = (unsigned long)src,
						 .len = PAGE, .mode = 0 };

			memset(src, 0, sizeof(src));
			*(uint64_t *)src = pattern(round_no, pg);
			if (ioctl(uffd, UFFDIO_COPY, &c) == 0)
				res->copies++;
			else if ((exist = errno == EEXIST))
				res->eexist++;
			else
				res->wrong_fill++;
		} else {
			struct uffdio_zeropage z = { .range = { addr, PAGE }, .mode = 0 };

			if (ioctl(uffd, UFFDIO_ZEROPAGE, &z) == 0)
				res->zeropages++;
			else if ((exist = errno == EEXIST))
				res->eexist++;
			else
				res->wrong_fill++;
		}
		if (exist)
			uffd_wake(uffd, addr);
	}
	return NULL;
}

static uint64_t slot_val(int k, long pg)
{
	return ((uint64_t)(round_no + 1) << 40) | ((uint64_t)(k + 1) << 20) | pg;
}

static void walk(int k)
{
	long pg, bad = 0;

	for (pg = 0; pg < PAGES; pg++) {
		volatile uint64_t *u = (uint64_t *)(ureg + pg * PAGE);
		volatile uint64_t *p = (uint64_t *)(preg + pg * PAGE);
		uint64_t want = pg % 2 ? 0 : pattern(round_no, pg), v = slot_val(k, pg);

		/* Odd threads read first (a read fault), even ones write first. */
		if (k % 2 && u[0] != want)
			bad++;
		u[k + 1] = v;
		p[k + 1] = v;
		if (u[k + 1] != v || p[k + 1] != v || u[0] != want)
			bad++;
	}
	__atomic_add_fetch(&res->bad_reads, bad, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	int k = (int)(long)arg;

	for (;;) {
		spin_barrier_wait(&start_bar);
		if (stop)
			break;
		walk(k);
		spin_barrier_wait(&end_bar);
	}
	return NULL;
}

static void child(void *arg)
{
	pthread_t tid[NTHREADS], h;
	long long locked = counter("anon_fault_locked");
	long long atomic = counter("anon_fault_atomic");
	double t0 = now();
	size_t len = PAGES * PAGE;
	long pg;
	int k, r;

	(void)arg;
	uffd = uffd_open();
	if (uffd < 0)
		return;
	res->api_ok = 1;
	spin_barrier_init(&start_bar, NTHREADS);
	spin_barrier_init(&end_bar, NTHREADS);
	if (pthread_create(&h, NULL, handler, NULL))
		tap_bail("pthread_create");
	for (k = 1; k < NTHREADS; k++)
		if (pthread_create(&tid[k], NULL, worker, (void *)(long)k))
			tap_bail("pthread_create");
	for (r = 0; r < MAX_ROUNDS && now() - t0 < fixed_secs(SECONDS); r++) {
		struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
		struct uffdio_range range;

		round_no = r;
		ureg = map_anon(len);
		preg = map_anon(len);
		madvise(ureg, len, MADV_NOHUGEPAGE);
		madvise(preg, len, MADV_NOHUGEPAGE);
		reg.range.start = (unsigned long)ureg;
		reg.range.len = len;
		if (ioctl(uffd, UFFDIO_REGISTER, &reg))
			tap_bail("UFFDIO_REGISTER");
		spin_barrier_wait(&start_bar);
		walk(0);
		spin_barrier_wait(&end_bar);
		for (pg = 0; pg < PAGES; pg++) {
			uint64_t *u = (uint64_t *)(ureg + pg * PAGE);
			uint64_t *p = (uint64_t *)(preg + pg * PAGE);

			if (u[0] != (pg % 2 ? 0 : pattern(r, pg)))
				res->bad_slots++;
			for (k = 0; k < NTHREADS; k++)
				if (u[k + 1] != slot_val(k, pg) || p[k + 1] != slot_val(k, pg))
					res->bad_slots++;
		}
		range.start = (unsigned long)ureg;
		range.len = len;
		if (ioctl(uffd, UFFDIO_UNREGISTER, &range))
			tap_bail("UFFDIO_UNREGISTER");
		munmap(ureg, len);
		munmap(preg, len);
		res->rounds++;
	}
	stop = 1;
	spin_barrier_wait(&start_bar);
	for (k = 1; k < NTHREADS; k++)
		pthread_join(tid[k], NULL);
	handler_stop = 1;
	pthread_join(h, NULL);
	close(uffd);
	res->locked = counter("anon_fault_locked") - locked;
	res->atomic = counter("anon_fault_atomic") - atomic;
	res->done = 1;
}

int main(int argc, char **argv)
{
	struct leak_watch w;
	int status, ok;

	tap_init(argv[0]);
	(void)argc;
	tap_plan(3 + LEAK_CHECKS);
	res = map_shared(sizeof(*res));
	status = leak_watch_run(&w, child, NULL);
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && res->done;
	if (!res->api_ok)
		tap_diag("userfaultfd()/UFFDIO_API failed: no CONFIG_USERFAULTFD?");
	else if (!ok)
		tap_diag("child ended with status 0x%x after %ld rounds", status, res->rounds);
	tap_diag("%s path: %ld rounds, %ld copies, %ld zeropages, %ld EEXIST, anon_fault_locked +%lld, anon_fault_atomic +%lld",
		 pfscale_path(), res->rounds, res->copies, res->zeropages, res->eexist,
		 res->locked, res->atomic);
	tap_check(ok && res->rounds > 0 && res->bad_reads == 0 && res->bad_slots == 0,
		  "%d threads x %ld rounds fault a uffd-registered region (UFFDIO_COPY / UFFDIO_ZEROPAGE) and a plain one: %ld bad reads, %ld bad slots",
		  NTHREADS, res->rounds, res->bad_reads, res->bad_slots);
	tap_check(ok && res->wrong_fill == 0 &&
		  res->copies == res->rounds * PAGES / 2 && res->zeropages == res->rounds * PAGES / 2,
		  "every registered page filled exactly once (%ld copies, %ld zeropages for %ld rounds x %d pages, %ld errors)",
		  res->copies, res->zeropages, res->rounds, PAGES, res->wrong_fill);
	if (pfscale_counter("anon_fault_locked") < 0)
		tap_skip("uffd faults on the locked path (no pfscale counters in this kernel)");
	else
		tap_check(ok && res->locked >= res->rounds * PAGES,
			  "%s path: the registered region's missing faults took the locked path (anon_fault_locked +%lld >= %ld)",
			  pfscale_path(), res->locked, res->rounds * PAGES);
	leak_watch_check(&w, "uffd race");
	return tap_exit();
}
