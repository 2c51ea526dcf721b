// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing KSM (issue 25): ksmd merges the pages of a region while
 * writer threads keep writing them.
 *
 * A forked child (the leak watch's) fills a region of PAGES pages with the
 * same contents, marks it MADV_MERGEABLE and waits (at most MERGE_SECS) until
 * ksmd, run at full speed (run=1, pages_to_scan large, sleep_millisecs=0),
 * has merged at least half of it (/proc/self/ksm_merging_pages; the check
 * wants > 0). Then, for at least
 * MIN_SECS and until the evidence is in (at most MAX_SECS):
 *
 * - writer threads write their own 8-byte slot of every page, reading back
 *   each store and checking, before it, that the slot still holds their
 *   previous pass's value. The value depends on the writer and on an epoch
 *   that moves every EPOCH_MS, not on the page: between epochs every pass
 *   rewrites what is there already, so the pages stay identical and ksmd
 *   merges them again; and a write to a merged page is a COW of a KSM page
 *   (do_wp_page() -> wp_page_copy());
 * - a zapper drops one chunk of the region with MADV_DONTNEED every
 *   ZAP_MS, so that writers refault it (and rewrite identical contents,
 *   which ksmd merges again); a slot reads 0 legally only if a zap of its
 *   chunk began after its writer last wrote it (as in t_zap);
 * - an unmerger runs MADV_UNMERGEABLE (break_ksm(): an unshare fault per
 *   merged page) on part of the region every UNMERGE_MS, and makes it
 *   mergeable again a little later;
 * - ksmd's write_protect_page() and replace_page() clear anonymous PTEs
 *   and set them again under the PTE lock (pfscale kernels park them).
 *
 * A sampler thread watches ksm_merging_pages and pages_sharing meanwhile.
 * Checks: merged before the race; no write lost; ksmd kept merging during
 * the race (full_scans moved, pages_sharing > 0 seen, ksm_merging_pages
 * rose again after writes broke merges); writes copied KSM pages (seen
 * directly: see writer()); smaps Rss equals what pagemap maps; the exact
 * leak watch; and at the end ksm/run=2 unmerges everything and the KSM
 * settings are put back as they were.
 */
#include <signal.h>
#include "common.h"

#define KSM "/sys/kernel/mm/ksm/"
#define PAGES 512
#define CHUNKS 8
#define CHUNK (PAGES / CHUNKS)
#define MERGE_SECS 30	/* at most, for the first merge */
#define MIN_SECS 4	/* race at least this long */
#define MAX_SECS 20	/* at most, until the evidence is in */
#define EPOCH_MS 400
#define ZAP_MS 400
#define UNMERGE_MS 300
#define FILL 0x66696c6c2d6b736dULL	/* every slot before the race */

/* What writer @id writes in epoch @epoch (0: the fill); never 0. */
static uint64_t value(long epoch, long id)
{
	return epoch ? ((uint64_t)epoch << 40) | ((uint64_t)id << 32) | 0x6b736d : FILL;
}

static long ksm_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), KSM "%s", name);
	return read_number(path);
}

static int ksm_set(const char *name, long v)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), KSM "%s", name);
	snprintf(buf, sizeof(buf), "%ld", v);
	return write_file(path, buf);
}

#define KPF_KSM 21

/* /proc/kpageflags of @pfn, by an open fd (0 if unreadable). */
static uint64_t kpageflags(int fd, uint64_t pfn)
{
	uint64_t f = 0;

	if (pread(fd, &f, 8, pfn * 8) != 8)
		f = 0;
	return f;
}

/* The pagemap entry of the page at @addr, by an open fd. */
static uint64_t pagemap_entry(int fd, void *addr)
{
	uint64_t e = 0;

	if (pread(fd, &e, 8, (uintptr_t)addr / PAGE * 8) != 8)
		tap_bail("pread pagemap");
	return e;
}

/* This mm's pages that KSM has merged (/proc/self/ksm_merging_pages). */
static long merging_pages(void)
{
	return read_number("/proc/self/ksm_merging_pages");
}

/* Sum of smaps Rss over the entries that start in [lo, hi), in pages. */
static long smaps_rss_range(char *lo, char *hi)
{
	char line[256];
	unsigned long start, end;
	long kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		tap_bail("open smaps");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = start >= (unsigned long)lo && start < (unsigned long)hi;
		else if (in && !strncmp(line, "Rss:", 4))
			kb += atol(line + 4);
	}
	fclose(f);
	return kb / 4;
}

