// SPDX-License-Identifier: LGPL-2.1-or-later
/* JSON rules and words shared by libhyper and the planner (json.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "util/json.h"

const char *hu_json_type_name(enum json_type t)
{
	switch (t) {
	case json_type_null:	return "null";
	case json_type_boolean:	return "boolean";
	case json_type_double:	return "non-integer number";
	case json_type_int:	return "integer";
	case json_type_object:	return "object";
	case json_type_array:	return "array";
	case json_type_string:	return "string";
	}
	return "?";
}

static const char *a_type(enum json_type t)
{
	switch (t) {
	case json_type_null:	return "null";
	case json_type_boolean:	return "a boolean";
	case json_type_double:	return "a non-integer number";
	case json_type_int:	return "an integer";
	case json_type_object:	return "an object";
	case json_type_array:	return "an array";
	case json_type_string:	return "a string";
	}
	return "?";
}

const char *hu_json_a_type(struct json_object *v)
{
	return a_type(json_object_get_type(v));
}

int hu_json_u64(struct json_object *v, uint64_t min, uint64_t max,
		uint64_t *out)
{
	uint64_t u;

	if (!json_object_is_type(v, json_type_int))
		return -EBADMSG;
	if (json_object_get_int64(v) < 0)
		return -ERANGE;
	u = json_object_get_uint64(v);
	if (u == UINT64_MAX || u < min || u > max)
		return -ERANGE;
	*out = u;
	return 0;
}

const char *hu_json_got(char *buf, size_t len, struct json_object *v)
{
	int64_t i = json_object_get_int64(v);

	if (!json_object_is_type(v, json_type_int))
		snprintf(buf, len, "%s", hu_json_a_type(v));
	else if (i == INT64_MIN ||
		 (i >= 0 && json_object_get_uint64(v) == UINT64_MAX))
		snprintf(buf, len, "a value beyond 64 bits");
	else if (i < 0)
		snprintf(buf, len, "%" PRId64, i);
	else
		snprintf(buf, len, "%" PRIu64, json_object_get_uint64(v));
	return buf;
}

/* 2^N or 2^N-1 from 2^32-1 on, as people write such bounds; else decimal. */
static const char *bound(char *buf, size_t len, uint64_t x)
{
	if (x >= 1ULL << 32 && !(x & (x - 1)))
		snprintf(buf, len, "2^%d", __builtin_ctzll(x));
	else if (x >= (1ULL << 32) - 1 && !(x & (x + 1)))
		snprintf(buf, len, "2^%d-1", x == UINT64_MAX ? 64 :
			 __builtin_ctzll(x + 1));
	else
		snprintf(buf, len, "%" PRIu64, x);
	return buf;
}

void hu_json_int_error(char *msg, size_t len, const char *path,
		       const char *what, uint64_t min, uint64_t max,
		       struct json_object *v)
{
	char lo[32], hi[32], got[40];

	snprintf(msg, len, "%s: %s%smust be an integer in %s..%s (got %s)",
		 path, what ? what : "", what ? " " : "",
		 bound(lo, sizeof(lo), min), bound(hi, sizeof(hi), max),
		 hu_json_got(got, sizeof(got), v));
}

void hu_json_type_error(char *msg, size_t len, const char *path,
			enum json_type want, struct json_object *v)
{
	snprintf(msg, len, "%s: expected %s, got %s", path, a_type(want),
		 hu_json_type_name(json_object_get_type(v)));
}

