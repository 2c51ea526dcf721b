// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlb MAP_PRIVATE copy-on-write in the same process, and the same page
 * table, as lockless anonymous faults.
 *
 * The test kernels have CONFIG_HUGETLBFS: a kernel without
 * /proc/sys/vm/nr_hugepages is a failure, not a skip. The program sets
 * nr_hugepages to POOL (2 MiB pages: the default huge page size must be
 * 2048 kB) and checks that the pool holds them all, free and unreserved;
 * fewer is a failure that says how many it got. At the end it writes back
 * the old value and checks it read back.
 *
 * The race runs in a forked child under the exact leak watch
 * (leak_watched()), in one 1 GiB-aligned range, so that one PMD table maps
 * it all:
 *
 *	[NHUGE huge pages, MAP_PRIVATE|MAP_HUGETLB][2 MiB PROT_NONE]
 *	[512-page anonymous region (one PTE table), MADV_NOHUGEPAGE][guard]
 *
 * The huge pages' PMD entries, set by hugetlb faults under the PMD table's
 * lock, sit next to the entry that the anonymous faults populate with a
 * PTE table, without the lock on the atomic path, whenever the region's
 * table was freed (see the anonymous zapper).
 *
 * - 2 x CPUs anonymous writers write their own 8-byte slot of every page
 *   of the anonymous region, pass after pass, checking before each write
 *   that the slot still holds their previous pass's value and reading each
 *   write back (the slot race of common.h); a zapper drops the region with
 *   MADV_DONTNEED, and every fourth time replaces it (mmap MAP_FIXED, which
 *   frees its PTE table), so that faults keep installing fresh pages and
 *   repopulating the PMD entry. A slot may read 0 only if a zap began after
 *   its writer last wrote it (zap generations, as in t_zap); a last read
 *   pass once the threads stop does the same.
 * - CPUs hugetlb writers, and the main thread, run rounds. Before round r
 *   every hugetlb writer's slot of every 4 kB subpage of the huge pages
 *   holds hval(r). The main thread notes the huge pages' PFNs and the free
 *   pool, and forks a grandchild that keeps the mapping, so that every huge
 *   page is shared and write-protected in both. Then the hugetlb writers
 *   write hval(r + 1) into their slots (an exchange that returns what the
 *   slot held, which must be hval(r)), starting on different huge pages,
 *   so the first writes of a round COW-copy the pages (hugetlb_wp()) while
 *   several threads fault on the same page; meanwhile the main thread
 *   zaps one huge page (MADV_DONTNEED, which hugetlb allows for 2 MiB
 *   aligned ranges) after a varying delay, so the writers refault it
 *   (hugetlb_no_page()) or the zap lands in a COW. A second pass, after the
 *   zap, checks every slot and rewrites those the zap emptied (a 0 is legal
 *   only if a zap of that page began after the write, as above). The
 *   grandchild keeps reading its slots meanwhile, and once more after the
 *   parent's passes: all must hold hval(r), and its huge pages must still
 *   be at their pre-fork PFNs (the copy goes to the writer); it exits 0
 *   only if so.
 *
 * Checks, in the child:
 * 1. no anonymous write lost (racing and in the last read), no failed
 *    replacement, and smaps Rss == pagemap after quiesce;
 * 2. race offered on the anonymous side: writes seen zapped > 0, region
 *    replacements > 0 and anonymous faults (pfscale's counters; minor
 *    faults without them) > 0;
 * 3. no hugetlb write lost in the parent (both passes), and after every
 *    round the parent reads hval(r + 1) in every slot: it sees its writes;
 * 4. every grandchild exited 0: it saw only the pre-fork values, while the
 *    parent wrote and after, at the pre-fork PFNs (COW correct), and it
 *    read at least once;
 * 5. race offered on the hugetlb side: COW copies (pages not zapped in the
 *    round whose PFN changed in the parent) > 0, and no such page left at
 *    its old PFN (a write to a shared page must copy it); hugetlb writes
 *    seen zapped (refaults) > 0; a round's zap landed among the writes to
 *    its page (so it raced their COW faults) > 0 times; no MADV_DONTNEED
 *    failed;
 * 6. the free pool, per round: down by exactly NHUGE while the grandchild
 *    held the old pages (each parent page replaced by one new page, copy or
 *    refault), up by exactly NHUGE once it had exited;
 * 7. rss_agree_check() (hugetlb pages are in neither view).
 * In the parent: the leak checks (LEAK_CHECKS: AnonPages, PageTables, anon
 * LRU, kernel messages); the hugetlb pool back to its level once the child
 * is gone (free == its level == nr_hugepages, resv 0, surplus 0); and
 * nr_hugepages restored.
 *
 * The rounds go on for at least MIN_ROUNDS rounds and MIN_SECS, and until
 * the evidence of 2 and 5 is in, at most MAX_SECS: "race not reproduced"
 * and "too little work done" fail.
 */
