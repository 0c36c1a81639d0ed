// SPDX-License-Identifier: GPL-2.0
/*
 * The lower bound against the true optimum, on graphs small enough to
 * try every schedule.  A schedule of a fixed order is, per live gap of
 * each tensor, a choice: keep it on the device, or take it off right
 * after the access that opens the gap (storing it if the device holds
 * the only copy) and prefetch it again in the "before" list of any step
 * up to the one that reads it.  Every combination is built by the
 * emitter and simulated; the best peak within each slowdown must not be
 * below the bound for that slowdown.  (Detaching later than the gap's
 * first slot, or fetching twice in one gap, only holds bytes longer, so
 * the optimum is among these up to the order of operators in a slot.)
 */
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"

#include "plan_cases.h"
#include "sim/bound.h"
#include "passes/sched.h"
#include "sim/sim.h"
#include "util/huge.h"

#define MAX_SCHEDS	40000

static const double slows[] = { 0, 0.01, 0.05, 0.2, 1.0 };

/* One live gap and its options: 0 keep, 1.. prefetch at first + o - 1. */
struct choice {
	struct evict ev;
	uint32_t first, nopt;
};

struct best {
	uint64_t peak[ARRAY_SIZE(slows)];
	size_t tried;
};

static size_t choices(const struct life *lf, struct choice *c, size_t max)
{
	const struct graph *g = lf->g;
	size_t n = 0, i;
	int64_t a, j;
	uint32_t t;

	for (t = 0; t < g->nt; t++)
		for (i = 0; i <= nr_accesses(lf, t); i++) {
			if (!hyper_plan__gap_live(lf, t, i) || (g->t[t].flags & TF_PIN))
				continue;
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (n == max)
				return max + 1;
			c[n].ev = (struct evict){ .t = t, .a = (int32_t)a,
				.j = (int32_t)j, .store_slot = -1,
				.detach_slot = a < 0 ? -1 : (int32_t)(2 * a + 1) };
			c[n].first = a < 0 ? 0 : (uint32_t)(a + 1);
			c[n].nopt = j < lf->n ? (uint32_t)(j - c[n].first + 2) : 2;
			n++;
		}
	return n;
}

static void try_all(struct __test_metadata *_metadata, const struct life *lf,
		    const struct profile *p, struct choice *c, size_t nc,
		    struct best *b)
{
	uint32_t pick[32] = { 0 };
	struct evict ev[32];
	struct sim_result r;
	struct hp_err e;
	struct sched s;
	size_t i, nev, l;

