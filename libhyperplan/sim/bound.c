// SPDX-License-Identifier: LGPL-2.1-or-later
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
 *
 * Three things tighten that relaxation, each proved where it is built:
 *  - a tensor is whole: it can be off the device at k only if its own
 *    transfer, latency included, fits before its read (and its store
 *    after its last write) with all the run's stall; otherwise it stays
 *    at k whatever the budget (can_miss());
 *  - the peak is at least the average memory over any stretch of time,
 *    and a prefetch holds the whole tensor from its issue: over longer
 *    windows, what taking tensors off can save is a knapsack of whole
 *    transfers, latency included, in the time the link has
 *    (averaged());
 *  - the working set and what cannot leave are a floor for B.
 * Still relaxed, each of which only loosens the bound: in the windows of
 * the dynamic programme tensors are divisible and latency is free; a
 * tensor crosses once per window; only the grid's instants are checked;
 * a value held at the start has a pool copy.
 * Documentation/planner.md ("The lower bound") has the whole argument.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/bound.h"
#include "lib/util.h"
#include "util/huge.h"

/*
 * Instants: the most loaded step of each of GRID_T slices of time, and
 * GRID_S steps evenly spread, so that windows are short in compute-light
 * stretches (a decode token) as well as in compute-heavy ones.
 */
#define GRID_T	256
#define GRID_S	768
_Static_assert(GRID_T + GRID_S + 2 < UINT16_MAX, "grid instants fit 16 bits");

/*
 * Averaged windows: between GRID_A instants evenly spread in time, at
 * most SPAN_A apart; the stall a window needs is rounded down to one of
 * NLEV levels (0, then S × 2^(-(NLEV - 1 - l) / 4), up to S); savings of
 * transfers per nanosecond of link are grouped in buckets 1% wide.
 */
#define GRID_A	32
#define SPAN_A	GRID_A
#define NLEV	48
#define NBUCK	6000
#define BUCK_LO	(-10.0)		/* log(bytes) of bucket 0 */
/* forced_stall() passes over runs of RUN_X window starts at once */
#define RUN_X	64
/* averaged() counts coarse instants in bytes */
_Static_assert(GRID_A + 2 <= UINT8_MAX, "coarse instants fit a byte");

struct bnd {
	const struct life *lf;
	struct hp_mem *mem;	/* failed: the bound is not computed */
	const struct profile *p;
	uint32_t ng, *step;	/* grid instants, ascending */
	uint16_t *after;	/* [a + 1]: the first instant after step a */
	double *t;		/* their no-offload times */
	double *h, *d;		/* [tri(x, y)]: bytes that must stay, per
				 * window */
	size_t nblk;		/* cells of h's block: at least this many,
				 * handed over or allocated
				 * (hyper_plan__lower_bound_pair()) */
	double *pinned;		/* bytes pinned, or unable to leave in time */
	double *best;		/* scratch, then forced_stall()'s */
	double *most;		/* [y * nrun + r]: the most in h or d of
				 * cells (x, y), x in run r (RUN_X) */
	uint32_t nrun;		/* runs per row */
	/* averaged windows */
	int32_t *coarse;	/* grid instant → its index in cg[], or -1 */
	uint32_t *cg, ncg;	/* coarse instants, as grid indices */
	double *lev;		/* [(x * SPAN_A + y - x - 1) * NLEV + l] */
	struct avg *av;		/* what builds them, start by start */
	double slack;
};

static int grid(struct bnd *b)
{
	const struct life *lf = b->lf;
	double T = lf->t0[lf->n] > 0 ? lf->t0[lf->n] : 1;
	uint8_t *pick = hyper_plan__calloc(b->mem, (size_t)lf->n + 1, 1);
	uint32_t top[GRID_T], k, s;

	b->step = hyper_plan__array(b->mem, GRID_T + GRID_S + 2, sizeof(*b->step));
	if (!pick || !b->step) {
		free(pick);
		return -ENOMEM;
	}
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
	for (k = 0; k <= lf->n; k++)
		if (pick[k])
			b->step[b->ng++] = k;
	free(pick);
	b->t = hyper_plan__array(b->mem, b->ng, sizeof(*b->t));
	if (!b->t)
		return -ENOMEM;
	for (k = 0; k < b->ng; k++)
		b->t[k] = lf->t0[b->step[k]];
	return 0;
}

/*
 * For each step a from -1 to n, the first grid instant after it (ng if
 * none): entries() asks three times a gap, so a table, not a bisection.
 * The grid has fewer than 2^16 instants.  0, or -ENOMEM.
 */
static int grid_after(struct bnd *b)
{
	uint32_t n = b->lf->n, x = 0;

	b->after = hyper_plan__array(b->mem, (size_t)n + 2, sizeof(*b->after));
	if (!b->after)
		return -ENOMEM;
	for (uint32_t a = 0; a <= n + 1; a++) {	/* step a - 1 */
		while (x < b->ng && b->step[x] + 1 <= a)
			x++;
		b->after[a] = (uint16_t)x;
	}
	return 0;
}

static uint32_t first_grid_after(const struct bnd *b, int64_t a)
{
	return b->after[a + 1];
}

/* Whether the fetch of a tensor read at j, @fetch ns, fits after instant x. */
static bool fetch_fits(const struct bnd *b, uint32_t x, int64_t j,
		       double fetch)
{
	const double *t0 = b->lf->t0;

	return j >= b->lf->n || !(fetch > t0[j] - b->t[x] + b->slack);
}

/* Whether the store of a value written at rel - 1, @store ns, fits by x. */
static bool store_fits(const struct bnd *b, uint32_t x, int64_t rel,
		       double store)
{
	const double *t0 = b->lf->t0;

	return rel < 0 || store <= b->t[x] - t0[rel] + b->slack;
}

/*
 * Whether a whole tensor can be off the device at instant x: its fetch,
 * latency included, must fit between x and its read j, and the store of
 * a value written at rel - 1 between rel and x, each with at most all
 * the run's stall.  If not, it stays, whatever the budget.  The fetch
 * fits up to some instant and the store from some instant on (each side
 * moves one way with x, rounding included), so it can leave at the
 * instants [*x0, *x1) of [xs, xe), none if *x0 >= *x1.  Most gaps can
 * leave at every instant inside (a transfer is short beside the slack):
 * the last instant for the fetch and the first for the store answer
 * each search at once, the same answer as the search's (one way).
 */
