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
 * either way):
 *  - by time: the run cut into buckets a few intervals long, each
 *    holding the placed intervals that share time with it in offset
 *    order; a fit reads the buckets it shares time with (most fits one,
 *    already in order; the runs of several merged), O(what the buckets
 *    hold), for a long run where few are live at once (decode).  For a
 *    fit of positive size, spans that overlap or touch are read as one
 *    (it only looks for holes between them), which keeps the merges of
 *    a long fit short;
 *  - by offset: every placed interval kept in offset order, in blocks
 *    that know the time they cover, read bottom up until a first fit is
 *    found: O(placed), no sort, for the long intervals a fit meets often;
 *    a block is passed over whole when its entries that share time with
 *    the fit, told by the block's start instants, stay below the scan or
 *    are covered by those live at one instant inside the fit;
 * the intervals at least a 64th of the run long (KV blocks, prefetched
 * weights, a training step's activations) by offset and the rest by time,
 * the two merged by offset.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "huge.h"
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
 * NPIN instants spread across the run (pins: t0 + i * pin_step) index
 * each block's start instants, where a fit's search for its start
 * begins.
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
	uint32_t ns;		/* its start instants (struct oins) */
	uint32_t nzero;		/* its entries of no length: no instants */
};

#define NPIN	64

/*
 * Block b's start instants: the distinct starts of its entries, sorted,
 * at sat[b * (OBLK + 1)] (then UINT64_MAX), and at each instant t the
 * entries live then (start <= t < end) at sins[b * OBLK]: their lowest
 * offset, highest end and the room they leave free between, with the
 * earliest end among them.  Every entry that shares time with a fit
 * [s, e) of positive length is live at the last instant at or before s
 * or at one inside (s, e) (its own start), and every entry live at an
 * instant in [s, e) shares time with the fit: so the instants tell,
 * without reading the entries, the highest end among those the fit
 * meets and whether the entries of one instant cover the way up to it.
 * An entry of no length is live at no instant yet meets a fit that holds
 * its start: a block with one (nzero) is read.  Byte i of
 * sq[b * NPIN / 8 ...] (byte i % 8 of its word i / 8, low first) counts
 * block b's instants before pin i, where a fit's search for its start
 * begins.
 */
struct oins {
	uint64_t lo, top;
	uint64_t free;		/* what they leave free in [lo, top) */
	uint64_t min_end;	/* the earliest end among them */
};

/*
 * An instant at which a placement under way is checked against the
 * height it must stay below (t UINT64_MAX: none), with the intervals
 * live then, largest first.  Kept: the live peak's (INST_PEAK), and
 * where the last few placements went over (the start of the interval
 * that lifted each over its limit).
 */
#define NINST		8
#define INST_PEAK	0
#define INST_OVER	1

struct inst {
	uint64_t t;
	uint32_t *live;
	uint32_t n;
};

/*
 * Groups of buckets: GRP^l buckets at level l, up to GRP_LEVELS levels (a
 * level of at least two groups).
 */
#define GRP_SHIFT	5
#define GRP_LEVELS	3

