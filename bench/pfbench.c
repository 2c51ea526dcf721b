// SPDX-License-Identifier: GPL-2.0
/*
 * pfbench: page-fault scaling benchmarks in the style of will-it-scale, run
 * inside the guest. For each benchmark, thread count and configuration
 * (atomic fault path off/on x pfscale counters off/on, switched through
 * debugfs in this same boot) it runs for SECS seconds (or PASSES passes)
 * and writes its records, one JSON object a line on stdout (lib/json_writer.h;
 * bench/records.py is their one reader, docs/bench.md their schema):
 *
 *   {"schema":"pfbench","version":1,"record":"header",...}   once, first
 *   {"schema":"pfbench","version":1,"record":"run",...}      each run
 *   {"schema":"pfbench","version":1,"record":"verdict",...}  each run, once
 *                                                            all are done
 *
 * and, for people reading the console, "# pfbench:" comment lines.
 *
 * Each run executes the pfcost markers (bench/pfcost.h) around it, from
 * before the workers start to after they are joined: the interval is the
 * number of the pfcost plugin's record that counted it (1, 2, ...: this
 * program must be the only one in the boot that executes markers), the
 * run record's "interval".
 *
 * The benchmarks are the entries of benchmarks[] (below): a name, what
 * each worker sets up before the start, the worker, and what the main
 * thread does while they run; will-it-scale's one-function testcases are
 * the model. page_fault1/2/3 fault regions of their own (anonymous, a
 * private and a shared mapping of a tmpfs file), same_region one region
 * that all of them fault.
 *
 * Worker i runs pinned to CPU i modulo the online CPUs, as will-it-scale
 * binds its tasks: left to the scheduler, two workers sometimes shared one
 * vCPU for part of a run, and then the lines they share did not move
 * between CPUs (the pfcost plugin's transfers per fault fell from 2.4 to
 * 1.0 in such runs). -U leaves them unpinned.
 *
 * The balance is how far the slowest worker had got when the first one was
 * done (its faults over the first one's; same_region: summed over the 2 MiB
 * chunks). The host slows the vCPUs unevenly at times, and how often lines
 * move depends on how the workers' speeds compare: a run is balanced when
 * its balance >= -B (0.95). The host also runs both vCPUs slowly at times
 * (or on one host CPU by turns): the run is then balanced, but lines move
 * less often (10-50% fewer transfers per fault). The rate is the slowest
 * worker's faults per second in the windows (the guest's clock is the
 * host's TSC under make bench), the speed that rate over its configuration's
 * usual one (the 90th percentile of its runs). A run is used when balanced
 * and at full speed, speed >= FULL_SPEED. A benchmark and thread count
 * gets repetitions until REPS of them were used in all configurations, up
 * to 3 x REPS; make bench's report takes the verdicts as they are.
 *
 * With -p PASSES a run is a fixed amount of work instead of SECS seconds:
 * each thread (same_region: the region) makes PASSES passes, mmap, fault
 * every page, munmap. Counts per fault (the pfcost plugin) then do not
 * depend on how fast the guest ran: how many faults meet an existing page
 * of a tmpfs file, or an munmap, is fixed.
 *
 *   pfbench [-s SECS | -p PASSES] [-r REPS] [-t N,N,...] [-b NAME,NAME,...] [-B BALANCE] [-U]
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

#include "json_writer.h"
#include "pfcost.h"

#define PAGE 4096UL
#define REGION (128UL << 20)
#define DBG "/sys/kernel/debug/pfscale/"

/* The records' schema (docs/bench.md, "pfbench's records"). */
#define RECORD_SCHEMA "pfbench"
#define RECORD_VERSION 1

struct worker;

/* A benchmark: one entry of benchmarks[]. */
struct benchmark {
	const char *name;
	/* in each worker before the start: its mapping; NULL: none */
	void (*setup)(struct worker *w);
	void *(*worker)(void *w);
	/* the main thread, from the start to the end of a run */
	double (*drive)(double t0);
	/* worker @id of @n: its faults per window (NULL: 1) */
	long (*share)(int id, int n);
};

