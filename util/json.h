/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading JSON with json-c: one set of rules and one set of words for
 * libhyper's schedules and the planner's graphs, configs and profiles,
 * and the one escaper of strings written into JSON or into messages.
 * Internal: linked into each library and tool, never exported.
 */
#ifndef HYPER_UTIL_JSON_H
#define HYPER_UTIL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "util/dec.h"

/* @v's type with its article: "an object", "a string", "null". */
const char *hu_json_a_type(struct json_object *v);
/* @t's name without one: "object", "non-integer number". */
const char *hu_json_type_name(enum json_type t);

/*
 * An integer in @min..@max into *@out.  json-c clamps an integer past 64
 * bits to INT64_MIN or UINT64_MAX without a trace: both read as out of
 * range, as negative ones do.  0, -EBADMSG (not an integer: 1.5, "12",
 * true) or -ERANGE.
 */
int hu_json_u64(struct json_object *v, uint64_t min, uint64_t max,
		uint64_t *out);

/*
 * The words for a value that is not what it must be, into @msg:
 * "PATH: expected AN-OBJECT, got STRING" (hu_json_type_error()) and
 * "PATH: WHAT must be an integer in MIN..MAX (got GOT)", where a bound
 * that is a power of two from 2^32 (or one less, from 2^32-1) reads
 * 2^N (2^N-1), GOT
 * is the integer, "a value beyond 64 bits" or the type ("a string"),
 * and @what (NULL: none) names the field when @path does not.
 */
void hu_json_type_error(char *msg, size_t len, const char *path,
			enum json_type want, struct json_object *v);
void hu_json_int_error(char *msg, size_t len, const char *path,
		       const char *what, uint64_t min, uint64_t max,
		       struct json_object *v);
/* What @v is, as hu_json_int_error() says it (GOT). */
const char *hu_json_got(char *buf, size_t len, struct json_object *v);

/*
 * Parses @text (@len bytes) as exactly one JSON value into *@root:
 * strictly (a schedule), or, with @lenient, as json-c reads by default
 * (comments allowed: a graph, a config, a profile).  Fails with @msg
 * saying why, in the same words for every reader: "empty: no JSON in
 * it", "truncated JSON: it ends (after N bytes) inside a value",
 * "malformed JSON at line L, column C: WHY" (a NUL byte included),
 * "trailing data after the JSON value, at line L, column C", "larger
 * than 2 GiB, too large for a JSON text".
 * Returns 0, -EBADMSG, -EFBIG or -ENOMEM.
 */
int hu_json_parse(const char *text, size_t len, int lenient,
		  struct json_object **root, char *msg, size_t msglen);

/*
 * Escapes @s as the inside of a JSON string literal: \" \\ and \u00XX
 * for control characters and DEL; with @ascii, each byte from 0x80 too
 * (for messages, whose input need not be UTF-8).  Into @buf (@len bytes,
 * at least 4), cut to fit with "..." after the cut; returns @buf.
 */
const char *hu_json_escape(char *buf, size_t len, const char *s, int ascii);
/* @s as a JSON string literal, quotes included, to @f (UTF-8 as is). */
void hu_json_write_str(FILE *f, const char *s);

/*
 * A writer of large JSON texts (a million-step schedule is hundreds of
 * megabytes): text gathers in the buffer and goes to @f a buffer at a
 * time, where a printf() per number would parse its format each time.
 * Errors are @f's (ferror()), as with stdio.  Flush before touching @f.
 * Stdio copies a quarter of it again: glibc writes a flush to a file as
 * 4 KiB through @f's buffer and 12 KiB straight from this one.  Each
 * piece through fwrite_unlocked() instead, even into a 1 MiB setvbuf()
 * buffer, took 1.65 to 1.77 times the CPU time (bench-plan.md).
 */
#define HU_JBUF_SIZE	(1U << 14)	/* on the stack: 16 KiB */
/*
 * Bytes past HU_JBUF_SIZE that a store may reach and nothing is sent
 * from: a number's digits go in as whole words (hu_dec_fwd()), and a
 * cursor's writer (below) stores fixed-size words past its pieces' ends.
 */
#define HU_JBUF_SLACK	64

struct hu_jbuf {
	FILE *f;
	size_t n;
	char b[HU_JBUF_SIZE + HU_JBUF_SLACK];
};

static inline void hu_jbuf_init(struct hu_jbuf *w, FILE *f)
{
	w->f = f;
	w->n = 0;
}

