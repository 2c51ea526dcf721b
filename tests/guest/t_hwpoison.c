// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing memory failure (issue 25): soft offline and hwpoison.
 *
 * (a) Soft offline. In a forked child (the leak watch's), writer threads
 *     fault a fresh region of SO_PAGES pages and keep writing their own slot
 *     of every page (checking the previous pass's value, reading back each
 *     store), while an offliner thread follows their first pass and soft-
 *     offlines every page, page after page, as soon as pagemap shows it
 *     present: MADV_SOFT_OFFLINE -> soft_offline_page() migrates the page
 *     (try_to_migrate_one(): a migration entry where the writers fault, then
 *     the copy) and keeps the old one out of use, HWPoison. Nothing is
 *     discarded: every read must return what its writer wrote last.
 *     Evidence: the pages madvise() offlined (returned 0), each one's PFN
 *     changed and the old PFN (the one madvise() logs: "Soft offlining pfn
 *     ...", read back from /dev/kmsg; see kmsg_offlined_pfn()) HWPoison in
 *     /proc/kpageflags, and meminfo
 *     HardwareCorrupted up by exactly those pages. Then the parent unpoisons
 *     every old PFN (/sys/kernel/debug/hwpoison/unpoison-pfn: the page is
 *     freed) and HardwareCorrupted must be back exactly: the test takes no
 *     memory out of use for good.
 *
 * (b) Hwpoison. In a forked child, writer threads write their own slot of
 *     every page of an HP_PAGES region, pass after pass, with a SIGBUS
 *     handler; once each has made 2 passes, a poisoner thread injects a
 *     memory failure into the middle page (MADV_HWPOISON -> memory_failure():
 *     the PTE becomes a hwpoison entry). The default late kill sends no
 *     signal then; each writer's next touch of that page faults on the
 *     hwpoison entry and must get SIGBUS, BUS_MCEERR_AR, at that page's
 *     address, si_addr_lsb 12 (PAGE_SHIFT): the handler notes it and
 *     siglongjmp()s on to the next page, which the writer then skips. So
 *     every writer must get exactly one SIGBUS, there and nowhere else, the
 *     child must exit normally (no fatal signal), and no write to any other
 *     page may be lost. Evidence: madvise() returned 0, HardwareCorrupted
 *     +4 kB, pagemap shows the page as a (hwpoison) swap-type entry. The
 *     poisoned page is unmapped (and uncounted from AnonPages) by the
 *     injection itself, so the leak watch stays exact; the parent then
 *     unpoisons it and HardwareCorrupted must be back exactly.
 *
 * (c) A fault meeting try_to_unmap_one()'s park. Reclaim defers its TLB
 *     flush, so writers that cache a page write through the old entry and
 *     hardly ever fault inside reclaim's window (t_swap sees one such fault
 *     in some runs, none in others). Memory failure flushes at once
 *     (ptep_park_flush()): writer threads spinning on one fresh page, each
 *     on its own CPU, fault right after the flush, while
 *     try_to_unmap_one() still holds the PTE parked before it sets the
 *     hwpoison entry. Round after round (a new page each, at most
 *     UNMAP_ROUNDS or RACE_SECS), until parked_by_unmap moved; if it has
 *     not after half of them, the rest run with the race windows widened
 *     to WIDEN_US (as t_switch does), so that the check holds on every
 *     boot. Evidence: every MADV_HWPOISON returned 0 and every spinner
 *     got its SIGBUS. Every page is unpoisoned afterwards.
 *
 * Kernel messages this makes (info: "Soft offlining pfn ...", "Injecting
 * memory failure for pfn ...", "Unpoison: Software-unpoisoned page ...";
 * err: "Memory failure: ...: recovery action for ...: Recovered", "MCE:
 * Killing t_hwpoison:PID due to hardware memory corruption fault at ADDR")
 * match none of tests/lib/kernel-errors.
 */
#include <setjmp.h>
#include <signal.h>
#include "common.h"

#define SO_PAGES 256
#define HP_PAGES 64
#define VICTIM (HP_PAGES / 2)
#define RACE_SECS 30	/* at most, for either part */
#define UNPOISON "/sys/kernel/debug/hwpoison/unpoison-pfn"
#define UNMAP_ROUNDS 40
#define WIDEN_US "50"
#define KPF_HWPOISON 19

#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif
#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

/* The pagemap entry of the page at @addr. */
static uint64_t pagemap_entry(int fd, void *addr)
{
	uint64_t e;

	if (pread(fd, &e, 8, (uintptr_t)addr / PAGE * 8) != 8)
		tap_bail("pread pagemap");
	return e;
}

/* /proc/kpageflags of @pfn (0 if unreadable). */
static uint64_t kpageflags(uint64_t pfn)
{
	uint64_t f = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &f, 8, pfn * 8) != 8)
		f = 0;
	close(fd);
	return f;
}

