// SPDX-License-Identifier: GPL-2.0
/*
 * pfbench: page-fault scaling benchmarks in the style of will-it-scale, run
 * inside the guest. For each benchmark, thread count and configuration
 * (atomic fault path off/on x pfscale counters off/on, switched through
 * debugfs in this same boot) it runs for SECS seconds and prints
 *
 *   BENCH <name> <threads> <atomic> <counters> <rep> <faults> <seconds> <interval>
 *
 * Each run executes the pfcost markers (bench/pfcost.h) around it, from
 * before the workers start to after they are joined: <interval> is the
 * number of the pfcost plugin's record that counted it (1, 2, ...: this
 * program must be the only one in the boot that executes markers).
 *
 * page_fault1   each thread: mmap 128 MiB anonymous, write every page, munmap
 * page_fault2   each thread: the same on a private mapping of its tmpfs file
 * page_fault3   each thread: the same on a shared mapping of its tmpfs file
 * same_region   all threads write interleaved pages of one 128 MiB anonymous
 *               region, so every 2 MiB region (one PTE table, one split PTE
 *               lock) is faulted by all threads at once; then munmap, repeat
 *
 * Worker i runs pinned to CPU i modulo the online CPUs, as will-it-scale
 * binds its tasks: left to the scheduler, two workers sometimes shared one
 * vCPU for part of a run, and then the lines they share did not move
 * between CPUs (the pfcost plugin's transfers per fault fell from 2.4 to
 * 1.0 in such runs). -U leaves them unpinned.
 *
 * With -p PASSES a run is a fixed amount of work instead of SECS seconds:
 * each thread (same_region: the region) makes PASSES passes, mmap, fault
 * every page, munmap. Counts per fault (the pfcost plugin) then do not
 * depend on how fast the guest ran: how many faults meet an existing page
 * of a tmpfs file, or an munmap, is fixed.
 *
 *   pfbench [-s SECS | -p PASSES] [-r REPS] [-t N,N,...] [-b NAME,NAME,...] [-U]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pfcost.h"

#define PAGE 4096UL
#define REGION (128UL << 20)
#define DBG "/sys/kernel/debug/pfscale/"

enum bench { PF1, PF2, PF3, SAME, NR_BENCH };
static const char *const bench_name[NR_BENCH] = {
	"page_fault1", "page_fault2", "page_fault3", "same_region"
};

static volatile int stop;
static int passes;		/* -p: passes per run instead of seconds */
static pthread_barrier_t start_bar, end_bar;
static char *volatile shared_region;
static int intervals;		/* pfcost intervals ended so far */
static int unpinned;		/* -U: workers not pinned to CPUs */
static long cpus;		/* online CPUs: worker i runs on CPU i % cpus */

