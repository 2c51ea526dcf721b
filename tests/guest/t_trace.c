// SPDX-License-Identifier: GPL-2.0
/*
 * The pfscale trace events against the counters (issue 16).
 *
 * With pfscale:pfscale_race_lost and pfscale:pfscale_busy_pte enabled,
 * threads leave a spin barrier together and each writes its own slot of
 * every page of a fresh 2 MiB slice of one reserved area: the first touches
 * race to populate the slice's PTE table, every page's to install it.
 * Slices are raced until both an install loss and a populate loss were
 * traced (at most RACE_SECS s; "race not reproduced" is its own failure).
 * Then, from the trace buffer (which must not have overrun):
 * - the events of each counter equal that counter's increase;
 * - every event of this program lies in the area;
 * - expected and found fit the site: an install loss expected an empty
 *   PTE and found a present one; a populate loss expected an empty PMD
 *   and found a PTE table (present, not huge).
 * Then, with the events disabled, slices are raced until a counter moved,
 * and the buffer must have stayed empty. Last, Debian's trace-cmd (in the
 * initramfs) records t_same_pages' races: its report has that program's
 * losses, and no more events than the counters moved.
 */
#include <glob.h>
#include "common.h"
#include "pfscale_trace.h"

#define TRACING PFSCALE_TRACEFS
#define COUNTERS_ENABLE "/sys/kernel/debug/pfscale/enable"
#define MB2 (2UL << 20)
#define SLICES 32
#define RACE_SECS 20
#define CHECKS 8		/* the plan: main()'s checks and trace_cmd_check()'s */
#define ENTRY_PRESENT 0x1ULL
#define ENTRY_HUGE 0x80ULL	/* x86 _PAGE_PSE: a huge page, not a table */

static const char *const install_losses[] = { "anon_cmpxchg_lost", "zero_cmpxchg_lost",
	"anon_pte_recheck_lost", "zero_pte_recheck_lost", "locked_cmpxchg_lost" };
static const char *const populate_losses[] = { "pte_table_populate_lost",
					       "pte_table_cmpxchg_lost" };

struct counters {
	int n;
	char name[64][64];
	long long value[64];
};

static void read_counters(struct counters *c)
{
	FILE *f = fopen(COUNTERS, "r");

	if (!f)
		tap_bail("open " COUNTERS);
	c->n = 0;
	while (c->n < 64 && fscanf(f, "%63s %lld", c->name[c->n], &c->value[c->n]) == 2)
		c->n++;
	fclose(f);
}

static int in_list(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

#define IN(name, list) in_list(name, list, sizeof(list) / sizeof(list[0]))

/*
 * Counters with events of their own, by the kind the kernel gives them:
 * races lost, and the parking sites' counters (a retry's events carry the
 * name of the site whose park it met). Not faults taken, not a retry
 * counter itself, not a detail of a loss (its events carry the loss's
 * name). A counter without a kind is a failure of the test.
 */
static int is_loss_counter(const char *name)
{
	char kind[KIND_LEN];

	if (pfscale_counter_desc(name, kind, NULL)) {
		tap_diag("counter %s has no kind in " DESCRIPTIONS, name);
		tap_bail("counter kinds");
	}
	return !strcmp(kind, "lost") || !strcmp(kind, "parked");
}

/*
 * The pfscale events @on ("1") or off ("0"), an empty buffer, tracing on;
 * then the counters, read while tracing is on, so that no loss counted
 * after this reading goes untraced.
 */
static void trace_start(const char *on, struct counters *before)
{
	tracefs_write("tracing_on", "0");
	tracefs_write("events/pfscale/enable", on);
	tracefs_empty();
	tracefs_write("tracing_on", "1");
	read_counters(before);
}

/* Events lost to the ring buffer (overrun or dropped), over all CPUs. */
static long trace_overrun(void)
{
	char line[128];
	glob_t g;
	long n = 0;
	size_t i;

	if (glob(TRACING "/per_cpu/cpu*/stats", 0, NULL, &g))
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "overrun:", 8))
				n += atol(line + 8);
			else if (!strncmp(line, "dropped events:", 15))
				n += atol(line + 15);
		if (f)
			fclose(f);
	}
	globfree(&g);
	return n;
}