static void line_col(const char *buf, size_t off, unsigned int *line,
		     unsigned int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static size_t skip_space(const char *text, size_t at, size_t len)
{
	while (at < len && strchr(" \t\r\n", text[at]) && text[at])
		at++;
	return at;
}

int hu_json_parse(const char *text, size_t len, int lenient,
		  struct json_object **root, char *msg, size_t msglen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	const char *nul = memchr(text, '\0', len);
	unsigned int line, col;
	size_t end;

	*root = NULL;
	if (skip_space(text, 0, len) == len) {
		snprintf(msg, msglen, "empty: no JSON in it");
		return -EBADMSG;
	}
	/* JSON text cannot hold a raw NUL, and json-c would stop at one. */
	if (nul) {
		line_col(text, (size_t)(nul - text), &line, &col);
		snprintf(msg, msglen, "malformed JSON at line %u, column %u: NUL byte",
			 line, col);
		return -EBADMSG;
	}
	if (len > INT_MAX) {
		snprintf(msg, msglen, "larger than 2 GiB, too large for a JSON text");
		return -EFBIG;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	/* data after the value is ours to name */
	json_tokener_set_flags(tok, (lenient ? 0 : JSON_TOKENER_STRICT) |
				    JSON_TOKENER_ALLOW_TRAILING_CHARS);
	*root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_success && skip_space(text, end, len) == len)
		return 0;
	json_object_put(*root);
	*root = NULL;
	if (jerr == json_tokener_success) {
		line_col(text, skip_space(text, end, len), &line, &col);
		snprintf(msg, msglen, "trailing data after the JSON value, at line %u, column %u",
			 line, col);
	} else if (jerr == json_tokener_continue) {
		snprintf(msg, msglen, "truncated JSON: it ends (after %zu bytes) inside a value",
			 len);
	} else {
		line_col(text, end, &line, &col);
		snprintf(msg, msglen, "malformed JSON at line %u, column %u: %s",
			 line, col, json_tokener_error_desc(jerr));
	}
	return -EBADMSG;
}

/* A byte that goes into a JSON string literal as it is (UTF-8 as is). */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c != '"' && c != '\\' && c != 0x7f;
}

/* The one escaping rule: @c as it goes inside a JSON string literal. */
static int esc_one(unsigned char c, char out[8], int ascii)
{
	if (c == '"' || c == '\\')
		return snprintf(out, 8, "\\%c", c);
	if (!plain(c) || (ascii && c >= 0x80))
		return snprintf(out, 8, "\\u%04x", c);
	out[0] = (char)c;
	out[1] = '\0';
	return 1;
}

const char *hu_json_escape(char *buf, size_t len, const char *s, int ascii)
{
	size_t o = 0;

	if (len < 4) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	for (; *s; s++) {
		char one[8];
		int n = esc_one((unsigned char)*s, one, ascii);

		if (o + (size_t)n > len - 4) {
			memcpy(buf + o, "...", 3);	/* cut: say so */
			o += 3;
			break;
		}
		memcpy(buf + o, one, (size_t)n);
		o += (size_t)n;
	}
	buf[o] = '\0';
	return buf;
}

/* the strings @x "0" to @x "9" (the "" ends each macro in a string) */
#define DEC4_10(x)	\
	x "0" x "1" x "2" x "3" x "4" x "5" x "6" x "7" x "8" x "9"
#define DEC4_100(x)	\
	DEC4_10(x "0") DEC4_10(x "1") DEC4_10(x "2") DEC4_10(x "3") \
	DEC4_10(x "4") DEC4_10(x "5") DEC4_10(x "6") DEC4_10(x "7") \
	DEC4_10(x "8") DEC4_10(x "9") ""
#define DEC4_1000(x)	\
	DEC4_100(x "0") DEC4_100(x "1") DEC4_100(x "2") DEC4_100(x "3") \
	DEC4_100(x "4") DEC4_100(x "5") DEC4_100(x "6") DEC4_100(x "7") \
	DEC4_100(x "8") DEC4_100(x "9") ""

const char hu_jbuf_dec4[4 * 10000 + 1] =
	DEC4_1000("0") DEC4_1000("1") DEC4_1000("2") DEC4_1000("3")
	DEC4_1000("4") DEC4_1000("5") DEC4_1000("6") DEC4_1000("7")
	DEC4_1000("8") DEC4_1000("9");

void hu_jbuf_flush(struct hu_jbuf *w)
{
	if (w->n)
		fwrite(w->b, 1, w->n, w->f);
	w->n = 0;
}

/*
 * Nonzero when some byte of @x is not plain(), all eight at once: the
 * common id ("L12.wq") needs no escape, and a byte at a time this test
 * was most of the writer's cost.  Each SWAR test is exact as a yes/no
 * (a borrow only ever spreads above a byte that already matched); bytes
 * from 0x80 have their top bit set, so none of them matches, as
 * plain() has it.
 */
