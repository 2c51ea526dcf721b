// SPDX-License-Identifier: GPL-2.0
/*
 * h_crash_fig: a figure for tests/host/crash.sh to find in a vmcore.
 *
 * NTHREADS threads each fault a known number of anonymous pages (thread i:
 * 4 + 3 * i, well under the 64-event sync threshold, so the deltas stay in
 * task->rss_stat), then park in a raw pause() syscall so they never fault
 * again. The main thread writes SWAPPED pages and pushes them out to swap
 * (MADV_PAGEOUT), and prints how many pagemap says are swapped
 * ("CRASHFIG swapped N": the swap entries pfpte must count). The main thread then reads the pfscale counters and the rss file
 * for its own pid into pre-faulted buffers, prints them prefixed
 * "CRASHFIG " with write(2), prints "CRASHFIG READY pid=N" and pauses
 * forever: the host dumps guest memory and compares what crash reads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "common.h"

#define NTHREADS 4
#define SWAPPED 16

static pthread_barrier_t bar;
static char cbuf[16384], rbuf[16384], obuf[65536];

static void *worker(void *arg)
{
	long i = (long)arg, n = 4 + 3 * i, k;
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (k = 0; k < n; k++)
		p[k * PAGE] = 1;
	pthread_barrier_wait(&bar);
	raw_pause_forever();
	return NULL;
}

/* Append each line of s to obuf as "CRASHFIG <tag> <line>". */
static void emit(const char *tag, char *s)
{
	char *line, *save = NULL;

	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		snprintf(obuf + strlen(obuf), sizeof(obuf) - strlen(obuf),
			 "CRASHFIG %s %s\n", tag, line);
}

int main(void)
{
	pthread_t t[NTHREADS];
	struct timespec ts = { 1, 0 };
	char pid[32], *swap;
	long i;

	memset(cbuf, 0, sizeof(cbuf));
	memset(rbuf, 0, sizeof(rbuf));
	memset(obuf, 0, sizeof(obuf));
	pthread_barrier_init(&bar, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	pthread_barrier_wait(&bar);
	nanosleep(&ts, NULL);	/* let every worker reach its raw pause */
	swap = map_anon(SWAPPED * PAGE);
	for (i = 0; i < SWAPPED; i++)
		swap[i * PAGE] = 1;
	madvise(swap, SWAPPED * PAGE, MADV_PAGEOUT);
	snprintf(obuf, sizeof(obuf), "CRASHFIG swapped %ld\n",
		 pagemap_count(swap, SWAPPED * PAGE, PM_SWAPPED));
	if (write(1, obuf, strlen(obuf)) < 0)
		return 1;

	snprintf(pid, sizeof(pid), "%d", getpid());
	/*
	 * Warm up every code path used after the reads (slurp, emit, write):
	 * a first-touch file fault after the rss read would change the main
	 * thread's delta and rss_split behind the figures printed.
	 */
	slurp(COUNTERS, cbuf, sizeof(cbuf));
	emit("warm", cbuf);
	if (write(1, obuf, 0) < 0)
		return 1;
	memset(obuf, 0, sizeof(obuf));
	if (write_file("/sys/kernel/debug/pfscale/rss", pid))
		snprintf(rbuf, sizeof(rbuf), "error writing rss\n");
	slurp(COUNTERS, cbuf, sizeof(cbuf));
	slurp("/sys/kernel/debug/pfscale/rss", rbuf, sizeof(rbuf));
	emit("counter", cbuf);
	emit("rss", rbuf);
	snprintf(obuf + strlen(obuf), sizeof(obuf) - strlen(obuf),
		 "CRASHFIG READY pid=%s\n", pid);
	if (write(1, obuf, strlen(obuf)) < 0)
		return 1;
	raw_pause_forever();
}
