/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny writer of JSON lines, one flat object a line, so that no caller
 * writes JSON punctuation by hand (the model: bpftool's json_writer.c,
 * cut down to what pfbench's records need). Header-only: pfbench is one
 * static program built from one file (GUEST_CFLAGS).
 *
 *   struct jsonl j;
 *
 *   jsonl_begin(&j, stdout);
 *   jsonl_str(&j, "bench", "same_region");
 *   jsonl_int(&j, "threads", 2);
 *   jsonl_fixed(&j, "balance", 0.987, 3);
 *   jsonl_end(&j);		// "}\n", flushed
 *
 * Keys and string values are escaped; a number that is not finite is
 * written as null.
 */
#ifndef PFSCALE_JSONL_H
#define PFSCALE_JSONL_H

#include <math.h>
#include <stdio.h>

struct jsonl {
	FILE *f;
	int members;		/* written so far in this object */
};

static inline void jsonl_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static inline void jsonl_begin(struct jsonl *j, FILE *f)
{
	j->f = f;
	j->members = 0;
	fputc('{', f);
}

/* The separator and "key": of the next member. */
static inline void jsonl_key(struct jsonl *j, const char *key)
{
	if (j->members++)
		fputc(',', j->f);
	jsonl_string(j->f, key);
	fputc(':', j->f);
}

static inline void jsonl_str(struct jsonl *j, const char *key, const char *val)
{
	jsonl_key(j, key);
	jsonl_string(j->f, val);
}

static inline void jsonl_int(struct jsonl *j, const char *key, long val)
{
	jsonl_key(j, key);
	fprintf(j->f, "%ld", val);
}

static inline void jsonl_bool(struct jsonl *j, const char *key, int val)
{
	jsonl_key(j, key);
	fputs(val ? "true" : "false", j->f);
}

static inline void jsonl_null(struct jsonl *j, const char *key)
{
	jsonl_key(j, key);
	fputs("null", j->f);
}

/* @val with @decimals digits after the point (printf's %.*f). */
static inline void jsonl_fixed(struct jsonl *j, const char *key, double val, int decimals)
{
	if (!isfinite(val)) {
		jsonl_null(j, key);
		return;
	}
	jsonl_key(j, key);
	fprintf(j->f, "%.*f", decimals, val);
}

/* Ends the object and its line, and flushes: a record is whole or absent. */
static inline void jsonl_end(struct jsonl *j)
{
	fputs("}\n", j->f);
	fflush(j->f);
}

#endif