/* Shared between the parent and the racing child. */
struct result {
	int done, n;
	long merged0, shared0, sharing0;	/* before the race */
	double merge_secs, race_secs;
	long bad, final_bad, zeros;
	long first_page, first_id;
	uint64_t first_got, first_want;
	long long scans, writes;		/* deltas over the race */
	long ksm_seen, cow_seen;		/* probed writes (see writer()) */
	long sharing_max, merging_max, rises, samples;
	long zaps, unmerges, unmerge_err, epochs;
	long present, rss;
};

static char *base;
static volatile int stop, sampler_stop;
static volatile long epoch = 1;
static long zaps_begun[CHUNKS], zaps_done[CHUNKS], unmerges_begun;
static struct spin_barrier start_bar;
static struct result *res;

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void bad_slot(long page, long id, uint64_t got, uint64_t want)
{
	if (__atomic_add_fetch(&res->bad, 1, __ATOMIC_SEQ_CST) == 1) {
		res->first_page = page;
		res->first_id = id;
		res->first_got = got;
		res->first_want = want;
	}
}

/*
 * Each writer also probes the pages i with i % n == id: if pagemap and
 * kpageflags show a KSM page there before its store, and a page of its own
 * (another PFN, not KSM) after it, with no zap or unmerge begun meanwhile,
 * then its store was a COW of a KSM page (the test kernels have no vmstat
 * events: no cow_ksm count to read).
 */
static void *writer(void *p)
{
	long id = (long)p, i, prev = 0, cur, done_before[PAGES], writes = 0, zb = 0, ub = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY), kpf = open("/proc/kpageflags", O_RDONLY);
	uint64_t got, v, e1 = 0, e2;
	int ksm1;

	if (pm < 0 || kpf < 0)
		tap_bail("open pagemap / kpageflags");
	for (i = 0; i < PAGES; i++)
		done_before[i] = 0;
	spin_barrier_wait(&start_bar);
	while (!stop) {
		cur = epoch;
		v = value(cur, id);
		for (i = 0; i < PAGES; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;
			long *begun = &zaps_begun[i / CHUNK];

			ksm1 = 0;
			if (i % res->n == id) {
				zb = load(begun);
				ub = load(&unmerges_begun);
				e1 = pagemap_entry(pm, base + i * PAGE);
				ksm1 = (e1 & PM_PRESENT) && (kpageflags(kpf, e1 & PM_PFN) & (1ULL << KPF_KSM));
			}
			got = *slot;
			if (got == 0 && load(begun) > done_before[i])
				__atomic_add_fetch(&res->zeros, 1, __ATOMIC_RELAXED);
			else if (got != value(prev, id))
				bad_slot(i, id, got, value(prev, id));
			done_before[i] = load(&zaps_done[i / CHUNK]);
			*slot = v;
			got = *slot;
			if (got == 0 && load(begun) > done_before[i])
				__atomic_add_fetch(&res->zeros, 1, __ATOMIC_RELAXED);
			else if (got != v)
				bad_slot(i, id, got, v);
			writes++;
			if (ksm1) {
				__atomic_add_fetch(&res->ksm_seen, 1, __ATOMIC_RELAXED);
				e2 = pagemap_entry(pm, base + i * PAGE);
				if ((e2 & PM_PRESENT) && (e2 & PM_PFN) != (e1 & PM_PFN) &&
				    !(kpageflags(kpf, e2 & PM_PFN) & (1ULL << KPF_KSM)) &&
				    load(begun) == zb && load(&unmerges_begun) == ub)
					__atomic_add_fetch(&res->cow_seen, 1, __ATOMIC_RELAXED);
			}
		}
		prev = cur;
		/* Paced: ksmd (nice 5) needs the CPUs too. */
		usleep(500);
	}
	/* The last pass only reads: each slot must hold the last value. */
	for (i = 0; i < PAGES; i++) {
		got = ((volatile uint64_t *)(base + i * PAGE))[id];
		if (got == 0 && load(&zaps_begun[i / CHUNK]) > done_before[i])
			continue;
		if (got != value(prev, id)) {
			__atomic_add_fetch(&res->final_bad, 1, __ATOMIC_SEQ_CST);
			bad_slot(i, id, got, value(prev, id));
		}
	}
	__atomic_add_fetch(&res->writes, writes, __ATOMIC_RELAXED);
	close(pm);
	close(kpf);
	return NULL;
}

static void *zapper(void *p)
{
	long c = 0;

	(void)p;
	spin_barrier_wait(&start_bar);
	while (!stop) {
		usleep(ZAP_MS * 1000);
		__atomic_add_fetch(&zaps_begun[c], 1, __ATOMIC_SEQ_CST);
		madvise(base + c * CHUNK * PAGE, CHUNK * PAGE, MADV_DONTNEED);
		__atomic_add_fetch(&zaps_done[c], 1, __ATOMIC_SEQ_CST);
		res->zaps++;
		/* Not in chunk order: 3 is prime to CHUNKS. */
		c = (c + 3) % CHUNKS;
	}
	return NULL;
}