struct check {
	long events, ours, outside, install, populate, bad_fit, bad_level;
	char first_bad[512], first_bad_level[512];
	long by_counter[64];
};

/* Tally the trace buffer's pfscale events against @c's counter names. */
static void read_trace(const struct counters *c, char *area, struct check *k)
{
	char line[512];
	struct pfscale_trace_event e;
	FILE *f = fopen(TRACING "/trace", "r");
	char level[KIND_LEN];
	int i;

	if (!f)
		tap_bail("open " TRACING "/trace");
	memset(k, 0, sizeof(*k));
	while (fgets(line, sizeof(line), f)) {
		int fits = 1, parsed;

		line[strcspn(line, "\n")] = 0;
		parsed = pfscale_trace_parse(line, &e);
		if (parsed < 0) {
			tap_diag("cannot parse: %s", line);
			tap_bail("trace line");
		}
		if (!parsed)
			continue;
		k->events++;
		/* The level is passed at each call site and kept in the table too. */
		if ((pfscale_counter_desc(e.counter, NULL, level) || strcmp(level, e.level)) &&
		    !k->bad_level++)
			memcpy(k->first_bad_level, line, sizeof(k->first_bad_level));
		for (i = 0; i < c->n; i++)
			if (!strcmp(c->name[i], e.counter))
				k->by_counter[i]++;
		if (strcmp(e.task, "t_trace"))
			continue;
		k->ours++;
		if (e.address < (unsigned long)area ||
		    e.address >= (unsigned long)area + SLICES * MB2)
			k->outside++;
		if (IN(e.counter, install_losses)) {
			k->install++;
			fits = !strcmp(e.level, "pte") && e.expected == 0 &&
			       (e.found & ENTRY_PRESENT);
		} else if (IN(e.counter, populate_losses)) {
			k->populate++;
			fits = !strcmp(e.level, "pmd") && e.expected == 0 &&
			       (e.found & ENTRY_PRESENT) && !(e.found & ENTRY_HUGE);
		}
		if (!fits && !k->bad_fit++)
			memcpy(k->first_bad, line, sizeof(k->first_bad));
	}
	fclose(f);
}

struct arg {
	char *slice;
	int id, pages;
	struct spin_barrier *bar;
};

static void *writer(void *p)
{
	struct arg *a = p;
	int i;

	spin_barrier_wait(a->bar);
	for (i = 0; i < a->pages; i++)
		((volatile uint64_t *)(a->slice + (long)i * PAGE))[a->id] = slot_value(0, a->id, i);
	return NULL;
}

