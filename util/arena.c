// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Offline placement of intervals in one arena (dynamic storage
 * allocation, NP-hard in general).  Greedy placements are cheap, and on
 * compute graphs one of them is usually within a few percent of the live
 * peak, so several are tried and the lowest is kept: by size (TFLite's
 * "greedy by size", XLA's size heap), by lifetime, by area (size x
 * lifetime) and by start, each placing at the lowest offset that fits or
 * in the tightest hole that fits.  Offload schedules are harder: a budget
 * keeps weights of a few sizes for irregular spans, and every greedy
 * order leaves holes (15% on the demo).  A bounded randomised search
 * around the area order then takes a good part of that back (to 8%).
 *
 * Intervals live over the whole span (tensors resident from start to end)
 * overlap everything and are stacked at the bottom first: the search
 * never sees them, which keeps each query short when most weights stay
 * resident.  For the others a fit needs, bottom up, the placed intervals
 * that share time with it, found one of two ways (the same offsets
 * either way, chosen by which costs less on these intervals):
 *  - by time: a max-end segment tree over the intervals sorted by start,
 *    holding only the placed, then a sort by offset: O(log n + k log k)
 *    where k is how many placed intervals overlap the one placed, for a
 *    long run where few are live at once (decode);
 *  - by offset: every placed interval kept in offset order, in blocks
 *    that know the time they cover, read bottom up until a first fit is
 *    found: O(placed), no sort, for runs where most overlap (training);
 *    a block is passed over whole when the entries that live at one
 *    instant inside the fit (one of 64 pins across the run) reach its
 *    top with no hole the fit would take;
 * and in a long run, the intervals at least a 64th of it long (KV
 * blocks, prefetched weights) by offset and the rest by time, the two
 * merged by offset.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "sort.h"

struct key {
	uint64_t k[3];
	uint32_t i;
};

struct span {
	uint64_t lo, hi;
};

/*
 * The placed intervals in offset order, in blocks of at most OBLK sorted
 * entries (a block splits in two when full), each block with the span of
 * time its entries cover and the 64ths of the run they touch: a fit reads
 * them bottom up, skipping the blocks that share no time with it.
 */
#define OBLK	64

struct oent {
	uint64_t lo, hi, start, end;
};

struct oblk {
	uint32_t n;
	uint64_t min_start, max_end;
	uint64_t max_start, min_end;	/* all share time with [max_start, min_end) */
	uint64_t when;		/* which 64ths of the run its entries touch */
	uint64_t top;		/* the highest end of its entries' offsets */
	uint64_t gap;		/* the widest hole between its entries, bottom up */
};

/*
 * Block b's entries live at pin i (instant t0 + i * pin_step, one of 64
 * across the run), kept in pins[b * NPIN + i] as they are inserted: the
 * lowest offset of one, the highest end, and a bound on the widest hole
 * between them (an entry inserted among them only narrows holes).
 */
#define NPIN	64

struct opin {
	uint64_t lo, top, gap;
	bool any;
};

struct placer {
	struct hu_ival *v;
	uint32_t n;
	uint32_t *by_start;	/* interval indices sorted by start */
	uint32_t *rank;		/* interval index -> its place in by_start */
	uint64_t *tree;		/* max end of the placed, over by_start ranges */
	struct span *at;	/* by_start position -> its offsets, if placed */
	uint32_t leaves;
	uint64_t *off;		/* this attempt's offsets */
	struct span *cand;
	uint32_t nr_cand;
	uint64_t base;		/* stacked whole-span intervals */
	/* the offset order, for intervals at least long_len long (ents) */
	uint64_t long_len;
	uint64_t t0, t1;	/* the run, for the 64ths */
	uint64_t pin_step;	/* the 64 pins: t0 + i * pin_step; 0: none */
	struct oent *ents;	/* block b's entries at ents[b * OBLK] */
	struct oblk *blk;
	struct opin *pins;	/* block b's pins at pins[b * NPIN] */
	uint32_t *bord;		/* the blocks, bottom first */
	uint32_t nblk;
};

