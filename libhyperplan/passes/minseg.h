/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Range minimum over positions 0..n-1 of 64-bit keys, with point updates. */
#ifndef HP_MINSEG_H
#define HP_MINSEG_H

#include <stddef.h>
#include <stdint.h>

#define SEG_NONE	UINT64_MAX

struct minseg {
	uint64_t *t;		/* t[size + i]: position i; t[i]: t[2i], t[2i+1]'s */
	uint32_t size;
};

struct hu_part;

/*
 * Sizes @s for @n positions and describes its tree as @part of a block
 * (util/huge.h), for hyper_plan__seg_clear() once allocated: where a
 * phase's arrays are one block.
 */
void hyper_plan__seg_part(struct minseg *s, uint32_t n, struct hu_part *part);
void hyper_plan__seg_clear(struct minseg *s);
void hyper_plan__seg_set(struct minseg *s, uint32_t pos, uint64_t key);
/* Position @pos's key. */
static inline uint64_t hyper_plan__seg_get(const struct minseg *s,
					   uint32_t pos)
{
	return s->t[s->size + (size_t)pos];
}

/*
 * The smallest key in [lo, hi], or SEG_NONE.  Inline: the sweep asks it
 * for a class's minimum at nearly every step over budget, and the call
 * cost a tenth of it.  The tree's address is held in a register: the
 * loop read it at each node.
 */
static inline uint64_t hyper_plan__seg_min(const struct minseg *s,
					   uint32_t lo, uint32_t hi)
{
	size_t l = s->size + (size_t)lo, r = s->size + (size_t)hi + 1;
	const uint64_t *t = s->t;
	uint64_t best = SEG_NONE;

	for (; l < r; l /= 2, r /= 2) {
		if (l & 1 && t[l] < best)
			best = t[l];
		if (l & 1)
			l++;
		if (r & 1 && t[--r] < best)
			best = t[r];
	}
	return best;
}

#endif
