// SPDX-License-Identifier: GPL-2.0
/*
 * At the start of step k, a tensor that is live but not resident must
 * come back before its next read, over the pool→device link, and if the
 * device held its only copy, it went to the pool over the device→pool
 * link after its last write.  In a window of steps the link moves at most
 * bandwidth × (the window's compute time + the stall spent inside it),
 * and the stall of disjoint windows adds up to at most max_slow × the
 * no-offload makespan.  So budget B is out of reach if some set of
 * disjoint windows needs more stall than that in total.  The bound is the
 * smallest B no such set rules out, found by bisection; for each B a
 * dynamic programme over a grid of instants picks the worst windows.
 * Tensors are treated as divisible and latency as free, both of which
 * only loosen the bound.
 */
#include <stdlib.h>
#include <string.h>

#include "bound.h"

/*
 * Instants: the most loaded step of each of GRID_T slices of time, and
 * GRID_S steps evenly spread, so that windows are short in compute-light
 * stretches (a decode token) as well as in compute-heavy ones.
 */
#define GRID_T	256
#define GRID_S	768

struct entry {
	uint32_t g;		/* grid instant */
	uint32_t read;		/* next read; NONE: not read again */
	int64_t release;	/* step after the last write; -1: clean */
	double bytes;
};

struct bnd {
	const struct life *lf;
	uint32_t ng, *step;	/* grid instants, ascending */
	double *t;		/* their no-offload times */
	double *ah, *ad;	/* [a * ng + b]: bytes that must stay, per window */
	double *pinned;		/* live pinned bytes at each instant */
	struct entry *en;
	size_t nen, cap_en;
};

static void grid(struct bnd *b)
{
	const struct life *lf = b->lf;
	double T = lf->t0[lf->n] > 0 ? lf->t0[lf->n] : 1;
	uint8_t *pick = xcalloc(lf->n + 1, 1);
	uint32_t top[GRID_T], k, s;

	for (s = 0; s < GRID_T; s++)
		top[s] = NONE;
	for (k = 0; k < lf->n; k++) {
		s = (uint32_t)(lf->t0[k] / T * GRID_T);
		s = s < GRID_T ? s : GRID_T - 1;
		if (top[s] == NONE || lf->base[k] > lf->base[top[s]])
			top[s] = k;
	}
	for (s = 0; s < GRID_T; s++)
		if (top[s] != NONE)
			pick[top[s]] = 1;
	for (s = 0; s < GRID_S; s++)
		pick[(uint64_t)lf->n * s / GRID_S] = 1;
	pick[0] = pick[lf->n] = 1;
	b->step = xmalloc((GRID_T + GRID_S + 2) * sizeof(*b->step));
	for (k = 0; k <= lf->n; k++)
		if (pick[k])
			b->step[b->ng++] = k;
	free(pick);
	b->t = xmalloc(b->ng * sizeof(*b->t));
	for (k = 0; k < b->ng; k++)
		b->t[k] = lf->t0[b->step[k]];
}

