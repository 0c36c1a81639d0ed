/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unsigned decimal numbers made without stdio: the one digit writer of
 * the JSON writer (util/json.h), the graph's identity
 * (include/hyper/graph_id.h) and the generators' names.  A million-
 * operator graph makes millions of them, where printf() parsing a format
 * for each was a visible share of the run.
 * Internal: linked into each, never exported.
 */
#ifndef HYPER_UTIL_DEC_H
#define HYPER_UTIL_DEC_H

#include <stdint.h>
#include <string.h>

/* The most digits a uint64_t has. */
#define HU_DEC_MAX	20

/* The number of decimal digits of @v: from its bit length, then one test. */
static inline unsigned int hu_dec_len(uint64_t v)
{
	static const uint64_t pow10[HU_DEC_MAX] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL,
		1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
		10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL,
		100000000000000000ULL, 1000000000000000000ULL,
		10000000000000000000ULL,
	};
	/* floor(log10(2^bits)) by 1233/4096 ~ log10(2): exact for 1..64 */
	unsigned int bits = 64 - (unsigned int)__builtin_clzll(v | 1);
	unsigned int t = bits * 1233 >> 12;

	/* v | 1: 0 has one digit, and no other count changes */
	return t + ((v | 1) >= pow10[t]);
}

/*
 * Writes @v's digits, most significant first, to end just before @end
 * (room for HU_DEC_MAX before it); no NUL.  Four digits per 64-bit
 * division by 10000, split in two by a 32-bit one: an arena offset has
 * ten or eleven digits, and a 64-bit division (a multiply and shifts)
 * for each two was most of writing one.
 * Return: where they start (@end - hu_dec_len(@v)).
 */
static inline char *hu_dec_put(char *end, uint64_t v)
{
	/* "00" to "99" */
	static const char two[200] =
		"00010203040506070809101112131415161718192021222324"
		"25262728293031323334353637383940414243444546474849"
		"50515253545556575859606162636465666768697071727374"
		"75767778798081828384858687888990919293949596979899";
	char *p = end;
	uint32_t r;

	while (v >= 10000) {
		r = (uint32_t)(v % 10000);
		v /= 10000;
		p -= 4;
		memcpy(p, two + 2 * (r / 100), 2);
		memcpy(p + 2, two + 2 * (r % 100), 2);
	}
	if (v >= 100) {
		r = (uint32_t)v;
		v = r / 100;
		p -= 2;
		memcpy(p, two + 2 * (r % 100), 2);
	}
	if (v >= 10) {
		*--p = two[2 * v + 1];
		*--p = two[2 * v];
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

#endif
