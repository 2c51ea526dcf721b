/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP output for pfscale guest tests, in the spirit of the kernel's
 * tools/testing/selftests/kselftest.h: one "ok"/"not ok" line per check,
 * "# " lines for diagnostics. The host runner aggregates all programs.
 */
#ifndef PFSCALE_TAP_H
#define PFSCALE_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *tap_prog = "?";
static int tap_failed;
static int tap_planned = -1;	/* checks announced by tap_plan() */
static int tap_reported;	/* ok / not ok / skip lines written */

static inline void tap_init(const char *prog)
{
	const char *s = strrchr(prog, '/');

	tap_prog = s ? s + 1 : prog;
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", tap_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * Announce how many checks this program makes ("1..N", as kselftest's
 * ksft_set_plan()). The runner fails a program that prints fewer or more
 * results than its plan, so a crash halfway cannot pass for success.
 */
static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

/* Report one check; returns cond so callers can chain diagnostics. */
static inline int tap_check(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_reported++;
	printf("%s - %s: ", cond ? "ok" : "not ok", tap_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed = 1;
	return cond;
}

static inline void tap_skip(const char *fmt, ...)
{
	va_list ap;

	tap_reported++;
	printf("ok - %s: ", tap_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP\n");
}

static inline int tap_exit(void)
{
	if (tap_planned >= 0 && tap_reported != tap_planned) {
		printf("# %s: planned %d checks, reported %d\n", tap_prog,
		       tap_planned, tap_reported);
		return 1;
	}
	return tap_failed ? 1 : 0;
}

static inline void tap_bail(const char *what)
{
	printf("not ok - %s: %s: %s\n", tap_prog, what, strerror(errno));
	fflush(stdout);
	exit(1);
}

#endif