struct placer {
	struct hu_ival *v;
	uint32_t n;
	/*
	 * The time order, for the intervals shorter than long_len: the run
	 * cut into buckets of 2^bshift instants, each holding the placed
	 * intervals that share time with it in offset order, at
	 * bent[bfirst[b]] (room for every interval that may come), bn[b] of
	 * them.
	 */
	uint32_t nbkt, bshift;
	bool plain;		/* HU_ARENA_WHOLE: one bucket, no spans joined */
	bool no_inst;		/* HU_ARENA_NO_INSTANTS: nor start instants */
	size_t *bfirst;
	uint32_t *bn;
	struct oent *bent;
	/*
	 * Each bucket's offsets taken, at bun[bfirst[b]], unn[b] spans:
	 * the union of its intervals' [lo, hi] (closed, so touching ones
	 * are one), for the fits that share time with the whole bucket.
	 */
	struct span *bun;
	uint32_t *unn;
	/*
	 * The same for groups of buckets, GRP^l of them at level l (1 to
	 * ngl): level l's group j, of buckets [j GRP^l, (j + 1) GRP^l), is
	 * group gbase[l - 1] + j, its union at gun[gfirst[g]], gn[g] spans.
	 * A fit many buckets long reads a group's union for each group
	 * inside its time, not each bucket's.
	 */
	uint32_t ngl;
	uint32_t gbase[GRP_LEVELS + 1];
	size_t *gfirst;
	uint32_t *gn;
	struct span *gun;
	uint64_t *off;		/* this attempt's offsets */
	struct span *cand;	/* the spans one fit reads by time */
	struct span *cand2;	/* room to merge them */
	uint32_t *runs;		/* each bucket's run of them: start, end */
	uint64_t base;		/* stacked whole-span intervals */
	/* the offset order, for intervals at least long_len long (ents) */
	uint64_t long_len;
	uint64_t t0, t1;	/* the run, for the 64ths */
	uint64_t pin_step;	/* the 64 pins: t0 + i * pin_step; 0: none */
	struct oent *ents;	/* block b's entries at ents[b * OBLK] */
	struct oblk *blk;
	uint64_t *sat;		/* block b's start instants, sat[b * (OBLK + 1)] */
	struct oins *sins;	/* and what is live at each, at sins[b * OBLK] */
	uint64_t *sq;		/* and how many come before each pin, bytes */
	uint32_t *bord;		/* the blocks, bottom first */
	uint32_t nblk;
	/* the bound on a placement's final height (cannot_win()) */
	bool bound;		/* checked (not with HU_ARENA_NO_BOUND) */
	const bool *whole;	/* the whole-span intervals, stacked apart */
	bool *placed;		/* this attempt's placed intervals */
	struct span *holes;	/* room for the holes at one instant */
	uint32_t nholes;	/* that room */
	struct inst inst[NINST];
	uint32_t over_next;	/* the next INST_OVER slot to take */
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
 * sort_keys_first(): the first keys of a placement in order, the rest as
 * it comes to them, for a placement that may stop early.
 */
HU_DEFINE_SORT_FIRST(sort_keys, struct key)

static uint64_t len(const struct hu_ival *v)
{
	return v->end - v->start;
}

/* Interval @i is kept in the offset order (else, if not whole, by time). */
static bool by_offset(const struct placer *p, uint32_t i)
{
	return p->ents && len(&p->v[i]) >= p->long_len;
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

/* The bucket of the time order that holds instant @t. */
static uint32_t bkt_of(const struct placer *p, uint64_t t)
{
	uint64_t b = t > p->t0 ? (t - p->t0) >> p->bshift : 0;

	return b < p->nbkt ? (uint32_t)b : p->nbkt - 1;
}

/*
 * The buckets [*@a, *@z] that [@start, @end) shares time with (an empty
 * one: the bucket of @start, where any interval it shares time with is).
 */
static void bkt_range(const struct placer *p, uint64_t start, uint64_t end,
		      uint32_t *a, uint32_t *z)
{
	*a = bkt_of(p, start);
	*z = bkt_of(p, end > start ? end - 1 : start);
}

/*
 * [@lo, @hi] joins the union of the @*n spans at @u, kept in offset order
 * with a hole between each two: those it overlaps or touches become one.
 */
static void union_add(struct span *u, uint32_t *n, uint64_t lo, uint64_t hi)
{
	uint32_t a = 0, z = *n;

	/* the first span reaching @lo */
	while (a < z) {
		uint32_t mid = a + (z - a) / 2;

		if (u[mid].hi < lo)
			a = mid + 1;
		else
			z = mid;
	}
	for (z = a; z < *n && u[z].lo <= hi; z++) {
		if (u[z].lo < lo)
			lo = u[z].lo;
		if (u[z].hi > hi)
			hi = u[z].hi;
	}
	if (z == a)
		memmove(&u[a + 1], &u[a], (*n - a) * sizeof(*u));
	else if (z > a + 1)
		memmove(&u[a + 1], &u[z], (*n - z) * sizeof(*u));
	u[a] = (struct span){ lo, hi };
	*n += 1 - (z - a);
}

/* Interval @x is placed: it joins each bucket it shares time with. */
static void bkt_insert(struct placer *p, const struct oent *x)
{
	uint32_t a, z;

	bkt_range(p, x->start, x->end, &a, &z);
	for (uint32_t b = a; b <= z; b++) {
		struct oent *e = &p->bent[p->bfirst[b]];
		uint32_t lo = 0, hi = p->bn[b];

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (e[mid].lo <= x->lo)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&e[lo + 1], &e[lo], (p->bn[b] - lo) * sizeof(*e));
		e[lo] = *x;
		p->bn[b]++;
		union_add(&p->bun[p->bfirst[b]], &p->unn[b], x->lo, x->hi);
	}
	for (uint32_t l = 1; l <= p->ngl; l++) {
		uint32_t ga = p->gbase[l - 1] + (a >> (GRP_SHIFT * l));
		uint32_t gz = p->gbase[l - 1] + (z >> (GRP_SHIFT * l));

		for (uint32_t g = ga; g <= gz; g++)
			union_add(&p->gun[p->gfirst[g]], &p->gn[g], x->lo,
				  x->hi);
	}
}

/*
 * Appends [@lo, @hi) to the spans at @d (*@o of them, in offset order, at
 * least @from of them this run's), or with @join, widens the last if it
 * reaches @lo: a fit of positive size reads the same in one span as in
 * any spans that overlap or touch (it finds holes between them).
 */
static inline void span_put(struct span *d, uint32_t *o, uint32_t from,
			    uint64_t lo, uint64_t hi, bool join)
{
	if (join && *o > from && lo <= d[*o - 1].hi) {
		if (hi > d[*o - 1].hi)
			d[*o - 1].hi = hi;
		return;
	}
	d[(*o)++] = (struct span){ lo, hi };
}

/*
 * The offsets of every placed interval of the time order that shares
 * time with @v, in offset order: one bucket's are in that order already;
 * over several, each is taken from the first of them it is in, and the
 * buckets' runs are merged.  For a fit of positive size, spans that
 * overlap are joined as they come, and a bucket inside @v's time (all
 * of whose intervals share time with @v) gives its union, a few spans
 * where its intervals are many: joined or not, the spans leave the same
 * holes wider than nothing.  Return: the spans (*@k of them).
 */
static inline __attribute__((always_inline)) const struct span *
bkt_collect(struct placer *p, const struct hu_ival *v, uint32_t *k)
{
	struct span *src = p->cand, *dst = p->cand2, *t;
	bool join = v->bytes > 0 && !p->plain;
	uint32_t a, z, nr = 0, o = 0;

	bkt_range(p, v->start, v->end, &a, &z);
	for (uint32_t b = a; b <= z; b++) {
		const struct oent *e = &p->bent[p->bfirst[b]];
		uint64_t from = b == a ? 0 : p->t0 + ((uint64_t)b << p->bshift);
		uint32_t was = o;

		if (join && b > a && b < z) {
			const struct span *u = &p->bun[p->bfirst[b]];
			uint32_t nu = p->unn[b], l = p->ngl;

			/*
			 * the largest group that starts at b and ends before z:
			 * its union, that of every bucket in it
			 */
			for (; l; l--) {
				uint32_t w = 1U << (GRP_SHIFT * l);

				if (!(b & (w - 1)) && z - b >= w) {
					uint32_t g = p->gbase[l - 1] +
						     (b >> (GRP_SHIFT * l));

					u = &p->gun[p->gfirst[g]];
					nu = p->gn[g];
					break;
				}
			}
			for (uint32_t x = 0; x < nu; x++)
				span_put(src, &o, was, u[x].lo, u[x].hi, true);
			if (l)
				b += (1U << (GRP_SHIFT * l)) - 1;
		} else {
			for (uint32_t x = 0; x < p->bn[b]; x++)
				if (e[x].start < v->end &&
				    e[x].end > v->start && e[x].start >= from)
					span_put(src, &o, was, e[x].lo,
						 e[x].hi, join);
		}
		if (o > was) {
			p->runs[2 * nr] = was;
			p->runs[2 * nr++ + 1] = o;
		}
	}
	/* pairs of runs merged until one is left */
	while (nr > 1) {
		uint32_t out = 0;

		for (uint32_t r = 0; r < nr; r += 2) {
			uint32_t i = p->runs[2 * r], mid = p->runs[2 * r + 1];
			uint32_t j = r + 1 < nr ? p->runs[2 * r + 2] : mid;
			uint32_t end = r + 1 < nr ? p->runs[2 * r + 3] : mid;

			o = i;
			while (i < mid && j < end) {
				const struct span *x = src[j].lo < src[i].lo ?
						       &src[j++] : &src[i++];

				span_put(dst, &o, p->runs[2 * r], x->lo,
					 x->hi, join);
			}
			for (; i < mid; i++)
				span_put(dst, &o, p->runs[2 * r], src[i].lo,
					 src[i].hi, join);
			for (; j < end; j++)
				span_put(dst, &o, p->runs[2 * r], src[j].lo,
					 src[j].hi, join);
			p->runs[2 * out] = p->runs[2 * r];
			p->runs[2 * out++ + 1] = o;
		}
		nr = out;
		t = src;
		src = dst;
		dst = t;
	}
	*k = nr ? p->runs[1] - p->runs[0] : 0;
	return nr ? src + p->runs[0] : src;
}

/*
 * A fit reads the spans that share time with its interval from the bottom
 * up: a hole is where the next span starts above the highest end so far.
 */
struct scan {
	uint64_t cur, bytes, pick, pick_gap;
	bool best;
	struct span *holes;	/* holes_scan(): each hole found */
	uint32_t nh;
};

/*
 * One more span; true when the first fit is found (at s->cur).  With
 * @holes (a constant: a fit's scan has no test for it), every hole is
 * kept instead.
 */
static inline __attribute__((always_inline)) bool
scan_span(struct scan *s, uint64_t lo, uint64_t hi, const bool holes)
{
	if (lo >= s->cur + s->bytes) {
		uint64_t gap = lo - s->cur;

		if (holes) {
			s->holes[s->nh++] = (struct span){ s->cur, lo };
		} else if (!s->best) {
			return true;
		} else if (gap < s->pick_gap) {
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

/* Block @id's @k-th start instant, from the entries live then. */
static void ins_fill(struct placer *p, uint32_t id, uint32_t k)
{
	const struct oent *e = &p->ents[(size_t)id * OBLK];
	uint64_t t = p->sat[(size_t)id * (OBLK + 1) + k];
	struct oins *in = &p->sins[(size_t)id * OBLK + k];
	bool any = false;

	for (uint32_t j = 0; j < p->blk[id].n; j++) {
		if (e[j].start > t || e[j].end <= t)
			continue;
		if (!any)
			*in = (struct oins){ e[j].lo, e[j].lo, 0, UINT64_MAX };
		ins_join(in, &e[j]);
		any = true;
	}
}

/* The pin at or before instant @t (t0 <= @t; pin_step not 0). */
static uint32_t pin_of(const struct placer *p, uint64_t t)
{
	uint64_t i = (t - p->t0) / p->pin_step;

	return i < NPIN ? (uint32_t)i : NPIN - 1;
}

/*
 * Entry @x (of some length), already among block @id's entries, joins
 * the instants it is live at, its start one of them: a new one is made
 * from the instant before it when that one's entries all outlive it
 * (those and @x are live then), else read from the entries.  True when
 * read: it then holds every entry live at @x's start, @x among them.
 */
static bool ins_add(struct placer *p, uint32_t id, const struct oent *x)
{
	uint64_t *t = &p->sat[(size_t)id * (OBLK + 1)];
	struct oins *in = &p->sins[(size_t)id * OBLK];
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
		} else if (in[k - 1].min_end > x->start) {
			in[k] = in[k - 1];
		} else {
			ins_fill(p, id, k++);
			read = true;
		}
	}
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
			read = ins_add(p, id, x);
			last = x->start;
		}
	}
}