	memset(b, 0xff, sizeof(b->peak));
	b->tried = 0;
	for (;;) {
		for (i = 0, nev = 0; i < nc; i++) {
			if (!pick[i])
				continue;
			ev[nev] = c[i].ev;
			ev[nev++].fetch_step = (int32_t)(c[i].first + pick[i] - 1);
		}
		ASSERT_EQ(0, hyper_plan__sched_build(&s, lf, ev, nev, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__simulate(&s, p, NULL, &r, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
		hyper_plan__sched_free(&s);
		b->tried++;
		for (l = 0; l < ARRAY_SIZE(slows); l++)
			if (slowdown(&r) <= slows[l] + 1e-9 && r.peak < b->peak[l])
				b->peak[l] = r.peak;
		for (i = 0; i < nc && ++pick[i] == c[i].nopt; i++)
			pick[i] = 0;
		if (i == nc)
			return;
	}
}

/* Every schedule of @g in its own order against the bound. */
static void exhaustive(struct __test_metadata *_metadata, struct graph *g,
		       const struct profile *p)
{
	uint32_t *order = malloc(g->nop * sizeof(*order)), k;
	struct choice c[32];
	size_t nc, l, total = 1;
	struct best b;
	struct life lf;

	ASSERT_NE(NULL, order);
	for (k = 0; k < g->nop; k++)
		order[k] = k;
	ASSERT_EQ(0, hyper_plan__life_build(&lf, g, order, &g->mem));
	nc = choices(&lf, c, ARRAY_SIZE(c));
	ASSERT_LE(nc, ARRAY_SIZE(c));
	for (l = 0; l < nc; l++)
		total *= c[l].nopt;
	ASSERT_LE(total, MAX_SCHEDS) TH_LOG("%s: %zu schedules", g->name, total);
	try_all(_metadata, &lf, p, c, nc, &b);
	EXPECT_EQ(total, b.tried);
	for (l = 0; l < ARRAY_SIZE(slows); l++) {
		uint64_t bound = hyper_plan__lower_bound(&lf, p, slows[l], &(struct hp_mem){ 0 });

		/* no offload is among the schedules: there is an optimum */
		ASSERT_NE(UINT64_MAX, b.peak[l]);
		EXPECT_LE(bound, b.peak[l])
			TH_LOG("%s on %s at %.0f%%: bound %llu above the optimum %llu",
			       g->name, p->name, 100 * slows[l],
			       (unsigned long long)bound,
			       (unsigned long long)b.peak[l]);
		TH_LOG("%s on %s at %.0f%%: bound %llu, optimum %llu of %llu",
		       g->name, p->name, 100 * slows[l], (unsigned long long)bound,
		       (unsigned long long)b.peak[l],
		       (unsigned long long)lf.peak0);
	}
	hyper_plan__life_free(&lf);
	free(order);
}

/* A 1 GB/s link with 0.5 us latency, compute free of memory costs. */
static const struct profile slow_link = {
	.name = "1GB/s", .device_bytes = 1e12, .mem_bps = 1e12, .flops = 1e15,
	.h2d_bps = 1e9, .d2h_bps = 1e9, .latency_ns = 500,
};

/* The same with no latency (a profile may say 0). */
static const struct profile free_link = {
	.name = "1GB/s, no latency", .device_bytes = 1e12, .mem_bps = 1e12,
	.flops = 1e15, .h2d_bps = 1e9, .d2h_bps = 1e9, .latency_ns = 0,
};

/* The same with a latency as long as a small tensor's transfer. */
static const struct profile laggy_link = {
	.name = "1GB/s, 200 us", .device_bytes = 1e12, .mem_bps = 1e12,
	.flops = 1e15, .h2d_bps = 1e9, .d2h_bps = 1e9, .latency_ns = 200000,
};

/*
 * Decode in miniature: @tokens passes over @nw weights of the given
 * sizes, each step reading one weight for @ns.
 */
static void decode_graph(struct graph *g, const uint64_t *bytes, uint32_t nw,
			 uint32_t tokens, uint64_t ns)
{
	uint32_t w[8], k, l;
	char id[32];

	hyper_plan__graph_init(g, "decode");
	for (l = 0; l < nw; l++) {
		snprintf(id, sizeof(id), "w%u", l);
		w[l] = hyper_plan__graph_add_tensor(g, id, bytes[l], HYPER_KIND_WEIGHT,
					TF_LIVE_IN | TF_LIVE_OUT, NULL);
	}
	for (k = 0; k < tokens; k++)
		for (l = 0; l < nw; l++) {
			snprintf(id, sizeof(id), "t%u.l%u", k, l);
			hyper_plan__graph_add_op(g, id, ns, &w[l], 1, NULL, 0, NULL, NULL);
		}
}

TEST(bound_below_optimum_decode)
{
	static const uint64_t sizes[][3] = {
		{ 1000000, 1000000, 1000000 },
		{ 3000000, 500000, 1500000 },
		{ 200000, 4000000, 800000 },
	};
	static const uint64_t ns[] = { 300000, 1000000, 3000000 };
	const struct profile *prof[] = { &slow_link, &free_link,
					      &laggy_link };
	unsigned int s, c, p;
	struct graph g;

	for (s = 0; s < ARRAY_SIZE(sizes); s++)
		for (c = 0; c < ARRAY_SIZE(ns); c++)
			for (p = 0; p < ARRAY_SIZE(prof); p++) {
				decode_graph(&g, sizes[s], 3, 2, ns[c]);
				exhaustive(_metadata, &g, prof[p]);
				hyper_plan__graph_free(&g);
			}
}

/*
 * A forward and backward pass in miniature: an activation written early
 * and read late (its only copy is on the device: taking it off needs a
 * store), two weights, a gradient written at the end.
 */
static void train_graph(struct graph *g, uint64_t act, uint64_t ns)
{
	uint32_t w0, w1, a, h, gr;

	hyper_plan__graph_init(g, "train");
	w0 = hyper_plan__graph_add_tensor(g, "w0", 2000000, HYPER_KIND_WEIGHT,
			      TF_LIVE_IN | TF_LIVE_OUT, NULL);
	w1 = hyper_plan__graph_add_tensor(g, "w1", 1000000, HYPER_KIND_WEIGHT,
			      TF_LIVE_IN | TF_LIVE_OUT, NULL);
	a = hyper_plan__graph_add_tensor(g, "a", act, HYPER_KIND_ACTIVATION, 0, NULL);
	h = hyper_plan__graph_add_tensor(g, "h", 10000, HYPER_KIND_ACTIVATION, 0, NULL);
	gr = hyper_plan__graph_add_tensor(g, "g", 10000, HYPER_KIND_GRADIENT, TF_LIVE_OUT,
			      NULL);
	hyper_plan__graph_add_op(g, "f0", ns, &w0, 1, &a, 1, NULL, NULL);
	hyper_plan__graph_add_op(g, "f1", ns, (uint32_t[]){ a, w1 }, 2, &h, 1, NULL, NULL);
	hyper_plan__graph_add_op(g, "b1", ns, (uint32_t[]){ h, w1 }, 2, &h, 1, NULL, NULL);
	hyper_plan__graph_add_op(g, "b0", ns, (uint32_t[]){ a, h, w0 }, 3, &gr, 1, NULL,
		     NULL);
}

TEST(bound_below_optimum_store)
{
	static const uint64_t act[] = { 500000, 3000000 };
	static const uint64_t ns[] = { 200000, 1000000, 4000000 };
	const struct profile *prof[] = { &slow_link, &free_link,
					      &laggy_link };
	unsigned int a, c, p;
	struct graph g;

	for (a = 0; a < ARRAY_SIZE(act); a++)
		for (c = 0; c < ARRAY_SIZE(ns); c++)
			for (p = 0; p < ARRAY_SIZE(prof); p++) {
				train_graph(&g, act[a], ns[c]);
				exhaustive(_metadata, &g, prof[p]);
				hyper_plan__graph_free(&g);
			}
}

/*
 * sim/bound.c builds its tables in one pass per gap or per starting
 * instant, with differences summed along and sums shared between
 * windows.  Here is the plain definition, each grid instant and each
 * window on its own (as the bound was first written), on the same grid:
 * every cell and level must be the same to the bit, and so the bound.
 */
struct ref {
	const struct life *lf;
	const struct profile *p;
	const struct bound_tables *bt;
	uint32_t ng;
	double *t, *ah, *ad, *pinned, *lev, slack, lo;
	double *kept;		/* [x * span + y - x - 1]: held - saved */
	int32_t *coarse;
};

static uint32_t ref_first_after(const struct ref *r, int64_t a)
{
	uint32_t x = 0;

	while (x < r->ng && (int64_t)r->bt->step[x] <= a)
		x++;
	return x;
}

static bool ref_can_miss(const struct ref *r, uint32_t x, int64_t j,
			 int64_t rel, uint64_t bytes)
{
	const double *t0 = r->lf->t0;
	double at = r->t[x];

	if (j < r->lf->n && h2d_ns(r->p, bytes) > t0[j] - at + r->slack)
		return false;
	return rel < 0 || d2h_ns(r->p, bytes) <= at - t0[rel] + r->slack;
}

static double ref_stay(const struct ref *r, uint32_t x)
{
	uint32_t k = r->bt->step[x];

	return r->pinned[x] + (k < r->lf->n ? r->lf->ws[k] : 0);
}

/* Each live gap at each instant inside it, then each window grown. */
static void ref_windows(struct ref *r)
{
	const struct life *lf = r->lf;
	const struct graph *g = lf->g;
	uint32_t t, x, y, ng = r->ng, in_read, in_rel;
	int64_t a, j, rel;
	size_t i, c;
	double near;

	for (t = 0; t < g->nt; t++) {
		rel = -1;
		for (i = 0; i <= nr_accesses(lf, t); i++) {
			c = lf->acc_off[t] + i - 1;
			if (i && (lf->acc_rw[c] & ACC_W))
				rel = lf->acc_step[c] + 1;
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (!hyper_plan__gap_live(lf, t, i))
				continue;
			in_read = j < lf->n ? ref_first_after(r, j - 1) : ng;
			in_rel = rel < 0 ? 0 : ref_first_after(r, rel);
			for (x = ref_first_after(r, a);
			     x < ng && r->bt->step[x] < j; x++) {
				double bytes = (double)g->t[t].bytes;

				if ((g->t[t].flags & TF_PIN) ||
				    !ref_can_miss(r, x, j, rel, g->t[t].bytes)) {
					r->pinned[x] += bytes;
					continue;
				}
				if (in_read < ng)
					r->ah[(size_t)x * ng + in_read] += bytes;
				if (in_rel && x)
					r->ad[(size_t)(in_rel <= x ? in_rel - 1 :
						       x - 1) * ng + x] += bytes;
			}
		}
	}
	for (x = 0; x < ng; x++)
		if (ref_stay(r, x) > r->lo)
			r->lo = ref_stay(r, x);
	for (x = 0; x < ng; x++)
		for (y = x + 1, near = 0; y < ng; y++) {
			near += r->ah[(size_t)x * ng + y];
			r->ah[(size_t)x * ng + y] = ref_stay(r, x) + near;
		}
	for (y = 0; y < ng; y++)
		for (x = y, near = 0; x-- > 0; ) {
			near += r->ad[(size_t)x * ng + y];
			r->ad[(size_t)x * ng + y] = ref_stay(r, y) + near;
		}
}

static int ref_desc(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return (a < b) - (a > b);
}

static double ref_level(const struct ref *r, uint32_t l)
{
	uint32_t n = r->bt->nlev;

	return l ? r->slack * exp2(-(double)(n - 1 - l) / 4) : 0;
}

/* Each averaged window: every gap, then a knapsack of bucket sums. */
static void ref_averaged(struct __test_metadata *_metadata, struct ref *r)
{
	const struct bound_tables *bt = r->bt;
	const struct life *lf = r->lf;
	const struct graph *g = lf->g;
	const double *t0 = lf->t0;
	uint32_t nb = bt->nbuck, x, y, sx, sy, lo, hi, t, *used, nused, u, l;
	double *w = calloc(nb, sizeof(*w)), *v = calloc(nb, sizeof(*v));
	double *top = calloc(nb, sizeof(*top));
	double *wsint = calloc(lf->n + 1, sizeof(*wsint));
	double held, saved, len, d, e, b, cw, cv, cap, part, *lev;
	int64_t a, j;
	size_t i;

	used = calloc(nb, sizeof(*used));
	ASSERT_TRUE(w && v && top && used && wsint);
	for (u = 0; u < lf->n; u++)
		wsint[u + 1] = wsint[u] + (double)lf->ws[u] *
			       (t0[u + 1] - t0[u]);
	for (x = 0; x + 1 < bt->ncg; x++)
		for (y = x + 1; y <= x + bt->span && y < bt->ncg; y++) {
			sx = bt->step[bt->cg[x]];
			sy = bt->step[bt->cg[y]];
			held = wsint[sy] - wsint[sx];
			saved = 0;
			nused = 0;
			for (t = 0; t < g->nt; t++)
				for (i = 0; i <= nr_accesses(lf, t); i++) {
					if (!hyper_plan__gap_live(lf, t, i))
						continue;
					hyper_plan__gap_ends(lf, t, i, &a, &j);
					if (j <= a + 1 || a + 1 >= sy || j <= sx)
						continue;
					lo = a + 1 > sx ? (uint32_t)a + 1 : sx;
					hi = j < sy ? (uint32_t)j : sy;
					if (hi <= lo || (len = t0[hi] - t0[lo]) <= 0)
						continue;
					b = (double)g->t[t].bytes;
					held += b * len;
					if (g->t[t].flags & TF_PIN)
						continue;
					if (j >= sy) {
						saved += b * len;
						continue;
					}
					d = h2d_ns(r->p, b);
					if (d <= 0) {
						saved += b * len;
						continue;
					}
					if (len <= d)
						continue;
					e = b * (len - d) / d;
					e = (log(e) - bt->buck_lo) * 100;
					u = e < 0 ? 0 : e >= nb ? nb - 1 : (uint32_t)e;
					if (w[u] == 0)
						used[nused++] = u;
					w[u] += d;
					v[u] += b * (len - d);
					e = b * (len - d) / d;
					if (e > top[u])
						top[u] = e;
				}
			r->kept[(size_t)x * bt->span + y - x - 1] =
				held - saved;
			qsort(used, nused, sizeof(*used), ref_desc);
			lev = &r->lev[((size_t)x * bt->span + y - x - 1) *
				      bt->nlev];
			for (l = 0, u = 0, cw = cv = 0; l < bt->nlev; l++) {
				cap = t0[sy] - t0[sx] + ref_level(r, l);
				part = 0;
				while (u < nused && cw + w[used[u]] <= cap) {
					cw += w[used[u]];
					cv += v[used[u++]];
				}
				if (u < nused) {
					part = (cap - cw) * top[used[u]];
					if (part > v[used[u]])
						part = v[used[u]];
				}
				lev[l] = cap > 0 && held > saved + cv + part ?
					 (held - saved - cv - part) / cap : 0;
			}
			for (u = 0; u < nused; u++)
				w[used[u]] = v[used[u]] = top[used[u]] = 0;
		}
	free(w);
	free(v);
	free(top);
	free(used);
	free(wsint);
}

static double ref_need(double must, double budget, double bps, double dt)
{
	double s = (must - budget) / bps * 1e9 - dt;

	return s > 0 ? s : 0;
}

/* Every window at every instant: the most stall they force. */
static double ref_stall(const struct ref *r, double budget, double *best)
{
	const struct bound_tables *bt = r->bt;
	uint32_t x, y, ng = r->ng, l;
	double v, h, d;

	best[0] = 0;
	for (y = 1; y < ng; y++) {
		best[y] = best[y - 1];
		for (x = 0; x < y; x++) {
			h = ref_need(r->ah[(size_t)x * ng + y], budget,
				     r->p->h2d_bps, r->t[y] - r->t[x]);
			d = ref_need(r->ad[(size_t)x * ng + y], budget,
				     r->p->d2h_bps, r->t[y] - r->t[x]);
			v = best[x] + (h > d ? h : d);
			if (v > best[y])
				best[y] = v;
		}
		if (r->coarse[y] <= 0)
			continue;
		for (x = 0; x < (uint32_t)r->coarse[y]; x++) {
			const double *lev;

			if (x + bt->span < (uint32_t)r->coarse[y])
				continue;
			lev = &r->lev[((size_t)x * bt->span + r->coarse[y] -
				       x - 1) * bt->nlev];
			for (l = bt->nlev; l > 0 && lev[l - 1] <= budget; l--)
				;
			v = !l ? 0 : l == bt->nlev ? r->slack + 1 :
			    ref_level(r, l - 1);
			v += best[bt->cg[x]];
			if (v > best[y])
				best[y] = v;
		}
	}
	return best[ng - 1];
}

static bool same_bits(double a, double b)
{
	return !memcmp(&a, &b, sizeof(a));
}

/*
 * The bisection's step (forced_stall(), which passes over runs of cells
 * within the budget at once, and runs whose stall cannot raise the best
 * so far) against every cell at budgets across the range, at cells' own
 * values and just below them, where a run's maximum decides, and close
 * around the @bound, where the bisection ends and most runs are passed
 * over for the best: within the slack both the same to the bit, else
 * both over it.
 */
static void stall_sweep(struct __test_metadata *_metadata, struct ref *r,
			const struct life *lf, const struct profile *p,
			double max_slow, double bound, double *best,
			const char *what)
{
	enum { SPREAD = 24, CELLS = 24, NEAR = 24,
	       NB = SPREAD + 2 * CELLS + NEAR };
	double budget[NB], stall[NB], top = lf->peak0 > r->lo ? lf->peak0 :
							       r->lo, ref;
	uint32_t ng = r->ng, i, x, y, bad = 0;
	size_t nc = (size_t)ng * (ng - 1) / 2, c;

	for (i = 0; i < SPREAD; i++)
		budget[i] = r->lo * 0.5 + (top * 1.1 - r->lo * 0.5) * i /
			    (SPREAD - 1);
	for (i = 0; i < NEAR; i++)
		budget[SPREAD + 2 * CELLS + i] = bound *
			(1 + ((double)i - NEAR / 2) * 0.0002);
	for (i = 0; i < CELLS; i++) {
		/* the cell (x, y) numbered c, as tri() numbers them */
		c = nc * (2 * i + 1) / (2 * CELLS);
		for (y = 1; (size_t)y * (y + 1) / 2 <= c; y++)
			;
		x = (uint32_t)(c - (size_t)y * (y - 1) / 2);
		budget[SPREAD + 2 * i] = i % 2 ? r->ad[(size_t)x * ng + y] :
						 r->ah[(size_t)x * ng + y];
		budget[SPREAD + 2 * i + 1] =
			nextafter(budget[SPREAD + 2 * i], 0);
	}
	ASSERT_EQ(0, hyper_plan__bound_stalls(lf, p, max_slow, budget, NB,
					      stall, &(struct hp_mem){ 0 }));
	for (i = 0; i < NB; i++) {
		ref = ref_stall(r, budget[i], best);
		if (ref > r->slack ? !(stall[i] > r->slack) :
		    !same_bits(ref, stall[i])) {
			bad++;
			TH_LOG("%s: at budget %.17g the stall is %.17g, not %.17g",
			       what, budget[i], stall[i], ref);
		}
	}
	EXPECT_EQ(0, bad) TH_LOG("%s: %u budgets' stalls differ", what, bad);
}

/*
 * The bound on each averaged window's levels: at or above every level,
 * and held - saved over the window's length (the plain sums) but for
 * rounding, each term in (a window cut short, a term left out, would be
 * off by a tensor's bytes x time).
 */
static void ub_check(struct __test_metadata *_metadata, const struct ref *r,
		     const char *what)
{
	const struct bound_tables *bt = r->bt;
	const double *t0 = r->lf->t0;
	double dt, ub, tol = 1e-7 * (double)r->lf->peak0 * t0[r->lf->n];
	uint32_t x, y, l, below = 0, off = 0;
	size_t w;

	for (x = 0; x + 1 < bt->ncg; x++)
		for (y = x + 1; y <= x + bt->span && y < bt->ncg; y++) {
			w = (size_t)x * bt->span + y - x - 1;
			ub = bt->ub[w];
			for (l = 0; l < bt->nlev; l++)
				below += !(bt->lev[w * bt->nlev + l] <= ub);
			dt = t0[bt->step[bt->cg[y]]] - t0[bt->step[bt->cg[x]]];
			if (dt > 0 && fabs(ub * dt - r->kept[w]) > tol) {
				off++;
				TH_LOG("%s: window (%u, %u): bound %.17g, plain %.17g",
				       what, x, y, ub, r->kept[w] / dt);
			}
		}
	EXPECT_EQ(0, below) TH_LOG("%s: %u levels over their bound", what,
				   below);
	EXPECT_EQ(0, off) TH_LOG("%s: %u bounds off the plain sums", what,
				 off);
}

/* The tables and the bound of @lf, against the plain definition. */
static void against_plain(struct __test_metadata *_metadata,
			  const struct life *lf, const struct profile *p,
			  double max_slow, const char *what)
{
	struct bound_tables bt;
	struct ref r = { .lf = lf, .p = p, .bt = &bt };
	double hi = lf->peak0, mid, *best;
	uint32_t x, y, ng, bad = 0;
	uint64_t bound;
	size_t nlev;
	int it;

	ASSERT_EQ(0, hyper_plan__bound_tables(lf, p, max_slow, &bt,
					      &(struct hp_mem){ 0 }));
	ng = r.ng = bt.ng;
	nlev = (size_t)bt.ncg * bt.span * bt.nlev;
	r.slack = max_slow * lf->t0[lf->n];
	r.lo = hyper_plan__life_floor(lf, NULL);
	r.t = calloc(ng, sizeof(*r.t));
	r.ah = calloc((size_t)ng * ng, sizeof(*r.ah));
	r.ad = calloc((size_t)ng * ng, sizeof(*r.ad));
	r.pinned = calloc(ng, sizeof(*r.pinned));
	r.lev = calloc(nlev, sizeof(*r.lev));
	r.kept = calloc((size_t)bt.ncg * bt.span, sizeof(*r.kept));
	r.coarse = malloc(ng * sizeof(*r.coarse));
	best = calloc(ng, sizeof(*best));
	ASSERT_TRUE(r.t && r.ah && r.ad && r.pinned && r.lev && r.kept &&
		    r.coarse && best);
	for (x = 0; x < ng; x++) {
		r.t[x] = lf->t0[bt.step[x]];
		r.coarse[x] = -1;
	}
	for (x = 0; x < bt.ncg; x++)
		r.coarse[bt.cg[x]] = (int32_t)x;
	ref_windows(&r);
	ref_averaged(_metadata, &r);
	for (x = 0; x < ng; x++)
		bad += !same_bits(r.pinned[x], bt.pinned[x]);
	for (y = 1; y < ng; y++)
		for (x = 0; x < y; x++) {
			size_t c = (size_t)y * (y - 1) / 2 + x;

			bad += !same_bits(r.ah[(size_t)x * ng + y], bt.h[c]);
			bad += !same_bits(r.ad[(size_t)x * ng + y], bt.d[c]);
		}
	EXPECT_EQ(0, bad) TH_LOG("%s: %u window cells differ", what, bad);
	EXPECT_TRUE(same_bits(r.lo, bt.floor)) TH_LOG("%s: floor", what);
	EXPECT_EQ(0, memcmp(r.lev, bt.lev, nlev * sizeof(*r.lev)))
		TH_LOG("%s: averaged levels differ", what);
	ub_check(_metadata, &r, what);
	bound = hyper_plan__lower_bound(lf, p, max_slow, &(struct hp_mem){ 0 });
	stall_sweep(_metadata, &r, lf, p, max_slow, (double)bound, best, what);
	/* the bisection, every window at every step */
	if (hi < r.lo)
		hi = r.lo;
	if (ref_stall(&r, r.lo, best) > r.slack) {
		for (it = 0; it < 40 && hi - r.lo > 1e-4 * r.lo; it++) {
			mid = (r.lo + hi) / 2;
			if (ref_stall(&r, mid, best) > r.slack)
				r.lo = mid;
			else
				hi = mid;
		}
	} else {
		hi = r.lo;
	}
	EXPECT_EQ((uint64_t)hi, bound) TH_LOG("%s: bound", what);
	free(r.t);
	free(r.ah);
	free(r.ad);
	free(r.pinned);
	free(r.lev);
	free(r.kept);
	free(r.coarse);
	free(best);
	hyper_plan__bound_tables_free(&bt);
}

/* The plain tests' goals and links: each case on one link, every goal. */
static const double goals[] = { 0, 0.01, 0.3 };
static const struct profile *const links[] = {
	&slow_link, &laggy_link, &hyper_plan__profile_table[0],
	&hyper_plan__profile_table[1],
};

FIXTURE(plain) {};
FIXTURE_SETUP(plain) {}
FIXTURE_TEARDOWN(plain) {}

/* Random graphs and cut-down models, both orders, a few links. */
TEST_F_TIMEOUT(plain, bound_tables_as_defined, 300)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 40, 1 },
		{ NULL, NULL, 300, 2 },
		{ NULL, NULL, 900, 3 },
		{ "olmoe-1b-7b", "train", 0, 4 },
		{ "llama3.1-8b", "infer", 0, 5 },
		{ "llama2-7b", "train-keep", 0, 6 },
	};
	unsigned int c, l;
	struct hp_err e;
	char what[128];
	struct job j;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		const struct profile *p = links[c % ARRAY_SIZE(links)];