static volatile int stop;
static int passes;		/* -p: passes per run instead of seconds */
static pthread_barrier_t start_bar, end_bar;
/*
 * The pfcost window of a pass: the last worker to start opens it, the first
 * to finish closes it, so it covers the stretch in which all of them run.
 * When the vCPUs run at different speeds (the host's other tenants), the
 * faster worker finishes early and the rest of the pass runs alone, without
 * contention: the window leaves that tail out. (same_region: a window per
 * 2 MiB chunk, chunk_barrier().)
 */
enum { WIN_WAITING, WIN_OPEN, WIN_DONE };
static int window, started;
static double window_opened, window_secs;	/* now() at the open, time open */
static char *volatile shared_region;
static int intervals;		/* pfcost intervals ended so far */
static int unpinned;		/* -U: workers not pinned to CPUs */
static long cpus;		/* online CPUs: worker i runs on CPU i % cpus */
static double secs = 1;		/* -s: seconds per run, without -p */
/*
 * -B: a run is balanced when, as the first worker finished, the slowest
 * had made at least this fraction of its faults. The host slows the vCPUs'
 * threads unevenly, and how often lines bounce depends on how the workers'
 * speeds compare.
 */
static double min_balance = 0.95;
/*
 * A run at full speed: its slowest worker made at least this fraction of
 * the usual faults per second. The pfcost plugin sees the vCPUs'
 * instructions per host second, and at 2 threads the two rates nearly
 * always fall on the same side of 0.9 (docs/bench.md, "Balanced runs").
 */
#define FULL_SPEED 0.9
static int have_atomic, have_counters;	/* the debugfs switches exist */

/* A line each: the workers' fault counters must not bounce between CPUs. */
struct worker {
	pthread_t tid;
	const struct benchmark *bm;
	int id, nthreads;
	int fd, flags;		/* own_region: its mapping, set up by bm->setup */
	long faults;
	long at_close;		/* its faults when the windows closed, summed */
	long share;		/* same_region: its faults per chunk; else 1 */
} __attribute__((aligned(64)));

static struct worker *workers;	/* the running ones, for work_done() */

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

/*
 * As a window closes: how far each of the @n workers got in it, their
 * fault counts now minus the count each had when it opened, after @chunks
 * chunks of its share (own_region: 0).
 */
static void note_progress(int n, long chunks)
{
	int i;

	window_secs += now() - window_opened;
	for (i = 0; i < n; i++)
		workers[i].at_close += __atomic_load_n(&workers[i].faults, __ATOMIC_RELAXED) -
				       chunks * workers[i].share;
}

static void work_started(int nthreads)
{
	int expect = WIN_WAITING;

	if (__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL) == nthreads &&
	    __atomic_compare_exchange_n(&window, &expect, WIN_OPEN, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		window_opened = now();
		pfcost_window_open();
	}
}

/*
 * The first worker done closes the window and notes how far each worker
 * got by then: equal counts mean they ran at the same speed.
 */