/*
 * Whether block @id's entries leave the scan @s of fit @v (of positive
 * length and size, starting at or after pin @q) at max(s->cur, T) with no
 * hole found, T the highest
 * end among those that share time with @v, known from the instants
 * alone: T is the highest top of the instants in (start, end) and of
 * the last at or before start (its entries that ended by start only
 * bound it from above: unknown if above the others); then true when T
 * is at or below the scan (nothing there raises it or leaves a hole as
 * wide as @v below it), or when the entries of one instant inside @v
 * reach T with no hole as wide as @v between them nor below them (they
 * share time with @v, and any other that does only fills holes).
 */
static bool ins_skip(const struct placer *p, uint32_t id,
		     const struct hu_ival *v, struct scan *s, uint32_t q)
{
	const uint64_t *t = &p->sat[(size_t)id * (OBLK + 1)];
	const struct oins *in = &p->sins[(size_t)id * OBLK];
	uint64_t top = 0, bound = 0, cut = s->cur + s->bytes, ve = v->end;
	uint64_t bytes = s->bytes;
	uint32_t k = (uint32_t)(p->sq[(size_t)id * (NPIN / 8) + q / 8] >>
				(8 * (q % 8))) & 0xff;
	bool wit = false;

	if (p->blk[id].nzero)
		return false;
	/* the first instant after @v's start (the sentinel ends them) */
	while (t[k] <= v->start)
		k++;
	if (k && in[k - 1].min_end > v->start) {
		top = in[k - 1].top;
		wit = in[k - 1].free < bytes && in[k - 1].lo < cut;
	} else if (k) {
		bound = in[k - 1].top;
	}
	for (; t[k] < ve; k++) {
		uint64_t tk = in[k].top;
		bool ok = (in[k].free < bytes) & (in[k].lo < cut);

		wit = tk > top ? ok : wit | (ok & (tk == top));
		top = tk > top ? tk : top;
	}
	if (bound > top)
		return false;
	if (top <= s->cur)
		return true;
	if (!wit)
		return false;
	s->cur = top;
	return true;
}

