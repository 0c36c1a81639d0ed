// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "passes/minseg.h"
#include "util/huge.h"

/*
 * The leaves at size .. 2 size - 1 with size = n, not n rounded up to a
 * power of two: the walks up from a leaf and the range minimum bottom-up
 * need no more (min is commutative: the nodes may pair a leaf with an
 * inner node), and at 1M decode operators (1.5M buckets) the tree is 24
 * MB, not 34, each byte of it fresh memory the first sweep clears.
 */
void hyper_plan__seg_part(struct minseg *s, uint32_t n, struct hu_part *part)
{
	s->size = n ? n : 1;
	*part = (struct hu_part)HU_PART(s->t, 2 * (size_t)s->size, false);
}

/*
 * t[0], above the root, holds 0: no key is less, so the walk up of a key
 * that falls stops there without a test of its own (a third of its
 * instructions a node).  No range minimum reads it.
 */
void hyper_plan__seg_clear(struct minseg *s)
{
	memset(s->t, 0xff, 2 * (size_t)s->size * sizeof(*s->t));
	s->t[0] = 0;
}

/*
 * A key that falls is the new minimum of every node above it that held
 * more: no sibling is read.  One that grows changes only the nodes that
 * held the old key, each then the least of its children.  Either way the
 * walk stops at the first node that stays.
 */
void hyper_plan__seg_set(struct minseg *s, uint32_t pos, uint64_t key)
{
	size_t i = s->size + (size_t)pos;
	uint64_t old = s->t[i];

	s->t[i] = key;
	if (key < old) {
		for (i /= 2; s->t[i] > key; i /= 2)
			s->t[i] = key;
		return;
	}
	for (i /= 2; i && s->t[i] == old; i /= 2) {
		uint64_t m = s->t[2 * i] < s->t[2 * i + 1] ? s->t[2 * i] :
			     s->t[2 * i + 1];

		if (m == old)
			break;	/* another leaf holds it */
		s->t[i] = m;
	}
}