static void *unmerger(void *p)
{
	/* Halves and a middle quarter: the VMA splits and merges again. */
	static const long from[] = { 0, PAGES / 2, 3 * PAGES / 8 };
	static const long len[] = { PAGES / 2, PAGES / 2, PAGES / 4 };
	long k = 0;

	(void)p;
	spin_barrier_wait(&start_bar);
	while (!stop) {
		char *a = base + from[k] * PAGE;
		size_t l = len[k] * PAGE;

		usleep(UNMERGE_MS * 1000);
		__atomic_add_fetch(&unmerges_begun, 1, __ATOMIC_SEQ_CST);
		if (madvise(a, l, MADV_UNMERGEABLE))
			res->unmerge_err++;
		else
			res->unmerges++;
		usleep(UNMERGE_MS * 1000 / 4);
		if (madvise(a, l, MADV_MERGEABLE))
			res->unmerge_err++;
		k = (k + 1) % 3;
	}
	return NULL;
}

/* Watches merging while the race runs; also moves the writers' epoch. */
static void *sampler(void *p)
{
	long last = merging_pages(), m, s;
	double next_epoch = now() + EPOCH_MS / 1000.0;

	(void)p;
	spin_barrier_wait(&start_bar);
	while (!sampler_stop) {
		usleep(10000);
		m = merging_pages();
		s = ksm_get("pages_sharing");
		res->samples++;
		if (m > res->merging_max)
			res->merging_max = m;
		if (s > res->sharing_max)
			res->sharing_max = s;
		if (m > last)
			res->rises++;
		last = m;
		if (now() >= next_epoch) {
			epoch++;
			res->epochs++;
			next_epoch = now() + EPOCH_MS / 1000.0;
		}
	}
	return NULL;
}

/* Enough evidence that the race was offered? */
static int evidence(long long scans0)
{
	return ksm_get("full_scans") > scans0 && res->cow_seen > 0 &&
	       res->sharing_max > 0 && res->rises > 0;
}

static void ksm_child(void *arg)
{
	size_t len = PAGES * PAGE;
	long long scans0;
	pthread_t w[64], z, u, s;
	double t0;
	long i, j;
	int k;

	(void)arg;
	/* Guard pages keep the region's VMAs apart from any neighbour. */
	base = map_anon(len + 2 * PAGE);
	mprotect(base, PAGE, PROT_NONE);
	mprotect(base + PAGE + len, PAGE, PROT_NONE);
	base += PAGE;
	madvise(base, len, MADV_NOHUGEPAGE);
	for (i = 0; i < PAGES; i++)
		for (j = 0; j < (long)(PAGE / 8); j++)
			((uint64_t *)(base + i * PAGE))[j] = FILL;
	if (madvise(base, len, MADV_MERGEABLE))
		tap_bail("MADV_MERGEABLE");
	t0 = now();
	while (merging_pages() < PAGES / 2 && now() - t0 < MERGE_SECS)
		usleep(20000);
	res->merge_secs = now() - t0;
	res->merged0 = merging_pages();
	res->shared0 = ksm_get("pages_shared");
	res->sharing0 = ksm_get("pages_sharing");
	if (res->merged0 <= 0)
		return;

	spin_barrier_init(&start_bar, res->n + 4);
	scans0 = ksm_get("full_scans");
	for (k = 0; k < res->n; k++)
		if (pthread_create(&w[k], NULL, writer, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&z, NULL, zapper, NULL) || pthread_create(&u, NULL, unmerger, NULL) ||
	    pthread_create(&s, NULL, sampler, NULL))
		tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	t0 = now();
	sleep(MIN_SECS);
	while (!evidence(scans0) && now() - t0 < MAX_SECS)
		usleep(100000);
	stop = 1;
	pthread_join(z, NULL);
	pthread_join(u, NULL);
	for (k = 0; k < res->n; k++)
		pthread_join(w[k], NULL);
	sampler_stop = 1;
	pthread_join(s, NULL);
	res->race_secs = now() - t0;
	res->scans = ksm_get("full_scans") - scans0;
	/* One VMA again (the unmerger may have left it split). */
	madvise(base, len, MADV_MERGEABLE);
	res->present = pagemap_rss(base, len);
	res->rss = smaps_rss_range(base, base + len);
	res->done = 1;
}

/* The KSM settings found at the start, put back at exit. */
static long old_run = -1, old_scan, old_sleep;
static pid_t main_pid;

