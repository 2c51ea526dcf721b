/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest helper for tests/host/gdb.sh (pf-mm): make an mm with VMAs of
 * several kinds (private anon rw, partly touched; read-only anon; PROT_NONE;
 * shared anon; a private file mapping of this binary), start threads that
 * fault pages of their own, then print the mm as the kernel shows it and
 * sleep until the host kills QEMU:
 *
 *   GDBMM pid=PID threads=N rss_mm=PAGES rss_split=PAGES
 *   GDBMM map <a /proc/self/maps line>     (one per VMA)
 *   GDBMM end
 *
 * rss_mm is /proc/self/statm's resident field (the mm counters); rss_split
 * is pfscale's debugfs rss view (the mm counters plus the threads' deltas).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define NTHREADS 2

static char *rw;
static pthread_barrier_t ready;

static void *worker(void *arg)
{
	long t = (long)arg, i;

	for (i = 0; i < 5; i++)
		rw[(16 + t * 8 + i) * PAGE] = 1;
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return NULL;
}

static void *map(size_t pages, int prot, int flags, int fd)
{
	void *p = mmap(NULL, pages * PAGE, prot, flags, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static char out[16384];

static long statm_resident(void)
{
	long size, resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	if (f)
		fclose(f);
	return resident;
}

static long rss_split(void)
{
	char line[256];
	long v = -1;
	FILE *f;
	int fd = open("/sys/kernel/debug/pfscale/rss", O_WRONLY);

	if (fd < 0)
		return -1;
	snprintf(line, sizeof(line), "%d\n", getpid());
	if (write(fd, line, strlen(line)) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	f = fopen("/sys/kernel/debug/pfscale/rss", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rss_split %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	char line[512], *sh, *ro;
	long i, resident = -2, rss = -2, mm = -3, split = -3;
	size_t len = 0;
	FILE *f;
	int fd, n;

	(void)argc;
	rw = map(64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	madvise(rw, 64 * PAGE, MADV_NOHUGEPAGE);
	ro = map(8, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	map(4, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	sh = map(8, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1);
	fd = open(argv[0], O_RDONLY);
	if (fd >= 0)
		map(2, PROT_READ, MAP_PRIVATE, fd);
	for (i = 0; i < 10; i++)
		rw[i * PAGE] = 1;
	for (i = 0; i < 3; i++)
		sh[i * PAGE] = 1;
	(void)*(volatile char *)ro;	/* the zero page: not counted */
	pthread_barrier_init(&ready, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&ready);

	/*
	 * Read the maps first, then the RSS until two readings agree (the
	 * reads themselves must not fault in pages that the figures miss),
	 * then print with write(2), which touches no new memory.
	 */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		len += snprintf(out + len, sizeof(out) - len, "GDBMM map %s",
				line);
	if (f)
		fclose(f);
	len += snprintf(out + len, sizeof(out) - len, "GDBMM end\n");
	do {
		mm = resident;
		split = rss;
		resident = statm_resident();
		rss = rss_split();
	} while (mm != resident || split != rss);
	n = snprintf(line, sizeof(line),
		     "GDBMM pid=%d threads=%d rss_mm=%ld rss_split=%ld\n",
		     getpid(), NTHREADS + 1, resident, rss);
	if (write(1, line, n) != n || write(1, out, len) != (ssize_t)len)
		return 1;
	for (;;)
		pause();
	return 0;
}