/* Inserts a placed interval into the offset order. */
static void ord_insert(struct placer *p, const struct oent *x)
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
	if (x->end > x->start)
		(void)ins_add(p, id, x);
	else
		p->blk[id].nzero++;
}

/*
 * scan_span() over the @n entries at @e that share time with @v, written
 * for the common case of a block read whole with no hole found: most
 * entries either share no time with @v or lie below the scan's top, and
 * the top is raised without a branch on which (the first, in a training
 * step, is a coin toss).  The same spans in the same order as
 * scan_span() one by one.
 */
static inline __attribute__((always_inline)) bool
blk_read(struct scan *s, const struct oent *e, uint32_t n,
	 const struct hu_ival *v, const bool holes)
{
	uint64_t cur = s->cur, vs = v->start, ve = v->end;

	for (uint32_t x = 0; x < n; x++) {
		bool live = (e[x].start < ve) & (e[x].end > vs);
		uint64_t hi = live ? e[x].hi : 0;

		if (__builtin_expect(live && e[x].lo >= cur + s->bytes, 0)) {
			s->cur = cur;
			if (scan_span(s, e[x].lo, e[x].hi, holes))
				return true;
			cur = s->cur;
			continue;
		}
		cur = hi > cur ? hi : cur;
	}
	s->cur = cur;
	return false;
}

/*
 * The spans a fit reads by time, one at a time (lo, hi; none left when
 * !has): those bkt_collect() gathered (@c, @k of them), or for a fit in
 * one bucket, that bucket's entries that share time with it read where
 * they are (@e, @k of them, in offset order already): a first fit found
 * low stops reading them there, and none is copied.
 */
struct tcur {
	const struct span *c;
	const struct oent *e;
	uint64_t start, end;	/* the fit's time, for @e */
	uint64_t lo, hi;
	uint32_t j, k;
	bool has;
};

static inline __attribute__((always_inline)) void tcur_next(struct tcur *t)
{
	if (!t->e) {
		t->has = ++t->j < t->k;
		if (t->has) {
			t->lo = t->c[t->j].lo;
			t->hi = t->c[t->j].hi;
		}
		return;
	}
	for (t->j++; t->j < t->k; t->j++) {
		const struct oent *x = &t->e[t->j];

		if (x->start < t->end && x->end > t->start) {
			t->lo = x->lo;
			t->hi = x->hi;
			t->has = true;
			return;
		}
	}
	t->has = false;
}

/*
 * A fit's spans by time, from the first.  In one bucket its entries are
 * those bkt_collect() would copy, in the same order, less the joining of
 * spans that touch (which leaves a fit of positive size the same holes).
 * The one bucket way (HU_ARENA_WHOLE, the reference) gathers them all.
 */
static inline __attribute__((always_inline)) void
tcur_start(struct placer *p, const struct hu_ival *v, struct tcur *t)
{
	uint32_t a, z;

	*t = (struct tcur){ .c = p->cand, .j = UINT32_MAX };
	if (p->bent && !p->plain) {
		bkt_range(p, v->start, v->end, &a, &z);
		if (a == z) {
			t->e = &p->bent[p->bfirst[a]];
			t->k = p->bn[a];
			t->start = v->start;
			t->end = v->end;
		} else {
			t->c = bkt_collect(p, v, &t->k);
		}
	} else if (p->bent) {
		t->c = bkt_collect(p, v, &t->k);
	}
	tcur_next(t);
}

/*
 * The scan of one fit: the placed spans that share time with @v, bottom
 * up, those found by time (sorted here) merged with those kept in offset
 * order (read in order, less the blocks that share no time with @v).
 * Spans of positive size at one offset share no time with each other,
 * so the order between them does not change the fit: both ways, and any
 * mix of them, give the same offset.  True when a first fit is found.
 * With @holes, every hole at least s->bytes wide is kept, none taken.
 */
