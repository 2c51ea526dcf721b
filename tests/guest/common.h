/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the pfscale guest tests: threads, pagemap, counters. */
#ifndef PFSCALE_TEST_COMMON_H
#define PFSCALE_TEST_COMMON_H

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include "pfscale_trace.h"
#include "tap.h"

#define PAGE 4096UL
#define COUNTERS "/sys/kernel/debug/pfscale/counters"

/* Seconds on the monotonic clock, for time-bounded race loops. */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline long ncpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

static inline void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap");
	return p;
}

/* A fresh anonymous region of len bytes aligned to align (a power of 2). */
static inline char *map_aligned(unsigned long len, unsigned long align)
{
	char *p = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		tap_bail("mmap");
	a = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + align - a);
	return a;
}

#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)

/*
 * Memory a test shares with its forked children (their results): shared
 * anonymous, zeroed, and touched now, so that its shmem page (which the
 * anon LRU counts) is not first allocated inside a leak watch.
 */
static inline void *map_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		tap_bail("mmap shared");
	memset(p, 0, len);
	return p;
}

/* Number of pages of [p, p + len) whose pagemap entry has a bit of @mask. */
static inline long pagemap_count(void *p, size_t len, uint64_t mask)
{
	long n = 0, i, pages = len / PAGE;
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		tap_bail("open pagemap");
	for (i = 0; i < pages; i++) {
		off_t off = ((uintptr_t)p / PAGE + i) * 8;

		if (pread(fd, &e, 8, off) != 8)
			tap_bail("pread pagemap");
		if (e & mask)
			n++;
	}
	close(fd);
	return n;
}

/* Number of pages of [p, p + len) that /proc/self/pagemap says are present. */
static inline long pagemap_present(void *p, size_t len)
{
	return pagemap_count(p, len, PM_PRESENT);
}

#define PM_PFN ((1ULL << 55) - 1)

/*
 * PFN of the shared zero page: what a read fault of an untouched anonymous
 * page maps. pagemap shows PFNs only to CAP_SYS_ADMIN (the guest tests run
 * as root); 0 otherwise.
 */
static inline uint64_t zero_page_pfn(void)
{
	static uint64_t pfn;
	volatile char *p;
	uint64_t e = 0;
	int fd;

	if (pfn)
		return pfn;
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (p == MAP_FAILED || fd < 0)
		tap_bail("zero_page_pfn: mmap/open pagemap");
	(void)*p;
	if (pread(fd, &e, 8, (uintptr_t)p / PAGE * 8) != 8)
		tap_bail("pread pagemap");
	close(fd);
	munmap((void *)p, PAGE);
	pfn = (e & PM_PRESENT) ? e & PM_PFN : 0;
	return pfn;
}

/*
 * Number of pages of [p, p + len) that smaps' Rss counts: present entries
 * other than the shared zero page (pagemap calls it present; Rss does not
 * count it, vm_normal_page() being NULL for it). A writer that reads back
 * its store after a zap took the page maps the zero page, legally.
 */
static inline long pagemap_rss(void *p, size_t len)
{
	long n = 0, i, pages = len / PAGE;
	uint64_t e, zero = zero_page_pfn();
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		tap_bail("open pagemap");
	if (!zero)
		tap_bail("pagemap shows no PFNs (not root?)");
	for (i = 0; i < pages; i++) {
		if (pread(fd, &e, 8, ((uintptr_t)p / PAGE + i) * 8) != 8)
			tap_bail("pread pagemap");
		if ((e & PM_PRESENT) && (e & PM_PFN) != zero)
			n++;
	}
	close(fd);
	return n;
}

/*
 * Field @field ("Rss", "Swap", ...) of the smaps entry that starts at p, in
 * pages (-1 if not found).
 */
static inline long smaps_field(void *p, const char *field)
{
	char line[256], want[32];
	long kb = -1;
	size_t n = strlen(field);
	int found = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		tap_bail("open smaps");
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want)))
			found = 1;
		else if (found && !strncmp(line, field, n) && line[n] == ':') {
			kb = atol(line + n + 1);
			break;
		}
	}
	fclose(f);
	return kb < 0 ? -1 : kb / 4;
}

/* Rss: of the smaps entry that starts at p, in pages (-1 if not found). */
static inline long smaps_rss(void *p)
{
	return smaps_field(p, "Rss");
}

/* @name's value in @path, a file of "name value" lines (-1 if missing). */
static inline long long name_value(const char *path, const char *name)
{
	char n[64];
	long long v, ret = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", n, &v) == 2)
		if (!strcmp(n, name))
			ret = v;
	fclose(f);
	return ret;
}

/* Value of one pfscale counter, or -1 if the kernel has no pfscale. */
static inline long long pfscale_counter(const char *name)
{
	return name_value(COUNTERS, name);
}

/* A /proc/meminfo field in kB (-1 if missing). */
static inline long meminfo_kb(const char *field)
{
	char line[128];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = atol(line + n + 1);
	fclose(f);
	return kb;
}

/* A /proc/vmstat counter (-1 if missing). */
static inline long long vmstat_value(const char *name)
{
	return name_value("/proc/vmstat", name);
}

/* Anonymous faults counted on either fault path (-1 without pfscale). */
static inline long long pfscale_anon_faults(void)
{
	long long locked = pfscale_counter("anon_fault_locked");

	return locked < 0 ? -1 : locked + pfscale_counter("anon_fault_atomic");
}