/* Race @n writers over every slice of @area once, each slice fresh. */
static void race_area(char *area, int n)
{
	struct arg args[256];
	struct spin_barrier bar;
	struct team t;
	int s, k;

	for (s = 0; s < SLICES; s++) {
		char *slice = area + s * MB2;

		if (mmap(slice, MB2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			tap_bail("mmap slice");
		madvise(slice, MB2, MADV_NOHUGEPAGE);
		spin_barrier_init(&bar, n);
		for (k = 0; k < n; k++)
			args[k] = (struct arg){ slice, k, 64, &bar };
		team_start(&t, n, writer, args, sizeof(args[0]));
		team_join(&t);
		/* Back to PROT_NONE: the slice's PTE table is freed with it. */
		if (mmap(slice, MB2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
			 MAP_NORESERVE, -1, 0) == MAP_FAILED)
			tap_bail("mmap slice back");
	}
}

static long loss_delta(const struct counters *b, const struct counters *a)
{
	long moved = 0;
	int i;

	for (i = 0; i < b->n; i++)
		if (is_loss_counter(b->name[i]))
			moved += a->value[i] - b->value[i];
	return moved;
}

/* trace-cmd record -e pfscale around a race program, then its report. */
static void trace_cmd_check(void)
{
	struct counters before, after;
	struct pfscale_trace_event e;
	long events = 0, racer = 0, moved;
	char line[512];
	FILE *report;
	int rc;

	if (access("/usr/bin/trace-cmd", X_OK)) {
		tap_check(0, "trace-cmd is in the guest (/usr/bin/trace-cmd)");
		return;
	}
	read_counters(&before);
	rc = system("trace-cmd record -q -e pfscale -o /tmp/t_trace.dat "
		    "/pfscale/bin/t_same_pages >/dev/null 2>&1");
	read_counters(&after);
	moved = loss_delta(&before, &after);
	report = popen("trace-cmd report -i /tmp/t_trace.dat 2>&1", "r");
	while (report && fgets(line, sizeof(line), report))
		if (pfscale_trace_parse(line, &e) == 1) {
			events++;
			racer += !strcmp(e.task, "t_same_pages");
		}
	if (report)
		pclose(report);
	unlink("/tmp/t_trace.dat");
	tap_check(rc == 0 && racer > 0 && events <= moved,
		  "trace-cmd record -e pfscale around t_same_pages: exit %d, %ld events (%ld of t_same_pages), counters moved by %ld",
		  rc, events, racer, moved);
}

int main(int argc, char **argv)
{
	struct counters before, after;
	struct check k;
	char mismatch[512] = "";
	char *area;
	int n = 2 * ncpus(), rounds = 0, i;
	double t0;
	long moved;

	(void)argc;
	tap_init(argv[0]);
	tap_plan(CHECKS);
	if (n > 16)
		n = 16;
	if (access(TRACING "/events/pfscale", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/pfscale", F_OK)) {
		for (i = 0; i < CHECKS; i++)
			tap_skip("no pfscale trace events (kernel without the pfscale patches)");
		return tap_exit();
	}
	if (access(TRACING "/events/pfscale", F_OK))
		tap_bail("pfscale events are in debugfs' tracing but tracefs is not on " TRACING);
	area = map_aligned(SLICES * MB2, MB2);
	mprotect(area, SLICES * MB2, PROT_NONE);

	/* Counting on (the events fire either way); room for a round's events. */
	if (write_file(COUNTERS_ENABLE, "1"))
		tap_bail("write " COUNTERS_ENABLE);
	tracefs_write("tracing_on", "0");
	tracefs_write("buffer_size_kb", "4096");
	trace_start("1", &before);
	t0 = now();
	do {
		race_area(area, n);
		rounds++;
		read_trace(&before, area, &k);
	} while ((!k.install || !k.populate) && now() - t0 < RACE_SECS);
	read_counters(&after);
	tracefs_write("tracing_on", "0");
	read_trace(&before, area, &k);

	tap_check(k.install && k.populate,
		  "%s path: install and populate losses traced (%ld and %ld, %d rounds of %d slices, %.1f s)%s",
		  pfscale_path(), k.install, k.populate, rounds, SLICES, now() - t0,
		  k.install && k.populate ? "" : ": race not reproduced");
	tap_check(trace_overrun() == 0, "trace buffer did not overrun (%ld events lost)",
		  trace_overrun());
	for (i = 0; i < before.n; i++) {
		long long delta = after.value[i] - before.value[i];

		if (is_loss_counter(before.name[i]) && delta != k.by_counter[i])
			snprintf(mismatch + strlen(mismatch), sizeof(mismatch) - strlen(mismatch),
				 " %s: +%lld counted, %ld traced;", before.name[i], delta,
				 k.by_counter[i]);
	}
	tap_check(!mismatch[0] && k.events > 0,
		  "every counter's increase equals its events (%ld events)%s",
		  k.events, mismatch);
	tap_check(k.ours > 0 && k.outside == 0,
		  "every event of this program lies in its area (%ld of %ld outside)",
		  k.outside, k.ours);
	tap_check(k.bad_fit == 0, "expected/found fit the site in every event (%ld do not)%s%s",
		  k.bad_fit, k.bad_fit ? ", first: " : "", k.first_bad);
	tap_check(k.bad_level == 0,
		  "every event's level is its counter's level in the kernel's table (%ld are not)%s%s",
		  k.bad_level, k.bad_level ? ", first: " : "", k.first_bad_level);

	/* Events off: counters still move, nothing is recorded. */
	trace_start("0", &before);
	t0 = now();
	do {
		race_area(area, n);
		read_counters(&after);
		moved = loss_delta(&before, &after);
	} while (!moved && now() - t0 < RACE_SECS);
	tracefs_write("tracing_on", "0");
	read_trace(&before, area, &k);
	tap_check(moved > 0 && k.events == 0,
		  "events disabled: counters moved by %ld, %ld events recorded%s",
		  moved, k.events, moved ? "" : ": race not reproduced");
	munmap(area, SLICES * MB2);
	trace_cmd_check();
	return tap_exit();
}
