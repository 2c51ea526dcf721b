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

/* Report one check; returns cond so callers can chain diagnostics. */
static inline int tap_check(int cond, const char *fmt, ...)
{
	va_list ap;

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

	printf("ok - %s: ", tap_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP\n");
}

static inline int tap_exit(void)
{
	return tap_failed ? 1 : 0;
}

static inline void tap_bail(const char *what)
{
	printf("not ok - %s: %s: %s\n", tap_prog, what, strerror(errno));
	exit(1);
}

#endif
