// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The arena placer's offset order (util/arena.c): the placed intervals
 * in offset order in blocks, each with the 64ths of the run it touches
 * and its start instants, by which a fit passes a block over whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena_int.h"
#include "util/huge.h"

/**
 * hu_arena__ins_top() - ins_skip()'s T and witness over the instants of a
 * block inside a fit
 * @t: the block's first instant after the fit's start (the sentinel, or
 *     one at or after @ve, ends them)
 * @in: what is live at it, and at those after
 * @ve: the fit's end
 * @bytes: its size
 * @cut: the scan's top plus @bytes: a witness's lowest entry is below it
 * @top: T so far (from the instant before @t), and @wit whether one at it
 *       is a witness
 * @wit: see @top
 * @cur: the scan's top
 *
 * T first, the highest top, then, only where T is above the scan (else no
 * witness is asked for), a witness among the instants at T, walked back
 * from the last inside the fit to the first at T: the same answer as the
 * one walk that keeps both.  Walked back, as on a training step's layout
 * the entries live at once grow as the step goes on and a witness lies
 * near the end (DeepSeek-V2-Lite's plan layout: 4.4M instants walked
 * forward, 2.4M back).  Both walks go by pointer, forward two instants a
 * step, back returning at the first witness: 6 and 5 instructions an
 * instant where they took 9 and 9 by index (the layout's 72.2M to 52.8M).
 *
 * Return: T, and whether an instant at T is a witness.
 */
struct ins_top hu_arena__ins_top(const uint64_t *t, const struct oins *in,
				 uint64_t ve, uint64_t bytes, uint64_t cut,
				 uint64_t top, bool wit, uint64_t cur)
{
	const struct oins *at = in, *x = in;

	/*
	 * two at a time while both are inside (the second is read only
	 * after the first: past the sentinel lies the next block's), then
	 * the last alone
	 */
	for (; t[0] < ve && t[1] < ve; t += 2, x += 2) {
		if (x[0].top > top) {
			top = x[0].top;
			at = x;
			wit = false;
		}
		if (x[1].top > top) {
			top = x[1].top;
			at = x + 1;
			wit = false;
		}
	}
	if (*t < ve) {
		if (x->top > top) {
			top = x->top;
			at = x;
			wit = false;
		}
		x++;
	}
	if (top <= cur)
		return (struct ins_top){ top, false };
	if (wit)
		return (struct ins_top){ top, true };
	while (x > at) {
		x--;
		if (x->top == top && x->free < bytes && x->lo < cut)
			return (struct ins_top){ top, true };
	}
	return (struct ins_top){ top, false };
}

/*
 * The highest offset block @id's entries reach, and the widest hole a scan
 * of all of them finds past its first entry: where an entry starts above
 * every end below it.
 */
static void blk_span(struct placer *p, uint32_t id)
{
	const struct oent *e = &p->ents[(size_t)id * OBLK];
	struct oblk *bk = &p->blk[id];
	uint64_t top = 0, gap = 0;

	for (uint32_t j = 0; j < bk->n; j++) {
		if (j && e[j].lo > top && e[j].lo - top > gap)
			gap = e[j].lo - top;
		if (e[j].hi > top)
			top = e[j].hi;
	}
	bk->top = top;
	bk->gap = gap;
}

/*
 * Entries live at one instant share time, so they never share a byte:
 * what they leave free between the lowest and the highest is that span
 * less their sizes, exact as they join (the widest hole would only be a
 * bound: an entry that joins between two only narrows a hole).  Entry
 * @x joins instant @in.
 */
static inline void ins_join(struct oins *in, const struct oent *x)
{
	if (x->lo < in->lo) {
		in->free += in->lo - x->lo;
		in->lo = x->lo;
	}
	if (x->hi > in->top) {
		in->free += x->hi - in->top;
		in->top = x->hi;
	}
	in->free -= x->hi - x->lo;
	if (x->end < in->min_end)
		in->min_end = x->end;
}

/* Entry @j joins the mask @m of an instant (p->smask). */
static inline void mask_join(uint64_t *m, uint32_t j)
{
	m[j / 64] |= 1ULL << (j % 64);
}

/*
 * Block @id's @k-th start instant, from the entries live then (and its
 * mask, if kept).
 */
