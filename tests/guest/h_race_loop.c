/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for tests/host/gdb.sh (pf-race-watch): 2 x CPUs threads
 * fault the same addresses of one region at the same moment, round after
 * round, until the host kills QEMU. The region's addresses stay the same,
 * so every loss the host sees must be inside it. MODE picks the race:
 *
 *   same      write faults on the same fresh pages (MADV_DONTNEED empties
 *             the region between rounds): anon_*_lost
 *   populate  write faults on the first pages of fresh 2 MiB ranges (the
 *             region is unmapped and mapped again between rounds, freeing
 *             its PTE tables): pte_table_*_lost
 *   swap      reads of pages pushed out with MADV_PAGEOUT, while a forked
 *             child holds the swap entries (see t_swap.c): swapin_lost
 *   reclaim   no rounds: the threads write the pages over and over while
 *             MADV_PAGEOUT pushes them out, so faults meet PTEs that
 *             reclaim parked (atomic-path kernels): busy_pte_fault
 *
 * Prints once:
 *
 *   RACE pid=PID region=0xSTART-0xEND threads=N mode=MODE
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

#define PAGES 256
#define MB2 (2UL << 20)
#define RANGES 16

enum mode { SAME, POPULATE, SWAP, RECLAIM };

static enum mode mode;
static char *region;
static size_t len;
static pthread_barrier_t start, done;
static pid_t child;

static void touch(long id)
{
	long i;

	switch (mode) {
	case SAME:
		for (i = 0; i < PAGES; i++)
			((volatile uint64_t *)(region + i * PAGE))[id] = i;
		break;
	case POPULATE:
		for (i = 0; i < RANGES; i++)
			((volatile uint64_t *)(region + i * MB2))[id] = i;
		break;
	case SWAP:
		for (i = 0; i < PAGES; i++)
			(void)*(volatile uint64_t *)(region + i * PAGE);
		break;
	case RECLAIM:
		for (;;)
			for (i = 0; i < PAGES; i++)
				((volatile uint64_t *)(region + i * PAGE))[id] = i;
	}
}

static void *racer(void *arg)
{
	if (mode == RECLAIM)
		touch((long)arg);	/* never returns */
	for (;;) {
		pthread_barrier_wait(&start);
		touch((long)arg);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

/* Make the region fresh again for the next round. */
static void refresh(void)
{
	long i;

	switch (mode) {
	case SAME:
		madvise(region, len, MADV_DONTNEED);
		break;
	case POPULATE:
		munmap(region, len);
		if (mmap(region, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != region)
			tap_bail("mmap MAP_FIXED");
		madvise(region, len, MADV_NOHUGEPAGE);
		break;
	case SWAP:
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		for (i = 0; i < PAGES; i++)
			*(uint64_t *)(region + i * PAGE) = i;
		madvise(region, len, MADV_PAGEOUT);
		child = fork();
		if (!child)
			for (;;)
				pause();
		break;
	case RECLAIM:		/* no rounds */
		break;
	}
}

int main(int argc, char **argv)
{
	long n = 2 * sysconf(_SC_NPROCESSORS_ONLN), i;
	const char *name = argc > 1 ? argv[1] : "same";
	pthread_t th;

	if (!strcmp(name, "same"))
		mode = SAME;
	else if (!strcmp(name, "populate"))
		mode = POPULATE;
	else if (!strcmp(name, "swap"))
		mode = SWAP;
	else if (!strcmp(name, "reclaim"))
		mode = RECLAIM;
	else {
		fprintf(stderr, "usage: %s [same|populate|swap|reclaim]\n", argv[0]);
		return 2;
	}
	if (n < 4)
		n = 4;
	len = mode == POPULATE ? RANGES * MB2 : PAGES * PAGE;
	region = mode == POPULATE ? map_aligned(len, MB2) : map_anon(len);
	madvise(region, len, MADV_NOHUGEPAGE);
	pthread_barrier_init(&start, NULL, n + 1);
	pthread_barrier_init(&done, NULL, n + 1);
	for (i = 0; i < n; i++)
		pthread_create(&th, NULL, racer, (void *)i);
	printf("RACE pid=%d region=%p-%p threads=%ld mode=%s\n", getpid(),
	       (void *)region, (void *)(region + len), n, name);
	fflush(stdout);
	while (mode == RECLAIM) {
		madvise(region, len, MADV_PAGEOUT);
		usleep(500);
	}
	for (;;) {
		refresh();
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
	}
	return 0;
}