static uint32_t first_grid_after(const struct bnd *b, int64_t a)
{
	uint32_t lo = 0, hi = b->ng;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if ((int64_t)b->step[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One entry per grid instant strictly inside each live gap. */
static void entries(struct bnd *b)
{
	const struct life *lf = b->lf;
	const struct graph *g = lf->g;
	int64_t a, j, rel;
	uint32_t t, x;
	size_t i, cnt, base;

	for (t = 0; t < g->nt; t++) {
		cnt = nr_accesses(lf, t);
		base = lf->acc_off[t];
		rel = -1;
		for (i = 0; i <= cnt; i++) {
			if (i && (lf->acc_rw[base + i - 1] & ACC_W))
				rel = lf->acc_step[base + i - 1] + 1;
			gap_ends(lf, t, i, &a, &j);
			if (!gap_live(lf, t, i))
				continue;
			for (x = first_grid_after(b, a);
			     x < b->ng && b->step[x] < j; x++) {
				if (g->t[t].flags & TF_PIN) {
					b->pinned[x] += g->t[t].bytes;
					continue;
				}
				grow(&b->en, &b->cap_en, b->nen, sizeof(*b->en));
				b->en[b->nen++] = (struct entry){
					x, j < lf->n ? j : NONE, rel,
					g->t[t].bytes };
			}
		}
	}
}

static int cmp_read(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return (a->read > b->read) - (a->read < b->read);
}

static int cmp_release(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	if (a->g != b->g)
		return a->g < b->g ? -1 : 1;
	return (a->release < b->release) - (a->release > b->release);
}

/* What stays at instant g whatever the window: its operator's working set
 * and the pinned tensors. */
static double stay(const struct bnd *b, uint32_t g)
{
	return b->pinned[g] +
	       (b->step[g] < b->lf->n ? b->lf->ws[b->step[g]] : 0);
}

/* Does entry x have to move inside the window from its instant to o? */
static bool inside(const struct bnd *b, const struct entry *x, uint32_t o,
		   bool store)
{
	return store ? x->release >= (int64_t)b->step[o] :
	       x->read <= b->step[o];
}

/*
 * ah[g][h]: what must stay at g if nothing read by instant h may leave;
 * ad[f][g]: what must stay at g if nothing written after instant f may
 * have left (its store could only run inside the window).  Entries of g
 * sorted by read (or release), the window grows one instant at a time.
 */
static void windows(struct bnd *b, bool store)
{
	double *cell = store ? b->ad : b->ah, near;
	uint32_t g, d, o, ng = b->ng;
	size_t i = 0, e;

	qsort(b->en, b->nen, sizeof(*b->en), store ? cmp_release : cmp_read);
	for (g = 0; g < ng; g++) {
		near = 0;
		for (e = i; e < b->nen && b->en[e].g == g; e++)
			;
		for (d = 1; d <= (store ? g : ng - 1 - g); d++) {
			o = store ? g - d : g + d;
			for (; i < e && inside(b, &b->en[i], o, store); i++)
				near += b->en[i].bytes;
			cell[store ? o * ng + g : g * ng + o] = stay(b, g) + near;
		}
		i = e;
	}
}

static double need(double must, double budget, double bps, double dt)
{
	double s = (must - budget) / bps * 1e9 - dt;

	return s > 0 ? s : 0;
}

/* The most stall any set of disjoint windows forces at this budget. */
static double forced_stall(const struct bnd *b, const struct profile *p,
			   double budget, double *best)
{
	uint32_t x, y;

	best[0] = 0;
	for (y = 1; y < b->ng; y++) {
		best[y] = best[y - 1];
		for (x = 0; x < y; x++) {
			double dt = b->t[y] - b->t[x];
			double h = need(b->ah[x * b->ng + y], budget,
					p->h2d_bps, dt);
			double d = need(b->ad[x * b->ng + y], budget,
					p->d2h_bps, dt);
			double v = best[x] + (h > d ? h : d);

			if (v > best[y])
				best[y] = v;
		}
	}
	return best[b->ng - 1];
}

uint64_t lower_bound(const struct life *lf, const struct profile *p,
		     double max_slow)
{
	struct bnd b = { .lf = lf };
	double lo, hi = lf->peak0, mid, *best;
	double slack = max_slow * lf->t0[lf->n];
	int it;

	if (!lf->n)
		return 0;
	lo = life_floor(lf, NULL);
	grid(&b);
	b.pinned = xcalloc(b.ng, sizeof(*b.pinned));
	entries(&b);
	b.ah = xcalloc((size_t)b.ng * b.ng, sizeof(double));
	b.ad = xcalloc((size_t)b.ng * b.ng, sizeof(double));
	best = xmalloc(b.ng * sizeof(*best));
	windows(&b, false);
	windows(&b, true);
	if (forced_stall(&b, p, lo, best) > slack) {
		for (it = 0; it < 40 && hi - lo > 1e-4 * lo; it++) {
			mid = (lo + hi) / 2;
			if (forced_stall(&b, p, mid, best) > slack)
				lo = mid;
			else
				hi = mid;
		}
	} else {
		hi = lo;
	}
	free(best);
	free(b.ah);
	free(b.ad);
	free(b.pinned);
	free(b.en);
	free(b.step);
	free(b.t);
	return (uint64_t)hi;
}
