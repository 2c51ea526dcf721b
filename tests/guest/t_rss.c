// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread RSS deltas add up: each of N threads faults a known number of
 * pages (fewer than the 64-event sync threshold) while the others wait.
 * The pfscale rss file must show each thread's anon delta grown by exactly
 * its count, the split sum (b) and the page-table scan (c) grown by the
 * total and equal, and the mm counters (a) unchanged: (a) lags.
 */
#include <sys/syscall.h>
#include "common.h"

#define RSSFILE PFSCALE_RSS
#define THREADS 6

struct snap {
	int ntid, tid[64], events[64], anon[64];
	long rss_mm, rss_split, rss_scan;
};

static pthread_barrier_t go, done;
static int tids[THREADS];
static char *region;

/*
 * Read the rss file into a buffer written before the first snapshot, with
 * read() rather than stdio: nothing the main thread does between the two
 * snapshots may fault in a page of its own (a stdio buffer that the longer
 * second read spills into a fresh heap page did, once).
 */
static char rssbuf[64 * 1024];

static int take(struct snap *s)
{
	char pid[32], *line, *save;
	ssize_t n, len = 0;
	int fd;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(RSSFILE, pid))
		return -1;
	fd = open(RSSFILE, O_RDONLY);
	if (fd < 0)
		return -1;
	while ((n = read(fd, rssbuf + len, sizeof(rssbuf) - 1 - len)) > 0)
		len += n;
	close(fd);
	rssbuf[len] = 0;
	memset(s, 0, sizeof(*s));
	for (line = strtok_r(rssbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int t, e, fl, a;

		if (sscanf(line, "thread %d events %d file %d anon %d", &t, &e, &fl, &a) == 4 &&
		    s->ntid < 64) {
			s->tid[s->ntid] = t;
			s->events[s->ntid] = e;
			s->anon[s->ntid++] = a;
		}
		sscanf(line, "rss_mm %ld", &s->rss_mm);
		sscanf(line, "rss_split %ld", &s->rss_split);
		sscanf(line, "rss_scan %ld", &s->rss_scan);
	}
	return 0;
}

static int find(const struct snap *s, int tid)
{
	int i;

	for (i = 0; i < s->ntid; i++)
		if (s->tid[i] == tid)
			return i;
	return -1;
}

static void *worker(void *p)
{
	long id = (long)p, i;
	char *mine = region + id * 64 * PAGE;

	tids[id] = syscall(SYS_gettid);
	pthread_barrier_wait(&go);	/* main takes snapshot 0 */
	pthread_barrier_wait(&go);
	for (i = 0; i < 10 + 4 * id; i++)
		mine[i * PAGE] = 1;
	pthread_barrier_wait(&done);	/* main takes snapshot 1 */
	pthread_barrier_wait(&done);
	return NULL;
}

int main(int argc, char **argv)
{
	struct snap s0, s1;
	pthread_t t[THREADS];
	long total = 0, i;
	int ok = 1, a, b;
	char pid[32];

	tap_init(argv[0]);
	(void)argc;
	if (access(RSSFILE, R_OK)) {
		tap_plan(1);
		tap_skip("per-thread RSS deltas (no pfscale rss file in this kernel)");
		return tap_exit();
	}
	tap_plan(10);
	memset(rssbuf, 1, sizeof(rssbuf));
	region = map_anon(THREADS * 64 * PAGE);
	madvise(region, THREADS * 64 * PAGE, MADV_NOHUGEPAGE);
	pthread_barrier_init(&go, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&go);
	if (take(&s0))
		tap_bail("read rss (snapshot 0)");
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	if (take(&s1))
		tap_bail("read rss (snapshot 1)");
	if (getenv("PFSCALE_SHOW")) {
		/* make run: show what pfrss sees while the threads are parked. */
		char cmd[64];

		snprintf(cmd, sizeof(cmd), "pfrss %d", getpid());
		fflush(stdout);
		if (system(cmd))
			tap_diag("pfrss failed");
	}
	for (i = 0; i < THREADS; i++) {
		long want = 10 + 4 * i;

		total += want;
		a = find(&s0, tids[i]);
		b = find(&s1, tids[i]);
		if (a < 0 || b < 0 || s1.anon[b] - s0.anon[a] != want ||
		    s1.events[b] - s0.events[a] != want) {
			tap_diag("thread %d (tid %d): anon %d -> %d, events %d -> %d, want +%ld",
				 (int)i, tids[i], a < 0 ? -1 : s0.anon[a], b < 0 ? -1 : s1.anon[b],
				 a < 0 ? -1 : s0.events[a], b < 0 ? -1 : s1.events[b], want);
			ok = 0;
		}
	}
	tap_check(s1.ntid == THREADS + 1, "rss lists every thread (%d of %d)", s1.ntid, THREADS + 1);
	tap_check(ok, "each thread's anon delta grew by exactly the pages it faulted");
	a = find(&s0, getpid());
	b = find(&s1, getpid());
	if (a >= 0 && b >= 0 && s1.anon[b] != s0.anon[a])
		tap_diag("the main thread's own anon delta moved too: %d -> %d",
			 s0.anon[a], s1.anon[b]);
	tap_check(s1.rss_split - s0.rss_split == total && s1.rss_scan - s0.rss_scan == total,
		  "(b) split sum and (c) scan both grew by %ld (b %ld -> %ld, c %ld -> %ld)",
		  total, s0.rss_split, s1.rss_split, s0.rss_scan, s1.rss_scan);
	tap_check(s1.rss_split == s1.rss_scan, "after quiesce (b) == (c): %ld == %ld",
		  s1.rss_split, s1.rss_scan);
	/* Only the main thread may have synced meanwhile; the workers did not. */
	tap_check(s1.rss_split - s1.rss_mm >= total,
		  "(a) mm counters lag (b) by the unsynced deltas: %ld - %ld >= %ld",
		  s1.rss_split, s1.rss_mm, total);
	pthread_barrier_wait(&done);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/*
	 * Exited threads folded their deltas into the mm. pthread_join()
	 * returns once a worker's clear_child_tid wakes it, early in
	 * exit_mm(): the task may stay listed a little longer.
	 */
	for (i = 0; i < 200; i++) {
		take(&s1);
		if (s1.ntid == 1)
			break;
		usleep(10000);
	}
	tap_check(s1.rss_split == s1.rss_scan && s1.ntid == 1,
		  "after the threads exit, (b) == (c) again: %ld == %ld, %d thread(s) listed",
		  s1.rss_split, s1.rss_scan, s1.ntid);
	/* Bad input. */
	tap_check(write_file(RSSFILE, "abc") == -EINVAL && write_file(RSSFILE, "0") == -EINVAL &&
		  write_file(RSSFILE, "-5") == -EINVAL, "rss <- garbage/0/negative: -EINVAL");
	tap_check(write_file(RSSFILE, "2") == -EINVAL, "rss <- PID 2 (kthreadd, no mm): -EINVAL");
	tap_check(write_file(RSSFILE, "99999") == -ESRCH, "rss <- unknown PID: -ESRCH");
	take(&s1);
	snprintf(pid, sizeof(pid), "%d", getpid());
	tap_check(s1.ntid == 1, "bad writes did not change the PID shown (%s)", pid);
	return tap_exit();
}
