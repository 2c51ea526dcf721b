/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON writer, after bpftool's json_writer.c: the caller says
 * what comes (object, name, value), the writer puts the punctuation. It
 * writes what Python's json.dumps() does by default (", " and ": "), so
 * that the crash commands' -j output reads as gdb's --json. No crash
 * headers: stdio only.
 */
#ifndef PFSCALE_JSON_H
#define PFSCALE_JSON_H

#include <stdio.h>

#define JW_MAX_DEPTH 16

struct jw {
	FILE *f;
	int depth;
	int count[JW_MAX_DEPTH];	/* values written at each depth */
	int named;			/* a name was written: its value comes next */
};

void jw_init(struct jw *w, FILE *f);
void jw_start_object(struct jw *w);
void jw_end_object(struct jw *w);	/* at depth 0: and a newline */
void jw_start_array(struct jw *w);
void jw_end_array(struct jw *w);
void jw_name(struct jw *w, const char *name);
void jw_string(struct jw *w, const char *s);
void jw_uint(struct jw *w, unsigned long v);
void jw_int(struct jw *w, long v);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);
void jw_hex(struct jw *w, unsigned long v);	/* the string "0x..." */

/* name and value at once */
void jw_string_field(struct jw *w, const char *name, const char *s);
void jw_uint_field(struct jw *w, const char *name, unsigned long v);
void jw_int_field(struct jw *w, const char *name, long v);
void jw_bool_field(struct jw *w, const char *name, int v);
void jw_hex_field(struct jw *w, const char *name, unsigned long v);

#endif