static void miss_run(const struct bnd *b, uint32_t xs, uint32_t xe,
		     int64_t j, int64_t rel, uint64_t bytes, uint32_t *x0,
		     uint32_t *x1)
{
	double fetch = h2d_ns(b->p, bytes), store = d2h_ns(b->p, bytes);
	uint32_t lo = xs, hi = xe, mid;

	if (fetch_fits(b, xe - 1, j, fetch))
		lo = hi;
	else
		hi--;
	while (lo < hi) {	/* the first where the fetch does not fit */
		mid = lo + (hi - lo) / 2;
		if (fetch_fits(b, mid, j, fetch))
			lo = mid + 1;
		else
			hi = mid;
	}
	*x1 = lo;
	lo = xs;
	hi = *x1;
	if (lo < hi && store_fits(b, lo, rel, store))
		hi = lo;
	while (lo < hi) {	/* the first the store fits */
		mid = lo + (hi - lo) / 2;
		if (store_fits(b, mid, rel, store))
			hi = mid;
		else
			lo = mid + 1;
	}
	*x0 = lo;
}

/* Cell (x, y) of a triangle, x < y: the window from instant x to y. */
static size_t tri(uint32_t x, uint32_t y)
{
	return (size_t)y * (y - 1) / 2 + x;
}

/*
 * Each live gap at each grid instant x strictly inside it: pinned there if
 * it cannot leave, else its bytes must move inside any window from x that
 * reaches its read (h) or that starts before its release (d).  Counted
 * where that window first does: h at (x, the first instant at or after
 * the read), d at (the last instant at or before the release, x);
 * windows() adds them up along the window.  The instants where a gap can
 * leave are one run (miss_run()), so each run goes in as a difference,
 * its bytes where it starts and less them where it ends, and
 * tables_floor() and windows() add them up.  The bytes are whole numbers
 * far below 2^53: every sum is exact, whatever its order.
 */
static void entries(struct bnd *b, double *diag)
{
	const struct life *lf = b->lf;
	const struct graph *g = lf->g;
	uint32_t t, ng = b->ng, in_read, in_rel, xs, xe, x0, x1, lo, hi;
	int64_t a, j, rel;
	size_t i, cnt, base;
	double bytes;

	for (t = 0; t < g->nt; t++) {
		cnt = nr_accesses(lf, t);
		base = lf->acc_off[t];
		rel = -1;
		bytes = (double)g->t[t].bytes;
		for (i = 0; i <= cnt; i++) {
			if (i && (lf->acc_rw[base + i - 1] & ACC_W))
				rel = lf->acc_step[base + i - 1] + 1;
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (!hyper_plan__gap_live(lf, t, i))
				continue;
			/* the instants strictly inside, [xs, xe) */
			xs = first_grid_after(b, a);
			xe = first_grid_after(b, j - 1);
			if (xs >= xe)
				continue;
			/* the windows that hold the read, or the release */
			in_read = j < lf->n ? xe : ng;
			in_rel = rel < 0 ? 0 : first_grid_after(b, rel);
			x0 = x1 = xe;
			if (!(g->t[t].flags & TF_PIN))
				miss_run(b, xs, xe, j, rel, g->t[t].bytes,
					 &x0, &x1);
			if (x0 >= x1)
				x0 = x1 = xe;
			/* pinned in [xs, x0) and [x1, xe): mostly neither */
			if (xs < x0) {
				b->pinned[xs] += bytes;
				b->pinned[x0] -= bytes;
			}
			if (x1 < xe) {
				b->pinned[x1] += bytes;
				b->pinned[xe] -= bytes;
			}
			if (x0 == x1)
				continue;
			if (in_read < ng) {
				b->h[tri(x0, in_read)] += bytes;
				if (x1 < in_read)
					b->h[tri(x1, in_read)] -= bytes;
			}
			if (!in_rel)
				continue;
			/* before the release: (x - 1, x) */
			lo = x0 > 1 ? x0 : 1;
			hi = x1 < in_rel ? x1 : in_rel;
			if (lo < hi) {
				diag[lo] += bytes;
				diag[hi] -= bytes;
			}
			/* from it on: (in_rel - 1, x) */
			lo = x0 > in_rel ? x0 : in_rel;
			if (lo < x1) {
				b->d[tri(in_rel - 1, lo)] += bytes;
				if (x1 < ng)
					b->d[tri(in_rel - 1, x1)] -= bytes;
			}
		}
	}
}

/* What stays at instant g whatever the window: its operator's working set
 * and the pinned tensors. */
static double stay(const struct bnd *b, uint32_t g)
{
	return b->pinned[g] +
	       (b->step[g] < b->lf->n ? b->lf->ws[b->step[g]] : 0);
}

/*
 * h at (x, y): what must stay at x if nothing read by instant y may
 * leave; d at (x, y): what must stay at y if nothing written after
 * instant x may have left (its store could only run inside the window).
 * entries() counted each where the window first must move it, as
 * differences: row by row, h is summed along x and d along y (from the
 * row before as summed, kept in @prev, its cell (y - 1, y) without
 * @diag, which goes to that cell alone), then the window grows one
 * instant at a time: h from x on along y (@near holds each x's sum so
 * far), d from y back along x.  One pass over the rows, not two (summing
 * every row first): whole bytes, exact in any order.  Each run of RUN_X
 * cells of a row is done at once, for its most in h or d (most[], for
 * forced_stall()).  @st: stay() at each instant.
 */