/* 1 if the atomic fault path is on, 0 if off, -1 if the kernel lacks it. */
static inline int pfscale_atomic_pte(void)
{
	char c = 0;
	int fd = open("/sys/kernel/debug/pfscale/atomic_pte", O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1' ? 1 : c == '0' ? 0 : -1;
}

/* The path's name and the counter its anonymous write faults lose in. */
static inline const char *pfscale_path(void)
{
	return pfscale_atomic_pte() == 1 ? "atomic" : "stock";
}

/* The counter of anonymous faults taken on the path in use. */
static inline const char *pfscale_fault_counter(void)
{
	return pfscale_atomic_pte() == 1 ? "anon_fault_atomic" : "anon_fault_locked";
}

/*
 * The kernel's description of its counters (DESCRIPTIONS: "name kind level
 * site meaning" lines, in the order of COUNTERS; the kinds and levels are
 * explained in include/linux/pfscale_counters.h), so that tests filter
 * counters by kind and keep no list of names.
 */
#define DESCRIPTIONS "/sys/kernel/debug/pfscale/descriptions"
#define KIND_LEN 16

/*
 * Counter @name's kind into @kind and its level into @level (KIND_LEN
 * each; either may be NULL); 0, or -1 if the kernel does not describe it.
 */
static inline int pfscale_counter_desc(const char *name, char *kind, char *level)
{
	char line[512], n[64], k[KIND_LEN], l[KIND_LEN];
	FILE *f = fopen(DESCRIPTIONS, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %15s %15s", n, k, l) == 3 && !strcmp(n, name)) {
			if (kind)
				memcpy(kind, k, KIND_LEN);
			if (level)
				memcpy(level, l, KIND_LEN);
			ret = 0;
		}
	fclose(f);
	return ret;
}

static inline const char *pfscale_anon_loss_counter(void)
{
	return pfscale_atomic_pte() == 1 ? "anon_cmpxchg_lost" : "anon_pte_recheck_lost";
}

/*
 * The parking sites' counters (kind parked): which PTE-lock holder parked
 * the PTEs that faults met (busy_pte_fault), one counter per site, the
 * site recorded in the parked marker. Chosen by the kind the kernel's
 * table gives them (DESCRIPTIONS, in the order of COUNTERS), so a site
 * the kernel adds is seen without a list or a naming rule here. A site
 * is named by its counter (parked_by_unmap).
 */
#define PARKED_MAX 32
struct parked_sites {
	int n;			/* -1: the kernel counts no parking sites */
	char site[PARKED_MAX][64];
	long long count[PARKED_MAX];
};

static inline void parked_sites_read(struct parked_sites *p)
{
	char n[64], line[512], dn[64], kind[KIND_LEN];
	long long v;
	FILE *f = fopen(COUNTERS, "r"), *d = fopen(DESCRIPTIONS, "r");

	p->n = -1;
	while (f && d && fscanf(f, "%63s %lld", n, &v) == 2 && fgets(line, sizeof(line), d)) {
		if (sscanf(line, "%63s %15s", dn, kind) != 2 || strcmp(dn, n)) {
			tap_diag("%s does not describe counter %s in its place", DESCRIPTIONS, n);
			tap_bail("counter descriptions");
		}
		if (strcmp(kind, "parked") || p->n + 1 >= PARKED_MAX)
			continue;
		if (p->n < 0)
			p->n = 0;
		snprintf(p->site[p->n], sizeof(p->site[0]), "%s", n);
		p->count[p->n++] = v;
	}
	if (f)
		fclose(f);
	if (d)
		fclose(d);
}

/* Faults that met a PTE parked by @site (its counter) since @p0 (-1: no such site). */
static inline long long parked_since(const struct parked_sites *p0, const char *site)
{
	struct parked_sites now_;
	int i, j;

	parked_sites_read(&now_);
	for (i = 0; i < p0->n; i++) {
		if (strcmp(p0->site[i], site))
			continue;
		for (j = 0; j < now_.n; j++)
			if (!strcmp(now_.site[j], site))
				return now_.count[j] - p0->count[i];
	}
	return -1;
}

/* "site N, site N" of the sites whose parks faults met since @p0, in @buf. */
static inline const char *parked_moved(const struct parked_sites *p0, char *buf, size_t len)
{
	struct parked_sites now_;
	size_t off = 0;
	int i;

	parked_sites_read(&now_);
	buf[0] = 0;
	for (i = 0; i < now_.n && i < p0->n && off < len; i++)
		if (now_.count[i] != p0->count[i])
			off += snprintf(buf + off, len - off, "%s%s %lld", off ? ", " : "",
					now_.site[i], now_.count[i] - p0->count[i]);
	if (!buf[0])
		snprintf(buf, len, p0->n < 0 ? "no parking sites counted" : "none");
	return buf;
}

/* Where a count of the parked PTEs that faults met begins. */
struct parked_mark {
	long long busy;		/* busy_pte_fault; -1 without pfscale */
	struct parked_sites sites;
};

static inline void parked_mark(struct parked_mark *m)
{
	m->busy = pfscale_counter("busy_pte_fault");
	parked_sites_read(&m->sites);
}

/* Faults that met a parked PTE since @m (-1 without pfscale). */
static inline long long parked_busy(const struct parked_mark *m)
{
	return m->busy < 0 ? -1 : pfscale_counter("busy_pte_fault") - m->busy;
}

/* A diag of those faults and whose parks they met (none without pfscale). */
static inline void parked_diag(const char *what, const struct parked_mark *m)
{
	char by[200];

	if (m->busy >= 0)
		tap_diag("%s: %s path: %lld faults met a parked PTE (busy_pte_fault; parked by: %s)",
			 what, pfscale_path(), parked_busy(m), parked_moved(&m->sites, by, sizeof(by)));
}

/*
 * The first line (up to @len - 1 bytes) of @path into @buf; its length, or
 * -1 (and @buf empty).
 */
static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY), n;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, s, strlen(s)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* Write @s to tracefs' @file (relative to PFSCALE_TRACEFS); bail on failure. */
static inline void tracefs_write(const char *file, const char *s)
{
	char path[128];

	snprintf(path, sizeof(path), PFSCALE_TRACEFS "/%s", file);
	if (write_file(path, s)) {
		tap_diag("cannot write '%s' to %s", s, path);
		tap_bail("tracefs write");
	}
}