void hu_jbuf_flush(struct hu_jbuf *w);

/* @len bytes of @s as they are. */
static inline void hu_jbuf_mem(struct hu_jbuf *w, const char *s, size_t len)
{
	if (len > HU_JBUF_SIZE - w->n) {
		hu_jbuf_flush(w);
		if (len > HU_JBUF_SIZE) {
			fwrite(s, 1, len, w->f);
			return;
		}
	}
	memcpy(w->b + w->n, s, len);
	w->n += len;
}

/* @s as it is: JSON punctuation and keys. */
static inline void hu_jbuf_put(struct hu_jbuf *w, const char *s)
{
	hu_jbuf_mem(w, s, strlen(s));
}

/* @s as a JSON string literal, as hu_json_write_str() writes it. */
void hu_jbuf_str(struct hu_jbuf *w, const char *s);

/*
 * strlen(@s) when no byte of @s needs an escape (hu_jbuf_str() would
 * copy it as it is), else SIZE_MAX.  A writer that puts the same string
 * many times (a schedule's tensor ids, each in a dozen lists) asks once
 * and then writes it with hu_jbuf_quoted().
 */
size_t hu_json_plain_len(const char *s);

/*
 * @len bytes to @d, a word at a time, the last word overlapping the one
 * before it: no read past @s + @len, no byte loop and no call for the
 * dozen bytes of an id.
 */
static inline void hu_copy_short(char *d, const char *s, size_t len)
{
	uint64_t x;
	uint32_t lo, hi;
	size_t i;

	if (len >= 8) {
		/* the first word and the last: all of up to 16 bytes */
		memcpy(&x, s, 8);
		memcpy(d, &x, 8);
		for (i = 8; i + 8 < len; i += 8) {
			memcpy(&x, s + i, 8);
			memcpy(d + i, &x, 8);
		}
		memcpy(&x, s + len - 8, 8);
		memcpy(d + len - 8, &x, 8);
	} else if (len >= 4) {
		memcpy(&lo, s, 4);
		memcpy(&hi, s + len - 4, 4);
		memcpy(d, &lo, 4);
		memcpy(d + len - 4, &hi, 4);
	} else if (len) {
		d[0] = s[0];
		d[len / 2] = s[len / 2];
		d[len - 1] = s[len - 1];
	}
}

/*
 * @len bytes of @s as they are, where @len is known only at run time
 * and short (a few dozen bytes: a writer's words made once, a list's
 * head): hu_copy_short() in place, not a call of memcpy().
 */
static inline void hu_jbuf_word(struct hu_jbuf *w, const char *s, size_t len)
{
	if (len > HU_JBUF_SIZE - w->n) {
		hu_jbuf_mem(w, s, len);
		return;
	}
	hu_copy_short(w->b + w->n, s, len);
	w->n += len;
}

/*
 * @pre (@pre_len bytes: the ", " before a list's next item),
 * then @s as a JSON string literal, where @len is hu_json_plain_len(@s),
 * not SIZE_MAX: the bytes hu_jbuf_put(@pre) and hu_jbuf_str(@s) write,
 * without looking at @s again.
 */
static inline void hu_jbuf_quoted(struct hu_jbuf *w, const char *pre,
				  size_t pre_len, const char *s, size_t len)
{
	char *p = w->b + w->n;

	if (len + pre_len + 2 > HU_JBUF_SIZE - w->n) {
		hu_jbuf_mem(w, pre, pre_len);
		hu_jbuf_mem(w, "\"", 1);
		hu_jbuf_mem(w, s, len);
		hu_jbuf_mem(w, "\"", 1);
		return;
	}
	hu_copy_short(p, pre, pre_len);
	p += pre_len;
	p[0] = '"';
	hu_copy_short(p + 1, s, len);
	p[len + 1] = '"';
	w->n += pre_len + len + 2;
}

/* "0000" to "9999" in a row: hu_jbuf_dec()'s digits, four to a load. */
extern const char hu_jbuf_dec4[4 * 10000 + 1];

/* Digits of @v (below 10^4) as a word: stored, they read in order. */
static inline uint32_t hu_jbuf_dec4_at(uint64_t v)
{
	uint32_t d;

	memcpy(&d, hu_jbuf_dec4 + 4 * v, 4);
	return d;
}

/* Bytes that hu_jbuf_dec() may store past a number's last digit. */
#define HU_JBUF_DEC_OVER	4

