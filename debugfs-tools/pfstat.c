// SPDX-License-Identifier: GPL-2.0
/*
 * pfstat: the pfscale lost-race counters as a table, like vmstat.
 *
 *   pfstat [-i SECS] [-n COUNT] [--json]
 *
 * The names come from the kernel's counters file ("name value" lines), so
 * this tool never keeps its own copy of the counter list. With -i, each
 * further sample shows the delta and the rate per second since the last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define DEBUGFS "/sys/kernel/debug"
#define COUNTERS DEBUGFS "/pfscale/counters"
#define DEBUGFS_MAGIC 0x64626720
#define MAX_COUNTERS 64

struct sample {
	int n;
	char name[MAX_COUNTERS][64];
	unsigned long long value[MAX_COUNTERS];
	double t;
};

static void usage(void)
{
	fprintf(stderr, "usage: pfstat [-i SECS] [-n COUNT] [--json]\n");
	exit(2);
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
	return 0;
}

static void print_sample(const struct sample *s, const struct sample *prev, int json)
{
	double dt = prev ? s->t - prev->t : 0;
	int i;

	if (json) {
		printf("{\"interval\": %.3f, \"counters\": {", dt);
		for (i = 0; i < s->n; i++) {
			printf("%s\"%s\": {\"value\": %llu", i ? ", " : "", s->name[i], s->value[i]);
			if (prev)
				printf(", \"delta\": %llu, \"rate\": %.1f",
				       s->value[i] - prev->value[i],
				       dt > 0 ? (s->value[i] - prev->value[i]) / dt : 0.0);
			printf("}");
		}
		printf("}}\n");
		return;
	}
	printf("%-26s %14s", "counter", "value");
	if (prev)
		printf(" %12s %12s", "delta", "per-sec");
	printf("\n");
	for (i = 0; i < s->n; i++) {
		printf("%-26s %14llu", s->name[i], s->value[i]);
		if (prev)
			printf(" %12llu %12.1f", s->value[i] - prev->value[i],
			       dt > 0 ? (s->value[i] - prev->value[i]) / dt : 0.0);
		printf("\n");
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sample a, b, *cur = &a, *prev = NULL;
	double interval = 0;
	long count = 1, i;
	int json = 0, k;
	char *end;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--json")) {
			json = 1;
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
		} else {
			usage();
		}
	}
	for (i = 0; i < count; i++) {
		if (i)
			usleep((useconds_t)(interval * 1e6));
		if (read_sample(cur))
			return 1;
		print_sample(cur, prev, json);
		prev = cur;
		cur = cur == &a ? &b : &a;
	}
	return 0;
}