/* A line each: the workers' fault counters must not bounce between CPUs. */
struct worker {
	pthread_t tid;
	enum bench b;
	int id, nthreads;
	long faults;
} __attribute__((aligned(64)));

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "pfbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int write_knob(const char *name, int val)
{
	char path[128], c = '0' + val;
	int fd, ret;

	snprintf(path, sizeof(path), DBG "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, &c, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

/* page_fault1/2/3: private or shared region, fault every page, repeat. */
static void *own_region(void *p)
{
	struct worker *w = p;
	int fd = -1, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	unsigned long i;

	if (w->b != PF1) {
		char name[64];

		snprintf(name, sizeof(name), "/tmp/pfbench.%d", w->id);
		fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, REGION))
			die("tmpfs file");
		unlink(name);
		flags = w->b == PF2 ? MAP_PRIVATE : MAP_SHARED;
	}
	pthread_barrier_wait(&start_bar);
	for (int pass = 0; passes ? pass < passes : !stop; pass++) {
		char *r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, flags, fd, 0);

		if (r == MAP_FAILED)
			die("mmap");
		for (i = 0; i < REGION && !stop; i += PAGE) {
			r[i] = 1;
			w->faults++;
		}
		munmap(r, REGION);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* same_region: the main thread maps, the workers fault interleaved pages. */
static void *same_region(void *p)
{
	struct worker *w = p;
	unsigned long i, step = w->nthreads * PAGE;

	for (;;) {
		char *r;

		pthread_barrier_wait(&start_bar);
		r = shared_region;
		if (!r)
			break;
		for (i = w->id * PAGE; i < REGION; i += step) {
			r[i] = 1;
			w->faults++;
		}
		pthread_barrier_wait(&end_bar);
	}
	return NULL;
}

static long run(enum bench b, int n, double secs, double *elapsed)
{
	struct worker w[256];
	double t0;
	long total = 0, left = passes;
	int i;

	stop = 0;
	pthread_barrier_init(&start_bar, NULL, n + 1);
	pthread_barrier_init(&end_bar, NULL, n + 1);
	for (i = 0; i < n; i++) {
		pthread_attr_t attr;
		cpu_set_t cpu;

		w[i] = (struct worker){ .b = b, .id = i, .nthreads = n };
		pthread_attr_init(&attr);
		CPU_ZERO(&cpu);
		CPU_SET(i % cpus, &cpu);
		if (!unpinned && pthread_attr_setaffinity_np(&attr, sizeof(cpu), &cpu))
			die("pthread_attr_setaffinity_np");
		if (pthread_create(&w[i].tid, &attr, b == SAME ? same_region : own_region, &w[i]))
			die("pthread_create");
		pthread_attr_destroy(&attr);
	}
	t0 = now();
	pfcost_mark();
	if (b == SAME) {
		do {
			shared_region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (shared_region == MAP_FAILED)
				die("mmap");
			madvise(shared_region, REGION, MADV_NOHUGEPAGE);
			pthread_barrier_wait(&start_bar);
			pthread_barrier_wait(&end_bar);
			munmap(shared_region, REGION);
		} while (passes ? --left > 0 : now() - t0 < secs);
		shared_region = NULL;
		pthread_barrier_wait(&start_bar);
	} else {
		pthread_barrier_wait(&start_bar);
		t0 = now();
		if (!passes) {
			usleep(secs * 1e6);
			stop = 1;
		}
	}
	*elapsed = now() - t0;
	for (i = 0; i < n; i++) {
		pthread_join(w[i].tid, NULL);
		total += w[i].faults;
	}
	if (passes && b != SAME)	/* the work ends when the last worker does */
		*elapsed = now() - t0;
	pfcost_mark();
	intervals++;
	pthread_barrier_destroy(&start_bar);
	pthread_barrier_destroy(&end_bar);
	return total;
}

static int parse_list(char *s, int *out, int max)
{
	int n = 0;

	for (s = strtok(s, ","); s && n < max; s = strtok(NULL, ","))
		out[n++] = atoi(s);
	return n;
}

int main(int argc, char **argv)
{
	int threads[16], nthreads = 0, reps = 3, want[NR_BENCH] = { 1, 1, 1, 1 };
	int have_atomic, have_counters, rep, t, a, c, o;
	double secs = 1, elapsed;
	enum bench b;

	cpus = sysconf(_SC_NPROCESSORS_ONLN);

	while ((o = getopt(argc, argv, "s:p:r:t:b:U")) != -1) {
		switch (o) {
		case 's': secs = atof(optarg); break;
		case 'p': passes = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 't': nthreads = parse_list(optarg, threads, 16); break;
		case 'U': unpinned = 1; break;
		case 'b':
			memset(want, 0, sizeof(want));
			for (char *s = strtok(optarg, ","); s; s = strtok(NULL, ","))
				for (b = 0; b < NR_BENCH; b++)
					if (!strcmp(s, bench_name[b]))
						want[b] = 1;
			break;
		default:
			fprintf(stderr, "usage: pfbench [-s SECS | -p PASSES] [-r REPS] [-t N,..] [-b NAME,..] [-U]\n");
			return 2;
		}
	}
	if (secs <= 0 || reps < 1 || passes < 0) {
		fprintf(stderr, "pfbench: bad -s, -p or -r\n");
		return 2;
	}
	if (!nthreads)
		for (t = 1; t <= cpus && nthreads < 16; t *= 2)
			threads[nthreads++] = t;
	if (threads[nthreads - 1] != cpus && nthreads < 16)
		threads[nthreads++] = cpus;
	have_atomic = !access(DBG "atomic_pte", W_OK);
	have_counters = !access(DBG "enable", W_OK);
	if (passes)
		printf("# pfbench: %ld CPUs, %d passes per run, %d reps, workers %s, atomic switch %s, counters switch %s\n",
		       cpus, passes, reps, unpinned ? "unpinned" : "pinned",
		       have_atomic ? "yes" : "no", have_counters ? "yes" : "no");
	else
		printf("# pfbench: %ld CPUs, %.1f s per run, %d reps, workers %s, atomic switch %s, counters switch %s\n",
		       cpus, secs, reps, unpinned ? "unpinned" : "pinned",
		       have_atomic ? "yes" : "no", have_counters ? "yes" : "no");
	fflush(stdout);
	/* Repetitions outermost and configurations innermost, so drift hits all alike. */
	for (rep = 0; rep < reps; rep++)
		for (b = 0; b < NR_BENCH; b++) {
			if (!want[b])
				continue;
			for (t = 0; t < nthreads; t++)
				for (a = 0; a <= have_atomic; a++)
					for (c = 0; c <= have_counters; c++) {
						long f;

						if ((have_atomic && write_knob("atomic_pte", a)) ||
						    (have_counters && write_knob("enable", c))) {
							fprintf(stderr, "pfbench: cannot switch debugfs knobs\n");
							return 1;
						}
						f = run(b, threads[t], secs, &elapsed);
						printf("BENCH %s %d %d %d %d %ld %.4f %d\n", bench_name[b],
						       threads[t], a, have_counters ? c : 1, rep, f, elapsed,
						       intervals);
						fflush(stdout);
					}
		}
	write_knob("atomic_pte", 0);
	write_knob("enable", 1);
	return 0;
}