static inline __attribute__((always_inline)) bool
scan_way(struct placer *p, const struct hu_ival *v, struct scan *s,
	 const bool holes)
{
	uint64_t w = p->nblk ? when(p, v->start, v->end) : 0;
	struct tcur c;
	bool alone, inst;
	uint32_t pv;

	/* the start instants: for fits of some length and size */
	inst = p->nblk && !p->no_inst && p->pin_step && s->bytes &&
	       v->end > v->start;
	pv = inst ? pin_of(p, v->start) : 0;
	tcur_start(p, v, &c);
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
		for (; c.has && c.lo < e[0].lo; tcur_next(&c))
			if (scan_span(s, c.lo, c.hi, holes))
				return true;
		if (bk->max_start < v->end && bk->min_end > v->start &&
		    bk->gap < s->bytes && e[0].lo < s->cur + s->bytes &&
		    (!c.has || c.lo >= e[bk->n - 1].lo)) {
			if (bk->top > s->cur)
				s->cur = bk->top;
			continue;
		}
		alone = !c.has || c.lo >= e[bk->n - 1].lo;
		/*
		 * Or whose entries that share time with @v, told apart by
		 * the block's start instants, do not raise the scan or are
		 * covered by those live at one instant inside @v.
		 */
		if (alone && inst && ins_skip(p, p->bord[b], v, s, pv))
			continue;
		/* no span by time comes inside the block: its entries alone */
		if (alone) {
			if (blk_read(s, e, bk->n, v, holes))
				return true;
			continue;
		}
		for (uint32_t x = 0; x < bk->n; x++) {
			if (e[x].start >= v->end || e[x].end <= v->start)
				continue;
			for (; c.has && c.lo < e[x].lo; tcur_next(&c))
				if (scan_span(s, c.lo, c.hi, holes))
					return true;
			if (scan_span(s, e[x].lo, e[x].hi, holes))
				return true;
		}
	}
	for (; c.has; tcur_next(&c))
		if (scan_span(s, c.lo, c.hi, holes))
			return true;
	return false;
}

static bool fit_scan(struct placer *p, const struct hu_ival *v,
		     struct scan *s)
{
	return scan_way(p, v, s, false);
}

/* The holes of at least s->bytes over @v, bottom up, in s->holes. */
static void holes_scan(struct placer *p, const struct hu_ival *v,
		       struct scan *s)
{
	scan_way(p, v, s, true);
}

/* One interval: the lowest hole that fits, or the tightest with @best. */
static uint64_t fit(struct placer *p, uint32_t i, bool best)
{
	const struct hu_ival *v = &p->v[i];
	struct scan s = { p->base, v->bytes, UINT64_MAX, UINT64_MAX, best,
			  NULL, 0 };

	if (fit_scan(p, v, &s))
		return s.cur;
	return s.pick != UINT64_MAX ? s.pick : s.cur;
}

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
static bool cannot_win(struct placer *p, uint64_t limit)
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
		holes_scan(p, &probe, &s);
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
 * Instant @t is checked by cannot_win() in slot @k (unless a slot has it
 * already), with the intervals live then (not the whole-span ones),
 * largest first.  Return: 0, or -ENOMEM.
 */
static int set_inst(struct placer *p, uint32_t k, uint64_t t)
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

/*
 * One greedy placement of @keys in order.  Its height only grows as it
 * goes, so it stops, returning UINT64_MAX, once the height reaches
 * @limit: the caller keeps a placement only if it is lower than some
 * height it already has, and one that tall would not be kept.  Every
 * BOUND_CHECKS-th of the way it also stops if cannot_win() shows that
 * its height will reach @limit before the end.  The keys are put in
 * order as it goes: the first *@ready are, and the next ones are sorted
 * only when it comes to them.
 */
#define KEYS_FIRST	1024
#define BOUND_CHECKS	32

static uint64_t attempt(struct placer *p, struct key *keys, uint32_t nk,
			uint32_t *ready, bool best, uint64_t limit)
{
	uint32_t step = nk / BOUND_CHECKS + 1, check = step;
	uint64_t height = p->base;

	memset(p->placed, 0, p->n * sizeof(*p->placed));
	if (p->bn) {
		memset(p->bn, 0, p->nbkt * sizeof(*p->bn));
		memset(p->unn, 0, p->nbkt * sizeof(*p->unn));
		memset(p->gn, 0, p->gbase[p->ngl] * sizeof(*p->gn));
	}
	p->nblk = 0;
	for (uint32_t j = 0; j < nk; j++) {
		uint32_t i, want;
		uint64_t off;

		if (j == *ready) {
			want = *ready < KEYS_FIRST ? KEYS_FIRST : 2 * *ready;
			if (want > nk || want < *ready || p->plain)
				want = nk;
			sort_keys_first(keys + *ready, nk - *ready, want - *ready);
			*ready = want;
		}
		i = keys[j].i;
		off = fit(p, i, best);
		struct oent x = { off, off + p->v[i].bytes, p->v[i].start,
				  p->v[i].end };

		p->off[i] = off;
		p->placed[i] = true;
		if (by_offset(p, i))
			ord_insert(p, &x);
		else
			bkt_insert(p, &x);
		if (off + p->v[i].bytes > height)
			height = off + p->v[i].bytes;
		if (height >= limit) {
			/* where it went over: checked in those that follow */
			if (p->bound)
				(void)set_inst(p, INST_OVER + p->over_next++ %
					       (NINST - INST_OVER),
					       p->v[i].start);
			return UINT64_MAX;
		}
		if (j + 1 == check && limit != UINT64_MAX) {
			check += step;
			if (p->bound && cannot_win(p, limit))
				return UINT64_MAX;
		}
	}
	return height;
}

/* Event @e of @v: 2i is interval i's start, 2i + 1 its end. */
static struct key ev_key(const struct hu_ival *v, size_t e)
{
	const struct hu_ival *x = &v[e / 2];

