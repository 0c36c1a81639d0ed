// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arena placer's time order (util/arena.c): the run cut into
 * buckets, each with its placed intervals in offset order and the union
 * of their offsets, and the groups of buckets with theirs.  What a fit
 * reads from them and a placed interval's insert are inline in
 * util/arena_int.h (bkt_collect(), the time cursor, bkt_insert(), and
 * the buckets of an instant and a union's insert they call).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena_int.h"
#include "util/huge.h"

/*
 * The groups of buckets (a level where there are at least two) for
 * p->nbkt buckets, their counts zeroed and their unions' rooms
 * (UNION_ROOM spans each): fine levels where the intervals
 * kept by offset (@m_off, whose fits read many buckets) are more than a
 * quarter as many as those by time (@m_time, each of which joins a union
 * at every level), else coarse ones (util/arena_int.h).
 * Return: 0, or -ENOMEM.
 */
static int grp_levels(struct placer *p, size_t m_time, size_t m_off)
{
	bool fine = 4 * m_off > m_time;
	uint32_t levels = fine ? GRP_FINE_LEVELS : GRP_LEVELS, ng;

	p->gshift = fine ? GRP_FINE_SHIFT : GRP_SHIFT;
	p->ngl = 0;
	for (uint32_t l = 1; l <= levels &&
	     (p->nbkt - 1) >> (p->gshift * l); l++) {
		p->gbase[l] = p->gbase[l - 1] +
			      ((p->nbkt - 1) >> (p->gshift * l)) + 1;
		p->ngl = l;
	}
	ng = p->gbase[p->ngl];
	p->gn = hu_calloc_huge(ng ?: 1, sizeof(*p->gn));
	p->gun = hu_malloc_huge(((size_t)ng ?: 1) * UNION_ROOM *
				sizeof(*p->gun));
	return p->gn && p->gun ? 0 : -ENOMEM;
}

/*
 * One pass over the intervals by time: how many bucket entries they take
 * (*@total, what the buckets' room must hold), and each bucket's
 * intervals starting in it (bfirst[b + 1]) and ending before it (bn[b]).
 * These were three passes (and the room's a pass for each length
 * tried), 0.24G instructions at 1M decode operators with the first; the
 * groups' counts, for their unions' room, went with the rooms' fixed
 * size.  Return: 0, or -ENOMEM.
 */
static int bkt_count(struct placer *p, const bool *whole, size_t m_time,
		     size_t m_off, size_t *total)
{
	size_t t = 0;
	uint32_t a, z;

	p->bfirst = hu_calloc_huge((size_t)p->nbkt + 1, sizeof(*p->bfirst));
	p->bn = hu_calloc_huge(p->nbkt, sizeof(*p->bn));
	if (!p->bfirst || !p->bn || grp_levels(p, m_time, m_off))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n; i++) {
		if (whole[i] || by_offset(p, i))
			continue;
		bkt_range(p, p->v[i].start, p->v[i].end, &a, &z);
		t += z - a + 1;
		p->bfirst[a + 1]++;
		if (z + 1 < p->nbkt)
			p->bn[z + 1]++;
	}
	*total = t;
	return 0;
}

/*
 * The buckets of the time order.  A fit reads the buckets its interval
 * shares time with, so they are a few times as long as an interval kept
 * there on average (most fits then read one); an interval is in each
 * bucket it shares time with.  The length is a power of two, the first
 * at least BKT_MUL intervals long: 3 where 4 had the 1M decode graph's
 * buckets twice as long (256 instants for intervals of 36.5 on average,
 * against 128 at 100k for 31), each fit in one bucket reading past twice
 * as many entries and each insert moving twice as many up (3.90G to
 * 3.76G instructions); 10k, 100k and the training steps keep their
 * lengths or gain (OLMoE's first layout 108M to 104M).  No more buckets
 * than intervals.  An interval of length l (at most the run) is in at
 * most l / length + 2 buckets, so the intervals are in at most
 * 1 / BKT_MUL + 2 buckets each on average: the room the buckets need
 * is known to be small from the length alone (the length was widened
 * until it was at most 4 entries an interval, which it always was).
 * Return: 0, or -ENOMEM.
 */
#define BKT_MUL		3

int hu_arena__bkt_setup(struct placer *p, const bool *whole)
{
	uint64_t run = p->t1 - p->t0;
	double sum = 0;
	size_t m = 0, m_off = 0, total;

	for (uint32_t i = 0; i < p->n; i++) {
		if (whole[i])
			continue;
		if (by_offset(p, i)) {
			m_off++;
			continue;
		}
		m++;
		sum += (double)(len(&p->v[i]) < run ? len(&p->v[i]) : run);
	}
	p->many = 4 * m_off > m;
	p->nlong = (uint32_t)m_off;
	if (!m)
		return 0;
	for (p->bshift = p->plain ? 63 : 0; p->bshift < 63 &&
	     ((double)(1ULL << p->bshift) < BKT_MUL * sum / (double)m ||
	      (run >> p->bshift) >= m);)
		p->bshift++;
	p->nbkt = p->plain ? 1 : (uint32_t)((run >> p->bshift) + 1);
	if (bkt_count(p, whole, m, m_off, &total))
		return -ENOMEM;
	/* each bucket's room has one more, for its sentinel (BKT_STOP) */
	p->bent = hu_malloc_huge((total + p->nbkt) * sizeof(*p->bent));
	p->unn = hu_calloc_huge(p->nbkt, sizeof(*p->unn));
	p->bun = hu_malloc_huge((size_t)p->nbkt * UNION_ROOM *
				sizeof(*p->bun));
	p->runs = hu_malloc_huge(2 * (size_t)p->nbkt * sizeof(*p->runs));
	/*
	 * A fit's spans: each bucket gives at most one for each interval it
	 * holds (the buckets' unions count some twice), so at most total.
	 */
	if (total > p->n) {
		struct span *c = hu_realloc_huge(p->cand, total * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->cand = c;
	}
	p->cand2 = hu_malloc_huge((total > p->n ? total : p->n) *
				  sizeof(*p->cand2));
	if (!p->bent || !p->unn || !p->bun || !p->runs || !p->cand2)
		return -ENOMEM;
	/*
	 * each bucket's room: the intervals that share time with it, those
	 * that start in it or before less those that end before it, and
	 * its sentinel
	 */
	for (uint32_t b = 0, live = 0; b < p->nbkt; b++) {
		live += (uint32_t)p->bfirst[b + 1] - p->bn[b];
		p->bfirst[b + 1] = p->bfirst[b] + live + 1;
	}
	return 0;
}
