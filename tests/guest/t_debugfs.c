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

/* Is @word one of the space-separated words of @list? */
static int one_of(const char *word, const char *list)
{
	size_t n = strlen(word);
	const char *p;

	for (p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

/*
 * descriptions: a line per counter, in the order of counters, each with a
 * kind and a level of those include/linux/pfscale_counters.h defines, a
 * site and a meaning; a counter of each of kinds faults and lost. The
 * kernel takes the kinds and levels as bare words from that list, so a
 * word misspelt there is caught here.
 */
static void descriptions_check(void)
{
	static const char kinds[] = "faults lost detail retry parked", levels[] = "pte pmd pud p4d none";
	char line[512], cname[64], name[64], kind[KIND_LEN], level[8], site[64], first[600] = "";
	FILE *c = fopen(DIR "counters", "r"), *d = fopen(DESCRIPTIONS, "r");
	int n = 0, bad = 0, have_faults = 0, have_lost = 0;
	long long v;

	while (c && d && fscanf(c, "%63s %lld", cname, &v) == 2) {
		int meaning = 0;	/* where the meaning begins: the rest of the line */
		int ok = fgets(line, sizeof(line), d) &&
			 sscanf(line, "%63s %15s %7s %63s %n", name, kind, level, site, &meaning) == 4 &&
			 meaning > 0 && line[meaning] && line[meaning] != '\n' &&
			 !strcmp(name, cname) && one_of(kind, kinds) && one_of(level, levels);

		n++;
		have_faults |= ok && !strcmp(kind, "faults");
		have_lost |= ok && !strcmp(kind, "lost");
		if (!ok && !bad++)
			snprintf(first, sizeof(first), "counter %s: '%s'", cname,
				 strtok(line, "\n") ? line : "");
	}
	if (d && fgets(line, sizeof(line), d) && !bad++)
		snprintf(first, sizeof(first), "a line beyond the counters: %s", line);
	tap_check(c && d && n > 0 && !bad && have_faults && have_lost,
		  "descriptions: a valid 'name kind level site meaning' line for each of the %d counters, in their order (%d bad%s%s%s)",
		  n, bad, bad ? "; first: " : "", first,
		  !bad && !(have_faults && have_lost) ? "; no faults or no lost counter" : "");
	if (c)
		fclose(c);
	if (d)
		fclose(d);
}

/*
 * pfstat --kind lost shows exactly the counters the kernel describes as
 * lost, each once with that kind; an unknown kind is one line on stderr,
 * exit 2, nothing on stdout.
 */
static void pfstat_kind_check(void)
{
	char line[512], name[64], kind[KIND_LEN], first[512] = "";
	int shown = 0, wrong = 0, want = 0, status, out_lines = 0;
	FILE *p = popen("pfstat --kind lost 2>&1", "r"), *d = fopen(DESCRIPTIONS, "r");

	while (p && fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "counter ", 8))
			continue;
		if (sscanf(line, "%63s %15s", name, kind) == 2 && !strcmp(kind, "lost"))
			shown++;
		else if (!wrong++)
			memcpy(first, line, sizeof(first));
	}
	status = p ? pclose(p) : -1;
	while (d && fgets(line, sizeof(line), d))
		want += sscanf(line, "%*s %15s", kind) == 1 && !strcmp(kind, "lost");
	if (d)
		fclose(d);
	tap_check(status == 0 && shown == want && want > 0 && !wrong,
		  "pfstat --kind lost: the %d counters of kind lost, no other (%d shown, %d other lines%s%s)",
		  want, shown, wrong, wrong ? "; first: " : "", strtok(first, "\n") ? first : "");
	p = popen("pfstat --kind no_such_kind 2>/dev/null", "r");
	while (p && fgets(line, sizeof(line), p))
		out_lines++;
	status = p ? pclose(p) : -1;
	tap_check(WIFEXITED(status) && WEXITSTATUS(status) == 2 && out_lines == 0,
		  "pfstat --kind no_such_kind: exit 2, nothing printed (status %d, %d lines)",
		  status, out_lines);
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
	/* Ten checks, atomic_pte_checks() (four, or one skip), the reset. */
	tap_plan(pfscale_atomic_pte() < 0 ? 12 : 15);
	descriptions_check();
	pfstat_kind_check();
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
	tap_check(write_file(DESCRIPTIONS, "1") < 0, "descriptions is read-only");

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