static void ins_fill(struct placer *p, uint32_t id, uint32_t k)
{
	const struct oent *e = &p->ents[(size_t)id * OBLK];
	uint64_t t = p->sat[(size_t)id * (OBLK + 1) + k];
	struct oins *in = &p->sins[(size_t)id * OBLK + k];
	uint64_t *m = p->smask ? &p->smask[2 * ((size_t)id * OBLK + k)] :
		      NULL;
	bool any = false;

	if (m)
		memset(m, 0, 2 * sizeof(*m));
	for (uint32_t j = 0; j < p->blk[id].n; j++) {
		if (e[j].start > t || e[j].end <= t)
			continue;
		if (!any)
			*in = (struct oins){ e[j].lo, e[j].lo, 0, UINT64_MAX };
		ins_join(in, &e[j]);
		if (m)
			mask_join(m, j);
		any = true;
	}
}

/*
 * Entry @pos of block @id and those above it move up one (an entry
 * comes in at @pos): so do their bits in each instant's mask.
 */
static void masks_open(struct placer *p, uint32_t id, uint32_t pos)
{
	uint64_t *m = &p->smask[2 * (size_t)id * OBLK];
	uint32_t ns = p->blk[id].ns;

	if (pos < 64) {
		uint64_t low = (1ULL << pos) - 1;

		for (uint32_t k = 0; k < ns; k++, m += 2) {
			m[1] = m[1] << 1 | m[0] >> 63;
			m[0] = (m[0] & low) | (m[0] & ~low) << 1;
		}
	} else {
		uint64_t low = (1ULL << (pos - 64)) - 1;

		for (uint32_t k = 0; k < ns; k++, m += 2)
			m[1] = (m[1] & low) | (m[1] & ~low) << 1;
	}
}

/*
 * Entry @x (of some length), already among block @id's entries (its
 * @pos-th), joins the instants it is live at, its start one of them: a
 * new one is made from the instant before it when that one's entries
 * all outlive it (those and @x are live then), else read from the
 * entries.  True when read: it then holds every entry live at @x's
 * start, @x among them.  The masks, if kept, the same way.
 */
static bool ins_add(struct placer *p, uint32_t id, const struct oent *x,
		    uint32_t pos)
{
	uint64_t *t = &p->sat[(size_t)id * (OBLK + 1)];
	struct oins *in = &p->sins[(size_t)id * OBLK];
	uint64_t *m = p->smask ? &p->smask[2 * (size_t)id * OBLK] : NULL;
	struct oblk *bk = &p->blk[id];
	uint32_t lo = 0, hi = bk->ns, k, i;
	bool read = false;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t[mid] < x->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	k = lo;
	if (t[k] != x->start) {
		/* the sentinel moves up with the others */
		memmove(&t[k + 1], &t[k], (bk->ns - k + 1) * sizeof(*t));
		memmove(&in[k + 1], &in[k], (bk->ns - k) * sizeof(*in));
		if (m)
			memmove(&m[2 * k + 2], &m[2 * k],
				2 * (bk->ns - k) * sizeof(*m));
		t[k] = x->start;
		bk->ns++;
		/* one more instant before each pin after it */
		for (i = p->pin_step ? pin_of(p, x->start) + 1 : NPIN;
		     i < NPIN; i = (i | 7) + 1)
			p->sq[(size_t)id * (NPIN / 8) + i / 8] +=
				0x0101010101010101ULL << (8 * (i % 8));
		/*
		 * At a new first instant @x is live alone: any other would
		 * have started before it, at an instant.
		 */
		if (!k) {
			in[k] = (struct oins){ x->lo, x->lo, 0, UINT64_MAX };
			if (m)
				memset(m, 0, 2 * sizeof(*m));
		} else if (in[k - 1].min_end > x->start) {
			in[k] = in[k - 1];
			if (m) {
				m[2 * k] = m[2 * k - 2];
				m[2 * k + 1] = m[2 * k - 1];
			}
		} else {
			ins_fill(p, id, k++);
			read = true;
		}
	}
	for (i = k; m && t[i] < x->end; i++)
		mask_join(&m[2 * i], pos);
	for (; t[k] < x->end; k++)
		ins_join(&in[k], x);
	return read;
}

/*
 * Block @id's start instants from its entries, taken by start as
 * ins_add() takes them one at a time (most instants are then made from
 * the one before); those that start at an instant read from the entries
 * are in it already.
 */