	/* Ends sort before starts at the same time: [start, end). */
	return (struct key){ { e % 2 ? x->end : x->start, !(e % 2),
			       x->bytes }, (uint32_t)(e / 2) };
}

/*
 * One event more, in time order (@start: interval @x's start, else its
 * end): the live bytes, the peak and the instant it is first reached.
 */
static inline void ev_take(const struct hu_ival *x, bool start,
			   uint64_t *live, uint64_t *peak, uint64_t *at)
{
	/*
	 * An interval of no time is never live; its end, sorted before its
	 * start at the same instant, would take its bytes off first.
	 */
	if (x->end <= x->start)
		return;
	if (start)
		*live += x->bytes;
	else
		*live -= x->bytes;
	if (*live > *peak) {
		*peak = *live;
		*at = start ? x->start : x->end;
	}
}

/* live_peak() by one sort of all the events (the reference). */
static int live_peak_sort(const struct hu_ival *v, uint32_t n,
			  uint64_t *peak, uint64_t *at)
{
	struct key *ev = hu_malloc_huge(2 * (size_t)(n ?: 1) * sizeof(*ev));
	uint64_t live = 0;

	*peak = 0;
	*at = 0;
	if (!ev)
		return -ENOMEM;
	for (size_t e = 0; e < 2 * (size_t)n; e++)
		ev[e] = ev_key(v, e);
	sort_keys(ev, 2 * (size_t)n);
	for (size_t e = 0; e < 2 * (size_t)n; e++)
		ev_take(&v[ev[e].i], ev[e].k[1], &live, peak, at);
	free(ev);
	return 0;
}

/*
 * The slice of time of instant @t: of @ns slices 2^@shift instants long
 * from @t0, those past the last in the last (the instants' order kept).
 */
static inline uint32_t ev_slice(uint64_t t, uint64_t t0, uint32_t shift,
				uint32_t ns)
{
	uint64_t s = (t - t0) >> shift;

	return s < ns ? (uint32_t)s : ns - 1;
}

/*
 * The live peak, and in *@at the first instant it is reached: the events
 * in the order of one sort of them all by key (live_peak_sort()), found
 * by a counting sort into slices of time, twice as many as the events
 * (the instants past the last slice, such as UINT64_MAX, in the last),
 * then each slice of more than one event sorted by key.  A plan's
 * residencies start and end at distinct instants of a clock that ticks
 * about twice an interval, so most slices hold one event or none, and
 * the sort of 2n keys (7% of the layout's instructions at 1M decode
 * operators, and called twice a plan) becomes a few passes.
 */
static int live_peak(const struct hu_ival *v, uint32_t n, uint64_t *peak,
		     uint64_t *at)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, live = 0;
	uint32_t *first, *ids, shift = 0, ns, most = 0;
	struct key *ks;

	if (!n || n > UINT32_MAX / 4)
		return live_peak_sort(v, n, peak, at);
	*peak = 0;
	*at = 0;
	ns = 4 * n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = v[i].start, z = v[i].end;

		t0 = a < t0 ? a : t0;
		t0 = z < t0 ? z : t0;
		t1 = a > t1 && a != UINT64_MAX ? a : t1;
		t1 = z > t1 && z != UINT64_MAX ? z : t1;
	}
	while (t1 > t0 && ((t1 - t0) >> shift) >= ns)
		shift++;
	first = hu_calloc_huge((size_t)ns + 1, sizeof(*first));
	ids = hu_malloc_huge(2 * (size_t)n * sizeof(*ids));
	if (!first || !ids) {
		free(ids);
		free(first);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		first[ev_slice(v[i].start, t0, shift, ns) + 1]++;
		first[ev_slice(v[i].end, t0, shift, ns) + 1]++;
	}
	for (uint32_t s = 0; s < ns; s++) {
		most = first[s + 1] > most ? first[s + 1] : most;
		first[s + 1] += first[s];
	}
	ks = hu_malloc_huge(most * sizeof(*ks));
	if (!ks) {
		free(ids);
		free(first);
		return -ENOMEM;
	}
	/* each event (2i: i's start, 2i + 1: its end) in its slice */
	for (uint32_t i = 0; i < n; i++) {
		ids[first[ev_slice(v[i].start, t0, shift, ns)]++] = 2 * i;
		ids[first[ev_slice(v[i].end, t0, shift, ns)]++] = 2 * i + 1;
	}
	/* first[s] is now the end of slice s */
	for (uint32_t s = 0, j = 0; s < ns; j = first[s++]) {
		uint32_t k = first[s] - j;

		if (!k)
			continue;
		if (k == 1) {
			ev_take(&v[ids[j] / 2], !(ids[j] % 2), &live, peak,
				at);
			continue;
		}
		for (uint32_t x = 0; x < k; x++)
			ks[x] = ev_key(v, ids[j + x]);
		sort_keys(ks, k);
		for (uint32_t x = 0; x < k; x++)
			ev_take(&v[ks[x].i], ks[x].k[1], &live, peak, at);
	}
	free(ks);
	free(ids);
	free(first);
	return 0;
}

int hu_arena_live_peak(const struct hu_ival *v, uint32_t n, uint64_t *peak)
{
	uint64_t at;

	return live_peak(v, n, peak, &at);
}

int hu_arena_live_peak_way(const struct hu_ival *v, uint32_t n,
			   enum hu_arena_way way, uint64_t *peak, uint64_t *at)
{
	return way & HU_ARENA_WHOLE ? live_peak_sort(v, n, peak, at) :
	       live_peak(v, n, peak, at);
}

