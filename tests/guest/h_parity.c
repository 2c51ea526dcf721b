// SPDX-License-Identifier: GPL-2.0
/*
 * h_parity: one process in a known state for tests/host/parity.sh, which
 * holds gdb (live and on a -p dump) and crash (on a -z dump) to /proc and
 * to each other, field by field.
 *
 * It has: a MAP_SHARED read-only file mapping (maps shows "s" from
 * VM_MAYSHARE, VM_SHARED is clear), a private file mapping at a non-zero
 * offset with one COW page, written pages made PROT_NONE (protnone PTEs,
 * present to the kernel), a MAP_GROWSDOWN region (the stack guard gap
 * rule: /proc shows vm_start, no gap), pages paged out to swap, a 2 MiB
 * THP, a zero-page PTE, shared anonymous pages, over 1000 VMAs, and NTHREADS threads that
 * each fault a known number of pages (under the 64-event sync threshold,
 * so their deltas stay in task->rss_stat) and park.
 *
 * Then, without faulting again (every buffer is touched beforehand), it
 * stops the pfscale counters (debugfs enable 0: guest/run/parity runs the
 * guest tools on this state next, and their faults must not count), reads
 * /proc/self/{maps,smaps,status,pagemap}, the pfscale counters and
 * its debugfs rss view, prints them as "PARITY ..." lines, prints
 * "PARITY READY pid=N" and parks: the host stops the guest and reads it.
 *
 *   PARITY maps LINE                       /proc/self/maps, as is
 *   PARITY smaps START-END RSS_KB SWAP_KB ANONHUGE_KB
 *   PARITY region NAME START END           a region whose pages follow
 *   PARITY pagemap VA present PFN | swap TYPE OFFSET
 *   PARITY status FIELD: VALUE             VmRSS, RssAnon, ..., Threads
 *   PARITY counter NAME VALUE              debugfs pfscale/counters
 *   PARITY rss LINE                        debugfs pfscale/rss (pid)
 */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "common.h"

#define NTHREADS 4
#define NSMALL 1040		/* one-page VMAs of alternating protection */
#define NSWAP 16
#define HPAGE (2UL << 20)

static pthread_barrier_t bar;
static char *worker_region[NTHREADS];
static long worker_pages[NTHREADS];
static char mbuf[1 << 18], sbuf[1 << 21], tbuf[8192], cbuf[16384], rbuf[16384];
static char obuf[1 << 20];
static size_t olen;

struct region {
	const char *name;
	char *start;
	unsigned long len;
};
static struct region regions[16];
static int nregions;