static void ins_build(struct placer *p, uint32_t id)
{
	const struct oent *e = &p->ents[(size_t)id * OBLK];
	struct oblk *bk = &p->blk[id];
	uint64_t last = 0;
	uint8_t by[OBLK];
	bool read = false;

	bk->ns = 0;
	bk->nzero = 0;
	p->sat[(size_t)id * (OBLK + 1)] = UINT64_MAX;
	memset(&p->sq[(size_t)id * (NPIN / 8)], 0, NPIN);
	for (uint32_t j = 0, k; j < bk->n; j++) {
		for (k = j; k && e[by[k - 1]].start > e[j].start; k--)
			by[k] = by[k - 1];
		by[k] = (uint8_t)j;
	}
	for (uint32_t j = 0; j < bk->n; j++) {
		const struct oent *x = &e[by[j]];

		if (x->end <= x->start) {
			bk->nzero++;
		} else if (!read || x->start != last) {
			read = ins_add(p, id, x, by[j]);
			last = x->start;
		}
	}
}

/* Inserts a placed interval into the offset order. */
void hu_arena__ord_insert(struct placer *p, const struct oent *x)
{
	uint32_t lo = 0, hi = p->nblk, b, id, n, pos;
	struct oent *e;

	if (!p->nblk) {
		p->blk[0] = (struct oblk){ .min_start = UINT64_MAX,
					   .min_end = UINT64_MAX };
		ins_build(p, 0);
		p->bord[0] = 0;
		p->nblk = 1;
	}
	/* the last block starting at or below x, else the first */
	while (p->blk[p->bord[0]].n && lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->ents[(size_t)p->bord[mid] * OBLK].lo <= x->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	b = lo ? lo - 1 : 0;
	id = p->bord[b];
	if (p->blk[id].n == OBLK) {
		uint32_t nid = p->nblk, half = OBLK / 2;
		struct oblk *bk;

		memcpy(&p->ents[(size_t)nid * OBLK],
		       &p->ents[(size_t)id * OBLK + half],
		       (OBLK - half) * sizeof(*p->ents));
		p->blk[id].n = half;
		p->blk[nid].n = OBLK - half;
		for (uint32_t k = 0; k < 2; k++) {
			bk = &p->blk[k ? nid : id];
			e = &p->ents[(size_t)(k ? nid : id) * OBLK];
			bk->min_start = bk->min_end = UINT64_MAX;
			bk->max_start = bk->max_end = 0;
			bk->when = 0;
			for (uint32_t j = 0; j < bk->n; j++) {
				bk->when |= when_of(p, e[j].start, e[j].end);
				if (e[j].start < bk->min_start)
					bk->min_start = e[j].start;
				if (e[j].start > bk->max_start)
					bk->max_start = e[j].start;
				if (e[j].end > bk->max_end)
					bk->max_end = e[j].end;
				if (e[j].end < bk->min_end)
					bk->min_end = e[j].end;
			}
			blk_span(p, k ? nid : id);
			ins_build(p, k ? nid : id);
		}
		memmove(&p->bord[b + 2], &p->bord[b + 1],
			(p->nblk - b - 1) * sizeof(*p->bord));
		p->bord[b + 1] = nid;
		p->nblk++;
		if (x->lo >= p->ents[(size_t)nid * OBLK].lo)
			id = nid;
	}
	e = &p->ents[(size_t)id * OBLK];
	n = p->blk[id].n;
	for (lo = 0, hi = n; lo < hi;) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (e[mid].lo <= x->lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	pos = lo;
	memmove(&e[pos + 1], &e[pos], (n - pos) * sizeof(*e));
	e[pos] = *x;
	if (p->smask && pos < n)
		masks_open(p, id, pos);
	p->blk[id].n = n + 1;
	p->blk[id].when |= when_of(p, x->start, x->end);
	if (x->start < p->blk[id].min_start)
		p->blk[id].min_start = x->start;
	if (x->end > p->blk[id].max_end)
		p->blk[id].max_end = x->end;
	if (x->start > p->blk[id].max_start)
		p->blk[id].max_start = x->start;
	if (x->end < p->blk[id].min_end)
		p->blk[id].min_end = x->end;
	if (pos == n && n) {
		/*
		 * last in offset order: blk_span()'s scan would read the
		 * others as before, then it (the hole below it and the top),
		 * so that step alone (13M of OLMoE --compare's 101M here)
		 */
		struct oblk *bk = &p->blk[id];

		if (x->lo > bk->top && x->lo - bk->top > bk->gap)
			bk->gap = x->lo - bk->top;
		if (x->hi > bk->top)
			bk->top = x->hi;
	} else {
		blk_span(p, id);
	}
	if (x->end > x->start)
		(void)ins_add(p, id, x, pos);
	else
		p->blk[id].nzero++;
}