static void work_done(int nthreads)
{
	int expect = WIN_OPEN;

	if (__atomic_compare_exchange_n(&window, &expect, WIN_DONE, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		pfcost_window_close();
		note_progress(nthreads, 0);
	} else	/* done before all had started: this pass has no window */
		__atomic_store_n(&window, WIN_DONE, __ATOMIC_RELEASE);
}

/* Before own_region's workers start (same_region has chunk_barrier()). */
static void window_reset(void)
{
	started = 0;
	window = WIN_WAITING;
	window_secs = 0;
}

/* page_fault1: an anonymous region. */
static void setup_anon(struct worker *w)
{
	w->fd = -1;
	w->flags = MAP_PRIVATE | MAP_ANONYMOUS;
}

/* page_fault2/3: a tmpfs file of the worker's own, mapped with @flags. */
static void setup_file(struct worker *w, int flags)
{
	char name[64];

	snprintf(name, sizeof(name), "/tmp/pfbench.%d", w->id);
	w->fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (w->fd < 0 || ftruncate(w->fd, REGION))
		die("tmpfs file");
	unlink(name);
	w->flags = flags;
}

static void setup_file_private(struct worker *w)
{
	setup_file(w, MAP_PRIVATE);
}

static void setup_file_shared(struct worker *w)
{
	setup_file(w, MAP_SHARED);
}

/* page_fault1/2/3: the worker's region, fault every page, repeat. */
static void *own_region(void *p)
{
	struct worker *w = p;
	unsigned long i;

	w->bm->setup(w);
	pthread_barrier_wait(&start_bar);
	work_started(w->nthreads);
	for (int pass = 0; passes ? pass < passes : !stop; pass++) {
		char *r = mmap(NULL, REGION, PROT_READ | PROT_WRITE, w->flags, w->fd, 0);

		if (r == MAP_FAILED)
			die("mmap");
		for (i = 0; i < REGION && !stop; i += PAGE) {
			r[i] = 1;
			w->faults++;
		}
		munmap(r, REGION);
	}
	work_done(w->nthreads);
	if (w->fd >= 0)
		close(w->fd);
	return NULL;
}

#define CHUNK (2UL << 20)	/* what one PTE table maps */

static struct {
	int count, gen;
} __attribute__((aligned(64))) chunk_bar;

/*
 * All @n workers meet before each chunk of same_region, and after the
 * last. A spinning barrier (each worker has its own vCPU): a futex would
 * put the early ones to sleep and the late one would pay for waking them.
 * The windows are per chunk: the last to arrive opens one for the next
 * chunk (@open_next) before it lets the others go; the first to arrive
 * after a chunk (@after_chunk) closes it, and notes how far the others got
 * in it: every worker had done @chunks_before chunks of its share when
 * it began.
 */
static void chunk_barrier(int n, long chunks_before, int after_chunk, int open_next)
{
	int gen = __atomic_load_n(&chunk_bar.gen, __ATOMIC_ACQUIRE), arrived;

	arrived = __atomic_add_fetch(&chunk_bar.count, 1, __ATOMIC_ACQ_REL);
	if (arrived == 1 && after_chunk) {
		pfcost_window_close();
		note_progress(n, chunks_before);
	}
	if (arrived == n) {
		if (open_next) {
			window_opened = now();
			pfcost_window_open();
		}
		__atomic_store_n(&chunk_bar.count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&chunk_bar.gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&chunk_bar.gen, __ATOMIC_ACQUIRE) == gen)
		if (unpinned || n > cpus)
			sched_yield();	/* the one we wait for may need this CPU */
		else	/* one block with a pause: pfcost counts it all as spinning */
			__asm__ __volatile__("1: pause; cmpl %1, %0; je 1b"
					     : : "m"(chunk_bar.gen), "r"(gen) : "cc", "memory");
}

/*
 * What same_region's workers take turns at: the pages whose PTEs share one
 * 64-byte line. Taking turns page by page, they wrote the same PTE lines,
 * and how often a line moved depended on how close they ran, which nothing
 * holds on the atomic path (with map_tables()'s fault: 0.59 to 0.88
 * transfers per fault at `__handle_mm_fault`, run to run in one boot).
 */
#define PTE_RUN (64 / 8 * PAGE)

/* Worker @id of @n: its faults per chunk (PTE runs id, id + n, ...). */
static long chunk_share(int id, int n)
{
	long runs = CHUNK / PTE_RUN;

	return (runs / n + (id < runs % n)) * (PTE_RUN / PAGE);
}

/*
 * same_region: the main thread maps, the workers fault interleaved PTE
 * runs, one 2 MiB chunk at a time, all of them in the same chunk; the
 * window is each chunk's stretch until the first of them is done with it.
 */
static void *same_region(void *p)
{
	struct worker *w = p;
	unsigned long i, c, run, step = w->nthreads * PTE_RUN;
	long chunks = 0;

	for (;;) {
		char *r;

		pthread_barrier_wait(&start_bar);
		r = shared_region;
		if (!r)
			break;
		chunk_barrier(w->nthreads, chunks, 0, 1);
		for (c = 0; c < REGION; c += CHUNK) {
			for (run = c + w->id * PTE_RUN; run < c + CHUNK; run += step)
				for (i = run; i < run + PTE_RUN; i += PAGE) {
					r[i] = 1;
					w->faults++;
				}
			chunk_barrier(w->nthreads, chunks++, 1, c + CHUNK < REGION);
		}
		pthread_barrier_wait(&end_bar);
	}
	return NULL;
}

/*
 * same_region's region, aligned to CHUNK: its chunks are then its PTE
 * tables and its PTE runs their lines. mmap() aligns to a page only, and
 * the offset changed from one mmap() to the next: a chunk then spanned two
 * tables, and every PTE run two lines, each shared with a neighbouring run
 * (0.26-0.49 transfers per fault at `__handle_mm_fault`'s read of the PTE
 * on the atomic path, run to run in one boot).
 */
static char *map_tables(void)
{
	char *m = mmap(NULL, REGION + CHUNK, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t start = ((uintptr_t)m + CHUNK - 1) & ~(CHUNK - 1);

	if (m == MAP_FAILED)
		die("mmap");
	if (start != (uintptr_t)m)
		munmap(m, start - (uintptr_t)m);
	/* a tail is left: start is at most m + CHUNK - PAGE */
	munmap((char *)start + REGION, (uintptr_t)m + CHUNK - start);
	return (char *)start;
}

/*
 * The main thread during a run of same_region: map the region, let the
 * workers fault it, unmap it, as many passes as the run has. From @t0,
 * the run's start; returns when the run's time counts from: @t0.
 */
static double drive_same_region(double t0)
{
	long left = passes;

	do {
		shared_region = map_tables();
		madvise(shared_region, REGION, MADV_NOHUGEPAGE);
		pthread_barrier_wait(&start_bar);
		pthread_barrier_wait(&end_bar);
		munmap(shared_region, REGION);
	} while (passes ? --left > 0 : now() - t0 < secs);
	shared_region = NULL;
	pthread_barrier_wait(&start_bar);
	return t0;
}

/*
 * The main thread during a run of own_region: start the workers and, for
 * a run of SECS seconds, stop them. Its time counts from when they start.
 */
static double drive_own_region(double run_start)
{
	double t0;

	(void)run_start;	/* the workers' setup is not the run's time */
	pthread_barrier_wait(&start_bar);
	t0 = now();
	if (!passes) {
		usleep(secs * 1e6);
		stop = 1;
	}
	return t0;
}

static const struct benchmark benchmarks[] = {
	/* each worker: mmap 128 MiB anonymous, write every page, munmap */
	{ "page_fault1", setup_anon, own_region, drive_own_region, NULL },
	/* the same on a private mapping of its own tmpfs file (COW faults) */
	{ "page_fault2", setup_file_private, own_region, drive_own_region, NULL },
	/* the same on a shared mapping of its own tmpfs file */
	{ "page_fault3", setup_file_shared, own_region, drive_own_region, NULL },
	/*
	 * all workers write one 128 MiB anonymous region, aligned to 2 MiB,
	 * so every 2 MiB chunk (one PTE table, one split PTE lock) is faulted
	 * by all of them at once; then munmap, repeat. They take turns at
	 * runs of 8 pages (PTE_RUN: one line of PTEs each), so the table and
	 * its lock are shared and no PTE line is. They meet at a barrier
	 * before each chunk: left alone, they drifted apart, into different
	 * tables, for part of some runs (the PTE lock then stays put: 2.4
	 * transfers per fault on the stock path, not 3.4)
	 */
	{ "same_region", NULL, same_region, drive_same_region, chunk_share },
};
#define NR_BENCH ((int)(sizeof(benchmarks) / sizeof(benchmarks[0])))
#define MAX_BENCH 8	/* -b's table; NR_BENCH at most */

/* A run's figures, for its verdict. */
struct outcome {
	double balance;		/* the slowest worker's progress over the fastest's */
	double rate;		/* the slowest worker's faults per second in the windows */
};

/* Start @n workers of @bm in @w, each pinned to its CPU unless -U. */
static void start_workers(const struct benchmark *bm, struct worker *w, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		pthread_attr_t attr;
		cpu_set_t cpu;

		w[i] = (struct worker){ .bm = bm, .id = i, .nthreads = n,
					.share = bm->share ? bm->share(i, n) : 1 };
		pthread_attr_init(&attr);
		CPU_ZERO(&cpu);
		CPU_SET(i % cpus, &cpu);
		if (!unpinned && pthread_attr_setaffinity_np(&attr, sizeof(cpu), &cpu))
			die("pthread_attr_setaffinity_np");
		if (pthread_create(&w[i].tid, &attr, bm->worker, &w[i]))
			die("pthread_create");
		pthread_attr_destroy(&attr);
	}
}

/*
 * One run of @bm with @n workers: its faults; *@elapsed, the seconds it
 * took; @out->balance, the slowest worker's progress over the fastest's
 * when the windows closed (0: no window, a worker was done before all
 * began), @out->rate its faults per second in them.
 */
static long run(const struct benchmark *bm, int n, double *elapsed, struct outcome *out)
{
	struct worker w[256];
	double t0;
	double slowest = 0, fastest = 0;
	long slowest_faults = 0;
	long total = 0;
	int i;

	stop = 0;
	workers = w;
	window_reset();
	pthread_barrier_init(&start_bar, NULL, n + 1);
	pthread_barrier_init(&end_bar, NULL, n + 1);
	start_workers(bm, w, n);
	t0 = now();
	pfcost_mark();
	t0 = bm->drive(t0);
	*elapsed = now() - t0;
	for (i = 0; i < n; i++) {
		/* in shares: same_region's may differ by a PTE run */
		double got;

		pthread_join(w[i].tid, NULL);
		total += w[i].faults;
		if (!w[i].share)	/* same_region on more than 64 CPUs */
			continue;
		got = (double)w[i].at_close / w[i].share;
		if (!i || got < slowest) {
			slowest = got;
			slowest_faults = w[i].at_close;
		}
		if (got > fastest)
			fastest = got;
	}
	out->balance = fastest ? slowest / fastest : 0;
	out->rate = window_secs > 0 ? slowest_faults / window_secs : 0;
	/* own_region: the work ends when the last worker does */
	if (passes && bm->drive == drive_own_region)
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

/*
 * Every run's outcome: [benchmark][thread count][repetition][configuration],
 * the configuration numbered atomic * 2 + counters.
 */
static struct outcome *outcomes;
static int max_reps, nr_threads;

static struct outcome *outcome(int b, int t, int rep, int config)
{
	return &outcomes[(((long)b * nr_threads + t) * max_reps + rep) * 4 + config];
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The usual rate of a configuration: the 90th percentile of its @nrep runs. */
static double usual_rate(int b, int t, int config, int nrep)
{
	double rates[nrep];
	int r;

	for (r = 0; r < nrep; r++)
		rates[r] = outcome(b, t, r, config)->rate;
	qsort(rates, nrep, sizeof(*rates), cmp_double);
	return rates[(int)(0.9 * (nrep - 1))];
}

/* A run's speed: its rate over its configuration's usual one (of @nrep). */
static double speed(int b, int t, int rep, int config, int nrep)
{
	double usual = usual_rate(b, t, config, nrep);

	return usual > 0 ? outcome(b, t, rep, config)->rate / usual : 0;
}

/* The verdict on a run, one of @nrep of its configuration: used or not. */
static int used(int b, int t, int rep, int config, int nrep)
{
	return outcome(b, t, rep, config)->balance >= min_balance &&
	       speed(b, t, rep, config, nrep) >= FULL_SPEED;
}

static int config_of(int atomic, int counters)
{
	return atomic * 2 + counters;
}

/* Of the first @nrep repetitions, how many were used in every configuration. */
static int reps_used(int b, int t, int nrep)
{
	int r, a, c, n = 0, all;

	for (r = 0; r < nrep; r++) {
		all = 1;
		for (a = 0; a <= have_atomic; a++)
			for (c = 0; c <= have_counters; c++)
				all &= used(b, t, r, config_of(a, c), nrep);
		n += all;
	}
	return n;
}

/* A record's first members: its schema and version, and which record it is. */
static void record_begin(struct jw *j, const char *record)
{
	jw_init(j, stdout, JW_COMPACT);
	jw_start_object(j);
	jw_string_field(j, "schema", RECORD_SCHEMA);
	jw_int_field(j, "version", RECORD_VERSION);
	jw_string_field(j, "record", record);
}

/*
 * A run record's or a verdict record's members after record_begin(): which
 * run (without a counters switch: counters 1, they are always on).
 */
static void record_run_key(struct jw *j, int b, int nthr, int a, int c, int rep)
{
	jw_string_field(j, "bench", benchmarks[b].name);
	jw_int_field(j, "threads", nthr);
	jw_int_field(j, "atomic", a);
	jw_int_field(j, "counters", have_counters ? c : 1);
	jw_int_field(j, "rep", rep);
}

/* One repetition of benchmark @b at thread count @t: each configuration once, back to back. */
static void round_of(int b, int t, int nthr, int rep)
{
	int a, c;

	for (a = 0; a <= have_atomic; a++)
		for (c = 0; c <= have_counters; c++) {
			struct outcome *o = outcome(b, t, rep, config_of(a, c));
			struct jw j;
			double elapsed;
			long f;

			if ((have_atomic && write_knob("atomic_pte", a)) ||
			    (have_counters && write_knob("enable", c))) {
				fprintf(stderr, "pfbench: cannot switch debugfs knobs\n");
				exit(1);
			}
			f = run(&benchmarks[b], nthr, &elapsed, o);
			record_begin(&j, "run");
			record_run_key(&j, b, nthr, a, c, rep);
			jw_int_field(&j, "faults", f);
			jw_fixed_field(&j, "secs", elapsed, 4);
			jw_int_field(&j, "interval", intervals);
			jw_fixed_field(&j, "balance", o->balance, 3);
			jw_end_object(&j);
		}
}

/* The verdicts on the @nrep runs of each configuration of @b at thread count @t. */
static void print_verdicts(int b, int t, int nthr, int nrep)
{
	int r, a, c, config;
	struct jw j;

	for (r = 0; r < nrep; r++)
		for (a = 0; a <= have_atomic; a++)
			for (c = 0; c <= have_counters; c++) {
				config = config_of(a, c);
				record_begin(&j, "verdict");
				record_run_key(&j, b, nthr, a, c, r);
				jw_fixed_field(&j, "rate", outcome(b, t, r, config)->rate, 0);
				jw_fixed_field(&j, "speed", speed(b, t, r, config, nrep), 3);
				jw_bool_field(&j, "used", used(b, t, r, config, nrep));
				jw_end_object(&j);
			}
	printf("# pfbench: %s at %d threads: %d of %d repetitions used in every configuration\n",
	       benchmarks[b].name, nthr, reps_used(b, t, nrep), nrep);
}

/* The header record, how the runs are made and judged; and a line for people. */
static void print_header(int reps)
{
	struct jw j;

	if (passes)
		printf("# pfbench: %ld CPUs, %d passes per run, ", cpus, passes);
	else
		printf("# pfbench: %ld CPUs, %.1f s per run, ", cpus, secs);
	printf("%d reps, workers %s, atomic switch %s, counters switch %s, balance %.2f, full speed %.2f\n",
	       reps, unpinned ? "unpinned" : "pinned", have_atomic ? "yes" : "no",
	       have_counters ? "yes" : "no", min_balance, FULL_SPEED);
	record_begin(&j, "header");
	jw_int_field(&j, "cpus", cpus);
	if (passes) {
		jw_int_field(&j, "passes", passes);
		jw_null_field(&j, "secs");
	} else {
		jw_null_field(&j, "passes");
		jw_fixed_field(&j, "secs", secs, 3);
	}
	jw_int_field(&j, "reps", reps);
	jw_bool_field(&j, "pinned", !unpinned);
	jw_bool_field(&j, "atomic_switch", have_atomic);
	jw_bool_field(&j, "counters_switch", have_counters);
	jw_fixed_field(&j, "min_balance", min_balance, 3);
	jw_fixed_field(&j, "full_speed", FULL_SPEED, 3);
	jw_end_object(&j);
}

static int threads[16], nthreads, reps = 3;
static int want[MAX_BENCH];	/* -b: benchmarks[i] runs */

/* -b NAME,NAME,...: the benchmarks to run, by name. */
static void want_only(char *list)
{
	memset(want, 0, sizeof(want));
	for (char *s = strtok(list, ","); s; s = strtok(NULL, ","))
		for (int b = 0; b < NR_BENCH; b++)
			if (!strcmp(s, benchmarks[b].name))
				want[b] = 1;
}

/* The options into the globals; 0, or the exit code of a wrong one. */
static int parse_args(int argc, char **argv)
{
	int o;

	for (o = 0; o < NR_BENCH; o++)
		want[o] = 1;
	while ((o = getopt(argc, argv, "s:p:r:t:b:B:U")) != -1) {
		switch (o) {
		case 's': secs = atof(optarg); break;
		case 'p': passes = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 't': nthreads = parse_list(optarg, threads, 16); break;
		case 'B': min_balance = atof(optarg); break;
		case 'U': unpinned = 1; break;
		case 'b': want_only(optarg); break;
		default:
			fprintf(stderr, "usage: pfbench [-s SECS | -p PASSES] [-r REPS] [-t N,..] [-b NAME,..] [-B BALANCE] [-U]\n");
			return 2;
		}
	}
	if (secs <= 0 || reps < 1 || passes < 0 || min_balance < 0 || min_balance > 1) {
		fprintf(stderr, "pfbench: bad -s, -p, -r or -B\n");
		return 2;
	}
	return 0;
}

/* Without -t: 1, 2, 4, ... up to the CPUs; and all CPUs, unless listed. */
static void thread_counts(void)
{
	int t;

	if (!nthreads)
		for (t = 1; t <= cpus && nthreads < 16; t *= 2)
			threads[nthreads++] = t;
	/* (a thread count twice would mix its runs) */
	for (t = 0; t < nthreads && threads[t] != cpus; t++)
		;
	if (t == nthreads && nthreads < 16)
		threads[nthreads++] = cpus;
}

/*
 * Repetitions outermost and configurations innermost, so drift hits all
 * alike. After @reps, more repetitions, up to twice as many again, of the
 * benchmarks and thread counts with fewer than @reps used in every
 * configuration (all configurations at once, so they stay back-to-back
 * pairs). Then the verdicts on every run.
 */
static void run_all(void)
{
	int done[MAX_BENCH][16] = { { 0 } }, rep, ran, b, t;

	for (rep = 0, ran = 1; ran && rep < max_reps; rep++)
		for (ran = 0, b = 0; b < NR_BENCH; b++)
			for (t = 0; want[b] && t < nthreads; t++)
				if (rep < reps || reps_used(b, t, done[b][t]) < reps) {
					round_of(b, t, threads[t], rep);
					done[b][t]++;
					ran = 1;
				}
	for (b = 0; b < NR_BENCH; b++)
		for (t = 0; want[b] && t < nthreads; t++)
			print_verdicts(b, t, threads[t], done[b][t]);
}

int main(int argc, char **argv)
{
	int ret;

	_Static_assert(NR_BENCH <= MAX_BENCH, "MAX_BENCH is too small for benchmarks[]");
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ret = parse_args(argc, argv);
	if (ret)
		return ret;
	thread_counts();
	have_atomic = !access(DBG "atomic_pte", W_OK);
	have_counters = !access(DBG "enable", W_OK);
	print_header(reps);
	max_reps = 3 * reps;
	nr_threads = nthreads;
	outcomes = calloc((long)NR_BENCH * nr_threads * max_reps * 4, sizeof(*outcomes));
	if (!outcomes)
		die("calloc");
	run_all();
	write_knob("atomic_pte", 0);
	write_knob("enable", 1);
	return 0;
}
