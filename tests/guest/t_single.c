// SPDX-License-Identifier: GPL-2.0
/*
 * One thread faults fresh anonymous pages, read and write: nobody can race
 * it, so no lost-race counter may move. Guards against counters that count
 * something other than a real lost race.
 */
#include "common.h"

#define PAGES 4096

static const char *lost[] = {
	"anon_pte_recheck_lost", "zero_pte_recheck_lost", "pte_fault_same_lost",
	"wp_copy_lost", "pte_table_populate_lost", "pmd_table_populate_lost",
	"pud_table_populate_lost", "anon_cmpxchg_lost", "zero_cmpxchg_lost",
	"locked_cmpxchg_lost", "pte_table_cmpxchg_lost", "pmd_table_cmpxchg_lost",
	"busy_pte_fault",
};

int main(int argc, char **argv)
{
	long long before[sizeof(lost) / sizeof(lost[0])], d, total = 0;
	size_t len = PAGES * PAGE;
	unsigned int i;
	char *p;
	long k, sum = 0;

	tap_init(argv[0]);
	(void)argc;
	if (pfscale_counter("anon_fault_locked") < 0) {
		tap_plan(1);
		tap_skip("single-threaded faults lose no races (no pfscale counters in this kernel)");
		return tap_exit();
	}
	tap_plan(3);
	for (i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
		before[i] = pfscale_counter(lost[i]);
	long long faults = pfscale_anon_faults();
	long long path_before = pfscale_counter(pfscale_fault_counter());
	p = map_anon(len);
	madvise(p, len, MADV_NOHUGEPAGE);
	for (k = 0; k < PAGES / 2; k++)
		sum += p[k * PAGE];		/* zero-page read faults */
	for (k = 0; k < PAGES; k++)
		p[k * PAGE] = 1;		/* write faults (and COW of zero page) */
	faults = pfscale_anon_faults() - faults;
	for (i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		d = pfscale_counter(lost[i]) - before[i];
		if (d)
			tap_diag("%s moved by %lld", lost[i], d);
		total += d < 0 ? -d : d;
	}
	tap_check(total == 0 && sum == 0, "single thread, %d pages: no lost-race counter moved", PAGES);
	tap_check(faults >= PAGES, "fault totals counted the faults (%lld >= %d)", faults, PAGES);
	tap_check(pfscale_counter(pfscale_fault_counter()) - path_before >= PAGES,
		  "the faults took the %s path", pfscale_path());
	return tap_exit();
}