#include <sys/resource.h>
#include "common.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

#define HPAGE (2UL << 20)
#define SUBPAGES (HPAGE / PAGE)		/* 4 kB subpages of a huge page */
#define NHUGE 3				/* huge pages in the mapping */
#define POOL (2 * NHUGE + 2)		/* parent's + grandchild's + slack */
#define APAGES 512			/* anonymous region: one PTE table */
#define MAX_AW SLOT_RACE_WRITERS			/* anonymous writers */
#define MAX_HW 8			/* hugetlb writers */
#define MIN_ROUNDS 8
#define MIN_SECS 3
#define MAX_SECS 30
#define ZAP_US 1000			/* between anonymous zaps */

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define HSTATE "/sys/kernel/mm/hugepages/hugepages-2048kB/"

/* The 2 MiB hstate's pool: total, free, reserved, surplus. */
struct pool {
	long total, free, resv, surp;
};

static long hstate_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), HSTATE "%s", name);
	return read_number(path);
}

static void pool_read(struct pool *p)
{
	p->total = hstate_get("nr_hugepages");
	p->free = hstate_get("free_hugepages");
	p->resv = hstate_get("resv_hugepages");
	p->surp = hstate_get("surplus_hugepages");
}

/* Between the leak child and its grandchildren (MAP_SHARED, made in main). */
struct ctl {
	int phase;		/* 1: parent writing; 2: final check, exit */
	long bad, pfn_bad, passes;
	long first_h, first_i, first_k;
	uint64_t first_got, first_want;
};

static struct ctl *ctl;
static char *huge, *anon;
static int naw, nhw;

/* Anonymous side (the slot race of common.h). */
static struct slot_race arace;
static long areplaced, arepl_err;

/* Hugetlb side. */
static volatile int hstop;
static volatile long hround;
static long hzap_begun[NHUGE], hzap_done[NHUGE], hbad, hzeros, hslot_writes;
static long hzeros_a, hzeros_b;	/* of hzeros: seen in pass A, in pass B */
static struct spin_barrier hstart;
static pthread_barrier_t hmid, hend;
static long hfirst_h = -1, hfirst_i, hfirst_k;
static uint64_t hfirst_got, hfirst_want;

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* What hugetlb writer @k's slot of subpage @i of huge page @h holds before round @r. */
static uint64_t hval(long r, long k, long h, long i)
{
	return ((uint64_t)(r + 1) << 40) | ((uint64_t)k << 32) | ((uint64_t)h << 16) | i;
}

static volatile uint64_t *hslot(long h, long i, long k)
{
	return (volatile uint64_t *)(huge + h * HPAGE + i * PAGE) + k;
}

/*
 * MADV_DONTNEED the anonymous region; every fourth time replace it instead
 * (MAP_FIXED in one step, so writers never fault on a hole): its PTE table
 * is freed, and the next fault populates the PMD entry again, in the PMD
 * table whose neighbouring entries are the huge pages'.
 */