		memset(&j, 0, sizeof(j));
		ASSERT_EQ(0, case_job(&j, &cases[c], p, &e)) TH_LOG("%s", e.msg);
		for (l = 0; l < ARRAY_SIZE(goals); l++) {
			snprintf(what, sizeof(what), "%s %s on %s at %g",
				 j.g.name, cases[c].mode ?: "", p->name,
				 goals[l]);
			against_plain(_metadata, &j.lf, p, goals[l], what);
			if (j.has_ref)
				against_plain(_metadata, &j.lf_ref, p, goals[l],
					      what);
			TH_LOG("%s: %u ops, %s", what, j.lf.n,
			       j.has_ref ? "two orders" : "one order");
		}
		hyper_plan__job_free(&j);
	}
}

/*
 * hyper_plan__lower_bound_below() is the lesser of the bound and its cap,
 * to the byte, at caps on both sides of the bound and of the floor.
 * Returns the bound.
 */
static uint64_t check_caps(struct __test_metadata *_metadata,
			   const struct life *lf, const struct profile *p,
			   double max_slow, const char *what)
{
	struct hp_mem mem = { 0 };
	uint64_t b, fl, cap[12], want, got;
	unsigned int k;

	b = hyper_plan__lower_bound(lf, p, max_slow, &mem);
	fl = hyper_plan__life_floor(lf, NULL);
	cap[0] = 0;
	cap[1] = 1;
	cap[2] = fl ? fl - 1 : 0;
	cap[3] = fl;
	cap[4] = fl + 1;
	cap[5] = b ? b - 1 : 0;
	cap[6] = b;
	cap[7] = b + 1;
	cap[8] = b + b / 1000;
	cap[9] = b - b / 1000;
	cap[10] = lf->peak0 + 1;
	cap[11] = UINT64_MAX;
	for (k = 0; k < ARRAY_SIZE(cap); k++) {
		want = b < cap[k] ? b : cap[k];
		got = hyper_plan__lower_bound_below(lf, p, max_slow, cap[k],
						    &mem);
		EXPECT_EQ(want, got) TH_LOG("%s: cap %llu", what,
					    (unsigned long long)cap[k]);
	}
	EXPECT_FALSE(mem.failed);
	return b;
}