static void windows(struct bnd *b, const double *diag, const double *st,
		    double *near, double *prev)
{
	uint32_t x, xs, xe, y, r, ng = b->ng;
	double *rh, *rd, *most, s, sum, top, v, sty;

	for (y = 1; y < ng; y++) {
		rh = &b->h[tri(0, y)];
		rd = &b->d[tri(0, y)];
		most = &b->most[(size_t)y * b->nrun];
		for (r = 0, s = 0; r * RUN_X < y; r++) {
			xs = r * RUN_X;
			xe = xs + RUN_X < y ? xs + RUN_X : y;
			for (x = xs, top = 0; x < xe; x++) {
				s = x ? rh[x] + s : rh[x];
				v = near[x] + s;
				near[x] = v;
				v = st[x] + v;
				rh[x] = v;
				top = v > top ? v : top;
			}
			most[r] = top;
		}
		/* the cell (y - 1, y) first, without prev[] */
		sty = st[y];
		prev[y - 1] = rd[y - 1];
		s = rd[y - 1] + diag[y];
		sum = s;
		v = sty + sum;
		rd[y - 1] = v;
		r = (y - 1) / RUN_X;
		top = most[r] > v ? most[r] : v;
		for (x = y - 1; ; r--) {
			xs = r * RUN_X;
			while (x-- > xs) {
				s = rd[x] + prev[x];
				prev[x] = s;
				sum += s;
				v = sty + sum;
				rd[x] = v;
				top = v > top ? v : top;
			}
			most[r] = top;
			if (!r)
				break;
			x = xs;
			top = most[r - 1];
		}
	}
}

/*
 * Averaged windows.  The peak is at least the average memory over any
 * stretch of time, and over a window each gap of each tensor holds its
 * bytes for the part of its no-offload length inside the window unless
 * it is taken off the device.  Taking it off saves at most
 *  - all of that part, if the gap runs past the window (its fetch, if
 *    any, comes later);
 *  - that part less one whole transfer, latency + bytes ÷ bandwidth, if
 *    it is read inside the window: a prefetch holds the tensor's bytes
 *    from its issue, and unless it is issued inside the window (using
 *    that much of the link there) the tensor is held all along.
 * The link carries at most the window's length in transfers, so the
 * saving is at most a fractional knapsack of these transfers; what is
 * left, divided by the window's length, is a budget the window needs
 * more stall to beat.
 */
struct gapv {
	uint32_t a1, j;		/* first step inside the gap; its read (n: none) */
	uint32_t t;		/* its tensor */
	uint32_t buck;		/* its knapsack item whole (a1 to j), if any: */
	double val, rate;	/* saving, saving per ns of link, bucket */
};

/* Per tensor: its bytes and their fetch time (h2d_ns()); pinned. */
struct tens {
	double *bytes, *fetch;
	bool *pin;
};

/*
 * The knapsacks of the windows from one coarse instant, all at once: an
 * item read inside window m is inside every longer one too, so a bucket
 * in use has a slot of SPAN_A cells, one per window, and it is in the
 * windows from its first item's on.  So a window's best rate is the best
 * of the items that begin in it or before: while items are added, top[m]
 * holds the best of those that begin in m alone (one cell an item, not
 * every later one too), and knap_windows() carries it along (a maximum
 * is exact in any order).
 */
struct kslot {
	double w[SPAN_A], v[SPAN_A], top[SPAN_A]; /* link time, saving,
						     best rate */
	uint32_t from;		/* the first window it is in */
};

struct knap {
	struct kslot *s;	/* by slot */
	size_t cap;
	uint32_t *slot;		/* bucket → its slot, or NONE */
	uint32_t *used, nused;	/* buckets in use, by slot */
	uint32_t *list;		/* one window's slots, buckets descending */
};

static int cmp_desc(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a < b) - (a > b);
}

/* The bucket of savings per nanosecond of link @e. */
static uint32_t bucket(double e)
{
	double x = (log(e) - BUCK_LO) * 100;

	return x < 0 ? 0 : x >= NBUCK ? NBUCK - 1 : (uint32_t)x;
}

/*
 * An item of saving @v for link time @w, @e = @v / @w, in bucket @i, in
 * windows @m to @ny - 1.
 */
static int knap_add(struct knap *k, double v, double w, double e,
		    uint32_t i, uint32_t m, uint32_t ny, struct hp_mem *mem)
{
	struct kslot *c;

	if (k->slot[i] == NONE) {
		if (hyper_plan__grow(mem, &k->s, &k->cap, k->nused,
				     sizeof(*k->s)))
			return -ENOMEM;
		k->slot[i] = k->nused;
		k->used[k->nused] = i;
		c = &k->s[k->nused++];
		memset(c, 0, sizeof(*c));
		c->from = m;
	}
	c = &k->s[k->slot[i]];
	if (m < c->from)
		c->from = m;
	if (e > c->top[m])
		c->top[m] = e;
	for (; m < ny; m++) {
		c->w[m] += w;
		c->v[m] += v;
	}
	return 0;
}

static double level(const struct bnd *b, uint32_t l)
{
	return l ? b->slack * exp2(-(double)(NLEV - 1 - l) / 4) : 0;
}

/*
 * The budget window m, [sx, sy], forces at each stall level into lev[]:
 * its knapsack takes the buckets by rate, best first, and the last one in
 * part.  @nl slots in k->list, buckets descending.
 */
static void knap_levels(const struct bnd *b, const struct knap *k,
			uint32_t nl, uint32_t m, uint32_t sx, uint32_t sy,
			double held, double saved, double *lev)
{
	const double *t0 = b->lf->t0;
	double dt = t0[sy] - t0[sx], cw = 0, cv = 0;
	uint32_t l, u = 0;

#define KW(u)	k->s[k->list[u]].w[m]
#define KV(u)	k->s[k->list[u]].v[m]
	for (l = 0; l < NLEV; l++) {
		double cap = dt + level(b, l), part = 0;

		while (u < nl && cw + KW(u) <= cap) {
			cw += KW(u);
			cv += KV(u++);
		}
		if (u < nl) {
			part = (cap - cw) * k->s[k->list[u]].top[m];
			if (part > KV(u))
				part = KV(u);
		}
		lev[l] = cap > 0 && held > saved + cv + part ?
			 (held - saved - cv - part) / cap : 0;
	}
#undef KW
#undef KV
}