/*
 * The PFN that MADV_SOFT_OFFLINE of @addr took: madvise_inject_error() logs
 * "Soft offlining pfn 0x... at process virtual address 0x..." before it
 * offlines it. Read from @fd (/dev/kmsg, positioned before the call); 0 if
 * not found. PFN the page had in pagemap just before the call is not
 * enough: NUMA balancing may migrate the page in between (seen once).
 */
static uint64_t kmsg_offlined_pfn(int fd, void *addr)
{
	char rec[1024], *m;
	unsigned long long pfn, va;
	ssize_t r;

	if (fd < 0)
		return 0;
	for (;;) {
		r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EPIPE)
			continue;
		if (r <= 0)
			return 0;
		rec[r] = 0;
		m = strstr(rec, "Soft offlining pfn ");
		if (m && sscanf(m, "Soft offlining pfn %llx at process virtual address %llx", &pfn, &va) == 2 &&
		    va == (uintptr_t)addr)
			return pfn;
	}
}

static int unpoison(uint64_t pfn)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)pfn);
	return write_file(UNPOISON, buf);
}

struct result {
	int n, done;
	/* (a) */
	long offlined, so_failed, so_errno, moved, poisoned_flag, pfn_raced, pfn_unlogged;
	uint64_t pfns[SO_PAGES];
	long hwc_race_kb;	/* HardwareCorrupted right after the race */
	/* (b) */
	long hp_ret, hp_errno, pm_swapped, hp_hwc_kb;
	uint64_t victim_pfn;
	long sigbus[64], wrong_sigbus[64];
	int code[64], lsb[64];
	void *addr[64];
	char *victim_addr;
	/* (c) */
	uint64_t unmap_pfns[UNMAP_ROUNDS];
	long unmap_rounds, unmap_poisoned, unmap_spinners, unmap_sigbus, unmap_widened_at;
	long long unmap_parked;
	/* (a) and (b) */
	long bad, final_bad, min_passes;
	long long writer_passes;
	double secs;
};

static struct result *res;
static char *base;
static long pages;
static volatile int stop;
static long passes[64];
static struct spin_barrier start_bar;


static long min_passes(int n)
{
	return pass_writers_min(passes, n);
}

/* (a) ------------------------------------------------------------------ */

static void *so_writer(void *p)
{
	spin_barrier_wait(&start_bar);
	pass_writer_run(base, pages, (long)p, &stop, &res->bad, &res->final_bad, passes);
	return NULL;
}

