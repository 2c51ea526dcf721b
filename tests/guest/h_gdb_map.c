/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for tests/host/gdb.sh: map 64 anonymous pages, touch pages
 * 0..47, print where they are, then sleep until the host kills QEMU.
 *
 *   GDBMAP pid=PID addr=0xADDR pfn0=PFN present=48 threads=N
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define NPAGES 64
#define NTOUCH 48
#define NTHREADS 2

static char *region;

/* Each extra thread faults in pages of its own share, then sleeps. */
static void *worker(void *arg)
{
	long t = (long)arg, i;

	for (i = t; i < NTOUCH; i += NTHREADS + 1)
		region[i * PAGE] = (char)i + 1;
	for (;;)
		pause();
	return NULL;
}

static uint64_t pagemap_entry(void *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &e, 8, (uintptr_t)p / PAGE * 8) != 8) {
		perror("pagemap");
		exit(1);
	}
	close(fd);
	return e;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long i, present = 0;
	uint64_t e;

	region = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(region, NPAGES * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(i + 1));
	for (i = 0; i < NTOUCH; i += NTHREADS + 1)
		region[i * PAGE] = (char)i + 1;
	/* Wait until every touched page is in. */
	do {
		usleep(10000);
		present = 0;
		for (i = 0; i < NPAGES; i++)
			if (pagemap_entry(region + i * PAGE) >> 63)
				present++;
	} while (present < NTOUCH);
	e = pagemap_entry(region);
	printf("GDBMAP pid=%d addr=%p pfn0=%llu present=%ld threads=%d\n",
	       getpid(), (void *)region,
	       (unsigned long long)(e & ((1ULL << 55) - 1)), present,
	       NTHREADS + 1);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}