/*
 * Which way the fits go.  By time, a fit reads the buckets it shares time
 * with, about what they hold; by offset, it reads every placed interval
 * kept in offset order (less the blocks that share no time with it, or
 * with no hole it would take), O(placed).  The intervals at least a 64th
 * of the run long, which a fit meets often (KV blocks, weights prefetched
 * a few layers ahead, a training step's activations kept from the
 * forward pass to the backward), are kept by offset, where the blocks'
 * 64ths skip most of those a fit does not meet; in time they would fill
 * many buckets.  The others go by time (a training step all by offset
 * took a quarter more: its short intervals are most of those a fit reads
 * there and few of them share its time).  Every way gives the same
 * offsets.  Return: 0, or -ENOMEM.
 */
#define LONG_DIV	64

static int choose_way(struct placer *p, const bool *whole,
		      enum hu_arena_way way)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;
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
	if (way == HU_ARENA_BY_OFFSET)
		p->long_len = 0;
	nb = 2 * (size_t)m / OBLK + 2;
	p->blk = hu_malloc_huge(nb * sizeof(*p->blk));
	p->bord = hu_malloc_huge(nb * sizeof(*p->bord));
	p->ents = hu_malloc_huge(nb * OBLK * sizeof(*p->ents));
	p->sat = hu_malloc_huge(nb * (OBLK + 1) * sizeof(*p->sat));
	p->sins = hu_malloc_huge(nb * OBLK * sizeof(*p->sins));
	p->sq = hu_malloc_huge(nb * NPIN);
	return p->blk && p->bord && p->ents && p->sat && p->sins && p->sq ?
	       0 : -ENOMEM;
}

/*
 * The groups of buckets (a level where there are at least two), each
 * with room for the intervals that share time with it.  Return: 0, or
 * -ENOMEM.
 */
static int grp_setup(struct placer *p, const bool *whole)
{
	uint32_t a, z, ng;

	for (uint32_t l = 1; l <= GRP_LEVELS &&
	     (p->nbkt - 1) >> (GRP_SHIFT * l); l++) {
		p->gbase[l] = p->gbase[l - 1] +
			      ((p->nbkt - 1) >> (GRP_SHIFT * l)) + 1;
		p->ngl = l;
	}
	ng = p->gbase[p->ngl];
	p->gfirst = hu_calloc_huge((size_t)ng + 1, sizeof(*p->gfirst));
	p->gn = hu_calloc_huge(ng ?: 1, sizeof(*p->gn));
	if (!p->gfirst || !p->gn)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->n; i++) {
		if (whole[i] || by_offset(p, i))
			continue;
		bkt_range(p, p->v[i].start, p->v[i].end, &a, &z);
		for (uint32_t l = 1; l <= p->ngl; l++)
			for (uint32_t j = a >> (GRP_SHIFT * l);
			     j <= z >> (GRP_SHIFT * l); j++)
				p->gfirst[p->gbase[l - 1] + j + 1]++;
	}
	for (uint32_t g = 0; g < ng; g++)
		p->gfirst[g + 1] += p->gfirst[g];
	p->gun = hu_malloc_huge((p->gfirst[ng] ?: 1) * sizeof(*p->gun));
	return p->gun ? 0 : -ENOMEM;
}

/*
 * The buckets of the time order.  A fit reads the buckets its interval
 * shares time with, so they are a few times as long as an interval kept
 * there on average (most fits then read one); an interval is in each
 * bucket it shares time with, and they widen until that is at most
 * BKT_ROOM entries an interval.  Return: 0, or -ENOMEM.
 */
#define BKT_MUL		4
#define BKT_ROOM	4

