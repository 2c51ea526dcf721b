// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing device memory, through the kernel's own HMM test driver
 * (lib/test_hmm.c, CONFIG_TEST_HMM=y: /dev/hmm_dmirror0, a fake device
 * with device-private ZONE_DEVICE memory that mirrors the opener's mm).
 *
 * 1. Migration: HMM_DMIRROR_MIGRATE_TO_DEV (migrate_vma_setup(): in
 *    migrate_vma_collect_pmd() every present anonymous PTE is cleared and
 *    set to a migration entry under the PTE lock, every empty one collected
 *    as a hole; migrate_vma_pages(): migrate_vma_insert_page() checks that
 *    a hole's PTE is still empty, or maps the zero page, and sets a
 *    device-private entry) over a region while writer threads fault and
 *    write the same pages. A CPU fault on a device-private entry migrates
 *    the page back (do_swap_page() -> the driver's migrate_to_ram()).
 * 2. Exclusive access: HMM_DMIRROR_EXCLUSIVE (make_device_exclusive_range():
 *    a present anonymous PTE is cleared and set to a device-exclusive
 *    entry); a CPU fault restores it (restore_exclusive_pte()).
 *
 * Each in a forked child (leak_watch_run(): AnonPages and PageTables
 * exactly back once the mm is gone, no bad-mm/BUG/WARNING message). The
 * region is two halves of 64 pages (test_hmm migrates 64 at a time): in
 * the first every other 8-page run is a hole, the second is all holes.
 * The main thread loops: MADV_DONTNEED of the holes, then the ioctl on
 * each half in turn; then it reads /proc/self/pagemap for the
 * device-private (1) or device-exclusive (2) entries the ioctls left.
 * Writer threads (2 x CPUs) keep going over the pages outside the holes,
 * paced (see t_swap), and faulting back what the ioctls took; and once per
 * ioctl each goes over the holes of its half as fast as it can, a random
 * number of sched_yield()s into it (the guest clock ticks in jiffies under
 * TCG: too coarse to aim with), so that first faults on empty PTEs come
 * while the ioctl works on them: migrate_vma_insert_page() on the
 * migration's holes, make_device_exclusive_range()'s own faults on them.
 * In holes, odd writers (all in (2)) write first: write faults on empty
 * PTEs; even ones read first in (1): the zero page, which
 * migrate_vma_insert_page() replaces. Writers check on every page that
 * their own slot still holds the value they wrote last (0 is legal only in
 * a hole that a MADV_DONTNEED began to zap since they wrote it), write a
 * new one and read it back; once the loop is done they read every slot
 * once more, and then no device entry may be left, every page must be
 * mapped, and smaps' Rss must match the pagemap. The lockless fault path
 * must never fill a PTE that an ioctl cleared and is about to set, nor a
 * hole that migrate_vma_insert_page() checked: a write would be lost and a
 * page leaked.
 *
 * Evidence, each > 0 or the check fails: new device entries right after
 * an ioctl (the pagemap's swap-type field tells the entry's kind; the
 * kinds are calibrated first on single pages, against HMM_DMIRROR_SNAPSHOT
 * for device-private); device entries outside the holes that were
 * ordinary pages again when the main thread looked next, before its next
 * ioctl (in between only the writers ran there, so each is a CPU fault
 * that migrated the page back or restored it); and holes still empty
 * between the zap and the ioctls, read from pagemap. "Race reproduced" on
 * the atomic path: (2) parked_by_device_exclusive moved (a fault met a
 * PTE parked by page_make_device_exclusive_one(): the parking site is
 * recorded in the marker); (1) device_insert_lost moved
 * (migrate_vma_insert_page() lost its compare-and-set to a lockless
 * fault), a check only with the race windows widened (see need_lost()),
 * else printed. The races go on past MIN_SECS until all of that is seen,
 * RACE_SECS at most. On the stock path the counters are only printed
 * (locked faults wait for the PTE lock); without pfscale, skipped.
 *
 * The calibration is a check of its own: one written page and one never
 * touched migrate to the device (content right, a device-private entry,
 * SNAPSHOT says DEV_PRIVATE_LOCAL|WRITE) and back on a CPU read; one page
 * made device-exclusive and restored on a CPU write.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>
#include "common.h"

/*
 * From lib/test_hmm_uapi.h of linux-source-6.1 (the driver's private uapi,
 * not installed with the kernel headers): the command block and ioctls.
 */
struct hmm_dmirror_cmd {
	uint64_t addr;		/* in: user address the device reads/writes */
	uint64_t ptr;		/* in: user buffer for the device's data */
	uint64_t npages;	/* in: pages */
	uint64_t cpages;	/* out: pages copied */
	uint64_t faults;	/* out: device faults seen */
};

#define HMM_DMIRROR_MIGRATE_TO_DEV _IOWR('H', 0x02, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_SNAPSHOT	_IOWR('H', 0x04, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_EXCLUSIVE	_IOWR('H', 0x05, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_PROT_WRITE	0x02
#define HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL 0x20

#define DEVICE "hmm_dmirror0"
#define BATCH 64		/* one migrate_vma_setup() batch of test_hmm */
#define PAGES (2 * BATCH)	/* a mixed half, then a half of holes only */
#define HOLE_RUN 8		/* pages: every other run of 8 is a hole */
#define SLEEP_EVERY 8		/* writers pace themselves (see t_swap) */
#define SLEEP_US 50
#define MIN_SECS 3		/* race at least this long per mode */
#define RACE_SECS 15		/* and at most this long, until the evidence */
#define SWP_TYPE_MASK 31	/* pagemap: a swap PTE's type, MAX_SWAPFILES_SHIFT bits */

static const char *const op_name[] = { "HMM_DMIRROR_MIGRATE_TO_DEV", "HMM_DMIRROR_EXCLUSIVE" };
static const char *const entry_name[] = { "device-private", "device-exclusive" };
/*
 * The pfscale counter that moves only if the race really happened, on the
 * atomic path: (1) migrate_vma_insert_page() lost its compare-and-set to a
 * lockless fault; (2) a fault met a PTE that page_make_device_exclusive_one()
 * had parked (its own parking-site counter, not any park's busy_pte_fault).
 */
static const char *const lost_counter[] = { "device_insert_lost",
					     "parked_by_device_exclusive" };

/* What a race child found, in memory shared with the parent. */
struct result {
	int mode, n, ran, calibrated;
	char msg[256];		/* why the child stopped early */
	char cal[512];		/* the calibration's result */
	int type_dev, type_excl;	/* pagemap swap types of the entries */
	long long iters, seen, seen_holes, faults_back, holes_empty;
	long long rc_ok, rc_enoent, rc_ebusy, rc_other;
	int other_errno;
	long long writer_passes;
	int need_lost;		/* race on until @lost moved (see need_lost()) */
	long long lost;		/* the pfscale counter's moves (see lost_counter) */
	long bad, final_bad, zeros;
	long present, dev_left, rss, pm_rss;
	double secs;
};

static int is_hole(long i)
{
	return i >= BATCH || (i / HOLE_RUN) % 2 == 1;
}

/*
 * Open @DEVICE: /dev (devtmpfs) or, without it, a node made in /tmp from
 * the device's /sys/dev/char/MAJ:MIN/uevent. -1 (errno set) if none.
 */
static int hmm_open(char *why, size_t len)
{
	char path[300], line[128];
	struct dirent *d;
	DIR *dir;
	int fd = open("/dev/" DEVICE, O_RDWR);

	if (fd >= 0 || errno != ENOENT)
		goto out;
	dir = opendir("/sys/dev/char");
	while (dir && (d = readdir(dir))) {
		unsigned int maj, min;
		int found = 0;
		FILE *f;

		if (sscanf(d->d_name, "%u:%u", &maj, &min) != 2)
			continue;
		snprintf(path, sizeof(path), "/sys/dev/char/%s/uevent", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strcmp(line, "DEVNAME=" DEVICE "\n"))
				found = 1;
		fclose(f);
		if (found) {
			unlink("/tmp/pfscale-" DEVICE);
			if (mknod("/tmp/pfscale-" DEVICE, S_IFCHR | 0600, makedev(maj, min)) == 0)
				fd = open("/tmp/pfscale-" DEVICE, O_RDWR);
			break;
		}
	}
	if (dir)
		closedir(dir);
	if (fd < 0)
		errno = ENOENT;
out:
	if (fd < 0)
		snprintf(why, len, "cannot open /dev/%s (%s): kernel without CONFIG_TEST_HMM?",
			 DEVICE, strerror(errno));
	return fd;
}

static int dmirror(int fd, unsigned long op, void *addr, void *buf, long npages,
		   struct hmm_dmirror_cmd *cmd)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->addr = (uintptr_t)addr;
	cmd->ptr = (uintptr_t)buf;
	cmd->npages = npages;
	return ioctl(fd, op, cmd) ? -errno : 0;
}

/* The pagemap entries of [p, p + pages * PAGE) into @e. */
static void pagemap_read(void *p, long pages, uint64_t *e)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t want = pages * 8;

	if (fd < 0 || pread(fd, e, want, (uintptr_t)p / PAGE * 8) != want)
		tap_bail("read pagemap");
	close(fd);
}

