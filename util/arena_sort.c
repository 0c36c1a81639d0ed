// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arena placer's keys sorted whole (util/arena.c) by a radix sort of
 * one word each, where the three words of a key have few values: on a
 * decode graph the sizes are a dozen, the lifetimes a few hundred and the
 * starts a few hundred thousand instants, so each word ranked among its
 * own values takes 4, 9 and 19 bits, and a key with its interval's index
 * packs in 50, sorted in three passes of 11 bits.  At 100k decode
 * operators the one sort of 146k keys was about 60M of the layout's 480M
 * instructions as an introsort (each comparison up to three words deep),
 * 32M so.  Only the keys' intervals are written back, in order: nothing
 * reads a key's words once its placement's keys are sorted whole (moved
 * along the permutation instead, a dependent random read each, the keys
 * cost as much CPU as the comparisons saved; decoded from the packed
 * words, 8M of those 32M).
 *
 * The order is the very same: a word's rank orders as the word, the
 * ranks are packed most significant first, and the sort is stable over
 * keys that come in index order, so equal words end on the index as
 * key_before() does.  Sets whose words have too many values to pack go
 * to the introsort, as before.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena_int.h"
#include "util/sort.h"

static inline bool u64_before(const uint64_t *x, const uint64_t *y)
{
	return *x < *y;
}

HU_DEFINE_SORT(sort_u64, uint64_t, u64_before)

/*
 * A word spanning at most DIRECT_BITS bits (its largest less its
 * smallest value) is packed as it is; a wider one by rank among its
 * distinct values, found in a hash table of RANK_SLOTS slots kept at
 * most half full (a word with more values is packed by its two runs,
 * split_word(), or as it is, if that fits).
 */
#define DIRECT_BITS	24
#define RANK_SLOTS	16384
#define RANK_SHIFT	14
#define RADIX_BITS	11
#define RADIX_PASSES	6	/* 64 bits at most, of RADIX_BITS or less */

struct hu_arena_rtab {
	uint64_t val[RANK_SLOTS];
	uint32_t rank[RANK_SLOTS];	/* 0: empty, else its rank + 1 */
	uint64_t distinct[RANK_SLOTS / 2];	/* one word's, to rank */
	uint32_t cnt[RADIX_PASSES][1U << RADIX_BITS];
};

