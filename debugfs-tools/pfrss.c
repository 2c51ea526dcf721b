// SPDX-License-Identifier: GPL-2.0
/*
 * pfrss: a process's per-thread RSS deltas and its RSS three ways, from
 * /sys/kernel/debug/pfscale/rss.
 *
 *   pfrss PID [--json]
 *
 * (a) rss_mm: the mm counters, what /proc reports; (b) rss_split: plus every
 * live thread's unsynced delta; (c) rss_scan: present pages in the page
 * tables. The drift columns are (b)-(a) and (c)-(b).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "json_writer.h"

#define DEBUGFS "/sys/kernel/debug"
#define RSS DEBUGFS "/pfscale/rss"
#define DEBUGFS_MAGIC 0x64626720

static void usage(void)
{
	fprintf(stderr, "usage: pfrss PID [--json]\n");
	exit(2);
}

/* Point debugfs's rss file at @pid and open it for reading; NULL after an error line. */
static FILE *open_rss(const char *pid)
{
	struct statfs fs;
	char buf[32];
	int fd, n;
	FILE *f;

	if (statfs(DEBUGFS, &fs) || fs.f_type != DEBUGFS_MAGIC) {
		fprintf(stderr, "pfrss: debugfs is not mounted on %s\n", DEBUGFS);
		return NULL;
	}
	fd = open(RSS, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "pfrss: %s: %s (kernel without the pfscale patches?)\n",
			RSS, strerror(errno));
		return NULL;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", pid);
	if (write(fd, buf, n) != n) {
		fprintf(stderr, "pfrss: pid %s: %s\n", pid,
			errno == ESRCH ? "no such process" :
			errno == EINVAL ? "a kernel thread (no mm)" : strerror(errno));
		close(fd);
		return NULL;
	}
	close(fd);
	f = fopen(RSS, "r");
	if (!f)
		fprintf(stderr, "pfrss: %s: %s\n", RSS, strerror(errno));
	return f;
}

/* One "thread TID events E file F anon A swap S shmem H" line: a row, or an object of @w. */
static void put_thread(const char *line, struct jw *w, int *first)
{
	int tid, ev, file, anon, swap, shmem;

	if (sscanf(line, "thread %d events %d file %d anon %d swap %d shmem %d",
		   &tid, &ev, &file, &anon, &swap, &shmem) != 6)
		return;
	if (w) {
		jw_start_object(w);
		jw_int_field(w, "tid", tid);
		jw_int_field(w, "events", ev);
		jw_int_field(w, "file", file);
		jw_int_field(w, "anon", anon);
		jw_int_field(w, "swap", swap);
		jw_int_field(w, "shmem", shmem);
		jw_end_object(w);
		return;
	}
	if (*first)
		printf("%8s %7s %7s %7s %7s %7s\n", "tid", "events", "file", "anon", "swap",
		       "shmem");
	*first = 0;
	printf("%8d %7d %7d %7d %7d %7d\n", tid, ev, file, anon, swap, shmem);
}

/* The three RSS figures and their drifts: the end of @w's object, or three lines. */
static void put_totals(long rss_mm, long rss_split, long rss_scan, struct jw *w)
{
	if (w) {
		jw_end_array(w);
		jw_int_field(w, "rss_mm", rss_mm);
		jw_int_field(w, "rss_split", rss_split);
		jw_int_field(w, "rss_scan", rss_scan);
		jw_int_field(w, "split_minus_mm", rss_split - rss_mm);
		jw_int_field(w, "scan_minus_split", rss_scan - rss_split);
		jw_end_object(w);
		return;
	}
	printf("(a) rss_mm    %8ld  mm counters, as /proc reports\n", rss_mm);
	printf("(b) rss_split %8ld  mm + live threads' deltas   drift (b)-(a) %ld\n",
	       rss_split, rss_split - rss_mm);
	printf("(c) rss_scan  %8ld  page-table walk             drift (c)-(b) %ld\n",
	       rss_scan, rss_scan - rss_split);
}

int main(int argc, char **argv)
{
	char line[512], *end, *kv;
	long rss_mm = 0, rss_split = 0, rss_scan = 0;
	int json = 0, first = 1, k;
	const char *pid = NULL;
	struct jw jw, *w = NULL;
	FILE *f;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--json"))
			json = 1;
		else if (!pid)
			pid = argv[k];
		else
			usage();
	}
	if (!pid)
		usage();
	if (strtol(pid, &end, 10) <= 0 || *end) {
		fprintf(stderr, "pfrss: '%s' is not a PID\n", pid);
		return 2;
	}
	f = open_rss(pid);
	if (!f)
		return 1;
	if (json) {
		w = &jw;
		jw_init(w, stdout, JW_SPACED);
		jw_start_object(w);
		jw_name(w, "threads");
		jw_start_array(w);
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "thread ", 7)) {
			put_thread(line, w, &first);
		} else if (sscanf(line, "rss_mm %ld", &rss_mm) == 1 ||
			   sscanf(line, "rss_split %ld", &rss_split) == 1 ||
			   sscanf(line, "rss_scan %ld", &rss_scan) == 1) {
			continue;
		} else if (!json && (!strncmp(line, "mm ", 3) || !strncmp(line, "split ", 6) ||
				     !strncmp(line, "pid ", 4) || !strncmp(line, "comm ", 5))) {
			kv = strchr(line, ' ');
			*kv = 0;
			printf("%-6s%s\n", line, kv + 1);
		}
	}
	fclose(f);
	put_totals(rss_mm, rss_split, rss_scan, w);
	return 0;
}
