// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arena placer's bound (util/arena.c): whether a placement under way
 * must end at least as high as a limit, from the holes at a few instants
 * and the intervals live then that are not placed yet.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena_int.h"
#include "util/huge.h"
#include "util/sort.h"

HU_DEFINE_SORT(sort_keys, struct key, key_before)

/*
 * The lowest height at which the holes of at least @size bytes (@nh of
 * them at @holes, bottom up, then all that is free above @top) hold
 * @need bytes; 0 (no bound) past 2^64.
 */
static uint64_t room_top(const struct span *holes, uint32_t nh, uint64_t top,
			 uint64_t size, uint64_t need)
{
	for (uint32_t k = 0; k < nh; k++) {
		uint64_t c = holes[k].hi - holes[k].lo;

		if (c < size)
			continue;
		if (c >= need)
			return holes[k].lo + need;
		need -= c;
	}
	return top + need < top ? 0 : top + need;
}

/* The size of instant @in's @x-th interval. */
static uint64_t size_of(const struct placer *p, const struct inst *in,
			uint32_t x)
{
	return p->v[in->live[x]].bytes;
}

/*
 * Whether the placement under way ends at least @limit high whatever it
 * places next.  At an instant t, each interval live then and not placed
 * yet will take room that is free at t now (placing more only takes
 * room), in one hole that is at least its size.  So for each size s,
 * those of s bytes and more fill, at best, the holes of s bytes and more
 * from the bottom up: the height ends at least where the room of those
 * holes below it holds them all.
 */
bool hu_arena__cannot_win(struct placer *p, uint64_t limit)
{
	for (uint32_t k = 0; k < NINST; k++) {
		const struct inst *in = &p->inst[k];
		uint64_t smin = 0, sum = 0;
		struct hu_ival probe;
		struct scan s;
		uint32_t x, y;

		for (x = 0; x < in->n; x++)
			if (!p->placed[in->live[x]] && p->v[in->live[x]].bytes)
				smin = p->v[in->live[x]].bytes;
		if (!smin)
			continue;
		/* the holes at t that the smallest of them fits */
		probe = (struct hu_ival){ in->t, in->t + 1, smin, 0 };
		s = (struct scan){ p->base, smin, UINT64_MAX, UINT64_MAX, true,
				   p->holes, 0 };
		hu_arena__holes_scan(p, &probe, &s);
		for (x = 0; x < in->n && size_of(p, in, x); x = y) {
			uint64_t size = size_of(p, in, x);
			bool over = false;

			/* those of this size, then the bound for them all */
			for (y = x; y < in->n && size_of(p, in, y) == size; y++)
				if (!p->placed[in->live[y]] &&
				    __builtin_add_overflow(sum, size, &sum))
					over = true;
			if (over)	/* past 2^64: no bound */
				break;
			if (room_top(s.holes, s.nh, s.cur, size, sum) >= limit)
				return true;
		}
	}
	return false;
}

/*
 * Instant @t is checked by hu_arena__cannot_win() in slot @k (unless a
 * slot has it already), with the intervals live then (not the
 * whole-span ones), largest first.  Return: 0, or -ENOMEM.
 */
int hu_arena__set_inst(struct placer *p, uint32_t k, uint64_t t)
{
	struct inst *in = &p->inst[k];
	const bool *whole = p->whole;
	struct key *keys;
	uint32_t m = 0;

	if (t == UINT64_MAX)
		return 0;
	for (uint32_t i = 0; i < NINST; i++)
		if (p->inst[i].t == t)
			return 0;
	free(in->live);
	*in = (struct inst){ t, NULL, 0 };
	for (uint32_t i = 0; i < p->n; i++)
		m += !whole[i] && p->v[i].start <= t && p->v[i].end > t;
	if (!m)
		return 0;
	if (m + 1 > p->nholes) {
		struct span *h = hu_realloc_huge(p->holes,
						  (m + 1) * sizeof(*h));

		if (!h)
			return -ENOMEM;
		p->holes = h;
		p->nholes = m + 1;
	}
	keys = hu_malloc_huge(m * sizeof(*keys));
	in->live = hu_malloc_huge(m * sizeof(*in->live));
	if (!keys || !in->live) {
		free(keys);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (!whole[i] && p->v[i].start <= t && p->v[i].end > t)
			keys[in->n++] = (struct key){ { ~p->v[i].bytes, 0, 0 },
						      i };
	sort_keys(keys, m);
	for (uint32_t i = 0; i < m; i++)
		in->live[i] = keys[i].i;
	free(keys);
	return 0;
}
