// SPDX-License-Identifier: GPL-2.0
/*
 * pfstat: the pfscale lost-race counters as a table, like vmstat.
 *
 *   pfstat [-i SECS] [-n COUNT] [--kind KIND] [--json]
 *   pfstat --trace [-n EVENTS] [--json]
 *
 * The names come from the kernel's counters file ("name value" lines) and
 * each counter's kind from its descriptions file (faults, lost, detail,
 * retry, parked: include/linux/pfscale_counters.h), so this tool never
 * keeps its own copy of the counter list. --kind shows the counters of
 * that kind only. With -i, each further sample shows the delta and the
 * rate per second since the last.
 *
 * --trace switches the pfscale trace events on (tracefs) and prints one
 * line per lost race, or per fault that met a parked PTE, as it happens,
 * until EVENTS were printed or SIGINT/SIGTERM; then switches them off.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include "json_writer.h"
#include "pfscale_trace.h"

#define DEBUGFS "/sys/kernel/debug"
#define COUNTERS DEBUGFS "/pfscale/counters"
#define DESCRIPTIONS DEBUGFS "/pfscale/descriptions"
#define DEBUGFS_MAGIC 0x64626720
#define MAX_COUNTERS 64

struct sample {
	int n;
	char name[MAX_COUNTERS][64];
	unsigned long long value[MAX_COUNTERS];
	char kind[MAX_COUNTERS][16];
	double t;
};

static void usage(void)
{
	fprintf(stderr, "usage: pfstat [-i SECS] [-n COUNT] [--kind KIND] [--json]\n"
			"       pfstat --trace [-n EVENTS] [--json]\n");
	exit(2);
}

/* Each counter's kind, from DESCRIPTIONS (same order); -1 after an error line. */
static int read_kinds(struct sample *s)
{
	char line[512], name[64];
	FILE *f = fopen(DESCRIPTIONS, "r");
	int i;

	if (!f) {
		fprintf(stderr, "pfstat: %s: %s\n", DESCRIPTIONS, strerror(errno));
		return -1;
	}
	for (i = 0; i < s->n; i++)
		if (!fgets(line, sizeof(line), f) ||
		    sscanf(line, "%63s %15s", name, s->kind[i]) != 2 || strcmp(name, s->name[i])) {
			fprintf(stderr, "pfstat: %s does not describe counter %s\n", DESCRIPTIONS,
				s->name[i]);
			fclose(f);
			return -1;
		}
	fclose(f);
	return 0;
}

static int read_sample(struct sample *s)
{
	struct statfs fs;
	struct timespec ts;
	FILE *f;

	if (statfs(DEBUGFS, &fs) || fs.f_type != DEBUGFS_MAGIC) {
		fprintf(stderr, "pfstat: debugfs is not mounted on %s (mount -t debugfs none %s)\n",
			DEBUGFS, DEBUGFS);
		return -1;
	}
	f = fopen(COUNTERS, "r");
	if (!f) {
		fprintf(stderr, "pfstat: %s: %s (kernel without the pfscale patches?)\n",
			COUNTERS, strerror(errno));
		return -1;
	}
	s->n = 0;
	while (s->n < MAX_COUNTERS &&
	       fscanf(f, "%63s %llu", s->name[s->n], &s->value[s->n]) == 2)
		s->n++;
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->t = ts.tv_sec + ts.tv_nsec / 1e9;
	if (!s->n) {
		fprintf(stderr, "pfstat: %s is empty\n", COUNTERS);
		return -1;
	}
	return read_kinds(s);
}

/* Is counter @i shown: of @kind, or every one if @kind is NULL? */
static int shown(const struct sample *s, int i, const char *kind)
{
	return !kind || !strcmp(s->kind[i], kind);
}

