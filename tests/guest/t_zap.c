// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing zaps: writer threads keep write-faulting and reading back a
 * range while a zapper thread runs MADV_DONTNEED / MADV_FREE / munmap+mmap
 * (MAP_FIXED) / mprotect over it. Every slot read must be zero or the value
 * its writer wrote; after quiesce the page-table count (smaps Rss) must
 * equal the pagemap present count.
 */
#include <signal.h>
#include <time.h>
#include "common.h"

#define PAGES 512
#define SECONDS 3

static char *base;
static volatile int stop;
static volatile long bad;
static int mode;
static const char *const modes[] = { "MADV_DONTNEED", "MADV_FREE", "munmap+mmap", "mprotect" };

static void *writer(void *p)
{
	long id = (long)p, i;
	uint64_t v, got;

	while (!stop)
		for (i = 0; i < PAGES && !stop; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;

			v = ((uint64_t)id << 32) | i;
			*slot = v;
			got = *slot;
			if (got != v && got != 0)
				bad++;
		}
	return NULL;
}

static void *zapper(void *p)
{
	size_t len = PAGES * PAGE;

	(void)p;
	while (!stop) {
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
			break;
		case 3:
			mprotect(base, len, PROT_READ | PROT_WRITE);
			madvise(base, len / 2, MADV_DONTNEED);
			break;
		}
		usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus();
	long present, rss;
	size_t len = PAGES * PAGE;

	tap_init(argv[0]);
	(void)argc;
	if (n > 64)
		n = 64;
	tap_plan(4);
	for (mode = 0; mode < 4; mode++) {
		base = map_anon(len);
		madvise(base, len, MADV_NOHUGEPAGE);
		bad = 0;
		run_against(n, writer, zapper, NULL, SECONDS, &stop);
		present = pagemap_present(base, len);
		rss = smaps_rss(base);
		tap_check(bad == 0 && present == rss,
			  "%d writers racing %s: %ld bad reads, rss %ld == present %ld",
			  n, modes[mode], bad, rss, present);
		munmap(base, len);
	}
	return tap_exit();
}