/*
 * Keys by their three words, then by interval: no two are equal, so the
 * sort's order is the one order they have (util/sort.h).
 */
static inline bool key_before(const struct key *x, const struct key *y)
{
	for (int i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i];
	return x->i < y->i;
}

HU_DEFINE_SORT(sort_keys, struct key, key_before)

/*
 * The spans of one fit by offset (util/sort.h).  Spans of positive size
 * that share an offset do not overlap in time, so the fit reads the same
 * whichever of them comes first.
 */
static inline bool span_before(const struct span *x, const struct span *y)
{
	return x->lo < y->lo;
}

HU_DEFINE_SORT(sort_spans, struct span, span_before)

static uint64_t len(const struct hu_ival *v)
{
	return v->end - v->start;
}

static uint64_t area(const struct hu_ival *v)
{
	uint64_t a;

	return __builtin_mul_overflow(v->bytes, len(v), &a) ? UINT64_MAX : a;
}

/* Orders: 0 size, 1 lifetime, 2 area, 3 start.  Larger first but start. */
#define NR_ORDERS	4
#define SEARCH_ROUNDS	256

static void make_key(struct key *k, const struct hu_ival *v, uint32_t i,
		     int order)
{
	switch (order) {
	case 0:
		*k = (struct key){ { ~v->bytes, ~len(v), v->start }, i };
		break;
	case 1:
		*k = (struct key){ { ~len(v), ~v->bytes, v->start }, i };
		break;
	case 2:
		*k = (struct key){ { ~area(v), ~v->bytes, v->start }, i };
		break;
	default:
		*k = (struct key){ { v->start, ~v->bytes, ~len(v) }, i };
		break;
	}
}

/*
 * The offsets of every placed interval in by_start[0..limit) whose end is
 * past @start: those that share time with one starting at @start and
 * ending where by_start[limit] starts.  The tree holds only the placed
 * (0 for the others), so no branch is walked for an interval that does
 * not count.
 */
static void collect(struct placer *p, uint32_t node, uint32_t lo,
		    uint32_t width, uint32_t limit, uint64_t start)
{
	while (lo < limit && p->tree[node] > start) {
		if (width == 1) {
			p->cand[p->nr_cand++] = p->at[lo];
			return;
		}
		width /= 2;
		collect(p, 2 * node, lo, width, limit, start);
		node = 2 * node + 1;
		lo += width;
	}
}

/* Interval @i is placed at @off: it counts in the next fits. */
static void mark_placed(struct placer *p, uint32_t i, uint64_t off)
{
	uint32_t node = p->leaves + p->rank[i];
	uint64_t end = p->v[i].end;

	p->off[i] = off;
	p->at[p->rank[i]] = (struct span){ off, off + p->v[i].bytes };
	for (; node && p->tree[node] < end; node /= 2)
		p->tree[node] = end;
}