/* The knapsacks of all windows from @sx, @ny of them, to lev[]. */
static void knap_windows(const struct bnd *b, struct knap *k, uint32_t sx,
			 const uint32_t *sy, uint32_t ny, const double *held,
			 const double *saved, double *lev)
{
	uint32_t m, u, nl, s;

	qsort(k->used, k->nused, sizeof(*k->used), cmp_desc);
	for (u = 0; u < k->nused; u++) {
		struct kslot *c = &k->s[u];

		for (m = c->from + 1; m < ny; m++)
			if (c->top[m - 1] > c->top[m])
				c->top[m] = c->top[m - 1];
	}
	for (m = 0; m < ny; m++) {
		for (u = 0, nl = 0; u < k->nused; u++) {
			s = k->slot[k->used[u]];
			if (k->s[s].from <= m)
				k->list[nl++] = s;
		}
		knap_levels(b, k, nl, m, sx, sy[m], held[m], saved[m],
			    &lev[(size_t)m * NLEV]);
	}
	for (u = 0; u < k->nused; u++)
		k->slot[k->used[u]] = NONE;
	k->nused = 0;
}

/*
 * Every live gap with a step inside, unpriced (price_gaps()); a tensor
 * has one gap more than accesses, so that many slots hold them all.
 * Out of memory: NULL, with @mem failed.
 */
static struct gapv *all_gaps(const struct life *lf, size_t *ng,
			     struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	struct gapv *v;
	size_t n = 0, i;
	int64_t a, j;
	uint32_t t;

	*ng = 0;
	v = hyper_plan__array(mem, lf->acc_off[g->nt] - lf->acc_off[0] + g->nt,
			      sizeof(*v));
	if (!v)
		return NULL;
	for (t = 0; t < g->nt; t++)
		for (i = 0; i <= nr_accesses(lf, t); i++) {
			if (!hyper_plan__gap_live(lf, t, i))
				continue;
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (j <= a + 1)
				continue;
			v[n++] = (struct gapv){ (uint32_t)(a + 1), (uint32_t)j,
						t, NONE, 0, 0 };
		}
	*ng = n;
	return v;
}

/*
 * Each gap's knapsack item whole, if any, when the first start is built:
 * the bisection mostly builds none (avg_bounds()), and the bucket takes a
 * logarithm.
 */
static void price_gaps(const struct life *lf, const struct tens *tn,
		       struct gapv *v, size_t ng)
{
	const double *t0 = lf->t0;
	double len;
	size_t i;

	for (i = 0; i < ng; i++, v++) {
		if (v->j == lf->n || tn->pin[v->t] || tn->fetch[v->t] <= 0)
			continue;
		len = t0[v->j] - t0[v->a1];
		if (len > tn->fetch[v->t]) {
			v->val = tn->bytes[v->t] * (len - tn->fetch[v->t]);
			v->rate = v->val / tn->fetch[v->t];
			v->buck = bucket(v->rate);
		}
	}
}

/*
 * One gap in the windows from @sx, the coarse instants @c1 to @c1 + @ny
 * - 1: held in each for the part of it inside, saved (or a knapsack
 * item) unless pinned.  Windows are added to in the gaps' order, as each
 * window alone would, so the sums are the same to the bit.  @upto[k]:
 * how many coarse instants are at step k or before, so the windows the
 * gap begins in and is read in are found without a walk.
 */
static int gap_windows(const struct bnd *b, struct knap *k,
			const struct tens *tn, const struct gapv *v,
			const uint8_t *upto, uint32_t c1, uint32_t sx,
			const double *tsy, uint32_t ny, double *held,
			double *saved)
{
	const double *t0 = b->lf->t0;
	uint32_t lo = v->a1 > sx ? v->a1 : sx, cend = c1 + ny, m, m1, o;
	double len, prod, bytes = tn->bytes[v->t], fetch, val, tlo = t0[lo];
	bool pin = tn->pin[v->t];

	/* its read is past sx, so a window holds part of it iff sy > lo */
	m = (upto[lo] < cend ? upto[lo] : cend) - c1;
	/* the gap runs past windows [m, m1) */
	m1 = (upto[v->j] < cend ? upto[v->j] : cend) - c1;
	/* times only grow: the windows with none of it inside come first */
	while (m < m1 && tsy[m] - tlo <= 0)
		m++;
	if (pin) {
		for (; m < m1; m++)
			held[m] += bytes * (tsy[m] - tlo);
	} else {
		for (; m < m1; m++) {
			prod = bytes * (tsy[m] - tlo);
			held[m] += prod;
			saved[m] += prod;
		}
	}
	/* read inside the window: the same part in each */
	m = m1;
	if (m == ny || (len = t0[v->j] - tlo) <= 0)
		return 0;
	prod = bytes * len;
	for (o = m; o < ny; o++)
		held[o] += prod;
	if (pin)
		return 0;
	fetch = tn->fetch[v->t];
	if (fetch <= 0) {	/* no bytes, no latency */
		for (o = m; o < ny; o++)
			saved[o] += prod;
	} else if (lo == v->a1) {	/* whole, as all_gaps() has it */
		if (v->buck != NONE)
			return knap_add(k, v->val, fetch, v->rate, v->buck, m,
					ny, b->mem);
	} else if (len > fetch) {
		val = bytes * (len - fetch);
		return knap_add(k, val, fetch, val / fetch, bucket(val / fetch),
				m, ny, b->mem);
	}
	return 0;
}

/*
 * What the averaged windows are built from, kept while the bisection may
 * still ask for a start's windows: most are never asked for
 * (avg_bounds()).
 */
struct avg {
	struct tens tn;
	struct gapv *gv;
	size_t ngap;
	uint8_t *upto;		/* [k]: coarse instants up to step k */
	double *wsint;		/* [k]: working sets' integral to k */
	struct knap k;
	uint32_t *near;		/* one start's gaps */
	uint8_t *built;		/* [x]: start x's levels are in lev[] */
	bool priced;		/* price_gaps() done */
	double *ub;		/* [x * SPAN_A + y - x - 1]: at or above
				 * every level of the window */
};

/*
 * The averaged windows from coarse instant @x, each at every level, into
 * lev[].  Each start's are built alone, from the same inputs in the same
 * order whichever starts come before it.  0, or -ENOMEM (the knapsack is
 * then left mid-way: the bound is given up).
 */