static unsigned int bit_len(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline uint32_t slot_of(const struct hu_arena_rtab *t, uint64_t x)
{
	uint32_t h = (uint32_t)((x * 0x9e3779b97f4a7c15ULL) >>
				(64 - RANK_SHIFT));

	while (t->rank[h] && t->val[h] != x)
		h = (h + 1) & (RANK_SLOTS - 1);
	return h;
}

/*
 * Word @c of the @nk keys ranked among its distinct values in @t (each
 * slot's rank + 1), key j's slot in @slot[j].  Return: how many values,
 * or 0 if more than half the table's slots.
 */
static uint32_t rank_word(struct hu_arena_rtab *t, const struct key *keys,
			  uint32_t nk, int c, uint64_t *slot)
{
	uint32_t d = 0;

	memset(t->rank, 0, sizeof(t->rank));
	for (uint32_t j = 0; j < nk; j++) {
		uint64_t x = keys[j].k[c];
		uint32_t h = slot_of(t, x);

		slot[j] = h;
		if (t->rank[h])
			continue;
		if (d == RANK_SLOTS / 2)
			return 0;
		t->val[h] = x;
		t->rank[h] = 1;
		t->distinct[d++] = x;
	}
	sort_u64(t->distinct, d);
	for (uint32_t r = 0; r < d; r++)
		t->rank[slot_of(t, t->distinct[r])] = r + 1;
	return d;
}

/*
 * A word with too many values to rank may still lie in two narrow runs,
 * one below 2^63 and one above: the lifetime of an interval live to the
 * end (UINT64_MAX) is UINT64_MAX less its start, so ~len is its start
 * there, and near 2^64 for the others (DeepSeek-V2-Lite's training
 * layout: 11,095 lifetimes, more than the table ranks, each run under
 * 2^17 instants wide).  Word @c of the @nk keys is then packed as its
 * place in the low run, or past the low run by its place in the high
 * one: the same order, in few bits.  *@lo is the low run's least,
 * *@hlo the high run's, *@wid the low run's width (0: not split, packed
 * as it is less *@lo).  Return: the bits packed.
 */
static unsigned int split_word(const struct key *keys, uint32_t nk, int c,
			       uint64_t *lo, uint64_t *hlo, uint64_t *wid)
{
	uint64_t alo = UINT64_MAX, ahi = 0, blo = UINT64_MAX, bhi = 0;

	for (uint32_t j = 0; j < nk; j++) {
		uint64_t x = keys[j].k[c];

		if (x >> 63) {
			blo = x < blo ? x : blo;
			bhi = x > bhi ? x : bhi;
		} else {
			alo = x < alo ? x : alo;
			ahi = x > ahi ? x : ahi;
		}
	}
	*wid = 0;
	if (alo > ahi || blo > bhi)
		return bit_len(alo > ahi ? bhi - blo : ahi - alo);
	*lo = alo;
	*hlo = blo;
	*wid = ahi - alo + 1;
	return bit_len(*wid + (bhi - blo));
}

/* Its tables, for the placer's life.  Return: 0, or -ENOMEM. */
int hu_arena__rtab_alloc(struct placer *p)
{
	p->rtab = malloc(sizeof(*p->rtab));
	return p->rtab ? 0 : -ENOMEM;
}

/*
 * Sorts the @nk @keys whole, into key_before()'s order, if each packs in
 * one word with its interval's index: each word of the key as it is less
 * its least (DIRECT_BITS or fewer bits), by rank or by its two runs, above
 * the index's bits.  The @keys must come in their intervals' index order,
 * so that the stable passes leave equal words in index order.  Sorted,
 * only their intervals (.i) are in order: their words are left as they
 * were, for no one to read.  Uses p->cand (room for 2 p->n words) and
 * p->rtab.  Return: true if sorted, false if not (too many values to
 * pack, or too few keys to gain: the caller sorts).
 */
bool hu_arena__sort_packed(struct placer *p, struct key *keys, uint32_t nk)
{
	uint64_t *w = (uint64_t *)p->cand, *tmp = w + p->n, *src, *dst;
	unsigned int ib, total = 0, passes, dw;
	uint64_t lo[3], hi[3], dmask, imask;
	struct hu_arena_rtab *t;

	if (nk < HU_ARENA_RADIX_MIN || !p->rtab || nk > p->n)
		return false;
	ib = bit_len(p->n - 1);
	imask = (1ULL << ib) - 1;
	for (int c = 0; c < 3; c++) {
		lo[c] = UINT64_MAX;
		hi[c] = 0;
	}
	for (uint32_t j = 0; j < nk; j++) {
		uint64_t x0 = keys[j].k[0], x1 = keys[j].k[1];
		uint64_t x2 = keys[j].k[2];

		lo[0] = x0 < lo[0] ? x0 : lo[0];
		hi[0] = x0 > hi[0] ? x0 : hi[0];
		lo[1] = x1 < lo[1] ? x1 : lo[1];
		hi[1] = x1 > hi[1] ? x1 : hi[1];
		lo[2] = x2 < lo[2] ? x2 : lo[2];
		hi[2] = x2 > hi[2] ? x2 : hi[2];
	}
	t = p->rtab;
	for (uint32_t j = 0; j < nk; j++)
		w[j] = keys[j].i;
	/* the last word lowest, above the index */
	for (int c = 2; c >= 0; c--) {
		unsigned int bits = bit_len(hi[c] - lo[c]), sh = ib + total;
		uint64_t hlo = 0, wid = 0;
		uint32_t d = 0;

		if (bits > DIRECT_BITS) {
			d = rank_word(t, keys, nk, c, tmp);
			bits = d ? bit_len(d - 1) :
			       split_word(keys, nk, c, &lo[c], &hlo, &wid);
		}
		total += bits;
		if (ib + total > 64)
			return false;
		if (!bits)
			continue;
		if (d)
			for (uint32_t j = 0; j < nk; j++)
				w[j] |= (uint64_t)(t->rank[tmp[j]] - 1) << sh;
		else if (wid)
			for (uint32_t j = 0; j < nk; j++) {
				uint64_t x = keys[j].k[c];

				x = x >> 63 ? x - hlo + wid : x - lo[c];
				w[j] |= x << sh;
			}
		else
			for (uint32_t j = 0; j < nk; j++)
				w[j] |= (keys[j].k[c] - lo[c]) << sh;
	}
	if (!total)
		return true;	/* one key repeated: index order is the order */
	/* LSD passes over the words' bits, each stable */
	passes = (total + RADIX_BITS - 1) / RADIX_BITS;
	dw = (total + passes - 1) / passes;
	dmask = (1ULL << dw) - 1;
	memset(t->cnt, 0, passes * sizeof(t->cnt[0]));
	for (uint32_t j = 0; j < nk; j++) {
		uint64_t x = w[j] >> ib;

		for (unsigned int q = 0; q < passes; q++, x >>= dw)
			t->cnt[q][x & dmask]++;
	}
	src = w;
	dst = tmp;
	for (unsigned int q = 0; q < passes; q++) {
		uint32_t *cnt = t->cnt[q], sum = 0;
		unsigned int s = ib + q * dw;

		if (cnt[(src[0] >> s) & dmask] == nk)
			continue;	/* one digit: in order already */
		for (uint32_t x = 0; x <= dmask; x++) {
			uint32_t k = cnt[x];

			cnt[x] = sum;
			sum += k;
		}
		for (uint32_t j = 0; j < nk; j++)
			dst[cnt[(src[j] >> s) & dmask]++] = src[j];
		dst = src;
		src = src == w ? tmp : w;
	}
	/*
	 * The keys' intervals in that order.  Their words are left as they
	 * were: a placement sorted whole reads only the intervals (its
	 * second attempt, the best fit, finds them sorted), and every
	 * placement that sorts again makes its keys anew.
	 */
	for (uint32_t r = 0; r < nk; r++)
		keys[r].i = (uint32_t)(src[r] & imask);
	return true;
}