static void *anon_zapper(void *p)
{
	size_t len = APAGES * PAGE;
	long n = 0;

	(void)p;
	while (!arace.stop) {
		usleep(ZAP_US);
		slot_race_zap_begin(&arace, 0);
		if (++n % 4 == 0) {
			if (mmap(anon, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != anon)
				arepl_err++;
			madvise(anon, len, MADV_NOHUGEPAGE);
			areplaced++;
		} else {
			madvise(anon, len, MADV_DONTNEED);
		}
		slot_race_zap_end(&arace, 0);
	}
	return NULL;
}

static void hbad_slot(long h, long i, long k, uint64_t got, uint64_t want)
{
	if (__atomic_add_fetch(&hbad, 1, __ATOMIC_SEQ_CST) == 1) {
		hfirst_h = h;
		hfirst_i = i;
		hfirst_k = k;
		hfirst_got = got;
		hfirst_want = want;
	}
}

/*
 * Is @got (@want expected) in huge page @h legal? 0 after a zap of @h,
 * counted in hzeros and *@pass_zeros.
 */
static int hslot_ok(uint64_t got, uint64_t want, long h, long done_before, long *pass_zeros)
{
	if (got == want)
		return 1;
	if (got == 0 && load(&hzap_begun[h]) > done_before) {
		__atomic_add_fetch(&hzeros, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(pass_zeros, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return 0;
}

static void *huge_writer(void *p)
{
	long k = (long)p, r, j, h, i, d, writes = 0, done_before[NHUGE * SUBPAGES];
	uint64_t v, got;

	memset(done_before, 0, sizeof(done_before));
	for (;;) {
		spin_barrier_wait(&hstart);
		if (hstop)
			break;
		r = hround;
		/* Pass A: hval(r) -> hval(r + 1); each writer starts elsewhere. */
		for (j = 0; j < NHUGE; j++) {
			h = (k + j) % NHUGE;
			for (i = 0; i < (long)SUBPAGES; i++) {
				volatile uint64_t *s = hslot(h, i, k);

				d = load(&hzap_done[h]);
				v = hval(r + 1, k, h, i);
				got = __atomic_exchange_n(s, v, __ATOMIC_SEQ_CST);
				if (!hslot_ok(got, hval(r, k, h, i), h, done_before[h * SUBPAGES + i],
					      &hzeros_a))
					hbad_slot(h, i, k, got, hval(r, k, h, i));
				got = *s;
				if (!hslot_ok(got, v, h, d, &hzeros_a))
					hbad_slot(h, i, k, got, v);
				done_before[h * SUBPAGES + i] = d;
				writes++;
			}
		}
		pthread_barrier_wait(&hmid);	/* the round's zap is done */
		/* Pass B: every slot hval(r + 1), or zapped: write it again. */
		for (h = 0; h < NHUGE; h++)
			for (i = 0; i < (long)SUBPAGES; i++) {
				volatile uint64_t *s = hslot(h, i, k);

				v = hval(r + 1, k, h, i);
				got = *s;
				if (got == v)
					continue;
				if (!hslot_ok(got, v, h, done_before[h * SUBPAGES + i], &hzeros_b)) {
					hbad_slot(h, i, k, got, v);
					continue;
				}
				d = load(&hzap_done[h]);
				got = __atomic_exchange_n(s, v, __ATOMIC_SEQ_CST);
				if (got != 0)
					hbad_slot(h, i, k, got, 0);
				if (*s != v)
					hbad_slot(h, i, k, *s, v);
				done_before[h * SUBPAGES + i] = d;
				writes++;
			}
		pthread_barrier_wait(&hend);
	}
	__atomic_add_fetch(&hslot_writes, writes, __ATOMIC_RELAXED);
	return NULL;
}

/* Hugetlb slots not holding hval(@r); the first one into @c if given. */
static long hcheck(long r, struct ctl *c)
{
	long h, i, k, bad = 0;
	uint64_t got;

	for (h = 0; h < NHUGE; h++)
		for (i = 0; i < (long)SUBPAGES; i++)
			for (k = 0; k < nhw; k++) {
				got = *hslot(h, i, k);
				if (got == hval(r, k, h, i))
					continue;
				if (!bad++ && c) {
					c->first_h = h;
					c->first_i = i;
					c->first_k = k;
					c->first_got = got;
					c->first_want = hval(r, k, h, i);
				}
			}
	return bad;
}

/* PFNs of the first 4 kB of each huge page (0: not present). */
static void huge_pfns(uint64_t *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e;
	long h;

	if (fd < 0)
		_exit(99);
	for (h = 0; h < NHUGE; h++) {
		e = 0;
		if (pread(fd, &e, 8, (uintptr_t)(huge + h * HPAGE) / PAGE * 8) != 8)
			e = 0;
		pfn[h] = (e & PM_PRESENT) ? e & PM_PFN : 0;
	}
	close(fd);
}

/*
 * The grandchild, forked from a threaded process: syscalls only. It reads
 * its slots while the parent writes, and once more when told, then checks
 * it still maps the pre-fork pages.
 */
static void grandchild(long r, const uint64_t *pfn0)
{
	uint64_t pfn[NHUGE];
	long bad = 0, pfn_bad = 0, passes = 0, h;

	/* A child that died must not leave it spinning on three huge pages. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (__atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE) == 1) {
		bad += hcheck(r, bad ? NULL : ctl);
		passes++;
		sched_yield();
	}
	bad += hcheck(r, bad ? NULL : ctl);
	passes++;
	huge_pfns(pfn);
	for (h = 0; h < NHUGE; h++)
		if (!pfn[h] || pfn[h] != pfn0[h])
			pfn_bad++;
	ctl->bad = bad;
	ctl->pfn_bad = pfn_bad;
	ctl->passes = passes;
	_exit(bad || pfn_bad ? 1 : 0);
}

/* The layout (see the top): the 1 GiB-aligned range holding it all. */
static void map_regions(void)
{
	unsigned long span = (NHUGE + 2) * HPAGE + PAGE, len = span + (1UL << 30);
	char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned long b;

	if (p == MAP_FAILED)
		tap_bail("mmap reservation");
	b = ((unsigned long)p + HPAGE - 1) & ~(HPAGE - 1);
	if ((b >> 30) != ((b + span - 1) >> 30))
		b = (b + (1UL << 30) - 1) & ~((1UL << 30) - 1);
	if ((char *)b > p)
		munmap(p, (char *)b - p);
	munmap((char *)b + span, p + len - ((char *)b + span));
	huge = mmap((char *)b, NHUGE * HPAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB | MAP_FIXED, -1, 0);
	if (huge != (char *)b)
		tap_bail("mmap MAP_HUGETLB");
	anon = mmap((char *)b + (NHUGE + 1) * HPAGE, APAGES * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (anon != (char *)b + (NHUGE + 1) * HPAGE)
		tap_bail("mmap anonymous region");
	madvise(anon, APAGES * PAGE, MADV_NOHUGEPAGE);
}

static void hugetlb_child(void *unused)
{
	long long faults0 = pfscale_anon_faults(), busy0 = pfscale_counter("busy_pte_fault");
	long long faults, busy, minflt0, minflt;
	long rounds = 0, cow = 0, uncopied = 0, zap_err = 0, pool_bad = 0, g_fail = 0;
	long g_bad = 0, g_pfn_bad = 0, g_passes = 0, parent_bad = 0, present, zero_mapped, rss;
	long h, i, k, z, za, zb, zap_when[3] = { 0, 0, 0 };
	uint64_t pfn0[NHUGE], pfn1[NHUGE];
	pthread_t hw[MAX_HW], az;
	struct pool p0, p1, p2;
	struct rusage ru;
	char fbuf[64];
	double t0, secs;
	int status, ok;
	pid_t pid;

	(void)unused;
	getrusage(RUSAGE_SELF, &ru);
	minflt0 = ru.ru_minflt;
	map_regions();
	/* Fault the huge pages in with the pattern of round 0. */
	for (h = 0; h < NHUGE; h++)
		for (i = 0; i < (long)SUBPAGES; i++)
			for (k = 0; k < nhw; k++)
				*hslot(h, i, k) = hval(0, k, h, i);

	spin_barrier_init(&hstart, nhw + 1);
	pthread_barrier_init(&hmid, NULL, nhw + 1);
	pthread_barrier_init(&hend, NULL, nhw + 1);
	arace.base = anon;
	arace.pages = APAGES;
	arace.chunks = arace.zappable = 1;
	slot_race_start(&arace, naw);
	for (k = 0; k < nhw; k++)
		if (pthread_create(&hw[k], NULL, huge_writer, (void *)k))
			tap_bail("pthread_create");
	if (pthread_create(&az, NULL, anon_zapper, NULL))
		tap_bail("pthread_create");

	t0 = now();
	for (;;) {
		hround = rounds;
		huge_pfns(pfn0);
		pool_read(&p0);
		__atomic_store_n(&ctl->phase, 1, __ATOMIC_RELEASE);
		ctl->bad = ctl->pfn_bad = ctl->passes = 0;
		pid = fork();
		if (pid < 0)
			tap_bail("fork");
		if (pid == 0)
			grandchild(rounds, pfn0);
		za = load(&hzeros_a);
		zb = load(&hzeros_b);
		spin_barrier_wait(&hstart);
		/* Zap one huge page while the writers copy and write. */
		z = rounds % NHUGE;
		if (rounds % 4)
			usleep(100 * (rounds % 4) + 37 * (rounds % 7));
		__atomic_add_fetch(&hzap_begun[z], 1, __ATOMIC_SEQ_CST);
		if (madvise(huge + z * HPAGE, HPAGE, MADV_DONTNEED))
			zap_err++;
		__atomic_add_fetch(&hzap_done[z], 1, __ATOMIC_SEQ_CST);
		pthread_barrier_wait(&hmid);
		pthread_barrier_wait(&hend);
		/* Where the zap landed: before, among or after the writes to z. */
		za = load(&hzeros_a) - za;
		zb = load(&hzeros_b) - zb;
		zap_when[za && zb ? 1 : zb ? 2 : 0]++;
		/* Both passes done: the parent must see its writes. */
		pool_read(&p1);
		huge_pfns(pfn1);
		for (h = 0; h < NHUGE; h++)
			if (h != z) {
				if (pfn1[h] && pfn1[h] != pfn0[h])
					cow++;
				else
					uncopied++;
			}
		parent_bad += hcheck(rounds + 1, NULL);
		__atomic_store_n(&ctl->phase, 2, __ATOMIC_RELEASE);
		if (waitpid(pid, &status, 0) != pid)
			tap_bail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (!g_fail++)
				tap_diag("round %ld: grandchild wait status 0x%x: %ld bad slots (first: page %ld subpage %ld slot %ld: 0x%llx, want 0x%llx), %ld pages not at their pre-fork PFN",
					 rounds, status, ctl->bad, ctl->first_h, ctl->first_i,
					 ctl->first_k, (unsigned long long)ctl->first_got,
					 (unsigned long long)ctl->first_want, ctl->pfn_bad);
		}
		g_bad += ctl->bad;
		g_pfn_bad += ctl->pfn_bad;
		g_passes += ctl->passes;
		pool_read(&p2);
		if (p0.free - p1.free != NHUGE || p2.free - p1.free != NHUGE) {
			if (!pool_bad++)
				tap_diag("round %ld: free huge pages %ld before the fork, %ld after the parent's writes, %ld after the grandchild's exit (want -%d, +%d)",
					 rounds, p0.free, p1.free, p2.free, NHUGE, NHUGE);
		}
		rounds++;
		secs = now() - t0;
		faults = faults0 < 0 ? 1 : pfscale_anon_faults() - faults0;
		if (secs >= MAX_SECS ||
		    (rounds >= MIN_ROUNDS && secs >= MIN_SECS && slot_race_load(&arace.zeros) > 0 &&
		     faults > 0 && areplaced > 0 && cow > 0 && hzeros > 0 && zap_when[1] > 0))
			break;
	}
	hstop = 1;
	spin_barrier_wait(&hstart);
	for (k = 0; k < nhw; k++)
		pthread_join(hw[k], NULL);
	arace.stop = 1;
	pthread_join(az, NULL);
	slot_race_finish(&arace);
	secs = now() - t0;
	getrusage(RUSAGE_SELF, &ru);
	minflt = ru.ru_minflt - minflt0;
	faults = faults0 < 0 ? -1 : pfscale_anon_faults() - faults0;
	busy = busy0 < 0 ? -1 : pfscale_counter("busy_pte_fault") - busy0;
	mm_quiesce();
	present = pagemap_rss(anon, APAGES * PAGE);
	zero_mapped = pagemap_present(anon, APAGES * PAGE) - present;
	rss = smaps_rss(anon);

	if (faults >= 0)
		tap_diag("%s path: %lld anonymous faults, %lld met a parked PTE (busy_pte_fault); %ld rounds in %.1f s",
			 pfscale_path(), faults, busy, rounds, secs);
	else
		tap_diag("no pfscale counters in this kernel; %ld rounds in %.1f s", rounds, secs);
	tap_check(arace.bad == 0 && arace.final_bad == 0 && arace.cross_bad == 0 && arepl_err == 0 &&
		  rss == present,
		  "%d anonymous writers next to the huge pages' PMD entries, racing MADV_DONTNEED and replacement (%ld zaps, %ld replaced): %ld lost writes (%ld in the last read, %ld read otherwise from another CPU), %ld failed replacements; rss %ld == present %ld (+%ld zero page)",
		  naw, arace.zaps, areplaced, arace.bad, arace.final_bad, arace.cross_bad, arepl_err,
		  rss, present, zero_mapped);
	if (faults >= 0)
		ok = arace.zeros > 0 && faults > 0 && areplaced > 0;
	else
		ok = arace.zeros > 0 && minflt > 0 && areplaced > 0;
	if (faults >= 0)
		snprintf(fbuf, sizeof(fbuf), "%lld anonymous faults", faults);
	else
		snprintf(fbuf, sizeof(fbuf), "no pfscale counters in this kernel");
	tap_check(ok, "race offered (anonymous): %ld writes seen zapped, %ld replacements (a PTE table freed), %s (%lld minor faults)%s",
		  arace.zeros, areplaced, fbuf, minflt,
		  ok ? "" : arace.zeros ? ": too little work done" : ": race not reproduced");
	if (hbad)
		tap_diag("first lost hugetlb write: page %ld subpage %ld writer %ld: 0x%llx, want 0x%llx",
			 hfirst_h, hfirst_i, hfirst_k, (unsigned long long)hfirst_got,
			 (unsigned long long)hfirst_want);
	tap_check(hbad == 0 && parent_bad == 0 && rounds > 0,
		  "%d hugetlb writers, %ld rounds of COW against a grandchild and MADV_DONTNEED (%ld slot writes): %ld lost writes; %ld slots not holding the parent's own writes after a round",
		  nhw, rounds, hslot_writes, hbad, parent_bad);
	tap_check(g_fail == 0 && g_bad == 0 && g_pfn_bad == 0 && g_passes >= 2 * rounds && rounds > 0,
		  "%ld grandchildren saw only the pre-fork hugetlb content while the parent wrote and after (%ld read passes): %ld failed, %ld bad slots, %ld pages not at their pre-fork PFN",
		  rounds, g_passes, g_fail, g_bad, g_pfn_bad);
	/* A zap landing among the writes to its page races their COW faults. */
	ok = cow > 0 && uncopied == 0 && hzeros > 0 && zap_err == 0 && zap_when[1] > 0;
	tap_check(ok, "race offered (hugetlb): %ld COW copies of shared huge pages (%ld written but not copied), %ld hugetlb writes seen zapped by %ld MADV_DONTNEED (%ld failed), landing %ld times before the writes to their page, %ld times among them, %ld times after%s",
		  cow, uncopied, hzeros, rounds - zap_err, zap_err, zap_when[0], zap_when[1],
		  zap_when[2], ok || uncopied || zap_err ? "" : ": too little work done");
	tap_check(pool_bad == 0 && rounds > 0,
		  "free huge pages, each of %ld rounds: -%d while the grandchild held the old pages, +%d at its exit (%ld rounds off%s)",
		  rounds, NHUGE, NHUGE, pool_bad, pool_bad ? ", first shown above" : "");
	rss_agree_check("after the hugetlb rounds");
}

/* The old nr_hugepages, written back at exit (the main process only). */
static long old_nr = -1;
static pid_t main_pid;

static int nr_hugepages_set(long n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", n);
	return write_file(NR_HUGEPAGES, buf);
}

static long nr_hugepages_get(void)
{
	return read_number(NR_HUGEPAGES);
}

static void pool_restore(void)
{
	if (getpid() != main_pid || old_nr < 0)
		return;
	nr_hugepages_set(old_nr);
	old_nr = -1;
}

int main(int argc, char **argv)
{
	struct pool before, after;
	long hps, saved, got;
	int tries = 0;

	tap_init(argv[0]);
	(void)argc;
	main_pid = getpid();
	naw = 2 * ncpus();
	nhw = ncpus();
	if (naw < 4)
		naw = 4;
	if (naw > MAX_AW)
		naw = MAX_AW;
	if (nhw < 2)
		nhw = 2;
	if (nhw > MAX_HW)
		nhw = MAX_HW;
	if (access(NR_HUGEPAGES, F_OK)) {
		tap_plan(1);
		tap_check(0, "hugetlb: the test kernels have CONFIG_HUGETLBFS, this one has no " NR_HUGEPAGES);
		return tap_exit();
	}
	ctl = map_shared(sizeof(*ctl));

	old_nr = nr_hugepages_get();
	saved = old_nr;
	atexit(pool_restore);
	hps = meminfo_kb("Hugepagesize");
	if (nr_hugepages_set(POOL))
		tap_diag("write %d to " NR_HUGEPAGES ": %s", POOL, strerror(errno));
	pool_read(&before);
	if (hps != 2048 || before.total != POOL || before.free != POOL || before.resv != 0 ||
	    before.surp != 0) {
		/* The pool, and nr_hugepages back. */
		tap_plan(2);
		tap_check(0, "hugetlb pool of %d 2 MiB pages (Hugepagesize %ld kB): only %ld of %d huge pages could be allocated (free %ld, resv %ld, surplus %ld; nr_hugepages was %ld)",
			  POOL, hps, before.total, POOL, before.free, before.resv, before.surp, saved);
	} else {
		/* The pool; the child's checks; the leak checks; the pool back;
		 * nr_hugepages back. */
		tap_plan(1 + 7 + LEAK_CHECKS + 1 + 1);
		tap_check(1, "hugetlb pool of %d 2 MiB pages: nr_hugepages %ld -> %ld, free %ld, resv %ld",
			  POOL, saved, before.total, before.free, before.resv);
		leak_watched("hugetlb COW next to lockless anonymous faults", hugetlb_child, NULL);
		pool_read(&after);
		while ((after.free != before.free || after.resv || after.surp) && tries++ < 20) {
			usleep(50000);
			pool_read(&after);
		}
		tap_check(after.free == before.free && after.free == after.total && after.resv == 0 &&
			  after.surp == 0,
			  "hugetlb pool back to its level once the child is gone: free %ld -> %ld of %ld, resv %ld, surplus %ld",
			  before.free, after.free, after.total, after.resv, after.surp);
	}
	pool_restore();
	got = nr_hugepages_get();
	tap_check(got == saved, "nr_hugepages restored: %ld (was %ld)", got, saved);
	return tap_exit();
}