/* ...and the job's bound is the lesser of its two orders'. */
TEST_F_TIMEOUT(plain, bound_below_cap, 300)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 2 },
		{ NULL, NULL, 900, 3 },
		{ "olmoe-1b-7b", "train", 0, 4 },
		{ "llama2-7b", "train-keep", 0, 6 },
	};
	struct hp_mem mem = { 0 };
	uint64_t b, r;
	unsigned int c, l;
	struct hp_err e;
	char what[128];
	struct job j;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		const struct profile *p = links[c % ARRAY_SIZE(links)];

		memset(&j, 0, sizeof(j));
		ASSERT_EQ(0, case_job(&j, &cases[c], p, &e)) TH_LOG("%s", e.msg);
		for (l = 0; l < ARRAY_SIZE(goals); l++) {
			snprintf(what, sizeof(what), "%s %s on %s at %g",
				 j.g.name, cases[c].mode ?: "", p->name,
				 goals[l]);
			b = check_caps(_metadata, &j.lf, p, goals[l], what);
			if (j.has_ref) {
				r = check_caps(_metadata, &j.lf_ref, p,
					       goals[l], what);
				b = r < b ? r : b;
			}
			EXPECT_EQ(b, hyper_plan__job_bound(&j, goals[l], &mem))
				TH_LOG("%s: the job's", what);
		}
		ASSERT_FALSE(mem.failed);
		hyper_plan__job_free(&j);
	}
}