static int avg_start(struct bnd *b, uint32_t x)
{
	struct avg *av = b->av;
	const double *t0 = b->lf->t0;
	double held[SPAN_A], saved[SPAN_A], tsy[SPAN_A];
	uint32_t y, ymax, sx, sy[SPAN_A], ny, nn;
	size_t i;

	if (!av->priced) {
		price_gaps(b->lf, &av->tn, av->gv, av->ngap);
		av->priced = true;
	}
	sx = b->step[b->cg[x]];
	ymax = x + SPAN_A < b->ncg - 1 ? x + SPAN_A : b->ncg - 1;
	ny = ymax - x;
	for (y = 0; y < ny; y++) {
		sy[y] = b->step[b->cg[x + 1 + y]];
		tsy[y] = t0[sy[y]];
		held[y] = av->wsint[sy[y]] - av->wsint[sx];
		saved[y] = 0;
	}
	for (i = 0, nn = 0; i < av->ngap; i++)
		if (av->gv[i].a1 < sy[ny - 1] && av->gv[i].j > sx)
			av->near[nn++] = (uint32_t)i;
	for (i = 0; i < nn; i++)
		if (gap_windows(b, &av->k, &av->tn, &av->gv[av->near[i]],
				av->upto, x + 1, sx, tsy, ny, held, saved))
			return -ENOMEM;
	knap_windows(b, &av->k, sx, sy, ny, held, saved,
		     &b->lev[(size_t)x * SPAN_A * NLEV]);
	av->built[x] = 1;
	return 0;
}

/*
 * ub[] for each averaged window: a level is at most (held - saved) / dt,
 * the knapsack's savings and the stall only lower it (each is a
 * non-negative term taken off, or added to the divisor, and rounding is
 * monotone).  held - saved is what the window holds of the working sets,
 * of the pinned gaps, and of the gaps read inside it that cannot go for
 * free: the others are saved whole.  That is, per window,
 *  - the integral of the working sets and of the pinned gaps' bytes (a
 *    running sum of whole bytes, exact) between its ends, and
 *  - for each gap read inside it, its bytes times its length from the
 *    window's start or its own, whichever is later: the same for every
 *    window from that start that ends after the read, so added once per
 *    start and coarse instant and summed along the ends.
 * These sums differ from the levels' own (other terms, other order) by
 * rounding alone: each is at most n + gaps + 8 terms, all within the
 * run's total of bytes x time, so the error is under mu, added.  A
 * window whose bound is within the budget forces no stall and is not
 * built.  0, or -ENOMEM.
 */
static int avg_bounds(struct bnd *b)
{
	const struct life *lf = b->lf;
	const double *t0 = lf->t0;
	struct avg *av = b->av;
	double tc[GRID_A + 2], lint[GRID_A + 2], acc = 0, total, mu, tj, dt;
	double (*gr)[GRID_A + 2];	/* [Y][x]: read before coarse Y */
	double whole, ta, *row;
	uint32_t ncg = b->ncg, x, y, xe, xa;
	int64_t *pd, live = 0;
	size_t i, k;

	pd = hyper_plan__calloc(b->mem, (size_t)lf->n + 1, sizeof(*pd));
	gr = hyper_plan__calloc(b->mem, GRID_A + 2, sizeof(*gr));
	if (!pd || !gr) {
		free(pd);
		free(gr);
		return -ENOMEM;
	}
	for (x = 0; x < ncg; x++)
		tc[x] = t0[b->step[b->cg[x]]];
	total = av->wsint[lf->n];
	for (i = 0; i < av->ngap; i++) {
		const struct gapv *v = &av->gv[i];
		double bytes = av->tn.bytes[v->t];

		tj = t0[v->j];
		total += bytes * (tj - t0[v->a1]);
		if (av->tn.pin[v->t]) {
			pd[v->a1] += (int64_t)lf->g->t[v->t].bytes;
			pd[v->j] -= (int64_t)lf->g->t[v->t].bytes;
			continue;
		}
		if (v->j >= lf->n || av->tn.fetch[v->t] <= 0)
			continue;
		/*
		 * The starts before its read, the ends after it: from the
		 * starts up to its own (those at step a1 or before, then any
		 * at its instant), all of it, the same product for each, so
		 * worked out once; from later ones their part.
		 */
		xe = av->upto[v->j - 1];
		row = gr[av->upto[v->j]];
		ta = t0[v->a1];
		whole = bytes * (tj - ta);
		xa = av->upto[v->a1] < xe ? av->upto[v->a1] : xe;
		for (x = 0; x < xa; x++)
			row[x] += whole;
		for (; x < xe && !(tc[x] > ta); x++)
			row[x] += whole;
		for (; x < xe; x++)
			row[x] += bytes * (tj - tc[x]);
	}
	for (k = 0, x = 0; k <= lf->n; k++) {
		live += pd[k];
		while (x < ncg && b->step[b->cg[x]] == k)
			lint[x++] = acc;
		if (k < lf->n)
			acc += (double)((uint64_t)live + lf->ws[k]) *
			       (t0[k + 1] - t0[k]);
	}
	free(pd);
	for (y = 1; y < ncg; y++)
		for (x = 0; x < ncg; x++)
			gr[y][x] += gr[y - 1][x];
	mu = 64.0 * (double)(lf->n + av->ngap + 8) * DBL_EPSILON * total;
	for (x = 0; x + 1 < ncg; x++)
		for (y = x + 1; y <= x + SPAN_A && y < ncg; y++) {
			dt = tc[y] - tc[x];
			av->ub[(size_t)x * SPAN_A + y - x - 1] = dt > 0 ?
				(lint[y] - lint[x] + gr[y][x] + mu) / dt :
				INFINITY;
		}
	free(gr);
	return 0;
}

/*
 * The inputs of the averaged windows and their bounds (avg_bounds()),
 * into b->av; lev[] is built start by start (avg_start()).  0, or
 * -ENOMEM.
 */