/*
 * @v's @len digits (hu_dec_len(@v)) from @p on, as hu_dec_put() ends
 * them at @p + @len, which it returns; the bytes up to
 * HU_JBUF_DEC_OVER past it are stored into, to be written over.  Up
 * to 12 digits as one or two words of table digits, the first shifted
 * down past its leading zeros: 10 instructions for "bytes": 8192, 30
 * for an arena offset of 11 digits, where hu_dec_put() took a division
 * and two table reads for every four digits and a branch for each
 * length, from the last digit back.
 */
static inline __attribute__((always_inline)) char *
hu_jbuf_dec(char *p, uint64_t v, unsigned int len)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t hi, lo, d;
	uint64_t d8;

	if (len <= 4) {
		d = hu_jbuf_dec4_at(v) >> (32 - 8 * len);
		memcpy(p, &d, 4);
		return p + len;
	}
	if (len <= 8) {
		hi = (uint32_t)v / 10000;
		lo = (uint32_t)v - hi * 10000;
		d8 = (hu_jbuf_dec4_at(hi) | (uint64_t)hu_jbuf_dec4_at(lo) << 32) >>
		     (64 - 8 * len);
		memcpy(p, &d8, 8);
		return p + len;
	}
	if (len <= 12) {
		d = hu_jbuf_dec4_at(v / 100000000) >> (96 - 8 * len);
		memcpy(p, &d, 4);
		v %= 100000000;
		hi = (uint32_t)v / 10000;
		lo = (uint32_t)v - hi * 10000;
		d8 = hu_jbuf_dec4_at(hi) | (uint64_t)hu_jbuf_dec4_at(lo) << 32;
		memcpy(p + len - 8, &d8, 8);
		return p + len;
	}
#endif
	hu_dec_put(p + len, v);
	return p + len;
}

/*
 * @v in decimal, as printf("%" PRIu64) writes it: in place, from its
 * known last digit back to its first.  Inline: a schedule writes one
 * number for every tensor, step and arena offset, and the call was a
 * sixth of each.
 */
static inline void hu_jbuf_u64(struct hu_jbuf *w, uint64_t v)
{
	unsigned int len = hu_dec_len(v);

	if (len > HU_JBUF_SIZE - w->n)
		hu_jbuf_flush(w);
	/* its words' last bytes past the end: the slack has room */
	hu_jbuf_dec(w->b + w->n, v, len);
	w->n += len;
}

/*
 * Writing at a cursor, for a writer of millions of small pieces (a
 * schedule): @p, where the next byte goes, stays in the caller's
 * register, where each call above loads w->n, tests it and stores it
 * back (and loads it again after any byte stored through a char *).
 * hu_jbuf_at() gives the cursor; hu_jbuf_room() makes room for @need
 * bytes (at most HU_JBUF_SIZE), flushing if fewer are left, and gives
 * the cursor again; hu_jbuf_set() hands it back before any other call
 * on @w.  Between them up to @need bytes are written from @p, and up
 * to HU_JBUF_SLACK past them may be stored into and written over.
 */
static inline char *hu_jbuf_at(struct hu_jbuf *w)
{
	return w->b + w->n;
}

static inline void hu_jbuf_set(struct hu_jbuf *w, char *p)
{
	w->n = (size_t)(p - w->b);
}

static inline char *hu_jbuf_room(struct hu_jbuf *w, char *p, size_t need)
{
	/* a constant @need: one compare with an address kept in a register */
	if (p > w->b + HU_JBUF_SIZE - need) {
		hu_jbuf_set(w, p);
		hu_jbuf_flush(w);
		p = w->b;
	}
	return p;
}

_Static_assert(HU_JBUF_DEC_OVER <= HU_JBUF_SLACK, "a number's last word fits");

/* @lit, a string literal, at @p: stores of its known size; the end. */
#define HU_CUR_LIT(p, lit)	\
	((char *)memcpy((p), (lit), sizeof(lit) - 1) + sizeof(lit) - 1)

/* @v in decimal at @p (hu_jbuf_dec(): stores up to 4 bytes past). */
static inline __attribute__((always_inline)) char *
hu_cur_u64(char *p, uint64_t v)
{
	return hu_jbuf_dec(p, v, hu_dec_len(v));
}

/* Anything else, through vsnprintf(). */
__attribute__((format(printf, 2, 3)))
void hu_jbuf_printf(struct hu_jbuf *w, const char *fmt, ...);

#endif /* HYPER_UTIL_JSON_H */