/*
 * hyper_plan__lower_bound_pair() is the lesser of the two bounds, to the
 * byte, on the h and d block the first hands over: two orders of one
 * graph either way round, and orders of graphs of other lengths, whose
 * grid is longer or shorter than the first's.
 */
TEST_F_TIMEOUT(plain, bound_pair_takes_over_the_block, 300)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 5 },
		{ "olmoe-1b-7b", "train", 0, 7 },
		{ NULL, NULL, 900, 8 },
		{ "llama2-7b", "train-keep", 0, 9 },
	};
	const struct profile *p = links[0];
	const struct life *lf[2 * ARRAY_SIZE(cases)];
	uint64_t b[2 * ARRAY_SIZE(cases)], want;
	struct job j[ARRAY_SIZE(cases)];
	struct hp_mem mem = { 0 };
	unsigned int c, x, y, l, n = 0;
	struct hp_err e;

	memset(j, 0, sizeof(j));
	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		ASSERT_EQ(0, case_job(&j[c], &cases[c], p, &e))
			TH_LOG("%s", e.msg);
		lf[n++] = &j[c].lf;
		if (j[c].has_ref)
			lf[n++] = &j[c].lf_ref;
	}
	for (l = 0; l < ARRAY_SIZE(goals); l++) {
		for (x = 0; x < n; x++)
			b[x] = hyper_plan__lower_bound(lf[x], p, goals[l], &mem);
		for (x = 0; x < n; x++)
			for (y = 0; y < n; y++) {
				want = b[x] < b[y] ? b[x] : b[y];
				EXPECT_EQ(want, hyper_plan__lower_bound_pair(
							lf[x], lf[y], p,
							goals[l], &mem))
					TH_LOG("orders %u (%u ops), %u (%u ops) at %g",
					       x, lf[x]->n, y, lf[y]->n,
					       goals[l]);
			}
	}
	EXPECT_FALSE(mem.failed);
	for (c = 0; c < ARRAY_SIZE(cases); c++)
		hyper_plan__job_free(&j[c]);
}