static int avg_prepare(struct bnd *b)
{
	const struct life *lf = b->lf;
	const double *t0 = lf->t0;
	double T = t0[lf->n];
	struct avg *av;
	uint32_t x, y;
	size_t i;

	av = b->av = hyper_plan__calloc(b->mem, 1, sizeof(*av));
	if (!av)
		return -ENOMEM;
	av->tn.bytes = hyper_plan__array(b->mem, lf->g->nt,
					 sizeof(*av->tn.bytes));
	av->tn.fetch = hyper_plan__array(b->mem, lf->g->nt,
					 sizeof(*av->tn.fetch));
	av->tn.pin = hyper_plan__array(b->mem, lf->g->nt, sizeof(*av->tn.pin));
	if (b->mem->failed)
		return -ENOMEM;
	for (i = 0; i < lf->g->nt; i++) {
		av->tn.bytes[i] = (double)lf->g->t[i].bytes;
		av->tn.fetch[i] = h2d_ns(b->p, av->tn.bytes[i]);
		av->tn.pin[i] = lf->g->t[i].flags & TF_PIN;
	}
	av->gv = all_gaps(lf, &av->ngap, b->mem);
	b->coarse = hyper_plan__array(b->mem, b->ng, sizeof(*b->coarse));
	b->cg = hyper_plan__array(b->mem, GRID_A + 2, sizeof(*b->cg));
	if (b->mem->failed)
		return -ENOMEM;
	for (x = 0, y = 0; x < b->ng; x++) {
		b->coarse[x] = -1;
		if ((y <= GRID_A && b->t[x] >= T * y / GRID_A) ||
		    x == b->ng - 1) {
			b->coarse[x] = (int32_t)b->ncg;
			b->cg[b->ncg++] = x;
			while (y <= GRID_A && T * y / GRID_A <= b->t[x])
				y++;
		}
	}
	av->upto = hyper_plan__array(b->mem, (size_t)lf->n + 1,
				     sizeof(*av->upto));
	b->lev = hyper_plan__calloc(b->mem, (size_t)b->ncg * SPAN_A * NLEV,
				    sizeof(double));
	av->wsint = hyper_plan__array(b->mem, (size_t)lf->n + 1,
				      sizeof(*av->wsint));
	av->k.slot = hyper_plan__array(b->mem, NBUCK, sizeof(*av->k.slot));
	av->k.used = hyper_plan__array(b->mem, NBUCK, sizeof(*av->k.used));
	av->k.list = hyper_plan__array(b->mem, NBUCK, sizeof(*av->k.list));
	av->near = hyper_plan__array(b->mem, av->ngap, sizeof(*av->near));
	av->built = hyper_plan__calloc(b->mem, b->ncg, sizeof(*av->built));
	av->ub = hyper_plan__array(b->mem, (size_t)b->ncg * SPAN_A,
				   sizeof(*av->ub));
	if (b->mem->failed)
		return -ENOMEM;
	for (i = 0; i < NBUCK; i++)
		av->k.slot[i] = NONE;
	for (x = 0, y = 0; x <= lf->n; x++) {
		while (y < b->ncg && b->step[b->cg[y]] <= x)
			y++;
		av->upto[x] = (uint8_t)y;
	}
	av->wsint[0] = 0;
	for (x = 0; x < lf->n; x++)
		av->wsint[x + 1] = av->wsint[x] + (double)lf->ws[x] *
				   (t0[x + 1] - t0[x]);
	return avg_bounds(b);
}

static void avg_free(struct avg *av)
{
	if (!av)
		return;
	free(av->upto);
	free(av->near);
	free(av->k.s);
	free(av->k.slot);
	free(av->k.used);
	free(av->k.list);
	free(av->wsint);
	free(av->gv);
	free(av->tn.bytes);
	free(av->tn.fetch);
	free(av->tn.pin);
	free(av->built);
	free(av->ub);
	free(av);
}

/* Every averaged window built at once (the tables for the tests). */
static int averaged(struct bnd *b)
{
	uint32_t x;

	if (avg_prepare(b))
		return -ENOMEM;
	for (x = 0; x + 1 < b->ncg; x++)
		if (avg_start(b, x))
			return -ENOMEM;
	return 0;
}

/* The stall the averaged window from coarse x to y needs at @budget. */
static double avg_need(const struct bnd *b, uint32_t x, uint32_t y,
		       double budget)
{
	const double *lev = &b->lev[((size_t)x * SPAN_A + y - x - 1) * NLEV];
	int l;

	for (l = NLEV - 1; l >= 0 && lev[l] <= budget; l--)
		;
	if (l < 0)
		return 0;
	/* over S: no schedule within the slowdown does it */
	return l == NLEV - 1 ? b->slack + 1 : level(b, l);
}

static double need(double must, double budget, double bps, double dt)
{
	double s = (must - budget) / bps * 1e9 - dt;

	return s > 0 ? s : 0;
}

/*
 * Whether no window (x, y) of a run ending at @xe - 1 can raise best[y]
 * at @budget: best[x] + the stall of its bytes, at most best[xe - 1] +
 * the stall of @most, the run's most, over the run's shortest window.
 * best[] does not fall along x, need() does not fall as the bytes grow
 * nor rise as the window does, and a sum or a maximum of rounded terms
 * moves with them, so no cell of the run is over that.  Near the bound
 * nearly every run over the budget is passed over so: the stall a window
 * adds to the best before it is small beside the best up to y.
 */
static bool run_below(const struct bnd *b, const struct profile *p,
		      double budget, const double *best, double most,
		      uint32_t xe, uint32_t y)
{
	double dt = b->t[y] - b->t[xe - 1];
	double h = need(most, budget, p->h2d_bps, dt);
	double d = need(most, budget, p->d2h_bps, dt);

	return !(best[xe - 1] + (h > d ? h : d) > best[y]);
}

/*
 * The most stall any set of disjoint windows forces at this budget, or
 * some stall over the slack as soon as there is one (the bound asks no
 * more).  A window whose bytes are within the budget forces none, and
 * best[] never falls, so it is passed over, and so is a run of them
 * (most[], windows()): most cells are within it near the bound.  So is a
 * run none of whose cells can raise best[y] (run_below()), and an
 * averaged window whose levels are all within it (avg_bounds()), and a
 * start's are built when one of its windows is not.  0 with @mem failed.
 */
