/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The identity of the graph a schedule was planned for: the one definition,
 * used by hyper-plan (which writes it as "graph": {"hash": ...}) and by
 * libhyper (which checks it against the schedule it parses).  See
 * Documentation/schedule-format.md, "Graph identity".
 *
 * The hash covers what planning does not change: each tensor's id, size
 * and kind, and each operator with the tensors it uses and defines, in
 * their listed order.  It leaves out what a plan decides or a profile
 * measures (tensor homes, step order, cache operators, compute times,
 * budget, predictions), so that every schedule of one graph has the same
 * hash, whatever its budget, policy or machine.  Tensors and steps are
 * hashed one by one (FNV-1a, 64 bits) and their hashes added, which makes
 * the result independent of their order.
 *
 * Not part of the installed API: a header shared inside the project.
 */
#ifndef HYPER_GRAPH_ID_H
#define HYPER_GRAPH_ID_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/dec.h"

#define HYPER_GRAPH_HASH_PREFIX	"fnv1a64:"
/* "fnv1a64:" and 16 hex digits, with its NUL. */
#define HYPER_GRAPH_HASH_LEN	(sizeof(HYPER_GRAPH_HASH_PREFIX) + 16)

#define HYPER_FNV_OFFSET	0xcbf29ce484222325ULL
#define HYPER_FNV_PRIME		0x100000001b3ULL

static inline uint64_t hyper_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= HYPER_FNV_PRIME;
	}
	return h;
}

/*
 * @len bytes at @s, then a NUL: a string's bytes as hyper_fnv1a_str()
 * hashes them, from a length known already.  Eight bytes to a round with
 * no test between them, the rest as four, two and one: the loop to the
 * NUL spent three tests and a step for each byte's xor and multiply, and
 * the graph's identity hashes about 10 million bytes at 100k decode
 * operators.  The multiplies still wait each for the one before.
 */
static inline uint64_t hyper_fnv1a_strn(uint64_t h, const char *s, size_t len)
{
	const unsigned char *b = (const unsigned char *)s;

#define HYPER_FNV_BYTE(i)	(h = (h ^ b[i]) * HYPER_FNV_PRIME)
	for (; len >= 8; len -= 8, b += 8) {
		HYPER_FNV_BYTE(0);
		HYPER_FNV_BYTE(1);
		HYPER_FNV_BYTE(2);
		HYPER_FNV_BYTE(3);
		HYPER_FNV_BYTE(4);
		HYPER_FNV_BYTE(5);
		HYPER_FNV_BYTE(6);
		HYPER_FNV_BYTE(7);
	}
	if (len & 4) {
		HYPER_FNV_BYTE(0);
		HYPER_FNV_BYTE(1);
		HYPER_FNV_BYTE(2);
		HYPER_FNV_BYTE(3);
		b += 4;
	}
	if (len & 2) {
		HYPER_FNV_BYTE(0);
		HYPER_FNV_BYTE(1);
		b += 2;
	}
	if (len & 1)
		HYPER_FNV_BYTE(0);
#undef HYPER_FNV_BYTE
	return h * HYPER_FNV_PRIME;	/* the NUL: h ^ 0 is h */
}

/*
 * Two strings at once: @h[0] goes on over @s0 (@n0 bytes) and @h[1] over
 * @s1 (@n1 bytes), each to what hyper_fnv1a_strn() gives, in one loop
 * while both have bytes.  Each multiply waits for the one before in its
 * own chain only: two chains side by side keep the multiplier busy where
 * one left it waiting.
 */
static inline void hyper_fnv1a_strn2(uint64_t h[2], const char *s0, size_t n0,
				     const char *s1, size_t n1)
{
	const unsigned char *a = (const unsigned char *)s0;
	const unsigned char *b = (const unsigned char *)s1;
	size_t n = n0 < n1 ? n0 : n1, i;
	uint64_t x = h[0], y = h[1];

	for (i = 0; i + 4 <= n; i += 4) {
		x = (x ^ a[i]) * HYPER_FNV_PRIME;
		y = (y ^ b[i]) * HYPER_FNV_PRIME;
		x = (x ^ a[i + 1]) * HYPER_FNV_PRIME;
		y = (y ^ b[i + 1]) * HYPER_FNV_PRIME;
		x = (x ^ a[i + 2]) * HYPER_FNV_PRIME;
		y = (y ^ b[i + 2]) * HYPER_FNV_PRIME;
		x = (x ^ a[i + 3]) * HYPER_FNV_PRIME;
		y = (y ^ b[i + 3]) * HYPER_FNV_PRIME;
	}
	h[0] = hyper_fnv1a_strn(x, s0 + i, n0 - i);
	h[1] = hyper_fnv1a_strn(y, s1 + i, n1 - i);
}