static void ksm_restore(void)
{
	if (getpid() != main_pid || old_run < 0)
		return;
	ksm_set("run", 2);
	ksm_set("pages_to_scan", old_scan);
	ksm_set("sleep_millisecs", old_sleep);
	ksm_set("run", old_run == 1 ? 1 : 0);
	old_run = -1;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), status;
	long shared, sharing, run, want_run;
	struct parked_mark parked;
	struct leak_watch w;

	tap_init(argv[0]);
	(void)argc;
	main_pid = getpid();
	if (n < 4)
		n = 4;
	if (n > 16)
		n = 16;
	/* merged; content; ksmd merging in the race; COW seen; rss; leak checks;
	 * unmerged and restored at the end */
	if (access(KSM "run", F_OK)) {
		tap_plan(1);
		tap_check(0, "KSM: the test kernels have CONFIG_KSM, this one has no " KSM "run");
		return tap_exit();
	}
	tap_plan(6 + LEAK_CHECKS);
	res = map_shared(sizeof(*res));
	res->n = n;
	old_run = ksm_get("run");
	want_run = old_run == 1 ? 1 : 0;
	old_scan = ksm_get("pages_to_scan");
	old_sleep = ksm_get("sleep_millisecs");
	atexit(ksm_restore);
	if (ksm_set("pages_to_scan", 10000) || ksm_set("sleep_millisecs", 0) || ksm_set("run", 1))
		tap_bail("set " KSM "{pages_to_scan,sleep_millisecs,run}");

	parked_mark(&parked);
	status = leak_watch_run(&w, ksm_child, NULL);
	parked_diag("writers racing ksmd", &parked);
	if (status != 0 || !res->done)
		tap_diag("child: wait status 0x%x, %s", status, res->done ? "finished" : "did not finish");
	tap_check(res->merged0 > 0,
		  "%d identical MADV_MERGEABLE pages merged by ksmd before the race: ksm_merging_pages %ld (pages_shared %ld, pages_sharing %ld) after %.1f s",
		  PAGES, res->merged0, res->shared0, res->sharing0, res->merge_secs);
	if (res->bad)
		tap_diag("first lost write: page %ld writer %ld: 0x%llx, want 0x%llx", res->first_page,
			 res->first_id, (unsigned long long)res->first_got,
			 (unsigned long long)res->first_want);
	tap_check(status == 0 && res->done && res->bad == 0 && res->final_bad == 0,
		  "%d writers racing ksmd, COW of KSM pages, MADV_DONTNEED refaults and MADV_UNMERGEABLE (%.1f s, %lld slot writes, %ld epochs, %ld zaps, %ld unmerges): %ld lost writes (%ld in the last read pass), %ld legally zapped",
		  n, res->race_secs, res->writes, res->epochs, res->zaps, res->unmerges, res->bad,
		  res->final_bad, res->zeros);
	if (res->unmerge_err)
		tap_diag("%ld MADV_(UN)MERGEABLE calls failed", res->unmerge_err);
	tap_check(res->done && res->scans > 0 && res->sharing_max > 0 && res->rises > 0,
		  "race offered: ksmd kept merging during the race: full_scans +%lld, pages_sharing up to %ld, ksm_merging_pages rose %ld times (up to %ld, %ld samples)%s",
		  res->scans, res->sharing_max, res->rises, res->merging_max, res->samples,
		  res->done && res->scans > 0 && res->sharing_max > 0 && res->rises > 0 ?
		  "" : ": too little work done");
	tap_check(res->done && res->cow_seen > 0,
		  "race offered: writes copied KSM pages: %ld probed stores found their page merged and left a private copy (wp_page_copy of a KSM page; %ld found it merged)%s",
		  res->cow_seen, res->ksm_seen, res->done && res->cow_seen > 0 ? "" : ": too little work done");
	tap_check(res->done && res->present == res->rss,
		  "after the race: smaps Rss %ld == pages pagemap maps %ld", res->rss, res->present);
	leak_watch_check(&w, "writers racing ksmd");

	/* run=2: stop ksmd and unmerge everything (synchronous). */
	ksm_set("run", 2);
	shared = ksm_get("pages_shared");
	sharing = ksm_get("pages_sharing");
	ksm_restore();
	run = ksm_get("run");
	tap_check(shared == 0 && sharing == 0 && run == want_run,
		  "ksm/run=2 unmerged everything (pages_shared %ld, pages_sharing %ld); run back to %ld, pages_to_scan %ld, sleep_millisecs %ld",
		  shared, sharing, run, ksm_get("pages_to_scan"), ksm_get("sleep_millisecs"));
	return tap_exit();
}
