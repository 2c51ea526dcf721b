/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for tests/host/gdb.sh: map 64 anonymous pages (THP off),
 * touch pages 0..47, map a 2 MiB-aligned MADV_HUGEPAGE region and touch it
 * so that one huge PMD maps it, and map 8 pages, touch them and push them
 * out to swap with MADV_PAGEOUT; print where they are, then sleep until
 * the host kills QEMU.
 *
 *   GDBTHP pid=PID addr=0xADDR pfn0=PFN pfn5=PFN anonhuge_kb=KB
 *   GDBSWAP pid=PID addr=0xADDR swapped=N type=T offset=0xOFF
 *   GDBMAP pid=PID addr=0xADDR pfn0=PFN present=48 threads=N
 *
 * GDBTHP's pfn0/pfn5 are /proc/self/pagemap's PFNs of the huge region's
 * pages 0 and 5, anonhuge_kb its VMA's AnonHugePages in /proc/self/smaps
 * (2048 when a huge PMD maps it; the region is still printed otherwise).
 * GDBSWAP's swapped is how many of the 8 pages pagemap says are swapped,
 * type and offset are pagemap's swap entry of page 0 (0 0 without swap).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common.h"

#define NPAGES 64
#define NTOUCH 48
#define NTHREADS 2
#define HPAGE (2UL << 20)

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

static unsigned long long pfn_of(void *p)
{
	return pagemap_entry(p) & ((1ULL << 55) - 1);
}

/* AnonHugePages (kB) of the VMA that contains p, from /proc/self/smaps. */
static long anon_huge_kb(void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi, a = (uintptr_t)p;
	int in = 0;
	long kb = -1;

	if (!f) {
		perror("smaps");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = lo <= a && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* A 2 MiB-aligned MADV_HUGEPAGE region, every page written. */
static char *map_huge(void)
{
	char *p, *h;
	unsigned long i;

	p = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap huge");
		exit(1);
	}
	h = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
	if (h > p)
		munmap(p, h - p);
	if (h + HPAGE < p + 2 * HPAGE)
		munmap(h + HPAGE, p + 2 * HPAGE - (h + HPAGE));
	if (madvise(h, HPAGE, MADV_HUGEPAGE))
		perror("madvise MADV_HUGEPAGE");
	for (i = 0; i < HPAGE; i += PAGE)
		h[i] = (char)(i / PAGE) + 1;
	return h;
}

/* 8 pages written, then paged out; prints the GDBSWAP line. */
static void map_swapped(void)
{
	char *p = map_anon(8 * PAGE);
	uint64_t e;
	int i;

	madvise(p, 8 * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < 8; i++)
		p[i * PAGE] = (char)i + 1;
	if (madvise(p, 8 * PAGE, MADV_PAGEOUT))
		perror("madvise MADV_PAGEOUT");
	e = pagemap_entry(p);
	if (!(e & PM_SWAPPED))
		e = 0;
	/* pagemap: bits 0-4 the swap type, 5-54 the offset */
	printf("GDBSWAP pid=%d addr=%p swapped=%ld type=%llu offset=0x%llx\n",
	       getpid(), (void *)p, pagemap_count(p, 8 * PAGE, PM_SWAPPED),
	       (unsigned long long)(e & 31),
	       (unsigned long long)(e >> 5 & ((1ULL << 50) - 1)));
}

int main(void)
{
	pthread_t th[NTHREADS];
	long i, present = 0;
	char *huge;

	huge = map_huge();
	map_swapped();
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
	printf("GDBTHP pid=%d addr=%p pfn0=%llu pfn5=%llu anonhuge_kb=%ld\n",
	       getpid(), (void *)huge, pfn_of(huge), pfn_of(huge + 5 * PAGE),
	       anon_huge_kb(huge));
	printf("GDBMAP pid=%d addr=%p pfn0=%llu present=%ld threads=%d\n",
	       getpid(), (void *)region, pfn_of(region), present,
	       NTHREADS + 1);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}
