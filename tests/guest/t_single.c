// SPDX-License-Identifier: GPL-2.0
/*
 * One thread faults fresh anonymous pages, read and write: nobody can race
 * it, so no lost-race counter may move. Guards against counters that count
 * something other than a real lost race.
 */
#include "common.h"

#define PAGES 4096
#define MAX_COUNTERS 64

/*
 * Every counter the kernel lists (COUNTERS: "name value" lines) that is not
 * of kind "faults" (faults taken): races lost, their details, faults that
 * met a park and whose park it was. The kinds come from the kernel's table
 * (DESCRIPTIONS), not from a list here, so that a counter added or renamed
 * is checked too; the number of them is reported. -1 if a counter has no
 * description.
 */
static int loss_counters(char names[][64], long long *values)
{
	char n[64], kind[KIND_LEN];
	long long v;
	int count = 0;
	FILE *f = fopen(COUNTERS, "r");

	if (!f)
		return -1;
	while (count < MAX_COUNTERS && fscanf(f, "%63s %lld", n, &v) == 2) {
		if (pfscale_counter_desc(n, kind, NULL)) {
			tap_diag("counter %s has no kind in " DESCRIPTIONS, n);
			count = -1;
			break;
		}
		if (strcmp(kind, "faults")) {
			strcpy(names[count], n);
			values[count++] = v;
		}
	}
	fclose(f);
	return count;
}

int main(int argc, char **argv)
{
	char names[MAX_COUNTERS][64], after_names[MAX_COUNTERS][64];
	long long before[MAX_COUNTERS], after[MAX_COUNTERS], d, total = 0;
	int n, n_after;
	size_t len = PAGES * PAGE;
	int i;
	char *p;
	long k, sum = 0;

	tap_init(argv[0]);
	(void)argc;
	if (pfscale_counter("anon_fault_locked") < 0) {
		tap_plan(1);
		tap_skip("single-threaded faults lose no races (no pfscale counters in this kernel)");
		return tap_exit();
	}
	tap_plan(4);
	n = loss_counters(names, before);
	long long faults = pfscale_anon_faults();
	long long path_before = pfscale_counter(pfscale_fault_counter());
	p = map_anon(len);
	madvise(p, len, MADV_NOHUGEPAGE);
	for (k = 0; k < PAGES / 2; k++)
		sum += p[k * PAGE];		/* zero-page read faults */
	for (k = 0; k < PAGES; k++)
		p[k * PAGE] = 1;		/* write faults (and COW of zero page) */
	faults = pfscale_anon_faults() - faults;
	n_after = loss_counters(after_names, after);
	tap_check(n > 0 && n == n_after,
		  "the kernel lists its lost-race counters (%d: every kind but faults)",
		  n);
	for (i = 0; i < n && i < n_after; i++) {
		d = strcmp(names[i], after_names[i]) ? 1 : after[i] - before[i];
		if (d)
			tap_diag("%s moved by %lld", names[i], d);
		total += d < 0 ? -d : d;
	}
	tap_check(n > 0 && total == 0 && sum == 0,
		  "single thread, %d pages: none of the %d lost-race counters moved", PAGES, n);
	tap_check(faults >= PAGES, "fault totals counted the faults (%lld >= %d)", faults, PAGES);
	tap_check(pfscale_counter(pfscale_fault_counter()) - path_before >= PAGES,
		  "the faults took the %s path", pfscale_path());
	return tap_exit();
}