/*
 * A string with its NUL: "ab" + "c" never hashes as "a" + "bc".  Its
 * length first (a literal's is known when compiling), then the bytes
 * with no test for the NUL between them.
 */
static inline uint64_t hyper_fnv1a_str(uint64_t h, const char *s)
{
	return hyper_fnv1a_strn(h, s, strlen(s));
}

/*
 * One tensor's share: "T", id, decimal size, kind name, each with its
 * NUL.  The size's digits are made by util/dec.h and hashed most
 * significant first, as the string snprintf() made before (one such call
 * per tensor was about half of the identity's time).  @len is strlen(@id)
 * and @kind_len strlen(@kind): a caller that hashes many tensors knows
 * them already.
 */
static inline uint64_t hyper_graph_tensor_hash_len(const char *id, size_t len,
						   uint64_t bytes,
						   const char *kind,
						   size_t kind_len)
{
	char num[HU_DEC_MAX], *end = num + sizeof(num);
	const char *d = hu_dec_put(end, bytes);
	uint64_t h = hyper_fnv1a_str(HYPER_FNV_OFFSET, "T");

	h = hyper_fnv1a_strn(h, id, len);
	h = hyper_fnv1a_strn(h, d, (size_t)(end - d));
	return hyper_fnv1a_strn(h, kind, kind_len);
}

static inline uint64_t hyper_graph_tensor_hash(const char *id, uint64_t bytes,
					       const char *kind)
{
	return hyper_graph_tensor_hash_len(id, strlen(id), bytes, kind,
					   strlen(kind));
}

/*
 * One step's share: start with hyper_graph_step_begin(op) (or
 * hyper_graph_step_begin_len() with strlen(op)), then add each
 * used tensor's id with role 'U' and each defined one's with 'D', in the
 * step's order.
 */
static inline uint64_t hyper_graph_step_begin_len(const char *op, size_t len)
{
	return hyper_fnv1a_strn(hyper_fnv1a_str(HYPER_FNV_OFFSET, "S"), op, len);
}

static inline uint64_t hyper_graph_step_begin(const char *op)
{
	return hyper_graph_step_begin_len(op, strlen(op));
}

/*
 * The role's byte and its NUL are one multiply by the prime's square
 * (the NUL's xor changes nothing), then the id of @len bytes: a step
 * lists its tensors' ids, at 100k decode operators 720,000 of them.
 */
#define HYPER_FNV_PRIME2	(HYPER_FNV_PRIME * HYPER_FNV_PRIME)

static inline uint64_t hyper_graph_step_add_len(uint64_t h, char role,
						const char *id, size_t len)
{
	h = (h ^ (unsigned char)role) * HYPER_FNV_PRIME2;
	return hyper_fnv1a_strn(h, id, len);
}

/* Two steps' shares side by side (hyper_fnv1a_strn2()), one id each. */
static inline void hyper_graph_step_add2(uint64_t h[2], char role0,
					 const char *id0, size_t len0,
					 char role1, const char *id1,
					 size_t len1)
{
	h[0] = (h[0] ^ (unsigned char)role0) * HYPER_FNV_PRIME2;
	h[1] = (h[1] ^ (unsigned char)role1) * HYPER_FNV_PRIME2;
	hyper_fnv1a_strn2(h, id0, len0, id1, len1);
}

/* @role is 'U' or 'D': a NUL would end its string at once. */
static inline uint64_t hyper_graph_step_add(uint64_t h, char role,
					    const char *id)
{
	return hyper_graph_step_add_len(h, role, id, strlen(id));
}

/*
 * The graph's hash from the sums of its tensors' and steps' shares and
 * their counts, written as "fnv1a64:" and 16 hex digits into @out
 * (HYPER_GRAPH_HASH_LEN bytes).
 */
static inline void hyper_graph_hash(char *out, uint64_t tensor_sum,
				    uint64_t nr_tensors, uint64_t step_sum,
				    uint64_t nr_steps)
{
	uint64_t v[4] = { tensor_sum, nr_tensors, step_sum, nr_steps };
	uint64_t h = HYPER_FNV_OFFSET;

	/* Byte by byte, little-endian, so that any host gets the same. */
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++) {
			unsigned char c = v[i] >> (8 * b);

			h = hyper_fnv1a(h, &c, 1);
		}
	snprintf(out, HYPER_GRAPH_HASH_LEN, HYPER_GRAPH_HASH_PREFIX "%016" PRIx64, h);
}

#endif /* HYPER_GRAPH_ID_H */
