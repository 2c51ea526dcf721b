/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON writer of json.h. */
#include "json.h"

void jw_init(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->count[0] = 0;
	w->named = 0;
}

/* What goes before a value or a name: ", " unless it is the first. */
static void jw_sep(struct jw *w)
{
	if (w->named) {
		w->named = 0;
		return;
	}
	if (w->count[w->depth]++)
		fputs(", ", w->f);
}

static void jw_open(struct jw *w, char c)
{
	jw_sep(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->count[w->depth] = 0;
}

static void jw_close(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
	if (w->depth == 0)
		fputc('\n', w->f);
}

void jw_start_object(struct jw *w)
{
	jw_open(w, '{');
}

void jw_end_object(struct jw *w)
{
	jw_close(w, '}');
}

void jw_start_array(struct jw *w)
{
	jw_open(w, '[');
}

void jw_end_array(struct jw *w)
{
	jw_close(w, ']');
}

/* The code point of the UTF-8 sequence at s and its length; 0 if not valid UTF-8. */
static int jw_utf8(const unsigned char *s, unsigned long *cp)
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
static void jw_quoted(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned long cp;
	int n;

	fputc('"', f);
	for (; *s; s++) {
		const char *esc = *s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : *s == '\b' ? "\\b" :
				  *s == '\f' ? "\\f" : *s == '\n' ? "\\n" : *s == '\r' ? "\\r" :
				  *s == '\t' ? "\\t" : NULL;

		if (esc) {
			fputs(esc, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s);
		} else if (*s >= 0x80 && (n = jw_utf8(s, &cp))) {
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

void jw_name(struct jw *w, const char *name)
{
	jw_sep(w);
	jw_quoted(w->f, name);
	fputs(": ", w->f);
	w->named = 1;
}

void jw_string(struct jw *w, const char *s)
{
	jw_sep(w);
	jw_quoted(w->f, s);
}

void jw_uint(struct jw *w, unsigned long v)
{
	jw_sep(w);
	fprintf(w->f, "%lu", v);
}

void jw_int(struct jw *w, long v)
{
	jw_sep(w);
	fprintf(w->f, "%ld", v);
}

void jw_bool(struct jw *w, int v)
{
	jw_sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	jw_sep(w);
	fputs("null", w->f);
}

void jw_hex(struct jw *w, unsigned long v)
{
	jw_sep(w);
	fprintf(w->f, "\"0x%lx\"", v);
}

void jw_string_field(struct jw *w, const char *name, const char *s)
{
	jw_name(w, name);
	jw_string(w, s);
}

void jw_uint_field(struct jw *w, const char *name, unsigned long v)
{
	jw_name(w, name);
	jw_uint(w, v);
}

void jw_int_field(struct jw *w, const char *name, long v)
{
	jw_name(w, name);
	jw_int(w, v);
}

void jw_bool_field(struct jw *w, const char *name, int v)
{
	jw_name(w, name);
	jw_bool(w, v);
}

void jw_hex_field(struct jw *w, const char *name, unsigned long v)
{
	jw_name(w, name);
	jw_hex(w, v);
}
