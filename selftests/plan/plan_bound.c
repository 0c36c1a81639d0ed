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
#include <string.h>

#include "kselftest_harness.h"

#include "sim/bound.h"
#include "passes/sched.h"
#include "sim/sim.h"

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

TEST_HARNESS_MAIN