static int bkt_setup(struct placer *p, const bool *whole)
{
	uint64_t run = p->t1 - p->t0;
	double sum = 0;
	size_t m = 0, total;
	uint32_t a, z;

	for (uint32_t i = 0; i < p->n; i++)
		if (!whole[i] && !by_offset(p, i)) {
			m++;
			sum += (double)(len(&p->v[i]) < run ? len(&p->v[i]) : run);
		}
	if (!m)
		return 0;
	for (p->bshift = p->plain ? 63 : 0; p->bshift < 63 &&
	     (double)(1ULL << p->bshift) < BKT_MUL * sum / (double)m;)
		p->bshift++;
	for (;; p->bshift++) {
		p->nbkt = p->plain ? 1 : (uint32_t)((run >> p->bshift) + 1);
		if (p->bshift < 63 && (run >> p->bshift) >= m)
			continue;
		total = 0;
		for (uint32_t i = 0; i < p->n; i++)
			if (!whole[i] &&
			    !by_offset(p, i)) {
				bkt_range(p, p->v[i].start, p->v[i].end, &a, &z);
				total += z - a + 1;
			}
		if (p->bshift == 63 || total <= BKT_ROOM * m)
			break;
	}
	p->bfirst = hu_calloc_huge((size_t)p->nbkt + 1, sizeof(*p->bfirst));
	p->bn = hu_calloc_huge(p->nbkt, sizeof(*p->bn));
	p->bent = hu_malloc_huge((total ?: 1) * sizeof(*p->bent));
	p->unn = hu_calloc_huge(p->nbkt, sizeof(*p->unn));
	p->bun = hu_malloc_huge((total ?: 1) * sizeof(*p->bun));
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
	if (!p->bfirst || !p->bn || !p->bent || !p->unn || !p->bun ||
	    !p->runs || !p->cand2)
		return -ENOMEM;
	/* each bucket's room: the intervals that share time with it */
	for (uint32_t i = 0; i < p->n; i++)
		if (!whole[i] && !by_offset(p, i)) {
			bkt_range(p, p->v[i].start, p->v[i].end, &a, &z);
			p->bfirst[a + 1]++;
			if (z + 1 < p->nbkt)
				p->bn[z + 1]++;
		}
	for (uint32_t b = 0, live = 0; b < p->nbkt; b++) {
		live += (uint32_t)p->bfirst[b + 1] - p->bn[b];
		p->bfirst[b + 1] = p->bfirst[b] + live;
	}
	return grp_setup(p, whole);
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
 * Whether the @nk @keys are those of the greedy by area, interval by
 * interval.  The search's first round scales nothing, so it is the greedy
 * by area again unless rounding the areas to doubles changes them: when
 * it does not, its height is known.
 */
static bool area_keys(const struct placer *p, const struct key *keys,
		      uint32_t nk)
{
	struct key k;

	for (uint32_t j = 0; j < nk; j++) {
		make_key(&k, &p->v[keys[j].i], keys[j].i, 2);
		if (memcmp(k.k, keys[j].k, sizeof(k.k)))
			return false;
	}
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
		   uint64_t area_h, uint64_t floor,
		   uint64_t effort, bool prune, uint64_t *best)
{
	double *f = hu_malloc_huge(p->n * sizeof(*f));
	double *g = hu_malloc_huge(p->n * sizeof(*g));
	uint64_t state = 0x853c49e6748fea9bULL, cur = UINT64_MAX;
	uint32_t nk = 0;

	if (!f || !g)
		goto out;
	for (uint32_t i = 0; i < p->n; i++)
		f[i] = 1.0;
	for (uint64_t spent = 0, round = 0; *best > floor && spent < effort &&
	     round < SEARCH_ROUNDS; round++) {
		uint64_t h, limit = UINT64_MAX;
		uint32_t ready = 0;

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
		/*
		 * A round taller than the last kept is dropped, and the last
		 * round matters only if it is lower than the best.
		 */
		if (prune && (spent + (nk ? nk : 1) >= effort ||
			      round + 1 == SEARCH_ROUNDS))
			limit = *best;
		else if (prune && cur != UINT64_MAX)
			limit = cur + 1;
		h = !spent && area_keys(p, keys, nk) ? area_h :
		    attempt(p, keys, nk, &ready, false, limit);
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
	struct placer p = { .v = v, .n = n, .plain = way & HU_ARENA_WHOLE,
			    .no_inst = way & HU_ARENA_NO_INSTANTS,
			    .bound = !(way & HU_ARENA_NO_BOUND) };
	bool prune = !p.plain;
	uint64_t t0 = UINT64_MAX, t1 = 0, floor, best = UINT64_MAX, at;
	uint64_t area_h = UINT64_MAX;
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
	keys = hu_malloc_huge(n * sizeof(*keys));
	whole = hu_malloc_huge(n * sizeof(*whole));
	p.off = hu_malloc_huge(n * sizeof(*p.off));
	p.cand = hu_malloc_huge(n * sizeof(*p.cand));
	p.placed = hu_malloc_huge(n * sizeof(*p.placed));
	p.whole = whole;
	for (uint32_t i = 0; i < NINST; i++)
		p.inst[i].t = UINT64_MAX;
	if (!keys || !whole || !p.off || !p.cand || !p.placed)
		goto out;
	/* Whole-span intervals at the bottom, in index order. */
	for (uint32_t i = 0; i < n; i++) {
		whole[i] = v[i].start == t0 && v[i].end == t1;
		if (whole[i]) {
			v[i].off = p.base;
			p.base += v[i].bytes;
		}
	}
	if (p.plain ? live_peak_sort(v, n, &floor, &at) :
	    live_peak(v, n, &floor, &at))
		goto out;
	way &= ~(HU_ARENA_WHOLE | HU_ARENA_NO_BOUND | HU_ARENA_NO_INSTANTS);
	if (choose_way(&p, whole, way) || bkt_setup(&p, whole) ||
	    (p.bound && set_inst(&p, INST_PEAK, at)))
		goto out;
	for (int order = 0; order < NR_ORDERS && best > floor; order++) {
		uint32_t ready = 0;

		nk = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!whole[i])
				make_key(&keys[nk++], &v[i], i, order);
		for (int b = 0; b < 2 && best > floor; b++) {
			/*
			 * Only a lower one is kept, but the search's first
			 * round needs the greedy by area's height itself if
			 * more rounds follow it.
			 */
			bool whole_run = !prune || (order == 2 && !b &&
						    (nk ? nk : 1) < effort);
			uint64_t h = attempt(&p, keys, nk, &ready, b,
					     whole_run ? UINT64_MAX : best);

			if (order == 2 && !b)
				area_h = h;	/* the search's first round */
			if (h < best) {
				best = h;
				for (uint32_t j = 0; j < nk; j++)
					v[keys[j].i].off = p.off[keys[j].i];
			}
		}
	}
	search(&p, keys, whole, area_h, floor, effort, prune, &best);
	*height = best;
	ret = 0;
out:
	for (uint32_t i = 0; i < NINST; i++)
		free(p.inst[i].live);
	free(p.holes);
	free(p.placed);
	free(p.sq);
	free(p.sins);
	free(p.sat);
	free(p.ents);
	free(p.bord);
	free(p.blk);
	free(p.cand2);
	free(p.runs);
	free(p.gun);
	free(p.gn);
	free(p.gfirst);
	free(p.bun);
	free(p.unn);
	free(p.bent);
	free(p.bn);
	free(p.bfirst);
	free(p.cand);
	free(p.off);
	free(whole);
	free(keys);
	return ret;
}