static double forced_stall(struct bnd *b, const struct profile *p,
			   double budget, double *best)
{
	uint32_t x, xe, y, r, cx, cy;

	best[0] = 0;
	for (y = 1; y < b->ng; y++) {
		const double *rh = &b->h[tri(0, y)], *rd = &b->d[tri(0, y)];
		const double *most = &b->most[(size_t)y * b->nrun];

		best[y] = best[y - 1];
		for (r = 0; r * RUN_X < y; r++) {
			if (most[r] <= budget)
				continue;
			xe = (r + 1) * RUN_X < y ? (r + 1) * RUN_X : y;
			if (run_below(b, p, budget, best, most[r], xe, y))
				continue;
			for (x = r * RUN_X; x < xe; x++) {
				double dt, h, d, v;

				if (rh[x] <= budget && rd[x] <= budget)
					continue;
				dt = b->t[y] - b->t[x];
				h = need(rh[x], budget, p->h2d_bps, dt);
				d = need(rd[x], budget, p->d2h_bps, dt);
				v = best[x] + (h > d ? h : d);
				if (v > best[y])
					best[y] = v;
			}
		}
		/* without averaged windows (bound_below()), none */
		cy = b->lev && b->coarse[y] > 0 ? (uint32_t)b->coarse[y] : 0;
		for (cx = cy > SPAN_A ? cy - SPAN_A : 0; cx < cy; cx++) {
			double v;

			if (!(b->av->ub[(size_t)cx * SPAN_A + cy - cx - 1] >
			      budget))
				continue;
			if (!b->av->built[cx] && avg_start(b, cx))
				return 0;
			v = best[b->cg[cx]] + avg_need(b, cx, cy, budget);
			if (v > best[y])
				best[y] = v;
		}
		if (best[y] > b->slack)
			return best[y];
	}
	return best[b->ng - 1];
}

/*
 * h and d in one block (8 MB at the grid's full size), from
 * hyper_plan__block(): on 2 MiB and advised whole, so that where the
 * caller keeps glibc's defaults its fresh pages come in a few huge
 * faults, not 4 KiB at a time around the aligned inside of a plain
 * calloc().  It is cleared here, as one handed over from the other
 * order's bound is (its pages are in already).  b->h NULL on failure.
 */
static void tri_block(struct bnd *b)
{
	size_t cells = 2 * tri(0, b->ng);
	struct hu_part part[] = {
		HU_PART(b->h, cells > b->nblk ? cells : b->nblk, false),
	};

	if (!b->h || b->nblk < cells) {
		free(b->h);
		b->nblk = part[0].n;
		hyper_plan__block(b->mem, part, ARRAY_SIZE(part));
	}
	if (b->h)
		memset(b->h, 0, cells * sizeof(double));
}

/*
 * The grid, pinned[] and the differences of h and d, into @b (on
 * failure, what was built stays there for bnd_free()); *@lo rises to
 * what stays at any budget.
 */
static int tables_floor(struct bnd *b, double *lo)
{
	uint32_t g;

	if (!b->step && grid(b))	/* else built ahead, for its size */
		return -ENOMEM;
	b->pinned = hyper_plan__calloc(b->mem, b->ng, sizeof(*b->pinned));
	tri_block(b);
	b->d = b->h ? b->h + tri(0, b->ng) : NULL;
	b->best = hyper_plan__calloc(b->mem, b->ng, sizeof(*b->best));
	if (!b->pinned || !b->h || !b->best || grid_after(b))
		return -ENOMEM;
	entries(b, b->best);
	free(b->after);
	b->after = NULL;
	for (g = 1; g < b->ng; g++) {
		b->pinned[g] += b->pinned[g - 1];
		b->best[g] += b->best[g - 1];
	}
	/* what cannot leave in time stays at any budget */
	for (g = 0; g < b->ng; g++)
		if (stay(b, g) > *lo)
			*lo = stay(b, g);
	return 0;
}

/*
 * The windows of h and d from tables_floor()'s differences (its diagonal
 * ones summed in best[]), and most[].  0, or -ENOMEM.
 */
static int tables_windows(struct bnd *b)
{
	uint32_t ng = b->ng, x;
	double *near, *st;

	b->nrun = (ng + RUN_X - 1) / RUN_X;
	b->most = hyper_plan__calloc(b->mem, (size_t)ng * b->nrun,
				     sizeof(*b->most));
	near = hyper_plan__calloc(b->mem, 3 * (size_t)ng, sizeof(*near));
	if (!b->most || !near) {
		free(near);
		return -ENOMEM;
	}
	st = near + 2 * (size_t)ng;
	for (x = 0; x < ng; x++)
		st[x] = stay(b, x);
	windows(b, b->best, st, near, near + ng);
	free(near);
	return 0;
}

/* Everything the bisection reads, as tables_floor() says. */
static int tables(struct bnd *b, double *lo)
{
	if (tables_floor(b, lo) || tables_windows(b))
		return -ENOMEM;
	return averaged(b);
}

/* The tables a struct bound_tables can take over are freed by its own. */
static void bnd_free(struct bnd *b)
{
	struct bound_tables shared = {
		.step = b->step, .pinned = b->pinned, .h = b->h, .d = b->d,
		.cg = b->cg, .lev = b->lev,
	};

	free(b->best);
	free(b->most);
	free(b->after);
	free(b->t);
	free(b->coarse);
	avg_free(b->av);
	hyper_plan__bound_tables_free(&shared);
}

/*
 * Whether no budget up to @cap is within reach, from the windows of h
 * and d alone, before averaged() (the most of the work) is built.
 * forced_stall() does not fall as the budget grows (need() and
 * avg_need() do not, and a sum or a maximum of rounded terms does not),
 * and the averaged windows only add candidates to its maxima: if it is
 * over the slack at @cap without them, it is with them at every budget
 * up to @cap.  Then the bisection keeps as its answer either its first
 * high end, @hi, or a budget within reach, above @cap: no answer is
 * below @cap if @hi is not.  @cap < 2^53 is a double exactly.
 */
static bool out_of_reach(struct bnd *b, uint64_t cap, double hi)
{
	if (cap >= (uint64_t)1 << 53 || (uint64_t)hi < cap)
		return false;
	return forced_stall(b, b->p, (double)cap, b->best) > b->slack;
}

/*
 * The bound, or @cap if it is not below @cap (UINT64_MAX: always the
 * bound); 0 with @mem failed.  The bound is never below what stays at
 * any budget (the bisection's low end), nor below @cap when
 * out_of_reach() says so: then neither the averaged windows nor the
 * bisection are needed.
 */