/* Empty the trace buffer: opening it with O_TRUNC does (a write does not). */
static inline void tracefs_empty(void)
{
	int fd = open(PFSCALE_TRACEFS "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		tap_bail("open " PFSCALE_TRACEFS "/trace O_TRUNC");
	close(fd);
}

#define RACE_WINDOW_US "/sys/kernel/debug/pfscale/race_window_us"

/*
 * Widen the kernel's race windows to @us (a string), for a test whose race
 * has not come in half of its time: only if they are off now (a widened
 * boot keeps its own width), and 1 if they were widened, so that the test
 * sets them back with race_windows_off() and says so in its check.
 */
static inline int race_windows_widen(const char *us)
{
	char was[16];

	return read_file(RACE_WINDOW_US, was, sizeof(was)) > 0 && atoi(was) == 0 &&
	       write_file(RACE_WINDOW_US, us) == 0;
}

static inline void race_windows_off(void)
{
	write_file(RACE_WINDOW_US, "0");
}

/*
 * make check's boot (pfscale.quick=1 on the kernel command line) runs each
 * race test twice, on both paths, in about the time make test gives one:
 * the fixed parts of a test (a minimum time or count of rounds, a time
 * that is not waiting for evidence) shrink to a third there. What a test
 * waits for (a count that must move) and its limits stay as they are.
 * make test's unpatched boot, the baseline, is a quick boot too.
 */
static inline int quick_boot(void)
{
	static int quick = -1;
	char cmdline[4096];

	if (quick < 0)
		quick = read_file("/proc/cmdline", cmdline, sizeof(cmdline)) > 0 &&
			strstr(cmdline, "pfscale.quick=1") != NULL;
	return quick;
}

/* A fixed time, in seconds: a third of it (at least 1 s) in a quick boot. */
static inline double fixed_secs(double secs)
{
	if (!quick_boot())
		return secs;
	return secs > 3 ? secs / 3 : 1;
}

/* A fixed count of rounds: a third of it (at least 1) in a quick boot. */
static inline long fixed_count(long n)
{
	if (!quick_boot())
		return n;
	return n > 3 ? n / 3 : 1;
}

/* The number a one-number file (sysfs, procfs) holds; -1 if unreadable. */
static inline long long read_number(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

/*
 * All of @path into @buf (at most @len - 1 bytes, NUL-terminated), with
 * read() rather than stdio: no buffer of its own to fault in. The length,
 * or -errno.
 */
static inline long slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	long n = 0, r;

	if (fd < 0)
		return -errno;
	while ((r = read(fd, buf + n, len - 1 - n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	return r < 0 ? -errno : n;
}

/*
 * Park for good in pause(2), by a raw syscall: no libc wrapper frame, so a
 * debugger sees the thread in the kernel at a known place.
 */
static inline void raw_pause_forever(void)
{
	for (;;) {
		long ret;

		asm volatile("syscall" : "=a"(ret) : "a"((long)SYS_pause)
			     : "rcx", "r11", "memory");
	}
}

#define PFSCALE_RSS "/sys/kernel/debug/pfscale/rss"

/*
 * One check, at the end of a race test: this process's RSS counters (the
 * mm's plus every live thread's unsynced task->rss_stat delta, (b) of the
 * pfscale rss file) equal exactly what its page tables map ((c), a walk).
 * A race that counted a page twice or not at all, or freed one without
 * uncounting it, leaves them apart for good. read(), not stdio: reading
 * must not fault in a page of its own between the two.
 */
static inline void rss_agree_check(const char *what)
{
	static char buf[16 * 1024];
	long split = -1, scan = -1;
	char pid[16], *p;

	if (access(PFSCALE_RSS, F_OK)) {
		tap_skip("%s: RSS counters against the page tables (no pfscale rss file in this kernel)",
			 what);
		return;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(PFSCALE_RSS, pid))
		tap_bail("write " PFSCALE_RSS);
	if (slurp(PFSCALE_RSS, buf, sizeof(buf)) < 0)
		tap_bail("read " PFSCALE_RSS);
	p = strstr(buf, "\nrss_split ");
	if (p)
		split = atol(p + 11);
	p = strstr(buf, "\nrss_scan ");
	if (p)
		scan = atol(p + 10);
	tap_check(split >= 0 && split == scan,
		  "%s: RSS counters agree with the page tables: (b) %ld == (c) %ld", what, split, scan);
}

/*
 * Same-page races: every thread writes its own 8-byte slot of every page of
 * a fresh region; a lost install would lose a whole page of slots.
 */
struct slot_writer {
	char *base;
	long pages;
	int id, round;
	pthread_barrier_t *bar;
};

/* What thread @id writes into page @page in round @round; never 0. */
static inline uint64_t slot_value(int round, int id, long page)
{
	return ((uint64_t)(round + 1) << 48) | ((uint64_t)id << 32) | page;
}

static inline void *slot_writer_run(void *p)
{
	struct slot_writer *w = p;
	long i;

	pthread_barrier_wait(w->bar);
	for (i = 0; i < w->pages; i++)
		((volatile uint64_t *)(w->base + i * PAGE))[w->id] =
			slot_value(w->round, w->id, i);
	return NULL;
}

/* Slots of the first @nthreads of each page that do not hold their value. */
static inline long bad_slots(char *base, long pages, int nthreads, int round)
{
	long bad = 0, i;
	int k;

	for (i = 0; i < pages; i++)
		for (k = 0; k < nthreads; k++)
			if (((uint64_t *)(base + i * PAGE))[k] != slot_value(round, k, i))
				bad++;
	return bad;
}

/* Start n threads running fn(arg_i) with a common start barrier. */
struct team {
	pthread_t tid[256];
	int n;
};

static inline void team_start(struct team *t, int n, void *(*fn)(void *),
			      void *args, size_t argsize)
{
	int i;

	t->n = n;
	for (i = 0; i < n; i++)
		if (pthread_create(&t->tid[i], NULL, fn, (char *)args + i * argsize))
			tap_bail("pthread_create");
}

static inline void team_join(struct team *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		pthread_join(t->tid[i], NULL);
}

/*
 * Run @n threads fn(0) .. fn(n - 1) and one other(arg) for @secs seconds,
 * then set *stop and join them all.
 */
static inline void run_against(int n, void *(*fn)(void *), void *(*other)(void *),
			       void *arg, unsigned int secs, volatile int *stop)
{
	pthread_t tid[256], z;
	int k;

	*stop = 0;
	for (k = 0; k < n; k++)
		if (pthread_create(&tid[k], NULL, fn, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&z, NULL, other, arg))
		tap_bail("pthread_create");
	sleep(secs);
	*stop = 1;
	pthread_join(z, NULL);
	for (k = 0; k < n; k++)
		pthread_join(tid[k], NULL);
}

/* One round: @n slot writers race over the fresh region at @base. */
static inline void race_slot_writers(char *base, long pages, int n, int round)
{
	struct slot_writer w[256];
	pthread_barrier_t bar;
	struct team t;
	int k;

	pthread_barrier_init(&bar, NULL, n);
	for (k = 0; k < n; k++)
		w[k] = (struct slot_writer){ base, pages, k, round, &bar };
	team_start(&t, n, slot_writer_run, w, sizeof(w[0]));
	team_join(&t);
	pthread_barrier_destroy(&bar);
}

/*
 * Race @n slot writers over a fresh @pages-page region (@advice: MADV_*
 * HUGEPAGE or NOHUGEPAGE), then check every slot, pagemap and smaps Rss;
 * 1 if all are right, else 0 after a diagnostic line.
 */
static inline int race_round(long pages, int n, int round, int advice)
{
	size_t len = pages * PAGE;
	char *base = map_anon(len);
	long bad, present, rss;

	madvise(base, len, advice);
	race_slot_writers(base, pages, n, round);
	bad = bad_slots(base, pages, n, round);
	present = pagemap_present(base, len);
	rss = smaps_rss(base);
	munmap(base, len);
	if (bad || present != pages || rss != pages) {
		tap_diag("round %d: %ld bad slots, %ld present, rss %ld (want %ld)",
			 round, bad, present, rss, pages);
		return 0;
	}
	return 1;
}

/*
 * Leak checks that cannot be fooled (issue 13).
 *
 * /proc/meminfo's AnonPages and PageTables are global counters with per-CPU
 * deltas that are folded only now and then, so a reading can be off by
 * tens of pages per CPU; writing /proc/sys/vm/stat_refresh folds them all
 * first. And an exited process's mm is not freed (nor its exit-time checks,
 * "Bad rss-counter state" and "non-zero pgtables_bytes", run) while a CPU
 * still holds it as its lazy TLB mm: the idle task keeps the last user mm a
 * CPU ran until the CPU next switches to another user mm. mm_quiesce()
 * moves the calling thread onto every online CPU in turn, so each switches
 * to this mm and drops the one it held, and drains the CPU's LRU batches,
 * then folds the counters.
 *
 * AnonPages counts mapped anonymous pages only: a page whose rmap was
 * removed but whose last reference was never put (a losing fault that
 * forgets its put_page()) is invisible to it, yet stays on the anon LRU.
 * So the levels compared include nr_inactive_anon + nr_active_anon, read
 * once every CPU's LRU add batch is drained (a page in a batch is on no
 * list yet, and a freed page waits there for its last reference).
 *
 * The usual pattern: run the racing part in a forked child, and around it
 *	mem_level(&before); fork, wait; mem_level(&after);
 * then AnonPages and PageTables must be back exactly, and kmsg_bad() must
 * find no exit-time complaint since kmsg_open().
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/*
 * Run @fn(@arg) on every online CPU in turn, this thread pinned there; the
 * thread's affinity is restored afterwards. Per-CPU state (LRU add batches,
 * vmstat diffs) can only be flushed from its own CPU without a kernel hook.
 */
static inline void on_each_cpu_call(void (*fn)(void *), void *arg)
{
	unsigned long old[16] = { 0 }, one[16];
	long cpu, n = sysconf(_SC_NPROCESSORS_CONF);

	if (n > 16 * 64)
		n = 16 * 64;
	if (syscall(SYS_sched_getaffinity, 0, sizeof(old), old) < 0)
		tap_bail("sched_getaffinity");
	for (cpu = 0; cpu < n; cpu++) {
		memset(one, 0, sizeof(one));
		one[cpu / 64] = 1UL << (cpu % 64);
		/* Returns once this thread runs on @cpu (offline ones fail). */
		if (syscall(SYS_sched_setaffinity, 0, sizeof(one), one) == 0) {
			sched_yield();
			if (fn)
				fn(arg);
		}
	}
	syscall(SYS_sched_setaffinity, 0, sizeof(old), old);
}

/* Pin the calling thread to @cpu. */
static inline int pin_thread_to_cpu(long cpu)
{
	unsigned long mask[16] = { 0 };

	if (cpu < 0 || cpu >= 16 * 64)
		return -1;
	mask[cpu / 64] = 1UL << (cpu % 64);
	return syscall(SYS_sched_setaffinity, 0, sizeof(mask), mask);
}

/*
 * TLB flushers, for writers that must fault inside a site's window. A site
 * that clears or parks the PTEs of a range (NUMA hinting's
 * change_pte_range(), MADV_FREE) flushes the TLB once, after the range: a
 * writer that holds the page's TLB entry writes through it and never meets
 * the PTE the site left. A switch to another mm writes CR3, and the guest's
 * CPU (qemu64, no PCID) then drops its whole TLB. So: one process per CPU,
 * pinned there, counting its rounds in a shared page and yielding;
 * tlb_flush_self() in a writer pinned to the same CPU yields until that
 * count moved (the flusher ran there since: two mm switches), at most
 * TLB_FLUSH_TRIES times, and counts a miss otherwise. Started before the
 * region is mapped, so that the fork does not make its pages copy-on-write.
 */
#define MAX_TLB_FLUSHERS 64
#define TLB_FLUSH_TRIES 16
struct tlb_flushers {
	int n;
	pid_t pid[MAX_TLB_FLUSHERS];
	volatile long *rounds;		/* shared: per CPU, the flusher's rounds */
	long flushes, misses;
};

static struct tlb_flushers *tlb_flushers_active;

static inline int cpu_has_pcid(void)
{
	static char info[64 * 1024];

	return slurp("/proc/cpuinfo", info, sizeof(info)) > 0 && strstr(info, " pcid");
}

static inline void tlb_flushers_start(struct tlb_flushers *f)
{
	pid_t parent = getpid(), pid;
	int k;

	f->n = ncpus() < MAX_TLB_FLUSHERS ? ncpus() : MAX_TLB_FLUSHERS;
	f->flushes = f->misses = 0;
	f->rounds = mmap(NULL, MAX_TLB_FLUSHERS * sizeof(long), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (f->rounds == MAP_FAILED)
		tap_bail("mmap the TLB flushers' page");
	if (cpu_has_pcid())
		tap_diag("TLB flushers: this CPU has PCID: a switch to another mm may keep the TLB");
	for (k = 0; k < f->n; k++) {
		pid = fork();
		if (pid < 0)
			tap_bail("fork a TLB flusher");
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (pin_thread_to_cpu(k))
				_exit(1);
			while (getppid() == parent) {
				f->rounds[k]++;
				sched_yield();
			}
			_exit(0);
		}
		f->pid[k] = pid;
	}
	tlb_flushers_active = f;
}

/* Drop this CPU's TLB: yield until this CPU's flusher ran (see above). */
static inline void tlb_flush_self(void)
{
	struct tlb_flushers *f = tlb_flushers_active;
	unsigned int cpu = ~0U;
	long seen;
	int k;

	syscall(SYS_getcpu, &cpu, NULL, NULL);
	if (!f || cpu >= (unsigned int)f->n) {
		sched_yield();
		return;
	}
	seen = f->rounds[cpu];
	for (k = 0; k < TLB_FLUSH_TRIES; k++) {
		sched_yield();
		if (f->rounds[cpu] != seen) {
			__atomic_add_fetch(&f->flushes, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_add_fetch(&f->misses, 1, __ATOMIC_RELAXED);
}

static inline void tlb_flushers_stop(struct tlb_flushers *f)
{
	int k;

	for (k = 0; k < f->n; k++) {
		kill(f->pid[k], SIGKILL);
		waitpid(f->pid[k], NULL, 0);
	}
	if (f->n)
		munmap((void *)f->rounds, MAX_TLB_FLUSHERS * sizeof(long));
	f->n = 0;
	tlb_flushers_active = NULL;
}

/* What writer @id leaves in page @page in pass @gen (0: never written). */
static inline uint64_t pass_value(uint64_t gen, long id, long page)
{
	return gen ? (gen << 40) | ((uint64_t)id << 32) | page : 0;
}

/*
 * A region of one PTE table: 512 pages, 2 MiB aligned, PROT_NONE pages
 * either side (smaps has its own entry), MADV_NOHUGEPAGE.
 */
static inline char *map_one_table(void)
{
	unsigned long table = 2UL << 20;
	char *q = map_aligned(3 * table, table), *base = q + table;

	munmap(q, table - PAGE);
	munmap(base + table + PAGE, table - PAGE);
	if (mprotect(base - PAGE, PAGE, PROT_NONE) || mprotect(base + table, PAGE, PROT_NONE))
		tap_bail("mprotect guard");
	madvise(base, table, MADV_NOHUGEPAGE);
	return base;
}

/*
 * The slot race, with zap generations: writer threads make passes over a
 * region, each exchanging its own 8-byte slot of every page for this pass's
 * value (a write access first, so that a missing page comes back through
 * the write fault, not the zero page; what the exchange returns must be the
 * previous pass's value) and reading it back. The test's zapper drops
 * chunks of the region between slot_race_zap_begin() and _end(): a slot may
 * hold 0 instead only in a chunk below @zappable, and only if a zap of that
 * chunk began after the write was made (a 0 is then a zapped write, counted
 * in @zeros: the race's evidence); anything else is a lost write (@bad).
 * The test sets @stop, joins its own threads, then slot_race_finish() has
 * each writer read every slot once more (@final_bad). Writer k runs on CPU
 * k % ncpus().
 */
#define SLOT_RACE_WRITERS 64
#define SLOT_RACE_CHUNKS 16
struct slot_race;
struct slot_race_writer {
	struct slot_race *race;
	long id;
};

struct slot_race {
	/* Set by the test before slot_race_start(). */
	char *base;
	long pages, chunks, zappable;	/* chunks of pages / chunks pages each */
	int flush_every;		/* > 0: tlb_flush_self() after so many pages */
	int sparse_every;		/* > 0: the second half of the pages is
					 * written only every so many passes */
	/* The race. */
	int nwriters;
	volatile int stop, quiet;
	long zap_begun[SLOT_RACE_CHUNKS], zap_done[SLOT_RACE_CHUNKS];
	long bad, final_bad, zeros, passes, zaps;
	long cross_bad;			/* last reads that another CPU reads otherwise */
	char first_bad[160];		/* the first lost write, for a diag */
	uint64_t *last[SLOT_RACE_WRITERS];	/* what each writer's last read got */
	pid_t tid[SLOT_RACE_WRITERS];
	pthread_t thread[SLOT_RACE_WRITERS];
	struct slot_race_writer arg[SLOT_RACE_WRITERS];
};

static inline long slot_race_load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static inline void slot_race_zap_begin(struct slot_race *r, long chunk)
{
	__atomic_add_fetch(&r->zap_begun[chunk], 1, __ATOMIC_SEQ_CST);
}

static inline void slot_race_zap_end(struct slot_race *r, long chunk)
{
	__atomic_add_fetch(&r->zap_done[chunk], 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&r->zaps, 1, __ATOMIC_RELAXED);
}

/*
 * Is @got in page @i, where @want should be, legal? Counts a zapped write;
 * notes the first lost one (@what: which access found it).
 */
static inline int slot_race_ok(struct slot_race *r, uint64_t got, uint64_t want, long i,
			       long done_before, const char *what)
{
	long c = i / (r->pages / r->chunks), begun;
	static int noted;

	if (got == want)
		return 1;
	begun = slot_race_load(&r->zap_begun[c]);
	if (got == 0 && c < r->zappable && begun > done_before) {
		__atomic_add_fetch(&r->zeros, 1, __ATOMIC_RELAXED);
		return 1;
	}
	if (!__atomic_exchange_n(&noted, 1, __ATOMIC_SEQ_CST))
		snprintf(r->first_bad, sizeof(r->first_bad),
			 "%s of page %ld: 0x%llx, want 0x%llx (chunk %ld: zaps begun %ld, done %ld, %ld done before the write)",
			 what, i, (unsigned long long)got, (unsigned long long)want, c, begun,
			 slot_race_load(&r->zap_done[c]), done_before);
	return 0;
}

static inline void *slot_race_writer_run(void *p)
{
	struct slot_race_writer *w = p;
	struct slot_race *r = w->race;
	long id = w->id, i, chunk = r->pages / r->chunks, d, *done_before;
	uint64_t gen = 0, v, got, *slot, *written;	/* the pass that last wrote a page */

	r->tid[id] = syscall(SYS_gettid);
	/*
	 * Pinned: a zap flushes the TLB once, at its end, and frees the pages
	 * only after that. A writer that moved to another CPU during a zap,
	 * wrote its slot in the new page there, and came back, would reach the
	 * unmapped page again through the first CPU's TLB and read its own
	 * older value: Linux allows that (nothing is freed early), the check
	 * would not.
	 */
	if (pin_thread_to_cpu(id % ncpus()))
		tap_bail("pin a slot race writer to its CPU");
	done_before = calloc(r->pages, sizeof(*done_before));
	written = calloc(r->pages, sizeof(*written));
	if (!done_before || !written)
		tap_bail("calloc");
	for (i = 0; i < r->pages; i++)
		done_before[i] = slot_race_load(&r->zap_done[i / chunk]);
	while (!r->stop) {
		gen++;
		for (i = 0; i < r->pages; i++) {
			if (r->sparse_every > 0 && i >= r->pages / 2 &&
			    (gen + id) % r->sparse_every)
				continue;
			slot = (uint64_t *)(r->base + i * PAGE) + id;
			d = slot_race_load(&r->zap_done[i / chunk]);
			v = pass_value(gen, id, i);
			got = __atomic_exchange_n(slot, v, __ATOMIC_SEQ_CST);
			if (!slot_race_ok(r, got, pass_value(written[i], id, i), i, done_before[i],
					  "exchange"))
				__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
			got = __atomic_load_n(slot, __ATOMIC_SEQ_CST);
			if (!slot_race_ok(r, got, v, i, d, "read-back"))
				__atomic_add_fetch(&r->bad, 1, __ATOMIC_RELAXED);
			done_before[i] = d;
			written[i] = gen;
			if (r->flush_every > 0 && i % r->flush_every == r->flush_every - 1)
				tlb_flush_self();
		}
		__atomic_add_fetch(&r->passes, 1, __ATOMIC_RELAXED);
	}
	/* Once the zapper and the test's other threads are gone. */
	while (!r->quiet)
		usleep(1000);
	for (i = 0; i < r->pages; i++) {
		got = __atomic_load_n((uint64_t *)(r->base + i * PAGE) + id, __ATOMIC_SEQ_CST);
		r->last[id][i] = got;
		if (!slot_race_ok(r, got, pass_value(written[i], id, i), i, done_before[i],
				  "last read"))
			__atomic_add_fetch(&r->final_bad, 1, __ATOMIC_RELAXED);
	}
	free(done_before);
	free(written);
	return NULL;
}

/* Start @n writers over r->base (the configuration fields set). */
static inline void slot_race_start(struct slot_race *r, int n)
{
	int k;

	if (n > SLOT_RACE_WRITERS || r->chunks < 1 || r->chunks > SLOT_RACE_CHUNKS ||
	    r->pages % r->chunks || r->zappable > r->chunks)
		tap_bail("slot_race_start: bad writers, pages, chunks or zappable");
	r->nwriters = n;
	r->stop = r->quiet = 0;
	r->bad = r->final_bad = r->zeros = r->passes = r->zaps = r->cross_bad = 0;
	memset(r->zap_begun, 0, sizeof(r->zap_begun));
	memset(r->zap_done, 0, sizeof(r->zap_done));
	memset(r->tid, 0, sizeof(r->tid));
	for (k = 0; k < n; k++) {
		r->last[k] = calloc(r->pages, sizeof(uint64_t));
		if (!r->last[k])
			tap_bail("calloc");
		r->arg[k].race = r;
		r->arg[k].id = k;
		if (pthread_create(&r->thread[k], NULL, slot_race_writer_run, &r->arg[k]))
			tap_bail("pthread_create");
	}
}

/*
 * After r->stop and the test's other threads joined: each writer's last
 * read, then join; then every writer's slots read again from the next CPU,
 * where they must hold what the writer last read (a TLB entry that outlived
 * its flush shows only from another CPU: the writer itself stays on one).
 */
static inline void slot_race_finish(struct slot_race *r)
{
	unsigned long old[16] = { 0 };
	uint64_t got;
	long i;
	int k;

	r->stop = 1;
	r->quiet = 1;
	for (k = 0; k < r->nwriters; k++)
		pthread_join(r->thread[k], NULL);
	if (syscall(SYS_sched_getaffinity, 0, sizeof(old), old) < 0)
		tap_bail("sched_getaffinity");
	for (k = 0; k < r->nwriters; k++) {
		if (pin_thread_to_cpu((k + 1) % ncpus()))
			tap_bail("pin to the next CPU");
		for (i = 0; i < r->pages; i++) {
			got = __atomic_load_n((uint64_t *)(r->base + i * PAGE) + k, __ATOMIC_SEQ_CST);
			if (got != r->last[k][i])
				r->cross_bad++;
		}
		free(r->last[k]);
		r->last[k] = NULL;
	}
	syscall(SYS_sched_setaffinity, 0, sizeof(old), old);
}

/* A zapper: MADV_DONTNEED of the zappable chunks, one at a time, in turn. */
static inline void *slot_race_chunk_zapper(void *p)
{
	struct slot_race *r = p;
	long c = 0, chunk = r->pages / r->chunks;

	while (!r->stop) {
		slot_race_zap_begin(r, c);
		madvise(r->base + c * chunk * PAGE, chunk * PAGE, MADV_DONTNEED);
		slot_race_zap_end(r, c);
		c = (c + 1) % r->zappable;
		sched_yield();
	}
	return NULL;
}

/* A userfaultfd (non-blocking) with its API handshake done; -1 if none. */
static inline int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0 && ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The next message of userfaultfd @fd, waiting up to 10 ms: 1 with the
 * faulting page's address in *@addr for a page fault, -1 for another
 * event, 0 for none.
 */
static inline int uffd_next_fault(int fd, unsigned long *addr)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, 10) <= 0 || read(fd, &msg, sizeof(msg)) != sizeof(msg))
		return 0;
	if (msg.event != UFFD_EVENT_PAGEFAULT)
		return -1;
	*addr = msg.arg.pagefault.address & ~(PAGE - 1);
	return 1;
}

/* Wake the faults waiting on @addr's page: a fill found it filled (EEXIST). */
static inline void uffd_wake(int fd, unsigned long addr)
{
	struct uffdio_range r = { addr, PAGE };

	ioctl(fd, UFFDIO_WAKE, &r);
}

/* munmap() drains this CPU's LRU batches first (unmap_region()'s lru_add_drain()). */
static inline void lru_drain_this_cpu(void *unused)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)unused;
	if (p != MAP_FAILED)
		munmap(p, 4096);
}

static inline void mm_quiesce(void)
{
	on_each_cpu_call(lru_drain_this_cpu, NULL);
	write_file("/proc/sys/vm/stat_refresh", "1");
}

/* What a child's slot race left, in memory it shares with its parent. */
struct slot_race_result {
	int done, nwriters;
	long bad, final_bad, cross_bad, zeros, passes, zaps;
	char first_bad[160];
	long present, zero_mapped, rss;	/* pages, after quiesce */
	long long faults, busy, minflt;
	char parked[200];	/* parked_moved(): whose parks the faults met */
	double secs;
};

/* Where a race began: for slot_race_collect()'s deltas. */
struct slot_race_mark {
	long long faults;
	struct parked_mark parked;
	double t0;
};

static inline void slot_race_mark(struct slot_race_mark *m)
{
	m->faults = pfscale_anon_faults();
	parked_mark(&m->parked);
	m->t0 = now();
}

/*
 * After slot_race_finish(): the race's counts, the faults and parked PTEs
 * met since @m (-1 without pfscale), this process's minor faults, and the
 * region's RSS views after quiesce.
 */
static inline void slot_race_collect(struct slot_race *r, const struct slot_race_mark *m,
				     struct slot_race_result *o)
{
	struct rusage ru;
	size_t len = r->pages * PAGE;

	o->secs = now() - m->t0;
	o->nwriters = r->nwriters;
	o->bad = r->bad;
	o->final_bad = r->final_bad;
	o->cross_bad = r->cross_bad;
	o->zeros = r->zeros;
	o->passes = r->passes;
	o->zaps = r->zaps;
	memcpy(o->first_bad, r->first_bad, sizeof(o->first_bad));
	getrusage(RUSAGE_SELF, &ru);
	o->minflt = ru.ru_minflt;
	o->faults = m->faults < 0 ? -1 : pfscale_anon_faults() - m->faults;
	o->busy = parked_busy(&m->parked);
	parked_moved(&m->parked.sites, o->parked, sizeof(o->parked));
	mm_quiesce();
	o->present = pagemap_rss(r->base, len);
	o->zero_mapped = pagemap_present(r->base, len) - o->present;
	o->rss = smaps_rss(r->base);
	o->done = 1;
}

/*
 * The parent's checks of a child's slot race (SLOT_RACE_CHECKS): no write
 * lost, and smaps Rss == pagemap after quiesce; @status: the child's wait
 * status. Then a diag of the faults taken and the parked PTEs they met.
 */
#define SLOT_RACE_CHECKS 2
static inline void slot_race_check(const char *name, int status, const struct slot_race_result *o)
{
	if (status != 0 || !o->done)
		tap_diag("%s child: wait status 0x%x, %s", name, status,
			 o->done ? "finished" : "did not finish");
	if (o->first_bad[0])
		tap_diag("%s: first lost write: %s", name, o->first_bad);
	tap_check(status == 0 && o->done && o->bad == 0 && o->final_bad == 0 && o->cross_bad == 0 &&
		  o->passes > 0,
		  "%s: %d writers, %ld passes (%.1f s): %ld lost writes while racing, %ld in the last read, %ld read otherwise from another CPU (%ld zapped writes, legal)",
		  name, o->nwriters, o->passes, o->secs, o->bad, o->final_bad, o->cross_bad, o->zeros);
	tap_check(o->done && o->rss == o->present,
		  "%s: after quiesce smaps Rss %ld == pagemap %ld (+%ld zero page)",
		  name, o->rss, o->present, o->zero_mapped);
	if (o->faults >= 0)
		tap_diag("%s: %s path: %lld anonymous faults, %lld met a parked PTE (busy_pte_fault; parked by: %s)",
			 name, pfscale_path(), o->faults, o->busy, o->parked);
}

struct mem_level {
	long anon_kb, pt_kb, mlocked_kb;
	long long lru_anon;	/* pages on the anon LRU lists */
};

/*
 * AnonPages, PageTables, Mlocked (a page mlocked by a fault that lost its
 * race and never munlocked stays counted) and the anon LRU size after
 * mm_quiesce().
 */
static inline void mem_level(struct mem_level *l)
{
	mm_quiesce();
	l->anon_kb = meminfo_kb("AnonPages");
	l->pt_kb = meminfo_kb("PageTables");
	l->mlocked_kb = meminfo_kb("Mlocked");
	l->lru_anon = vmstat_value("nr_inactive_anon") + vmstat_value("nr_active_anon");
}

static inline int mem_level_same(const struct mem_level *b, const struct mem_level *a)
{
	return a->anon_kb == b->anon_kb && a->pt_kb == b->pt_kb &&
	       a->mlocked_kb == b->mlocked_kb && a->lru_anon == b->lru_anon;
}

/* The checks of the levels (LEVEL_CHECKS): each exactly back to @b's. */
#define LEVEL_CHECKS 4
static inline void mem_level_check(const struct mem_level *b,
				   const struct mem_level *a, const char *what)
{
	tap_check(a->anon_kb == b->anon_kb,
		  "%s: AnonPages back to its level after the mm is gone (%ld kB -> %ld kB)",
		  what, b->anon_kb, a->anon_kb);
	tap_check(a->pt_kb == b->pt_kb,
		  "%s: PageTables back to its level after the mm is gone (%ld kB -> %ld kB)",
		  what, b->pt_kb, a->pt_kb);
	tap_check(a->lru_anon == b->lru_anon,
		  "%s: anon LRU back to its level after the mm is gone, batches drained (%lld -> %lld pages)",
		  what, b->lru_anon, a->lru_anon);
	tap_check(a->mlocked_kb == b->mlocked_kb,
		  "%s: Mlocked back to its level after the mm is gone (%ld kB -> %ld kB)",
		  what, b->mlocked_kb, a->mlocked_kb);
}

/*
 * /dev/kmsg positioned at its end (devtmpfs, or a node made in /tmp), to
 * read the kernel messages that come after; -1 if there is none.
 */
static inline int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd < 0 && mknod("/tmp/pfscale-kmsg", S_IFCHR | 0400, makedev(1, 11)) == 0)
		fd = open("/tmp/pfscale-kmsg", O_RDONLY | O_NONBLOCK);
	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Kernel messages since kmsg_open() (or the last call) that report a bad
 * mm, a bad page or a BUG/WARNING; the first is copied to @first.
 */
static inline long kmsg_bad(int fd, char *first, size_t len)
{
	static const char *const bad[] = { "Bad rss-counter", "pgtables_bytes",
		"Bad page", "BUG:", "WARNING:", "page_table_check" };
	char rec[2048];
	long n = 0;
	ssize_t r;
	size_t i;

	if (len)
		first[0] = 0;
	if (fd < 0)
		return 0;
	for (;;) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (r <= 0)
			break;
		rec[r] = 0;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(rec, bad[i])) {
				char *msg = strchr(rec, ';');
				size_t m;

				msg = msg ? msg + 1 : rec;
				m = strlen(msg);
				if (!n++ && len) {
					m = m < len - 1 ? m : len - 1;
					memcpy(first, msg, m);
					first[m] = 0;
				}
				break;
			}
	}
	if (len && first[0] && first[strlen(first) - 1] == '\n')
		first[strlen(first) - 1] = 0;
	return n;
}

