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

/* Was this boot asked for the atomic path (pfscale.atomic_pte=1)? */
/*
 * The path asked for: by the run script that switched it at run time
 * (guest/run/check's stock phase exports PFSCALE_ATOMIC_PTE), else by the
 * kernel command line. @by: which one.
 */
static int atomic_requested(const char **by)
{
	char line[4096] = "";
	const char *env = getenv("PFSCALE_ATOMIC_PTE");
	FILE *f;

	if (env) {
		*by = "the run script (PFSCALE_ATOMIC_PTE)";
		return atoi(env);
	}
	*by = "the command line";
	f = fopen("/proc/cmdline", "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return strstr(line, "pfscale.atomic_pte=1") != NULL;
}

/*
 * atomic_pte: the boot parameter took, bad input is refused, 0/1 switch;
 * atomic_pte_refused says nothing (the switch is refused only on a Xen PV
 * guest, which a QEMU guest is not).
 */
static void atomic_pte_checks(const char *const *bad, unsigned int nbad)
{
	int boot = pfscale_atomic_pte(), ok = 1, r, want;
	const char *by;
	unsigned int i;

	if (boot < 0) {
		tap_skip("atomic_pte switch (no CONFIG_PFSCALE_ATOMIC_PTE in this kernel)");
		return;
	}
	want = atomic_requested(&by);
	tap_check(boot == want, "atomic_pte is %d as %s asked (%d)", boot, by, want);
	char why[256];
	long n = slurp(DIR "atomic_pte_refused", why, sizeof(why));

	tap_check(n == 0, "atomic_pte_refused is empty: the path may run here (%ld bytes%s%s)",
		  n, n > 0 ? ": " : "", n > 0 ? why : "");
	for (i = 0; i < nbad; i++) {
		r = write_file(DIR "atomic_pte", bad[i]);
		if (r != -EINVAL) {
			tap_diag("atomic_pte <- '%s' returned %d", bad[i], r);
			ok = 0;
		}
	}
	tap_check(ok && pfscale_atomic_pte() == boot,
		  "bad writes to atomic_pte return -EINVAL and change nothing");
	tap_check(write_file(DIR "atomic_pte", boot ? "0\n" : "1\n") == 0 &&
		  pfscale_atomic_pte() == !boot &&
		  write_file(DIR "atomic_pte", boot ? "1" : "0") == 0 &&
		  pfscale_atomic_pte() == boot,
		  "atomic_pte <- %d then %d switches the path and back", !boot, boot);
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
		tap_plan(1);
		tap_skip("debugfs input validation (no pfscale counters in this kernel)");
		return tap_exit();
	}
	/* Six checks, atomic_pte_checks() (four, or one skip), the reset. */
	tap_plan(pfscale_atomic_pte() < 0 ? 8 : 11);
	/* Make a counter non-zero so that a wrong reset would show. */
	char *p = map_anon(64 * PAGE);

	for (i = 0; i < 64; i++)
		p[i * PAGE] = 1;
	before = pfscale_anon_faults();
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
	tap_check(read_int(DIR "enable") == 1 && pfscale_anon_faults() >= before &&
		  before >= 64, "bad writes changed nothing (enable 1, counters kept)");
	tap_check(write_file(DIR "counters", "1") < 0, "counters is read-only");

	tap_check(write_file(DIR "enable", "0\n") == 0 && read_int(DIR "enable") == 0,
		  "enable <- 0 turns counting off");
	before = pfscale_anon_faults();
	munmap(p, 64 * PAGE);
	p = map_anon(64 * PAGE);
	for (i = 0; i < 64; i++)
		p[i * PAGE] = 1;
	tap_check(pfscale_anon_faults() == before,
		  "with enable 0, faults are not counted");
	tap_check(write_file(DIR "enable", "1") == 0 && read_int(DIR "enable") == 1,
		  "enable <- 1 turns counting on");
	atomic_pte_checks(bad, sizeof(bad) / sizeof(bad[0]));
	/* Reading the counters may itself fault a few pages: allow those. */
	tap_check(write_file(DIR "reset", "1\n") == 0 && pfscale_anon_faults() < 8,
		  "reset <- 1 zeroes the counters");
	return tap_exit();
}