/*
 * h and d at the grid's full size are one block on huge pages
 * (hyper_plan__block(): on a 2 MiB bound), d right after h's cells; its
 * cells as defined whatever the allocator left there (ASan fills a
 * block's start, so a block not cleared fails bound_tables_as_defined).
 */
TEST_F_TIMEOUT(plain, bound_tables_block_on_huge_pages, 300)
{
	static const struct plan_case c = { "olmoe-1b-7b", "train", 0, 4 };
	const struct profile *p = links[0];
	struct bound_tables bt;
	struct hp_mem mem = { 0 };
	struct hp_err e;
	struct job j;
	size_t cells;

	memset(&j, 0, sizeof(j));
	ASSERT_EQ(0, case_job(&j, &c, p, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__bound_tables(&j.lf, p, 0.01, &bt, &mem));
	cells = (size_t)bt.ng * (bt.ng - 1) / 2;
	EXPECT_LE(HU_HUGE_PAGE, 2 * cells * sizeof(double));
	EXPECT_EQ(0, (uintptr_t)bt.h % HU_HUGE_PAGE);
	EXPECT_EQ(bt.h + cells, bt.d);
	hyper_plan__bound_tables_free(&bt);
	hyper_plan__job_free(&j);
}

/*
 * The windows' rows at grids of every small length (one instant a step
 * below GRID_S steps): rows and runs of RUN_X that end on an odd cell
 * and an even one, each cell and stall against the plain sums.
 */
TEST_F_TIMEOUT(plain, windows_rows_of_every_length, 300)
{
	static const uint32_t ops[] = { 5, 6, 7, 62, 63, 64, 65, 66, 129,
					130, 131 };
	unsigned int c, l;
	struct hp_err e;
	char what[128];
	struct job j;

	for (c = 0; c < ARRAY_SIZE(ops); c++) {
		const struct plan_case pc = { NULL, NULL, ops[c], 7 + c };
		const struct profile *p = links[c % ARRAY_SIZE(links)];

		memset(&j, 0, sizeof(j));
		ASSERT_EQ(0, case_job(&j, &pc, p, &e)) TH_LOG("%s", e.msg);
		for (l = 0; l < ARRAY_SIZE(goals); l++) {
			snprintf(what, sizeof(what), "%u ops on %s at %g",
				 j.lf.n, p->name, goals[l]);
			against_plain(_metadata, &j.lf, p, goals[l], what);
			if (j.has_ref)
				against_plain(_metadata, &j.lf_ref, p, goals[l],
					      what);
		}
		hyper_plan__job_free(&j);
	}
}

TEST_HARNESS_MAIN