/*
 * A barrier that spins (no futex sleep), so that the threads leave it
 * within a few hundred cycles of each other; it yields now and then, since
 * a test may run more threads than vCPUs.
 */
struct spin_barrier {
	int n;
	int count;
	int gen;
};

static inline void spin_barrier_init(struct spin_barrier *b, int n)
{
	b->n = n;
	b->count = 0;
	b->gen = 0;
}

static inline void spin_barrier_wait(struct spin_barrier *b)
{
	int gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
	long spins = 0;

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen)
		if (++spins % 4096 == 0)
			sched_yield();
		else
			__builtin_ia32_pause();
}

/*
 * The leak checks around a racing part run in a forked child:
 *	status = leak_watch_run(&w, fn, arg);
 *	(the test's own checks on status / shared results)
 *	leak_watch_check(&w, "what");	(LEAK_CHECKS checks)
 * Both levels are read inside leak_watch_run(), at the same stack depth,
 * with only fork and wait between them, so that nothing the parent does
 * (a deeper printf faulting a stack page, a first touch of a mapping)
 * shows as a difference. The child may make checks of its own: they are
 * counted in the parent (run_child()).
 */
struct leak_watch {
	struct mem_level before, after;
	int kfd, rereads;
};

/*
 * fn(arg) in a forked child (exit status 0 unless fn exits); wait status.
 * The checks the child reported (and whether one failed) are added to this
 * process's, through a pipe: a child that dies before the end reports none,
 * and the program's count then falls short of its plan.
 */
