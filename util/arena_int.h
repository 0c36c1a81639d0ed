/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arena placer's own header (util/arena.c and its parts): the placer
 * and what its parts share, for util/arena*.c only.  The placer is one
 * job split by what each part does: the live peak (arena_peak.c), the
 * time order's buckets (arena_time.c), the offset order's blocks
 * (arena_offset.c), the bound on a placement's height (arena_bound.c),
 * and the greedy attempts, the search and the driver (arena.c).  The
 * readers of a fit's scan and the time order's insert stay inline here,
 * as they were inlined in one file: a fit calls them for every span it
 * reads, a placement once for each interval (out of line, they cost
 * 1.7% more instructions).
 */
#ifndef HYPER_UTIL_ARENA_INT_H
#define HYPER_UTIL_ARENA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/arena.h"

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
 * begins.  A fit visits every block that shares time with it (on MoE
 * training layouts most of them, a best fit all of them): blocks of 128
 * halve the visits for reads of twice the entries, 6% fewer instructions
 * and 17% fewer cache misses in DeepSeek-V2-Lite's and OLMoE's layouts
 * than 64 (32: 25% more; 96, 160, 200: more than 128).  At most 255, so
 * that a block's instants before a pin count in a byte (sq).
 */
#define OBLK	128
_Static_assert(OBLK <= 255, "a block's instants before a pin fit a byte");

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
 * begins.  On a decode layout (not p->many) each instant also has the
 * entries live then as bits, bit j for the block's j-th entry in offset
 * order (two words each, at smask[2 * (b * OBLK + k)]): a fit that must
 * read a block's entries among spans by time reads those alone (the
 * 100k decode layout's fits walked 4.2M entries so, 3% of them live).
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
 * Groups of buckets: 2^(gshift l) buckets at level l, up to GRP_LEVELS
 * levels of 32 buckets, or GRP_FINE_LEVELS of 2, 4, ... 32 (a level of
 * at least two groups).  A level costs each interval
 * placed by time a union insert for each of its groups the interval
 * shares time with, and saves a fit many buckets long a run to merge for
 * each group inside its time that it reads in place of its buckets: the
 * fine levels pay where many fits read many buckets (the intervals kept
 * by offset, each as long as a few buckets or more, are more than a
 * quarter as many as those by time, as in a training step: OLMoE-1B-7B
 * --compare's layouts 838M to 720M instructions), the coarse ones where
 * most fits read one (decode graphs: the fine levels cost 10% more).
 * Coarse levels of 1024 and 32768 buckets (decode graphs of 100k
 * operators and more) cost each of the intervals by time one more
 * insert, into a union of many spans, for the few hundred fits that
 * read them (KV blocks, weights kept long): the 100k and 1M decode
 * layouts took 4% and 3% more instructions with them.
 * Either way a fit reads the same offsets, only from fewer runs.
 */
#define GRP_SHIFT	5
#define GRP_LEVELS	1
#define GRP_FINE_SHIFT	1
#define GRP_FINE_LEVELS	5
#define GRP_MAX_LEVELS	5

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
	/*
	 * The intervals kept by offset are more than a quarter as many as
	 * those by time (a training step's layout): a fit's instants inside
	 * a block are walked out of line (ins_skip())
	 */
	bool many;
	size_t *bfirst;
	uint32_t *bn;
	struct oent *bent;
	/*
	 * Each bucket's offsets taken, at bun[b * UNION_ROOM], unn[b] spans
	 * (UNION_NONE: dropped): the union of its intervals' [lo, hi]
	 * (closed, so touching ones are one), for the fits that share time
	 * with the whole bucket.
	 */
	struct span *bun;
	uint32_t *unn;
	/*
	 * The same for groups of buckets, G^l of them at level l (1 to ngl,
	 * G = 2^gshift): level l's group j, of buckets [j G^l, (j + 1) G^l),
	 * is group gbase[l - 1] + j, its union at gun[g * UNION_ROOM], gn[g]
	 * spans.  A fit many buckets long reads a group's union for each
	 * group inside its time, not each bucket's.
	 */
	uint32_t ngl, gshift;
	uint32_t gbase[GRP_MAX_LEVELS + 1];
	uint32_t *gn;
	struct span *gun;
	uint64_t *off;		/* this attempt's offsets */
	struct span *cand;	/* the spans one fit reads by time */
	struct span *cand2;	/* room to merge them */
	uint32_t *runs;		/* each bucket's run of them: start, end */
	uint64_t base;		/* stacked whole-span intervals */
	/*
	 * the offset order, for intervals at least long_len long when
	 * split (ents), nlong of them
	 */
	bool split;
	uint32_t nlong;
	uint64_t long_len;
	uint64_t t0, t1;	/* the run, for the 64ths */
	uint64_t when_mul;	/* 2^70 / (t1 - t0 + 1), at most 2^64 - 1 */
	uint64_t pin_step;	/* the 64 pins: t0 + i * pin_step; 0: none */
	struct oent *ents;	/* block b's entries at ents[b * OBLK] */
	struct oblk *blk;
	uint64_t *sat;		/* block b's start instants, sat[b * (OBLK + 1)] */
	struct oins *sins;	/* and what is live at each, at sins[b * OBLK] */
	uint64_t *sq;		/* and how many come before each pin, bytes */
	uint64_t *smask;	/* and which entries, bits, or NULL (p->many) */
	uint32_t *bord;		/* the blocks, bottom first */
	uint32_t nblk;
	/* the bound on a placement's final height (hu_arena__cannot_win()) */
	bool bound;		/* checked (not with HU_ARENA_NO_BOUND) */
	const bool *whole;	/* the whole-span intervals, stacked apart */
	bool *placed;		/* this attempt's placed intervals */
	struct span *holes;	/* room for the holes at one instant */
	uint32_t nholes;	/* that room */
	struct inst inst[NINST];
	uint32_t over_next;	/* the next INST_OVER slot to take */
	/* the tables of the packed keys' sort (arena_sort.c), or NULL */
	struct hu_arena_rtab *rtab;
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

static inline uint64_t len(const struct hu_ival *v)
{
	return v->end - v->start;
}

/* Interval @i is kept in the offset order (else, if not whole, by time). */
static inline bool by_offset(const struct placer *p, uint32_t i)
{
	return p->split && len(&p->v[i]) >= p->long_len;
}

struct scan;

/* The time order (arena_time.c, and what a fit calls, here). */
int hu_arena__bkt_setup(struct placer *p, const bool *whole);

/*
 * The bucket of the time order that holds instant @t.  This and the two
 * below run for every fit and every interval placed, a few times each
 * (a million calls at 100k decode operators): inline, they save the
 * calls' cost (4% of the layout's instructions there).
 */
static inline uint32_t bkt_of(const struct placer *p, uint64_t t)
{
	uint64_t b = t > p->t0 ? (t - p->t0) >> p->bshift : 0;

	return b < p->nbkt ? (uint32_t)b : p->nbkt - 1;
}

/*
 * The buckets [*@a, *@z] that [@start, @end) shares time with (an empty
 * one: the bucket of @start, where any interval it shares time with is).
 */
static inline void bkt_range(const struct placer *p, uint64_t start,
			     uint64_t end, uint32_t *a, uint32_t *z)
{
	*a = bkt_of(p, start);
	*z = bkt_of(p, end > start ? end - 1 : start);
}

/*
 * Each union's room, in spans.  A union is a few spans where its bucket
 * holds dozens of intervals (at 1M decode operators 78k spans in all
 * for 1.7M bucket entries, at most 12 in one; the training steps' at
 * most 21, their groups' 36), so each has a room of its own that size,
 * not one as large as its bucket's entries: those were 27 MB for the
 * buckets and 21 MB for the groups at 1M decode operators, every huge
 * page of them touched for 1.3 MB of spans.  A union that would
 * outgrow its room is dropped (UNION_NONE) until the next attempt: the
 * fits read its bucket's entries (a group's: the smaller groups or the
 * buckets inside it), which leave the same holes, as a fit without
 * unions does.
 */
#define UNION_ROOM	32
#define UNION_NONE	UINT32_MAX

/*
 * [@lo, @hi] joins the union of the @*n spans at @u, kept in offset order
 * with a hole between each two: those it overlaps or touches become one.
 * Dropped (*@n UNION_NONE) if it would outgrow its room, UNION_ROOM.
 */
static inline void union_add(struct span *u, uint32_t *n, uint64_t lo,
			     uint64_t hi)
{
	uint32_t a = 0, z = *n;

	if (z == UNION_NONE)
		return;
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
	if (z == a && *n == UNION_ROOM) {
		*n = UNION_NONE;
		return;
	}
	if (z == a)
		memmove(&u[a + 1], &u[a], (*n - a) * sizeof(*u));
	else if (z > a + 1)
		memmove(&u[a + 1], &u[z], (*n - z) * sizeof(*u));
	u[a] = (struct span){ lo, hi };
	*n += 1 - (z - a);
}

/*
 * The keys' sort (arena_sort.c): whole, by packed words, for sets of at
 * least HU_ARENA_RADIX_MIN keys, where p->rtab is allocated.
 */
#define HU_ARENA_RADIX_MIN	4096
int hu_arena__rtab_alloc(struct placer *p);
bool hu_arena__sort_packed(struct placer *p, struct key *keys, uint32_t nk);

/*
 * The 64ths of the run that [@start, @end) touches, as bits: instant t
 * (from t0) is in the 64th (t * when_mul) >> 64, a map that never falls
 * as t grows and stays below 64 (t < span, when_mul <= 2^70 / span; for
 * a run of at most 64 instants, t - 1 or 0), so two intervals that share
 * time share a bit (an empty one is given the 64th it sits in).  Only a
 * block's test against a fit reads them, each side by this map, so any
 * such map passes over the same blocks that share no time: one multiply,
 * inline, where two divisions in a call were 51 instructions a fit (67M
 * in the 1M decode layout's 1.32M fits).
 */
static inline uint64_t when_of(const struct placer *p, uint64_t start,
			       uint64_t end)
{
	uint64_t span = p->t1 - p->t0 + 1, a, b;

	if (!span)		/* a run of all 2^64 instants */
		return ~0ULL;
	start = start < p->t0 ? 0 : start - p->t0;
	end = end > p->t1 ? span : end - p->t0;
	end = end > start ? end - 1 : start;
	if (start >= span)
		start = span - 1;
	if (end >= span)
		end = span - 1;
	a = (uint64_t)(((unsigned __int128)start * p->when_mul) >> 64);
	b = (uint64_t)(((unsigned __int128)end * p->when_mul) >> 64);
	return (~0ULL >> (63 - (b - a))) << a;
}

/* The offset order (arena_offset.c). */

/* T among some instants of a block, and whether one of them is a witness */
struct ins_top {
	uint64_t top;
	bool wit;
};

struct ins_top hu_arena__ins_top(const uint64_t *t, const struct oins *in,
				 uint64_t ve, uint64_t bytes, uint64_t cut,
				 uint64_t top, bool wit, uint64_t cur);
void hu_arena__ord_insert(struct placer *p, const struct oent *x);

/* The bound (arena_bound.c), and the holes it reads (arena.c). */
bool hu_arena__cannot_win(struct placer *p, uint64_t limit);
int hu_arena__set_inst(struct placer *p, uint32_t k, uint64_t t);
void hu_arena__holes_scan(struct placer *p, const struct hu_ival *v,
			  struct scan *s);

/*
 * A fit reads the spans that share time with its interval from the bottom
 * up: a hole is where the next span starts above the highest end so far.
 */
struct scan {
	uint64_t cur, bytes, pick, pick_gap;
	bool best;
	struct span *holes;	/* hu_arena__holes_scan(): each hole found */
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

/* The pin at or before instant @t (t0 <= @t; pin_step not 0). */
static inline uint32_t pin_of(const struct placer *p, uint64_t t)
{
	uint64_t i = (t - p->t0) / p->pin_step;

	return i < NPIN ? (uint32_t)i : NPIN - 1;
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
 * Whether block @id's entries leave the scan @s of fit @v (of positive
 * length and size, starting at or after pin @q) at max(s->cur, T) with no
 * hole found, T the highest end among those that share time with @v,
 * known from the instants alone: T is the highest top of the instants in
 * (start, end) and of the last at or before start (its entries that
 * ended by start only bound it from above: unknown if above the others);
 * then true when T is at or below the scan (nothing there raises it or
 * leaves a hole as wide as @v below it), or when the entries of one
 * instant inside @v reach T with no hole as wide as @v between them nor
 * below them (they share time with @v, and any other that does only
 * fills holes).  Inline: a fit by offset asks it of most blocks it meets
 * (2.9M times in DeepSeek-V2-Lite's greedy layout), and the calls were 3%
 * of the layouts' instructions.  With @many (p->many: the fits' scan is
 * compiled for each), the instants inside @v are walked out of line by
 * hu_arena__ins_top(): on a training step's layout they are many (ten a
 * block asked, 5.5M in DeepSeek-V2-Lite's plan layout), and inline, in
 * the fits' scan, the walk had no registers left (22 instructions an
 * instant).  Decode layouts meet none in nearly every block, and keep the
 * walk inline: the call alone, never taken, made their scan compile 2%
 * worse.  *@kp: that first instant after @v's start, or UINT32_MAX for
 * a block with an entry of no length (which is read).
 */
static inline __attribute__((always_inline)) bool
ins_skip(const struct placer *p, uint32_t id, const struct hu_ival *v,
	 struct scan *s, uint32_t q, const bool many, uint32_t *kp)
{
	const uint64_t *t = &p->sat[(size_t)id * (OBLK + 1)];
	const struct oins *in = &p->sins[(size_t)id * OBLK];
	uint64_t top = 0, bound = 0, cut = s->cur + s->bytes, ve = v->end;
	uint64_t bytes = s->bytes;
	uint32_t k = (uint32_t)(p->sq[(size_t)id * (NPIN / 8) + q / 8] >>
				(8 * (q % 8))) & 0xff;
	bool wit = false;

	*kp = UINT32_MAX;
	if (p->blk[id].nzero)
		return false;
	/* the first instant after @v's start (the sentinel ends them) */
	while (t[k] <= v->start)
		k++;
	*kp = k;
	if (k && in[k - 1].min_end > v->start) {
		top = in[k - 1].top;
		wit = in[k - 1].free < bytes && in[k - 1].lo < cut;
	} else if (k) {
		bound = in[k - 1].top;
	}
	if (many && t[k] < ve) {
		struct ins_top r = hu_arena__ins_top(&t[k], &in[k], ve, bytes,
						     cut, top, wit, s->cur);

		top = r.top;
		wit = r.wit;
	}
	for (; !many && t[k] < ve; k++) {
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

/*
 * Interval @x is placed: it joins each bucket it shares time with, [@a,
 * @z] (bkt_range(), found once for its fit and this).
 */
static inline void bkt_insert(struct placer *p, const struct oent *x,
			      uint32_t a, uint32_t z)
{
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
		/* and its sentinel */
		memmove(&e[lo + 1], &e[lo], (p->bn[b] - lo + 1) * sizeof(*e));
		e[lo] = *x;
		p->bn[b]++;
		union_add(&p->bun[(size_t)b * UNION_ROOM], &p->unn[b], x->lo,
			  x->hi);
	}
	for (uint32_t l = 1; l <= p->ngl; l++) {
		uint32_t ga = p->gbase[l - 1] + (a >> (p->gshift * l));
		uint32_t gz = p->gbase[l - 1] + (z >> (p->gshift * l));

		for (uint32_t g = ga; g <= gz; g++)
			union_add(&p->gun[(size_t)g * UNION_ROOM], &p->gn[g],
				  x->lo, x->hi);
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
 * holes wider than nothing.  @a, @z: @v's buckets (bkt_range()).
 * Return: the spans (*@k of them).
 */
static inline __attribute__((always_inline)) const struct span *
bkt_collect(struct placer *p, const struct hu_ival *v, uint32_t a,
	    uint32_t z, uint32_t *k)
{
	struct span *src = p->cand, *dst = p->cand2, *t;
	bool join = v->bytes > 0 && !p->plain;
	uint32_t nr = 0, o = 0;

	for (uint32_t b = a; b <= z; b++) {
		const struct oent *e = &p->bent[p->bfirst[b]];
		uint64_t from = b == a ? 0 : p->t0 + ((uint64_t)b << p->bshift);
		const struct span *u = NULL;
		uint32_t was = o, nu = UNION_NONE, l = 0;

		if (join && b > a && b < z) {
			u = &p->bun[(size_t)b * UNION_ROOM];
			nu = p->unn[b];
			/*
			 * the largest group that starts at b and ends before z,
			 * its union kept: that of every bucket in it
			 */
			for (l = p->ngl; l; l--) {
				uint32_t w = 1U << (p->gshift * l);
				uint32_t g = p->gbase[l - 1] +
					     (b >> (p->gshift * l));

				if (!(b & (w - 1)) && z - b >= w &&
				    p->gn[g] != UNION_NONE) {
					u = &p->gun[(size_t)g * UNION_ROOM];
					nu = p->gn[g];
					break;
				}
			}
		}
		if (nu != UNION_NONE) {
			/*
			 * a union's spans, the first of this bucket's run, are
			 * apart (union_add() joins those that touch): each
			 * span_put() would append
			 */
			for (uint32_t x = 0; x < nu; x++)
				src[o++] = u[x];
			if (l)
				b += (1U << (p->gshift * l)) - 1;
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
 * The spans a fit reads by time, one at a time (lo, hi; none left when
 * !has): those bkt_collect() gathered (@c, @k of them), or for a fit in
 * one bucket, that bucket's entries that share time with it read where
 * they are (from @e to @stop, in offset order already): a first fit found
 * low stops reading them there, and none is copied.
 */
struct tcur {
	const struct span *c;
	const struct oent *e;	/* the next entry to read */
	const struct oent *stop;	/* the bucket's sentinel (BKT_STOP) */
	uint64_t start, end;	/* the fit's time, for @e */
	uint64_t lo, hi;
	uint32_t j, k;
	bool has;
};

/*
 * Each bucket's entries end with a sentinel, at bent[bfirst[b] + bn[b]]
 * (its room has one more), that shares time with every fit read in place
 * (of positive end, starting before UINT64_MAX): the walk of a bucket's
 * entries for those that share time with a fit stops there with no
 * count of them to test: at 1M decode operators it passes over about
 * 21M entries, each in 3 instructions (one starting after the fit ends)
 * or 5 where it took 6 or 8, and attempt() fell from 2.23 to 2.06 G.
 */
#define BKT_STOP	((struct oent){ 0, 0, 0, UINT64_MAX })

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
	const struct oent *x = t->e;

	while (x->start >= t->end || x->end <= t->start)
		x++;
	t->e = x + 1;
	t->has = x != t->stop;
	t->lo = x->lo;
	t->hi = x->hi;
}

/*
 * A fit's spans by time, from the first, its buckets [@a, @z]
 * (bkt_range(), where p->bent).  In one bucket its entries are
 * those bkt_collect() would copy, in the same order, less the joining of
 * spans that touch (which leaves a fit of positive size the same holes);
 * a fit that ends at 0 or starts at UINT64_MAX (which its sentinel would
 * not stop) gathers them as several do.  The one bucket way
 * (HU_ARENA_WHOLE, the reference) gathers them all.
 */
static inline __attribute__((always_inline)) void
tcur_start(struct placer *p, const struct hu_ival *v, struct tcur *t,
	   uint32_t a, uint32_t z)
{
	*t = (struct tcur){ .c = p->cand, .j = UINT32_MAX };
	if (p->bent) {
		if (a == z && !p->plain && v->end &&
		    v->start != UINT64_MAX) {
			t->e = &p->bent[p->bfirst[a]];
			t->stop = t->e + p->bn[a];
			t->start = v->start;
			t->end = v->end;
		} else {
			t->c = bkt_collect(p, v, a, z, &t->k);
		}
	}
	tcur_next(t);
}

/*
 * A block's entries, with the spans by time that come among them, for
 * fit @v of positive length and size on a decode layout, in place of
 * blk_read() and of the walk of every entry: a block's entries that
 * share time with such a fit are a few of them (at 1M decode operators
 * 3.3M of the 64.4M the walk read).  Those are the entries live at the
 * last instant at or before its start (less those that ended by then)
 * and at each instant inside it, so block @id's masks at those instants
 * (its first after @v's start @k, from ins_skip()) name them, read in
 * offset order, each after the spans by time below it: the spans that
 * reading every entry gives, in the same order.  Not for a block with
 * an entry of no length (live at no instant).  True when a first fit is
 * found.
 */
static inline __attribute__((always_inline)) bool
blk_read_live(const struct placer *p, uint32_t id, uint32_t k,
	      const struct hu_ival *v, struct scan *s, struct tcur *c,
	      const bool holes)
{
	const uint64_t *t = &p->sat[(size_t)id * (OBLK + 1)];
	const uint64_t *m = &p->smask[2 * (size_t)id * OBLK];
	const struct oent *e = &p->ents[(size_t)id * OBLK];
	uint64_t w = k ? m[2 * k - 2] : 0, w1 = k ? m[2 * k - 1] : 0;

	for (; t[k] < v->end; k++) {
		w |= m[2 * k];
		w1 |= m[2 * k + 1];
	}
	/* the first word's entries, then the second's */
	for (;;) {
		const struct oent *x;

		if (!w) {
			if (!w1)
				return false;
			w = w1;
			w1 = 0;
			e += 64;
		}
		x = &e[__builtin_ctzll(w)];
		w &= w - 1;
		if (x->end <= v->start)
			continue;
		for (; c->has && c->lo < x->lo; tcur_next(c))
			if (scan_span(s, c->lo, c->hi, holes))
				return true;
		if (scan_span(s, x->lo, x->hi, holes))
			return true;
	}
}

#endif /* HYPER_UTIL_ARENA_INT_H */