/* A swap-type PTE's type (pagemap shows it to root), or -1. */
static int swap_type(uint64_t e)
{
	return (e & PM_SWAPPED) && !(e & PM_PRESENT) ? (int)(e & SWP_TYPE_MASK) : -1;
}

static int fail(struct result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->cal, sizeof(r->cal), fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * Calibration on single pages (see the top); sets r->type_dev and
 * r->type_excl. 1 if all went as the driver promises.
 */
static int calibrate(int fd, struct result *r)
{
	char *buf = map_anon(PAGE), *a = map_anon(PAGE), *b = map_anon(PAGE), *c = map_anon(PAGE);
	struct hmm_dmirror_cmd cmd;
	unsigned char perm = 0xff;
	uint64_t e;
	long i;
	int rc;

	memset(a, 0x5a, PAGE);
	rc = dmirror(fd, HMM_DMIRROR_MIGRATE_TO_DEV, a, buf, 1, &cmd);
	for (i = 0; i < (long)PAGE && buf[i] == 0x5a; i++)
		;
	if (rc || cmd.cpages != 1 || i != (long)PAGE)
		return fail(r, "migrating a written page: rc %d (%s), cpages %llu, device data right up to byte %ld",
			    rc, strerror(-rc), (unsigned long long)cmd.cpages, i);
	pagemap_read(a, 1, &e);
	r->type_dev = swap_type(e);
	if (r->type_dev < 0)
		return fail(r, "a migrated page's pagemap entry is no swap-type entry (%#llx)",
			    (unsigned long long)e);
	rc = dmirror(fd, HMM_DMIRROR_SNAPSHOT, a, &perm, 1, &cmd);
	if (rc || perm != (HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL | HMM_DMIRROR_PROT_WRITE))
		return fail(r, "SNAPSHOT of a migrated page: rc %d (%s), perm %#x (want %#x)",
			    rc, strerror(-rc), perm,
			    HMM_DMIRROR_PROT_DEV_PRIVATE_LOCAL | HMM_DMIRROR_PROT_WRITE);
	if (((volatile char *)a)[PAGE / 2] != 0x5a || pagemap_present(a, PAGE) != 1)
		return fail(r, "a migrated page read back by the CPU: %#x, present %ld",
			    a[PAGE / 2] & 0xff, pagemap_present(a, PAGE));

	memset(buf, 0x77, PAGE);
	rc = dmirror(fd, HMM_DMIRROR_MIGRATE_TO_DEV, b, buf, 1, &cmd);
	pagemap_read(b, 1, &e);
	if (rc || cmd.cpages != 1 || buf[0] != 0 || swap_type(e) != r->type_dev)
		return fail(r, "migrating a never-touched page (a hole): rc %d (%s), cpages %llu, device data %#x, pagemap type %d (want %d)",
			    rc, strerror(-rc), (unsigned long long)cmd.cpages, buf[0] & 0xff,
			    swap_type(e), r->type_dev);
	if (((volatile char *)b)[0] != 0 || pagemap_present(b, PAGE) != 1)
		return fail(r, "a migrated hole read back by the CPU: %#x, present %ld",
			    b[0] & 0xff, pagemap_present(b, PAGE));

	memset(c, 0x33, PAGE);
	rc = dmirror(fd, HMM_DMIRROR_EXCLUSIVE, c, buf, 1, &cmd);
	pagemap_read(c, 1, &e);
	r->type_excl = swap_type(e);
	if (rc || cmd.cpages != 1 || buf[0] != 0x33 || r->type_excl < 0 ||
	    r->type_excl == r->type_dev)
		return fail(r, "making a page device-exclusive: rc %d (%s), cpages %llu, device data %#x, pagemap type %d (device-private: %d)",
			    rc, strerror(-rc), (unsigned long long)cmd.cpages, buf[0] & 0xff,
			    r->type_excl, r->type_dev);
	((volatile char *)c)[1] = 0x44;
	if (c[0] != 0x33 || c[1] != 0x44 || pagemap_present(c, PAGE) != 1)
		return fail(r, "a device-exclusive page written by the CPU: %#x %#x, present %ld",
			    c[0] & 0xff, c[1] & 0xff, pagemap_present(c, PAGE));
	munmap(buf, PAGE);
	munmap(a, PAGE);
	munmap(b, PAGE);
	munmap(c, PAGE);
	snprintf(r->cal, sizeof(r->cal),
		 "pages migrate to the device and back (written and never touched), SNAPSHOT says DEV_PRIVATE_LOCAL|WRITE, a page made device-exclusive is restored on a CPU write; pagemap swap types: device-private %d, device-exclusive %d",
		 r->type_dev, r->type_excl);
	return 1;
}

/* The race, shared by the child's threads. */
static char *base;
static volatile int stop;
static int nwriters, race_mode;
static long ioctl_gen, ioctl_done;	/* the ioctl begun, the one done */
static long zaps_begun, zaps_done, bad, final_bad, zeros;
static long writer_passes[64];
static struct spin_barrier start_bar;

static long load(long *p)
{
	return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* What writer @id leaves in page @page in pass @gen (0: never written). */
static uint64_t value(uint64_t gen, long id, long page)
{
	return gen ? (gen << 40) | ((uint64_t)id << 32) | page : 0;
}

/* Is @got what the writer expects (@want), or a 0 a zap may have left? */
static int legal(uint64_t got, uint64_t want, long page, long done_before)
{
	if (got == want)
		return 1;
	if (got == 0 && is_hole(page) && load(&zaps_begun) > done_before) {
		__atomic_add_fetch(&zeros, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return 0;
}

/*
 * One access of writer @id to page @i: check that its slot holds @last
 * (or a 0 a zap may have left), write this pass's value and read it back;
 * unless @write_first, which writes without looking first. The new value.
 */
static uint64_t touch(long id, long i, uint64_t gen, uint64_t last, long *done_before,
		      int write_first)
{
	uint64_t *slot = (uint64_t *)(base + i * PAGE) + id, v = value(gen, id, i);

	if (!write_first && !legal(__atomic_load_n(slot, __ATOMIC_SEQ_CST), last, i, done_before[i]))
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	done_before[i] = load(&zaps_done);
	__atomic_store_n(slot, v, __ATOMIC_SEQ_CST);
	if (!legal(__atomic_load_n(slot, __ATOMIC_SEQ_CST), v, i, done_before[i]))
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	return v;
}

/*
 * A writer's pass: the pages outside the holes, paced (see t_swap); and
 * once per ioctl, the holes, as fast as it can go, so that the first faults
 * on the empty PTEs come while the ioctl works on them. The guest's clock
 * ticks in jiffies under TCG, too coarse to aim with: each writer waits a
 * random number of sched_yield()s into the ioctl first, up to its estimate
 * of how many one ioctl lasts. Holes: odd writers (all in mode 2) write
 * first, a write fault on an empty PTE; even ones read first, which maps
 * the zero page.
 */
struct burst {
	long seen;		/* the ioctl of the last burst */
	long yields[2];		/* estimate: sched_yield()s an ioctl lasts, per half */
	unsigned int seed;
};

static void burst(long id, struct burst *b, uint64_t gen, uint64_t *last, long *done_before,
		  int write_first)
{
	long i, k, c, *yields = &b->yields[b->seen % 2], wait = rand_r(&b->seed) % (*yields + 1);

	for (c = 0; c < wait && __atomic_load_n(&ioctl_done, __ATOMIC_ACQUIRE) != b->seen &&
		    !stop; c++)
		sched_yield();
	if (c < wait)
		*yields = (3 * *yields + c) / 4;	/* it was over sooner */
	else if (wait > *yields * 3 / 4)
		*yields += *yields / 4 + 1;		/* it may last longer */
	/* The half the ioctl works on: odd ioctls the first, even the second. */
	for (k = 0; k < BATCH; k++) {
		i = (k + id * BATCH / nwriters) % BATCH + (b->seen % 2 ? 0 : BATCH);
		if (is_hole(i))
			last[i] = touch(id, i, gen, last[i], done_before, write_first);
	}
}

static void *writer(void *p)
{
	long id = (long)p, i, done_before[PAGES], g;
	struct burst b = { 0, { 64, 64 }, (unsigned int)id + 1 };
	uint64_t gen = 0, last[PAGES];
	int write_first = (id & 1) || race_mode == 1;

	for (i = 0; i < PAGES; i++) {
		done_before[i] = 0;
		last[i] = 0;
	}
	spin_barrier_wait(&start_bar);
	while (!stop) {
		gen++;
		for (i = 0; i < PAGES; i++) {
			g = __atomic_load_n(&ioctl_gen, __ATOMIC_ACQUIRE);
			if (g != b.seen) {
				b.seen = g;
				burst(id, &b, gen, last, done_before, write_first);
			}
			if (i % SLEEP_EVERY == SLEEP_EVERY - 1)
				usleep(SLEEP_US);
			if (!is_hole(i))
				last[i] = touch(id, i, gen, last[i], done_before, 0);
		}
		__atomic_store_n(&writer_passes[id], (long)gen, __ATOMIC_RELEASE);
	}
	for (i = 0; i < PAGES; i++)
		if (!legal(((volatile uint64_t *)(base + i * PAGE))[id], last[i], i, done_before[i]))
			__atomic_add_fetch(&final_bad, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void zap_holes(void)
{
	long i;

	__atomic_add_fetch(&zaps_begun, 1, __ATOMIC_SEQ_CST);
	for (i = HOLE_RUN; i < BATCH; i += 2 * HOLE_RUN)
		if (madvise(base + i * PAGE, HOLE_RUN * PAGE, MADV_DONTNEED))
			tap_bail("MADV_DONTNEED");
	if (madvise(base + BATCH * PAGE, BATCH * PAGE, MADV_DONTNEED))
		tap_bail("MADV_DONTNEED");
	__atomic_add_fetch(&zaps_done, 1, __ATOMIC_SEQ_CST);
}

static void race_child(void *arg)
{
	struct result *r = arg;
	unsigned long op = r->mode ? HMM_DMIRROR_EXCLUSIVE : HMM_DMIRROR_MIGRATE_TO_DEV;
	size_t len = PAGES * PAGE;
	static uint64_t e[PAGES], post[PAGES];
	struct hmm_dmirror_cmd cmd;
	double t0, min_end, end;
	long long lost0;
	pthread_t tid[64];
	char *guarded, *buf;
	long i;
	int fd, k, type;

	fd = hmm_open(r->msg, sizeof(r->msg));
	if (fd < 0)
		return;
	if (!calibrate(fd, r))
		return;
	r->calibrated = 1;
	type = r->mode ? r->type_excl : r->type_dev;
	race_mode = r->mode;
	buf = map_anon(len);
	/* Guard pages: the region is a VMA of its own, with its own smaps entry. */
	guarded = map_anon(len + 2 * PAGE);
	mprotect(guarded, PAGE, PROT_NONE);
	mprotect(guarded + PAGE + len, PAGE, PROT_NONE);
	base = guarded + PAGE;
	madvise(base, len, MADV_NOHUGEPAGE);
	nwriters = r->n;
	spin_barrier_init(&start_bar, nwriters + 1);
	for (k = 0; k < nwriters; k++)
		if (pthread_create(&tid[k], NULL, writer, (void *)(long)k))
			tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	t0 = now();
	min_end = t0 + MIN_SECS;
	end = t0 + RACE_SECS;
	for (i = 0; i < PAGES; i++)
		post[i] = 0;
	lost0 = pfscale_counter(lost_counter[r->mode]);
	while (now() < end && (now() < min_end || !r->seen || !r->faults_back || !r->holes_empty ||
			       (r->need_lost && !r->lost))) {
		int rc, h;

		zap_holes();
		pagemap_read(base, PAGES, e);
		for (i = 0; i < PAGES; i++) {
			if (is_hole(i) && !(e[i] & (PM_PRESENT | PM_SWAPPED)))
				r->holes_empty++;
			/*
			 * Outside the holes only a CPU fault turns a device
			 * entry back into an ordinary page (another ioctl
			 * has not run since the last look).
			 */
			if (!is_hole(i) && swap_type(post[i]) == type && e[i] != post[i])
				r->faults_back++;
		}
		/*
		 * One ioctl per half: the second, all holes, has nearly only
		 * migrate_vma_insert_page() to do for its pages.
		 */
		for (h = 0; h < 2; h++) {
			__atomic_store_n(&ioctl_gen, 2 * r->iters + 1 + h, __ATOMIC_RELEASE);
			rc = dmirror(fd, op, base + h * BATCH * PAGE, buf, BATCH, &cmd);
			__atomic_store_n(&ioctl_done, 2 * r->iters + 1 + h, __ATOMIC_RELEASE);
			if (rc == 0)
				r->rc_ok++;
			else if (rc == -ENOENT)
				r->rc_enoent++;	/* a page not (or no longer) on the device */
			else if (rc == -EBUSY)
				r->rc_ebusy++;	/* a page not made exclusive */
			else {
				r->rc_other++;
				r->other_errno = -rc;
			}
		}
		pagemap_read(base, PAGES, e);
		for (i = 0; i < PAGES; i++) {
			/* New device entries only (not one left from before). */
			if (swap_type(e[i]) == type && e[i] != post[i]) {
				r->seen++;
				r->seen_holes += is_hole(i);
			}
			post[i] = e[i];
		}
		if (lost0 >= 0)
			r->lost = pfscale_counter(lost_counter[r->mode]) - lost0;
		r->iters++;
	}
	stop = 1;
	for (k = 0; k < nwriters; k++) {
		pthread_join(tid[k], NULL);
		r->writer_passes += writer_passes[k];
	}
	r->secs = now() - t0;
	r->bad = bad;
	r->final_bad = final_bad;
	r->zeros = zeros;
	pagemap_read(base, PAGES, e);
	for (i = 0; i < PAGES; i++)
		r->dev_left += swap_type(e[i]) == r->type_dev || swap_type(e[i]) == r->type_excl;
	r->present = pagemap_present(base, len);
	r->pm_rss = pagemap_rss(base, len);
	r->rss = smaps_rss(base);
	r->ran = 1;
	close(fd);
}

/* All of the race_windows file (empty without the widener). */
static void windows(char *buf, size_t len)
{
	if (slurp("/sys/kernel/debug/pfscale/race_windows", buf, len) < 0)
		buf[0] = 0;
}

/* Diagnostic: the windows whose hits moved between @before and now. */
static void windows_diag(const char *before, const char *what)
{
	char after[4096], line[512], name[64], out[1024] = "";
	const char *p;
	long long v, w;

	windows(after, sizeof(after));
	for (p = after; sscanf(p, "%63s %lld", name, &v) == 2; p = strchr(p, '\n') + 1) {
		const char *q = strstr(before, name);

		w = q && sscanf(q + strlen(name), "%lld", &w) == 1 ? w : 0;
		if (v > w) {
			snprintf(line, sizeof(line), " %s +%lld", name, v - w);
			strncat(out, line, sizeof(out) - strlen(out) - 1);
		}
		if (!strchr(p, '\n'))
			break;
	}
	if (after[0])
		tap_diag("%s: race windows widened:%s", what, out[0] ? out : " none");
}

/*
 * Is "race reproduced" a check for @mode here? On the atomic path; for the
 * insert race (1) only with the race windows widened: its window, between
 * migrate_vma_insert_page()'s pte_none() check and its compare-and-set, is
 * a few hundred instructions, and plain atomic boots saw device_insert_lost
 * move 0 to 4 times in 15 s of racing (1 to 17 times in 10 s widened).
 */
static int need_lost(int mode)
{
	char buf[32];

	if (pfscale_atomic_pte() != 1)
		return 0;
	return mode == 1 ||
	       (read_file(RACE_WINDOW_US, buf, sizeof(buf)) > 0 &&
		atol(buf) > 0);
}

static void run_mode(struct result *r, int mode, int n, int report_calibration)
{
	char what[128], before[4096];
	struct parked_mark parked;
	const char *lost = lost_counter[mode];
	int status, pfscale = pfscale_counter("anon_fault_locked") >= 0;
	int atomic = pfscale_atomic_pte() == 1;
	struct leak_watch w;

	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->n = n;
	r->need_lost = need_lost(mode);
	windows(before, sizeof(before));
	snprintf(what, sizeof(what), "writers racing %s", op_name[mode]);
	parked_mark(&parked);
	status = leak_watch_run(&w, race_child, r);
	if (status != 0 || !r->ran)
		tap_diag("%s: child wait status 0x%x, %s%s%s", what, status,
			 r->ran ? "finished" : "did not finish", r->msg[0] ? ": " : "", r->msg);
	if (r->ran)
		tap_diag("%s: %lld rounds of 2 ioctls: %lld ok, %lld ENOENT, %lld EBUSY, %lld other%s%s; %lld zapped slots read 0",
			 what, r->iters, r->rc_ok, r->rc_enoent, r->rc_ebusy, r->rc_other,
			 r->rc_other ? ": " : "", r->rc_other ? strerror(r->other_errno) : "",
			 (long long)r->zeros);
	parked_diag(what, &parked);
	windows_diag(before, what);

	if (report_calibration)
		tap_check(r->calibrated, "the HMM test device (/dev/%s): %s", DEVICE,
			  r->cal[0] ? r->cal : r->msg[0] ? r->msg : "the child did not get that far");
	else if (!r->calibrated)
		tap_diag("%s: calibration: %s", what, r->cal[0] ? r->cal : r->msg);
	tap_check(status == 0 && r->ran && r->rc_other == 0 && r->bad == 0 && r->final_bad == 0 &&
		  r->present == PAGES && r->dev_left == 0 && r->rss == r->pm_rss,
		  "%d writers racing %lld rounds of %s (%.1f s, %lld writer passes): %ld wrong reads while racing, %ld in the last pass, %lld ioctl errors other than ENOENT/EBUSY; then %ld present (want %d), %ld still device entries, rss %ld == %ld mapped",
		  n, r->iters, op_name[mode], r->secs, r->writer_passes, r->bad, r->final_bad,
		  r->rc_other, r->present, PAGES, r->dev_left, r->rss, r->pm_rss);
	tap_check(r->ran && r->seen > 0 && r->faults_back > 0 && r->holes_empty > 0,
		  "race offered: %s: %lld pages seen %s after the ioctls (%lld of them holes), %lld faulted back by writers' CPU faults; %lld holes still empty as the ioctls began%s",
		  what, r->seen, entry_name[mode], r->seen_holes, r->faults_back, r->holes_empty,
		  r->seen > 0 && r->faults_back > 0 && r->holes_empty > 0 ? "" :
		  ": too little work done");
	if (!pfscale)
		tap_skip("race reproduced: %s: %s moved (no pfscale counters in this kernel)",
			 what, lost);
	else if (!atomic)
		tap_diag("%s: %s path: %s moved by %lld (a check on the atomic path only: locked faults wait for the PTE lock)",
			 what, pfscale_path(), lost, r->lost);
	else if (!r->need_lost)
		tap_diag("%s: %s path: %s moved by %lld (%lld rounds, %.1f s; a check only with the race windows widened)",
			 what, pfscale_path(), lost, r->lost, r->iters, r->secs);
	else
		tap_check(r->lost > 0, "race reproduced: %s: %s path: %s moved by %lld (%lld rounds, %.1f s)%s",
			  what, pfscale_path(), lost, r->lost, r->iters, r->secs,
			  r->lost > 0 ? "" : ": race not reproduced");
	leak_watch_check(&w, what);
}

/*
 * kernel.numa_balancing off, and back as it was at exit (also after
 * tap_bail()); nothing if the kernel has no NUMA balancing.
 */
static char numa_balancing_was[16];

static void numa_balancing_restore(void)
{
	if (numa_balancing_was[0])
		write_file("/proc/sys/kernel/numa_balancing", numa_balancing_was);
}

static void numa_balancing_off(void)
{
	if (read_file("/proc/sys/kernel/numa_balancing", numa_balancing_was,
		      sizeof(numa_balancing_was)) <= 0)
		return;
	atexit(numa_balancing_restore);
	write_file("/proc/sys/kernel/numa_balancing", "0");
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus();
	struct result *r;
	char why[256];
	int fd;

	tap_init(argv[0]);
	(void)argc;
	if (n > 64)
		n = 64;
	/*
	 * The device and its calibration; per mode content, evidence, race
	 * reproduced (atomic path: a check; pfscale-less kernel: a skip;
	 * stock path: a diagnostic), the leak checks.
	 */
	tap_plan(2 * LEAK_CHECKS + (pfscale_counter("anon_fault_locked") < 0 ?
				    7 : 5 + need_lost(0) + need_lost(1)));
	fd = hmm_open(why, sizeof(why));
	if (fd < 0) {
		tap_check(0, "the HMM test device: %s", why);
		return tap_exit();
	}
	close(fd);
	r = map_shared(2 * sizeof(*r));
	/*
	 * NUMA balancing off while racing: its hinting faults park PTEs too
	 * (busy_pte_fault) and are raced by t_migrate, not here.
	 */
	numa_balancing_off();
	/* The calibration runs in each child, before its race; reported once. */
	run_mode(&r[0], 0, n, 1);
	run_mode(&r[1], 1, n, 0);
	return tap_exit();
}