static uint64_t bound_below(struct bnd *b, uint64_t cap)
{
	const struct life *lf = b->lf;
	double lo, hi = lf->peak0, mid;
	uint64_t ret;
	int it;

	lo = hyper_plan__life_floor(lf, NULL);
	if (tables_floor(b, &lo))
		return 0;
	if ((uint64_t)lo >= cap)
		return cap;
	if (tables_windows(b))
		return 0;
	if (hi < lo)
		hi = lo;
	if (cap != UINT64_MAX && out_of_reach(b, cap, hi))
		return cap;
	if (avg_prepare(b))
		return 0;
	if (forced_stall(b, b->p, lo, b->best) > b->slack) {
		for (it = 0; it < 40 && hi - lo > 1e-4 * lo; it++) {
			mid = (lo + hi) / 2;
			if (forced_stall(b, b->p, mid, b->best) > b->slack)
				lo = mid;
			else if (b->mem->failed)
				return 0;
			else
				hi = mid;
		}
	} else if (b->mem->failed) {
		return 0;
	} else {
		hi = lo;
	}
	ret = (uint64_t)hi;
	return ret < cap ? ret : cap;
}

/* hyper_plan__lower_bound_below() into @b, which bnd_free() then frees. */
static uint64_t bound_in(struct bnd *b, double max_slow, uint64_t cap)
{
	uint64_t ret;

	if (!b->lf->n)
		return 0;
	b->slack = max_slow * b->lf->t0[b->lf->n];
	ret = bound_below(b, cap);
	return b->mem->failed ? 0 : ret;
}

uint64_t hyper_plan__lower_bound_below(const struct life *lf,
				       const struct profile *p,
				       double max_slow, uint64_t cap,
				       struct hp_mem *mem)
{
	struct bnd b = { .lf = lf, .p = p, .mem = mem };
	uint64_t ret = bound_in(&b, max_slow, cap);

	bnd_free(&b);
	return ret;
}

/**
 * hyper_plan__lower_bound_pair() - the lesser of two orders' bounds
 * @first: the order bounded first, whole
 * @then: the order bounded below @first's bound
 * @p: the profile both are timed on
 * @max_slow: the slowdown goal
 * @mem: the plan's memory
 *
 * hyper_plan__lower_bound() of @first, then
 * hyper_plan__lower_bound_below() of @then capped at it, the same to the
 * byte.  The second takes over the first's h and d block (8 MB at the
 * grid's full size, allocated for the larger of the two grids: the
 * second's is built first) instead of a fresh one: where the caller
 * keeps glibc's defaults, that block was unmapped or trimmed when
 * freed, and the next was faulted in again.
 *
 * Return: the lesser bound; 0 with @mem failed.
 */
uint64_t hyper_plan__lower_bound_pair(const struct life *first,
				      const struct life *then,
				      const struct profile *p,
				      double max_slow, struct hp_mem *mem)
{
	struct bnd a = { .lf = first, .p = p, .mem = mem };
	struct bnd b = { .lf = then, .p = p, .mem = mem };
	uint64_t ret = 0;

	/* @then's grid first, so that the block is big enough for both */
	if (then->n && grid(&b)) {
		bnd_free(&b);
		return 0;
	}
	a.nblk = 2 * tri(0, b.ng);
	ret = bound_in(&a, max_slow, UINT64_MAX);
	if (!mem->failed && a.h) {
		b.h = a.h;
		b.nblk = a.nblk;
		a.h = a.d = NULL;
	}
	bnd_free(&a);
	if (!mem->failed)
		ret = bound_in(&b, max_slow, ret);
	bnd_free(&b);
	return mem->failed ? 0 : ret;
}

uint64_t hyper_plan__lower_bound(const struct life *lf, const struct profile *p,
		     double max_slow, struct hp_mem *mem)
{
	return hyper_plan__lower_bound_below(lf, p, max_slow, UINT64_MAX,
					     mem);
}

int hyper_plan__bound_stalls(const struct life *lf, const struct profile *p,
			     double max_slow, const double *budget, size_t n,
			     double *stall, struct hp_mem *mem)
{
	struct bnd b = { .lf = lf, .p = p, .mem = mem };
	double lo;
	int ret;

	if (!lf->n)
		return -EINVAL;
	b.slack = max_slow * lf->t0[lf->n];
	lo = hyper_plan__life_floor(lf, NULL);
	/* the averaged windows as the bisection builds them, start by start */
	ret = tables_floor(&b, &lo) || tables_windows(&b) ||
	      avg_prepare(&b) ? -ENOMEM : 0;
	for (size_t i = 0; !ret && i < n; i++) {
		stall[i] = forced_stall(&b, p, budget[i], b.best);
		ret = mem->failed ? -ENOMEM : 0;
	}
	bnd_free(&b);
	return ret;
}

int hyper_plan__bound_tables(const struct life *lf, const struct profile *p,
			     double max_slow, struct bound_tables *bt,
			     struct hp_mem *mem)
{
	struct bnd b = { .lf = lf, .p = p, .mem = mem };
	int ret;

	memset(bt, 0, sizeof(*bt));
	if (!lf->n)
		return -EINVAL;
	b.slack = max_slow * lf->t0[lf->n];
	bt->floor = hyper_plan__life_floor(lf, NULL);
	ret = tables(&b, &bt->floor);
	if (!ret) {
		*bt = (struct bound_tables){
			.ng = b.ng, .step = b.step, .pinned = b.pinned,
			.h = b.h, .d = b.d, .floor = bt->floor,
			.ncg = b.ncg, .cg = b.cg, .lev = b.lev,
			.ub = b.av->ub, .span = SPAN_A, .nlev = NLEV,
			.nbuck = NBUCK, .buck_lo = BUCK_LO,
		};
		b.av->ub = NULL;
		b.step = b.cg = NULL;
		b.pinned = b.h = b.d = b.lev = NULL;
	}
	bnd_free(&b);
	return ret;
}

void hyper_plan__bound_tables_free(struct bound_tables *bt)
{
	free(bt->step);
	free(bt->pinned);
	free(bt->h);	/* d too */
	free(bt->cg);
	free(bt->lev);
	free(bt->ub);
	memset(bt, 0, sizeof(*bt));
}
