// SPDX-License-Identifier: GPL-2.0
/*
 * THP races (issue 13), with content and leak checks, on either path.
 *
 * Huge zero page splits racing faults. 8 threads share an mm. Each round
 * maps a fresh 2 MiB-aligned region, MADV_HUGEPAGE, reads byte 0 so that a
 * huge zero PMD maps it (pagemap must show 512 present pages with
 * contiguous PFNs, which only the huge zero page gives), then
 * MADV_NOHUGEPAGE (the huge zero PMD stays). From a spinning barrier,
 * thread 0 triggers a split of that PMD while threads 1-7 each write a
 * distinct page of the same 2 MiB; all read their page back, and after the
 * round thread 0 checks every written page again. The split comes from
 *   - a write fault (thread 0 writes page 0; do_huge_pmd_wp_page() falls
 *     back and splits),
 *   - a partial MADV_DONTNEED (thread 0 zaps the first 64 KiB, under
 *     mmap_read_lock, then writes page 0),
 *   - an mprotect of part of it (thread 0 adds PROT_EXEC to the first
 *     64 KiB, then writes page 0; mprotect splits under mmap_write_lock, so
 *     there the racing faults come before or after it, not during).
 * The other threads' writes are write faults on the huge zero PMD too, so
 * every round has several splitters and faulters at once. A fault that
 * finds the PMD transiently none while __split_huge_zero_page_pmd() fills
 * the PTE table must not install a table (and page) that the split's
 * pmd_populate() then overwrites: that loses the write, leaks the page and
 * the table (AnonPages, PageTables) and leaves the mm's rss and
 * pgtables_bytes wrong ("Bad rss-counter state", "non-zero pgtables_bytes"
 * when the mm is freed).
 *
 * Each scenario runs in a forked child; after it is reaped, mm_quiesce()
 * makes every CPU drop a lazy reference to its mm, so the mm is freed and
 * the kernel's exit-time checks run, and folds the per-CPU vmstat deltas.
 * Then AnonPages and PageTables must be exactly where they were before the
 * fork, and /dev/kmsg must hold no bad-mm, bad-page, BUG or WARNING line.
 */
#include <sys/wait.h>
#include <time.h>
#include "common.h"

#define HPAGE (2UL << 20)
#define HPAGE_PAGES 512
#define NTHREADS 8
#define MAX_ROUNDS 1500
#define SECONDS 10
#define HEAD_PAGES 16		/* what the DONTNEED / mprotect triggers cover */

/* Filled by the child in MAP_SHARED memory, read by the parent. */
struct result {
	long rounds, huge_rounds, lost_readback, lost_final;
	long long table_lost, anon_lost, locked_lost;
	int done;
};

static struct result *res;

