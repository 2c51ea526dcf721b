// SPDX-License-Identifier: GPL-2.0
/*
 * A zap empties a present PTE for good under the PTE lock, and on the
 * atomic path a lockless fault may fill it again before the zap is done
 * with it: what the zap does next must not assume the PTE stays empty
 * (zap_pte_range() asserted it did, and that WARNING fired under t_fork).
 *
 * Made to happen: a zapper thread read-faults one page (mapping the zero
 * page) and MADV_DONTNEEDs it, over and over; reader threads read the
 * page every ~100 us. Each zap's TLB flush drops the readers' entries, so
 * a reader's next read walks the page table, and one that lands between
 * the zap's clear and the end of that zap faults and refills the PTE
 * there (the widened boot stretches that window to 50 us; natively it is
 * a few instructions, hit now and then in SECS seconds). Checks: no
 * kernel WARNING or BUG while racing, every read returned 0, and the RSS
 * counters agree with the page tables afterwards.
 */
#include "common.h"

#define SECS 5

static volatile int stop;
static char *page;
static long bad_reads, zaps;

static void *zapper(void *p)
{
	(void)p;
	while (!stop) {
		(void)*(volatile char *)page;
		madvise(page, PAGE, MADV_DONTNEED);
		zaps++;
	}
	return NULL;
}

static void *reader(void *p)
{
	(void)p;
	while (!stop) {
		if (*(volatile long *)page)
			__atomic_add_fetch(&bad_reads, 1, __ATOMIC_RELAXED);
		usleep(100);
	}
	return NULL;
}

static void refill_race(void *unused)
{
	char first[256];
	long kmsg_errors;
	int kfd, n = ncpus() > 1 ? ncpus() - 1 : 1;

	(void)unused;
	page = map_anon(PAGE);
	madvise(page, PAGE, MADV_NOHUGEPAGE);
	kfd = kmsg_open();
	run_against(n, reader, zapper, NULL, SECS, &stop);
	kmsg_errors = kmsg_bad(kfd, first, sizeof(first));
	tap_check(kmsg_errors == 0,
		  "%s path: %ld zaps of a page that %d readers refault: no kernel WARNING or BUG%s%s",
		  pfscale_path(), zaps, n, kmsg_errors ? ", first: " : "", first);
	tap_check(bad_reads == 0, "every read of the zapped page returned 0 (%ld did not)", bad_reads);
	rss_agree_check("after the refill race");
	munmap(page, PAGE);
}

int main(int argc, char **argv)
{
	(void)argc;
	tap_init(argv[0]);
	/* Three checks in a forked child, then the leak checks. */
	tap_plan(3 + LEAK_CHECKS);
	leak_watched("refill race", refill_race, NULL);
	return tap_exit();
}