/* Does any counter of @s have @kind? Else say which kinds there are. */
static int kind_known(const struct sample *s, const char *kind)
{
	int i, j;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->kind[i], kind))
			return 1;
	fprintf(stderr, "pfstat: no counter of kind '%s'; kinds:", kind);
	for (i = 0; i < s->n; i++) {
		for (j = 0; j < i && strcmp(s->kind[j], s->kind[i]); j++)
			;
		if (j == i)
			fprintf(stderr, " %s", s->kind[i]);
	}
	fprintf(stderr, "\n");
	return 0;
}

static void print_sample(const struct sample *s, const struct sample *prev, int json,
			 const char *kind)
{
	double dt = prev ? s->t - prev->t : 0;
	struct jw w;
	int i;

	if (json) {
		jw_init(&w, stdout, JW_SPACED);
		jw_start_object(&w);
		jw_fixed_field(&w, "interval", dt, 3);
		jw_name(&w, "counters");
		jw_start_object(&w);
		for (i = 0; i < s->n; i++) {
			if (!shown(s, i, kind))
				continue;
			jw_name(&w, s->name[i]);
			jw_start_object(&w);
			jw_string_field(&w, "kind", s->kind[i]);
			jw_uint_field(&w, "value", s->value[i]);
			if (prev) {
				jw_uint_field(&w, "delta", s->value[i] - prev->value[i]);
				jw_fixed_field(&w, "rate", dt > 0 ? (s->value[i] - prev->value[i]) / dt : 0.0,
					       1);
			}
			jw_end_object(&w);
		}
		jw_end_object(&w);
		jw_end_object(&w);
		return;
	}
	printf("%-26s %-6s %14s", "counter", "kind", "value");
	if (prev)
		printf(" %12s %12s", "delta", "per-sec");
	printf("\n");
	for (i = 0; i < s->n; i++) {
		if (!shown(s, i, kind))
			continue;
		printf("%-26s %-6s %14llu", s->name[i], s->kind[i], s->value[i]);
		if (prev)
			printf(" %12llu %12.1f", s->value[i] - prev->value[i],
			       dt > 0 ? (s->value[i] - prev->value[i]) / dt : 0.0);
		printf("\n");
	}
	fflush(stdout);
}

static volatile sig_atomic_t trace_stop;

static void trace_on_signal(int sig)
{
	(void)sig;
	trace_stop = 1;
}

/* Write @val to tracefs file @path; 0 or -1 after an error line. */
static int trace_set(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(val, f) < 0 || fclose(f)) {
		fprintf(stderr, "pfstat: cannot write %s to %s: %s\n", val, path, strerror(errno));
		return -1;
	}
	return 0;
}

static void print_event(const struct pfscale_trace_event *e, int json)
{
	struct jw w;

	if (json) {
		jw_init(&w, stdout, JW_SPACED);
		jw_start_object(&w);
		jw_fixed_field(&w, "time", e->time, 6);
		jw_int_field(&w, "cpu", e->cpu);
		jw_string_field(&w, "task", e->task);
		jw_int_field(&w, "pid", e->pid);
		jw_string_field(&w, "event", e->event);
		jw_string_field(&w, "counter", e->counter);
		jw_uint_field(&w, "mm_id", e->mm_id);
		jw_hex_field(&w, "address", e->address);
		jw_string_field(&w, "level", e->level);
		jw_hex_field(&w, "expected", e->expected);
		jw_hex_field(&w, "found", e->found);
		jw_end_object(&w);
		return;
	}
	printf("%14.6f %3d %-16s %7d %-24s %16lx %-5s %18llx %18llx\n", e->time, e->cpu,
	       e->task, e->pid, e->counter, e->address, e->level, e->expected, e->found);
	fflush(stdout);
}

