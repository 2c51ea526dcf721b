/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny writer of JSON lines, one object a line, so that no caller
 * writes JSON punctuation by hand (the model: bpftool's json_writer.c, cut
 * down to what pfbench's and the pfcost plugin's records need).
 * Header-only: pfbench is one static program built from one file
 * (GUEST_CFLAGS), the plugin one shared object.
 *
 *   struct jsonl j;
 *
 *   jsonl_begin(&j, stdout);
 *   jsonl_str(&j, "bench", "same_region");
 *   jsonl_int(&j, "threads", 2);
 *   jsonl_fixed(&j, "balance", 0.987, 3);
 *   jsonl_open(&j, "per_vcpu", '[');	// members of an array: key NULL
 *   jsonl_open(&j, NULL, '{');
 *   jsonl_u64(&j, "insns", 42);
 *   jsonl_close(&j, '}');
 *   jsonl_close(&j, ']');
 *   jsonl_end(&j);		// "}\n", flushed
 *
 * Keys and string values are escaped; a number that is not finite is
 * written as null. jsonl_init() starts a writer inside a list that is
 * not its own (the plugin's window_list, written a window at a time).
 */
#ifndef PFSCALE_JSONL_H
#define PFSCALE_JSONL_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define JSONL_DEPTH 8

struct jsonl {
	FILE *f;
	int depth;			/* objects and arrays open inside the line's */
	int members[JSONL_DEPTH];	/* written so far at each depth */
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

/* A writer on @f whose next member is the first (nothing written). */
static inline void jsonl_init(struct jsonl *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->members[0] = 0;
}

static inline void jsonl_begin(struct jsonl *j, FILE *f)
{
	jsonl_init(j, f);
	fputc('{', f);
}

/* The separator and "key": of the next member; no key in an array. */
static inline void jsonl_key(struct jsonl *j, const char *key)
{
	if (j->members[j->depth]++)
		fputc(',', j->f);
	if (key) {
		jsonl_string(j->f, key);
		fputc(':', j->f);
	}
}

/* A member that is an object ('{') or an array ('['), left open. */
static inline void jsonl_open(struct jsonl *j, const char *key, char kind)
{
	jsonl_key(j, key);
	fputc(kind, j->f);
	if (j->depth < JSONL_DEPTH - 1)
		j->members[++j->depth] = 0;
}

/* Closes what jsonl_open() opened: '}' or ']'. */
static inline void jsonl_close(struct jsonl *j, char kind)
{
	fputc(kind, j->f);
	if (j->depth)
		j->depth--;
}

static inline void jsonl_u64(struct jsonl *j, const char *key, uint64_t val)
{
	jsonl_key(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

/* @val as a "0x..." string: an address. */
static inline void jsonl_hex(struct jsonl *j, const char *key, uint64_t val)
{
	jsonl_key(j, key);
	fprintf(j->f, "\"0x%" PRIx64 "\"", val);
}

/* An array whose members, @len bytes at @text, another writer wrote. */
static inline void jsonl_array_of(struct jsonl *j, const char *key, const char *text,
				  size_t len)
{
	jsonl_key(j, key);
	fprintf(j->f, "[%.*s]", (int)len, text);
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
