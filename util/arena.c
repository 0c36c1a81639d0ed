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
 * Trying stops once a placement is close to the live peak (a 1024th, a
 * 256th for the largest sets) or at the caller's limit: on decode and
 * training graphs the first greedy placement is usually there, and the
 * rest would cost seven more placements and the search for less than
 * that slack.
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

#include "util/arena_int.h"
#include "util/heap.h"
#include "util/huge.h"
#include "util/sort.h"

HU_DEFINE_SORT(sort_keys, struct key, key_before)

/*
 * sort_keys_first(): the first keys of a placement in order, the rest as
 * it comes to them, for a placement that may stop early.
 */
HU_DEFINE_SORT_FIRST(sort_keys, struct key)

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
	 uint32_t a, uint32_t z, const bool holes, const bool many)
{
	uint64_t w = p->nblk ? when_of(p, v->start, v->end) : 0;
	struct tcur c;
	bool alone, inst;
	uint32_t pv, k;

	/* the start instants: for fits of some length and size */
	inst = p->nblk && !p->no_inst && p->pin_step && s->bytes &&
	       v->end > v->start;
	pv = inst ? pin_of(p, v->start) : 0;
	tcur_start(p, v, &c, a, z);
	for (uint32_t b = 0; b < p->nblk; b++) {
		const struct oblk *bk = &p->blk[p->bord[b]];
		const struct oent *e = &p->ents[(size_t)p->bord[b] * OBLK];

		if (bk->max_end <= v->start || bk->min_start >= v->end ||
		    !(bk->when & w))
			continue;
		for (; c.has && c.lo < e[0].lo; tcur_next(&c))
			if (scan_span(s, c.lo, c.hi, holes))
				return true;
		/*
		 * A block whose entries all share time with @v, with no hole
		 * as wide as @v inside it nor below its first entry, only
		 * raises the scan to its top.  So does one whose entries that
		 * share time with @v, told apart by the block's start
		 * instants, do not raise the scan or are covered by those
		 * live at one instant inside @v.  Either way no hole as wide
		 * as @v starts between the scan and that top, whatever else
		 * lies there, so the spans by time that come inside the
		 * block may be read after it, in order: one below the top
		 * finds no hole, one above it lies above every entry of the
		 * block that shares time with @v, as if the block were one
		 * span from its first entry to its top.  The same offsets
		 * (and holes); at 100k decode operators half the blocks that
		 * spans by time come inside are passed over so.
		 */
		if (bk->max_start < v->end && bk->min_end > v->start &&
		    bk->gap < s->bytes && e[0].lo < s->cur + s->bytes) {
			if (bk->top > s->cur)
				s->cur = bk->top;
			continue;
		}
		k = UINT32_MAX;
		if (inst && ins_skip(p, p->bord[b], v, s, pv, many, &k))
			continue;
		/*
		 * on a decode layout, the entries that share time with @v,
		 * told by the instants, with the spans by time among them
		 */
		if (!many && k != UINT32_MAX && p->smask) {
			if (blk_read_live(p, p->bord[b], k, v, s, &c, holes))
				return true;
			continue;
		}
		alone = !c.has || c.lo >= e[bk->n - 1].lo;
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

/*
 * One scan compiled for each way ins_skip() walks a block's instants
 * (p->many), so that a decode layout's stays as it was.
 */
static bool fit_scan(struct placer *p, const struct hu_ival *v,
		     struct scan *s, uint32_t a, uint32_t z)
{
	return p->many ? scan_way(p, v, s, a, z, false, true) :
			 scan_way(p, v, s, a, z, false, false);
}

/* The holes of at least s->bytes over @v, bottom up, in s->holes. */
void hu_arena__holes_scan(struct placer *p, const struct hu_ival *v,
		       struct scan *s)
{
	uint32_t a = 0, z = 0;

	if (p->bent)
		bkt_range(p, v->start, v->end, &a, &z);
	scan_way(p, v, s, a, z, true, false);
}

/*
 * One interval: the lowest hole that fits, or the tightest with @best;
 * @a, @z: its buckets (bkt_range(), where p->bent).
 */
static uint64_t fit(struct placer *p, uint32_t i, bool best, uint32_t a,
		    uint32_t z)
{
	const struct hu_ival *v = &p->v[i];
	struct scan s = { p->base, v->bytes, UINT64_MAX, UINT64_MAX, best,
			  NULL, 0 };

	if (fit_scan(p, v, &s, a, z))
		return s.cur;
	return s.pick != UINT64_MAX ? s.pick : s.cur;
}

/*
 * One greedy placement of @keys in order.  Its height only grows as it
 * goes, so it stops, returning UINT64_MAX, once the height reaches
 * @limit: the caller keeps a placement only if it is lower than some
 * height it already has, and one that tall would not be kept.  Every
 * BOUND_CHECKS-th of the way it also stops if hu_arena__cannot_win() shows that
 * its height will reach @limit before the end.  The keys are put in
 * order as it goes: the first *@ready are, and the next ones are sorted
 * only when it comes to them.  One with no @limit cannot stop early and
 * sorts them all at once: the steps would only split the rest again each
 * time (25M of the layout's 875M instructions at 100k decode operators),
 * and the keys' one order is the same either way; where they pack in one
 * word each, by a radix sort (util/arena_sort.c), else by comparison.
 * Sorted by the radix sort, the keys' intervals are in order but not
 * their words: with *@ready at @nk, neither this attempt nor the next of
 * the same keys (the best fit) compares them again.
 */
#define KEYS_FIRST	1024
#define BOUND_CHECKS	32

/*
 * What the placement of a key a few keys ahead will read, asked for
 * before it is needed.  A decode layout's keys come by size, so each
 * key's interval, offset and bucket lie anywhere in arrays of tens of MB
 * (at 1M decode operators the intervals are 42 MB, the buckets' entries
 * 55 MB), a cache miss each that no instruction count shows: perf put a
 * fifth of attempt()'s time on the load of the next key's interval
 * alone.  PF_IVAL keys ahead, the interval; PF_NEAR keys ahead, whose
 * interval has come by then, its offset and flag (written when it is
 * placed), the first PF_LINES cache lines of the entries of its first
 * bucket (which its fit walks from the bottom and its insert searches)
 * and the first of that bucket's union (a few spans, searched by the
 * union's insert).  Hints: no result changes, and none is read out
 * of bounds (a prefetch past an array's end touches nothing).  The 1M
 * decode layout replayed alone, its memory kept: 0.52 to 0.35 s.  The
 * distances (8 to 32, 4 to 16) and lines (8 to 16, or as many as the
 * bucket holds) measured the same.
 */
#define PF_IVAL		16
#define PF_NEAR		8
#define PF_LINES	8
#define PF_LINE		64

static inline __attribute__((always_inline)) void
prefetch_ahead(const struct placer *p, const struct key *keys, uint32_t j,
	       uint32_t ready)
{
	if (j + PF_IVAL < ready)
		__builtin_prefetch(&p->v[keys[j + PF_IVAL].i]);
	if (j + PF_NEAR < ready) {
		uint32_t q = keys[j + PF_NEAR].i;

		__builtin_prefetch(&p->off[q], 1);
		__builtin_prefetch(&p->placed[q], 1);
		if (p->bent) {
			uint32_t b = bkt_of(p, p->v[q].start);
			uintptr_t e = (uintptr_t)&p->bent[p->bfirst[b]];

#pragma GCC unroll 8
			for (uint32_t l = 0; l < PF_LINES; l++)
				__builtin_prefetch((const void *)(e +
								  l * PF_LINE));
			__builtin_prefetch(&p->bun[(size_t)b * UNION_ROOM]);
		}
	}
}

static uint64_t attempt(struct placer *p, struct key *keys, uint32_t nk,
			uint32_t *ready, bool best, uint64_t limit)
{
	uint32_t step = nk / BOUND_CHECKS + 1, check = step;
	uint64_t height = p->base;

	/*
	 * Keys sorted whole from the first: by packed words if they fit (not
	 * the reference's, which compares).  Here, not in the loop below,
	 * where the call made the fits' inlined scan compile worse.
	 */
	if (!*ready && limit == UINT64_MAX && !p->plain &&
	    hu_arena__sort_packed(p, keys, nk))
		*ready = nk;
	memset(p->placed, 0, p->n * sizeof(*p->placed));
	if (p->bn) {
		memset(p->bn, 0, p->nbkt * sizeof(*p->bn));
		for (uint32_t b = 0; b < p->nbkt; b++)
			p->bent[p->bfirst[b]] = BKT_STOP;
		memset(p->unn, 0, p->nbkt * sizeof(*p->unn));
		memset(p->gn, 0, p->gbase[p->ngl] * sizeof(*p->gn));
	}
	p->nblk = 0;
	for (uint32_t j = 0; j < nk; j++) {
		uint32_t i, want, a = 0, z = 0;
		uint64_t off;

		if (j == *ready) {
			want = *ready < KEYS_FIRST ? KEYS_FIRST : 2 * *ready;
			if (want > nk || want < *ready || p->plain ||
			    limit == UINT64_MAX)
				want = nk;
			sort_keys_first(keys + *ready, nk - *ready, want - *ready);
			*ready = want;
		}
		prefetch_ahead(p, keys, j, *ready);
		i = keys[j].i;
		/* its buckets, for its fit and its insert */
		if (p->bent)
			bkt_range(p, p->v[i].start, p->v[i].end, &a, &z);
		off = fit(p, i, best, a, z);
		struct oent x = { off, off + p->v[i].bytes, p->v[i].start,
				  p->v[i].end };

		p->off[i] = off;
		p->placed[i] = true;
		if (by_offset(p, i))
			hu_arena__ord_insert(p, &x);
		else
			bkt_insert(p, &x, a, z);
		if (off + p->v[i].bytes > height)
			height = off + p->v[i].bytes;
		if (height >= limit) {
			/* where it went over: checked in those that follow */
			if (p->bound)
				(void)hu_arena__set_inst(p, INST_OVER +
					p->over_next++ % (NINST - INST_OVER),
					p->v[i].start);
			return UINT64_MAX;
		}
		if (j + 1 == check && limit != UINT64_MAX) {
			check += step;
			if (p->bound && hu_arena__cannot_win(p, limit))
				return UINT64_MAX;
		}
	}
	return height;
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
 * offsets.
 */
#define LONG_DIV	64

static void choose_way(struct placer *p, const bool *whole,
		       enum hu_arena_way way)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, span;
	size_t m = 0;

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
	span = p->t1 - p->t0 + 1;
	p->when_mul = span > 64 ? (uint64_t)(((unsigned __int128)64 << 64) /
					     span) : UINT64_MAX;
	if (way == HU_ARENA_BY_TIME || !m)
		return;
	if (way == HU_ARENA_BY_OFFSET)
		p->long_len = 0;
	p->split = true;
}

/*
 * The offset order's blocks, sized for the intervals kept there
 * (p->nlong, counted by hu_arena__bkt_setup()), not for every interval:
 * a decode layout keeps a few hundred there of a million (KV blocks,
 * weights kept long), and room for all was 190 MB of address space at
 * 1M operators, each array's first touch a huge page cleared.  A block
 * splits only when full, each half then at least OBLK / 2, so there are
 * at most 2 * nlong / OBLK + 1 of them.  Return: 0, or -ENOMEM.
 */
static int ord_alloc(struct placer *p)
{
	size_t nb = 2 * (size_t)p->nlong / OBLK + 2;

	if (!p->nlong)
		return 0;
	p->blk = hu_malloc_huge(nb * sizeof(*p->blk));
	p->bord = hu_malloc_huge(nb * sizeof(*p->bord));
	p->ents = hu_malloc_huge(nb * OBLK * sizeof(*p->ents));
	p->sat = hu_malloc_huge(nb * (OBLK + 1) * sizeof(*p->sat));
	p->sins = hu_malloc_huge(nb * OBLK * sizeof(*p->sins));
	p->sq = hu_malloc_huge(nb * NPIN);
	if (!p->many)
		p->smask = hu_malloc_huge(nb * OBLK * 2 * sizeof(*p->smask));
	return p->blk && p->bord && p->ents && p->sat && p->sins && p->sq &&
	       (p->many || p->smask) ? 0 : -ENOMEM;
}

/*
 * A whole attempt's offsets kept as the best so far.  Its keys are the
 * intervals not whole-span, each once, so they are copied in index
 * order: the same offsets, read and written in turn where the copy in
 * key order took two random accesses a key (41 MB of intervals and
 * 10 MB of offsets at 1M decode operators).
 */
static void keep_offsets(struct placer *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (!p->whole[i])
			p->v[i].off = p->off[i];
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
 * round kept when it is no taller.  Stops at @stop (hu_arena_enough():
 * close to the live peak, which no placement beats), when @effort
 * placements are spent, or after SEARCH_ROUNDS rounds (small schedules
 * gain nothing from more).
 */
static void search(struct placer *p, struct key *keys, bool *whole,
		   uint64_t area_h, uint64_t stop,
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
	for (uint64_t spent = 0, round = 0; *best > stop && spent < effort &&
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
			keep_offsets(p);
		}
	}
out:
	free(g);
	free(f);
}

/*
 * The online way (HU_ARENA_ONLINE): the intervals in start order, each
 * at the offset of one of its size that has ended (the last to end),
 * else at the top, as a slab allocator reuses blocks of one size: no
 * block is split or joined, so the arena is, for each size, the size
 * times the most of it live at once, summed.  On the planner's --compare
 * rows (DeepSeek-V2-Lite's and OLMoE-1B-7B's training steps) that is 1.5
 * to 3% above the live peak, for a fifth of the instructions of a first
 * fit in the same order over holes kept in a balanced tree (0.26 to
 * 0.43% above it).  The free blocks of each size are a list through the
 * intervals that ended there, found by the size in a table of open
 * addressing, grown as sizes come.
 */
struct size_list {
	uint64_t bytes;		/* 0: an empty slot */
	uint32_t head;		/* the last of this size to end; NIL: none */
};

#define NIL	UINT32_MAX

struct sizes {
	struct size_list *tab;
	uint32_t bits;		/* 2^bits slots */
	uint32_t used;
};

static size_t size_slot(const struct sizes *z, uint64_t bytes)
{
	size_t at = (size_t)((bytes * 0x9e3779b97f4a7c15ULL) >> (64 - z->bits));

	while (z->tab[at].bytes && z->tab[at].bytes != bytes)
		at = (at + 1) & (((size_t)1 << z->bits) - 1);
	return at;
}

/* The list of @bytes (> 0), added empty if new; NULL: out of memory. */
static struct size_list *size_list(struct sizes *z, uint64_t bytes)
{
	size_t at = size_slot(z, bytes), n = (size_t)1 << z->bits;
	struct sizes big = { NULL, z->bits + 1, z->used };

	if (z->tab[at].bytes)
		return &z->tab[at];
	if (2 * ((size_t)z->used + 1) > n) {
		/* at most half full: twice the slots, the lists moved over */
		big.tab = hu_calloc_huge(2 * n, sizeof(*big.tab));
		if (!big.tab)
			return NULL;
		for (size_t i = 0; i < n; i++)
			if (z->tab[i].bytes)
				big.tab[size_slot(&big, z->tab[i].bytes)] =
					z->tab[i];
		free(z->tab);
		*z = big;
		at = size_slot(z, bytes);
	}
	z->tab[at] = (struct size_list){ bytes, NIL };
	z->used++;
	return &z->tab[at];
}

/*
 * The placed intervals still live, a heap by their ends (util/heap.h),
 * each with its end beside it: the sifts compare ends without reading
 * the intervals.  By end, then by interval.
 */
struct live {
	uint64_t end;
	uint32_t i;
};

static inline bool ends_before(const void *ctx, const struct live *a,
			       const struct live *b)
{
	return a->end != b->end ? a->end < b->end : a->i < b->i;
}

static inline bool ends_after(const void *ctx, const struct live *a,
			      const struct live *b)
{
	return !ends_before(ctx, a, b);
}

HU_DEFINE_HEAP(live, struct live, const void *, ends_before, ends_after)

/*
 * Out of line: inlined into hu_arena_place_way(), its heap's sifts took
 * registers by what else that function holds, and a field more in the
 * placer (when_mul) made them 1.9M instructions dearer on DeepSeek-V2-
 * Lite's --compare rows; out of line, the two functions together take
 * 0.1M fewer than the one did before that field.
 */
static __attribute__((noinline)) int place_online(struct hu_ival *v,
						  uint32_t n,
						  uint64_t *height)
{
	struct sizes z = { hu_calloc_huge(64, sizeof(*z.tab)), 6, 0 };
	struct live *live = hu_malloc_huge(n * sizeof(*live));
	uint32_t nlive = 0;
	uint32_t *next = hu_malloc_huge(n * sizeof(*next));
	struct key *keys = NULL;
	uint64_t top = 0;
	bool sorted = true;
	int ret = -ENOMEM;

	for (uint32_t i = 1; i < n && sorted; i++)
		sorted = v[i - 1].start <= v[i].start;
	if (!sorted)
		keys = hu_malloc_huge(n * sizeof(*keys));
	if (!z.tab || !live || !next || (!sorted && !keys))
		goto out;
	if (!sorted) {
		for (uint32_t i = 0; i < n; i++)
			keys[i] = (struct key){ { v[i].start, 0, 0 }, i };
		sort_keys(keys, n);
	}
	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = sorted ? j : keys[j].i, k;
		struct size_list *l;

		while (nlive && live[0].end <= v[i].start) {
			k = live_pop(NULL, live, nlive--).i;
			l = size_list(&z, v[k].bytes);
			if (!l)
				goto out;
			next[k] = l->head;
			l->head = k;
		}
		/* one of no size at 0, below every other: it shares no byte */
		v[i].off = 0;
		if (!v[i].bytes)
			continue;
		l = size_list(&z, v[i].bytes);
		if (!l)
			goto out;
		if (l->head != NIL) {
			v[i].off = v[l->head].off;
			l->head = next[l->head];
		} else {
			v[i].off = top;
			top += v[i].bytes;
		}
		live_push(NULL, live, nlive++,
			  (struct live){ v[i].end, i });
	}
	*height = top;
	ret = 0;
out:
	free(keys);
	free(next);
	free(live);
	free(z.tab);
	return ret;
}

int hu_arena_place(struct hu_ival *v, uint32_t n, uint64_t effort,
		   uint64_t limit, uint64_t *height)
{
	return hu_arena_place_way(v, n, effort, limit, HU_ARENA_AUTO, height);
}

uint64_t hu_arena_enough(uint64_t floor, uint64_t limit, uint32_t n)
{
	uint64_t e = floor + floor / (n > HU_ARENA_EFFORT ? HU_ARENA_SLACK_BIG :
				      HU_ARENA_SLACK);

	if (e < floor)
		e = UINT64_MAX;
	if (limit && limit < e)
		e = limit > floor ? limit : floor;
	return e;
}

int hu_arena_place_way(struct hu_ival *v, uint32_t n, uint64_t effort,
		       uint64_t limit, enum hu_arena_way way,
		       uint64_t *height)
{
	struct placer p = { .v = v, .n = n, .plain = way & HU_ARENA_WHOLE,
			    .no_inst = way & HU_ARENA_NO_INSTANTS,
			    .bound = !(way & HU_ARENA_NO_BOUND) };
	bool prune = !p.plain;
	uint64_t t0 = UINT64_MAX, t1 = 0, floor, stop, best = UINT64_MAX, at;
	uint64_t area_h = UINT64_MAX;
	struct key *keys;
	bool *whole;
	uint32_t nk;
	int ret = -ENOMEM;

	*height = 0;
	if (!n)
		return 0;
	if (way & HU_ARENA_ONLINE)
		return place_online(v, n, height);
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
	if (!keys || !whole || !p.off || !p.cand || !p.placed ||
	    (n >= HU_ARENA_RADIX_MIN && hu_arena__rtab_alloc(&p)))
		goto out;
	/* Whole-span intervals at the bottom, in index order. */
	for (uint32_t i = 0; i < n; i++) {
		whole[i] = v[i].start == t0 && v[i].end == t1;
		if (whole[i]) {
			v[i].off = p.base;
			p.base += v[i].bytes;
		}
	}
	if (hu_arena_live_peak_way(v, n, way, &floor, &at))
		goto out;
	stop = way & HU_ARENA_NO_SLACK ? floor :
	       hu_arena_enough(floor, limit, n);
	way &= ~(HU_ARENA_WHOLE | HU_ARENA_NO_BOUND | HU_ARENA_NO_INSTANTS |
		 HU_ARENA_NO_SLACK);
	choose_way(&p, whole, way);
	if (hu_arena__bkt_setup(&p, whole) || ord_alloc(&p) ||
	    (p.bound && hu_arena__set_inst(&p, INST_PEAK, at)))
		goto out;
	for (int order = 0; order < NR_ORDERS && best > stop; order++) {
		uint32_t ready = 0;

		nk = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!whole[i])
				make_key(&keys[nk++], &v[i], i, order);
		for (int b = 0; b < 2 && best > stop; b++) {
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
				keep_offsets(&p);
			}
		}
	}
	search(&p, keys, whole, area_h, stop, effort, prune, &best);
	*height = best;
	ret = 0;
out:
	for (uint32_t i = 0; i < NINST; i++)
		free(p.inst[i].live);
	free(p.rtab);
	free(p.holes);
	free(p.placed);
	free(p.smask);
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