static uint64_t bad_bytes(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
	uint64_t d = x ^ (ones * 0x7f);

	return ((x - ones * 0x20) | (q - ones) | (b - ones) | (d - ones)) &
	       ~x & high;
}

/*
 * Says whether all the @len bytes at @s are plain(), a word at a time
 * (the last word overlapping the one before it: no byte loop at the
 * end, and no call to memcpy() for an id of a dozen bytes), and with
 * @copy copies them to @d as it goes; if not plain, what it copied is to
 * be dropped.  Inline with @copy constant: a loop with the copies, for
 * hu_jbuf_str(), and one without, for hu_json_plain_len().
 */
static inline __attribute__((always_inline)) bool
scan_plain(char *d, const char *s, size_t len, bool copy)
{
	uint64_t bad = 0, x;
	uint32_t lo, hi;
	size_t i;

	if (len >= 8) {
		for (i = 0; ; i += 8) {
			if (i > len - 8)
				i = len - 8;
			memcpy(&x, s + i, 8);
			if (copy)
				memcpy(d + i, &x, 8);
			bad |= bad_bytes(x);
			if (i == len - 8)
				return !bad;
		}
	}
	if (len >= 4) {
		/* most ids: the first four bytes and the last four, as one */
		memcpy(&lo, s, 4);
		memcpy(&hi, s + len - 4, 4);
		if (copy) {
			memcpy(d, &lo, 4);
			memcpy(d + len - 4, &hi, 4);
		}
		return !bad_bytes(lo | (uint64_t)hi << 32);
	}
	if (!len)
		return true;
	/*
	 * One to three bytes: the first, the middle and the last are all of
	 * them, tested as one word by the same rule, the other five bytes
	 * spaces (plain): no second scan a byte at a time.
	 */
	if (copy) {
		d[0] = s[0];
		d[len / 2] = s[len / 2];
		d[len - 1] = s[len - 1];
	}
	x = (unsigned char)s[0] | (uint64_t)(unsigned char)s[len / 2] << 8 |
	    (uint64_t)(unsigned char)s[len - 1] << 16 |
	    0x2020202020000000ULL;
	return !bad_bytes(x);
}

/* scan_plain(), copying: what it copied is to be dropped if not plain */
static bool copy_plain(char *d, const char *s, size_t len)
{
	return scan_plain(d, s, len, true);
}

/*
 * The tail as scan_plain() reads it, where a copy of it into a word
 * of spaces was a call to memcpy() for each of a million tensors' ids.
 */
size_t hu_json_plain_len(const char *s)
{
	size_t len = strlen(s);

	return scan_plain(NULL, s, len, false) ? len : SIZE_MAX;
}

/*
 * The quotes and @s in place when nothing in @s needs an escape and it
 * fits; else run by run, through esc_one(), the one escaping rule.
 */
void hu_jbuf_str(struct hu_jbuf *w, const char *s)
{
	size_t len = strlen(s);
	char one[8], *p = w->b + w->n;

	if (len + 2 <= HU_JBUF_SIZE - w->n && copy_plain(p + 1, s, len)) {
		p[0] = '"';
		p[len + 1] = '"';
		w->n += len + 2;
		return;
	}
	hu_jbuf_mem(w, "\"", 1);
	while (*s) {
		/* a run that needs no escape goes out in one copy */
		const char *run = s;

		while (*s && plain((unsigned char)*s))
			s++;
		if (s > run)
			hu_jbuf_mem(w, run, (size_t)(s - run));
		if (*s)
			hu_jbuf_mem(w, one,
				    (size_t)esc_one((unsigned char)*s++, one, 0));
	}
	hu_jbuf_mem(w, "\"", 1);
}

void hu_jbuf_printf(struct hu_jbuf *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(w->b + w->n, HU_JBUF_SIZE - w->n, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < HU_JBUF_SIZE - w->n) {
		w->n += (size_t)n;
		return;
	}
	/* it did not fit: what it wrote is dropped, and written again */
	hu_jbuf_flush(w);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
}

void hu_json_write_str(FILE *f, const char *s)
{
	struct hu_jbuf w;

	hu_jbuf_init(&w, f);
	hu_jbuf_str(&w, s);
	hu_jbuf_flush(&w);
}
