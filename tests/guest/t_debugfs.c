// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to every pfscale debugfs file gets -EINVAL and changes nothing;
 * good input does what it says.
 */
#include "common.h"

#define DIR "/sys/kernel/debug/pfscale/"

static int read_int(const char *path)
{
	int v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	static const char *const bad[] = { "2", "-1", "x", "1 1", "0x1", "11", "1a" };
	unsigned int i;
	int ok = 1, r;
	long long before;

	tap_init(argv[0]);
	(void)argc;
	if (access(DIR "counters", R_OK)) {
		tap_skip("debugfs input validation (no pfscale counters in this kernel)");
		return 0;
	}
	/* Make a counter non-zero so that a wrong reset would show. */
	char *p = map_anon(64 * PAGE);

	for (i = 0; i < 64; i++)
		p[i * PAGE] = 1;
	before = pfscale_counter("anon_fault_locked");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = write_file(DIR "reset", bad[i]);
		if (r != -EINVAL) {
			tap_diag("reset <- '%s' returned %d", bad[i], r);
			ok = 0;
		}
		r = write_file(DIR "enable", bad[i]);
		if (r != -EINVAL) {
			tap_diag("enable <- '%s' returned %d", bad[i], r);
			ok = 0;
		}
	}
	r = write_file(DIR "reset", "0");
	if (r != -EINVAL) {
		tap_diag("reset <- '0' returned %d", r);
		ok = 0;
	}
	tap_check(ok, "bad writes to reset and enable return -EINVAL");
	tap_check(read_int(DIR "enable") == 1 && pfscale_counter("anon_fault_locked") >= before &&
		  before >= 64, "bad writes changed nothing (enable 1, counters kept)");
	tap_check(write_file(DIR "counters", "1") < 0, "counters is read-only");

	tap_check(write_file(DIR "enable", "0\n") == 0 && read_int(DIR "enable") == 0,
		  "enable <- 0 turns counting off");
	before = pfscale_counter("anon_fault_locked");
	munmap(p, 64 * PAGE);
	p = map_anon(64 * PAGE);
	for (i = 0; i < 64; i++)
		p[i * PAGE] = 1;
	tap_check(pfscale_counter("anon_fault_locked") == before,
		  "with enable 0, faults are not counted");
	tap_check(write_file(DIR "enable", "1") == 0 && read_int(DIR "enable") == 1,
		  "enable <- 1 turns counting on");
	/* Reading the counters may itself fault a few pages: allow those. */
	tap_check(write_file(DIR "reset", "1\n") == 0 && pfscale_counter("anon_fault_locked") < 8,
		  "reset <- 1 zeroes the counters");
	return tap_exit();
}