/* Soft-offlines every page once, each as soon as it is present. */
static void *offliner(void *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY), kfd = kmsg_open();
	double deadline;
	uint64_t e, old, pfn;
	long i;
	int tries;

	(void)p;
	if (fd < 0)
		tap_bail("open pagemap");
	spin_barrier_wait(&start_bar);
	deadline = now() + RACE_SECS;
	for (i = 0; i < pages && now() < deadline; i++) {
		char *a = base + i * PAGE;

		while (!((e = pagemap_entry(fd, a)) & PM_PRESENT) && now() < deadline)
			sched_yield();
		/*
		 * A page off the LRU at that moment (isolated by NUMA balancing
		 * or compaction) fails with EIO ("Memory failure: 0x...:
		 * unhandlable page.", seen once in 256) or EBUSY: try again.
		 */
		for (tries = 0;; tries++) {
			old = pagemap_entry(fd, a) & PM_PFN;
			if (!madvise(a, PAGE, MADV_SOFT_OFFLINE))
				break;
			res->so_failed++;
			res->so_errno = errno;
			if (tries == 3)
				break;
			usleep(1000);
			kmsg_offlined_pfn(kfd, a);	/* past its message */
		}
		if (tries == 3)
			continue;
		pfn = kmsg_offlined_pfn(kfd, a);
		if (!pfn) {
			res->pfn_unlogged++;
			pfn = old;
		} else if (pfn != old) {
			res->pfn_raced++;
		}
		res->pfns[res->offlined++] = pfn;
		e = pagemap_entry(fd, a);
		if (!(e & PM_PRESENT) || (e & PM_PFN) != pfn)
			res->moved++;
		if (kpageflags(pfn) & (1ULL << KPF_HWPOISON))
			res->poisoned_flag++;
	}
	close(fd);
	if (kfd >= 0)
		close(kfd);
	/* Let every writer make a pass over the migrated pages. */
	i = min_passes(res->n) + 1;
	while (min_passes(res->n) < i && now() < deadline)
		usleep(1000);
	stop = 1;
	return NULL;
}

static void so_child(void *arg)
{
	pthread_t tid[64], o;
	double t0;
	int k;

	(void)arg;
	pages = SO_PAGES;
	base = map_anon(pages * PAGE);
	madvise(base, pages * PAGE, MADV_NOHUGEPAGE);
	spin_barrier_init(&start_bar, res->n + 2);
	for (k = 0; k < res->n; k++)
		if (pthread_create(&tid[k], NULL, so_writer, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&o, NULL, offliner, NULL))
		tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	t0 = now();
	pthread_join(o, NULL);
	for (k = 0; k < res->n; k++) {
		pthread_join(tid[k], NULL);
		res->writer_passes += passes[k];
	}
	res->secs = now() - t0;
	res->min_passes = min_passes(res->n);
	mm_quiesce();
	res->hwc_race_kb = meminfo_kb("HardwareCorrupted");
	res->done = 1;
}

/* (b) ------------------------------------------------------------------ */

static __thread sigjmp_buf jb;
static __thread long my_id = -1;
static __thread volatile long cur_page = -1;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	long id = my_id;

	(void)sig;
	(void)uc;
	if (id < 0)
		_exit(99);	/* not a writer: the child fails */
	/* si_addr is the faulting address: the writer's slot in the page. */
	if (((uintptr_t)si->si_addr & ~(PAGE - 1)) == (uintptr_t)res->victim_addr) {
		res->sigbus[id]++;
		res->code[id] = si->si_code;
		res->lsb[id] = si->si_addr_lsb;
		res->addr[id] = si->si_addr;
	} else {
		res->wrong_sigbus[id]++;
		res->addr[id] = si->si_addr;
	}
	siglongjmp(jb, 1);
}

/* Take SIGBUS in @handler, which may siglongjmp() out of it. */
static void catch_sigbus(void (*handler)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		tap_bail("sigaction");
}

