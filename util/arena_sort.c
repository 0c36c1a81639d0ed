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
 * 32M so.  The keys are written back decoded from their packed words, in
 * order: moved along the permutation instead (a dependent random read
 * each), they cost as much CPU as the comparisons saved.
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
 * most half full (a word with more values is packed as it is if that
 * fits).
 */
#define DIRECT_BITS	24
#define RANK_SLOTS	16384
#define RANK_SHIFT	14
#define RADIX_BITS	11
#define RADIX_PASSES	6	/* 64 bits at most, of RADIX_BITS or less */

struct hu_arena_rtab {
	uint64_t val[RANK_SLOTS];
	uint32_t rank[RANK_SLOTS];	/* 0: empty, else its rank + 1 */
	uint64_t distinct[3][RANK_SLOTS / 2];	/* each word's, ranked */
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
		t->distinct[c][d++] = x;
	}
	sort_u64(t->distinct[c], d);
	for (uint32_t r = 0; r < d; r++)
		t->rank[slot_of(t, t->distinct[c][r])] = r + 1;
	return d;
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
 * its least (DIRECT_BITS or fewer bits) or by rank, above the index's
 * bits.  The @keys must come in their intervals' index order, so that
 * the stable passes leave equal words in index order.  Uses p->cand (room for
 * 2 p->n words) and p->rtab.  Return: true if sorted, false if not (too
 * many values to pack, or too few keys to gain: the caller sorts).
 */
bool hu_arena__sort_packed(struct placer *p, struct key *keys, uint32_t nk)
{
	uint64_t *w = (uint64_t *)p->cand, *tmp = w + p->n, *src, *dst;
	unsigned int ib, bits[3], sh[3], total = 0, passes, dw;
	uint64_t lo[3], hi[3], dmask, imask;
	bool ranked[3];
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
		ranked[c] = false;
		bits[c] = bit_len(hi[c] - lo[c]);
		if (bits[c] > DIRECT_BITS) {
			uint32_t d = rank_word(t, keys, nk, c, tmp);

			if (d) {
				ranked[c] = true;
				bits[c] = bit_len(d - 1);
			}
		}
		sh[c] = ib + total;
		total += bits[c];
		if (ib + total > 64)
			return false;
		if (!bits[c])
			continue;
		if (ranked[c])
			for (uint32_t j = 0; j < nk; j++)
				w[j] |= (uint64_t)(t->rank[tmp[j]] - 1) <<
					sh[c];
		else
			for (uint32_t j = 0; j < nk; j++)
				w[j] |= (keys[j].k[c] - lo[c]) << sh[c];
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
	/* the keys written back in that order, each from its packed word */
	for (uint32_t r = 0; r < nk; r++) {
		uint64_t x = src[r];
		struct key *k = &keys[r];

		for (int c = 0; c < 3; c++) {
			uint64_t f = (x >> sh[c]) & ((1ULL << bits[c]) - 1);

			k->k[c] = ranked[c] ? t->distinct[c][f] : lo[c] + f;
		}
		k->i = (uint32_t)(x & imask);
	}
	return true;
}
