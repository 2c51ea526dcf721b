/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one JSON writer of pfscale's C programs, after bpftool's
 * json_writer.c: the caller says what comes (object, name, value), the
 * writer puts the punctuation and the escapes, so no program writes JSON
 * by hand and every one escapes a string the same way.
 *
 *   struct jw w;
 *
 *   jw_init(&w, stdout, JW_COMPACT);
 *   jw_start_object(&w);
 *   jw_string_field(&w, "bench", "same_region");
 *   jw_name(&w, "per_vcpu");
 *   jw_start_array(&w);
 *   jw_start_object(&w);
 *   jw_uint_field(&w, "insns", 42);
 *   jw_end_object(&w);
 *   jw_end_array(&w);
 *   jw_end_object(&w);		// the last close: "\n", flushed
 *
 * Styles: JW_SPACED writes what Python's json.dumps() does by default
 * (", " and ": "), so that crash's -j and the guest tools' --json read as
 * gdb's --json; JW_COMPACT writes "," and ":" (pfbench's and the pfcost
 * plugin's JSON-lines records). Each top-level value ends its line and is
 * flushed: a record is whole or absent. JW_MEMBERS writes the members of
 * a list that is not its own (the plugin's window_list, a window at a
 * time, given to another writer by jw_raw()): no line ends.
 *
 * Header-only: the guest programs are each one static file, the plugin
 * one shared object, the crash extension one .so.
 */
#ifndef PFSCALE_JSON_WRITER_H
#define PFSCALE_JSON_WRITER_H

#include <math.h>
#include <stdio.h>

#define JW_MAX_DEPTH 16

enum jw_style {
	JW_SPACED = 0,
	JW_COMPACT = 1,		/* no spaces after "," and ":" */
	JW_MEMBERS = 2,		/* no line end after a top-level value */
};

struct jw {
	FILE *f;
	int style;
	int depth;
	int count[JW_MAX_DEPTH];	/* values written at each depth */
	int named;			/* a name was written: its value comes next */
};

static inline void jw_init(struct jw *w, FILE *f, int style)
{
	w->f = f;
	w->style = style;
	w->depth = 0;
	w->count[0] = 0;
	w->named = 0;
}

/* What goes before a value or a name: a comma unless it is the first. */
static inline void jw_sep(struct jw *w)
{
	if (w->named) {
		w->named = 0;
		return;
	}
	if (w->count[w->depth]++)
		fputs(w->style & JW_COMPACT ? "," : ", ", w->f);
}

/* After a value: a top-level one ends its line. */
static inline void jw_done(struct jw *w)
{
	if (w->depth == 0 && !(w->style & JW_MEMBERS)) {
		fputc('\n', w->f);
		fflush(w->f);
	}
}

static inline void jw_open(struct jw *w, char c)
{
	jw_sep(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->count[w->depth] = 0;
}

static inline void jw_close(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
	jw_done(w);
}

static inline void jw_start_object(struct jw *w)
{
	jw_open(w, '{');
}

static inline void jw_end_object(struct jw *w)
{
	jw_close(w, '}');
}

static inline void jw_start_array(struct jw *w)
{
	jw_open(w, '[');
}

static inline void jw_end_array(struct jw *w)
{
	jw_close(w, ']');
}

/* The code point of the UTF-8 sequence at s and its length; 0 if not valid UTF-8. */
static inline int jw_utf8(const unsigned char *s, unsigned long *cp)
{
	int n = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0, i;

	if (!n)
		return 0;
	*cp = s[0] & (0x3f >> (n - 1));
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	/* overlong, surrogates, beyond U+10FFFF */
	if ((n == 3 && *cp < 0x800) || (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)) ||
	    (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A string as json.dumps() writes it (ensure_ascii): the short escapes,
 * \u for the other control characters and for all but ASCII (UTF-16
 * surrogate pairs above U+FFFF). A byte that is not UTF-8 goes as it is.
 */
static inline void jw_quoted(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned long cp;
	int n;

	fputc('"', f);
	for (; *s; s++) {
		const char *esc = *s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : *s == '\b' ? "\\b" :
				  *s == '\f' ? "\\f" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r" :
				  *s == '\t' ? "\\t" : NULL;

		n = *s >= 0x80 ? jw_utf8(s, &cp) : 0;
		if (esc) {
			fputs(esc, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s);
		} else if (n) {
			if (cp > 0xffff)
				fprintf(f, "\\u%04lx\\u%04lx", 0xd800 + ((cp - 0x10000) >> 10),
					0xdc00 + ((cp - 0x10000) & 0x3ff));
			else
				fprintf(f, "\\u%04lx", cp);
			s += n - 1;
		} else {
			fputc(*s, f);
		}
	}
	fputc('"', f);
}

static inline void jw_name(struct jw *w, const char *name)
{
	jw_sep(w);
	jw_quoted(w->f, name);
	fputs(w->style & JW_COMPACT ? ":" : ": ", w->f);
	w->named = 1;
}

static inline void jw_string(struct jw *w, const char *s)
{
	jw_sep(w);
	jw_quoted(w->f, s);
	jw_done(w);
}

static inline void jw_uint(struct jw *w, unsigned long v)
{
	jw_sep(w);
	fprintf(w->f, "%lu", v);
	jw_done(w);
}

static inline void jw_int(struct jw *w, long v)
{
	jw_sep(w);
	fprintf(w->f, "%ld", v);
	jw_done(w);
}

static inline void jw_bool(struct jw *w, int v)
{
	jw_sep(w);
	fputs(v ? "true" : "false", w->f);
	jw_done(w);
}

static inline void jw_null(struct jw *w)
{
	jw_sep(w);
	fputs("null", w->f);
	jw_done(w);
}

/* The string "0x...": an address. */
static inline void jw_hex(struct jw *w, unsigned long v)
{
	jw_sep(w);
	fprintf(w->f, "\"0x%lx\"", v);
	jw_done(w);
}

/* v with decimals digits after the point (printf's %.*f); null if not finite. */
static inline void jw_fixed(struct jw *w, double v, int decimals)
{
	if (!isfinite(v)) {
		jw_null(w);
		return;
	}
	jw_sep(w);
	fprintf(w->f, "%.*f", decimals, v);
	jw_done(w);
}

/* len bytes of JSON another writer wrote (JW_MEMBERS: one or more values). */
static inline void jw_raw(struct jw *w, const char *text, size_t len)
{
	jw_sep(w);
	fprintf(w->f, "%.*s", (int)len, text);
	jw_done(w);
}

/* name and value at once */
static inline void jw_string_field(struct jw *w, const char *name, const char *s)
{
	jw_name(w, name);
	jw_string(w, s);
}

static inline void jw_uint_field(struct jw *w, const char *name, unsigned long v)
{
	jw_name(w, name);
	jw_uint(w, v);
}

static inline void jw_int_field(struct jw *w, const char *name, long v)
{
	jw_name(w, name);
	jw_int(w, v);
}

static inline void jw_bool_field(struct jw *w, const char *name, int v)
{
	jw_name(w, name);
	jw_bool(w, v);
}

static inline void jw_null_field(struct jw *w, const char *name)
{
	jw_name(w, name);
	jw_null(w);
}

static inline void jw_hex_field(struct jw *w, const char *name, unsigned long v)
{
	jw_name(w, name);
	jw_hex(w, v);
}

static inline void jw_fixed_field(struct jw *w, const char *name, double v, int decimals)
{
	jw_name(w, name);
	jw_fixed(w, v, decimals);
}

#endif