struct scenario {
	const char *name;
	void (*child)(const struct scenario *s);
	void (*report)(const struct scenario *s, int status);
	int nchecks;		/* tap checks report() makes */
	int trigger;		/* scenario-specific */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long counter(const char *name)
{
	long long v = pfscale_counter(name);

	return v < 0 ? 0 : v;
}

/*
 * Does a huge zero PMD map [p, p + 2 MiB)? All 512 pages present, with
 * contiguous PFNs from a 2 MiB-aligned one (4 KiB zero-page PTEs would all
 * show the one zero PFN). Without PFNs in pagemap (not root), present only:
 * the caller read byte 0 alone, so 512 present pages still mean a PMD.
 */
static int huge_zero_mapped(char *p)
{
	static uint64_t e[HPAGE_PAGES];
	uint64_t pfn0;
	int fd = open("/proc/self/pagemap", O_RDONLY), i;

	if (fd < 0)
		tap_bail("open pagemap");
	if (pread(fd, e, sizeof(e), (uintptr_t)p / PAGE * 8) != sizeof(e))
		tap_bail("pread pagemap");
	close(fd);
	pfn0 = e[0] & ((1ULL << 55) - 1);
	if (pfn0 % HPAGE_PAGES)
		return 0;
	for (i = 0; i < HPAGE_PAGES; i++) {
		if (!(e[i] & PM_PRESENT))
			return 0;
		if (pfn0 && (e[i] & ((1ULL << 55) - 1)) != pfn0 + i)
			return 0;
	}
	return 1;
}

/* ---- huge zero page split racing faults ---------------------------- */

enum { SPLIT_WRITE, SPLIT_DONTNEED, SPLIT_MPROTECT };

static char *volatile region;
static int trigger, round_no;
static volatile int stop;
static struct spin_barrier start_bar, end_bar;

/* The page thread k writes: 0 for thread 0, the others spread over 2 MiB. */
static long page_of(int k)
{
	return k ? k * 64 + 1 : 0;
}

static void hzp_work(int k)
{
	long pg = page_of(k);
	volatile uint64_t *p = (uint64_t *)(region + pg * PAGE);
	uint64_t v = slot_value(round_no, k, pg);

	if (k == 0 && trigger == SPLIT_DONTNEED)
		madvise(region, HEAD_PAGES * PAGE, MADV_DONTNEED);
	else if (k == 0 && trigger == SPLIT_MPROTECT)
		mprotect(region, HEAD_PAGES * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
	*p = v;
	if (*p != v)
		__atomic_add_fetch(&res->lost_readback, 1, __ATOMIC_RELAXED);
}

static void *hzp_worker(void *arg)
{
	int k = (int)(long)arg;

	for (;;) {
		spin_barrier_wait(&start_bar);
		if (stop)
			break;
		hzp_work(k);
		spin_barrier_wait(&end_bar);
	}
	return NULL;
}

static void hzp_child(const struct scenario *s)
{
	pthread_t tid[NTHREADS];
	double t0 = now();
	long long tl = counter("pte_table_cmpxchg_lost");
	long long al = counter("anon_cmpxchg_lost");
	long long ll = counter("locked_cmpxchg_lost");
	int k, r;

	trigger = s->trigger;
	spin_barrier_init(&start_bar, NTHREADS);
	spin_barrier_init(&end_bar, NTHREADS);
	for (k = 1; k < NTHREADS; k++)
		if (pthread_create(&tid[k], NULL, hzp_worker, (void *)(long)k))
			tap_bail("pthread_create");
	for (r = 0; r < MAX_ROUNDS && now() - t0 < SECONDS; r++) {
		round_no = r;
		region = map_aligned(HPAGE, HPAGE);
		if (madvise(region, HPAGE, MADV_HUGEPAGE))
			tap_bail("MADV_HUGEPAGE");
		(void)*(volatile char *)region;
		if (huge_zero_mapped(region))
			res->huge_rounds++;
		if (madvise(region, HPAGE, MADV_NOHUGEPAGE))
			tap_bail("MADV_NOHUGEPAGE");
		spin_barrier_wait(&start_bar);
		hzp_work(0);
		spin_barrier_wait(&end_bar);
		for (k = 0; k < NTHREADS; k++)
			if (*(uint64_t *)(region + page_of(k) * PAGE) !=
			    slot_value(r, k, page_of(k)))
				res->lost_final++;
		munmap(region, HPAGE);
		res->rounds++;
	}
	stop = 1;
	spin_barrier_wait(&start_bar);
	for (k = 1; k < NTHREADS; k++)
		pthread_join(tid[k], NULL);
	res->table_lost = counter("pte_table_cmpxchg_lost") - tl;
	res->anon_lost = counter("anon_cmpxchg_lost") - al;
	res->locked_lost = counter("locked_cmpxchg_lost") - ll;
	res->done = 1;
}

static void hzp_report(const struct scenario *s, int status)
{
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && res->done;

	if (!ok)
		tap_diag("%s: child ended with status 0x%x after %ld rounds", s->name,
			 status, res->rounds);
	tap_diag("%s: %ld rounds, pte_table_cmpxchg_lost +%lld, anon_cmpxchg_lost +%lld, locked_cmpxchg_lost +%lld",
		 s->name, res->rounds, res->table_lost, res->anon_lost, res->locked_lost);
	tap_check(ok && res->rounds > 0 && res->huge_rounds == res->rounds,
		  "%s: a huge zero PMD mapped the region before the race (%ld of %ld rounds)",
		  s->name, res->huge_rounds, res->rounds);
	tap_check(ok && res->lost_readback == 0 && res->lost_final == 0,
		  "%s: %d threads x %ld rounds, no write lost (%ld lost on read-back, %ld after the round)",
		  s->name, NTHREADS, res->rounds, res->lost_readback, res->lost_final);
}

/* ---- the harness ----------------------------------------------------- */

static const struct scenario scenarios[] = {
	{ "huge zero split by write fault", hzp_child, hzp_report, 2, SPLIT_WRITE },
	{ "huge zero split by partial MADV_DONTNEED", hzp_child, hzp_report, 2, SPLIT_DONTNEED },
	{ "huge zero split by partial mprotect", hzp_child, hzp_report, 2, SPLIT_MPROTECT },
};
#define NSCEN ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

/* Run @s in a forked child; its checks, then the leak checks (3). */
static void run_scenario(const struct scenario *s)
{
	struct mem_level before, after;
	char first[512];
	int status = 0, kfd = kmsg_open();
	long bad;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	mem_level(&before);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (pid == 0) {
		s->child(s);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		tap_bail("waitpid");
	mem_level(&after);
	s->report(s, status);
	mem_level_check(&before, &after, s->name);
	bad = kmsg_bad(kfd, first, sizeof(first));
	tap_check(kfd >= 0 && bad == 0,
		  "%s: no bad-mm/bad-page/BUG/WARNING kernel message once the mm is freed (%ld%s%s)",
		  s->name, bad, bad ? ": " : "", bad ? first : (kfd < 0 ? ", no /dev/kmsg" : ""));
	if (kfd >= 0)
		close(kfd);
}

static int read_first(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

int main(int argc, char **argv)
{
	char enabled[128], zero[16];
	struct mem_level warm;
	int i, plan = 1;

	tap_init(argv[0]);
	(void)argc;
	for (i = 0; i < NSCEN; i++)
		plan += scenarios[i].nchecks + 3;
	tap_plan(plan);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		tap_bail("mmap shared");
	read_first("/sys/kernel/mm/transparent_hugepage/enabled", enabled, sizeof(enabled));
	read_first("/sys/kernel/mm/transparent_hugepage/use_zero_page", zero, sizeof(zero));
	enabled[strcspn(enabled, "\n")] = 0;
	tap_check((strstr(enabled, "[madvise]") || strstr(enabled, "[always]")) && zero[0] == '1',
		  "THP usable: enabled \"%s\", use_zero_page %c (%s path)", enabled,
		  zero[0] ? zero[0] : '?', pfscale_path());
	mem_level(&warm);	/* fault in what reading the levels needs */
	for (i = 0; i < NSCEN; i++)
		run_scenario(&scenarios[i]);
	return tap_exit();
}