static void *hp_writer(void *p)
{
	long id = (long)p;
	volatile long i, skip = -1;
	volatile uint64_t gen = 0;
	uint64_t v;

	my_id = id;
	spin_barrier_wait(&start_bar);
	while (!stop) {
		gen++;
		i = 0;
		/* A SIGBUS comes back here: skip its page from now on. */
		if (sigsetjmp(jb, 0)) {
			skip = cur_page;
			i = cur_page + 1;
		}
		for (; i < pages; i++) {
			volatile uint64_t *slot = (uint64_t *)(base + i * PAGE) + id;

			if (i == skip)
				continue;
			cur_page = i;
			if (*slot != pass_value(gen - 1, id, i))
				__atomic_add_fetch(&res->bad, 1, __ATOMIC_RELAXED);
			v = pass_value(gen, id, i);
			*slot = v;
			if (*slot != v)
				__atomic_add_fetch(&res->bad, 1, __ATOMIC_RELAXED);
		}
		__atomic_store_n(&passes[id], (long)gen, __ATOMIC_RELEASE);
	}
	for (i = 0; i < pages; i++)
		if (i != VICTIM && i != skip &&
		    ((volatile uint64_t *)(base + i * PAGE))[id] != pass_value(gen, id, i))
			__atomic_add_fetch(&res->final_bad, 1, __ATOMIC_RELAXED);
	return NULL;
}

static int all_sigbused(int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (!__atomic_load_n(&res->sigbus[k], __ATOMIC_ACQUIRE))
			return 0;
	return 1;
}

static void *poisoner(void *p)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	double deadline;
	long want;

	(void)p;
	if (fd < 0)
		tap_bail("open pagemap");
	spin_barrier_wait(&start_bar);
	deadline = now() + RACE_SECS;
	while (min_passes(res->n) < 2 && now() < deadline)
		usleep(1000);
	res->victim_pfn = pagemap_entry(fd, res->victim_addr) & PM_PFN;
	res->hp_ret = madvise(res->victim_addr, PAGE, MADV_HWPOISON);
	res->hp_errno = res->hp_ret ? errno : 0;
	res->pm_swapped = !!(pagemap_entry(fd, res->victim_addr) & PM_SWAPPED);
	res->hp_hwc_kb = meminfo_kb("HardwareCorrupted");
	close(fd);
	/* Every writer touches the page again, and makes one more pass. */
	while (!all_sigbused(res->n) && now() < deadline)
		usleep(1000);
	want = min_passes(res->n) + 1;
	while (min_passes(res->n) < want && now() < deadline)
		usleep(1000);
	stop = 1;
	return NULL;
}

static void hp_child(void *arg)
{
	pthread_t tid[64], z;
	double t0;
	int k;

	(void)arg;
	catch_sigbus(on_sigbus);
	pages = HP_PAGES;
	base = map_anon(pages * PAGE);
	madvise(base, pages * PAGE, MADV_NOHUGEPAGE);
	res->victim_addr = base + VICTIM * PAGE;
	spin_barrier_init(&start_bar, res->n + 2);
	for (k = 0; k < res->n; k++)
		if (pthread_create(&tid[k], NULL, hp_writer, (void *)(long)k))
			tap_bail("pthread_create");
	if (pthread_create(&z, NULL, poisoner, NULL))
		tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	t0 = now();
	pthread_join(z, NULL);
	for (k = 0; k < res->n; k++) {
		pthread_join(tid[k], NULL);
		res->writer_passes += passes[k];
	}
	res->secs = now() - t0;
	res->min_passes = min_passes(res->n);
	res->done = 1;
}

/* (c) ------------------------------------------------------------------ */

static volatile char *spin_page;
static volatile long spinning, spin_sigbus;

static void on_sigbus_spinner(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	siglongjmp(jb, 1);
}

