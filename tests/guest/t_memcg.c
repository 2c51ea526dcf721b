// SPDX-License-Identifier: GPL-2.0
/*
 * Faults racing memcg charge, reclaim and OOM (issue 25). guest/init mounts
 * cgroup v2 at /sys/fs/cgroup and puts swap on zram0.
 *
 * The parent enables the memory controller for the root's children
 * (cgroup.subtree_control +memory), makes CG (pfscale-t_memcg, +memory for
 * its children too) and, for each part, a leaf LEAF (CG/race) with the
 * part's limits. Each part runs in a forked child (the leak watch's) that
 * moves itself into LEAF (cgroup.procs) before it maps or starts anything,
 * so that every page its threads fault is charged to LEAF.
 *
 * 1. Reclaim: memory.max RECLAIM_MAX_MB, below the WS_MB working set of the
 *    racing writers, memory.swap.max unlimited. Writer threads keep writing
 *    their own slot of every page (checking the previous pass's value, and
 *    reading back each store), so the charges beyond memory.max reclaim from
 *    the faulting threads (try_charge_memcg() -> try_to_free_mem_cgroup_pages()
 *    -> shrink_folio_list() -> try_to_unmap_one(): present anonymous PTEs
 *    become swap entries) while the other writers fault the same pages,
 *    locklessly on the atomic path. Nothing is discarded, so every read must
 *    return what its writer wrote last; a last pass reads every slot once
 *    more. Evidence: memory.events "max", memory.stat pgsteal and
 *    memory.swap.current > 0 (pages swapped out of LEAF). The writers run at
 *    least MIN_SECS and until each has made a whole pass and the evidence is
 *    in (at most MAX_SECS).
 *
 * 2. Charge failure and OOM: memory.max OOM_MAX_MB, memory.swap.max 0:
 *    nothing can be reclaimed, a fault's charge fails, the memcg OOM killer
 *    kills the child (LEAF's only task) from the faulting path; the child
 *    must die by SIGKILL (not live OOM_SECS) and memory.events oom_kill must
 *    move. vm.oom_dump_tasks is 0 meanwhile (its task table has a
 *    "pgtables_bytes" column that kmsg_bad() would take for the exit-time
 *    complaint). The OOM report itself (dump_header(): "invoked oom-killer",
 *    a "Call Trace:" of the faulting thread, "oom-kill:constraint=...")
 *    is expected here.
 *
 * Each part: the exact leak watch (AnonPages, PageTables, kernel messages),
 * then no user page left charged to LEAF (empty_check() says why kernel
 * objects' charges may stay a little longer), memory.swap.current at most
 * the swap slot caches; LEAF is removed. At the end CG is removed and the
 * root's subtree_control and oom_dump_tasks are put back.
 */
#include <signal.h>
#include "common.h"

#define CGROOT "/sys/fs/cgroup"
#define CG CGROOT "/pfscale-t_memcg"
#define LEAF CG "/race"
#define LEAF_NAME "0::/pfscale-t_memcg/race"
#define WS_MB 8
#define RECLAIM_MAX_MB 4
#define OOM_MAX_MB 4
#define OOM_WS_MB 64
#define MIN_SECS 3
#define MAX_SECS 20
#define OOM_SECS 30
#define SETTLE_SECS 10
#define OOM_DUMP_TASKS "/proc/sys/vm/oom_dump_tasks"

/* The cgroup files below are LEAF's unless the name says CG. */
static long cg_read(const char *file, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", strchr(file, '/') ? CG : LEAF,
		 strchr(file, '/') ? strchr(file, '/') + 1 : file);
	return slurp(path, buf, len);
}

static int cg_write(const char *file, const char *s)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", strchr(file, '/') ? CG : LEAF,
		 strchr(file, '/') ? strchr(file, '/') + 1 : file);
	return write_file(path, s);
}

/*
 * A "key value" line of a cgroup's @file (memory.stat, memory.events; "CG/"
 * in front for CG's own); -1 if none.
 */