/* How many intervals start before @t. */
static uint32_t starts_before(const struct placer *p, uint64_t t)
{
	uint32_t lo = 0, hi = p->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->v[p->by_start[mid]].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A fit reads the spans that share time with its interval from the bottom
 * up: a hole is where the next span starts above the highest end so far.
 */
struct scan {
	uint64_t cur, bytes, pick, pick_gap;
	bool best;
};

/* One more span; true when the first fit is found (at s->cur). */
static inline bool scan_span(struct scan *s, uint64_t lo, uint64_t hi)
{
	if (lo >= s->cur + s->bytes) {
		uint64_t gap = lo - s->cur;

		if (!s->best)
			return true;
		if (gap < s->pick_gap) {
			s->pick = s->cur;
			s->pick_gap = gap;
		}
	}
	if (hi > s->cur)
		s->cur = hi;
	return false;
}

/*
 * The 64ths of the run that [start, end) touches, as bits: two intervals
 * that share time share a bit (an empty one is given the 64th it sits in).
 */
static uint64_t when(const struct placer *p, uint64_t start, uint64_t end)
{
	uint64_t span = p->t1 - p->t0 + 1, a, b;

	if (!span)		/* a run of all 2^64 instants */
		return ~0ULL;
	start = start < p->t0 ? 0 : start - p->t0;
	end = end > p->t1 ? p->t1 - p->t0 + 1 : end - p->t0;
	end = end > start ? end - 1 : start;
	if (start >= span)
		start = span - 1;
	if (end >= span)
		end = span - 1;
	a = (uint64_t)((unsigned __int128)start * 64 / span);
	b = (uint64_t)((unsigned __int128)end * 64 / span);
	return (~0ULL >> (63 - (b - a))) << a;
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
 * The pins [*@a, *@b] that [@start, @end) holds: false when none.  An
 * entry that holds a pin inside a fit shares time with it.
 */
static bool pins_in(const struct placer *p, uint64_t start, uint64_t end,
		    uint64_t *a, uint64_t *b)
{
	if (!p->pin_step || end <= p->t0)
		return false;
	*a = start > p->t0 ? (start - p->t0 - 1) / p->pin_step + 1 : 0;
	*b = (end - 1 - p->t0) / p->pin_step;
	if (*b > NPIN - 1)
		*b = NPIN - 1;
	return *a <= *b;
}

/*
 * Entry @x joins block @id's pins that it holds.  Its hole below it, if
 * it comes first, or above the others, if it comes last, is exact; in
 * between it only narrows a hole, so the widest stays a bound.
 */
static void pin_add(struct placer *p, uint32_t id, const struct oent *x)
{
	uint64_t a, b;

	if (!pins_in(p, x->start, x->end, &a, &b))
		return;
	for (uint64_t i = a; i <= b; i++) {
		struct opin *pn = &p->pins[(size_t)id * NPIN + i];

		if (!pn->any) {
			*pn = (struct opin){ x->lo, x->hi, 0, true };
			continue;
		}
		if (x->lo < pn->lo) {
			if (pn->lo > x->hi && pn->lo - x->hi > pn->gap)
				pn->gap = pn->lo - x->hi;
			pn->lo = x->lo;
		} else if (x->lo > pn->top && x->lo - pn->top > pn->gap) {
			pn->gap = x->lo - pn->top;
		}
		if (x->hi > pn->top)
			pn->top = x->hi;
	}
}

/* Block @id's pins from its entries, bottom up. */
static void blk_pins(struct placer *p, uint32_t id)
{
	const struct oent *e = &p->ents[(size_t)id * OBLK];

	memset(&p->pins[(size_t)id * NPIN], 0, NPIN * sizeof(*p->pins));
	for (uint32_t j = 0; j < p->blk[id].n; j++)
		pin_add(p, id, &e[j]);
}

/* Inserts a placed interval into the offset order. */
static void ord_insert(struct placer *p, const struct oent *x)
{
	uint32_t lo = 0, hi = p->nblk, b, id, n, pos;
	struct oent *e;

	if (!p->nblk) {
		p->blk[0] = (struct oblk){ .min_start = UINT64_MAX,
					   .min_end = UINT64_MAX };
		blk_pins(p, 0);
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
				bk->when |= when(p, e[j].start, e[j].end);
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
			blk_pins(p, k ? nid : id);
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
	p->blk[id].n = n + 1;
	p->blk[id].when |= when(p, x->start, x->end);
	if (x->start < p->blk[id].min_start)
		p->blk[id].min_start = x->start;
	if (x->end > p->blk[id].max_end)
		p->blk[id].max_end = x->end;
	if (x->start > p->blk[id].max_start)
		p->blk[id].max_start = x->start;
	if (x->end < p->blk[id].min_end)
		p->blk[id].min_end = x->end;
	blk_span(p, id);
	pin_add(p, id, x);
}

/*
 * The scan of one fit: the placed spans that share time with @v, bottom
 * up, those found by time (sorted here) merged with those kept in offset
 * order (read in order, less the blocks that share no time with @v).
 * Spans of positive size at one offset share no time with each other,
 * so the order between them does not change the fit: both ways, and any
 * mix of them, give the same offset.  True when a first fit is found.
 */
static bool fit_scan(struct placer *p, const struct hu_ival *v,
		     struct scan *s)
{
	uint64_t w = p->nblk ? when(p, v->start, v->end) : 0;
	const struct opin *pin = NULL, *pn;
	uint32_t j = 0, k;
	uint64_t a, z;

	/* the pin in the middle of those @v holds */
	if (p->nblk && pins_in(p, v->start, v->end, &a, &z))
		pin = &p->pins[a + (z - a) / 2];

	p->nr_cand = 0;
	collect(p, 1, 0, p->leaves, starts_before(p, v->end), v->start);
	k = p->nr_cand;
	sort_spans(p->cand, k);
	for (uint32_t b = 0; b < p->nblk; b++) {
		const struct oblk *bk = &p->blk[p->bord[b]];
		const struct oent *e = &p->ents[(size_t)p->bord[b] * OBLK];

		if (bk->max_end <= v->start || bk->min_start >= v->end ||
		    !(bk->when & w))
			continue;
		/*
		 * A block whose entries all share time with @v, with no hole
		 * as wide as @v inside it nor below its first entry, only
		 * raises the scan to its top (less any span found by time
		 * that comes inside it).
		 */
		for (; j < k && p->cand[j].lo < e[0].lo; j++)
			if (scan_span(s, p->cand[j].lo, p->cand[j].hi))
				return true;
		if (bk->max_start < v->end && bk->min_end > v->start &&
		    bk->gap < s->bytes && e[0].lo < s->cur + s->bytes &&
		    (j == k || p->cand[j].lo >= e[bk->n - 1].lo)) {
			if (bk->top > s->cur)
				s->cur = bk->top;
			continue;
		}
		/*
		 * Or whose entries live at a pin inside @v (they share time
		 * with it, and any other that does only fills) reach its top
		 * with no hole as wide as @v between them nor below them.
		 */
		pn = pin ? &pin[(size_t)p->bord[b] * NPIN] : NULL;
		if (pn && pn->any && pn->top == bk->top &&
		    pn->gap < s->bytes && pn->lo < s->cur + s->bytes &&
		    (j == k || p->cand[j].lo >= e[bk->n - 1].lo)) {
			if (bk->top > s->cur)
				s->cur = bk->top;
			continue;
		}
		for (uint32_t x = 0; x < bk->n; x++) {
			if (e[x].start >= v->end || e[x].end <= v->start)
				continue;
			for (; j < k && p->cand[j].lo < e[x].lo; j++)
				if (scan_span(s, p->cand[j].lo, p->cand[j].hi))
					return true;
			if (scan_span(s, e[x].lo, e[x].hi))
				return true;
		}
	}
	for (; j < k; j++)
		if (scan_span(s, p->cand[j].lo, p->cand[j].hi))
			return true;
	return false;
}

/* One interval: the lowest hole that fits, or the tightest with @best. */
static uint64_t fit(struct placer *p, uint32_t i, bool best)
{
	const struct hu_ival *v = &p->v[i];
	struct scan s = { p->base, v->bytes, UINT64_MAX, UINT64_MAX, best };

	if (fit_scan(p, v, &s))
		return s.cur;
	return s.pick != UINT64_MAX ? s.pick : s.cur;
}

/*
 * One greedy placement of @keys in order.  Its height only grows as it
 * goes, so it stops, returning UINT64_MAX, once the height reaches
 * @limit: the caller keeps a placement only if it is lower than some
 * height it already has, and one that tall would not be kept.
 */
static uint64_t attempt(struct placer *p, const struct key *keys, uint32_t nk,
			bool best, uint64_t limit)
{
	uint64_t height = p->base;

	memset(p->tree, 0, 2 * (size_t)p->leaves * sizeof(*p->tree));
	p->nblk = 0;
	for (uint32_t j = 0; j < nk; j++) {
		uint32_t i = keys[j].i;
		uint64_t off = fit(p, i, best);

		if (p->ents && len(&p->v[i]) >= p->long_len) {
			p->off[i] = off;
			ord_insert(p, &(struct oent){ off, off + p->v[i].bytes,
						      p->v[i].start,
						      p->v[i].end });
		} else {
			mark_placed(p, i, off);
		}
		if (off + p->v[i].bytes > height)
			height = off + p->v[i].bytes;
		if (height >= limit)
			return UINT64_MAX;
	}
	return height;
}

uint64_t hu_arena_live_peak(const struct hu_ival *v, uint32_t n)
{
	struct key *ev = malloc(2 * (size_t)(n ?: 1) * sizeof(*ev));
	uint64_t live = 0, peak = 0;

	if (!ev)
		return 0;
	/* Ends sort before starts at the same time: [start, end). */
	for (uint32_t i = 0; i < n; i++) {
		ev[2 * i] = (struct key){ { v[i].start, 1, v[i].bytes }, i };
		ev[2 * i + 1] = (struct key){ { v[i].end, 0, v[i].bytes }, i };
	}
	sort_keys(ev, 2 * (size_t)n);
	for (size_t i = 0; i < 2 * (size_t)n; i++) {
		if (ev[i].k[1])
			live += ev[i].k[2];
		else
			live -= ev[i].k[2];
		if (live > peak)
			peak = live;
	}
	free(ev);
	return peak;
}

static int setup(struct placer *p, struct key *keys)
{
	uint32_t n = p->n;

	/* by start, then by index */
	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct key){ { p->v[i].start }, i };
	sort_keys(keys, n);
	for (uint32_t i = 0; i < n; i++) {
		p->by_start[i] = keys[i].i;
		p->rank[keys[i].i] = i;
	}
	for (p->leaves = 1; p->leaves < n; p->leaves *= 2)
		;
	p->tree = calloc(2 * (size_t)p->leaves, sizeof(*p->tree));
	return p->tree ? 0 : -ENOMEM;
}

static inline bool u64_before(const uint64_t *x, const uint64_t *y)
{
	return *x < *y;
}

HU_DEFINE_SORT(sort_u64, uint64_t, u64_before)

/* How many of the @m values in sorted @a are below @x (or at most @x). */
static size_t count_below(const uint64_t *a, size_t m, uint64_t x, bool eq)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < x || (eq && a[mid] == x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Which way the fits go.  By time, a fit collects and sorts the placed
 * intervals it shares time with, O(k log k) for k of them; by offset, it
 * reads every placed interval kept in offset order (less the blocks that
 * share no time with it), O(placed).  A training step keeps most
 * activations live from the forward pass to the backward: every interval
 * by offset.  Elsewhere (a long run of decode steps: few live at a time
 * among very many) the intervals at least a 64th of the run long, which
 * a fit meets often (KV blocks, and under a budget the weights
 * prefetched a few layers ahead), are kept by offset, where the blocks'
 * 64ths skip most of those a fit does not meet, and the rest by time
 * (a quarter of the run took twice as long on a 100k-operator decode
 * plan under a budget: 400 intervals to sort a fit).  The estimate: k is about half the intervals each
 * one overlaps (half are placed), the placed about half of all.  Every
 * way gives the same offsets.  Return: 0, or -ENOMEM.
 */
#define LONG_DIV	64

static int choose_way(struct placer *p, const bool *whole,
		      enum hu_arena_way way)
{
	uint64_t *st, *en, t0 = UINT64_MAX, t1 = 0;
	double pairs = 0, k;
	size_t m = 0, nb;

	for (uint32_t i = 0; i < p->n; i++) {
		if (whole[i])
			continue;
		m++;
		if (p->v[i].start < t0)
			t0 = p->v[i].start;
		if (p->v[i].start > t1)
			t1 = p->v[i].start;
		if (p->v[i].end != UINT64_MAX && p->v[i].end > t1)
			t1 = p->v[i].end;
	}
	p->long_len = m ? (t1 - t0) / LONG_DIV + 1 : 0;
	p->t0 = m ? t0 : 0;
	p->t1 = m ? t1 : 0;
	p->pin_step = m && t1 - t0 < UINT64_MAX ? (t1 - t0) / 64 + 1 : 0;
	if (way == HU_ARENA_BY_TIME || !m)
		return 0;
	if (way == HU_ARENA_BY_OFFSET) {
		p->long_len = 0;
		goto ordered;
	}
	if (way == HU_ARENA_SPLIT)
		goto ordered;
	m = 0;
	st = malloc(p->n * sizeof(*st));
	en = st ? malloc(p->n * sizeof(*en)) : NULL;
	if (!en) {
		free(st);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->n; i++)
		if (!whole[i]) {
			st[m] = p->v[i].start;
			en[m++] = p->v[i].end;
		}
	sort_u64(st, m);
	sort_u64(en, m);
	for (uint32_t i = 0; i < p->n; i++)
		if (!whole[i])
			pairs += (double)count_below(st, m, p->v[i].end, false) -
				 (double)count_below(en, m, p->v[i].start, true) - 1;
	free(en);
	free(st);
	k = pairs > 0 ? pairs / m / 2 : 0;
	/* 4 k log2(k) against the placed: about what each costs */
	if (4 * k * (64 - __builtin_clzll((uint64_t)k + 2)) >= m / 2.0)
		p->long_len = 0;
ordered:
	nb = 2 * (size_t)m / OBLK + 2;
	p->blk = malloc(nb * sizeof(*p->blk));
	p->bord = malloc(nb * sizeof(*p->bord));
	p->ents = malloc(nb * OBLK * sizeof(*p->ents));
	p->pins = malloc(nb * NPIN * sizeof(*p->pins));
	return p->blk && p->bord && p->ents && p->pins ? 0 : -ENOMEM;
}

/* Pseudo-random in [0, 1): deterministic (an LCG), no global state. */
static double rnd01(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*state >> 11) / (double)(1ULL << 53);
}

static uint64_t sat(double x)
{
	return x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
}

/*
 * Whether @keys come in the order @seq recorded.  The search's first round
 * scales nothing, so it is the greedy by area again unless rounding the
 * areas to doubles reorders them: when it does not, its height is known.
 */
static bool same_seq(const struct key *keys, uint32_t nk, const uint32_t *seq)
{
	if (!seq)
		return false;
	for (uint32_t j = 0; j < nk; j++)
		if (keys[j].i != seq[j])
			return false;
	return true;
}

/*
 * The search: the greedy by area (the best single order on offload
 * schedules, where long-lived large tensors must go low) with each
 * interval's key scaled by a factor, a few factors redrawn per round, a
 * round kept when it is no taller.  Stops at the live peak, which no
 * placement beats, when @effort placements are spent, or after
 * SEARCH_ROUNDS rounds (small schedules gain nothing from more).
 */
static void search(struct placer *p, struct key *keys, bool *whole,
		   const uint32_t *area_seq, uint64_t area_h, uint64_t floor,
		   uint64_t effort, bool prune, uint64_t *best)
{
	double *f = malloc(p->n * sizeof(*f)), *g = malloc(p->n * sizeof(*g));
	uint64_t state = 0x853c49e6748fea9bULL, cur = UINT64_MAX;
	uint32_t nk = 0;

	if (!f || !g)
		goto out;
	for (uint32_t i = 0; i < p->n; i++)
		f[i] = 1.0;
	for (uint64_t spent = 0, round = 0; *best > floor && spent < effort &&
	     round < SEARCH_ROUNDS; round++) {
		uint64_t h, limit = UINT64_MAX;

		memcpy(g, f, p->n * sizeof(*g));
		if (spent)
			for (uint32_t i = 0; i < p->n; i++)
				if (rnd01(&state) < 0.03)
					g[i] = 0.3 + 1.4 * rnd01(&state);
		nk = 0;
		for (uint32_t i = 0; i < p->n; i++)
			if (!whole[i])
				keys[nk++] = (struct key){
					{ ~sat((double)p->v[i].bytes *
					       (double)len(&p->v[i]) * g[i]),
					  ~p->v[i].bytes, p->v[i].start }, i };
		sort_keys(keys, nk);
		/*
		 * A round taller than the last kept is dropped, and the last
		 * round matters only if it is lower than the best.
		 */
		if (prune && (spent + (nk ? nk : 1) >= effort ||
			      round + 1 == SEARCH_ROUNDS))
			limit = *best;
		else if (prune && cur != UINT64_MAX)
			limit = cur + 1;
		h = !spent && same_seq(keys, nk, area_seq) ? area_h :
		    attempt(p, keys, nk, false, limit);
		spent += nk ? nk : 1;
		if (h > cur)
			continue;
		cur = h;
		memcpy(f, g, p->n * sizeof(*f));
		if (h < *best) {
			*best = h;
			for (uint32_t j = 0; j < nk; j++)
				p->v[keys[j].i].off = p->off[keys[j].i];
		}
	}
out:
	free(g);
	free(f);
}

int hu_arena_place(struct hu_ival *v, uint32_t n, uint64_t effort,
		   uint64_t *height)
{
	return hu_arena_place_way(v, n, effort, HU_ARENA_AUTO, height);
}

int hu_arena_place_way(struct hu_ival *v, uint32_t n, uint64_t effort,
		       enum hu_arena_way way, uint64_t *height)
{
	struct placer p = { .v = v, .n = n };
	bool prune = !(way & HU_ARENA_WHOLE);
	uint64_t t0 = UINT64_MAX, t1 = 0, floor, best = UINT64_MAX;
	uint64_t area_h = UINT64_MAX;
	uint32_t *area_seq = NULL;
	struct key *keys;
	bool *whole;
	uint32_t nk;
	int ret = -ENOMEM;

	*height = 0;
	if (!n)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].start < t0)
			t0 = v[i].start;
		if (v[i].end > t1)
			t1 = v[i].end;
	}
	keys = malloc(n * sizeof(*keys));
	whole = malloc(n * sizeof(*whole));
	p.by_start = malloc(n * sizeof(*p.by_start));
	p.rank = malloc(n * sizeof(*p.rank));
	p.off = malloc(n * sizeof(*p.off));
	p.cand = malloc(n * sizeof(*p.cand));
	p.at = malloc(n * sizeof(*p.at));
	if (!keys || !whole || !p.by_start || !p.rank || !p.off || !p.cand ||
	    !p.at || setup(&p, keys))
		goto out;
	/* Whole-span intervals at the bottom, in index order. */
	for (uint32_t i = 0; i < n; i++) {
		whole[i] = v[i].start == t0 && v[i].end == t1;
		if (whole[i]) {
			v[i].off = p.base;
			p.base += v[i].bytes;
		}
	}
	floor = hu_arena_live_peak(v, n);
	way &= ~HU_ARENA_WHOLE;
	if (choose_way(&p, whole, way))
		goto out;
	for (int order = 0; order < NR_ORDERS && best > floor; order++) {
		nk = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!whole[i])
				make_key(&keys[nk++], &v[i], i, order);
		sort_keys(keys, nk);
		for (int b = 0; b < 2 && best > floor; b++) {
			/*
			 * Only a lower one is kept, but the search's first
			 * round needs the greedy by area's height itself if
			 * more rounds follow it.
			 */
			bool whole_run = !prune || (order == 2 && !b &&
						    (nk ? nk : 1) < effort);
			uint64_t h = attempt(&p, keys, nk, b,
					     whole_run ? UINT64_MAX : best);

			if (order == 2 && !b) {
				/* the search's first round, if it runs */
				area_seq = malloc(n * sizeof(*area_seq));
				for (uint32_t j = 0; area_seq && j < nk; j++)
					area_seq[j] = keys[j].i;
				area_h = h;
			}
			if (h < best) {
				best = h;
				for (uint32_t j = 0; j < nk; j++)
					v[keys[j].i].off = p.off[keys[j].i];
			}
		}
	}
	search(&p, keys, whole, area_seq, area_h, floor, effort, prune, &best);
	*height = best;
	ret = 0;
out:
	free(area_seq);
	free(p.pins);
	free(p.ents);
	free(p.bord);
	free(p.blk);
	free(p.at);
	free(p.cand);
	free(p.off);
	free(p.rank);
	free(p.tree);
	free(p.by_start);
	free(whole);
	free(keys);
	return ret;
}
