/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for tests/host/gdb.sh (pf-race-watch): 2 x CPUs threads
 * write-fault the same fresh anonymous pages, in the same order, round
 * after round (MADV_DONTNEED empties the region between rounds, so the
 * addresses stay the same), until the host kills QEMU. Prints once:
 *
 *   RACE pid=PID region=0xSTART-0xEND threads=N
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define PAGES 256

static char *region;
static pthread_barrier_t start, done;

static void *writer(void *arg)
{
	long id = (long)arg, i;

	for (;;) {
		pthread_barrier_wait(&start);
		for (i = 0; i < PAGES; i++)
			((volatile uint64_t *)(region + i * PAGE))[id] = i;
		pthread_barrier_wait(&done);
	}
	return NULL;
}

int main(void)
{
	long n = 2 * sysconf(_SC_NPROCESSORS_ONLN), i;
	pthread_t th;

	if (n < 4)
		n = 4;
	region = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(region, PAGES * PAGE, MADV_NOHUGEPAGE);
	pthread_barrier_init(&start, NULL, n + 1);
	pthread_barrier_init(&done, NULL, n + 1);
	for (i = 0; i < n; i++)
		pthread_create(&th, NULL, writer, (void *)i);
	printf("RACE pid=%d region=%p-%p threads=%ld\n", getpid(),
	       (void *)region, (void *)(region + PAGES * PAGE), n);
	fflush(stdout);
	for (;;) {
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		madvise(region, PAGES * PAGE, MADV_DONTNEED);
	}
	return 0;
}