static long long cg_key(const char *file, const char *key)
{
	char buf[8192], *p = buf;
	size_t n = strlen(key);

	if (cg_read(file, buf, sizeof(buf)) < 0)
		return -1;
	while (p && *p) {
		if (!strncmp(p, key, n) && p[n] == ' ')
			return atoll(p + n + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* A single-number file of CG (memory.current, ...); -1 if unreadable. */
static long long cg_num(const char *file)
{
	char buf[64];

	if (cg_read(file, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

static long long zram_writes(void)
{
	long long v[5] = { 0 };
	FILE *f = fopen("/sys/block/zram0/stat", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		v[4] = -1;
	fclose(f);
	return v[4];
}

/* Shared with the racing children. */
struct result {
	int n, moved, done;
	char cgroup[128];
	long bad, final_bad, passes_min;
	long long writer_passes, max_events, pgsteal, pgscan, swap_peak, zram;
	double secs;
	long present, swapped;
};

static struct result *res;
static char *base;
static long pages;
static volatile int stop;
static long passes[64];
static struct spin_barrier start_bar;

/* Into CG, before anything is mapped or started; 1 if done. */
static int join_cg(void)
{
	char pid[16], *nl;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write("cgroup.procs", pid))
		return 0;
	if (read_file("/proc/self/cgroup", res->cgroup, sizeof(res->cgroup)) < 0)
		return 0;
	nl = strchr(res->cgroup, '\n');
	if (nl)
		*nl = 0;
	res->moved = !strcmp(res->cgroup, LEAF_NAME);
	return res->moved;
}


static void *writer(void *p)
{
	spin_barrier_wait(&start_bar);
	pass_writer_run(base, pages, (long)p, &stop, &res->bad, &res->final_bad, passes);
	return NULL;
}

static long min_passes(void)
{
	return pass_writers_min(passes, res->n);
}

static void sample(void)
{
	long long v;

	res->max_events = cg_key("memory.events", "max");
	v = cg_key("memory.stat", "pgsteal");
	if (v > res->pgsteal)
		res->pgsteal = v;
	v = cg_key("memory.stat", "pgscan");
	if (v > res->pgscan)
		res->pgscan = v;
	v = cg_num("memory.swap.current");
	if (v > res->swap_peak)
		res->swap_peak = v;
}

static void reclaim_child(void *arg)
{
	long long z0 = zram_writes();
	pthread_t tid[64];
	double t0;
	int k;

	(void)arg;
	if (!join_cg())
		return;
	pages = (WS_MB << 20) / PAGE;
	base = map_anon(pages * PAGE);
	madvise(base, pages * PAGE, MADV_NOHUGEPAGE);
	spin_barrier_init(&start_bar, res->n + 1);
	for (k = 0; k < res->n; k++)
		if (pthread_create(&tid[k], NULL, writer, (void *)(long)k))
			tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	t0 = now();
	for (;;) {
		usleep(100000);
		sample();
		if (now() - t0 >= MAX_SECS)
			break;
		if (now() - t0 >= fixed_secs(MIN_SECS) && min_passes() >= 1 && res->max_events > 0 &&
		    res->pgsteal > 0 && res->swap_peak > 0)
			break;
	}
	stop = 1;
	for (k = 0; k < res->n; k++) {
		pthread_join(tid[k], NULL);
		res->writer_passes += passes[k];
	}
	res->secs = now() - t0;
	res->passes_min = min_passes();
	sample();
	res->zram = z0 < 0 ? -1 : zram_writes() - z0;
	res->present = pagemap_present(base, pages * PAGE);
	res->swapped = pagemap_count(base, pages * PAGE, PM_SWAPPED);
	res->done = 1;
}

static void *oom_writer(void *p)
{
	long id = (long)p, i;

	spin_barrier_wait(&start_bar);
	for (;;)
		for (i = 0; i < pages; i++)
			((volatile uint64_t *)(base + i * PAGE))[id] = pass_value(1, id, i);
	return NULL;
}

/* Exits 0 only if it outlives OOM_SECS: the OOM killer should end it. */
static void oom_child(void *arg)
{
	pthread_t tid[64];
	int k;

	(void)arg;
	if (!join_cg())
		return;
	pages = (OOM_WS_MB << 20) / PAGE;
	base = map_anon(pages * PAGE);
	madvise(base, pages * PAGE, MADV_NOHUGEPAGE);
	spin_barrier_init(&start_bar, res->n + 1);
	for (k = 0; k < res->n; k++)
		if (pthread_create(&tid[k], NULL, oom_writer, (void *)(long)k))
			tap_bail("pthread_create");
	spin_barrier_wait(&start_bar);
	sleep(OOM_SECS);
	res->done = 1;
	_exit(0);
}

/*
 * After a part, once LEAF has no task: what is still charged to it.
 * - The per-CPU charge stocks hold pages charged ahead (up to
 *   MEMCG_CHARGE_BATCH per CPU): writing memory.high below the usage
 *   drains them (drain_all_stock(); on other CPUs by work items: polled).
 * - Kernel objects are charged by the byte (obj_cgroup); the sub-page
 *   remainders of freed ones stay charged as whole pages
 *   (objcg->nr_charged_bytes) until the objcg is released, well after
 *   LEAF is removed (seen: 1 or 2 pages, as memory.stat "kernel", for tens
 *   of seconds after removal, in the parent's usage). So memory.current
 *   cannot be required to reach exactly 0; what is required exactly is that
 *   no page of user memory stays charged: memory.current == memory.stat
 *   "kernel" (read once the stats are flushed: polled). "kernel" must stay
 *   small: at most 4 pages per CPU (seen: 0 to 3 pages with 4 CPUs), where
 *   a leak per racing fault would be thousands.
 * - Swap slots freed at exit wait in the per-CPU swap slot caches
 *   (SWAP_SLOTS_CACHE_SIZE, 64 per CPU) before they are freed and
 *   uncharged: memory.swap.current may stay above 0 by at most that many.
 * Polls at most SETTLE_SECS.
 */
#define SLOT_CACHE_PAGES 64
static void empty_check(const char *what)
{
	long long cur, swap, kernel, anon, bound = SLOT_CACHE_PAGES * ncpus() * PAGE,
		  kbound = 4 * ncpus() * PAGE;
	double t0 = now();

	for (;;) {
		mm_quiesce();
		cg_write("memory.high", "0");
		cg_write("memory.high", "max");
		cg_write("memory.reclaim", "1M");
		cur = cg_num("memory.current");
		swap = cg_num("memory.swap.current");
		kernel = cg_key("memory.stat", "kernel");
		anon = cg_key("memory.stat", "anon");
		if ((cur == kernel && kernel <= kbound && swap >= 0 && swap <= bound) ||
		    now() - t0 >= SETTLE_SECS)
			break;
		usleep(100000);
	}
	if (cur != kernel || kernel > kbound) {
		char buf[8192], out[1024] = "", *p, *nl;

		cg_read("memory.stat", buf, sizeof(buf));
		for (p = buf; p && *p; p = nl) {
			nl = strchr(p, '\n');
			if (nl)
				*nl++ = 0;
			if (strcmp(strchr(p, ' ') ? strchr(p, ' ') + 1 : "0", "0") &&
			    strlen(out) + strlen(p) + 3 < sizeof(out)) {
				strcat(out, p);
				strcat(out, ", ");
			}
		}
		tap_diag("%s: %s memory.stat, its non-zero lines: %s", what, LEAF, out);
	}
	tap_check(cur >= 0 && cur == kernel && kernel <= kbound && swap >= 0 && swap <= bound,
		  "%s: the memcg empty again: memory.current %lld == kernel objects' charge %lld (at most %lld kB: byte-charge leftovers), no user page charged (anon %lld); memory.swap.current %lld kB (swap slot caches: at most %lld kB)",
		  what, cur, kernel, kbound >> 10, anon, swap >> 10, bound >> 10);
}

/* LEAF removed (its task reaped, it may take a moment to be unpopulated). */
static int remove_leaf(void)
{
	double t0 = now();

	while (rmdir(LEAF) && errno == EBUSY && now() - t0 < SETTLE_SECS)
		usleep(100000);
	return access(LEAF, F_OK) != 0;
}

static int new_leaf(void)
{
	rmdir(LEAF);
	return mkdir(LEAF, 0755);
}

static char old_oom_dump[16];
static int enabled_memory;
static pid_t main_pid;

static void cleanup(void)
{
	if (getpid() != main_pid)
		return;
	rmdir(LEAF);
	rmdir(CG);
	if (old_oom_dump[0])
		write_file(OOM_DUMP_TASKS, old_oom_dump);
	if (enabled_memory)
		write_file(CGROOT "/cgroup.subtree_control", "-memory");
	old_oom_dump[0] = 0;
	enabled_memory = 0;
}

static int setup_cg(char *why, size_t len)
{
	char buf[256];

	if (slurp(CGROOT "/cgroup.controllers", buf, sizeof(buf)) < 0) {
		snprintf(why, len, "no cgroup v2 at " CGROOT " (guest/init mounts it)");
		return 0;
	}
	if (!strstr(buf, "memory")) {
		snprintf(why, len, CGROOT "/cgroup.controllers has no memory controller: \"%.100s\"", buf);
		return 0;
	}
	slurp(CGROOT "/cgroup.subtree_control", buf, sizeof(buf));
	if (!strstr(buf, "memory")) {
		if (write_file(CGROOT "/cgroup.subtree_control", "+memory")) {
			snprintf(why, len, "+memory into " CGROOT "/cgroup.subtree_control: %s",
				 strerror(errno));
			return 0;
		}
		enabled_memory = 1;
	}
	/* Left over from an aborted run. */
	rmdir(LEAF);
	rmdir(CG);
	if (mkdir(CG, 0755) || write_file(CG "/cgroup.subtree_control", "+memory") || new_leaf()) {
		snprintf(why, len, "mkdir " CG ", +memory in its cgroup.subtree_control, mkdir " LEAF ": %s",
			 strerror(errno));
		return 0;
	}
	if (access(LEAF "/memory.max", F_OK) || access(LEAF "/memory.swap.max", F_OK)) {
		snprintf(why, len, LEAF " has no memory.max or memory.swap.max");
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	int n = 2 * ncpus(), status, ok, removed;
	long long kills0, kills, ooms;
	struct parked_mark parked;
	char why[512], max[32], swapmax[32];
	struct leak_watch w;

	tap_init(argv[0]);
	(void)argc;
	main_pid = getpid();
	if (n < 4)
		n = 4;
	if (n > 16)
		n = 16;
	res = map_shared(sizeof(*res));
	atexit(cleanup);
	ok = meminfo_kb("SwapTotal") > 0 && setup_cg(why, sizeof(why));
	if (!ok && meminfo_kb("SwapTotal") <= 0)
		snprintf(why, sizeof(why), "no swap (guest/init puts swap on zram0)");
	if (!ok) {
		tap_plan(1);
		tap_check(0, "memory cgroup: the test kernels have one, and swap: %s", why);
		return tap_exit();
	}
	/* setup; reclaim: content, evidence, leak checks, empty; OOM:
	 * killed, leak checks, empty; removed */
	tap_plan(7 + 2 * LEAK_CHECKS);
	tap_check(ok, "memory cgroup %s made, the memory controller enabled, swap on (%ld kB)",
		  LEAF, meminfo_kb("SwapTotal"));

	/* 1. Reclaim against the racing writers. */
	snprintf(max, sizeof(max), "%d", RECLAIM_MAX_MB << 20);
	if (cg_write("memory.max", max) || cg_write("memory.swap.max", "max"))
		tap_bail("write memory.max / memory.swap.max");
	cg_read("memory.swap.max", swapmax, sizeof(swapmax));
	swapmax[strcspn(swapmax, "\n")] = 0;
	memset(res, 0, sizeof(*res));
	res->n = n;
	parked_mark(&parked);
	status = leak_watch_run(&w, reclaim_child, NULL);
	parked_diag("writers racing memcg reclaim", &parked);
	if (!res->moved)
		tap_diag("reclaim child not moved into " LEAF ": /proc/self/cgroup \"%s\"", res->cgroup);
	if (status != 0 || !res->done)
		tap_diag("reclaim child: wait status 0x%x, %s", status, res->done ? "finished" : "did not finish");
	tap_check(status == 0 && res->done && res->bad == 0 && res->final_bad == 0,
		  "%d writers over %d MiB in a memcg of memory.max %d MiB (swap.max %s): %ld lost writes while racing, %ld in the last pass (%.1f s, %lld writer passes, each >= %ld; then %ld present, %ld swapped)",
		  n, WS_MB, RECLAIM_MAX_MB, swapmax, res->bad, res->final_bad, res->secs,
		  res->writer_passes, res->passes_min, res->present, res->swapped);
	sample();
	tap_check(res->done && res->max_events > 0 && res->pgsteal > 0 && res->swap_peak > 0,
		  "race offered: memcg reclaim ran against the faults: memory.events max %lld, memory.stat pgscan %lld pgsteal %lld, memory.swap.current up to %lld kB (zram0 writes +%lld)%s",
		  res->max_events, res->pgscan, res->pgsteal, res->swap_peak >> 10, res->zram,
		  res->done && res->max_events > 0 && res->pgsteal > 0 && res->swap_peak > 0 ?
		  "" : ": too little work done");
	leak_watch_check(&w, "writers racing memcg reclaim");
	empty_check("reclaim");
	removed = remove_leaf();

	/* 2. Charge failure and OOM kill on the faulting path. */
	read_file(OOM_DUMP_TASKS, old_oom_dump, sizeof(old_oom_dump));
	old_oom_dump[strcspn(old_oom_dump, "\n")] = 0;
	write_file(OOM_DUMP_TASKS, "0");
	snprintf(max, sizeof(max), "%d", OOM_MAX_MB << 20);
	if (new_leaf() || cg_write("memory.swap.max", "0") || cg_write("memory.max", max))
		tap_bail("mkdir " LEAF ", write memory.max / memory.swap.max");
	kills0 = cg_key("memory.events", "oom_kill");
	ooms = cg_key("memory.events", "oom");
	memset(res, 0, sizeof(*res));
	res->n = n;
	status = leak_watch_run(&w, oom_child, NULL);
	kills = cg_key("memory.events", "oom_kill") - kills0;
	ooms = cg_key("memory.events", "oom") - ooms;
	if (!res->moved)
		tap_diag("OOM child not moved into " LEAF ": /proc/self/cgroup \"%s\"", res->cgroup);
	tap_check(res->moved && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && kills > 0,
		  "%d writers over %d MiB in a memcg of memory.max %d MiB, swap.max 0: the child %s (wait status 0x%x), memory.events oom_kill +%lld, oom +%lld",
		  n, OOM_WS_MB, OOM_MAX_MB,
		  WIFSIGNALED(status) ? (WTERMSIG(status) == SIGKILL ? "was killed by SIGKILL" : "died by another signal") :
		  res->done ? "outlived the OOM killer" : "exited", status, kills, ooms);
	leak_watch_check(&w, "writers OOM-killed in a memcg");
	empty_check("OOM");
	removed += remove_leaf();
	write_file(OOM_DUMP_TASKS, old_oom_dump);
	old_oom_dump[0] = 0;

	ok = rmdir(CG) == 0;
	tap_check(ok && removed == 2, "memory cgroups removed: %s after each part (%d of 2), %s%s%s",
		  LEAF, removed, CG, ok ? "" : ": ", ok ? "" : strerror(errno));
	cleanup();
	return tap_exit();
}