/* Write one slot of the page until the poison's SIGBUS ends the thread. */
static void *unmap_spinner(void *p)
{
	long id = (long)p;
	volatile uint64_t *slot = (volatile uint64_t *)spin_page + id;
	uint64_t v = 0;

	if (pin_thread_to_cpu(id % ncpus()))
		tap_bail("pin a spinner");
	if (sigsetjmp(jb, 0)) {
		__atomic_add_fetch(&spin_sigbus, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	*slot = ++v;
	__atomic_add_fetch(&spinning, 1, __ATOMIC_RELEASE);
	while (!stop)
		*slot = ++v;
	return NULL;
}

/* Wait (at most until @deadline) for *@count to reach @want. */
static int wait_count(volatile long *count, long want, double deadline)
{
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < want && now() < deadline)
		usleep(100);
	return __atomic_load_n(count, __ATOMIC_ACQUIRE) >= want;
}

static void unmap_child(void *arg)
{
	long nspin = ncpus() - 1, k;
	long long parked0 = pfscale_counter("parked_by_unmap");
	int fd = open("/proc/self/pagemap", O_RDONLY);
	double t0 = now(), deadline;
	pthread_t tid[64];

	(void)arg;
	if (nspin < 1)
		nspin = 1;
	if (fd < 0)
		tap_bail("open pagemap");
	catch_sigbus(on_sigbus_spinner);
	/* The poisoner keeps CPU 0; the spinners take the others. */
	if (pin_thread_to_cpu(0))
		tap_bail("pin the poisoner");
	res->unmap_spinners = nspin;
	res->unmap_widened_at = -1;
	for (res->unmap_rounds = 0; res->unmap_rounds < UNMAP_ROUNDS &&
	     (parked0 < 0 || res->unmap_parked == 0) && now() - t0 < RACE_SECS; res->unmap_rounds++) {
		if (res->unmap_widened_at < 0 && parked0 >= 0 && res->unmap_rounds >= UNMAP_ROUNDS / 2 &&
		    race_windows_widen(WIDEN_US))
			res->unmap_widened_at = res->unmap_rounds;
		spin_page = map_anon(PAGE);
		madvise((void *)spin_page, PAGE, MADV_NOHUGEPAGE);
		spin_page[0] = 1;
		spinning = spin_sigbus = 0;
		stop = 0;
		for (k = 0; k < nspin; k++)
			if (pthread_create(&tid[k], NULL, unmap_spinner, (void *)(k + 1)))
				tap_bail("pthread_create");
		deadline = now() + 10;
		wait_count(&spinning, nspin, deadline);
		res->unmap_pfns[res->unmap_rounds] = pagemap_entry(fd, (void *)spin_page) & PM_PFN;
		if (madvise((void *)spin_page, PAGE, MADV_HWPOISON) == 0)
			res->unmap_poisoned++;
		wait_count(&spin_sigbus, nspin, deadline);
		stop = 1;
		for (k = 0; k < nspin; k++)
			pthread_join(tid[k], NULL);
		res->unmap_sigbus += spin_sigbus;
		munmap((void *)spin_page, PAGE);
		if (parked0 >= 0)
			res->unmap_parked = pfscale_counter("parked_by_unmap") - parked0;
	}
	if (res->unmap_widened_at >= 0)
		race_windows_off();
	close(fd);
	res->secs = now() - t0;
	res->done = 1;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), status, k, ok;
	long hwc0, hwc1, unpoisoned = 0, one = 0, bad_code = 0, sum = 0, wrong = 0;
	struct leak_watch w;
	struct parked_mark parked;
	int err = 0;

	tap_init(argv[0]);
	(void)argc;
	if (n < 4)
		n = 4;
	if (n > 16)
		n = 16;
	hwc0 = meminfo_kb("HardwareCorrupted");
	if (hwc0 < 0 || access(UNPOISON, W_OK)) {
		tap_plan(1);
		tap_check(0, "memory failure: the test kernels have MEMORY_FAILURE and HWPOISON_INJECT (HardwareCorrupted %ld kB, %s %s)",
			  hwc0, UNPOISON, access(UNPOISON, W_OK) ? "missing" : "present");
		return tap_exit();
	}
	res = map_shared(sizeof(*res));
	/* (a) content, evidence, leak checks, unpoison; (b) outcome,
	 * content, evidence, leak checks, unpoison; (c) evidence, race,
	 * leak checks, unpoison */
	tap_plan(10 + 3 * LEAK_CHECKS);

	/* (a) Soft offline racing the writers. */
	memset(res, 0, sizeof(*res));
	res->n = n;
	parked_mark(&parked);
	status = leak_watch_run(&w, so_child, NULL);
	parked_diag("writers racing soft offline", &parked);
	if (status != 0 || !res->done)
		tap_diag("soft offline child: wait status 0x%x, %s", status,
			 res->done ? "finished" : "did not finish");
	if (res->pfn_raced || res->pfn_unlogged)
		tap_diag("soft offline: %ld pages moved between the pagemap read and the madvise() (the PFN offlined taken from its kernel message), %ld offlined PFNs not found in /dev/kmsg",
			 res->pfn_raced, res->pfn_unlogged);
	if (res->so_failed)
		tap_diag("%ld MADV_SOFT_OFFLINE calls failed, tried again (last errno %ld: %s)", res->so_failed,
			 res->so_errno, strerror(res->so_errno));
	tap_check(status == 0 && res->done && res->bad == 0 && res->final_bad == 0,
		  "%d writers racing MADV_SOFT_OFFLINE of the %d pages they fault: %ld lost writes while racing, %ld in the last pass (%.1f s, %lld writer passes, each >= %ld)",
		  n, SO_PAGES, res->bad, res->final_bad, res->secs, res->writer_passes, res->min_passes);
	ok = res->done && res->offlined > 0 && res->moved == res->offlined &&
	     res->poisoned_flag == res->offlined && res->hwc_race_kb - hwc0 == res->offlined * 4;
	tap_check(ok, "race offered: %ld of %d pages soft-offlined while written (%ld moved to a new PFN, %ld old PFNs HWPoison), HardwareCorrupted +%ld kB (want +%ld)%s",
		  res->offlined, SO_PAGES, res->moved, res->poisoned_flag, res->hwc_race_kb - hwc0,
		  res->offlined * 4, ok ? "" : (res->offlined ? ": pages unaccounted" : ": too little work done"));
	leak_watch_check(&w, "writers racing soft offline");
	for (k = 0; k < res->offlined; k++) {
		int r = unpoison(res->pfns[k]);

		if (r)
			err = r;
		else
			unpoisoned++;
	}
	mm_quiesce();
	hwc1 = meminfo_kb("HardwareCorrupted");
	tap_check(unpoisoned == res->offlined && hwc1 == hwc0,
		  "soft offline: %ld of %ld old PFNs unpoisoned%s%s: HardwareCorrupted back to its level (%ld kB -> %ld kB)",
		  unpoisoned, res->offlined, err ? ", last error: " : "", err ? strerror(-err) : "",
		  hwc0, hwc1);

	/* (b) One page poisoned under the writers. */
	hwc0 = hwc1;
	memset(res, 0, sizeof(*res));
	res->n = n;
	for (k = 0; k < 64; k++)
		passes[k] = 0;
	stop = 0;
	status = leak_watch_run(&w, hp_child, NULL);
	for (k = 0; k < n; k++) {
		sum += res->sigbus[k];
		wrong += res->wrong_sigbus[k];
		if (res->sigbus[k] == 1)
			one++;
		if (res->sigbus[k] && (res->code[k] != BUS_MCEERR_AR || res->lsb[k] != 12))
			bad_code++;
		if (res->wrong_sigbus[k])
			tap_diag("writer %d: SIGBUS at %p, not at the poisoned page %p", k,
				 res->addr[k], (void *)res->victim_addr);
		if (res->sigbus[k] && (res->code[k] != BUS_MCEERR_AR || res->lsb[k] != 12))
			tap_diag("writer %d: si_code %d (BUS_MCEERR_AR is %d), si_addr_lsb %d", k,
				 res->code[k], BUS_MCEERR_AR, res->lsb[k]);
	}
	tap_check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && res->done && one == n &&
		  sum == n && !wrong && !bad_code,
		  "page poisoned under %d writers: the child %s (wait status 0x%x); %ld of %d writers got exactly one SIGBUS BUS_MCEERR_AR (lsb 12) at the poisoned page (%ld in all, %ld elsewhere, %ld with a wrong code)",
		  n, WIFEXITED(status) ? "exited" : "was killed", status, one, n, sum, wrong, bad_code);
	tap_check(res->done && res->bad == 0 && res->final_bad == 0,
		  "page poisoned under %d writers: %ld lost writes in the other %d pages while racing, %ld in the last pass (%.1f s, %lld writer passes, each >= %ld)",
		  n, res->bad, HP_PAGES - 1, res->final_bad, res->secs, res->writer_passes, res->min_passes);
	ok = res->hp_ret == 0 && res->hp_hwc_kb - hwc0 == 4 && res->pm_swapped;
	tap_check(ok, "race offered: MADV_HWPOISON of pfn 0x%llx returned %ld%s%s, HardwareCorrupted +%ld kB (want +4), pagemap shows a %s",
		  (unsigned long long)res->victim_pfn, res->hp_ret, res->hp_ret ? ": " : "",
		  res->hp_ret ? strerror(res->hp_errno) : "", res->hp_hwc_kb - hwc0,
		  res->pm_swapped ? "hwpoison (swap-type) entry" : "present page: not poisoned");
	leak_watch_check(&w, "writers racing a poisoned page");
	err = res->victim_pfn ? unpoison(res->victim_pfn) : -EINVAL;
	mm_quiesce();
	hwc1 = meminfo_kb("HardwareCorrupted");
	tap_check(!err && hwc1 == hwc0,
		  "hwpoison: pfn 0x%llx unpoisoned%s%s: HardwareCorrupted back to its level (%ld kB -> %ld kB)",
		  (unsigned long long)res->victim_pfn, err ? ": " : "", err ? strerror(-err) : "",
		  hwc0, hwc1);

	/* (c) Faults meeting the park of a page being poisoned. */
	hwc0 = hwc1;
	memset(res, 0, sizeof(*res));
	stop = 0;
	status = leak_watch_run(&w, unmap_child, NULL);
	if (status != 0 || !res->done)
		tap_diag("unmap race child: wait status 0x%x, %s", status,
			 res->done ? "finished" : "did not finish");
	tap_check(res->done && res->unmap_rounds > 0 && res->unmap_poisoned == res->unmap_rounds &&
		  res->unmap_sigbus == res->unmap_rounds * res->unmap_spinners,
		  "race offered: %ld pages poisoned (MADV_HWPOISON) under %ld spinning writers each, %ld of %ld SIGBUS (%.1f s)",
		  res->unmap_poisoned, res->unmap_spinners, res->unmap_sigbus,
		  res->unmap_rounds * res->unmap_spinners, res->secs);
	if (pfscale_counter("parked_by_unmap") < 0)
		tap_skip("race reproduced: faults met a PTE parked by try_to_unmap_one (no pfscale counters in this kernel)");
	else
		tap_check(res->unmap_parked > 0,
			  "race reproduced: %s path: %lld faults met a PTE parked by try_to_unmap_one (%ld rounds%s)%s",
			  pfscale_path(), res->unmap_parked, res->unmap_rounds,
			  res->unmap_widened_at >= 0 ? ", race windows widened to " WIDEN_US " us from the middle on" : "",
			  res->unmap_parked > 0 ? "" : ": race not reproduced");
	leak_watch_check(&w, "spinners racing poisoned pages");
	err = 0;
	unpoisoned = 0;
	for (k = 0; k < res->unmap_rounds; k++)
		if (res->unmap_pfns[k] && !unpoison(res->unmap_pfns[k]))
			unpoisoned++;
	mm_quiesce();
	hwc1 = meminfo_kb("HardwareCorrupted");
	tap_check(unpoisoned == res->unmap_poisoned && hwc1 == hwc0,
		  "unmap race: %ld of %ld pfns unpoisoned: HardwareCorrupted back to its level (%ld kB -> %ld kB)",
		  unpoisoned, res->unmap_poisoned, hwc0, hwc1);
	return tap_exit();
}