/* pfstat --trace: follow trace_pipe; @count events (0: until a signal). */
static int trace_losses(long count, int json)
{
	struct sigaction sa = { .sa_handler = trace_on_signal };
	struct pfscale_trace_event e;
	char line[512];
	long seen = 0;
	int ret = 0, r;
	FILE *pipe;

	if (access(PFSCALE_TRACEFS "/trace_pipe", R_OK)) {
		fprintf(stderr, "pfstat: no tracefs on %s (mount -t tracefs tracefs %s)\n",
			PFSCALE_TRACEFS, PFSCALE_TRACEFS);
		return 1;
	}
	if (access(PFSCALE_TRACE_EVENTS "/enable", W_OK)) {
		fprintf(stderr, "pfstat: %s: no pfscale trace events (kernel without the pfscale patches?)\n",
			PFSCALE_TRACE_EVENTS);
		return 1;
	}
	/* No SA_RESTART: a signal ends the blocking read of trace_pipe. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/*
	 * Losses from now on: empty the ring buffer first (opening "trace"
	 * with O_TRUNC does), or an earlier session's unread events would
	 * come first.
	 */
	pipe = fopen(PFSCALE_TRACEFS "/trace", "w");
	if (!pipe) {
		fprintf(stderr, "pfstat: cannot empty %s/trace: %s\n", PFSCALE_TRACEFS,
			strerror(errno));
		return 1;
	}
	fclose(pipe);
	if (trace_set(PFSCALE_TRACE_EVENTS "/enable", "1") ||
	    trace_set(PFSCALE_TRACEFS "/tracing_on", "1"))
		return 1;
	pipe = fopen(PFSCALE_TRACEFS "/trace_pipe", "r");
	if (!pipe) {
		fprintf(stderr, "pfstat: %s/trace_pipe: %s\n", PFSCALE_TRACEFS, strerror(errno));
		ret = 1;
	} else if (!json) {
		printf("%14s %3s %-16s %7s %-24s %16s %-5s %18s %18s\n", "time", "cpu", "task",
		       "pid", "counter", "address", "level", "expected", "found");
	}
	while (pipe && !trace_stop && (!count || seen < count) && fgets(line, sizeof(line), pipe)) {
		r = pfscale_trace_parse(line, &e);
		if (r < 0) {
			/* The kernel's format and this parser disagree: a bug. */
			fprintf(stderr, "pfstat: internal error: cannot parse trace line: %s", line);
			ret = 1;
			break;
		}
		if (r) {
			print_event(&e, json);
			seen++;
		}
	}
	if (pipe)
		fclose(pipe);
	if (trace_set(PFSCALE_TRACE_EVENTS "/enable", "0"))
		ret = 1;
	return ret;
}

int main(int argc, char **argv)
{
	struct sample a, b, *cur = &a, *prev = NULL;
	double interval = 0;
	long count = 1, i;
	int json = 0, trace = 0, counted = 0, k;
	const char *kind = NULL;
	char *end;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--json")) {
			json = 1;
		} else if (!strcmp(argv[k], "--trace")) {
			trace = 1;
		} else if (!strcmp(argv[k], "--kind") && k + 1 < argc) {
			kind = argv[++k];
		} else if (!strcmp(argv[k], "-i") && k + 1 < argc) {
			interval = strtod(argv[++k], &end);
			if (*end || interval <= 0)
				usage();
			if (count == 1)
				count = 2;
		} else if (!strcmp(argv[k], "-n") && k + 1 < argc) {
			count = strtol(argv[++k], &end, 10);
			if (*end || count < 1)
				usage();
			counted = 1;
		} else {
			usage();
		}
	}
	if (trace) {
		if (interval > 0 || kind)
			usage();
		return trace_losses(counted ? count : 0, json);
	}
	for (i = 0; i < count; i++) {
		if (i)
			usleep((useconds_t)(interval * 1e6));
		if (read_sample(cur))
			return 1;
		if (kind && !kind_known(cur, kind))
			return 2;
		print_sample(cur, prev, json, kind);
		prev = cur;
		cur = cur == &a ? &b : &a;
	}
	return 0;
}