static inline int run_child(void (*fn)(void *), void *arg)
{
	int status = 0, fds[2], counts[2] = { 0, 0 };
	pid_t pid;

	fflush(stdout);
	if (pipe(fds))
		tap_bail("pipe");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (pid == 0) {
		int reported = tap_reported;

		close(fds[0]);
		tap_failed = 0;
		fn(arg);
		fflush(stdout);
		counts[0] = tap_reported - reported;
		counts[1] = tap_failed;
		if (write(fds[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid");
	if (read(fds[0], counts, sizeof(counts)) == sizeof(counts)) {
		tap_reported += counts[0];
		tap_failed |= counts[1];
	}
	close(fds[0]);
	return status;
}

/*
 * Fault in, before the first level is read, what the watch itself touches:
 * the stack below this frame (fork() and stdio run deeper than the first
 * reading did) and what a reading allocates. Else the parent's own first
 * touch of a page lands between the levels, one page above the level.
 */
static __attribute__((noinline)) void leak_watch_warm(void)
{
	volatile char stack[64 * 1024];
	struct mem_level warm;
	size_t i;

	for (i = 0; i < sizeof(stack); i += 256)
		stack[i] = 0;
	mem_level(&warm);
}

/*
 * Levels, kmsg position, run_child(fn, arg), levels; its wait status. The
 * levels after are read again (up to 1 s) while they differ: a page another
 * task has isolated for a moment (compaction, NUMA balancing) is off the
 * LRU then, while a leaked page stays leaked.
 */
static inline int leak_watch_run(struct leak_watch *w, void (*fn)(void *), void *arg)
{
	int status, tries = 0;

	w->kfd = kmsg_open();
	leak_watch_warm();
	mem_level(&w->before);
	status = run_child(fn, arg);
	mem_level(&w->after);
	while (!mem_level_same(&w->before, &w->after) && tries++ < 20) {
		usleep(50000);
		mem_level(&w->after);
	}
	w->rereads = tries;
	return status;
}

/*
 * LEAK_CHECKS checks: the levels exactly back (mem_level_check()), and no
 * bad-mm (rss-counter, pgtables_bytes), bad-page, BUG or WARNING kernel
 * message since leak_watch_run() began.
 */
#define LEAK_CHECKS (LEVEL_CHECKS + 1)
static inline void leak_watch_check(struct leak_watch *w, const char *what)
{
	char first[512];
	long bad;

	if (w->rereads)
		tap_diag("%s: levels read %d more times before they matched (or gave up)",
			 what, w->rereads);
	mem_level_check(&w->before, &w->after, what);
	bad = kmsg_bad(w->kfd, first, sizeof(first));
	tap_check(w->kfd >= 0 && bad == 0,
		  "%s: no bad-mm/bad-page/BUG/WARNING kernel message once the mm is freed (%ld%s%s)",
		  what, bad, bad ? ": " : "", bad ? first : (w->kfd < 0 ? ", no /dev/kmsg" : ""));
	if (w->kfd >= 0)
		close(w->kfd);
}

/*
 * A test whose checks are made where its race runs: @body(@arg) in a
 * forked child, its checks counted here (run_child()), then the leak checks
 * (LEAK_CHECKS) under @what. A child that dies by a signal is said so; its
 * missing checks fail the plan.
 */
static inline void leak_watched(const char *what, void (*body)(void *), void *arg)
{
	struct leak_watch w;
	int status = leak_watch_run(&w, body, arg);

	if (WIFSIGNALED(status))
		tap_diag("%s: the child was killed by signal %d", what, WTERMSIG(status));
	else if (WEXITSTATUS(status))
		tap_diag("%s: the child exited with %d", what, WEXITSTATUS(status));
	leak_watch_check(&w, what);
}

/*
 * Pass writers (t_memcg, t_hwpoison): writer @id writes its own 8-byte slot
 * of every page of @base, pass after pass until *@stop, checking that each
 * slot still holds the previous pass's value and reads back what it wrote;
 * then it reads every slot once more. Lost writes are added to *@bad
 * (while racing) and *@final_bad (the last read), which may be in memory
 * shared with a parent; @passes[@id] is the passes done.
 */
static inline void pass_writer_run(char *base, long pages, long id, volatile int *stop,
				   long *bad, long *final_bad, long *passes)
{
	uint64_t gen = 0, v;
	long i;

	while (!*stop) {
		gen++;
		for (i = 0; i < pages; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;

			if (*slot != pass_value(gen - 1, id, i))
				__atomic_add_fetch(bad, 1, __ATOMIC_RELAXED);
			v = pass_value(gen, id, i);
			*slot = v;
			if (*slot != v)
				__atomic_add_fetch(bad, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&passes[id], (long)gen, __ATOMIC_RELEASE);
	}
	for (i = 0; i < pages; i++)
		if (((volatile uint64_t *)(base + i * PAGE))[id] != pass_value(gen, id, i))
			__atomic_add_fetch(final_bad, 1, __ATOMIC_RELAXED);
}

/* The fewest passes any of @n pass writers has done. */
static inline long pass_writers_min(const long *passes, int n)
{
	long m = -1, v;
	int k;

	for (k = 0; k < n; k++) {
		v = __atomic_load_n(&passes[k], __ATOMIC_ACQUIRE);
		if (m < 0 || v < m)
			m = v;
	}
	return m;
}

#endif
