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
 * resident.  The others are found by a max-end segment tree over the
 * intervals sorted by start, so a placement costs O(n (log n + k log k))
 * where k is how many intervals overlap one in time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct key {
	uint64_t k[3];
	uint32_t i;
};

struct span {
	uint64_t lo, hi;
};

struct placer {
	struct hu_ival *v;
	uint32_t n;
	uint32_t *by_start;	/* interval indices sorted by start */
	uint64_t *tree;		/* max end over by_start ranges */
	uint32_t leaves;
	uint64_t *off;		/* this attempt's offsets */
	bool *placed;
	struct span *cand;
	uint32_t *hits;
	uint32_t nr_hits;
	uint64_t base;		/* stacked whole-span intervals */
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	for (int i = 0; i < 3; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

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

/* Every interval in by_start[0..limit) whose end is past @start. */
static void collect(struct placer *p, uint32_t node, uint32_t lo,
		    uint32_t width, uint32_t limit, uint64_t start)
{
	if (lo >= limit || p->tree[node] <= start)
		return;
	if (width == 1) {
		p->hits[p->nr_hits++] = p->by_start[lo];
		return;
	}
	collect(p, 2 * node, lo, width / 2, limit, start);
	collect(p, 2 * node + 1, lo + width / 2, width / 2, limit, start);
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

/* One interval: the lowest hole that fits, or the tightest with @best. */
static uint64_t fit(struct placer *p, uint32_t i, bool best)
{
	const struct hu_ival *v = &p->v[i];
	uint64_t cur = p->base, pick = UINT64_MAX, pick_gap = UINT64_MAX;
	uint32_t k = 0;

	p->nr_hits = 0;
	collect(p, 1, 0, p->leaves, starts_before(p, v->end), v->start);
	for (uint32_t j = 0; j < p->nr_hits; j++) {
		uint32_t h = p->hits[j];

		if (p->placed[h])
			p->cand[k++] = (struct span){ p->off[h],
						      p->off[h] + p->v[h].bytes };
	}
	qsort(p->cand, k, sizeof(*p->cand), cmp_span);
	for (uint32_t j = 0; j < k; j++) {
		if (p->cand[j].lo >= cur + v->bytes) {
			uint64_t gap = p->cand[j].lo - cur;

			if (!best)
				return cur;
			if (gap < pick_gap) {
				pick = cur;
				pick_gap = gap;
			}
		}
		if (p->cand[j].hi > cur)
			cur = p->cand[j].hi;
	}
	return pick != UINT64_MAX ? pick : cur;
}

static uint64_t attempt(struct placer *p, const struct key *keys, uint32_t nk,
			bool best)
{
	uint64_t height = p->base;

	memset(p->placed, 0, p->n * sizeof(*p->placed));
	for (uint32_t j = 0; j < nk; j++) {
		uint32_t i = keys[j].i;
		uint64_t off = fit(p, i, best);

		p->off[i] = off;
		p->placed[i] = true;
		if (off + p->v[i].bytes > height)
			height = off + p->v[i].bytes;
	}
	return height;
}

static int cmp_start(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	return x->k[0] < y->k[0] ? -1 : x->k[0] > y->k[0];
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
	qsort(ev, 2 * (size_t)n, sizeof(*ev), cmp_key);
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

	for (uint32_t i = 0; i < n; i++)
		keys[i] = (struct key){ { p->v[i].start }, i };
	qsort(keys, n, sizeof(*keys), cmp_start);
	for (uint32_t i = 0; i < n; i++)
		p->by_start[i] = keys[i].i;
	for (p->leaves = 1; p->leaves < n; p->leaves *= 2)
		;
	p->tree = calloc(2 * (size_t)p->leaves, sizeof(*p->tree));
	if (!p->tree)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		p->tree[p->leaves + i] = p->v[p->by_start[i]].end;
	for (uint32_t i = p->leaves - 1; i >= 1; i--)
		p->tree[i] = p->tree[2 * i] > p->tree[2 * i + 1] ?
			     p->tree[2 * i] : p->tree[2 * i + 1];
	return 0;
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
 * The search: the greedy by area (the best single order on offload
 * schedules, where long-lived large tensors must go low) with each
 * interval's key scaled by a factor, a few factors redrawn per round, a
 * round kept when it is no taller.  Stops at the live peak, which no
 * placement beats, when @effort placements are spent, or after
 * SEARCH_ROUNDS rounds (small schedules gain nothing from more).
 */
static void search(struct placer *p, struct key *keys, bool *whole,
		   uint64_t floor, uint64_t effort, uint64_t *best)
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
		uint64_t h;

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
		qsort(keys, nk, sizeof(*keys), cmp_key);
		h = attempt(p, keys, nk, false);
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
	struct placer p = { .v = v, .n = n };
	uint64_t t0 = UINT64_MAX, t1 = 0, floor, best = UINT64_MAX;
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
	p.off = malloc(n * sizeof(*p.off));
	p.placed = malloc(n * sizeof(*p.placed));
	p.cand = malloc(n * sizeof(*p.cand));
	p.hits = malloc(n * sizeof(*p.hits));
	if (!keys || !whole || !p.by_start || !p.off || !p.placed || !p.cand ||
	    !p.hits || setup(&p, keys))
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
	for (int order = 0; order < NR_ORDERS && best > floor; order++) {
		nk = 0;
		for (uint32_t i = 0; i < n; i++)
			if (!whole[i])
				make_key(&keys[nk++], &v[i], i, order);
		qsort(keys, nk, sizeof(*keys), cmp_key);
		for (int b = 0; b < 2 && best > floor; b++) {
			uint64_t h = attempt(&p, keys, nk, b);

			if (h < best) {
				best = h;
				for (uint32_t j = 0; j < nk; j++)
					v[keys[j].i].off = p.off[keys[j].i];
			}
		}
	}
	search(&p, keys, whole, floor, effort, &best);
	*height = best;
	ret = 0;
out:
	free(p.hits);
	free(p.cand);
	free(p.placed);
	free(p.off);
	free(p.tree);
	free(p.by_start);
	free(whole);
	free(keys);
	return ret;
}