static void die(const char *what)
{
	printf("PARITY error %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void *worker(void *arg)
{
	long i = (long)arg, n = 4 + 3 * i, k;
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (k = 0; k < n; k++)
		p[k * PAGE] = 1;
	worker_region[i] = p;
	worker_pages[i] = n;
	pthread_barrier_wait(&bar);
	raw_pause_forever();
	return NULL;
}

static void add_region(const char *name, void *start, unsigned long len)
{
	regions[nregions++] = (struct region){ name, start, len };
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	olen += vsnprintf(obuf + olen, sizeof(obuf) - olen, fmt, ap);
	va_end(ap);
	if (olen >= sizeof(obuf))
		olen = sizeof(obuf) - 1;
}

/* Each line of s as "PARITY <tag> <line>". */
static void emit(const char *tag, char *s)
{
	char *line, *save = NULL;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		out("PARITY %s %s\n", tag, line);
}

/* smaps: one line per VMA with its Rss, Swap and AnonHugePages (kB). */
static void emit_smaps(char *s)
{
	char *line, *save = NULL, range[64] = "";
	long rss = -1, swap = -1, huge = -1, v;

	for (line = strtok_r(s, "\n", &save); ; line = strtok_r(NULL, "\n", &save)) {
		char r[64];

		if (!line || (sscanf(line, "%63[0-9a-f]-%*[0-9a-f] ", r) == 1 &&
			      strchr(line, '-') == line + strlen(r))) {
			if (range[0])
				out("PARITY smaps %s %ld %ld %ld\n", range, rss, swap, huge);
			if (!line)
				break;
			sscanf(line, "%63s", range);
			rss = swap = huge = -1;
		} else if (sscanf(line, "Rss: %ld kB", &v) == 1) {
			rss = v;
		} else if (sscanf(line, "Swap: %ld kB", &v) == 1) {
			swap = v;
		} else if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1) {
			huge = v;
		}
	}
}

static void emit_pagemap(int fd)
{
	int i;

	for (i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		unsigned long k;

		out("PARITY region %s 0x%lx 0x%lx\n", r->name, (unsigned long)r->start,
		    (unsigned long)r->start + r->len);
		for (k = 0; k < r->len / PAGE; k++) {
			uint64_t e = 0;
			unsigned long va = (unsigned long)r->start + k * PAGE;

			if (pread(fd, &e, 8, va / PAGE * 8) != 8)
				die("pread pagemap");
			if (e & PM_PRESENT)
				out("PARITY pagemap 0x%lx present %llu\n", va,
				    (unsigned long long)(e & ((1ULL << 55) - 1)));
			else if (e & PM_SWAPPED)
				out("PARITY pagemap 0x%lx swap %llu 0x%llx\n", va,
				    (unsigned long long)(e & 31),
				    (unsigned long long)((e & ((1ULL << 55) - 1)) >> 5));
		}
	}
}

static void emit_status(char *s)
{
	static const char *const keep[] = { "VmRSS:", "RssAnon:", "RssFile:", "RssShmem:",
					    "VmSwap:", "Threads:", NULL };
	char *line, *save = NULL;
	int i;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (i = 0; keep[i]; i++)
			if (!strncmp(line, keep[i], strlen(keep[i])))
				out("PARITY status %s\n", line);
}

/* Touch a deep stack and every buffer now, so the reads below never fault. */
static void prefault(void)
{
	volatile char stack[64 * 1024];

	memset((char *)stack, 0, sizeof(stack));
	memset(mbuf, 0, sizeof(mbuf));
	memset(sbuf, 0, sizeof(sbuf));
	memset(tbuf, 0, sizeof(tbuf));
	memset(cbuf, 0, sizeof(cbuf));
	memset(rbuf, 0, sizeof(rbuf));
	memset(obuf, 0, sizeof(obuf));
}

int main(void)
{
	pthread_t t[NTHREADS];
	struct timespec ts = { 1, 0 };
	char pid[32], *p, *small, *thp, zero;
	int fd, pm;
	long i;

	prefault();
	snprintf(pid, sizeof(pid), "%d", getpid());

	/* Over 1000 VMAs: one-page mappings of alternating protection. */
	small = mmap(NULL, NSMALL * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (small == MAP_FAILED)
		die("mmap small");
	madvise(small, NSMALL * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < NSMALL; i++) {
		if (i % 3 == 0)
			small[i * PAGE] = 1;
		if (i % 2 && mprotect(small + i * PAGE, PAGE, PROT_READ))
			die("mprotect small");
	}

	/* A read-only file mapped MAP_SHARED: VM_MAYSHARE without VM_SHARED. */
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		die("open exe");
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap shared ro");
	(void)*(volatile char *)p;
	(void)*(volatile char *)(p + PAGE);
	add_region("shared_ro_file", p, 2 * PAGE);

	/* A private file mapping at offset 3 pages: page 0 read, page 1 COW. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 3 * PAGE);
	if (p == MAP_FAILED)
		die("mmap private file");
	(void)*(volatile char *)p;
	p[PAGE] = 1;
	add_region("private_file_off3", p, 2 * PAGE);

	/* An anonymous page only read: the zero page, present but not RSS. */
	p = map_anon(4 * PAGE);
	madvise(p, 4 * PAGE, MADV_NOHUGEPAGE);
	zero = *(volatile char *)(p + PAGE);
	p[2 * PAGE] = zero + 1;
	add_region("zero_page", p, 4 * PAGE);

	/* Written pages made PROT_NONE: protnone PTEs, still present. */
	p = map_anon(8 * PAGE);
	madvise(p, 8 * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < 8; i++)
		p[i * PAGE] = 1;
	if (mprotect(p, 8 * PAGE, PROT_NONE))
		die("mprotect none");
	add_region("protnone", p, 8 * PAGE);

	/* A MAP_GROWSDOWN region, its top page touched. */
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
	if (p == MAP_FAILED)
		die("mmap growsdown");
	p[3 * PAGE] = 1;
	add_region("growsdown", p, 4 * PAGE);

	/* Shared anonymous pages: shmem. */
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap shared anon");
	for (i = 0; i < 4; i++)
		p[i * PAGE] = 1;
	add_region("shared_anon", p, 4 * PAGE);

	/* A 2 MiB THP: one huge pmd (reserved memory, as h_gdb_map's). */
	p = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap thp");
	thp = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
	if (thp > p)
		munmap(p, thp - p);
	if (thp + HPAGE < p + 2 * HPAGE)
		munmap(thp + HPAGE, p + 2 * HPAGE - (thp + HPAGE));
	if (madvise(thp, HPAGE, MADV_HUGEPAGE))
		die("madvise hugepage");
	for (i = 0; i < (long)(HPAGE / PAGE); i++)
		thp[i * PAGE] = 1;
	add_region("thp", thp, HPAGE);

	/* Pages written, then paged out (swap on zram). */
	p = map_anon(NSWAP * PAGE);
	madvise(p, NSWAP * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < NSWAP; i++)
		p[i * PAGE] = 1;
	madvise(p, NSWAP * PAGE, MADV_PAGEOUT);
	add_region("swapped", p, NSWAP * PAGE);

	/* Threads with unsynced rss deltas, parked. */
	pthread_barrier_init(&bar, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			die("pthread_create");
	pthread_barrier_wait(&bar);
	nanosleep(&ts, NULL);	/* every worker reaches its raw pause */
	for (i = 0; i < NTHREADS; i++) {
		static const char *const names[NTHREADS] = { "worker0", "worker1",
							     "worker2", "worker3" };

		add_region(names[i], worker_region[i], worker_pages[i] * PAGE);
	}

	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		die("open pagemap");
	/* Warm every path used after the reads (a first fault there would
	 * move the main thread's delta behind the figures printed). */
	slurp(COUNTERS, cbuf, sizeof(cbuf));
	slurp("/proc/self/status", tbuf, sizeof(tbuf));
	emit("warm", cbuf);
	emit_status(tbuf);
	emit_pagemap(pm);
	olen = 0;
	memset(obuf, 0, sizeof(obuf));
	if (write_file("/sys/kernel/debug/pfscale/rss", pid))
		snprintf(rbuf, sizeof(rbuf), "error writing rss\n");
	/*
	 * Counting stops before the snapshot: the guest tools read this state
	 * after it (guest/run/parity), and their own faults must not move the
	 * counters every reader is held to.
	 */
	if (write_file("/sys/kernel/debug/pfscale/enable", "0"))
		out("PARITY error enable: cannot stop the pfscale counters\n");

	/* The snapshot: nothing of this process changes after these reads. */
	slurp("/proc/self/maps", mbuf, sizeof(mbuf));
	slurp("/proc/self/smaps", sbuf, sizeof(sbuf));
	slurp("/proc/self/status", tbuf, sizeof(tbuf));
	slurp(COUNTERS, cbuf, sizeof(cbuf));
	slurp("/sys/kernel/debug/pfscale/rss", rbuf, sizeof(rbuf));
	emit("maps", mbuf);
	emit_smaps(sbuf);
	emit_pagemap(pm);
	emit_status(tbuf);
	emit("counter", cbuf);
	emit("rss", rbuf);
	out("PARITY READY pid=%s\n", pid);
	if (write(1, obuf, olen) < 0)
		return 1;
	raw_pause_forever();
}
