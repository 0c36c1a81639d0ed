// SPDX-License-Identifier: GPL-2.0
/*
 * The pieces on their own: units, the link calendar, the simulator's
 * timing on hand-made schedules, the emitter's stores, the refinement
 * pass on a training graph, the bound's corners, and the JSON round
 * trips.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "kselftest_harness.h"

#include "sim/bound.h"
#include "lib/heap.h"
#include "passes/calendar.h"
#include "passes/gallop.h"
#include "passes/minseg.h"
#include "passes/order.h"
#include "passes/plan.h"
#include "checker.h"
#include "graph/graph_json.h"
#include "graph/json_split.h"
#include "out/output.h"
#include "plan_cases.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "util/huge.h"
#include "util/json.h"
#include "hyper/graph_id.h"
#include "hyper/residency.h"

TEST(byte_units)
{
	uint64_t v;

	/* The project's one grammar (util/units.h), hyper-run's and hyperctl's. */
	ASSERT_EQ(0, hu_parse_size("40GiB", &v));
	EXPECT_EQ(40ULL << 30, v);
	ASSERT_EQ(0, hu_parse_size("2MiB", &v));
	EXPECT_EQ(2ULL << 20, v);
	ASSERT_EQ(0, hu_parse_size("64G", &v));
	EXPECT_EQ(64ULL << 30, v);
	/* Fractions and decimal units are refused, not rounded. */
	EXPECT_EQ(-EINVAL, hu_parse_size("1.5G", &v));
	EXPECT_EQ(-EINVAL, hu_parse_size("64GB", &v));
	EXPECT_EQ(-EINVAL, hu_parse_size("-1G", &v));
	EXPECT_EQ(-EINVAL, hu_parse_size("12parsecs", &v));
	EXPECT_EQ(-ERANGE, hu_parse_size("16777216T", &v));
}

/*
 * A tree on a block of its own, as the planner lays it out among its
 * arrays (hyper_plan__seg_part()): the block to free, cleared, or NULL.
 */
static void *seg_block(struct minseg *sg, uint32_t n, struct hp_mem *mem)
{
	struct hu_part part;
	void *blk;

	hyper_plan__seg_part(sg, n, &part);
	blk = hyper_plan__block(mem, &part, 1);
	if (blk)
		hyper_plan__seg_clear(sg);
	return blk;
}

/*
 * The range-minimum tree (passes/minseg.c) against a plain array: keys
 * set at random, falling, growing, unchanged, equal to others and back
 * to SEG_NONE, then every node the least of its children and minima of
 * random ranges as a scan finds them, on trees of one to a thousand
 * positions.
 */
TEST(minseg_matches_scan)
{
	static const uint32_t sizes[] = { 1, 2, 3, 5, 7, 64, 1000, 1025 };
	uint64_t x = 0x853c49e6748fea9bULL;

	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++) {
		uint32_t n = sizes[z];
		struct hp_mem mem = { 0 };
		struct minseg sg;
		uint64_t *ref = malloc(n * sizeof(*ref));
		void *blk = seg_block(&sg, n, &mem);

		ASSERT_NE(NULL, ref);
		ASSERT_NE(NULL, blk);
		for (uint32_t i = 0; i < n; i++)
			ref[i] = SEG_NONE;
		for (uint32_t r = 0; r < 20000; r++) {
			uint32_t pos, lo, hi;
			uint64_t key, want = SEG_NONE;

			x = plan_xorshift(x);
			pos = x % n;
			/* few distinct keys: ties and no-op writes are common */
			key = (x >> 20) % 8 ? (x >> 40) % 16 : SEG_NONE;
			ref[pos] = key;
			hyper_plan__seg_set(&sg, pos, key);
			lo = (x >> 8) % n;
			hi = lo + (uint32_t)((x >> 28) % (n - lo));
			for (uint32_t i = lo; i <= hi; i++)
				if (ref[i] < want)
					want = ref[i];
			ASSERT_EQ(want, hyper_plan__seg_min(&sg, lo, hi))
				TH_LOG("n %u round %u [%u, %u]", n, r, lo, hi);
			ASSERT_EQ(key, hyper_plan__seg_get(&sg, pos));
		}
		for (uint32_t i = 1; i < sg.size; i++) {
			uint64_t m = sg.t[2 * i] < sg.t[2 * i + 1] ?
				     sg.t[2 * i] : sg.t[2 * i + 1];

			ASSERT_EQ(m, sg.t[i]) TH_LOG("n %u node %u", n, i);
		}
		free(blk);
		free(ref);
	}
}

TEST(calendar_runs_do_not_cross)
{
	const double cap[] = { 10, 0, 10, 10, 10 };
	struct calendar c;
	uint32_t first, last;

	hyper_plan__cal_init(&c, 5, CAL_ALL, &(struct hp_mem){ 0 });
	hyper_plan__cal_reset(&c, cap, 1.0);
	EXPECT_EQ(40, hyper_plan__cal_avail(&c, 0, 4));
	EXPECT_EQ(2, hyper_plan__cal_reach(&c, 0, 15));
	/* across step 1, which never had time, a run continues */
	ASSERT_EQ(0, hyper_plan__cal_find_run(&c, 0, 4, 18, &first, &last));
	EXPECT_EQ(0, first);
	EXPECT_EQ(2, last);
	hyper_plan__cal_take_run(&c, first, last, 18);
	EXPECT_EQ(22, hyper_plan__cal_avail(&c, 0, 4));
	/* a run may begin in a step another one took part of */
	ASSERT_EQ(0, hyper_plan__cal_find_run(&c, 0, 4, 6, &first, &last));
	EXPECT_EQ(2, first);
	EXPECT_EQ(3, last);
	/* too long for what is left after lo */
	EXPECT_NE(0, hyper_plan__cal_find_run(&c, 3, 4, 21, &first, &last));
	/* a run never crosses a step another one took whole */
	hyper_plan__cal_reset(&c, cap, 1.0);
	hyper_plan__cal_take_run(&c, 2, 2, 10);
	ASSERT_EQ(0, hyper_plan__cal_find_run(&c, 0, 4, 15, &first, &last));
	EXPECT_EQ(3, first);
	EXPECT_EQ(4, last);
	/* latest first, wherever the time is: 10 from step 4, 5 from 3 */
	hyper_plan__cal_reset(&c, cap, 2.0);
	EXPECT_EQ(4, hyper_plan__cal_take_latest(&c, 0, 4, 15));
	EXPECT_EQ(3, hyper_plan__cal_take_latest(&c, 0, 4, 15));
	EXPECT_EQ(50, hyper_plan__cal_avail(&c, 0, 4));
	/* reach in two halves (the sweep's, per size class) is the same */
	EXPECT_EQ(20, hyper_plan__cal_before(&c, 1));
	for (uint32_t lo = 0; lo <= 5; lo++)
		for (double a = 0; a <= 60; a += 2.5)
			EXPECT_EQ(hyper_plan__cal_reach(&c, lo, a),
				  hyper_plan__cal_reach_sum(&c, hyper_plan__cal_before(&c, lo) + a));
	EXPECT_EQ(5, hyper_plan__cal_reach_sum(&c, 51));	/* none: n */
	/* the steps hold 20, 0, 20, 10 and 0 now */
	EXPECT_EQ(2, hyper_plan__cal_reach_sum(&c, 40));
	EXPECT_EQ(3, hyper_plan__cal_reach_sum(&c, 45));
	hyper_plan__cal_free(&c);
}

/*
 * A store's run search gives up before summing when no step of its
 * window has time left (passes/calendar.c): a window whose last step
 * alone has time still finds its run there, and one past every step
 * with time, or past the end, finds none.
 */
TEST(calendar_run_in_the_last_step_with_time)
{
	const double cap[] = { 10, 10, 10, 10, 10 };
	struct calendar c;
	uint32_t first, last;

	ASSERT_EQ(0, hyper_plan__cal_init(&c, 5, CAL_ALL,
					  &(struct hp_mem){ 0 }));
	hyper_plan__cal_reset(&c, cap, 1.0);
	hyper_plan__cal_take_run(&c, 0, 2, 30);
	ASSERT_EQ(0, hyper_plan__cal_find_run(&c, 0, 3, 5, &first, &last));
	EXPECT_EQ(3, first);
	EXPECT_EQ(3, last);
	ASSERT_EQ(0, hyper_plan__cal_find_run(&c, 1, 4, 15, &first, &last));
	EXPECT_EQ(3, first);
	EXPECT_EQ(4, last);
	EXPECT_NE(0, hyper_plan__cal_find_run(&c, 0, 2, 1, &first, &last));
	EXPECT_NE(0, hyper_plan__cal_find_run(&c, 3, 3, 11, &first, &last));
	hyper_plan__cal_take_run(&c, 3, 4, 20);
	EXPECT_NE(0, hyper_plan__cal_find_run(&c, 0, 4, 1, &first, &last));
	EXPECT_NE(0, hyper_plan__cal_find_run(&c, 4, 4, 0.5, &first, &last));
	hyper_plan__cal_free(&c);
}

/*
 * The Fenwick descent (hyper_plan__cal_reach_sum()) reads past step n,
 * where the tree is padded, instead of testing each index against n:
 * against a plain scan, at every length around a power of two (where
 * the padding is longest and shortest), with steps that have no time,
 * after takes, for sums below, at and beyond the total.  Whole numbers,
 * so every way of adding them gives the same sums.
 */
TEST(calendar_reach_sum_matches_scan)
{
	static const uint32_t ns[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17,
				       31, 32, 33, 100 };
	uint64_t x = 0x2545f4914f6cdd1dULL;
	double cap[100];

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		uint32_t n = ns[i], k, hi;
		struct calendar c;
		double total, sum, want;

		for (k = 0; k < n; k++) {
			x = plan_xorshift(x);
			cap[k] = x % 4 ? (double)(x >> 40 & 15) : 0;
		}
		ASSERT_EQ(0, hyper_plan__cal_init(&c, n, CAL_ALL,
						  &(struct hp_mem){ 0 }));
		for (int round = 0; round < 2; round++) {
			hyper_plan__cal_reset(&c, cap, 1.0);
			if (round && n)		/* 3 taken, from the last */
				hyper_plan__cal_take_latest(&c, 0, n - 1, 3);
			total = n ? hyper_plan__cal_avail(&c, 0, n - 1) : 0;
			for (want = 0; want <= total + 2; want += 0.5) {
				for (hi = 0, sum = 0; hi < n; hi++) {
					sum += c.cap[hi];
					if (sum >= want)
						break;
				}
				EXPECT_EQ(hi,
					  hyper_plan__cal_reach_sum(&c, want))
					TH_LOG("n %u want %g", n, want);
			}
		}
		hyper_plan__cal_free(&c);
	}
}

/* w (1 MB, in the pool) is read by op b after op a computes 2 ms. */
static void two_ops(struct graph *g, uint64_t ns_a)
{
	uint32_t w, x, y;

	hyper_plan__graph_init(g, "two");
	w = hyper_plan__graph_add_tensor(g, "w", 1000000, HYPER_KIND_WEIGHT,
			     TF_LIVE_IN | TF_LIVE_OUT, NULL);
	x = hyper_plan__graph_add_tensor(g, "x", 1000, HYPER_KIND_ACTIVATION, 0, NULL);
	y = hyper_plan__graph_add_tensor(g, "y", 1000, HYPER_KIND_ACTIVATION, TF_LIVE_OUT, NULL);
	hyper_plan__graph_add_op(g, "a", ns_a, NULL, 0, &x, 1, NULL, NULL);
	hyper_plan__graph_add_op(g, "b", 1000, (uint32_t[]){ x, w }, 2, &y, 1, NULL, NULL);
}

/*
 * two_ops() with a computing @ns_a, w fetched in step 0 for b: its life
 * in @lf and the schedule in @s.
 */
static void two_ops_fetched(struct __test_metadata *_metadata,
			    struct graph *g, struct life *lf, struct sched *s,
			    uint64_t ns_a)
{
	static const uint32_t order[] = { 0, 1 };
	const struct evict ev = { .t = 0, .a = -1, .j = 1, .store_slot = -1,
				  .detach_slot = -1, .fetch_step = 0 };
	struct hp_err e;

	two_ops(g, ns_a);
	ASSERT_EQ(0, hyper_plan__life_build(lf, g, order, &g->mem));
	ASSERT_EQ(0, hyper_plan__sched_build(s, lf, &ev, 1,
					     &(struct hp_mem){ 0 }, &e));
}

static void two_ops_free(struct graph *g, struct life *lf, struct sched *s)
{
	hyper_plan__sched_free(s);
	hyper_plan__life_free(lf);
	hyper_plan__graph_free(g);
}

static const struct profile gbps = {
	.name = "1GB/s", .device_bytes = 1e12, .mem_bps = 1e12, .flops = 1e15,
	.h2d_bps = 1e9, .d2h_bps = 1e9, .latency_ns = 500,
};

TEST(simulator_stalls_only_on_what_is_late)
{
	struct sim_result r;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;

	/* the prefetch takes 1.0005 ms and a computes 2 ms: hidden */
	two_ops_fetched(_metadata, &g, &lf, &s, 2000000);
	EXPECT_EQ(HYPER_HOME_POOL, s.home[0]);
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(0, r.stall_ns);
	EXPECT_EQ(2001000, r.makespan_ns);
	EXPECT_EQ(1002000, r.peak);
	two_ops_free(&g, &lf, &s);

	/* 1 ms + 0.5 us to fetch, a computes 0.5 ms: b waits the rest */
	two_ops_fetched(_metadata, &g, &lf, &s, 500000);
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(500500, r.stall_ns);
	EXPECT_EQ(1001500, r.makespan_ns);
	EXPECT_EQ(1e6, r.h2d_bytes);
	two_ops_free(&g, &lf, &s);
}

/*
 * A search that asks only whether a probe meets its goal has the
 * simulator stop once it cannot: here b waits for w's fetch, 1 ms for
 * 0.5015 ms of compute, a slowdown of 99.7% known at the end of a.
 */
TEST(simulator_gives_up_only_on_a_goal_out_of_reach)
{
	struct sim_hooks stop = { .give_up = true, .max_slow = 0.99 };
	struct sim_result all, r;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;

	two_ops_fetched(_metadata, &g, &lf, &s, 500000);
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, NULL, &all, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(1002000, all.peak);
	EXPECT_GT(all.makespan_ns / all.compute_ns - 1, 0.99);
	EXPECT_LT(all.makespan_ns / all.compute_ns - 1, 1.0);
	/* out of reach after a: the fetch ends 1.0005 ms in */
	EXPECT_EQ(1, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 0 (a): the goal is out of reach, simulation stopped",
		     e.msg);
	EXPECT_EQ(500000, r.compute_ns);	/* b never ran */
	/* within reach: the whole run, the same figures */
	stop.max_slow = 1.0;
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(0, memcmp(&all, &r, sizeof(r)));
	/* the peak passes its limit when b defines y */
	stop.max_peak = all.peak - 1;
	EXPECT_EQ(1, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 1 (b): the goal is out of reach, simulation stopped",
		     e.msg);
	stop.max_peak = all.peak;
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(0, memcmp(&all, &r, sizeof(r)));
	two_ops_free(&g, &lf, &s);
}

/*
 * The compute still to come runs after the stall: with 10 ms of c after
 * b's wait of 0.5 ms, 1% is out of reach when b ends (step 1), though
 * the compute clock is then at 2 ms of 11.5; 5% is within reach, and
 * the run goes on to the end with the same figures as a whole one.
 */
TEST(simulator_gives_up_at_the_stall_with_compute_to_come)
{
	uint32_t order[] = { 0, 1, 2 }, y, z;
	struct evict ev = { .t = 0, .a = -1, .j = 1, .store_slot = -1,
			    .detach_slot = -1, .fetch_step = 0 };
	struct sim_hooks stop = { .give_up = true, .max_slow = 0.01 };
	struct sim_result all, r;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;

	two_ops(&g, 500000);
	y = 2;
	z = hyper_plan__graph_add_tensor(&g, "z", 1000, HYPER_KIND_ACTIVATION,
					 TF_LIVE_OUT, NULL);
	hyper_plan__graph_add_op(&g, "c", 10000000, &y, 1, &z, 1, NULL, NULL);
	ASSERT_STREQ("y", g.t[y].id);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, hyper_plan__sched_build(&s, &lf, &ev, 1, &(struct hp_mem){ 0 }, &e));
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, NULL, &all, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(500500, all.stall_ns);
	EXPECT_GT(slowdown(&all), 0.04);
	EXPECT_LT(slowdown(&all), 0.05);
	EXPECT_EQ(1, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 1 (b): the goal is out of reach, simulation stopped",
		     e.msg);
	EXPECT_EQ(501000, r.compute_ns);	/* c never ran */
	stop.max_slow = 0.05;
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(0, memcmp(&all, &r, sizeof(r)));
	/* the run's own slowdown is within reach: no margin eats it */
	stop.max_slow = slowdown(&all);
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, &stop, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_EQ(0, memcmp(&all, &r, sizeof(r)));
	two_ops_free(&g, &lf, &s);
}

/*
 * The fetch floor's test is one form (sim.h): a limit worked out once
 * from the compute and the goal, as the simulator's give-up test keeps
 * it, answers as the whole expression does, which the greedy walk and
 * the pipeline ask; at floors a few ulps either side of the limit, and
 * never with no compute.
 */
/*
 * The simulator's give-up tests compare with the least double that
 * passes each (hyper_plan__sim_reach_at()): the same answers as the
 * expressions themselves, at the boundary to the ulp, on both sides.
 */
TEST(simulator_reach_at_is_the_least_passing)
{
	static const double compute[] = { 0, 1, 3e6, 358113930, 1.2345678e9,
					  7e13 };
	static const double goal[] = { 0, 1e-12, 0.01, 0.05, 0.3, 5,
				       HUGE_VAL };
	double at, x;
	bool want;

	for (size_t c = 0; c < ARRAY_SIZE(compute); c++)
		for (size_t s = 0; s < ARRAY_SIZE(goal); s++)
			for (int b = 0; b < 2; b++) {
				at = hyper_plan__sim_reach_at(compute[c],
							      goal[s], b);
				x = isnan(at) || isinf(at) ?
				    (1 + goal[s]) * compute[c] : at;
				if (isinf(x))
					x = 1e300;
				for (int i = 0; i < 8; i++)
					x = nextafter(x, -INFINITY);
				for (int i = 0; i < 16; i++) {
					want = b ? hyper_plan__sim_beyond(x,
							compute[c], goal[s]) :
					       hyper_plan__slowdown_of(x,
							compute[c]) >
					       goal[s] + 1e-12;
					EXPECT_EQ(want, x >= at)
						TH_LOG("compute %g goal %g %s x %.17g at %.17g",
						       compute[c], goal[s],
						       b ? "beyond" : "slowdown",
						       x, at);
					x = nextafter(x, INFINITY);
				}
			}
	/* a goal met by no makespan, and one missed by any */
	EXPECT_TRUE(isnan(hyper_plan__sim_reach_at(1e6, HUGE_VAL, false)));
	EXPECT_EQ(-HUGE_VAL, hyper_plan__sim_reach_at(0, -1, false));
	EXPECT_GT(1e-3, fabs(hyper_plan__sim_reach_at(1e6, 0.01, false) -
			    1010000));
}

TEST(simulator_beyond_is_one_form)
{
	static const double compute[] = { 0, 1, 3e6, 1.2345678e9, 7e13 };
	static const double goal[] = { 0, 1e-12, 0.01, 0.05, 0.3, 5 };
	double lim, f;
	unsigned int n = 0;
	bool want;

	for (size_t c = 0; c < ARRAY_SIZE(compute); c++)
		for (size_t s = 0; s < ARRAY_SIZE(goal); s++) {
			lim = hyper_plan__sim_beyond_lim(compute[c], goal[s]);
			f = lim / (1 - 1e-6);
			for (int i = 0; i < 8; i++)
				f = nextafter(f, 0);
			for (int i = 0; i < 16; i++) {
				want = compute[c] > 0 &&
				       f * (1 - 1e-6) >
				       (1 + goal[s] + 1e-9) * compute[c];
				EXPECT_EQ(want, hyper_plan__sim_beyond(f,
						compute[c], goal[s]));
				if (compute[c] > 0)
					EXPECT_EQ(want,
					    hyper_plan__sim_beyond_at(f, lim));
				n += want;
				f = nextafter(f, INFINITY);
			}
		}
	/* both answers, next to each other */
	EXPECT_LT(0, n);
	EXPECT_GT(16 * (ARRAY_SIZE(compute) - 1) * ARRAY_SIZE(goal), n);
}

/* The simulator refuses by <hyper/residency.h>'s rules, in its words. */
TEST(simulator_replays_the_shared_residency_rules)
{
	struct sim_result r;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;

	two_ops_fetched(_metadata, &g, &lf, &s, 2000000);
	ASSERT_EQ(HYPER_HOME_POOL, s.home[0]);
	s.home[0] = HYPER_HOME_NONE;	/* w's prefetch before a: no pool copy */
	EXPECT_NE(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 0 (a): prefetch of tensor \"w\" which has no pool copy",
		     e.msg);
	s.home[0] = HYPER_HOME_DEVICE;
	EXPECT_NE(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 0 (a): prefetch of tensor \"w\" which is already resident",
		     e.msg);
	s.home[0] = HYPER_HOME_POOL;
	ASSERT_EQ(HYPER_OP_PREFETCH, s.cops[0].kind);	/* w's, alone in slot 0 */
	ASSERT_EQ(1, s.slot_off[1]);
	s.cops[0].kind = HYPER_OP_DETACH;
	EXPECT_NE(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 0 (a): detach of tensor \"w\" which is not resident",
		     e.msg);
	s.cops[0].kind = HYPER_OP_PREFETCH;
	/* the prefetch moves after b, which then reads w from nowhere */
	s.slot_off[1] = s.slot_off[2] = s.slot_off[3] = 0;
	EXPECT_NE(0, hyper_plan__simulate(&s, &gbps, NULL, &r, &(struct hp_mem){ 0 }, &e));
	EXPECT_STREQ("step 1 (b): tensor \"w\" used while not resident", e.msg);
	two_ops_free(&g, &lf, &s);
}

/*
 * A search's probes run in one struct hp_simbuf (the job's memo), which
 * each run leaves zeroed where it wrote: here w's prefetch and y's
 * store would hold up b in the schedule with neither if a run after
 * them read their ends.  Whatever ran before, in whichever order, each
 * schedule gives the figures it gives alone, whole or given up (there
 * with the whole run's compute taken from its life, not summed), and
 * each fetch floor is the one it has alone.
 */
TEST(simulator_runs_in_one_buffer_as_alone)
{
	static const uint32_t order[] = { 0, 1, 2 };
	static const struct evict ev[3] = {
		{ 0 },	/* none: unused */
		/* w in the pool, fetched for b */
		{ .t = 0, .a = -1, .j = 1, .store_slot = -1,
		  .detach_slot = -1, .fetch_step = 0 },
		/* y stored and detached after b, fetched back for c */
		{ .t = 2, .a = 1, .j = 2, .store_slot = -1,
		  .detach_slot = 3, .fetch_step = 2 },
	};
	static const int runs[] = { 1, 2, 0, 2, 1, 0, 0, 1, 2, 1, 0 };
	struct sim_hooks stop = { .give_up = true, .max_slow = 0.01 }, stop_lf;
	struct sim_result alone[3][2], r;
	double floor_alone[3], floor_ns;
	struct hp_simbuf buf = { 0 };
	struct hp_mem mem = { 0 };
	struct sched s[3];
	uint32_t y, z, i;
	struct hp_err e;
	struct graph g;
	struct life lf;
	int ret[3][2];

	two_ops(&g, 2000000);
	y = 2;
	z = hyper_plan__graph_add_tensor(&g, "z", 1000, HYPER_KIND_ACTIVATION,
					 TF_LIVE_OUT, NULL);
	hyper_plan__graph_add_op(&g, "c", 10000000, &y, 1, &z, 1, NULL, NULL);
	g.t[y].bytes = 1000000;		/* its store takes 1 ms */
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, hyper_plan__sched_build(&s[i], &lf, &ev[i], i != 0,
						     &mem, &e))
			TH_LOG("%s", e.msg);
		ret[i][0] = hyper_plan__simulate(&s[i], &gbps, NULL,
						 &alone[i][0], &mem, &e);
		ret[i][1] = hyper_plan__simulate(&s[i], &gbps, &stop,
						 &alone[i][1], &mem, &e);
		ASSERT_EQ(0, hyper_plan__sim_fetch_floor(&lf, &gbps, &ev[i],
							 i != 0, &mem,
							 &floor_alone[i]));
	}
	/* what a leak would show: b never waits with neither */
	EXPECT_EQ(0, ret[0][0]);
	EXPECT_EQ(0, alone[0][0].stall_ns);
	EXPECT_GT(alone[1][0].h2d_bytes, 0);
	EXPECT_GT(alone[2][0].d2h_bytes, 0);
	EXPECT_GT(floor_alone[1], 0);
	EXPECT_EQ(1, ret[2][1]);	/* c waits 2 ms for y: given up */
	stop_lf = stop;
	stop_lf.lf = &lf;
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		i = runs[k];
		for (int h = 0; h < 2; h++) {
			EXPECT_EQ(ret[i][h], hyper_plan__simulate_in(&s[i],
				  &gbps, h ? &stop_lf : NULL, &r, &buf, &mem,
				  &e));
			EXPECT_EQ(0, memcmp(&alone[i][h], &r, sizeof(r)))
				TH_LOG("run %zu: schedule %u (%s) not as alone",
				       k, i, h ? "given up" : "whole");
		}
		ASSERT_EQ(0, hyper_plan__sim_fetch_floor_in(&lf, &gbps, &ev[i],
							    i != 0, &buf, &mem,
							    &floor_ns));
		EXPECT_EQ(floor_alone[i], floor_ns);
	}
	hyper_plan__simbuf_free(&buf);
	for (i = 0; i < 3; i++)
		hyper_plan__sched_free(&s[i]);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

/*
 * The per-tensor ends a run leaves in its buffer are not zeroed after
 * it: a run sets both of a tensor's at its first transfer and reads
 * none before.  Here w is fetched for b, detached, and fetched again
 * for c, where the second prefetch waits for w's store end, which no
 * transfer of this run wrote: with the buffer's ends all poisoned
 * (what a run before could leave), the figures are the ones alone.
 */
TEST(simulator_reads_no_end_it_did_not_set)
{
	static const uint32_t order[] = { 0, 1, 2 };
	static const struct evict ev[2] = {
		{ .t = 0, .a = -1, .j = 1, .store_slot = -1,
		  .detach_slot = -1, .fetch_step = 0 },
		{ .t = 0, .a = 1, .j = 2, .store_slot = -1,
		  .detach_slot = 3, .fetch_step = 2 },
	};
	struct sim_result alone, r;
	struct hp_simbuf buf = { 0 };
	struct hp_mem mem = { 0 };
	struct sched s;
	struct hp_err e;
	struct graph g;
	struct life lf;
	uint32_t y, z;

	two_ops(&g, 1000);
	y = 2;
	z = hyper_plan__graph_add_tensor(&g, "z", 1000, HYPER_KIND_ACTIVATION,
					 TF_LIVE_OUT, NULL);
	hyper_plan__graph_add_op(&g, "c", 1000, (uint32_t[]){ y, 0 }, 2, &z,
				 1, NULL, NULL);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, hyper_plan__sched_build(&s, &lf, ev, 2, &mem, &e))
		TH_LOG("%s", e.msg);
	ASSERT_EQ(2, slot_len(&s, 4) + slot_len(&s, 0));	/* two fetches */
	ASSERT_EQ(0, hyper_plan__simulate(&s, &gbps, NULL, &alone, &mem, &e))
		TH_LOG("%s", e.msg);
	EXPECT_LT(alone.makespan_ns, 1e7);
	EXPECT_EQ(2e6, alone.h2d_bytes);
	ASSERT_EQ(0, hyper_plan__simulate_in(&s, &gbps, NULL, &r, &buf, &mem,
					     &e));
	for (size_t t = 0; t < buf.nt; t++)
		buf.end[t] = (struct hp_sim_xend){ 1e18, 1e18 };
	ASSERT_EQ(0, hyper_plan__simulate_in(&s, &gbps, NULL, &r, &buf, &mem,
					     &e));
	EXPECT_EQ(0, memcmp(&alone, &r, sizeof(r)));
	hyper_plan__simbuf_free(&buf);
	hyper_plan__sched_free(&s);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

TEST(emitter_stores_the_only_copy_and_no_more)
{
	uint32_t order[] = { 0, 1 }, k;
	/* w starts on the device: evicting it after a needs a store */
	struct evict ev = { .t = 0, .a = 0, .j = 1, .store_slot = -1,
			    .detach_slot = 1, .fetch_step = 1 };
	size_t stores = 0, i;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;
	uint32_t w, x;

	hyper_plan__graph_init(&g, "store");
	w = hyper_plan__graph_add_tensor(&g, "w", 1000000, HYPER_KIND_WEIGHT,
			     TF_LIVE_IN | TF_LIVE_OUT, NULL);
	x = hyper_plan__graph_add_tensor(&g, "x", 1000, HYPER_KIND_ACTIVATION, 0, NULL);
	hyper_plan__graph_add_op(&g, "a", 1000, &w, 1, &x, 1, NULL, NULL);
	hyper_plan__graph_add_op(&g, "b", 1000, (uint32_t[]){ x, w }, 2, NULL, 0, NULL, NULL);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, hyper_plan__sched_build(&s, &lf, &ev, 1, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(HYPER_HOME_DEVICE, s.home[w]);
	for (k = 0; k < 2 * s.n; k++)
		for (i = s.slot_off[k]; i < s.slot_off[k + 1]; i++)
			stores += s.cops[i].kind == HYPER_OP_STORE;
	EXPECT_EQ(1, stores);
	/* x dies after b: freed there */
	EXPECT_EQ(HYPER_OP_DETACH, s.cops[s.slot_off[3]].kind);
	hyper_plan__sched_free(&s);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

/*
 * The slots' offsets into the cops are 32-bit: a chain of 70,000 ops
 * whose every activation dies after its reader puts more cops in the
 * schedule than 16 bits count, and each slot's must still be found
 * where the slot says (its one detach, of the tensor its op read).
 */
TEST(slot_offsets_past_sixteen_bits)
{
	const uint32_t n = 70000;
	struct hp_mem mem = { 0 };
	uint32_t *order, k, x, y;
	struct hp_err e;
	struct graph g;
	struct sched s;
	struct life lf;
	char id[16];

	order = malloc(n * sizeof(*order));
	ASSERT_NE(NULL, order);
	hyper_plan__graph_init(&g, "chain");
	x = hyper_plan__graph_add_tensor(&g, "x0", 1000, HYPER_KIND_ACTIVATION,
					 0, NULL);
	hyper_plan__graph_add_op(&g, "o0", 1000, NULL, 0, &x, 1, NULL, NULL);
	for (k = 1; k < n; k++) {
		snprintf(id, sizeof(id), "x%u", k);
		y = hyper_plan__graph_add_tensor(&g, id, 1000,
						 HYPER_KIND_ACTIVATION,
						 k + 1 < n ? 0 : TF_LIVE_OUT,
						 NULL);
		snprintf(id, sizeof(id), "o%u", k);
		hyper_plan__graph_add_op(&g, id, 1000, &x, 1, &y, 1, NULL,
					 NULL);
		x = y;
	}
	ASSERT_FALSE(g.mem.failed);
	for (k = 0; k < n; k++)
		order[k] = k;
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, hyper_plan__sched_build(&s, &lf, NULL, 0, &mem, &e))
		TH_LOG("%s", e.msg);
	EXPECT_EQ(n - 1, s.ncops);
	EXPECT_EQ(s.ncops, s.slot_off[2 * n]);
	for (k = 1; k < n; k++) {
		uint32_t at = s.slot_off[2 * k + 1];

		ASSERT_EQ(k - 1, s.slot_off[2 * k]);
		ASSERT_EQ(at + 1, s.slot_off[2 * k + 2]);
		ASSERT_EQ(HYPER_OP_DETACH, s.cops[at].kind);
		ASSERT_EQ(k - 1, s.cops[at].t);
	}
	hyper_plan__sched_free(&s);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
	free(order);
}

/* Refinement runs each layer's optimizer update once its gradient exists. */
TEST(refinement_moves_the_optimizer_into_the_backward_pass)
{
	struct plan_case c = { "llama2-7b", "train", 0, 1 };
	struct job j = { 0 };
	struct hp_err e;
	uint32_t k, opt = NONE, last_bwd = 0;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e));
	ASSERT_TRUE(j.has_ref);
	EXPECT_LT(j.lf_ref.peak0, j.lf.peak0);
	for (k = 0; k < j.lf_ref.n; k++) {
		const char *id = j.g.op[j.refined[k]].id;

		if (!strncmp(id, "opt.L1.", 7) && opt == NONE)
			opt = k;
		if (!strncmp(id, "b.L0.", 5))
			last_bwd = k;
	}
	EXPECT_LT(opt, last_bwd);
	hyper_plan__job_free(&j);
}

/*
 * A sweep that cannot fit a step says by how much (the search's next aim,
 * policies/search.c): on a decode, whose last steps are its bottleneck,
 * the steps swept before take the same gaps at that much more, so the
 * failing step then fits and the sweep gets further or through.  From
 * the lowest aim, each shortfall is climbed until a step fails behind
 * steps that took gaps.
 */
TEST(sweep_says_how_far_short_it_fell)
{
	struct plan_case c = { "llama2-7b", "infer", 0, 1 };
	struct hp_mem mem = { 0 };
	struct job j = { 0 };
	struct plan_ctx pc;
	uint32_t fail, again, i;
	struct hp_err e;
	uint64_t b;
	int ret;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e));
	ASSERT_EQ(0, hyper_plan__plan_init(&pc, &j.lf, &j.p, &mem));
	b = j.lf.max_ws;
	for (i = 0; i < j.lf.n; i++) {
		ASSERT_EQ(-1, hyper_plan__plan_select(&pc, b, 1.0, &fail));
		ASSERT_LT(0, pc.short_by);
		EXPECT_GE(j.lf.base[fail], b + pc.short_by);
		EXPECT_LE(pc.nev_before, pc.nev);
		if (pc.nev_before)
			break;
		b += pc.short_by;
	}
	ASSERT_LT(i, j.lf.n);
	b += pc.short_by;
	ret = hyper_plan__plan_select(&pc, b, 1.0, &again);
	if (ret)
		EXPECT_LT(again, fail);
	ASSERT_EQ(0, hyper_plan__plan_select(&pc, j.lf.peak0, 1.0, &fail));
	EXPECT_EQ(0, pc.nev);
	hyper_plan__plan_free(&pc);
	hyper_plan__job_free(&j);
}

/* One sweep of each, the same aim and links: the same outcome, evictions
 * and all. */
static void same_sweep(struct __test_metadata *_metadata,
		       struct plan_ctx *re, struct plan_ctx *sc, uint64_t aim,
		       double scale)
{
	uint32_t fr = 0, fs = 0;
	int rr = hyper_plan__plan_select(re, aim, scale, &fr);
	int rs = hyper_plan__plan_select(sc, aim, scale, &fs);

	ASSERT_EQ(rs, rr);
	ASSERT_EQ(sc->nev, re->nev);
	ASSERT_EQ(0, memcmp(sc->ev, re->ev, sc->nev * sizeof(*sc->ev)))
		TH_LOG("aim %llu scale %g", (unsigned long long)aim, scale);
	if (rs) {
		ASSERT_EQ(fs, fr);
		ASSERT_EQ(sc->short_by, re->short_by);
		ASSERT_EQ(sc->nev_before, re->nev_before);
	} else {
		ASSERT_EQ(hyper_plan__plan_saturated_ns(sc),
			  hyper_plan__plan_saturated_ns(re));
	}
}

/* @c's job and a context on it each way: reuse, and from scratch. */
struct sweep_pair {
	struct hp_mem mr, ms;
	struct plan_ctx re, sc;
	struct job j;
	uint64_t lo, span;	/* aims from the largest working set to the peak */
};

static void pair_init(struct __test_metadata *_metadata,
		      struct sweep_pair *sp, const struct plan_case *c)
{
	struct hp_err e;

	memset(sp, 0, sizeof(*sp));
	ASSERT_EQ(0, case_job(&sp->j, c, &hyper_plan__profile_table[0], &e))
		TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__plan_init(&sp->re, &sp->j.lf, &sp->j.p,
					   &sp->mr));
	ASSERT_EQ(0, hyper_plan__plan_init(&sp->sc, &sp->j.lf, &sp->j.p,
					   &sp->ms));
	sp->sc.scratch = true;
	sp->lo = sp->j.lf.max_ws;
	sp->span = sp->j.lf.peak0 > sp->lo ? sp->j.lf.peak0 - sp->lo : 1;
}

static void pair_free(struct sweep_pair *sp)
{
	hyper_plan__plan_free(&sp->re);
	hyper_plan__plan_free(&sp->sc);
	hyper_plan__job_free(&sp->j);
}

/*
 * The sweep's reuse (passes/plan.c: a reset that undoes only what the
 * last sweep wrote, the size classes' minima kept between look-ups, the
 * evictions counted into deadline order) against the from-scratch path
 * (pc->scratch): random graphs and a decode, swept at aims from the
 * largest working set to the peak in a scrambled order (failures near
 * the start and deep, fits) on links of three speeds, one context each
 * way.
 */
TEST(sweep_reuse_matches_scratch)
{
	static const double scales[] = { 1.0, 1.0, 1.0, 1.3, ANY_WAIT };
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 1 }, { NULL, NULL, 600, 2 },
		{ NULL, NULL, 1000, 3 }, { NULL, NULL, 1500, 4 },
		{ NULL, NULL, 2000, 5 }, { "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		for (uint32_t k = 0; k < 60; k++) {
			uint64_t aim;

			x = plan_xorshift(x);
			/* mostly the top tenth, where sweeps get far */
			aim = sp.lo + (k % 3 ? sp.span - sp.span / 10 +
					       x % (sp.span / 10 + 1) :
					       x % (sp.span + 1));
			same_sweep(_metadata, &sp.re, &sp.sc, aim,
				   scales[(x >> 32) % ARRAY_SIZE(scales)]);
		}
		pair_free(&sp);
	}
}

/*
 * A delta entry @d left set by the last sweep is in the ring of entries
 * written (pc->delta_undo), unless the ring ran over (the reset then
 * clears the range); *@rings counts the entries found there.
 */
static void listed(struct __test_metadata *_metadata,
		   const struct plan_ctx *pc, uint32_t d, uint32_t *rings)
{
	uint32_t x;

	if (pc->ndelta_undo > pc->delta_ring)
		return;
	for (x = 0; x < pc->ndelta_undo && pc->delta_undo[x] != d; x++)
		;
	ASSERT_LT(x, pc->ndelta_undo) TH_LOG("step %u not listed", d);
	(*rings)++;
}

/*
 * The sweep clears each step's delta as it reads it (passes/plan.c,
 * sweep()), and the reset after it clears only the entries below the
 * step where it stopped (reset_written()): after every sweep, each entry
 * at or past pc->swept, and each outside the range noted as written, is
 * zero, and each entry left set is listed in the ring of entries
 * written unless it ran over (the reset clears those alone where they
 * are fewer than the range).  Random graphs, a decode and a training
 * step, at aims in a scrambled order on links of three speeds, the
 * bisection's top kept so that snapshots are saved and loaded, every
 * sweep against the from-scratch path.  Fits and failures both counted:
 * the invariant is only tested where a sweep stopped part way, and
 * where it went through.
 */
TEST(sweep_clears_the_delta_it_read)
{
	static const double scales[] = { 1.0, 1.0, 1.3, ANY_WAIT };
	struct plan_case cases[] = {
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 1500, 4 },
		{ "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
		{ "deepseek-v2-lite", "train", 0, 1 },
	};
	uint64_t x = 0xbb67ae8584caa73bULL, bis_lo, bis_hi;
	uint32_t fits = 0, deep = 0, left = 0, rings = 0, over = 0, snaps = 0;

	for (size_t i = 0; i < 2 * ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i / 2]);
		/* the ring as planned, and ones that run over */
		sp.re.delta_ring = i % 2 ? (i % 4 == 1 ? 16 : 128) : DELTA_UNDO;
		bis_lo = sp.lo;
		bis_hi = sp.j.lf.peak0;
		for (uint32_t k = 0; k < 48; k++) {
			const struct plan_ctx *pc = &sp.re;
			uint32_t n = sp.j.lf.n;
			double scale;
			uint64_t aim;

			x = plan_xorshift(x);
			aim = sp.lo + (k % 2 ? sp.span - sp.span / 8 +
					       x % (sp.span / 8 + 1) :
					       x % (sp.span + 1));
			scale = scales[(x >> 32) % ARRAY_SIZE(scales)];
			sp.re.keep_aim = 0;
			if (k < 16) {	/* a bisection first: snapshots */
				aim = bis_lo + (bis_hi - bis_lo) / 2;
				scale = 1.3;
				sp.re.keep_aim = bis_hi;
			}
			same_sweep(_metadata, &sp.re, &sp.sc, aim, scale);
			if (k < 16 && sp.sc.short_by)
				bis_lo = aim;
			else if (k < 16)
				bis_hi = aim;
			for (uint32_t d = 0; d <= n; d++) {
				if (d < pc->swept && d >= pc->delta_lo &&
				    d <= pc->delta_hi) {
					left += pc->delta[d] != 0;
					if (pc->delta[d])
						listed(_metadata, pc, d,
						       &rings);
					continue;
				}
				ASSERT_EQ(0, pc->delta[d])
					TH_LOG("step %u, stopped at %u", d,
					       pc->swept);
			}
			fits += !sp.re.short_by;
			deep += sp.re.short_by && pc->swept + 1 < n;
			over += pc->ndelta_undo > pc->delta_ring &&
				pc->swept > pc->delta_lo;
		}
		snaps += sp.re.snap_hits;
		pair_free(&sp);
	}
	EXPECT_LT(8, fits);
	EXPECT_LT(8, deep);
	EXPECT_LT(0, left);
	EXPECT_LT(0, rings);
	EXPECT_LT(0, over);
	EXPECT_LT(0, snaps);
}

/*
 * The selection made only for its saturated steps (passes/plan.c,
 * hyper_plan__plan_select_saturated(): no issue steps) against the whole
 * one: the same outcome and busy time at aims from the largest working
 * set to the peak on links of two speeds, and the same sweeps after it
 * (one context each way, a sweep at another aim between).
 */
TEST(saturated_select_matches_select)
{
	static const double scales[] = { 1.0, 1.3 };
	struct plan_case cases[] = {
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 1500, 4 },
		{ "llama2-7b", "infer", 0, 1 },
	};
	uint64_t x = 0x6a09e667f3bcc909ULL;
	uint32_t fits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hp_mem ma = { 0 }, mb = { 0 };
		struct plan_ctx a, b;
		struct job j = { 0 };
		struct hp_err e;
		uint64_t lo, span;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__plan_init(&a, &j.lf, &j.p, &ma));
		ASSERT_EQ(0, hyper_plan__plan_init(&b, &j.lf, &j.p, &mb));
		lo = j.lf.max_ws;
		span = j.lf.peak0 > lo ? j.lf.peak0 - lo : 1;
		for (uint32_t k = 0; k < 24; k++) {
			double scale = scales[k % 2], busy = -1, want = 0;
			uint32_t fail;
			uint64_t aim;
			int ra, rb;

			x = plan_xorshift(x);
			aim = lo + span - span / 5 + x % (span / 5 + 1);
			ra = hyper_plan__plan_select(&a, aim, scale, &fail);
			if (!ra)
				want = hyper_plan__plan_saturated_ns(&a);
			rb = hyper_plan__plan_select_saturated(&b, aim, scale,
							       &busy);
			ASSERT_EQ(ra, rb);
			ASSERT_EQ(want, busy) TH_LOG("aim %llu",
						     (unsigned long long)aim);
			fits += !ra;
			same_sweep(_metadata, &a, &b, lo + x % (span + 1),
				   scale);
		}
		hyper_plan__plan_free(&a);
		hyper_plan__plan_free(&b);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(4, fits);
}

/*
 * A sweep that fails at its first step over budget answers, without a
 * sweep, the aims with the same first step and links that still fall
 * short there (passes/plan.c, plan_select_known()), against the
 * from-scratch path: around the shortfall of the lowest aim (just
 * under, at it, past it, below), with sweeps that fit or fail deeper in
 * between whose state the next reset undoes, on links of two speeds.
 */
TEST(sweep_known_failure_matches_scratch)
{
	static const double scales[] = { 1.0, 1.3 };
	struct plan_case cases[] = {
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 1500, 4 },
		{ "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint32_t hits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hp_mem mr = { 0 }, ms = { 0 };
		struct plan_ctx re, sc;
		struct job j = { 0 };
		struct hp_err e;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__plan_init(&re, &j.lf, &j.p, &mr));
		ASSERT_EQ(0, hyper_plan__plan_init(&sc, &j.lf, &j.p, &ms));
		sc.scratch = true;
		for (size_t x = 0; x < ARRAY_SIZE(scales); x++) {
			uint64_t lo = j.lf.max_ws, s;
			uint64_t aims[8];

			same_sweep(_metadata, &re, &sc, lo, scales[x]);
			if (re.ex_k == NONE || !re.short_by)
				continue;
			s = re.short_by;
			aims[0] = lo + s / 2;
			aims[1] = j.lf.peak0;
			aims[2] = lo + s - 1;
			aims[3] = lo + s;
			aims[4] = lo + 1;
			aims[5] = lo + s + s / 2;
			aims[6] = lo + s - 1;
			aims[7] = lo;
			for (uint32_t a = 0; a < ARRAY_SIZE(aims); a++)
				same_sweep(_metadata, &re, &sc, aims[a],
					   scales[x]);
		}
		hits += re.ex_hits;
		EXPECT_EQ(0, sc.ex_hits);
		hyper_plan__plan_free(&re);
		hyper_plan__plan_free(&sc);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(4, hits);
}

/*
 * The offers of gaps to the end that a step's earlier ones show to end
 * NEVER (passes/plan.c, store_never(): no step with time left on the
 * device→pool link, or too little from the same first step) against the
 * from-scratch path, which searches each: MoE training, where failing
 * steps offer hundreds in a row, at aims from the largest working set to
 * the peak on links of three speeds.
 */
TEST(store_misses_match_scratch)
{
	static const double scales[] = { 1.0, 1.3, 2.0 };
	struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 1 },
		{ "deepseek-v2-lite", "train", 0, 1 },
		{ NULL, NULL, 1500, 4 },
	};
	uint64_t hits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		for (uint32_t k = 0; k <= 30; k++)
			same_sweep(_metadata, &sp.re, &sp.sc,
				   sp.lo + sp.span * k / 30,
				   scales[k % ARRAY_SIZE(scales)]);
		hits += sp.re.miss_hits;
		EXPECT_EQ(0, sp.sc.miss_hits);
		pair_free(&sp);
	}
	EXPECT_LT(1000, hits);
}

/*
 * same_sweep(), and the state kept is the one right after the take that
 * brought the last step within its aim: the bytes off the device reach
 * the step's excess over the aim with that take and not before.
 */
static void same_snap_sweep(struct __test_metadata *_metadata,
			    struct sweep_pair *sp, uint64_t aim, double scale)
{
	const struct plan_snap *s = &sp->re.snap;
	const struct life *lf = &sp->j.lf;
	int64_t over, last;

	same_sweep(_metadata, &sp->re, &sp->sc, aim, scale);
	if (!s->aim)
		return;
	over = (int64_t)(lf->base[lf->n - 1] - s->aim);
	last = (int64_t)lf->g->t[s->ev[s->nev - 1].t].bytes;
	ASSERT_LE(over, s->absent);
	ASSERT_GT(over, s->absent - last) TH_LOG("kept at %llu",
		(unsigned long long)s->aim);
}

/*
 * Sweeps that start their last step from the state kept at a
 * bisection's top (passes/plan.c, snap_begin(): pc->keep_aim) against
 * the from-scratch path: a bisection from the largest working set to the
 * peak on links of two speeds, then aims above the state kept (which it
 * must not serve), at and just below it, and the other links' sweep
 * between; MoE training, where the last step takes thousands of gaps,
 * and random graphs.
 */
TEST(sweep_snapshot_matches_scratch)
{
	static const double scales[] = { 1.0, 1.3 };
	struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 1 },
		{ "deepseek-v2-lite", "train", 0, 1 },
		{ NULL, NULL, 1500, 4 }, { NULL, NULL, 2000, 5 },
	};
	uint32_t hits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		for (size_t x = 0; x < ARRAY_SIZE(scales); x++) {
			uint64_t lo = sp.lo, hi = sp.j.lf.peak0, b, top;

			for (uint32_t k = 0; k < 14 && hi > lo + 1; k++) {
				b = lo + (hi - lo) / 2;
				sp.re.keep_aim = hi;
				same_snap_sweep(_metadata, &sp, b, scales[x]);
				if (sp.sc.short_by)
					lo = b;
				else
					hi = b;
			}
			top = sp.re.snap.aim;
			sp.re.keep_aim = 0;
			if (!top)
				continue;
			for (uint32_t d = 1; d <= 4096; d *= 2)
				same_snap_sweep(_metadata, &sp,
						top + top / 16384 * d + 1,
						scales[x]);
			same_snap_sweep(_metadata, &sp,
					top + (sp.j.lf.peak0 - top) / 2,
					scales[x]);
			same_snap_sweep(_metadata, &sp, top, scales[x]);
			same_snap_sweep(_metadata, &sp, top, scales[1 - x]);
			/* a top just under the state's: its take serves it */
			sp.re.keep_aim = top - 1;
			same_snap_sweep(_metadata, &sp, top - top / 64,
					scales[x]);
			sp.re.keep_aim = 0;
			same_snap_sweep(_metadata, &sp, top - 1, scales[x]);
		}
		hits += sp.re.snap_hits;
		EXPECT_EQ(0, sp.sc.snap_hits);
		pair_free(&sp);
	}
	EXPECT_LT(10, hits);
}

typedef void (*sweep_check)(struct __test_metadata *_metadata,
			    const struct plan_ctx *pc, uint64_t *count);

/*
 * 40 sweeps on each of @cases at random aims between the largest working
 * set and the no-offload peak (every other one in its top tenth when
 * @near_top) and random link scales, @check run after each.
 */
static void random_sweeps(struct __test_metadata *_metadata,
			  const struct plan_case *cases, size_t n, uint64_t x,
			  bool near_top, sweep_check check, uint64_t *count)
{
	static const double scales[] = { 1.0, 1.0, 1.3, ANY_WAIT };

	for (size_t i = 0; i < n; i++) {
		struct hp_mem mem = { 0 };
		struct plan_ctx pc;
		struct job j = { 0 };
		struct hp_err e;
		uint64_t lo, span, aim;
		uint32_t fail;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__plan_init(&pc, &j.lf, &j.p, &mem));
		lo = j.lf.max_ws;
		span = j.lf.peak0 > lo ? j.lf.peak0 - lo : 1;
		for (uint32_t k = 0; k < 40; k++) {
			x = plan_xorshift(x);
			aim = near_top && k % 2 ?
			      span - span / 10 + x % (span / 10 + 1) :
			      x % (span + 1);
			hyper_plan__plan_select(&pc, lo + aim,
				scales[(x >> 32) % ARRAY_SIZE(scales)], &fail);
			check(_metadata, &pc, count);
		}
		hyper_plan__plan_free(&pc);
		hyper_plan__job_free(&j);
	}
}

/* random_sweeps() with aims anywhere, then every other one near the peak. */
static void random_sweeps_both(struct __test_metadata *_metadata,
			       const struct plan_case *cases, size_t n,
			       uint64_t x, sweep_check check, uint64_t *count)
{
	for (int top = 0; top < 2; top++)
		random_sweeps(_metadata, cases, n, x + top, top, check, count);
}

/*
 * Each size class's minima kept between look-ups and followed through
 * refreshes (passes/plan.c: class_min(), class_min_find(),
 * class_min_moved()) against a plain scan of the tree's leaves: where a
 * class says it knows its minimum from bucket min_lo (or its second
 * one, alt_lo) on, that is the least key of its buckets from there, and
 * the bucket it names holds it.  Checked after sweeps at random aims on
 * random graphs and a decode, so failures at every depth leave the
 * classes mid-sweep; a second minimum lies past the first.  known[0]
 * counts the first minima checked, known[1] the second ones.
 */
static void minimum_matches_scan(struct __test_metadata *_metadata,
				 const struct plan_ctx *pc, uint32_t s,
				 uint32_t lo, uint64_t key, uint32_t b)
{
	const uint64_t *leaf = pc->seg.t + pc->seg.size;
	uint64_t want = SEG_NONE;

	for (uint32_t x = lo; x < pc->cls_b[s + 1]; x++)
		if (leaf[x] < want)
			want = leaf[x];
	ASSERT_EQ(want, key) TH_LOG("class %u from bucket %u", s, lo);
	if (b != NONE)
		ASSERT_EQ(want, leaf[b]);
}

static void minima_match_scan(struct __test_metadata *_metadata,
			      const struct plan_ctx *pc, uint64_t *known)
{
	for (uint32_t s = 0; s < pc->ncls; s++) {
		if (pc->min_lo[s] != NONE) {
			known[0]++;
			minimum_matches_scan(_metadata, pc, s, pc->min_lo[s],
					     pc->min_key[s], pc->min_b[s]);
		}
		if (pc->alt_lo[s] != NONE) {
			/* kept past the first only (class_min_moved()) */
			ASSERT_NE(NONE, pc->min_lo[s]);
			ASSERT_LT(pc->min_lo[s], pc->alt_lo[s]);
			known[1]++;
			minimum_matches_scan(_metadata, pc, s, pc->alt_lo[s],
					     pc->alt_key[s], pc->alt_b[s]);
		}
	}
}

TEST(class_minima_match_scan)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 7 }, { NULL, NULL, 800, 8 },
		{ NULL, NULL, 1500, 9 }, { "llama2-7b", "infer", 0, 1 },
	};
	uint64_t known[2] = { 0, 0 };

	random_sweeps(_metadata, cases, ARRAY_SIZE(cases),
		      0x9e3779b97f4a7c15ULL, false, minima_match_scan, known);
	EXPECT_LT(0, known[0]);	/* some class kept its minimum */
	EXPECT_LT(0, known[1]);	/* and a second one */
}

/*
 * The tree's leaf for each bucket the sweep has reached is the key of
 * the candidate the bucket points at (passes/plan.c, refresh(): a key
 * unchanged is not written again), and every inner node is the least of
 * its two children.  A bucket not reached keeps whatever key an earlier
 * sweep left (reset_written()): set[1] counts those that hold one, so
 * that the reached leaves are seen written over them.  Checked after
 * sweeps at random aims and links on random graphs and a decode:
 * failures at every depth, and fits.
 */
static void tree_matches_buckets(struct __test_metadata *_metadata,
				 const struct plan_ctx *pc, uint64_t *set)
{
	const uint64_t *t = pc->seg.t;

	for (uint32_t b = 0; b < pc->nb; b++) {
		uint64_t want = SEG_NONE;

		if (pc->b_j[b] <= pc->swept) {
			set[1] += t[pc->seg.size + b] != SEG_NONE;
			continue;
		}
		if (pc->cur[b] < pc->by_b[b + 1])
			want = (uint64_t)(uint32_t)(pc->c[pc->idx[pc->cur[b]]].a
						    + 1) << 32 | pc->b_j[b];
		ASSERT_EQ(want, t[pc->seg.size + b]) TH_LOG("bucket %u", b);
		set[0] += want != SEG_NONE;
	}
	for (uint32_t i = 1; i < pc->seg.size; i++) {
		uint64_t m = t[2 * i] < t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];

		ASSERT_EQ(m, t[i]) TH_LOG("node %u", i);
	}
}

TEST(tree_leaves_match_buckets)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 13 }, { NULL, NULL, 1000, 14 },
		{ NULL, NULL, 2000, 15 }, { "llama2-7b", "infer", 0, 1 },
	};
	uint64_t set[2] = { 0, 0 };

	random_sweeps(_metadata, cases, ARRAY_SIZE(cases),
		      0x2545f4914f6cdd1dULL, true, tree_matches_buckets, set);
	EXPECT_LT(1000, set[0]);
	EXPECT_LT(1000, set[1]);	/* leaves an earlier sweep left */
}

/* The class of the bucket holding place x of the index (x < by_b[nb]). */
static uint32_t class_at(const struct plan_ctx *pc, size_t x)
{
	uint32_t lo = 0, hi = pc->nb - 1;

	while (lo < hi) {	/* the last bucket starting at or before x */
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (pc->by_b[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return pc->b_cls[lo];
}

/*
 * The whole index against the candidates themselves (passes/plan.c,
 * index_by_use(), which moves keys and never reads a candidate back):
 * every candidate once, by class (classes by size, each a quarter of an
 * octave at most), next use, start and tensor, then the gaps to the end
 * by start and tensor; each bucket one class and use, as many buckets as
 * such pairs; each class's cheapest prefetch; each use's buckets.
 */
static void check_index(struct __test_metadata *_metadata,
			const struct plan_ctx *pc)
{
	const struct graph *g = pc->lf->g;
	uint32_t n = pc->lf->n, b, s;
	size_t m = pc->by_b[pc->nb], x;
	uint8_t *seen = calloc(pc->nc ? pc->nc : 1, 1);

	ASSERT_NE(NULL, seen);
	for (x = 0; x < pc->nc; x++) {
		ASSERT_EQ(0, seen[pc->idx[x]]) TH_LOG("candidate twice at %zu", x);
		seen[pc->idx[x]] = 1;
		ASSERT_EQ(x >= m, pc->c[pc->idx[x]].j == (int32_t)n);
	}
	free(seen);
	/* plan_init() sized its arrays by what life_build() counted */
	ASSERT_EQ(pc->lf->nlive, pc->nc);
	ASSERT_EQ(pc->lf->nvals, pc->nep);
	ASSERT_EQ(pc->nc - pc->nc_end, m);
	for (b = 0; b < pc->nb; b++) {
		ASSERT_LT(pc->by_b[b], pc->by_b[b + 1]);
		ASSERT_EQ(pc->b_j[b], (uint32_t)pc->c[pc->idx[pc->by_b[b]]].j);
		ASSERT_TRUE(pc->cls_b[pc->b_cls[b]] <= b &&
			    b < pc->cls_b[pc->b_cls[b] + 1]);
		for (x = pc->by_b[b]; x < pc->by_b[b + 1]; x++)
			ASSERT_EQ(pc->b_j[b], (uint32_t)pc->c[pc->idx[x]].j);
		if (b && pc->b_cls[b] == pc->b_cls[b - 1])	/* maximal */
			ASSERT_LT(pc->b_j[b - 1], pc->b_j[b]);
	}
	ASSERT_EQ(0, pc->nb ? pc->cls_b[0] : 0);
	ASSERT_EQ(pc->nb, pc->cls_b[pc->ncls]);
	for (s = 0; s < pc->ncls; s++) {
		uint64_t lo = UINT64_MAX, hi = 0;
		double cost = 1e300;

		ASSERT_LT(pc->cls_b[s], pc->cls_b[s + 1]);
		for (x = pc->by_b[pc->cls_b[s]];
		     x < pc->by_b[pc->cls_b[s + 1]]; x++) {
			uint64_t bytes = g->t[pc->c[pc->idx[x]].t].bytes;

			lo = bytes < lo ? bytes : lo;
			hi = bytes > hi ? bytes : hi;
			if (h2d_ns(pc->p, bytes) < cost)
				cost = h2d_ns(pc->p, bytes);
		}
		ASSERT_TRUE(hi <= 4 || hi * 4 < lo * 5) TH_LOG("class %u", s);
		ASSERT_EQ(cost, pc->cls_cost[s]) TH_LOG("class %u", s);
		if (s + 1 < pc->ncls)	/* the next class holds larger */
			ASSERT_LT(hi, g->t[pc->c[pc->idx[pc->by_b[pc->cls_b[s + 1]]]].t].bytes);
	}
	for (x = 1; x < pc->nc; x++) {	/* within a class, or at the end */
		const struct cand *p = &pc->c[pc->idx[x - 1]];
		const struct cand *q = &pc->c[pc->idx[x]];

		if (x == m || (x < m && class_at(pc, x - 1) != class_at(pc, x)))
			continue;
		ASSERT_TRUE(p->j < q->j || (p->j == q->j && (p->a < q->a ||
			    (p->a == q->a && p->t < q->t)))) TH_LOG("at %zu", x);
	}
	for (b = 0; b < pc->nb; b++) {
		uint32_t j = pc->b_j[b], found = 0;

		for (x = pc->at_off[j]; x < pc->at_off[j + 1]; x++)
			found += pc->at_j[x] == b;
		ASSERT_EQ(1, found) TH_LOG("bucket %u at its use", b);
	}
	ASSERT_EQ(pc->nb, pc->at_off[n + 1]);
}

/*
 * Each bucket, and the gaps to the end, holds candidates of one next use
 * by start, then tensor (passes/plan.c, index_by_use(): the order the
 * sweep tries them in), on random graphs, a decode and a training step,
 * whose steps read from one to hundreds of tensors; and the whole index
 * is as check_index() says.
 */
TEST(buckets_sorted_by_start)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 11 }, { NULL, NULL, 1500, 12 },
		{ "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t pairs = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct hp_mem mem = { 0 };
		struct plan_ctx pc;
		struct job j = { 0 };
		struct hp_err e;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__plan_init(&pc, &j.lf, &j.p, &mem));
		for (uint32_t b = 0; b <= pc.nb; b++)
			for (size_t x = pc.by_b[b] + 1; x < pc.by_b[b + 1];
			     x++) {
				const struct cand *p = &pc.c[pc.idx[x - 1]];
				const struct cand *q = &pc.c[pc.idx[x]];

				ASSERT_EQ(p->j, q->j);
				ASSERT_TRUE(p->a < q->a ||
					    (p->a == q->a && p->t < q->t))
					TH_LOG("bucket %u at %zu", b, x);
				pairs++;
			}
		check_index(_metadata, &pc);
		hyper_plan__plan_free(&pc);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(1000, pairs);
}

TEST(bound_corners)
{
	uint32_t order[] = { 0, 1 };
	struct graph g;
	struct life lf;

	/* no compute: nothing can move, the bound is the peak */
	two_ops(&g, 0);
	g.op[1].compute_ns = 0;
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	EXPECT_EQ(lf.peak0, hyper_plan__lower_bound(&lf, &gbps, 0.01, &(struct hp_mem){ 0 }));
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
	/* 2 ms before w is needed, 1.5 ms to fetch it: only b's working set */
	two_ops(&g, 2000000);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	EXPECT_EQ(lf.max_ws, hyper_plan__lower_bound(&lf, &gbps, 0.0, &(struct hp_mem){ 0 }));
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

TEST(graph_round_trip_plans_the_same)
{
	struct plan_case c = { "mixtral-8x7b", "infer", 0, 7 };
	struct goal gl = { 0.01, 0 };
	struct result r1, r2;
	struct problem pb;
	struct job j = { 0 }, k = { 0 };
	struct hp_err e;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[2], &e));
	f = open_memstream(&text, &len);
	hyper_plan__graph_write_json(&j.g, f);
	fclose(f);
	hyper_plan__graph_init(&k.g, "again");
	k.p = j.p;
	ASSERT_EQ(0, hyper_plan__graph_parse_json(&k.g, text, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__job_prepare(&k, false, &e));
	EXPECT_EQ(j.g.nop, k.g.nop);
	EXPECT_EQ(j.g.nt, k.g.nt);
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r1, &e));
	hyper_plan__job_problem(&k, &pb, &gl, &k.g.mem);
	ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r2, &e));
	EXPECT_EQ(r1.sim.peak, r2.sim.peak);
	EXPECT_EQ(r1.sim.makespan_ns, r2.sim.makespan_ns);
	hyper_plan__result_free(&r1);
	hyper_plan__result_free(&r2);
	free(text);
	hyper_plan__job_free(&j);
	hyper_plan__job_free(&k);
}

/* The schedule carries its budget, prediction and GEMM shapes. */
/*
 * The loader splits the big arrays so that json-c parses one element at a
 * time; what it does not follow is parsed in one piece, with the same
 * result.
 */
/*
 * A prepared graph's id maps are freed (hyper_plan__graph_drop_ids()):
 * a look-up still finds every id, an add still refuses a duplicate (the
 * maps are built again first), and an add that runs out of memory
 * building them leaves the graph as it was.
 */
TEST(graph_ids_dropped_still_answer)
{
	struct graph g;
	struct hp_err e;
	uint32_t v;

	two_ops(&g, 1000);
	hyper_plan__graph_drop_ids(&g);
	ASSERT_EQ(NULL, g.tmap.slot);
	ASSERT_EQ(NULL, g.omap.slot);
	EXPECT_EQ(0, hyper_plan__graph_tensor(&g, "w"));
	EXPECT_EQ(2, hyper_plan__graph_tensor(&g, "y"));
	EXPECT_EQ(NONE, hyper_plan__graph_tensor(&g, "v"));
	/* the first allocation building the maps again fails */
	g.mem.fail_at = g.mem.nr + 1;
	EXPECT_EQ(NONE, hyper_plan__graph_add_tensor(&g, "v", 1000,
			HYPER_KIND_ACTIVATION, 0, &e));
	EXPECT_EQ(3, g.nt);
	EXPECT_TRUE(g.ids_dropped);
	EXPECT_EQ(1, hyper_plan__graph_tensor(&g, "x"));
	g.mem.failed = false;
	EXPECT_EQ(NONE, hyper_plan__graph_add_tensor(&g, "x", 1000,
			HYPER_KIND_ACTIVATION, 0, &e));
	EXPECT_NE(NULL, strstr(e.msg, "duplicate id \"x\""));
	EXPECT_FALSE(g.ids_dropped);
	hyper_plan__graph_drop_ids(&g);
	EXPECT_EQ(NONE, hyper_plan__graph_add_op(&g, "b", 1, NULL, 0,
			(uint32_t[]){ 2 }, 1, NULL, &e));
	EXPECT_NE(NULL, strstr(e.msg, "duplicate id \"b\""));
	v = hyper_plan__graph_add_tensor(&g, "v", 1000, HYPER_KIND_ACTIVATION,
					 0, &e);
	EXPECT_EQ(3, v);
	EXPECT_EQ(3, hyper_plan__graph_tensor(&g, "v"));
	EXPECT_EQ(2, hyper_plan__graph_add_op(&g, "c", 1, &v, 1, NULL, 0,
					      NULL, &e));
	hyper_plan__graph_free(&g);
}

/*
 * The run's kept blocks (lib/util.c, struct hp_mem's keep): a block
 * freed through a keeping hp_mem comes back for a later request it
 * holds, cleared where calloc() or a zeroed part asks, with a grown
 * array's contents copied; a request none holds frees the largest; the
 * blocks kept stay within HP_KEEP_SLOTS and HP_KEEP_MAX; a bare hp_mem
 * keeps nothing; release frees all (LeakSanitizer sees one lost).
 */
static unsigned int nkept(const struct hp_mem *m, size_t *bytes)
{
	unsigned int i, k = 0;

	*bytes = 0;
	for (i = 0; i < HP_KEEP_SLOTS; i++)
		if (m->kept[i].p) {
			k++;
			*bytes += m->kept[i].n;
		}
	return k;
}

TEST(mem_keeps_big_blocks_for_later_requests)
{
	struct hp_mem m = { .keep = true, .keep_min = 64 << 10 };
	struct hp_mem bare = { 0 };
	uint32_t *u, *z = NULL;
	unsigned char *a, *b, *c, *blk;
	size_t bytes, cap = 0, i;
	struct hu_part part[2];
	uint64_t *w = NULL;

	a = hyper_plan__malloc(&m, 256 << 10);
	ASSERT_NE(NULL, a);
	memset(a, 0xa5, 256 << 10);
	hyper_plan__free(&m, a);
	EXPECT_EQ(1u, nkept(&m, &bytes));
	/* the smallest that holds it, cleared for calloc() */
	b = hyper_plan__calloc(&m, 200 << 10, 1);
	ASSERT_EQ(a, b);
	for (i = 0; i < (200 << 10); i++)
		if (b[i])
			break;
	EXPECT_EQ((size_t)200 << 10, i);
	EXPECT_EQ(0u, nkept(&m, &bytes));
	hyper_plan__free(&m, b);
	/* a phase's block: each part set, the zeroed one cleared */
	memset(b, 0x5a, 256 << 10);
	part[0] = (struct hu_part)HU_PART(u, 20000, false);
	part[1] = (struct hu_part)HU_PART(z, 20000, true);
	blk = hyper_plan__block(&m, part, 2);
	ASSERT_EQ(b, blk);
	EXPECT_EQ((void *)blk, (void *)u);
	EXPECT_LE((unsigned char *)(u + 20000), (unsigned char *)z);
	for (i = 0; i < 20000; i++)
		if (z[i])
			break;
	EXPECT_EQ(20000u, i);
	hyper_plan__block_free(&m, (void **)&blk, part, 2);
	EXPECT_EQ(NULL, u);
	EXPECT_EQ(1u, nkept(&m, &bytes));
	/* an array's first room from it */
	ASSERT_EQ(0, hyper_plan__grow(&m, &w, &cap, 10000, sizeof(*w)));
	EXPECT_EQ(a, (unsigned char *)w);
	for (i = 0; i < cap; i++)
		w[i] = i * 7;
	/* grown into a bigger block kept: what it held copied, it kept */
	c = hyper_plan__malloc(&bare, 1 << 20);
	ASSERT_NE(NULL, c);
	hyper_plan__free(&m, c);
	ASSERT_EQ(0, hyper_plan__grow(&m, &w, &cap, 40000, sizeof(*w)));
	EXPECT_EQ(c, (unsigned char *)w);
	for (i = 0; i < 16384; i++)
		if (w[i] != i * 7)
			break;
	EXPECT_EQ(16384u, i);
	EXPECT_EQ(1u, nkept(&m, &bytes));
	hyper_plan__free(&m, w);
	EXPECT_EQ(2u, nkept(&m, &bytes));
	/* none holds 2 MiB: the largest goes, the smaller stays */
	c = hyper_plan__malloc(&m, 2 << 20);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(1u, nkept(&m, &bytes));
	EXPECT_GT((size_t)512 << 10, bytes);
	hyper_plan__free(&m, c);
	hyper_plan__mem_release(&m);
	/* never more than the slots or the bytes allowed */
	for (i = 0; i < HP_KEEP_SLOTS + 4; i++)
		hyper_plan__free(&m, hyper_plan__malloc(&bare, (1 << 20) +
							 (i << 16)));
	EXPECT_EQ((unsigned int)HP_KEEP_SLOTS, nkept(&m, &bytes));
	EXPECT_GE(HP_KEEP_MAX, bytes);
	/* the bigger ones displace the smaller */
	EXPECT_LE((size_t)(HP_KEEP_SLOTS - 1) * (1 << 20) +
		  (size_t)HP_KEEP_SLOTS * (1 << 16), bytes);
	/* a bare hp_mem keeps nothing, and gives a kept one's away */
	hyper_plan__mem_hand(&m, &bare);
	EXPECT_EQ(0u, nkept(&m, &bytes));
	EXPECT_EQ(0u, nkept(&bare, &bytes));
	hyper_plan__free(&bare, hyper_plan__malloc(&bare, 1 << 20));
	EXPECT_EQ(0u, nkept(&bare, &bytes));
	hyper_plan__free(&m, hyper_plan__malloc(&m, 1 << 20));
	EXPECT_EQ(1u, nkept(&m, &bytes));
	hyper_plan__mem_release(&m);
	EXPECT_EQ(0u, nkept(&m, &bytes));
	EXPECT_FALSE(m.failed);
	EXPECT_FALSE(bare.failed);
}

TEST(graph_json_split)
{
	static const char *const whole[] = {
		"{\"ops\":[],\"ops\":[],\"tensors\":[]}",	/* twice */
		"{\"tensors\":[],\"ops\":[] /* c */}",		/* comment */
		"{\"tensors\":[],\"ops\":[]} x",		/* trailing */
		"{\"tensors\":{},\"ops\":[]}",			/* not arrays */
		"{\"tensors\":[1 2],\"ops\":[]}",
		"{\"tensors\":[\"a]\"],\"ops\":[",		/* cut short */
		"[]",
	};
	static const char split_ok[] =
		" {\"format\":\"hyper-graph\", \"ops\" : [ {\"id\":\"o\",\"x\":[\"]\\\"\"]} ,[] ],"
		"\"x-y\":{\"tensors\":[1]},\"tensors\":[ ]}\n";
	struct plan_case c = { "llama2-7b", "infer", 0, 2 };
	struct job j = { 0 }, k = { 0 };
	struct hyper_plan__json_split sp;
	struct hp_err e;
	char *text = NULL, *odd;
	size_t len = 0, i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(whole); i++)
		EXPECT_EQ(-1, hyper_plan__json_split(whole[i], &sp, &(struct hp_mem){ 0 })) TH_LOG("case %zu", i);
	ASSERT_EQ(0, hyper_plan__json_split(split_ok, &sp, &(struct hp_mem){ 0 }));
	EXPECT_STREQ(" {\"format\":\"hyper-graph\", \"ops\" : [],"
		     "\"x-y\":{\"tensors\":[1]},\"tensors\":[]}\n", sp.skeleton);
	EXPECT_EQ(0, sp.nel[0]);
	ASSERT_EQ(2, sp.nel[1]);
	EXPECT_EQ(0, strncmp(split_ok + sp.el[1][0].at, "{\"id\"", 5));
	EXPECT_EQ(2, sp.el[1][1].len);
	hyper_plan__json_split_free(&sp);

	/* A real graph: split, and the same graph once a comment forbids it. */
	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e));
	f = open_memstream(&text, &len);
	hyper_plan__graph_write_json(&j.g, f);
	fclose(f);
	ASSERT_EQ(0, hyper_plan__json_split(text, &sp, &(struct hp_mem){ 0 }));
	EXPECT_EQ(j.g.nt, sp.nel[0]);
	EXPECT_EQ(j.g.nop, sp.nel[1]);
	hyper_plan__json_split_free(&sp);
	odd = malloc(len + 16);
	ASSERT_NE(NULL, odd);
	memcpy(odd, text, len + 1);
	strcpy(strrchr(odd, '}'), "/* c */ }\n");
	ASSERT_EQ(-1, hyper_plan__json_split(odd, &sp, &(struct hp_mem){ 0 }));
	hyper_plan__graph_init(&k.g, "again");
	ASSERT_EQ(0, hyper_plan__graph_parse_json(&k.g, odd, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(j.g.nt, k.g.nt);
	ASSERT_EQ(j.g.nop, k.g.nop);
	for (i = 0; i < j.g.nop; i++)
		EXPECT_STREQ(j.g.op[i].id, k.g.op[i].id);
	for (i = 0; i < j.g.nt; i++)
		EXPECT_EQ(j.g.t[i].bytes, k.g.t[i].bytes);
	free(odd);
	free(text);
	hyper_plan__job_free(&j);
	hyper_plan__job_free(&k);
}

TEST(schedule_json_fields)
{
	struct plan_case c = { "llama3-8b", "infer", 0, 1 };
	struct goal gl = { 0.01, 0 };
	json_object *root, *steps, *v, *st;
	struct problem pb;
	struct result r;
	struct job j = { 0 };
	struct hp_err e;
	size_t k, gemms = 0;
	char *text;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e));
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r, &e));
	text = schedule_text(&r.s);
	root = json_tokener_parse(text);
	ASSERT_NE(NULL, root);
	ASSERT_TRUE(json_object_object_get_ex(root, "device_budget_bytes", &v));
	EXPECT_EQ(r.sim.peak, (uint64_t)json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(root, "predicted", &v));
	ASSERT_TRUE(json_object_object_get_ex(v, "peak_device_bytes", &v));
	EXPECT_EQ(r.sim.peak, (uint64_t)json_object_get_int64(v));
	ASSERT_TRUE(json_object_object_get_ex(root, "steps", &steps));
	for (k = 0; k < json_object_array_length(steps); k++) {
		st = json_object_array_get_idx(steps, k);
		if (json_object_object_get_ex(st, "x-gemm", &v)) {
			gemms++;
			EXPECT_TRUE(json_object_object_get_ex(v, "k", &v));
		}
	}
	/* q, k, v, o, gate, up, down per layer and step, plus lm_head */
	EXPECT_EQ((2 * 7 + 1) * 5, gemms);
	json_object_put(root);
	free(text);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
}

/*
 * The schedule as the writer's first version wrote it, one fprintf() at
 * a time, ids each through hu_json_write_str(): the writer's words made
 * once per schedule (each cache op's, each kind and home's, the first of
 * a list without its comma) and its ids measured once must come out as
 * these bytes.
 */
static void ref_cops(FILE *f, const struct sched *s, size_t slot,
		     const char *key)
{
	if (!slot_len(s, slot))
		return;
	fprintf(f, ",\n   \"%s\": [", key);
	for (size_t i = s->slot_off[slot]; i < s->slot_off[slot + 1]; i++)
	{
		fprintf(f, "%s{ \"op\": \"%s\", \"tensor\": ",
			i > s->slot_off[slot] ? ", " : " ",
			hyper_cache_op_name(s->cops[i].kind));
		hu_json_write_str(f, s->g->t[s->cops[i].t].id);
		fprintf(f, " }");
	}
	fprintf(f, " ]");
}

static void ref_ids(FILE *f, const struct graph *g, const char *key,
		    const uint32_t *t, uint32_t n)
{
	if (!n)
		return;
	fprintf(f, ",\n   \"%s\": [", key);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(f, "%s", i ? ", " : " ");
		hu_json_write_str(f, g->t[t[i]].id);
	}
	fprintf(f, " ]");
}

static char *ref_schedule_text(const struct sched *s)
{
	const struct graph *g = s->g;
	char hash[HYPER_GRAPH_HASH_LEN], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hyper_plan__graph_identity(g, hash);
	fprintf(f, "{\n \"format\": \"hyper-schedule\",\n \"version\": 1,\n \"name\": \"test\",\n \"graph\": { \"name\": \"%s\", \"hash\": \"%s\" }",
		g->name ? g->name : "", hash);
	if (s->budget)
		fprintf(f, ",\n \"device_budget_bytes\": %" PRIu64, s->budget);
	if (s->res_off)
		fprintf(f, ",\n \"arena_bytes\": %" PRIu64, s->arena);
	fprintf(f, ",\n \"tensors\": [\n");
	for (size_t t = 0; t < g->nt; t++) {
		fprintf(f, "  { \"id\": ");
		hu_json_write_str(f, g->t[t].id);
		fprintf(f, ", \"bytes\": %" PRIu64 ", \"kind\": \"%s\", \"home\": \"%s\"",
			g->t[t].bytes, hyper_kind_name(g->t[t].kind),
			hyper_home_name(s->home[t]));
		if (s->res_off && s->res_first[t] < s->res_first[t + 1]) {
			fprintf(f, ", \"arena_offsets\": [");
			for (uint32_t i = s->res_first[t]; i < s->res_first[t + 1]; i++)
				fprintf(f, "%s%" PRIu64, i > s->res_first[t] ? ", " : " ",
					s->res_off[i]);
			fprintf(f, " ]");
		}
		fprintf(f, t + 1 < g->nt ? " },\n" : " }\n");
	}
	fprintf(f, " ],\n \"steps\": [\n");
	for (uint32_t k = 0; k < s->n; k++) {
		const struct op *o = &g->op[s->order[k]];

		fprintf(f, "  { \"op\": ");
		hu_json_write_str(f, o->id);
		fprintf(f, ", \"compute_ns\": %" PRIu64, o->compute_ns);
		if (o->gemm.m)
			fprintf(f, ", \"x-gemm\": { \"m\": %u, \"n\": %u, \"k\": %u }",
				o->gemm.m, o->gemm.n, o->gemm.k);
		ref_cops(f, s, 2 * k, "before");
		ref_ids(f, g, "uses", op_in(g, o), o->n_in);
		ref_ids(f, g, "defines", op_out(g, o), o->n_out);
		ref_cops(f, s, 2 * k + 1, "after");
		fprintf(f, k + 1 < s->n ? " },\n" : " }\n");
	}
	fprintf(f, " ],\n \"predicted\": { \"peak_device_bytes\": %llu, \"stall_ns\": %.0f, \"makespan_ns\": %.0f }\n}\n",
		(unsigned long long)s->pred.peak, s->pred.stall_ns,
		s->pred.makespan_ns);
	fclose(f);
	return buf;
}

/*
 * Gives the first ODD_IDS tensors of @g ids that need an escape, or
 * (254 bytes) are the longest the writer measures once, or are too
 * long to (255 and 70000 bytes), or takes their own back (@set 0).
 */
#define ODD_IDS	7

static void odd_ids(struct __test_metadata *_metadata, struct graph *g,
		    char *odd[ODD_IDS], const char *keep[ODD_IDS], int set)
{
	static const char *const esc[] = {
		"q\"uote", "back\\slash", "tab\there", "del\x7f",
	};
	static const size_t longs[] = { 254, 255, 70000 };

	ASSERT_LE(ODD_IDS, g->nt);
	for (size_t t = 0; t < ODD_IDS; t++) {
		/* set by hand: the graph's measures are not known */
		g->t[t].id_len = 0;
		g->t[t].id_plain = false;
		if (!set) {
			g->t[t].id = keep[t];
			g->t[t].id_len = (uint8_t)strlen(keep[t]);
			g->t[t].id_plain = hu_json_plain_len(keep[t]) != SIZE_MAX;
			free(odd[t]);
			continue;
		}
		keep[t] = g->t[t].id;
		if (t < 4) {
			odd[t] = strdup(esc[t]);
		} else {
			odd[t] = malloc(longs[t - 4] + 1);
			if (odd[t]) {
				memset(odd[t], 'a' + (int)t, longs[t - 4]);
				odd[t][longs[t - 4]] = '\0';
			}
		}
		ASSERT_NE(NULL, odd[t]);
		g->t[t].id = odd[t];
	}
}

TEST(schedule_json_is_the_first_writers_bytes)
{
	static const struct plan_case cases[] = {
		{ "llama3-8b", "infer", 0, 1 },
		{ "llama3-8b", "train", 0, 1 },
	};
	struct goal gl = { 0.01, 0 };

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint32_t seen[HYPER_OP_DETACH + 1] = { 0 };
		struct problem pb;
		struct result r;
		struct job j = { 0 };
		struct hp_err e;
		char *text, *want, *odd[ODD_IDS];
		const char *keep[ODD_IDS];

		ASSERT_EQ(0, case_job(&j, &cases[c],
				      &hyper_plan__profile_table[0], &e));
		hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
		ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r, &e));
		for (int laid = 0; laid < 3; laid++) {
			/*
			 * without offsets, then with the arena's, then with
			 * ids to escape or too long to measure once
			 */
			if (laid == 1)
				ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, 0,
							&j.g.mem, &e));
			if (laid == 2)
				odd_ids(_metadata, &j.g, odd, keep, 1);
			text = schedule_text(&r.s);
			want = ref_schedule_text(&r.s);
			EXPECT_STREQ(want, text) TH_LOG("case %zu, laid out %d",
							c, laid);
			free(text);
			free(want);
		}
		odd_ids(_metadata, &j.g, odd, keep, 0);
		EXPECT_NE(NULL, r.s.res_off);
		for (size_t i = 0; i < r.s.ncops; i++)
			seen[r.s.cops[i].kind]++;
		/* training: every op is written */
		for (uint32_t op = HYPER_OP_PREFETCH; c && op <= HYPER_OP_DETACH;
		     op++) {
			EXPECT_LT(0, seen[op]) TH_LOG("op %u", op);
		}
		hyper_plan__result_free(&r);
		hyper_plan__job_free(&j);
	}
}

/*
 * hyper_schedule_new() copies a step's name and four lists into one
 * piece of its pool: each must read back as handed over, empty lists
 * as none, on a schedule with every kind of step (training: all four
 * cache ops, lists empty and not, names of many lengths).  The plan goes
 * over in pieces through one buffer each: every tensor's id and arena
 * offsets, and every step's cops, read back across the pieces' seams.
 */
static void keeps_every_list(struct __test_metadata *_metadata,
			     const struct plan_case *c)
{
	struct goal gl = { 0.01, 0 };
	struct hyper_schedule *hs;
	struct hyper_step_info si;
	struct problem pb;
	struct result r;
	struct job j = { 0 };
	struct hp_err e;

	ASSERT_EQ(0, case_job(&j, c, &hyper_plan__profile_table[0], &e));
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r, &e));
	ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, 0, &j.g.mem, &e));
	ASSERT_EQ(0, hyper_plan__sched_to_hyper(&r.s, "t", &hs, &j.g.mem, &e))
		TH_LOG("%s", e.msg);
	if (!c->model)		/* a random graph: several pieces */
		ASSERT_LT(3 * 1024, r.s.n);
	for (uint32_t t = 0; t < r.s.g->nt; t++) {
		const uint32_t *f = r.s.res_first + t;
		struct hyper_tensor_info ti;

		ASSERT_EQ(0, hyper_schedule_tensor(hs, t, &ti));
		EXPECT_STREQ(r.s.g->t[t].id, ti.id);
		ASSERT_EQ(f[1] - f[0], ti.nr_arena_offsets);
		for (uint32_t i = 0; i < ti.nr_arena_offsets; i++)
			ASSERT_EQ(r.s.res_off[f[0] + i], ti.arena_offsets[i])
				TH_LOG("tensor %u", t);
	}
	for (uint32_t k = 0; k < r.s.n; k++) {
		const struct graph *g = r.s.g;
		const struct op *o = &g->op[r.s.order[k]];
		const struct hyper_cop *l[2];
		uint32_t nl[2];

		ASSERT_EQ(0, hyper_schedule_step(hs, k, &si));
		EXPECT_STREQ(o->id, si.op);
		ASSERT_EQ(o->n_in, si.nr_uses);
		ASSERT_EQ(o->n_out, si.nr_defines);
		EXPECT_EQ(!o->n_in, !si.uses);
		EXPECT_EQ(!o->n_out, !si.defines);
		for (uint32_t i = 0; i < o->n_in; i++)
			ASSERT_EQ(op_in(g, o)[i], si.uses[i]) TH_LOG("step %u", k);
		for (uint32_t i = 0; i < o->n_out; i++)
			ASSERT_EQ(op_out(g, o)[i], si.defines[i]) TH_LOG("step %u", k);
		l[0] = si.before;
		l[1] = si.after;
		nl[0] = si.nr_before;
		nl[1] = si.nr_after;
		for (int a = 0; a < 2; a++) {
			size_t slot = 2 * k + a, at = r.s.slot_off[slot];

			ASSERT_EQ(slot_len(&r.s, slot), nl[a]);
			EXPECT_EQ(!nl[a], !l[a]);
			for (uint32_t i = 0; i < nl[a]; i++) {
				ASSERT_EQ(r.s.cops[at + i].kind, l[a][i].op);
				ASSERT_EQ(r.s.cops[at + i].t, l[a][i].tensor);
			}
		}
	}
	hyper_schedule_free(hs);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
}

TEST(schedule_new_keeps_every_list)
{
	/* pieces of 1024 (out/sched_hyper.c): one, then several */
	static const struct plan_case c[] = {
		{ "llama3-8b", "train", 0, 1 }, { NULL, NULL, 5000, 7 },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(c); i++)
		keeps_every_list(_metadata, &c[i]);
}

/*
 * hyper_schedule_new() hashes each tensor's id some tensors ahead of its
 * insert: a duplicate anywhere, near the start, across the look-ahead or
 * at the end, is still named with the first tensor it repeats, and every
 * id of a schedule without one is found again.
 */
TEST(schedule_new_finds_each_duplicate_id)
{
	enum { NT = 70 };
	static const uint32_t dup[][2] = {
		{ 1, 0 }, { 2, 1 }, { 17, 0 }, { 18, 2 }, { 40, 23 },
		{ 69, 68 }, { 69, 0 }, { 33, 16 },
	};
	struct hyper_tensor_info ti[NT];
	struct hyper_schedule_info info = {
		.name = "t", .nr_tensors = NT, .nr_steps = 0,
	};
	struct hyper_schedule *hs;
	char ids[NT][16], err[300], want[300];

	for (uint32_t t = 0; t < NT; t++) {
		snprintf(ids[t], sizeof(ids[t]), "t%u", t);
		ti[t] = (struct hyper_tensor_info){
			.id = ids[t], .bytes = 1000 + t,
			.kind = HYPER_KIND_ACTIVATION, .home = HYPER_HOME_POOL,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, NULL, &hs, err,
					sizeof(err))) TH_LOG("%s", err);
	for (uint32_t t = 0; t < NT; t++)
		EXPECT_EQ((int)t, hyper_schedule_find(hs, ids[t]));
	EXPECT_GT(0, hyper_schedule_find(hs, "t70"));
	hyper_schedule_free(hs);
	for (size_t c = 0; c < ARRAY_SIZE(dup); c++) {
		uint32_t at = dup[c][0], first = dup[c][1];

		ti[at].id = ids[first];
		EXPECT_EQ(-EINVAL, hyper_schedule_new(&info, ti, NULL, &hs,
						      err, sizeof(err)));
		snprintf(want, sizeof(want),
			 "tensor %u: duplicate id \"%s\" (first is tensor %u)",
			 at, ids[first], first);
		EXPECT_STREQ(want, err) TH_LOG("case %zu", c);
		ti[at].id = ids[at];
	}
	/* no id: refused by its length, before any hash of it is used */
	ti[20].id = NULL;
	EXPECT_EQ(-EINVAL, hyper_schedule_new(&info, ti, NULL, &hs, err,
					      sizeof(err)));
	EXPECT_STREQ("tensors[20].id: must be a string of 1..127 bytes", err);
}

/* Strings written into JSON (runs of plain bytes at once) read back the same. */
TEST(json_strings_round_trip)
{
	static const char *const cases[] = {
		"", "plain", "\"", "a\"b\\c", "\n\t\x01x\x7f", "end\\",
		"layers.0.attn \"q\" \xc3\xa9\x1f", "\\\\\"\"",
	};
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct json_object *o;

		ASSERT_NE(NULL, f);
		hu_json_write_str(f, cases[i]);
		ASSERT_EQ(0, fclose(f));
		o = json_tokener_parse(buf);
		ASSERT_NE(NULL, o) TH_LOG("case %u: %s", i, buf);
		ASSERT_TRUE(json_object_is_type(o, json_type_string));
		EXPECT_STREQ(cases[i], json_object_get_string(o)) TH_LOG("case %u: %s", i, buf);
		json_object_put(o);
		free(buf);
	}
}

/*
 * Two memory streams written alike, the reference by stdio into @fa and
 * util/json.c's buffer @w into the other, then compared byte for byte.
 */
struct jpair {
	char *a, *b;
	size_t la, lb;
	FILE *fa, *fb;
	struct hu_jbuf w;
};

static void jpair_open(struct __test_metadata *_metadata, struct jpair *j)
{
	*j = (struct jpair){ 0 };
	j->fa = open_memstream(&j->a, &j->la);
	j->fb = open_memstream(&j->b, &j->lb);
	ASSERT_NE(NULL, j->fa);
	ASSERT_NE(NULL, j->fb);
	hu_jbuf_init(&j->w, j->fb);
}

static void jpair_agree(struct __test_metadata *_metadata, struct jpair *j)
{
	hu_jbuf_flush(&j->w);
	ASSERT_EQ(0, fclose(j->fa));
	ASSERT_EQ(0, fclose(j->fb));
	ASSERT_EQ(j->la, j->lb);
	EXPECT_EQ(0, memcmp(j->a, j->b, j->la));
	free(j->a);
	free(j->b);
}

/*
 * The buffered writer writes what stdio would: strings as
 * hu_json_write_str(), numbers as printf(), across buffer boundaries
 * (a string longer than the buffer too).
 */
TEST(json_buffer_writes_what_stdio_writes)
{
	static const char *const strs[] = {
		"", "plain", "a\"b\\c", "\n\t\x01x\x7f", "L0.wq \xc3\xa9",
	};
	static const uint64_t nums[] = {
		0, 1, 9, 10, 4095, 1050673152, UINT64_MAX / 3, UINT64_MAX,
	};
	char *big = malloc(3 * HU_JBUF_SIZE);
	struct jpair j;

	ASSERT_NE(NULL, big);
	jpair_open(_metadata, &j);
	memset(big, 'x', 3 * HU_JBUF_SIZE - 1);
	big[3 * HU_JBUF_SIZE - 1] = '\0';
	big[HU_JBUF_SIZE] = '"';
	for (unsigned int i = 0; i < 5000; i++) {
		const char *s = strs[i % 5];
		uint64_t v = nums[i % 8] - (i & 1);

		hu_json_write_str(j.fa, s);
		fprintf(j.fa, ", %llu; %.0f\n", (unsigned long long)v, i * 1.5);
		hu_jbuf_str(&j.w, s);
		hu_jbuf_put(&j.w, ", ");
		hu_jbuf_u64(&j.w, v);
		hu_jbuf_printf(&j.w, "; %.0f\n", i * 1.5);
		if (i % 1000 == 999) {
			hu_json_write_str(j.fa, big);
			hu_jbuf_str(&j.w, big);
		}
	}
	jpair_agree(_metadata, &j);
	free(big);
}

/* JSON's escaping of one byte, written out here apart from util/json.c. */
static void ref_escape(FILE *f, unsigned char c)
{
	if (c == '"' || c == '\\')
		fprintf(f, "\\%c", c);
	else if (c < 0x20 || c == 0x7f)
		fprintf(f, "\\u%04x", c);
	else
		fputc(c, f);
}

/*
 * hu_jbuf_str() tests eight bytes at a time whether a string needs an
 * escape: every byte 1..255 at every place of strings of 1 to 24 bytes
 * (each place of the last, overlapping word included), and strings of
 * plain bytes only, must come out as the rule says, across the
 * buffer's ends.
 */
TEST(json_string_escapes_every_byte_anywhere)
{
	struct jpair j;
	char s[41];

	jpair_open(_metadata, &j);
	for (unsigned int c = 1; c < 256; c++)
		for (unsigned int len = 1; len <= 24; len++)
			for (unsigned int at = 0; at < len; at++) {
				memset(s, 'a' + len % 26, len);
				s[len] = '\0';
				s[at] = (char)c;
				fputc('"', j.fa);
				for (unsigned int i = 0; i < len; i++)
					ref_escape(j.fa, (unsigned char)s[i]);
				fputs("\",", j.fa);
				hu_jbuf_str(&j.w, s);
				hu_jbuf_put(&j.w, ",");
			}
	/* only plain bytes: 0x20..0xff but for '"', '\\' and DEL */
	for (unsigned int len = 1, c = 0x20; len <= 40; len++) {
		for (unsigned int i = 0; i < len; i++) {
			while (c == '"' || c == '\\' || c == 0x7f || c > 0xff)
				c = c > 0xff ? 0x20 : c + 1;
			s[i] = (char)c++;
		}
		s[len] = '\0';
		fprintf(j.fa, "\"%s\",", s);
		hu_jbuf_str(&j.w, s);
		hu_jbuf_put(&j.w, ",");
	}
	jpair_agree(_metadata, &j);
}

/*
 * hu_json_plain_len() says which strings hu_jbuf_str() copies as they
 * are (every byte 1..255 at every place of strings of 0 to 24 bytes,
 * each place of the tail past the last whole word included), and
 * hu_jbuf_quoted() writes from that length what hu_jbuf_put() and
 * hu_jbuf_str() write, with and without the ", " before, across the
 * buffer's ends.
 */
static void pad_to(struct hu_jbuf *w, FILE *f, size_t fill);

TEST(json_plain_len_and_quoted_write_what_the_escaper_writes)
{
	struct jpair j;
	char s[41];

	jpair_open(_metadata, &j);
	EXPECT_EQ(0, hu_json_plain_len(""));
	for (unsigned int c = 1; c < 256; c++)
		for (unsigned int len = 1; len <= 24; len++)
			for (unsigned int at = 0; at < len; at++) {
				bool esc = c < 0x20 || c == '"' || c == '\\' ||
					   c == 0x7f;
				size_t pl;

				memset(s, 'a' + len % 26, len);
				s[len] = '\0';
				s[at] = (char)c;
				pl = hu_json_plain_len(s);
				EXPECT_EQ(esc ? SIZE_MAX : len, pl)
					TH_LOG("byte %u at %u of %u", c, at, len);
				if (pl == SIZE_MAX)
					continue;
				hu_jbuf_put(&j.w, ",");
				hu_jbuf_str(&j.w, s);
				hu_jbuf_quoted(&j.w, ",", 1, s, pl);
				fprintf(j.fa, ",\"%s\",\"%s\"", s, s);
			}
	for (unsigned int len = 0; len <= 40; len++) {
		memset(s, 'A' + len % 26, len);
		s[len] = '\0';
		for (size_t fill = 0; fill <= len + 5; fill++) {
			pad_to(&j.w, j.fa, fill);
			hu_jbuf_quoted(&j.w, ", ", 2, s, hu_json_plain_len(s));
			fprintf(j.fa, ", \"%s\"", s);
			pad_to(&j.w, j.fa, fill);
			hu_jbuf_quoted(&j.w, "", 0, s, len);
			fprintf(j.fa, "\"%s\"", s);
		}
	}
	jpair_agree(_metadata, &j);
}

/*
 * hu_jbuf_word() copies a word in place with hu_copy_short(): every
 * length from 0 to 48 (one, two and three of its 8-byte steps, their
 * 4-byte and 1-to-3-byte tails), from every start in a source whose
 * bytes all differ, must read as fwrite() writes it, also where it fits
 * the buffer just, by one byte less or more, or not at all.
 */
TEST(jbuf_word_writes_each_byte_once)
{
	char src[64];
	struct jpair j;

	for (unsigned int i = 0; i < sizeof(src); i++)
		src[i] = (char)('!' + i);
	jpair_open(_metadata, &j);
	for (size_t len = 0; len <= 48; len++)
		for (size_t from = 0; from + len <= sizeof(src); from += 7) {
			hu_jbuf_word(&j.w, src + from, len);
			fwrite(src + from, 1, len, j.fa);
			hu_jbuf_put(&j.w, "|");
			fputc('|', j.fa);
		}
	for (size_t len = 0; len <= 48; len++)
		for (size_t fill = 0; fill <= len + 2; fill++) {
			pad_to(&j.w, j.fa, fill);
			hu_jbuf_word(&j.w, src + 3, len);
			fwrite(src + 3, 1, len, j.fa);
		}
	jpair_agree(_metadata, &j);
}

/* Pads @w (and @f alike) with dots until @fill bytes of it are free. */
static void pad_to(struct hu_jbuf *w, FILE *f, size_t fill)
{
	static char dots[HU_JBUF_SIZE];
	size_t k;

	memset(dots, '.', sizeof(dots));
	if (w->n > HU_JBUF_SIZE - fill) {
		/* up to the end without a flush, then a flush and the rest */
		k = HU_JBUF_SIZE - w->n;
		hu_jbuf_mem(w, dots, k);
		fwrite(dots, 1, k, f);
	}
	k = HU_JBUF_SIZE - fill - (w->n == HU_JBUF_SIZE ? 0 : w->n);
	hu_jbuf_mem(w, dots, k);
	fwrite(dots, 1, k, f);
}

/*
 * hu_jbuf_u64() counts a number's digits before it writes them in
 * place: each side of every power of ten and of two must read as
 * printf() writes it, and those of ten also where they fit the buffer
 * just, or by one byte less or more.
 */
TEST(json_u64_at_every_power_boundary)
{
	uint64_t nums[3 * 20 + 3 * 64 + 2];
	unsigned int n = 0, n10;
	struct jpair j;
	char d[24];
	uint64_t p = 1;

	jpair_open(_metadata, &j);
	for (unsigned int k = 0; k < 20; k++, p *= 10) {
		nums[n++] = p - 1;
		nums[n++] = p;
		nums[n++] = p + 1;
	}
	nums[n++] = UINT64_MAX - 1;
	nums[n++] = UINT64_MAX;
	n10 = n;
	for (unsigned int k = 0; k < 64; k++) {
		nums[n++] = (1ULL << k) - 1;
		nums[n++] = 1ULL << k;
		nums[n++] = (1ULL << k) + 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		fprintf(j.fa, "%" PRIu64 ",", nums[i]);
		hu_jbuf_u64(&j.w, nums[i]);
		hu_jbuf_put(&j.w, ",");
	}
	for (unsigned int i = 0; i < n10; i++) {
		int len = snprintf(d, sizeof(d), "%" PRIu64, nums[i]);

		for (int fill = len - 1; fill <= len + 1; fill++) {
			pad_to(&j.w, j.fa, (size_t)fill);
			fputs(d, j.fa);
			hu_jbuf_u64(&j.w, nums[i]);
		}
	}
	jpair_agree(_metadata, &j);
}

/* A monotone test for hyper_plan__count_search(): passes up to (most) or
 * from (fewest) @at, counts each call, fails the @fail_at'th. */
struct count_test {
	uint32_t at, n, calls, fail_at;
	bool most, saw_untested;
};

static int count_test(void *arg, uint32_t count, bool *ok)
{
	struct count_test *t = arg;

	if (++t->calls == t->fail_at)
		return -ENOMEM;
	if (count == (t->most ? 0 : t->n) || count > t->n)
		t->saw_untested = true;
	*ok = t->most ? count <= t->at : count >= t->at;
	return 0;
}

static unsigned int log2_up(uint32_t x)
{
	unsigned int b = 0;

	while ((1ULL << b) < x)
		b++;
	return b;
}

TEST(count_search_gallop_finds_what_the_bisection_finds)
{
	uint64_t x = 88172645463325252ULL;
	unsigned int i, gallop, calls;

	for (i = 0; i < 4000; i++) {
		struct count_test t = { 0 };
		uint32_t found = ~0U, bisected = ~0U;

		x = plan_xorshift(x);
		t.n = i < 8 ? i : (uint32_t)(x % (i % 3 ? 100 : 3000000));
		t.at = i < 8 ? i / 2 : (uint32_t)((x >> 32) % (t.n + 1));
		if (i % 4 == 1)
			t.at = t.n;
		if (i % 4 == 2)
			t.at = (uint32_t)(x >> 40) % 3 % (t.n + 1);
		t.most = i % 5 != 4;
		gallop = i % 7 != 6;
		ASSERT_EQ(0, hyper_plan__count_search(t.n, t.most, gallop,
						      count_test, &t, &found));
		EXPECT_EQ(t.at, found) TH_LOG("n %u at %u most %d gallop %u",
					     t.n, t.at, t.most, gallop);
		EXPECT_FALSE(t.saw_untested);
		if (t.most && gallop) {
			/* doubling up to at, then bisecting below 2 at */
			EXPECT_GE(2 * log2_up(t.at + 1) + 1, t.calls)
				TH_LOG("n %u at %u: %u tests", t.n, t.at,
				       t.calls);
		} else {
			EXPECT_GE(log2_up(t.n + 1), t.calls);
		}
		if (t.most && gallop && !t.at && t.n)
			EXPECT_EQ(1, t.calls);
		/* the same count the plain bisection finds */
		calls = t.calls;
		t.calls = 0;
		ASSERT_EQ(0, hyper_plan__count_search(t.n, t.most, false,
						      count_test, &t,
						      &bisected));
		EXPECT_EQ(found, bisected);
		/* an error stops the search and comes back */
		if (calls) {
			t.fail_at = calls;
			t.calls = 0;
			EXPECT_EQ(-ENOMEM,
				  hyper_plan__count_search(t.n, t.most, gallop,
							   count_test, &t,
							   &found));
		}
	}
}

struct gallop_test {
	const uint32_t *v;
	uint32_t key;
	unsigned int *reads;
};

static bool gallop_test_past(const void *arg, uint32_t i)
{
	const struct gallop_test *t = arg;

	(*t->reads)++;
	return t->v[i] >= t->key;
}

/*
 * gallop_first() (passes/gallop.h), the bucket and step searches of the
 * selection pass: from any hint, or none, the first place a scan finds;
 * from the answer itself, two reads.
 */
TEST(gallop_first_finds_what_a_scan_finds)
{
	uint64_t x = 88172645463325252ULL;
	uint32_t v[64];

	for (unsigned int round = 0; round < 300; round++) {
		uint32_t n = round % 64, lo, hi, key, scan, hint;
		unsigned int reads = 0;
		struct gallop_test t = { v, 0, &reads };

		for (uint32_t i = 0; i < n; i++) {
			x = plan_xorshift(x);
			v[i] = (i ? v[i - 1] : 0) + (uint32_t)(x % 3);
		}
		if (!n)
			continue;
		lo = (uint32_t)(x >> 20) % n;
		hi = lo + (uint32_t)(x >> 40) % (n - lo);
		key = (uint32_t)(x >> 8) % (v[n - 1] + 3);
		t.key = key;
		for (scan = lo; scan < hi && v[scan] < key; scan++)
			;
		EXPECT_EQ(scan, bisect_first(lo, hi, gallop_test_past, &t));
		EXPECT_EQ(scan, gallop_first(lo, hi, NONE, gallop_test_past,
					     &t));
		for (hint = lo ? lo - 1 : 0; hint <= hi + 1; hint++)
			EXPECT_EQ(scan, gallop_first(lo, hi, hint,
						     gallop_test_past, &t))
				TH_LOG("lo %u hi %u hint %u key %u", lo, hi,
				       hint, key);
		reads = 0;
		EXPECT_EQ(scan, gallop_first(lo, hi, scan, gallop_test_past,
					     &t));
		EXPECT_GE(2u, reads) TH_LOG("lo %u hi %u at %u", lo, hi,
					      scan);
	}
}

/*
 * A tensor's share of the graph's identity is FNV-1a over "T", its id, its
 * size in decimal and its kind, each with its NUL (schedule-format.md,
 * "Graph identity"): the same bytes as formatted by snprintf(), for sizes
 * of every length.
 */
/*
 * op->outs_unread against its definition (no output among the inputs),
 * and the distinct tensors listed with it: by for_each_op_tensor(), by
 * the life's accesses (a read output is one access, read and written)
 * and by the refinement, which must keep a tensor's accessors apart.
 * An in-place update read at another than the first output and a
 * fresh output listed after a read one catch a flag set too eagerly.
 */
TEST(op_outs_unread_lists_each_tensor_once)
{
	static const uint32_t order[] = { 0, 1, 2, 3 };
	struct hp_err e;
	struct graph g;
	struct life lf;
	uint32_t a, b, c, d, t, k, i, refined[4];
	struct deps dp;

	ASSERT_EQ(0, hyper_plan__graph_init(&g, "inplace"));
	a = hyper_plan__graph_add_tensor(&g, "a", 100, HYPER_KIND_WEIGHT,
					 TF_LIVE_IN | TF_LIVE_OUT, &e);
	b = hyper_plan__graph_add_tensor(&g, "b", 10, HYPER_KIND_ACTIVATION,
					 TF_LIVE_IN, &e);
	c = hyper_plan__graph_add_tensor(&g, "c", 1, HYPER_KIND_ACTIVATION,
					 0, &e);
	d = hyper_plan__graph_add_tensor(&g, "d", 1000, HYPER_KIND_ACTIVATION,
					 0, &e);
	/* fresh output; in place at the second output; read, then fresh */
	ASSERT_EQ(0, hyper_plan__graph_add_op(&g, "p", 1, &b, 1, &c, 1,
					      NULL, &e));
	ASSERT_EQ(1, hyper_plan__graph_add_op(&g, "q", 1,
		  (uint32_t[]){ c, a }, 2, (uint32_t[]){ d, a }, 2, NULL, &e));
	ASSERT_EQ(2, hyper_plan__graph_add_op(&g, "r", 1,
		  (uint32_t[]){ d, b }, 2, (uint32_t[]){ b, c }, 2, NULL, &e));
	ASSERT_EQ(3, hyper_plan__graph_add_op(&g, "s", 1,
		  (uint32_t[]){ a, b, c }, 3, NULL, 0, NULL, &e));
	for (i = 0; i < g.nop; i++) {
		const struct op *o = &g.op[i];
		bool unread = true;
		uint32_t n = 0, listed[8];

		for (k = 0; k < o->n_out; k++)
			if (hyper_plan__op_reads(&g, o, op_out(&g, o)[k]))
				unread = false;
		EXPECT_EQ(unread, o->outs_unread) TH_LOG("op %u", i);
		for_each_op_tensor(&g, o, t, k) {
			for (uint32_t x = 0; x < n; x++)
				EXPECT_NE(listed[x], t) TH_LOG("op %u", i);
			listed[n++] = t;
		}
		EXPECT_EQ(i == 0 ? 2 : 3, n) TH_LOG("op %u", i);
	}
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	/* a: read-written by q, read by s; b: p, r (read-written), s */
	EXPECT_EQ(2, lf.acc_off[a + 1] - lf.acc_off[a]);
	EXPECT_EQ(ACC_R | ACC_W, lf.acc_rw[lf.acc_off[a]]);
	EXPECT_EQ(3, lf.acc_off[b + 1] - lf.acc_off[b]);
	EXPECT_EQ(ACC_R | ACC_W, lf.acc_rw[lf.acc_off[b] + 1]);
	/* c: written by p, read by q, written by r, read by s */
	EXPECT_EQ(4, lf.acc_off[c + 1] - lf.acc_off[c]);
	EXPECT_EQ(ACC_W, lf.acc_rw[lf.acc_off[c] + 2]);
	EXPECT_EQ(100 + 1000 + 1, lf.ws[1]);
	EXPECT_EQ(1000 + 10 + 1, lf.ws[2]);
	hyper_plan__life_free(&lf);
	ASSERT_EQ(0, hyper_plan__graph_deps(&g, &dp, &g.mem, &e));
	memcpy(refined, order, sizeof(refined));
	ASSERT_EQ(0, hyper_plan__refine_order(&g, &dp, refined, &g.mem));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(order[i], refined[i]);
	hyper_plan__deps_free(&dp);
	hyper_plan__graph_free(&g);
}

/*
 * hyper_plan__graph_deps() counts the edges in one walk and places them
 * in another: a tensor written and read in turn gives each read two
 * edges (from the write it sees, to the next write) and each later
 * write one.  The CSR must hold every edge, each op's successors in the
 * order they were found.
 */
TEST(deps_fill_their_bound)
{
	enum { W = 40 };	/* writes of x, a read after each */
	struct hp_err e;
	struct graph g;
	struct deps d;
	uint32_t x, i;
	char id[16];

	ASSERT_EQ(0, hyper_plan__graph_init(&g, "turns"));
	x = hyper_plan__graph_add_tensor(&g, "x", 8, HYPER_KIND_ACTIVATION,
					 0, &e);
	for (i = 0; i < 2 * W; i++) {
		snprintf(id, sizeof(id), "%c%u", i % 2 ? 'r' : 'w', i);
		ASSERT_EQ(i, hyper_plan__graph_add_op(&g, id, 1,
			  &x, i % 2, &x, !(i % 2), NULL, &e)) TH_LOG("%s", e.msg);
	}
	ASSERT_EQ(0, hyper_plan__graph_deps(&g, &d, &g.mem, &e));
	/* a write: to its read, then (WAW) to the next write; a read: WAR */
	EXPECT_EQ(2 * W + W - 1 - 1, d.off[g.nop]);
	for (i = 0; i < 2 * W; i++) {
		size_t k = d.off[i], n = d.off[i + 1] - k;

		EXPECT_EQ(!i ? 0 : i % 2 ? 1 : 2, d.indeg[i]) TH_LOG("op %u", i);
		if (i % 2) {
			EXPECT_EQ(i + 1 < 2 * W ? 1 : 0, n) TH_LOG("op %u", i);
			if (n)
				EXPECT_EQ(i + 1, d.dst[k]);
		} else {
			EXPECT_EQ(i + 2 < 2 * W ? 2 : 1, n) TH_LOG("op %u", i);
			EXPECT_EQ(i + 1, d.dst[k + n - 1]);
			if (n == 2)
				EXPECT_EQ(i + 2, d.dst[k]);
		}
	}
	hyper_plan__deps_free(&d);
	hyper_plan__graph_free(&g);
}

/*
 * The edges by their definition, each read's writers before it counted
 * one by one: write after write per tensor, then each op's reads in op
 * order (from the writer the read sees, the first writer for a forward
 * reference; to the next writer), no edge from an op to itself, each
 * op's successors in the order found.  hyper_plan__graph_deps() keeps a
 * place per tensor written twice or more that moves up its writers as
 * the walk goes; on random graphs with such tensors (forward references,
 * in-place ops, reads of live_in tensors before any write, tensors not
 * read at all), written and read in turns, it must give this CSR.
 */
static void deps_by_definition(const struct graph *g, size_t *off,
			       uint32_t *indeg, uint32_t *dst, size_t *nedge)
{
	size_t ne = 0, cap = 4 * g->nrefs + 8, i, k;
	uint32_t (*edge)[2] = malloc(cap * sizeof(*edge)), b, t, x;
	uint32_t *wr = malloc((g->nop + 1) * sizeof(*wr)), nw, v, y;

#define DEF_EDGE(s_, d_)						\
	do {								\
		if ((s_) != (d_)) {					\
			edge[ne][0] = (s_);				\
			edge[ne++][1] = (d_);				\
		}							\
	} while (0)
	for (t = 0; t < g->nt; t++) {
		for (nw = 0, b = 0; b < g->nop; b++)
			for (y = 0; y < g->op[b].n_out; y++)
				if (op_out(g, &g->op[b])[y] == t)
					wr[nw++] = b;
		for (x = 1; x < nw; x++)
			DEF_EDGE(wr[x - 1], wr[x]);
	}
	for (b = 0; b < g->nop; b++)
		for (k = 0; k < g->op[b].n_in; k++) {
			t = op_in(g, &g->op[b])[k];
			for (nw = 0, i = 0; i < g->nop; i++)
				for (y = 0; y < g->op[i].n_out; y++)
					if (op_out(g, &g->op[i])[y] == t)
						wr[nw++] = i;
			for (v = 0; v < nw && wr[v] < b; v++)
				;
			if (v) {
				DEF_EDGE(wr[v - 1], b);
			} else if (!(g->t[t].flags & TF_LIVE_IN)) {
				DEF_EDGE(wr[0], b);
				v = 1;
			}
			if (v < nw)
				DEF_EDGE(b, wr[v]);
		}
#undef DEF_EDGE
	memset(off, 0, (g->nop + 1) * sizeof(*off));
	memset(indeg, 0, g->nop * sizeof(*indeg));
	for (i = 0; i < ne; i++) {
		off[edge[i][0] + 1]++;
		indeg[edge[i][1]]++;
	}
	for (b = 0; b < g->nop; b++)
		off[b + 1] += off[b];
	for (b = 0, k = 0; b < g->nop; b++)	/* stable by source */
		for (i = 0; i < ne; i++)
			if (edge[i][0] == b)
				dst[k++] = edge[i][1];
	*nedge = ne;
	free(edge);
	free(wr);
}

/* Below @n, from the tests' one random step (plan_xorshift()). */
static uint32_t rnd_below(uint64_t *seed, uint32_t n)
{
	*seed = plan_xorshift(*seed);
	return (uint32_t)((*seed >> 33) % n);
}

/* Up to @want distinct tensors of @nt into @r (@only: that one alone). */
static uint32_t deps_pick(uint64_t *seed, uint32_t nt, uint32_t *r,
			  uint32_t want, uint32_t only)
{
	uint32_t n = 0, x, y, t;

	for (x = 0; x < want; x++) {
		t = only != NONE ? only : rnd_below(seed, nt);
		for (y = 0; y < n && r[y] != t; y++)
			;
		if (y == n)
			r[n++] = t;
	}
	return n;
}

TEST(deps_match_their_definition)
{
	enum { NOP = 90, NT = 12 };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t off[NOP + 1], ne;
	uint32_t indeg[NOP], dst[4 * 4 * NOP + 8];
	unsigned int round, multi = 0, fwd = 0;
	struct hp_err e;

	for (round = 0; round < 60; round++) {
		uint32_t in[3], out[2], ni, no, i, t, k;
		struct graph g;
		struct deps d;
		char id[16];

		ASSERT_EQ(0, hyper_plan__graph_init(&g, "turns"));
		for (t = 0; t < NT; t++) {
			snprintf(id, sizeof(id), "t%u", t);
			ASSERT_EQ(t, hyper_plan__graph_add_tensor(&g, id, 8,
				  HYPER_KIND_ACTIVATION,
				  t % 4 == 0 ? TF_LIVE_IN : 0, &e));
		}
		for (i = 0; i < NOP; i++) {
			ni = deps_pick(&seed, NT, in, rnd_below(&seed, 4),
				       NONE);
			/* its own first write, read: no value to read */
			for (k = 0; i < NT && i % 4 && k < ni; k++)
				if (in[k] == i)
					in[k--] = in[--ni];
			/* every tensor written once early, most again later */
			no = i < NT ? deps_pick(&seed, NT, out, 1, i) :
				      deps_pick(&seed, NT, out,
						rnd_below(&seed, 3), NONE);
			snprintf(id, sizeof(id), "o%u", i);
			ASSERT_EQ(i, hyper_plan__graph_add_op(&g, id, 1, in, ni,
				  out, no, NULL, &e)) TH_LOG("%s", e.msg);
		}
		ASSERT_EQ(0, hyper_plan__graph_deps(&g, &d, &g.mem, &e))
			TH_LOG("round %u: %s", round, e.msg);
		deps_by_definition(&g, off, indeg, dst, &ne);
		ASSERT_GE(ARRAY_SIZE(dst), ne);
		ASSERT_EQ(ne, d.off[g.nop]) TH_LOG("round %u", round);
		for (i = 0; i <= g.nop; i++)
			ASSERT_EQ(off[i], d.off[i]) TH_LOG("round %u op %u",
							   round, i);
		for (i = 0; i < g.nop; i++)
			ASSERT_EQ(indeg[i], d.indeg[i]) TH_LOG("round %u op %u",
							       round, i);
		for (i = 0; i < ne; i++)
			ASSERT_EQ(dst[i], d.dst[i]) TH_LOG("round %u edge %u",
							   round, i);
		for (t = 0; t < NT; t++) {
			uint32_t nw = 0, first = NONE;

			for (i = 0; i < g.nop; i++)
				for (k = 0; k < g.op[i].n_out; k++)
					if (op_out(&g, &g.op[i])[k] == t) {
						nw++;
						first = first == NONE ? i : first;
					}
			multi += nw > 2;
			for (i = 0; i < first && i < g.nop; i++)
				for (k = 0; k < g.op[i].n_in; k++)
					fwd += op_in(&g, &g.op[i])[k] == t &&
					       !(g.t[t].flags & TF_LIVE_IN);
		}
		hyper_plan__deps_free(&d);
		hyper_plan__graph_free(&g);
	}
	/* the graphs had what the test is for */
	EXPECT_LT(100, multi);
	EXPECT_LT(0, fwd);
}

/*
 * From about a million references graph_deps() lays its arrays and
 * writers()'s in one block each, the successors and writers sized by a
 * bound (order.c, deps_blocks()).  A graph of many copies of a small
 * random one, each copy on tensors of its own, has the small one's
 * deps in every copy, its ops and edges shifted: the copies' CSR must
 * be that, and the blocks taken.
 */
TEST(deps_in_blocks_match_their_definition)
{
	enum { NOP = 90, NT = 12, COPIES = 6000 };
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	uint32_t in[NOP][3], out[NOP][2], ni[NOP], no[NOP];
	uint32_t indeg[NOP], dst[4 * 4 * NOP + 8], i, t, k, r;
	size_t off[NOP + 1], ne, x;
	struct hp_err e = { "" };
	struct graph small, g;
	struct deps d;
	char id[24];

	ASSERT_EQ(0, hyper_plan__graph_init(&small, "small"));
	ASSERT_EQ(0, hyper_plan__graph_init(&g, "copies"));
	for (r = 0; r < COPIES; r++)
		for (t = 0; t < NT; t++) {
			snprintf(id, sizeof(id), "t%u.%u", r, t);
			ASSERT_EQ(r * NT + t, hyper_plan__graph_add_tensor(&g,
				  id, 8, HYPER_KIND_ACTIVATION,
				  t % 4 == 0 ? TF_LIVE_IN : 0, &e));
			if (!r)
				ASSERT_EQ(t, hyper_plan__graph_add_tensor(&small,
					  id, 8, HYPER_KIND_ACTIVATION,
					  t % 4 == 0 ? TF_LIVE_IN : 0, &e));
		}
	for (i = 0; i < NOP; i++) {
		ni[i] = deps_pick(&seed, NT, in[i], rnd_below(&seed, 4), NONE);
		for (k = 0; i < NT && i % 4 && k < ni[i]; k++)
			if (in[i][k] == i)
				in[i][k--] = in[i][--ni[i]];
		no[i] = i < NT ? deps_pick(&seed, NT, out[i], 1, i) :
				 deps_pick(&seed, NT, out[i],
					   rnd_below(&seed, 3), NONE);
		snprintf(id, sizeof(id), "o%u", i);
		ASSERT_EQ(i, hyper_plan__graph_add_op(&small, id, 1, in[i],
			  ni[i], out[i], no[i], NULL, &e)) TH_LOG("%s", e.msg);
	}
	for (r = 0; r < COPIES; r++)
		for (i = 0; i < NOP; i++) {
			uint32_t ri[3], ro[2];

			for (k = 0; k < ni[i]; k++)
				ri[k] = r * NT + in[i][k];
			for (k = 0; k < no[i]; k++)
				ro[k] = r * NT + out[i][k];
			snprintf(id, sizeof(id), "o%u.%u", r, i);
			ASSERT_EQ(r * NOP + i, hyper_plan__graph_add_op(&g, id,
				  1, ri, ni[i], ro, no[i], NULL, &e))
				TH_LOG("%s", e.msg);
		}
	/* enough references for the blocks */
	ASSERT_LE((size_t)1 << 20, g.nrefs);
	deps_by_definition(&small, off, indeg, dst, &ne);
	ASSERT_GE(ARRAY_SIZE(dst), ne);
	ASSERT_LT(NOP, ne);
	ASSERT_EQ(0, hyper_plan__graph_deps(&g, &d, &g.mem, &e)) TH_LOG("%s",
									 e.msg);
	EXPECT_NE(NULL, d.blk);
	ASSERT_EQ(COPIES * ne, d.off[g.nop]);
	for (r = 0; r < COPIES; r++) {
		for (i = 0; i < NOP; i++) {
			ASSERT_EQ(r * ne + off[i], d.off[r * NOP + i])
				TH_LOG("copy %u op %u", r, i);
			ASSERT_EQ(indeg[i], d.indeg[r * NOP + i])
				TH_LOG("copy %u op %u", r, i);
		}
		for (x = 0; x < ne; x++)
			ASSERT_EQ(r * NOP + dst[x], d.dst[r * ne + x])
				TH_LOG("copy %u edge %zu", r, x);
	}
	hyper_plan__deps_free(&d);
	EXPECT_EQ(NULL, d.blk);
	hyper_plan__graph_free(&small);
	hyper_plan__graph_free(&g);
}

/*
 * A cycle's message names, between each op and its predecessor, the
 * tensor of the last edge from that predecessor in the successors'
 * order, which report_cycle() finds by walking the edges again: c has
 * edges from a (write after write of y) and from b (write after read of
 * y, then of u), the last one's tensor is u; b has two from a (y, z).
 */
TEST(cycle_names_the_last_edges_tensors)
{
	struct hp_err e = { "" };
	uint32_t x, y, z, u, order[3];
	struct graph g;
	struct deps d;

	ASSERT_EQ(0, hyper_plan__graph_init(&g, "cycle"));
	x = hyper_plan__graph_add_tensor(&g, "x", 8, HYPER_KIND_ACTIVATION,
					 0, &e);
	y = hyper_plan__graph_add_tensor(&g, "y", 8, HYPER_KIND_ACTIVATION,
					 0, &e);
	z = hyper_plan__graph_add_tensor(&g, "z", 8, HYPER_KIND_ACTIVATION,
					 0, &e);
	u = hyper_plan__graph_add_tensor(&g, "u", 8, HYPER_KIND_ACTIVATION,
					 TF_LIVE_IN, &e);
	ASSERT_EQ(0, hyper_plan__graph_add_op(&g, "a", 1, &x, 1,
		  (uint32_t[]){ y, z }, 2, NULL, &e));
	ASSERT_EQ(1, hyper_plan__graph_add_op(&g, "b", 1,
		  (uint32_t[]){ y, z, u }, 3, NULL, 0, NULL, &e));
	ASSERT_EQ(2, hyper_plan__graph_add_op(&g, "c", 1, NULL, 0,
		  (uint32_t[]){ x, u, y }, 3, NULL, &e));
	ASSERT_EQ(0, hyper_plan__graph_deps(&g, &d, &g.mem, &e));
	EXPECT_EQ(-EINVAL, hyper_plan__topo_order(&g, &d, order, &g.mem, &e));
	EXPECT_STREQ("graph: cycle between operators: \"a\" <- (x) <- \"c\" <- (u) <- \"b\" <- (z) <- \"a\"",
		     e.msg);
	hyper_plan__deps_free(&d);
	hyper_plan__graph_free(&g);
}

TEST(graph_identity_hashes_the_decimal_size)
{
	const uint64_t sizes[] = { 0, 1, 9, 10, 99, 100, 4096, 1234567890123,
				   9999999999999999999ULL, UINT64_MAX };
	const char *ids[] = { "", "x", "d3102.L31.q_proj" };
	char num[24];
	uint64_t h;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		for (k = 0; k < ARRAY_SIZE(ids); k++) {
			snprintf(num, sizeof(num), "%" PRIu64, sizes[i]);
			h = hyper_fnv1a(HYPER_FNV_OFFSET, "T", 2);
			h = hyper_fnv1a(h, ids[k], strlen(ids[k]) + 1);
			h = hyper_fnv1a(h, num, strlen(num) + 1);
			h = hyper_fnv1a(h, "weight", 7);
			EXPECT_EQ(h, hyper_graph_tensor_hash(ids[k], sizes[i],
							     "weight"))
				TH_LOG("%s %s", ids[k], num);
		}
	/* and a step's share is its strings' with their NULs */
	h = hyper_fnv1a(HYPER_FNV_OFFSET, "S\0op\0U\0a\0D\0", 12);
	EXPECT_EQ(h, hyper_graph_step_add(hyper_graph_step_add(
			hyper_graph_step_begin("op"), 'U', "a"), 'D', ""));
}

/*
 * The life of an order (passes/life.c) against the gap rules of
 * passes/life.h, asked gap by gap as the policies ask them: the
 * accesses each op lists (for_each_op_tensor()), the timeline and
 * working sets, the residency without offload and its peak, first
 * writes, homes at the start, the dead gaps by the step that ends them,
 * the floor, and the live gaps with a step inside and the values of the
 * tensors not pinned (what plan_init() sizes its candidates and epochs
 * by, before it lists them: checked there too, with tensors pinned).
 * life_build() fills all of these in fused walks of its own; this
 * spells each out the slow way.  Orders: the job's, its
 * refinement, and the initial one reversed (not a valid order, but any
 * permutation has a life), with every third tensor pinned in a second
 * round so that the floor has pinned tensors to count.
 */
static void life_against_rules(struct __test_metadata *_metadata,
			       const struct life *lf)
{
	const struct graph *g = lf->g;
	uint32_t n = lf->n, t, k, x;
	int64_t *d = calloc(n + 1, sizeof(*d));
	int64_t *dp = calloc(n + 1, sizeof(*dp));
	size_t *cnt = calloc(n + 1, sizeof(*cnt));
	size_t *fill = calloc(g->nt, sizeof(*fill));
	uint64_t peak = 0, floor = 0, ws_max = 0;
	uint32_t floor_step = 0, ws_step = 0;
	double t0 = 0;
	int64_t run = 0, pin = 0, a, j;
	size_t i, c, nlive = 0, nvals = 0;

	ASSERT_TRUE(d && dp && cnt && fill);
	for (k = 0; k < n; k++) {
		const struct op *o = &g->op[lf->order[k]];
		uint64_t ws = hyper_plan__op_working_set(g, o);

		ASSERT_EQ(t0, lf->t0[k]);
		t0 += o->compute_ns;
		ASSERT_EQ(ws, lf->ws[k]);
		if (ws > ws_max) {
			ws_max = ws;
			ws_step = k;
		}
		for_each_op_tensor(g, o, t, x) {
			size_t at = lf->acc_off[t] + fill[t]++;
			uint8_t rw = x < o->n_in ? ACC_R : ACC_W;

			if (x < o->n_in)
				for (uint32_t y = 0; y < o->n_out; y++)
					if (op_out(g, o)[y] == t)
						rw |= ACC_W;
			ASSERT_LT(at, lf->acc_off[t + 1]);
			ASSERT_EQ(k, lf->acc_step[at]);
			ASSERT_EQ(rw, lf->acc_rw[at]);
		}
	}
	ASSERT_EQ(t0, lf->t0[n]);
	ASSERT_EQ(ws_max, lf->max_ws);
	ASSERT_EQ(ws_step, lf->max_ws_step);
	ASSERT_EQ(0, lf->acc_off[0]);
	for (t = 0; t < g->nt; t++) {
		uint64_t b = g->t[t].bytes;
		uint32_t fw = n;

		ASSERT_EQ(lf->acc_off[t] + fill[t], lf->acc_off[t + 1]);
		c = nr_accesses(lf, t);
		for (i = 0; i < c; i++)
			if (fw == n && (lf->acc_rw[lf->acc_off[t] + i] & ACC_W))
				fw = lf->acc_step[lf->acc_off[t] + i];
		ASSERT_EQ(fw, lf->first_w[t]);
		if (!(g->t[t].flags & TF_PIN)) {
			nvals++;
			for (i = 0; i < c; i++)
				nvals += !!(lf->acc_rw[lf->acc_off[t] + i] &
					    ACC_W);
			for (i = 0; i <= c; i++) {
				hyper_plan__gap_ends(lf, t, i, &a, &j);
				nlive += hyper_plan__gap_live(lf, t, i) &&
					 a + 1 < j;
			}
		}
		ASSERT_EQ(!c ? (g->t[t].flags & TF_LIVE_IN ? HYPER_HOME_POOL :
				HYPER_HOME_NONE) :
			  hyper_plan__gap_live(lf, t, 0) ? HYPER_HOME_DEVICE :
			  HYPER_HOME_NONE, lf->home0[t]);
		for (i = 0; i <= c; i++) {
			bool live = hyper_plan__gap_live(lf, t, i);

			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (i < c) {
				d[j] += b;
				d[j + 1] -= b;
			}
			if (live && a + 1 < j) {
				d[a + 1] += b;
				d[j] -= b;
				if (g->t[t].flags & TF_PIN) {
					dp[a + 1] += b;
					dp[j] -= b;
				}
			}
			if (i && !live)
				cnt[a]++;
		}
	}
	for (k = 0; k < n; k++) {
		run += d[k];
		pin += dp[k];
		ASSERT_EQ((uint64_t)run, lf->base[k]);
		if ((uint64_t)run > peak)
			peak = run;
		if (lf->ws[k] + pin > floor) {
			floor = lf->ws[k] + pin;
			floor_step = k;
		}
	}
	ASSERT_EQ(nlive, lf->nlive);
	ASSERT_EQ(nvals, lf->nvals);
	ASSERT_EQ(peak, lf->peak0);
	ASSERT_EQ(floor, lf->floor);
	ASSERT_EQ(floor_step, lf->floor_step);
	/* each step's dead gaps: its tensors, ascending */
	ASSERT_EQ(0, lf->dead_off[0]);
	for (k = 0; k < n; k++) {
		ASSERT_EQ(cnt[k], lf->dead_off[k + 1] - lf->dead_off[k]);
		for (i = lf->dead_off[k]; i < lf->dead_off[k + 1]; i++) {
			uint32_t dt = lf->dead_t[i];
			size_t q;

			if (i > lf->dead_off[k]) {
				ASSERT_LT(lf->dead_t[i - 1], dt);
			}
			/* dt has an access at step k with a dead gap after */
			c = nr_accesses(lf, dt);
			for (q = 0; q < c; q++)
				if (lf->acc_step[lf->acc_off[dt] + q] == k)
					break;
			ASSERT_LT(q, c);
			ASSERT_FALSE(hyper_plan__gap_live(lf, dt, q + 1));
		}
	}
	free(d);
	free(dp);
	free(cnt);
	free(fill);
}

TEST(life_matches_the_gap_rules)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 11 }, { NULL, NULL, 1200, 12 },
		{ "llama2-7b", "infer", 0, 1 }, { "llama2-7b", "train", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		for (int round = 0; round < 2; round++) {
			struct job j = { 0 };
			struct hp_mem mem = { 0 };
			struct life rev;
			struct hp_err e;
			uint32_t *order;

			ASSERT_EQ(0, case_job(&j, &cases[i],
					      &hyper_plan__profile_table[0], &e))
				TH_LOG("%s", e.msg);
			if (round) {
				for (uint32_t t = 0; t < j.g.nt; t += 3)
					j.g.t[t].flags |= TF_PIN;
				hyper_plan__life_free(&j.lf);
				ASSERT_EQ(0, hyper_plan__life_build(&j.lf,
						&j.g, j.order, &mem));
			}
			life_against_rules(_metadata, &j.lf);
			if (round) {
				struct plan_ctx pc;

				ASSERT_EQ(0, hyper_plan__plan_init(&pc, &j.lf,
								   &j.p, &mem));
				check_index(_metadata, &pc);
				hyper_plan__plan_free(&pc);
			}
			if (j.has_ref && !round)
				life_against_rules(_metadata, &j.lf_ref);
			order = malloc(j.g.nop * sizeof(*order));
			ASSERT_NE(NULL, order);
			for (uint32_t k = 0; k < j.g.nop; k++)
				order[k] = j.order[j.g.nop - 1 - k];
			ASSERT_EQ(0, hyper_plan__life_build(&rev, &j.g, order,
							    &mem));
			life_against_rules(_metadata, &rev);
			hyper_plan__life_free(&rev);
			free(order);
			hyper_plan__job_free(&j);
		}
	}
}

/*
 * The distance baseline's ranking (policies/policy_distance.c) against
 * its definition: live tensors not pinned, with a longest live gap of 2
 * steps or more, longest first; equal gaps by first access, then by
 * tensor, and each such group taken in bit-reversed order.  Sorted here
 * with qsort() on the three keys, as it was before the counting sorts.
 */
struct rank_ref {
	uint32_t t;
	int64_t gap;
	uint32_t first;
};

static int rank_ref_cmp(const void *pa, const void *pb)
{
	const struct rank_ref *a = pa, *b = pb;

	if (a->gap != b->gap)
		return a->gap > b->gap ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->t < b->t ? -1 : 1;
}

static void rank_against_sort(struct __test_metadata *_metadata,
			      const struct life *lf)
{
	const struct graph *g = lf->g;
	struct rank_ref *r = malloc((g->nt + 1) * sizeof(*r));
	struct hp_mem mem = { 0 };
	struct distance_ctx d;
	uint32_t n = 0, at = 0, i, end;

	ASSERT_NE(NULL, r);
	for (uint32_t t = 0; t < g->nt; t++) {
		int64_t a, j, best = 0;

		for (size_t q = 0; !(g->t[t].flags & TF_PIN) &&
		     q <= nr_accesses(lf, t); q++) {
			hyper_plan__gap_ends(lf, t, q, &a, &j);
			if (hyper_plan__gap_live(lf, t, q) && j - a > best)
				best = j - a;
		}
		if (best > 1)
			r[n++] = (struct rank_ref){ t, best,
				lf->acc_step[lf->acc_off[t]] };
	}
	qsort(r, n, sizeof(*r), rank_ref_cmp);
	ASSERT_EQ(0, hyper_plan__distance_init(&d, lf, &mem));
	ASSERT_EQ(n, d.nrank);
	for (i = 0; i < n; i = end) {
		uint32_t bits = 0, m;

		for (end = i + 1; end < n && r[end].gap == r[i].gap; end++)
			;
		for (m = end - i; (1U << bits) < m; bits++)
			;
		for (uint32_t x = 0; x < (1U << bits); x++) {
			uint32_t y = 0;

			for (uint32_t b = 0; b < bits; b++)
				y |= ((x >> b) & 1) << (bits - 1 - b);
			if (y < m) {
				ASSERT_EQ(r[i + y].t, d.rank[at++]);
			}
		}
	}
	ASSERT_EQ(n, at);
	hyper_plan__distance_free(&d);
	free(r);
}

TEST(distance_ranks_as_sorted)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 21 }, { NULL, NULL, 1500, 22 },
		{ "llama2-7b", "infer", 0, 1 }, { "llama2-7b", "train", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = { 0 };
		struct hp_err e;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		rank_against_sort(_metadata, &j.lf);
		if (j.has_ref)
			rank_against_sort(_metadata, &j.lf_ref);
		hyper_plan__job_free(&j);
	}
}

/*
 * The initial order (passes/order.c) against Kahn's algorithm spelled
 * out: each time, the least op whose predecessors have all run.  On
 * graphs listed out of order (ops of a generated graph moved earlier at
 * random), so that ops wait for writers listed after them and the order
 * is not the listed one; some such listings have cycles, which both
 * must find.
 */
static void topo_against_kahn(struct __test_metadata *_metadata,
			      const struct graph *src, uint64_t seed,
			      uint32_t *reordered)
{
	uint32_t nop = src->nop, *perm = malloc(nop * sizeof(*perm));
	uint32_t *order = malloc(nop * sizeof(*order));
	uint32_t *indeg = malloc(nop * sizeof(*indeg)), i, k, n = 0;
	uint8_t *done = calloc(nop, 1);
	struct deps d;
	struct hp_err e;
	struct graph g;
	int ret;

	ASSERT_TRUE(perm && order && indeg && done);
	for (i = 0; i < nop; i++)
		perm[i] = i;
	for (i = 1; seed && i < nop; i++) {
		uint32_t to, x = perm[i];

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if ((seed >> 33) % 8)
			continue;
		to = i - (uint32_t)((seed >> 40) % (i < 40 ? i : 40)) - 1;
		memmove(perm + to + 1, perm + to, (i - to) * sizeof(*perm));
		perm[to] = x;
	}
	ASSERT_EQ(0, hyper_plan__graph_init(&g, "moved"));
	for (i = 0; i < src->nt; i++)
		ASSERT_EQ(i, hyper_plan__graph_add_tensor(&g, src->t[i].id,
			  src->t[i].bytes, src->t[i].kind, src->t[i].flags,
			  &e));
	for (i = 0; i < nop; i++) {
		const struct op *o = &src->op[perm[i]];

		ASSERT_EQ(i, hyper_plan__graph_add_op(&g, o->id, o->compute_ns,
			  op_in(src, o), o->n_in, op_out(src, o), o->n_out,
			  NULL, &e)) TH_LOG("%s", e.msg);
	}
	ret = hyper_plan__graph_deps(&g, &d, &g.mem, &e);
	if (ret) {
		/* a read nothing writes first: a listing the test cannot use */
		ASSERT_EQ(-EINVAL, ret);
		goto out;
	}
	memcpy(indeg, d.indeg, nop * sizeof(*indeg));
	for (;;) {
		for (i = 0; i < nop && (done[i] || indeg[i]); i++)
			;
		if (i == nop)
			break;
		done[i] = 1;
		order[n++] = i;
		for (size_t q = d.off[i]; q < d.off[i + 1]; q++)
			indeg[d.dst[q]]--;
	}
	ret = hyper_plan__topo_order(&g, &d, indeg, &g.mem, &e);
	if (n < nop) {
		ASSERT_EQ(-EINVAL, ret);
	} else {
		ASSERT_EQ(0, ret) TH_LOG("%s", e.msg);
		for (k = 0; k < nop; k++)
			ASSERT_EQ(order[k], indeg[k]);
		for (k = 0; k < nop && order[k] == k; k++)
			;
		*reordered += k < nop;
	}
	hyper_plan__deps_free(&d);
out:
	hyper_plan__graph_free(&g);
	free(perm);
	free(order);
	free(indeg);
	free(done);
}

TEST(initial_order_is_kahns_least_first)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 31 }, { NULL, NULL, 1500, 32 },
		{ "llama2-7b", "infer", 0, 1 }, { "llama2-7b", "train", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint32_t reordered = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = { 0 };
		struct hp_err e;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		for (uint64_t s = 1; s <= 6; s++)
			topo_against_kahn(_metadata, &j.g, s * 7919 + i,
					  &reordered);
		/* and as listed: the listed order */
		topo_against_kahn(_metadata, &j.g, 0, &reordered);
		hyper_plan__job_free(&j);
	}
	/* ops waited for writers listed after them, and the order says so */
	ASSERT_LT(5, reordered);
}

/* The fetch floor as sim.h states it: every step's sum, in step order. */
static double floor_by_every_step(const struct life *lf,
				  const struct profile *p,
				  const struct evict *ev, size_t nev)
{
	double *busy = calloc(lf->n + 1, sizeof(*busy)), end = 0;
	uint32_t k;

	for (size_t i = 0; i < nev; i++)
		if (ev[i].j < (int32_t)lf->n)
			busy[ev[i].fetch_step] += h2d_ns(p, lf->g->t[ev[i].t].bytes);
	for (k = 0; k < lf->n; k++)
		if (busy[k] > 0)
			end = hyper_plan__sim_floor_step(end, lf->t0[k], busy[k]);
	free(busy);
	return end;
}

/*
 * The floor visits only the steps whose bits say they prefetch, and
 * zeroes each with its bit.  Random probes over orders of 1 to 300
 * steps (words cut anywhere), one buffer for all, grown and then used
 * for fewer steps than it has room for, each probe the floor of every
 * step's sum, to the bit: a bit on the wrong step, or one left set or a
 * sum left behind for the next probe, gives another floor.
 */
TEST(fetch_floor_by_its_bits_is_every_steps)
{
	static const uint32_t steps[] = { 1, 63, 64, 65, 300, 7, 128, 129 };
	struct tensor t[40];
	struct graph g = { .t = t, .nt = ARRAY_SIZE(t) };
	struct hp_simbuf buf = { 0 };
	struct hp_mem mem = { 0 };
	struct evict ev[64];
	double t0[301], floor_ns, alone;
	uint64_t x = 88172645463325252ULL;
	size_t i, nev, round;
	struct life lf;
	uint32_t n;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		t[i] = (struct tensor){ .bytes = 1000 + i * 977 % 5000 };
	for (round = 0; round < 400; round++) {
		n = steps[round / 50];
		lf = (struct life){ .g = &g, .n = n, .t0 = t0 };
		for (i = 0; i <= n; i++)
			t0[i] = i * 1500.0 + (i % 7) * 0.25;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		nev = (x >> 33) % ARRAY_SIZE(ev);
		for (i = 0; i < nev; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			ev[i] = (struct evict){
				.t = (uint32_t)((x >> 20) % ARRAY_SIZE(t)),
				/* one in eight never fetched back */
				.j = (x >> 40) % 8 ? (int32_t)n - 1 : (int32_t)n,
				.fetch_step = (int32_t)((x >> 44) % n),
			};
		}
		ASSERT_EQ(0, hyper_plan__sim_fetch_floor_in(&lf, &gbps, ev, nev,
							    &buf, &mem,
							    &floor_ns));
		EXPECT_EQ(floor_by_every_step(&lf, &gbps, ev, nev), floor_ns)
			TH_LOG("round %zu: %zu evictions over %u steps", round,
			       nev, n);
		ASSERT_EQ(0, hyper_plan__sim_fetch_floor(&lf, &gbps, ev, nev,
							 &mem, &alone));
		EXPECT_EQ(alone, floor_ns);
	}
	EXPECT_EQ(300, buf.nbusy);
	hyper_plan__simbuf_free(&buf);
}

/*
 * A tracked tensor's dead detach in the first slot of a run without
 * items (passes/sched.c, bare()): x, defined by a and last used by b,
 * is freed after b, a slot with no item of its own, and a wrong
 * eviction then prefetches it for c with no store before.  The emitter
 * must have applied that detach, as the replay of every tensor does:
 * the prefetch is then refused for want of a pool copy, not as one of a
 * resident tensor.  Both ways say the same, and say that.
 */
TEST(tracked_dead_detach_after_a_use_is_applied)
{
	static const uint32_t order[] = { 0, 1, 2 };
	const struct evict ev = { .t = 1, .a = 1, .j = 2, .store_slot = -1,
				  .detach_slot = -1, .fetch_step = 2 };
	struct hp_err ea = { "" }, eb = { "" };
	struct hp_mem mem = { 0 };
	struct life lf, whole;
	struct sched a, b;
	uint32_t y = 2, z, w = 0;
	struct graph g;

	two_ops(&g, 1000);
	z = hyper_plan__graph_add_tensor(&g, "z", 1000, HYPER_KIND_ACTIVATION,
					 TF_LIVE_OUT, NULL);
	hyper_plan__graph_add_op(&g, "c", 1000, &y, 1, &z, 1, NULL, NULL);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, lf.ndirty);
	/* every tensor replayed: a dirty list naming w, which is not evicted */
	whole = lf;
	whole.dirty_t = &w;
	whole.ndirty = 1;
	EXPECT_EQ(-EINVAL, hyper_plan__sched_build(&a, &lf, &ev, 1, &mem, &ea));
	EXPECT_EQ(-EINVAL, hyper_plan__sched_build(&b, &whole, &ev, 1, &mem,
						   &eb));
	EXPECT_STREQ(eb.msg, ea.msg);
	EXPECT_NE(NULL, strstr(ea.msg, hyper_residency_reason(HYPER_RES_NO_POOL)))
		TH_LOG("%s", ea.msg);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

/*
 * The candidate the sweep prefetches for a bucket ahead of its steps
 * (passes/plan.h: hyper_plan__ahead_cand()) is the one the bucket's
 * first refresh reads: every bucket whose use the sweep has not reached
 * is still at its first place.  Checked after sweeps at random aims and
 * links on random graphs and a decode, most of them failing part way,
 * with buckets ahead of where they stopped.
 */
static void ahead_at_first(struct __test_metadata *_metadata,
			   const struct plan_ctx *pc, uint64_t *ahead)
{
	for (uint32_t b = 0; b < pc->nb; b++) {
		if (pc->b_j[b] > pc->swept)
			continue;
		ASSERT_EQ(pc->idx[pc->cur[b]], hyper_plan__ahead_cand(pc, b))
			TH_LOG("bucket %u", b);
		(*ahead)++;
	}
}

TEST(sweep_prefetches_the_candidates_it_reads)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 21 }, { NULL, NULL, 1000, 22 },
		{ NULL, NULL, 2000, 23 }, { "llama2-7b", "infer", 0, 1 },
	};
	uint64_t ahead = 0;

	random_sweeps_both(_metadata, cases, ARRAY_SIZE(cases),
			   0x6a09e667f3bcc909ULL, ahead_at_first, &ahead);
	EXPECT_LT(1000, ahead);
}

/*
 * A calendar with one use (passes/calendar.h: CAL_LATEST for the
 * prefetches, CAL_RUNS for the stores) against one with both, the same
 * takes on each: the same answers, time left and tree, through partial
 * restores and full resets, on random capacities with steps that have
 * no time.  Each asks only its own use.
 */
static void cal_same(struct __test_metadata *_metadata,
		     const struct calendar *one, const struct calendar *all)
{
	ASSERT_EQ(0, memcmp(one->cap, all->cap, all->n * sizeof(*all->cap)));
	ASSERT_EQ(0, memcmp(one->fen, all->fen,
			    ((size_t)all->n + 1) * sizeof(*all->fen)));
	ASSERT_EQ(all->low, one->low);
}

/* One take of @amt in [lo, hi] on each, its use's way; 1 if it took. */
static int cal_take_both(struct __test_metadata *_metadata,
			 struct calendar *one, struct calendar *all,
			 unsigned int use, uint32_t lo, uint32_t hi,
			 double amt)
{
	uint32_t f1 = 0, l1 = 0, f2 = 0, l2 = 0, got;
	int r1, r2;

	if (use == CAL_LATEST) {
		if (hyper_plan__cal_avail(all, lo, hi) < amt)
			return 0;
		got = hyper_plan__cal_take_latest(all, lo, hi, amt);
		EXPECT_EQ(got, hyper_plan__cal_take_latest(one, lo, hi, amt));
		return 1;
	}
	EXPECT_EQ(hyper_plan__cal_next(all, lo),
		  hyper_plan__cal_next(one, lo));
	r1 = hyper_plan__cal_find_run(one, lo, hi, amt, &f1, &l1);
	r2 = hyper_plan__cal_find_run(all, lo, hi, amt, &f2, &l2);
	EXPECT_EQ(r2, r1);
	EXPECT_EQ(f2, f1);
	EXPECT_EQ(l2, l1);
	if (r1 || r2)
		return 0;
	hyper_plan__cal_take_run(one, f1, l1, amt);
	hyper_plan__cal_take_run(all, f2, l2, amt);
	return 1;
}

/*
 * Two sets of random whole capacities: @cap with a fifth of the steps
 * without time, @cap2 with every step's time below 32.
 */
static void cal_caps(double *cap, double *cap2, uint32_t n, uint64_t *x)
{
	for (uint32_t k = 0; k < n; k++) {
		*x = plan_xorshift(*x);
		cap[k] = *x % 5 ? (double)(*x >> 40 & 63) : 0;
		cap2[k] = (double)(*x >> 20 & 31);
	}
}

TEST(calendar_of_one_use_answers_as_one_of_both)
{
	enum { N = 300 };
	uint64_t x = 0x510e527fade682d1ULL, found = 0;
	double cap[N], cap2[N];

	cal_caps(cap, cap2, N, &x);
	for (unsigned int use = CAL_LATEST; use <= CAL_RUNS; use++) {
		struct calendar one, all;

		ASSERT_EQ(0, hyper_plan__cal_init(&one, N, use,
						  &(struct hp_mem){ 0 }));
		ASSERT_EQ(0, hyper_plan__cal_init(&all, N, CAL_ALL,
						  &(struct hp_mem){ 0 }));
		for (int round = 0; round < 40; round++) {
			const double *c0 = round % 7 ? cap : cap2;
			double scale = round % 5 ? 1.0 : 1.3;

			hyper_plan__cal_restore(&one, c0, scale);
			hyper_plan__cal_restore(&all, c0, scale);
			cal_same(_metadata, &one, &all);
			for (int t = 0; t < 20 + round * 10; t++) {
				uint32_t lo, hi;

				x = plan_xorshift(x);
				lo = x % N;
				hi = lo + (x >> 16) % (N - lo);
				found += cal_take_both(_metadata, &one, &all,
						       use, lo, hi,
						       (x >> 32 & 127) / 2.0);
				cal_same(_metadata, &one, &all);
			}
		}
		hyper_plan__cal_free(&one);
		hyper_plan__cal_free(&all);
	}
	EXPECT_LT(1000, found);
}

/*
 * Two calendars sharing one base (hyper_plan__cal_init_twin()) against
 * two alone, the same restores, resets and takes on each: the same
 * time left and tree, bit for bit, and the sums and reaches of a plain
 * scan of the time left (whole capacities and halves: every sum exact).
 * Now and then only one of the twins is restored on another scale, and
 * the other's restore after must not take that build for its own.
 */
static void cal_plain(struct __test_metadata *_metadata,
		      const struct calendar *c, uint64_t *x)
{
	uint32_t lo, hi, k;
	double sum = 0, want;

	*x = plan_xorshift(*x);
	lo = *x % c->n;
	hi = lo + (*x >> 16) % (c->n - lo);
	for (k = lo; k <= hi; k++)
		sum += c->cap[k];
	ASSERT_EQ(sum, hyper_plan__cal_avail(c, lo, hi));
	want = (*x >> 32) % 64 / 2.0;
	for (k = 0, sum = 0; k < c->n; k++) {
		sum += c->cap[k];
		if (sum >= want)
			break;
	}
	ASSERT_EQ(k, hyper_plan__cal_reach_sum(c, want)) TH_LOG("want %g", want);
}

TEST(calendar_twins_share_their_base_exactly)
{
	enum { N = 257 };
	uint64_t x = 0x1f83d9abfb41bd6bULL, found = 0;
	double cap[N], cap2[N];
	struct calendar h, d, h1, d1;
	struct hp_mem mem = { 0 };

	cal_caps(cap, cap2, N, &x);
	ASSERT_EQ(0, hyper_plan__cal_init(&h, N, CAL_LATEST, &mem));
	ASSERT_EQ(0, hyper_plan__cal_init_twin(&d, &h, CAL_RUNS, &mem));
	ASSERT_EQ(0, hyper_plan__cal_init(&h1, N, CAL_LATEST, &mem));
	ASSERT_EQ(0, hyper_plan__cal_init(&d1, N, CAL_RUNS, &mem));
	ASSERT_EQ(h.base, d.base);
	for (int round = 0; round < 60; round++) {
		const double *c0 = round % 7 ? cap : cap2;
		double scale = round % 5 ? 1.0 : 1.5;

		if (round % 11 == 3) {	/* h elsewhere, d on as it was */
			hyper_plan__cal_restore(&h, cap2, 0.5);
			hyper_plan__cal_restore(&h1, cap2, 0.5);
			hyper_plan__cal_restore(&d, d1.cap0, d1.scale);
			hyper_plan__cal_restore(&d1, d1.cap0, d1.scale);
			cal_same(_metadata, &d, &d1);
		}
		if (round % 13 == 6) {
			hyper_plan__cal_reset(&h, c0, scale);
			hyper_plan__cal_reset(&h1, c0, scale);
		}
		hyper_plan__cal_restore(&h, c0, scale);
		hyper_plan__cal_restore(&h1, c0, scale);
		if (round % 17 == 9) {		/* d alone, elsewhere */
			hyper_plan__cal_restore(&d, cap, 2.0);
			hyper_plan__cal_restore(&d1, cap, 2.0);
		}
		hyper_plan__cal_restore(&d, c0, scale);
		hyper_plan__cal_restore(&d1, c0, scale);
		cal_same(_metadata, &h, &h1);
		cal_same(_metadata, &d, &d1);
		for (int t = 0; t < 10 + round * 4; t++) {
			uint32_t lo, hi;
			double amt;

			x = plan_xorshift(x);
			lo = x % N;
			hi = lo + (x >> 16) % (N - lo);
			amt = (x >> 32 & 127) / 2.0;
			found += cal_take_both(_metadata, &h, &h1, CAL_LATEST,
					       lo, hi, amt);
			found += cal_take_both(_metadata, &d, &d1, CAL_RUNS,
					       lo, hi, amt);
			cal_same(_metadata, &h, &h1);
			cal_same(_metadata, &d, &d1);
			cal_plain(_metadata, &h, &x);
			cal_plain(_metadata, &d, &x);
		}
	}
	hyper_plan__cal_free(&h);
	EXPECT_EQ(1, d.base->refs);
	hyper_plan__cal_free(&d);
	hyper_plan__cal_free(&h1);
	hyper_plan__cal_free(&d1);
	EXPECT_LT(1000, found);
}

/*
 * The graph's identity spelled out byte by byte, as
 * Documentation/schedule-format.md defines it: each string with its NUL,
 * through hyper_fnv1a() one byte at a time.
 */
static uint64_t id_ref_str(uint64_t h, const char *s)
{
	return hyper_fnv1a(h, s, strlen(s) + 1);
}

static void id_ref(const struct graph *g, char *hash)
{
	uint64_t ts = 0, ss = 0, h;
	char num[24];

	for (size_t t = 0; t < g->nt; t++) {
		snprintf(num, sizeof(num), "%" PRIu64, g->t[t].bytes);
		h = id_ref_str(HYPER_FNV_OFFSET, "T");
		h = id_ref_str(h, g->t[t].id);
		h = id_ref_str(h, num);
		ts += id_ref_str(h, hyper_kind_name(g->t[t].kind));
	}
	for (size_t i = 0; i < g->nop; i++) {
		const struct op *o = &g->op[i];

		h = id_ref_str(id_ref_str(HYPER_FNV_OFFSET, "S"), o->id);
		for (uint32_t k = 0; k < o->n_in; k++)
			h = id_ref_str(id_ref_str(h, "U"),
				       g->t[op_in(g, o)[k]].id);
		for (uint32_t k = 0; k < o->n_out; k++)
			h = id_ref_str(id_ref_str(h, "D"),
				       g->t[op_out(g, o)[k]].id);
		ss += h;
	}
	hyper_graph_hash(hash, ts, g->nt, ss, g->nop);
}

/*
 * The identity hashes ids from their lengths, eight bytes to a round
 * with the rest as four, two and one, the role and its NUL as one
 * multiply, two steps side by side, and measures each tensor's id once:
 * the same value as the definition on graphs with ids of every length
 * from 1 to 127 bytes (every tail), sizes of every digit count, every
 * kind, ops listing 0 to 12 tensors beside ops listing other counts, an
 * even and an odd number of ops, and ids of 254, 255 and 300 bytes put
 * in by hand with no length (struct tensor's @id_len 0: measured where
 * used).
 */
TEST(graph_identity_is_its_definition_byte_by_byte)
{
	static const size_t far[] = { 254, 255, 300 };
	char id[HP_MAX_ID + 1], hash[HYPER_GRAPH_HASH_LEN];
	char want[HYPER_GRAPH_HASH_LEN], *longs[3];
	const char *keep[3];
	uint64_t x = 0x9b05688c2b3e6c1fULL;
	uint32_t refs[12];
	struct hp_err e;
	struct graph g;

	/* the helpers themselves, at every tail and round */
	for (size_t len = 0; len < 40; len++) {
		for (size_t i = 0; i < len; i++)
			id[i] = (char)(' ' + (i * 7 + len) % 90);
		id[len] = '\0';
		EXPECT_EQ(hyper_fnv1a(x, id, len + 1),
			  hyper_fnv1a_strn(x, id, len)) TH_LOG("len %zu", len);
		EXPECT_EQ(hyper_fnv1a(hyper_fnv1a(x, "D", 2), id, len + 1),
			  hyper_graph_step_add_len(x, 'D', id, len));
		EXPECT_EQ(hyper_fnv1a(hyper_fnv1a(x, "U", 2), id, len + 1),
			  hyper_graph_step_add(x, 'U', id));
	}
	/* two side by side, of every pair of lengths */
	for (size_t n0 = 0; n0 < 24; n0++)
		for (size_t n1 = 0; n1 < 24; n1++) {
			const char *s1 = id + 39 - n1;
			uint64_t h[2] = { x, ~x };

			hyper_graph_step_add2(h, 'U', id + 39 - n0, n0,
					      'D', s1, n1);
			EXPECT_EQ(hyper_graph_step_add_len(x, 'U', id + 39 - n0,
							   n0), h[0]);
			EXPECT_EQ(hyper_graph_step_add_len(~x, 'D', s1, n1),
				  h[1]) TH_LOG("lengths %zu, %zu", n0, n1);
		}
	for (int round = 0; round < 6; round++) {
		uint32_t nt = 150 + 37 * round, nop = 40 + 29 * round;

		ASSERT_EQ(0, hyper_plan__graph_init(&g, "identity"));
		for (uint32_t t = 0; t < nt; t++) {
			size_t len = 1 + t % HP_MAX_ID;
			uint64_t bytes;

			for (size_t i = 0; i < len; i++) {
				x = plan_xorshift(x);
				id[i] = (char)('!' + x % 94);
			}
			/* distinct: the tensor's number up front */
			id[0] = (char)('!' + t % 94);
			if (len > 1)
				id[1] = (char)('!' + t / 94);
			id[len] = '\0';
			bytes = 1 + (x >> 16) % (((uint64_t)1 << (4 + t % 45)) - 1);
			ASSERT_EQ(t, hyper_plan__graph_add_tensor(&g, id, bytes,
					1 + (uint32_t)(x >> 8) % (HYPER_KIND_NR - 1),
					0, &e)) TH_LOG("%s", e.msg);
		}
		for (uint32_t i = 0; i < nop; i++) {
			uint32_t n = (uint32_t)(x >> 20) % 13, nin;

			x = plan_xorshift(x);
			nin = n ? (uint32_t)(x >> 30) % (n + 1) : 0;
			/* distinct: 11 apart, nt over 13 times 11 */
			for (uint32_t k = 0; k < n; k++)
				refs[k] = ((uint32_t)(x >> 3) % nt + 11 * k) % nt;
			snprintf(id, sizeof(id), "op%u.%.*s", i,
				 (int)(i * 5 % 90), g.t[i % nt].id);
			ASSERT_EQ(i, hyper_plan__graph_add_op(&g, id, 1, refs,
					nin, refs + nin, n - nin, NULL, &e))
				TH_LOG("%s", e.msg);
		}
		hyper_plan__graph_identity(&g, hash);
		id_ref(&g, want);
		EXPECT_STREQ(want, hash) TH_LOG("round %d", round);
		for (int k = 0; k < 3; k++) {
			longs[k] = malloc(far[k] + 1);
			ASSERT_NE(NULL, longs[k]);
			memset(longs[k], 'k' + k + round, far[k]);
			longs[k][far[k]] = '\0';
			keep[k] = g.t[k * 40].id;
			g.t[k * 40].id = longs[k];
			g.t[k * 40].id_len = 0;	/* not known: measured */
		}
		hyper_plan__graph_identity(&g, hash);
		id_ref(&g, want);
		EXPECT_STREQ(want, hash) TH_LOG("round %d, long ids", round);
		for (int k = 0; k < 3; k++) {
			g.t[k * 40].id = keep[k];
			g.t[k * 40].id_len = (uint8_t)strlen(keep[k]);
			free(longs[k]);
		}
		hyper_plan__graph_free(&g);
	}
}

/*
 * The emitter's items in one order whatever the order of the evictions
 * (passes/sched.c, sort_items()): the radix sort keyed by slot and
 * class leaves most slots in order, which are then only checked, and
 * the others are sorted.  Distance and greedy evictions on random graphs
 * and models, emitted as given (most slots in order), reversed (their
 * tensors in the opposite order in every class) and rotated, through
 * the probes' buffer and alone: the same homes, slots and cops, or the
 * same error.  And each run as a search runs it (sim_in_bulk_same()).
 */
static void emit_same(struct __test_metadata *_metadata,
		      const struct sched *a, int ra, const struct hp_err *ea,
		      const struct sched *b, int rb, const struct hp_err *eb)
{
	ASSERT_EQ(ra, rb) TH_LOG("%s / %s", ea->msg, eb->msg);
	EXPECT_STREQ(ea->msg, eb->msg);
	if (ra)
		return;
	ASSERT_EQ(a->ncops, b->ncops);
	EXPECT_EQ(0, memcmp(a->home, b->home, a->g->nt));
	EXPECT_EQ(0, memcmp(a->slot_off, b->slot_off,
			    (2 * (size_t)a->n + 1) * sizeof(*a->slot_off)));
	EXPECT_EQ(0, memcmp(a->cops, b->cops, a->ncops * sizeof(*a->cops)));
}

/* @ev emitted through @buf (alone when NULL) against @a, built alone */
static void emit_in_same(struct __test_metadata *_metadata,
			 const struct sched *a, int ra, const struct hp_err *ea,
			 const struct life *lf, const struct evict *ev,
			 size_t nev, struct hp_emitbuf *buf, struct hp_mem *mem)
{
	struct hp_err eb = { "" };
	struct sched b;
	int rb;

	rb = hyper_plan__sched_start_in(&b, lf, ev, nev, buf, mem, &eb);
	if (!rb)
		rb = hyper_plan__sched_emit(&b, b.n, &eb);
	emit_same(_metadata, a, ra, ea, &b, rb, &eb);
	hyper_plan__sched_free(&b);
}

static void emit_any_order(struct __test_metadata *_metadata,
			   const struct life *lf, const struct evict *ev,
			   size_t nev, struct hp_emitbuf *buf)
{
	struct evict *w = malloc((nev + 1) * sizeof(*w));
	struct hp_err ea = { "" };
	struct hp_mem mem = { 0 };
	struct sched a;
	int ra;

	ASSERT_NE(NULL, w);
	ra = hyper_plan__sched_build(&a, lf, ev, nev, &mem, &ea);
	for (int how = 0; how < 3; how++) {
		for (size_t i = 0; i < nev; i++)
			w[i] = how == 0 ? ev[i] :
			       how == 1 ? ev[nev - 1 - i] :
			       ev[(i + nev / 3) % nev];
		emit_in_same(_metadata, &a, ra, &ea, lf, w, nev,
			     how == 2 ? NULL : buf, &mem);
	}
	if (!ra)
		hyper_plan__sched_free(&a);
	free(w);
}

/*
 * The simulator's walk of the busy steps (sim/sim.c, quiet_until()):
 * @ev run as a search runs it, emitted as the run goes through @buf,
 * its quiet steps in bulk, against the schedule built whole and run
 * step by step with no buffer.  The same figures.
 */
static void sim_in_bulk_same(struct __test_metadata *_metadata,
			     const struct job *j, const struct evict *ev,
			     size_t nev, struct hp_simbuf *buf)
{
	struct hp_err ea = { "" }, eb = { "" };
	struct sim_result ra, rb;
	struct hp_mem mem = { 0 };
	struct sched a, b;
	int xa, xb;

	ASSERT_EQ(0, hyper_plan__sched_start_in(&a, &j->lf, ev, nev,
						&buf->emit, &mem, &ea));
	if (hyper_plan__sched_build(&b, &j->lf, ev, nev, &mem, &eb)) {
		hyper_plan__sched_free(&a);
		return;
	}
	xa = hyper_plan__simulate_in(&a, &j->p, NULL, &ra, buf, &mem, &ea);
	xb = hyper_plan__simulate(&b, &j->p, NULL, &rb, &mem, &eb);
	ASSERT_EQ(xb, xa) TH_LOG("%s / %s", ea.msg, eb.msg);
	EXPECT_EQ(rb.peak, ra.peak);
	EXPECT_EQ(rb.stall_ns, ra.stall_ns);
	EXPECT_EQ(rb.makespan_ns, ra.makespan_ns);
	EXPECT_EQ(rb.compute_ns, ra.compute_ns);
	EXPECT_EQ(rb.h2d_bytes, ra.h2d_bytes);
	EXPECT_EQ(rb.d2h_bytes, ra.d2h_bytes);
	hyper_plan__sched_free(&a);
	hyper_plan__sched_free(&b);
}

/*
 * @fn on distance evictions (@rounds counts of three distances) and
 * greedy ones of @cases, random graphs and models, the runs of each
 * graph in one buffer, as a search's.  @ctx: @fn's.
 */
typedef void probe_fn(struct __test_metadata *_metadata, const struct job *j,
		      const struct evict *ev, size_t nev,
		      struct hp_simbuf *buf, unsigned int i, void *ctx);

static void each_probe(struct __test_metadata *_metadata,
		       const struct plan_case *cases, size_t ncases,
		       unsigned int rounds, probe_fn *fn, void *ctx)
{
	static const uint32_t dist[] = { 1, 4, 32 };
	struct distance_params dp = { 0 };
	struct hp_err e;
	struct job j;

	for (size_t c = 0; c < ncases; c++) {
		struct hp_simbuf sb = { 0 };
		struct hp_mem mem = { 0 };
		struct greedy_ctx gc = { .lf = &j.lf, .mem = &mem };
		struct distance_ctx d;

		j = (struct job){ 0 };
		ASSERT_EQ(0, case_job(&j, &cases[c],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__distance_init(&d, &j.lf, &mem));
		for (unsigned int i = 0; i < ARRAY_SIZE(dist) * rounds; i++) {
			dp.prefetch = dist[i % ARRAY_SIZE(dist)];
			dp.count = d.nrank >> (i / ARRAY_SIZE(dist) * 2);
			ASSERT_EQ(0, hyper_plan__distance_evicts(&d, &dp));
			fn(_metadata, &j, d.ev, d.nev, &sb, i, ctx);
		}
		for (unsigned int i = 0; i < ARRAY_SIZE(dist); i++) {
			uint64_t b = j.lf.max_ws +
				     (j.lf.peak0 - j.lf.max_ws) / (2 + i);

			ASSERT_EQ(0, hyper_plan__greedy_evicts(&gc, b, dist[i]));
			fn(_metadata, &j, gc.ev, gc.nev, &sb, i, ctx);
		}
		hyper_plan__simbuf_free(&sb);
		hyper_plan__distance_free(&d);
		hyper_plan__greedy_free(&gc);
		hyper_plan__job_free(&j);
	}
}

/* emit_any_order() through @ctx, an emitter's buffer, and in bulk */
static void any_order_in_bulk(struct __test_metadata *_metadata,
			      const struct job *j, const struct evict *ev,
			      size_t nev, struct hp_simbuf *buf,
			      unsigned int i, void *ctx)
{
	emit_any_order(_metadata, &j->lf, ev, nev, ctx);
	sim_in_bulk_same(_metadata, j, ev, nev, buf);
}

TEST(probes_in_any_order_and_in_bulk_are_the_same)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 2 }, { NULL, NULL, 400, 31 },
		{ "llama2-7b", "train-keep", 0, 2 }, { NULL, NULL, 1200, 32 },
		{ "llama2-7b", "infer", 0, 2 },
	};
	struct hp_emitbuf buf = { 0 };

	each_probe(_metadata, cases, ARRAY_SIZE(cases), 4,
		   any_order_in_bulk, &buf);
	hyper_plan__emitbuf_free(&buf);
}

/*
 * Distance evictions (4 ahead) of @d's ranked tensors shifted right by
 * each of @shifts in turn, on @j, all through @buf: each schedule
 * emitted there is the one built alone, or fails as it does
 * (emit_in_same()); with @built each must build.  Return: the most
 * evictions of a probe, and in *@small (when not NULL) the most of
 * those shifted by 2 or more.
 */
static size_t emit_shifted(struct __test_metadata *_metadata,
			   const struct job *j, struct distance_ctx *d,
			   const unsigned int *shifts, size_t nshifts,
			   bool built, struct hp_emitbuf *buf,
			   struct hp_mem *mem, size_t *small)
{
	struct distance_params dp = { .prefetch = 4 };
	size_t most = 0;

	for (size_t i = 0; i < nshifts; i++) {
		struct hp_err ea = { "" };
		struct sched a;
		int ra;

		dp.count = d->nrank >> shifts[i];
		ASSERT_EQ(0, hyper_plan__distance_evicts(d, &dp));
		if (d->nev > most)
			most = d->nev;
		if (small && shifts[i] >= 2 && d->nev > *small)
			*small = d->nev;
		ra = hyper_plan__sched_build(&a, &j->lf, d->ev, d->nev, mem,
					     &ea);
		if (built)
			ASSERT_EQ(0, ra) TH_LOG("probe %zu: %s", i, ea.msg);
		emit_in_same(_metadata, &a, ra, &ea, &j->lf, d->ev, d->nev,
			     buf, mem);
		if (!ra)
			hyper_plan__sched_free(&a);
	}
	return most;
}

/*
 * The emitter's items and their sort's other half share one block in
 * its buffer (passes/sched.c, items_room()), made again only when a
 * probe needs more items than it holds.  Distance evictions of ever
 * more tensors, then ever fewer, on a random graph and a model, all
 * through one buffer, against each built alone: the same homes, slots
 * and cops, or the same error, whichever probe sized the block.
 */
TEST(emitter_items_block_grows_and_is_kept)
{
	static const unsigned int shifts[] = { 5, 4, 3, 2, 1, 0,
					       0, 1, 2, 3, 4, 5 };
	static const struct plan_case cases[] = {
		{ NULL, NULL, 900, 33 }, { "llama2-7b", "infer", 0, 2 },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct hp_emitbuf buf = { 0 };
		struct hp_mem mem = { 0 };
		struct distance_ctx d;
		struct hp_err e;
		struct job j = { 0 };

		ASSERT_EQ(0, case_job(&j, &cases[c],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__distance_init(&d, &j.lf, &mem));
		ASSERT_LT(16, d.nrank);
		emit_shifted(_metadata, &j, &d, shifts, ARRAY_SIZE(shifts),
			     false, &buf, &mem, NULL);
		hyper_plan__emitbuf_free(&buf);
		hyper_plan__distance_free(&d);
		hyper_plan__job_free(&j);
	}
}

/*
 * The class that gave the last pick asked first (passes/plan.c,
 * next_bucket()), the others pruned from their old reach behind it,
 * against the from-scratch path, which asks the classes in order: a
 * bisection from the largest working set to the peak on links of two
 * speeds, as the search makes, then aims anywhere and in the top fifth;
 * MoE training, where one class gives nearly every pick, a decode and
 * random graphs, where classes tie on start and use (the same outcome
 * and evictions only if the tensor breaks the tie whatever the order).
 */
TEST(sweep_asks_the_last_picks_class_first_as_scratch)
{
	static const double scales[] = { 1.0, 1.3 };
	struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 1 }, { "llama2-7b", "infer", 0, 1 },
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 1500, 4 },
		{ NULL, NULL, 2000, 33 },
	};
	uint64_t x = 0x6a09e667f3bcc909ULL;
	uint32_t first = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		for (size_t v = 0; v < ARRAY_SIZE(scales); v++) {
			uint64_t lo = sp.lo, hi = sp.j.lf.peak0, b;

			for (uint32_t k = 0; k < 12 && hi > lo + 1; k++) {
				b = lo + (hi - lo) / 2;
				same_sweep(_metadata, &sp.re, &sp.sc, b,
					   scales[v]);
				first += sp.re.cls_pick != 0;
				if (sp.sc.short_by)
					lo = b;
				else
					hi = b;
			}
		}
		/* each aim in the top fifth, then one anywhere */
		for (uint32_t k = 0; k < 48; k++) {
			uint64_t top = sp.span - sp.span / 5;

			if (k % 2 == 0) {
				x = plan_xorshift(x);
			}
			same_sweep(_metadata, &sp.re, &sp.sc, sp.lo + (k % 2 ?
				   x % (sp.span + 1) :
				   top + x % (sp.span / 5 + 1)),
				   scales[k / 2 % 2]);
		}
		pair_free(&sp);
	}
	EXPECT_LT(10, first);	/* some sweeps asked another class first */
}

/*
 * Each class's first bucket from a step's first use, moved with it by
 * the buckets used between (passes/plan.c, class_base_at()), against a
 * scan of the class's buckets: after sweeps at random aims and links on
 * random graphs, MoE training and a decode, each class's base is its
 * first bucket used at base_lo or later.  The sweeps themselves, against
 * the from-scratch path which searches each class, are
 * sweep_asks_the_last_picks_class_first_as_scratch's.
 */
static void bases_match_scan(struct __test_metadata *_metadata,
			     const struct plan_ctx *pc, uint64_t *known)
{
	if (pc->base_lo == NONE)
		return;
	for (uint32_t s = 0; s < pc->ncls; s++) {
		uint32_t b = pc->cls_b[s];

		while (b < pc->cls_b[s + 1] && pc->b_j[b] < pc->base_lo)
			b++;
		ASSERT_EQ(b, pc->cls_base[s]) TH_LOG("class %u from %u", s,
						     pc->base_lo);
		(*known)++;
	}
}

TEST(class_bases_match_scan)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 41 }, { NULL, NULL, 1000, 42 },
		{ NULL, NULL, 2000, 43 }, { "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t known = 0;

	random_sweeps_both(_metadata, cases, ARRAY_SIZE(cases),
			   0x3c6ef372fe94f82bULL, bases_match_scan, &known);
	EXPECT_LT(1000, known);
}

/*
 * Orders the prepare tests below replay: the job's (topological), its
 * reverse and a shuffle (neither topological: uses before defines, and
 * the refinement's ready ops found past its first not run).
 */
static void order_variant(const struct job *j, int v, uint64_t x,
			  uint32_t *order)
{
	uint32_t n = j->g.nop, k, r, tmp;

	for (k = 0; k < n; k++)
		order[k] = v == 1 ? j->order[n - 1 - k] : j->order[k];
	for (k = n; v == 2 && k > 1; k--) {
		x = plan_xorshift(x);
		r = (uint32_t)(x % k);
		tmp = order[k - 1];
		order[k - 1] = order[r];
		order[r] = tmp;
	}
}

/*
 * The refinement as it was defined with two heaps, here scans in the
 * order of the initial positions: an op ready and freeing at least what
 * it allocates (net_ref()) when made ready, or when it becomes the last
 * accessor of a tensor, is eager; the eager op first in the initial
 * order runs, else the first of the other ready ones.
 */
struct refine_ref {
	const struct graph *g;
	uint32_t *left, *xacc;
	uint8_t *alloc, *done, *ready, *eager, *normal;
};

static int64_t net_ref(const struct refine_ref *r, uint32_t i)
{
	const struct graph *g = r->g;
	const struct op *o = &g->op[i];
	int64_t net = 0;
	uint32_t t, k;

	for_each_op_tensor(g, o, t, k) {
		if (!r->alloc[t] && k >= o->n_in)
			net += g->t[t].bytes;
		else if (r->left[t] == 1 && !(g->t[t].flags & TF_LIVE_OUT))
			net -= g->t[t].bytes;
	}
	return net;
}

static void ready_ref(struct refine_ref *r, uint32_t i)
{
	r->ready[i] = 1;
	if (net_ref(r, i) <= 0)
		r->eager[i] = 1;
	else
		r->normal[i] = 1;
}

static void refine_replayed(const struct graph *g, const struct deps *d,
			    const uint32_t *init, uint32_t *out)
{
	struct refine_ref r = { .g = g };
	uint32_t n = g->nop, *indeg = malloc(n * sizeof(*indeg));
	uint32_t i, t, k, p, m, last;

	r.left = calloc(g->nt, sizeof(*r.left));
	r.xacc = calloc(g->nt, sizeof(*r.xacc));
	r.alloc = calloc(g->nt, 1);
	r.done = calloc(n, 1);
	r.ready = calloc(n, 1);
	r.eager = calloc(n, 1);
	r.normal = calloc(n, 1);
	if (!indeg || !r.left || !r.xacc || !r.alloc || !r.done ||
	    !r.ready || !r.eager || !r.normal)
		abort();
	for (i = 0; i < n; i++)
		for_each_op_tensor(g, &g->op[i], t, k) {
			r.left[t]++;
			r.xacc[t] ^= i;
		}
	for (t = 0; t < g->nt; t++)
		r.alloc[t] = !!(g->t[t].flags & TF_LIVE_IN);
	memcpy(indeg, d->indeg, n * sizeof(*indeg));
	for (i = 0; i < n; i++)
		if (!indeg[i])
			ready_ref(&r, i);
	for (m = 0; m < n; m++) {
		for (p = 0; p < n; p++)
			if (r.eager[init[p]] && !r.done[init[p]])
				break;
		for (k = 0; p == n && k < n; k++)
			if (r.normal[init[k]] && !r.done[init[k]])
				p = k;
		i = init[p];
		r.done[i] = 1;
		for_each_op_tensor(g, &g->op[i], t, k) {
			r.alloc[t] = 1;
			r.xacc[t] ^= i;
			if (--r.left[t] != 1)
				continue;
			last = r.xacc[t];
			if (r.ready[last] && !r.done[last] &&
			    net_ref(&r, last) <= 0)
				r.eager[last] = 1;
		}
		out[m] = i;
		for (size_t q = d->off[i]; q < d->off[i + 1]; q++)
			if (!--indeg[d->dst[q]])
				ready_ref(&r, d->dst[q]);
	}
	free(indeg);
	free(r.left);
	free(r.xacc);
	free(r.alloc);
	free(r.done);
	free(r.ready);
	free(r.eager);
	free(r.normal);
}

TEST(refine_order_as_replayed)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 71 }, { NULL, NULL, 1200, 72 },
		{ "llama2-7b", "infer", 0, 1 }, { "llama2-7b", "train", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
		{ "deepseek-v2-lite", "train", 0, 1 },
	};
	uint32_t moved = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = { 0 };
		struct deps dp;
		struct hp_err e;
		uint32_t *init, *got, *want;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__graph_deps(&j.g, &dp, &j.g.mem, &e));
		init = malloc(j.g.nop * sizeof(*init));
		got = malloc(j.g.nop * sizeof(*got));
		want = malloc(j.g.nop * sizeof(*want));
		ASSERT_TRUE(init && got && want);
		for (int v = 0; v < 3; v++) {
			order_variant(&j, v, 0x6a09e667f3bcc909ULL + i, init);
			memcpy(got, init, j.g.nop * sizeof(*got));
			ASSERT_EQ(0, hyper_plan__refine_order(&j.g, &dp, got,
							      &j.g.mem));
			refine_replayed(&j.g, &dp, init, want);
			for (uint32_t k = 0; k < j.g.nop; k++) {
				ASSERT_EQ(want[k], got[k])
					TH_LOG("case %zu order %d step %u", i,
					       v, k);
				moved += want[k] != init[k];
			}
		}
		free(init);
		free(got);
		free(want);
		hyper_plan__deps_free(&dp);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(1000, moved);
}

/*
 * Dependencies with a cycle leave ops that never become ready: the
 * refinement stops with -EINVAL and the order as it was, without reading
 * past the initial order.  The cycle is an edge that never comes (one
 * more predecessor counted) into the first, a middle and the last op of
 * the order, with the initial order and its reverse (which ASan catches
 * being read past its end).
 */
TEST(refine_order_stops_on_a_cycle)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 71 }, { "llama2-7b", "train", 0, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = { 0 };
		struct deps dp, cyc;
		struct hp_err e;
		uint32_t *init, *got, *indeg, n;
		int ret;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__graph_deps(&j.g, &dp, &j.g.mem, &e));
		n = j.g.nop;
		init = malloc(n * sizeof(*init));
		got = malloc(n * sizeof(*got));
		indeg = malloc(n * sizeof(*indeg));
		ASSERT_TRUE(init && got && indeg);
		cyc = dp;
		cyc.indeg = indeg;
		for (int v = 0; v < 2; v++) {
			order_variant(&j, v, 0, init);
			for (uint32_t at = 0; at < 3; at++) {
				uint32_t o = j.order[at * (n - 1) / 2];

				memcpy(indeg, dp.indeg, n * sizeof(*indeg));
				indeg[o]++;
				memcpy(got, init, n * sizeof(*got));
				ret = hyper_plan__refine_order(&j.g, &cyc, got,
							       &j.g.mem);
				ASSERT_EQ(-EINVAL, ret)
					TH_LOG("case %zu order %d op %u", i, v, o);
				EXPECT_EQ(0, memcmp(got, init, n * sizeof(*got)))
					TH_LOG("case %zu order %d op %u", i, v, o);
			}
		}
		free(init);
		free(got);
		free(indeg);
		hyper_plan__deps_free(&dp);
		hyper_plan__job_free(&j);
	}
}

/*
 * The dirty tensors as their definition has them: the order replayed
 * step by step with nothing offloaded (uses, then defines, then the dead
 * gaps' detaches), carried on past each refusal; ascending.
 */
static size_t dirty_replayed(const struct life *lf, uint32_t *dirty)
{
	const struct graph *g = lf->g;
	uint8_t *st = malloc(g->nt), *bad = calloc(g->nt, 1);
	uint32_t k, t, x;
	size_t i, n = 0;

	if (!st || !bad)
		abort();
	for (t = 0; t < g->nt; t++)
		st[t] = hyper_residency_start(lf->home0[t]);
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[lf->order[k]];

		for (x = 0; x < o->n_in; x++)
			if (hyper_residency_check(st[op_in(g, o)[x]],
						  HYPER_RES_USE))
				bad[op_in(g, o)[x]] = 1;
		for (x = 0; x < o->n_out; x++)
			hyper_residency_step(&st[op_out(g, o)[x]],
					     HYPER_RES_DEFINE);
		for (i = lf->dead_off[k]; i < lf->dead_off[k + 1]; i++)
			if (hyper_residency_step(&st[lf->dead_t[i]],
						 HYPER_RES_DETACH))
				bad[lf->dead_t[i]] = 1;
	}
	for (t = 0; t < g->nt; t++)
		if (bad[t])
			dirty[n++] = t;
	free(st);
	free(bad);
	return n;
}

TEST(life_dirty_tensors_as_replayed)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 61 }, { NULL, NULL, 1200, 62 },
		{ "llama2-7b", "infer", 0, 1 }, { "llama2-7b", "train", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	size_t dirty = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct job j = { 0 };
		struct hp_err e;
		uint32_t *order, *want;

		ASSERT_EQ(0, case_job(&j, &cases[i],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		order = malloc(j.g.nop * sizeof(*order));
		want = malloc((j.g.nt + 1) * sizeof(*want));
		ASSERT_TRUE(order && want);
		for (int v = 0; v < 6; v++) {
			struct life lf;
			size_t n;

			order_variant(&j, v % 3, 0x9e3779b97f4a7c15ULL + v,
				      order);
			/* live_in and live_out flipped on every fifth tensor */
			for (uint32_t t = 0; v >= 3 && t < j.g.nt; t += 5)
				j.g.t[t].flags ^= t % 2 ? TF_LIVE_IN :
							  TF_LIVE_OUT;
			ASSERT_EQ(0, hyper_plan__life_build(&lf, &j.g, order,
							    &j.g.mem));
			n = dirty_replayed(&lf, want);
			ASSERT_EQ(n, lf.ndirty) TH_LOG("case %zu order %d", i,
						       v);
			for (size_t k = 0; k < n; k++)
				ASSERT_EQ(want[k], lf.dirty_t[k]);
			dirty += n;
			hyper_plan__life_free(&lf);
			for (uint32_t t = 0; v >= 3 && t < j.g.nt; t += 5)
				j.g.t[t].flags ^= t % 2 ? TF_LIVE_IN :
							  TF_LIVE_OUT;
		}
		free(order);
		free(want);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(100, dirty);
}

/*
 * The calendars' restores and takes (passes/calendar.c) against a full
 * reset and plain arrays: after each restore, every array of a calendar
 * of each use as a fresh reset on the same capacities and scale sets it
 * (rounds of a few takes restore step by step, rounds of thousands from
 * the first step written); after each take, the time left and the tree
 * as a plain array and a plain Fenwick tree taken the same way have
 * them, step by step in the order taken, latest first or in a run
 * (amounts in thirds: the order of a tree entry's subtractions shows in
 * its bits), and in rounds of halves, sums and reaches as a scan finds
 * them (whole capacities and halves: every sum exact).
 */
static void cal_as_reset(struct __test_metadata *_metadata,
			 const struct calendar *c, const struct calendar *f)
{
	size_t n = c->n;

	ASSERT_EQ(0, memcmp(c->cap, f->cap, n * sizeof(*c->cap)));
	ASSERT_EQ(0, memcmp(c->fen, f->fen, (n + 1) * sizeof(*c->fen)));
	if (c->left)
		ASSERT_EQ(0, memcmp(c->left, f->left,
				    (n + 1) * sizeof(*c->left)));
	if (c->right) {
		ASSERT_EQ(0, memcmp(c->right, f->right,
				    (n + 1) * sizeof(*c->right)));
		ASSERT_EQ(0, memcmp(c->zeros, f->zeros,
				    (n + 1) * sizeof(*c->zeros)));
		ASSERT_EQ(0, memcmp(c->used, f->used, n));
	}
	ASSERT_EQ(f->low, c->low);
	ASSERT_EQ(f->dirty, c->dirty);
	ASSERT_EQ(0, c->nundo);
}

/* Step k of @t (n steps) and its Fenwick tree @f give up @got. */
static void plain_take(double *t, double *f, uint32_t n, uint32_t k,
		       double got)
{
	t[k] -= got;
	for (uint32_t i = k + 1; i <= n; i += i & -i)
		f[i] -= got;
}

/* hyper_plan__cal_take_latest() on plain arrays: the first step taken. */
static uint32_t plain_take_latest(double *t, double *f, uint32_t n,
				  uint32_t lo, uint32_t hi, double amount)
{
	uint32_t k, first = hi;

	for (k = hi + 1; k-- > lo && amount > 1e-6;) {
		double got = t[k] < amount ? t[k] : amount;

		if (t[k] <= 1e-6)
			continue;
		plain_take(t, f, n, k, got);
		amount -= got;
		first = k;
	}
	return first;
}

/*
 * One random take on @c and on @t and its tree @f, its use's way, in
 * thirds or halves (@div), then the two compared.
 */
static int cal_take_plain(struct __test_metadata *_metadata,
			  struct calendar *c, double *t, double *f,
			  double div, uint64_t *x)
{
	uint32_t n = c->n, lo, hi, first, last, k;
	double amt;

	*x = plan_xorshift(*x);
	lo = *x % n;
	hi = lo + (*x >> 16) % (n - lo);
	amt = (*x >> 32 & 127) / div;
	if (c->left && (!c->right || *x >> 60 & 1)) {
		if (hyper_plan__cal_avail(c, lo, hi) < amt + 1e-6)
			return 0;
		first = hyper_plan__cal_take_latest(c, lo, hi, amt);
		EXPECT_EQ(plain_take_latest(t, f, n, lo, hi, amt), first);
	} else {
		if (hyper_plan__cal_find_run(c, lo, hi, amt, &first, &last))
			return 0;
		hyper_plan__cal_take_run(c, first, last, amt);
		for (k = first; k <= last && amt > 1e-6; k++) {
			double got = t[k] < amt ? t[k] : amt;

			if (got > 0) {
				plain_take(t, f, n, k, got);
				amt -= got;
			}
		}
	}
	EXPECT_EQ(0, memcmp(t, c->cap, n * sizeof(*t)));
	EXPECT_EQ(0, memcmp(f + 1, c->fen + 1, n * sizeof(*f)));
	if (div == 2.0)
		cal_plain(_metadata, c, x);
	return 1;
}

TEST(calendar_restores_and_takes_match_plain)
{
	enum { N = 700 };
	static const unsigned int uses[] = { CAL_LATEST, CAL_RUNS, CAL_ALL };
	uint64_t x = 0x9b05688c2b3e6c1fULL, took = 0;
	double cap[N], cap2[N], t[N], tree[N + 1];

	cal_caps(cap, cap2, N, &x);
	for (size_t u = 0; u < ARRAY_SIZE(uses); u++) {
		struct calendar c, f;

		ASSERT_EQ(0, hyper_plan__cal_init(&c, N, uses[u],
						  &(struct hp_mem){ 0 }));
		ASSERT_EQ(0, hyper_plan__cal_init(&f, N, uses[u],
						  &(struct hp_mem){ 0 }));
		for (int round = 0; round < 24; round++) {
			const double *c0 = round % 3 ? cap : cap2;
			double scale = round % 4 ? 1.0 : 1.5;
			int takes = round % 2 ? 40 : 3000;

			hyper_plan__cal_restore(&c, c0, scale);
			hyper_plan__cal_reset(&f, c0, scale);
			cal_as_reset(_metadata, &c, &f);
			for (uint32_t k = 0; k < N; k++)
				t[k] = c0[k] * scale;
			memcpy(tree, c.fen, sizeof(tree));
			for (int i = 0; i < takes; i++)
				took += cal_take_plain(_metadata, &c, t, tree,
						       round % 5 ? 3.0 : 2.0,
						       &x);
		}
		hyper_plan__cal_free(&c);
		hyper_plan__cal_free(&f);
	}
	EXPECT_LT(10000, took);
}

/*
 * The range-minimum tree through clears (hyper_plan__seg_clear()):
 * keys falling by the run to the root from a cleared tree, key 0 among
 * them, against a plain array, every node the least of its children
 * before each clear.
 */
TEST(minseg_clears_match_scan)
{
	static const uint32_t sizes[] = { 1, 2, 3, 6, 1000, 1025 };
	uint64_t x = 0xbb67ae8584caa73bULL;

	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++) {
		uint32_t n = sizes[z];
		struct minseg sg;
		uint64_t *ref = malloc(n * sizeof(*ref));
		void *blk = seg_block(&sg, n, &(struct hp_mem){ 0 });

		ASSERT_NE(NULL, ref);
		ASSERT_NE(NULL, blk);
		for (uint32_t r = 0; r < 8000; r++) {
			uint32_t pos, lo, hi;
			uint64_t key, want = SEG_NONE;

			if (r % 1000 == 0) {
				for (uint32_t i = 1; r && i < sg.size; i++)
					ASSERT_EQ(sg.t[2 * i] < sg.t[2 * i + 1] ?
						  sg.t[2 * i] : sg.t[2 * i + 1],
						  sg.t[i]);
				hyper_plan__seg_clear(&sg);
				for (uint32_t i = 0; i < n; i++)
					ref[i] = SEG_NONE;
			}
			x = plan_xorshift(x);
			pos = x % n;
			/* mostly falling: keys that count down, now and then up */
			key = (x >> 20) % 8 ? 8000 - r % 1000 - (x >> 40) % 3 :
			      (x >> 40) % 4 ? 0 : SEG_NONE;
			ref[pos] = key;
			hyper_plan__seg_set(&sg, pos, key);
			lo = (x >> 8) % n;
			hi = lo + (uint32_t)((x >> 28) % (n - lo));
			for (uint32_t i = lo; i <= hi; i++)
				if (ref[i] < want)
					want = ref[i];
			ASSERT_EQ(want, hyper_plan__seg_min(&sg, lo, hi))
				TH_LOG("n %u round %u [%u, %u]", n, r, lo, hi);
		}
		free(blk);
		free(ref);
	}
}

/*
 * Each class's floor against a scan of the tree's leaves: no key of its
 * buckets from its base on is below it, and the floor of the classes but
 * the last pick's is below none of theirs (passes/plan.c, cls_floor[],
 * floor_others; none kept before a sweep's first step over budget).  A
 * floor above a key there (a set-aside's key come back, or the base
 * walked down over a key, not followed) would let a pick skip the class
 * that holds it; the count of floors found exact shows they are not
 * merely 0.
 */
static void floors_below_scan(struct __test_metadata *_metadata,
			      const struct plan_ctx *pc, uint64_t *exact)
{
	const uint64_t *leaf = pc->seg.t + pc->seg.size;
	uint64_t others = SEG_NONE;

	if (pc->base_lo == NONE)
		return;
	for (uint32_t s = 0; s < pc->ncls; s++) {
		uint64_t least = SEG_NONE;

		for (uint32_t b = pc->cls_base[s]; b < pc->cls_b[s + 1]; b++)
			if (leaf[b] < least)
				least = leaf[b];
		ASSERT_LE(pc->cls_floor[s], least) TH_LOG("class %u", s);
		*exact += pc->cls_floor[s] == least && least != SEG_NONE;
		if (s != pc->cls_pick && pc->cls_floor[s] < others)
			others = pc->cls_floor[s];
	}
	ASSERT_LE(pc->floor_others, others);
}

/*
 * Sweeps of @sp's pair at aims in each quarter from the largest working
 * set to the peak in turn, on links of three speeds, each against the
 * from-scratch path and then @check on the reusing context.
 */
static void quarter_sweeps(struct __test_metadata *_metadata,
			   struct sweep_pair *sp, uint64_t *x,
			   sweep_check check, uint64_t *count)
{
	static const double scales[] = { 1.0, 1.3, ANY_WAIT };

	for (uint32_t k = 0; k < 48; k++) {
		uint64_t quarter = sp->span / 4 + 1;

		*x = plan_xorshift(*x);
		same_sweep(_metadata, &sp->re, &sp->sc,
			   sp->lo + k % 4 * quarter + *x % quarter,
			   scales[k / 4 % ARRAY_SIZE(scales)]);
		check(_metadata, &sp->re, count);
	}
}

/*
 * The graphs the size classes' floors are checked on: MoE and dense
 * training, where one class gives nearly every pick, a decode, and
 * random graphs where classes tie on start and use.
 */
static const struct plan_case class_cases[] = {
	{ "olmoe-1b-7b", "train", 0, 1 }, { "llama2-7b", "infer", 0, 1 },
	{ "llama2-7b", "train", 0, 1 }, { NULL, NULL, 600, 2 },
	{ NULL, NULL, 1500, 4 }, { NULL, NULL, 2000, 33 },
	{ NULL, NULL, 2000, 51 },
};

/*
 * The classes' floors (passes/plan.c, next_bucket(): a pick of the last
 * pick's class below every other class's floor asks no other class, and
 * a class above the pick so far is passed over unasked) against the
 * from-scratch path, which asks every class at every pick, and against a
 * scan after each sweep: aims in each quarter from the largest working
 * set to the peak in turn, on links of three speeds; MoE and dense
 * training, where one class gives nearly every pick, a decode, and
 * random graphs where classes tie on start and use (a floor equal to the
 * pick must ask the class: the tensor breaks the tie).
 */
TEST(sweep_floors_skip_classes_as_scratch)
{
	uint64_t x = 0xbb67ae8584caa73bULL, hits = 0, exact = 0;

	for (size_t i = 0; i < ARRAY_SIZE(class_cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &class_cases[i]);
		quarter_sweeps(_metadata, &sp, &x, floors_below_scan, &exact);
		hits += sp.re.floor_hits;
		EXPECT_EQ(0, sp.sc.floor_hits);
		pair_free(&sp);
	}
	EXPECT_LT(1000, hits);	/* most picks asked one class */
	EXPECT_LT(1000, exact);
}

/*
 * A tie between classes that only the tensor breaks (passes/plan.c,
 * next_bucket(): a pick equal to another class's floor asks that class).
 * a (1 MB) and b (8 MB, b's class) are written by one op and read by
 * one op; c (8 MB) spans the steps after them, where a transient p
 * pushes the device over: c is taken first, so b's class is asked first
 * when a transient q pushes a step before a's and b's reader over.  On
 * links that never wait, a and b lead their classes there with the same
 * start and use, and a, the lower tensor, is the pick, as on the
 * from-scratch path; b would be if a floor equal to the pick skipped
 * a's class.  Then the same on links that wait.
 */
TEST(tied_classes_give_the_lower_tensor)
{
	static const uint32_t order[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	const uint64_t mb = 1 << 20;
	struct hp_mem mr = { 0 }, ms = { 0 };
	struct plan_ctx re, sc;
	uint32_t a, b, c, p, q;
	struct graph g;
	struct life lf;

	hyper_plan__graph_init(&g, "tie");
	a = hyper_plan__graph_add_tensor(&g, "a", mb, HYPER_KIND_ACTIVATION,
					 0, NULL);
	b = hyper_plan__graph_add_tensor(&g, "b", 8 * mb,
					 HYPER_KIND_ACTIVATION, 0, NULL);
	c = hyper_plan__graph_add_tensor(&g, "c", 8 * mb,
					 HYPER_KIND_ACTIVATION, 0, NULL);
	p = hyper_plan__graph_add_tensor(&g, "p", 2 * mb,
					 HYPER_KIND_ACTIVATION, 0, NULL);
	q = hyper_plan__graph_add_tensor(&g, "q", mb, HYPER_KIND_ACTIVATION,
					 0, NULL);
	hyper_plan__graph_add_op(&g, "o0", 10000000, NULL, 0,
				 (uint32_t[]){ a, b }, 2, NULL, NULL);
	hyper_plan__graph_add_op(&g, "o1", 10000000, NULL, 0, &c, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o2", 10000000, NULL, 0, &q, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o3", 10000000, &q, 1, NULL, 0, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o4", 10000000, (uint32_t[]){ a, b }, 2,
				 NULL, 0, NULL, NULL);
	hyper_plan__graph_add_op(&g, "o5", 10000000, NULL, 0, &p, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o6", 10000000, &p, 1, NULL, 0, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o7", 10000000, NULL, 0, NULL, 0, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o8", 10000000, NULL, 0, NULL, 0, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o9", 10000000, &c, 1, NULL, 0, NULL,
				 NULL);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	ASSERT_EQ(0, hyper_plan__plan_init(&re, &lf, &gbps, &mr));
	ASSERT_EQ(0, hyper_plan__plan_init(&sc, &lf, &gbps, &ms));
	sc.scratch = true;
	same_sweep(_metadata, &re, &sc, 9 * mb + mb / 2, ANY_WAIT);
	ASSERT_LE(2, re.nev);
	EXPECT_EQ(c, re.ev[0].t);
	EXPECT_EQ(a, re.ev[1].t);
	same_sweep(_metadata, &re, &sc, 9 * mb + mb / 2, 1.0);
	hyper_plan__plan_free(&re);
	hyper_plan__plan_free(&sc);
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

/*
 * The stores a detached tensor waits for, in a ring in the order they
 * were queued where their ends do not fall, in the heap where they do
 * (sim/sim.c, pend_push()): a run without hooks against the same run
 * with a hook on memory, which keeps every one in the heap.  Distance
 * and greedy evictions on random graphs and models, whose first values
 * are all stored at the first slot and detached in any order, on a
 * device-to-pool link slowed so that many stores are in flight at once,
 * with budgets that make defines and prefetches wait for them, whole
 * and given up, through a buffer and alone: the same figures and the
 * same stop.
 */
static void count_mem(void *ctx, double time, uint64_t bytes)
{
	(void)time;
	(void)bytes;
	(*(size_t *)ctx)++;
}

static void ring_as_heap(struct __test_metadata *_metadata,
			 const struct job *j, const struct evict *ev,
			 size_t nev, struct hp_simbuf *buf, unsigned int i,
			 void *moves)
{
	struct profile slow = j->p;
	struct hp_mem mem = { 0 };
	struct sched s;
	struct hp_err e;

	slow.d2h_bps /= 20;
	if (hyper_plan__sched_build(&s, &j->lf, ev, nev, &mem, &e))
		return;
	for (int v = 0; v < 6; v++) {
		struct sim_hooks hk = { .mem = count_mem, .ctx = moves,
					.give_up = v & 1, .max_slow = 0.05 },
				 plain = { .give_up = v & 1, .max_slow = 0.05 };
		struct hp_err ea = { "" }, eb = { "" };
		struct sim_result ra, rb;
		int xa, xb;

		s.budget = v < 2 ? 0 : j->lf.max_ws +
			   (j->lf.peak0 - j->lf.max_ws) / (v < 4 ? 2 : 5);
		xa = hyper_plan__simulate_in(&s, &slow, &plain, &ra,
					     v % 3 ? buf : NULL, &mem, &ea);
		xb = hyper_plan__simulate(&s, &slow, &hk, &rb, &mem, &eb);
		ASSERT_EQ(xb, xa) TH_LOG("%s / %s", ea.msg, eb.msg);
		EXPECT_STREQ(eb.msg, ea.msg);
		EXPECT_EQ(0, memcmp(&ra, &rb, sizeof(ra)))
			TH_LOG("budget %llu, give up %d",
			       (unsigned long long)s.budget, v & 1);
	}
	hyper_plan__sched_free(&s);
}

/* first values evicted: the training graphs' weights */
static const struct plan_case sim_cases[] = {
	{ "olmoe-1b-7b", "train", 0, 2 }, { NULL, NULL, 400, 31 },
	{ "llama2-7b", "train", 0, 2 }, { NULL, NULL, 1200, 32 },
	{ "llama2-7b", "infer", 0, 2 },
};

TEST(simulator_stores_pending_in_a_ring_as_in_the_heap)
{
	size_t moves = 0;

	each_probe(_metadata, sim_cases, ARRAY_SIZE(sim_cases), 3,
		   ring_as_heap, &moves);
	EXPECT_LT(1000, moves);	/* the hooked runs saw memory move */
}

/*
 * A run that takes quiet steps in bulk keeps the states of the tensors
 * its schedule tracks alone, every other one zero in its buffer
 * (sim/sim.c, ST_MINE): it sets the tracked ones' and clears them again,
 * and a buffer that a run of every tensor wrote is zeroed first.
 * Distance and greedy evictions on random graphs and models, each run
 * as a search runs it (emitted as it goes through the buffer), after
 * another such run of other evictions or after a run of the schedule
 * built whole in the same buffer, whole and given up: the figures and
 * the stop of the schedule built whole, run alone.
 */
static void bulk_after(struct __test_metadata *_metadata,
		       const struct job *j, const struct evict *ev,
		       size_t nev, struct hp_simbuf *buf, unsigned int i,
		       void *runs)
{
	struct hp_mem mem = { 0 };
	struct sched a, b;
	struct hp_err e;

	if (hyper_plan__sched_build(&b, &j->lf, ev, nev, &mem, &e))
		return;
	for (int v = 0; v < 4; v++) {
		struct sim_hooks hk = { .give_up = v & 1, .max_slow = 0.05,
					.lf = &j->lf };
		struct hp_err ea = { "" }, eb = { "" };
		struct sim_result ra, rb;
		int xa, xb;

		b.budget = v < 2 ? 0 : j->lf.max_ws +
			   (j->lf.peak0 - j->lf.max_ws) / 2;
		if (i % 2)	/* the whole one first, in the buffer */
			hyper_plan__simulate_in(&b, &j->p, &hk, &rb, buf, &mem,
						&eb);
		ASSERT_EQ(0, hyper_plan__sched_start_in(&a, &j->lf, ev, nev,
							&buf->emit, &mem,
							&ea));
		a.budget = b.budget;
		*(size_t *)runs += hyper_plan__sched_life(&a) != NULL;
		xa = hyper_plan__simulate_in(&a, &j->p, &hk, &ra, buf, &mem,
					     &ea);
		xb = hyper_plan__simulate(&b, &j->p, &hk, &rb, &mem, &eb);
		ASSERT_EQ(xb, xa) TH_LOG("%s / %s", ea.msg, eb.msg);
		EXPECT_STREQ(eb.msg, ea.msg);
		EXPECT_EQ(0, memcmp(&ra, &rb, sizeof(ra)))
			TH_LOG("budget %llu, give up %d, after %s",
			       (unsigned long long)b.budget, v & 1,
			       i % 2 ? "the whole one" : "another");
		hyper_plan__sched_free(&a);
	}
	hyper_plan__sched_free(&b);
}

TEST(simulator_in_bulk_keeps_tracked_states_alone)
{
	size_t runs = 0;

	each_probe(_metadata, sim_cases, ARRAY_SIZE(sim_cases), 3,
		   bulk_after, &runs);
	EXPECT_LT(100, runs);	/* most emitted tracking their tensors */
}

/*
 * The quiet tables a run in bulk builds (sim/sim.c, quiet_tables()) are
 * one block: q at its start, q_new after it inside the same allocation,
 * both freed with it (ASan: no leak).  The figures are the step-by-step
 * run's (sim_in_bulk_same()).
 */
static void quiet_in_one_block(struct __test_metadata *_metadata,
			       const struct job *j, const struct evict *ev,
			       size_t nev, struct hp_simbuf *buf,
			       unsigned int i, void *blocks)
{
	const struct graph *g = j->lf.g;
	size_t nw = 0;
	uint32_t k;

	sim_in_bulk_same(_metadata, j, ev, nev, buf);
	if (!buf->q)
		return;
	for (k = 0; k < j->lf.n; k++)
		nw += g->op[j->lf.order[k]].n_out;
	ASSERT_EQ(buf->q_blk, (void *)buf->q);
	EXPECT_LT((uintptr_t)buf->q_blk, (uintptr_t)buf->q_new);
	EXPECT_LE((uintptr_t)buf->q_new + nw,
		  (uintptr_t)buf->q_blk + malloc_usable_size(buf->q_blk));
	*(size_t *)blocks += 1;
}

TEST(simulator_quiet_tables_in_one_block)
{
	size_t blocks = 0;

	each_probe(_metadata, sim_cases, ARRAY_SIZE(sim_cases), 1,
		   quiet_in_one_block, &blocks);
	EXPECT_LT(0, blocks);	/* some ran in bulk */
}

/*
 * The Fenwick descent unrolled by levels (hyper_plan__cal_reach_sum())
 * against the loop it replaced, over the same tree: at lengths around
 * each power of two up to 2^17 (levels 1 to 18), after random takes of
 * fractions, for sums at, just past and between the prefixes.  Every
 * answer the same step.
 */
static uint32_t reach_by_loop(const struct calendar *c, double want)
{
	uint32_t pos = 0, step;

	for (step = c->top; step; step /= 2)
		if (c->fen[pos + step] < want) {
			pos += step;
			want -= c->fen[pos];
		}
	return pos < c->n ? pos : c->n;
}

TEST(calendar_reach_sum_unrolled_matches_loop)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	double *cap = malloc((1u << 17) * 2 * sizeof(*cap));
	uint32_t bad = 0, asked = 0;

	ASSERT_NE(NULL, cap);
	for (uint32_t lg = 0; lg <= 17; lg++) {
		for (int d = -1; d <= 1; d++) {
			uint32_t n = (1u << lg) + d, k, t;
			struct calendar c;
			double total, got;

			if (!n || (lg == 0 && d))
				continue;
			for (k = 0; k < n; k++) {
				x = plan_xorshift(x);
				cap[k] = x % 5 ? (double)(x >> 11) / (1ULL << 50)
					       : 0;
			}
			ASSERT_EQ(0, hyper_plan__cal_init(&c, n, CAL_LATEST,
							  &(struct hp_mem){ 0 }));
			hyper_plan__cal_reset(&c, cap, 1.7);
			for (t = 0; t < 40; t++) {
				x = plan_xorshift(x);
				k = (uint32_t)(x >> 20) % n;
				got = (double)(x & 0xfffff) / (1 << 18);
				hyper_plan__cal_take_latest(&c, k / 2, k, got);
			}
			total = hyper_plan__cal_avail(&c, 0, n - 1);
			for (t = 0; t < 600; t++) {
				double want;

				x = plan_xorshift(x);
				k = (uint32_t)(x >> 20) % (n + 1);
				want = t % 3 == 0 ?
				       hyper_plan__cal_before(&c, k) :
				       t % 3 == 1 ?
				       nextafter(hyper_plan__cal_before(&c, k),
						 INFINITY) :
				       total * (double)(x & 0xffff) / 0xf000;
				asked++;
				if (reach_by_loop(&c, want) !=
				    hyper_plan__cal_reach_sum(&c, want))
					bad++;
			}
			hyper_plan__cal_free(&c);
		}
	}
	free(cap);
	EXPECT_EQ(0, bad) TH_LOG("%u of %u reaches differ", bad, asked);
}

/*
 * The time before a step (hyper_plan__cal_before(), inline in
 * calendar.h) and in a window (hyper_plan__cal_avail()) against plain
 * sums of the steps' time left, after random takes, on calendars of one
 * step to past 2^17: whole numbers of nanoseconds, so that every sum is
 * exact whatever its order.
 */
TEST(calendar_before_matches_plain_sums)
{
	static const uint32_t sizes[] = { 1, 2, 3, 1000, 65539, 140001 };
	uint64_t x = 0x2545f4914f6cdd1dULL;
	double *cap = malloc(140001 * sizeof(*cap));

	ASSERT_NE(NULL, cap);
	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++) {
		uint32_t n = sizes[z], k, t, lo, hi;
		struct calendar c;

		for (k = 0; k < n; k++) {
			x = plan_xorshift(x);
			cap[k] = (double)(x % 7 ? x % 1000 : 0);
		}
		ASSERT_EQ(0, hyper_plan__cal_init(&c, n, CAL_LATEST,
						  &(struct hp_mem){ 0 }));
		hyper_plan__cal_reset(&c, cap, 1);
		for (t = 0; t < 800; t++) {
			double plain = 0;

			x = plan_xorshift(x);
			k = (uint32_t)(x >> 20) % n;
			if (t % 2)
				hyper_plan__cal_take_latest(&c, k / 2, k,
						(double)((x >> 8) % 3000));
			lo = (uint32_t)(x >> 40) % (n + 1);
			for (k = 0; k < lo; k++)
				plain += c.cap[k];
			ASSERT_EQ(plain, hyper_plan__cal_before(&c, lo))
				TH_LOG("n %u take %u step %u", n, t, lo);
			hi = lo + (uint32_t)(x % (n - lo + 1));
			for (k = lo; k <= hi && k < n; k++)
				plain += c.cap[k];
			if (hi < n)
				ASSERT_EQ(plain - hyper_plan__cal_before(&c, lo),
					  hyper_plan__cal_avail(&c, lo, hi));
		}
		hyper_plan__cal_free(&c);
	}
	free(cap);
}

/*
 * The takes' walks paired whatever their steps (walk_pair() in
 * passes/calendar.c): a call's second take meets the first's walk up
 * where their entries' ranges first hold both, or never, past the last
 * entry.  At lengths around powers of two, with steps that have no time
 * between those taken, takes latest first and in runs against plain
 * arrays taken one step at a time, in thirds: the same bits.
 */
TEST(calendar_paired_walks_match_plain)
{
	static const uint32_t ns[] = { 2, 3, 5, 31, 32, 33, 63, 64, 65, 255,
				       1023, 1025 };
	static const unsigned int uses[] = { CAL_LATEST, CAL_RUNS };
	uint64_t x = 0x510e527fade682d1ULL, took = 0;
	double cap[1025], t[1025], tree[1026];

	for (size_t z = 0; z < ARRAY_SIZE(ns); z++) {
		uint32_t n = ns[z];

		for (uint32_t k = 0; k < n; k++) {
			x = plan_xorshift(x);
			cap[k] = x % 3 ? (double)(x >> 32 & 255) / 7 : 0;
		}
		for (size_t u = 0; u < ARRAY_SIZE(uses); u++) {
			struct calendar c;

			ASSERT_EQ(0, hyper_plan__cal_init(&c, n, uses[u],
							  &(struct hp_mem){ 0 }));
			hyper_plan__cal_reset(&c, cap, 1.0);
			memcpy(t, c.cap, n * sizeof(*t));
			memcpy(tree, c.fen, (n + 1) * sizeof(*tree));
			for (int i = 0; i < 400; i++)
				took += cal_take_plain(_metadata, &c, t, tree,
						       3.0, &x);
			hyper_plan__cal_free(&c);
		}
	}
	EXPECT_LT(1000, took);
}

/*
 * What hyper_plan__cal_take_latest() notes of its takes (passes/
 * calendar.c, take_latest()): the first step taken since the reset
 * (c->low) and the first written (c->dirty) set once a call from its
 * last take, the undo list with the count kept in a register (and given
 * back around find()), and a call that takes down to step 0 and still
 * wants time (left[0], its own root, ends it).  A calendar of the
 * latest takes alone and one of both uses, on the same steps, against
 * each other and a plain array and tree: the same first step, time left,
 * tree and pointers; the first step taken as the least a plain scan
 * took; no step written below c->dirty, each in the undo list while it
 * holds them; after each round a restore leaves both as a fresh reset.
 */
static void latest_noted(struct __test_metadata *_metadata,
			 const struct calendar *c, const struct calendar *f,
			 uint32_t low)
{
	static uint8_t in_undo[5000];
	uint32_t n = c->n, k, u;

	ASSERT_EQ(low, c->low);
	memset(in_undo, 0, n);
	for (u = 0; u < c->nundo && u < CAL_UNDO; u++) {
		ASSERT_LT(c->undo[u], n);
		in_undo[c->undo[u]] = 1;
	}
	for (k = 0; k < n; k++) {
		if (c->cap[k] == f->cap[k] && c->left[k + 1] == f->left[k + 1])
			continue;
		ASSERT_LE(c->dirty, k) TH_LOG("step %u", k);
		if (c->nundo <= CAL_UNDO)
			ASSERT_TRUE(in_undo[k]) TH_LOG("step %u", k);
	}
}

TEST(calendar_latest_takes_note_what_they_write)
{
	static const uint32_t ns[] = { 1, 2, 3, 7, 8, 9, 64, 65, 300, 5000 };
	uint64_t x = 0x9b05688c2b3e6c1fULL, zeroes = 0, calls = 0;
	static double cap[5000], t[5000], tree[5001];

	for (size_t z = 0; z < ARRAY_SIZE(ns); z++) {
		uint32_t n = ns[z], lo, hi, low, first;
		struct calendar a, b, f, g;
		struct hp_mem mem = { 0 };

		for (uint32_t k = 0; k < n; k++) {
			x = plan_xorshift(x);
			cap[k] = x % 4 ? (double)(x >> 32 & 255) / 3 : 0;
		}
		ASSERT_EQ(0, hyper_plan__cal_init(&a, n, CAL_LATEST, &mem));
		ASSERT_EQ(0, hyper_plan__cal_init(&b, n, CAL_ALL, &mem));
		ASSERT_EQ(0, hyper_plan__cal_init(&f, n, CAL_LATEST, &mem));
		ASSERT_EQ(0, hyper_plan__cal_init(&g, n, CAL_ALL, &mem));
		hyper_plan__cal_reset(&a, cap, 1.0);
		hyper_plan__cal_reset(&b, cap, 1.0);
		hyper_plan__cal_reset(&f, cap, 1.0);
		hyper_plan__cal_reset(&g, cap, 1.0);
		for (int round = 0; round < 12; round++) {
			/* rounds of few calls, then of thousands of takes */
			int calls_now = round % 3 == 2 ? 3000 : 5 + round;

			memcpy(t, f.cap, n * sizeof(*t));
			memcpy(tree, f.fen, (n + 1) * sizeof(*tree));
			low = n;
			for (int i = 0; i < calls_now; i++) {
				double amt;

				x = plan_xorshift(x);
				hi = (uint32_t)(x >> 8) % n;
				lo = x >> 40 & 1 ? 0 : (uint32_t)(x >> 20) %
							(hi + 1);
				amt = (double)(x >> 48 & 511) / 3;
				/* a few more than the steps hold: down to 0 */
				if (!(x & 7))
					amt = hyper_plan__cal_avail(&a, lo, hi) +
					      (double)(x >> 4 & 15);
				first = plain_take_latest(t, tree, n, lo, hi,
							  amt);
				for (uint32_t k = lo; k <= hi; k++)
					if (t[k] != a.cap[k] && k < low)
						low = k;
				ASSERT_EQ(first, hyper_plan__cal_take_latest(
						  &a, lo, hi, amt));
				ASSERT_EQ(first, hyper_plan__cal_take_latest(
						  &b, lo, hi, amt));
				zeroes += !first && !t[0];
				ASSERT_EQ(0, memcmp(t, a.cap, n * sizeof(*t)));
				ASSERT_EQ(0, memcmp(tree + 1, a.fen + 1,
						    n * sizeof(*tree)));
				ASSERT_EQ(0, memcmp(b.cap, a.cap,
						    n * sizeof(*t)));
				ASSERT_EQ(0, memcmp(b.fen, a.fen,
						    (n + 1) * sizeof(*tree)));
				ASSERT_EQ(0, memcmp(b.left, a.left,
						    (n + 1) * sizeof(*a.left)));
				ASSERT_EQ(a.nundo, b.nundo);
				ASSERT_EQ(a.dirty, b.dirty);
				ASSERT_EQ(a.low, b.low);
				latest_noted(_metadata, &a, &f, low);
				calls++;
			}
			hyper_plan__cal_restore(&a, cap, 1.0);
			hyper_plan__cal_restore(&b, cap, 1.0);
			cal_as_reset(_metadata, &a, &f);
			cal_as_reset(_metadata, &b, &g);
		}
		hyper_plan__cal_free(&a);
		hyper_plan__cal_free(&b);
		hyper_plan__cal_free(&f);
		hyper_plan__cal_free(&g);
	}
	EXPECT_LT(10000, calls);
	EXPECT_LT(50, zeroes);
}

/*
 * The classes' floors from the second base (passes/plan.c, cls_floor2[],
 * floor_beyond) and floor_others against a scan of the tree's leaves:
 * the second base is each class's first bucket used at base2_lo or
 * later, no key of its buckets from there on is below its second floor,
 * floor_others is the least floor of the classes but the last pick's,
 * exactly (kept from the loop's own pass and each floor lowered), and
 * floor_beyond is below none of theirs, taking for the classes after
 * the last pick's the higher of their two floors.
 */
static void beyond_below_scan(struct __test_metadata *_metadata,
			      const struct plan_ctx *pc, uint64_t *exact)
{
	const uint64_t *leaf = pc->seg.t + pc->seg.size;
	uint64_t others = SEG_NONE, beyond = SEG_NONE;

	if (pc->base_lo == NONE)
		return;
	for (uint32_t s = 0; s < pc->ncls; s++) {
		uint64_t least = SEG_NONE, f = pc->cls_floor[s];
		uint32_t b = pc->cls_b[s];

		if (pc->base2_lo != NONE) {
			while (b < pc->cls_b[s + 1] &&
			       pc->b_j[b] < pc->base2_lo)
				b++;
			ASSERT_EQ(b, pc->cls_base2[s]) TH_LOG("class %u", s);
			for (; b < pc->cls_b[s + 1]; b++)
				if (leaf[b] < least)
					least = leaf[b];
			ASSERT_LE(pc->cls_floor2[s], least)
				TH_LOG("class %u", s);
			*exact += pc->cls_floor2[s] == least &&
				  least != SEG_NONE;
		} else {
			ASSERT_EQ(0, pc->cls_floor2[s]);
		}
		if (s == pc->cls_pick)
			continue;
		if (f < others)
			others = f;
		if (s > pc->cls_pick && pc->cls_floor2[s] > f)
			f = pc->cls_floor2[s];
		if (f < beyond)
			beyond = f;
	}
	ASSERT_EQ(others, pc->floor_others);
	ASSERT_LE(pc->floor_beyond, beyond);
}

/*
 * A pick of the last pick's class below every other class's floor from
 * the second base, at that class's reach (passes/plan.c, next_bucket():
 * no costlier class reaches before it), asks no other class: against
 * the from-scratch path, which asks every class at every pick, and
 * against a scan after each sweep.  A bisection from the largest working
 * set to the peak on links at 1 and 1.3, as the search makes, then aims
 * in each quarter in turn on links of three speeds; MoE and dense
 * training, where one class gives nearly every pick, a decode, and
 * random graphs where classes tie on start and use.
 */
TEST(sweep_floor_beyond_skips_classes_as_scratch)
{
	static const double scales[] = { 1.0, 1.3 };
	uint64_t x = 0x510e527fade682d1ULL, hits = 0, exact = 0;

	for (size_t i = 0; i < ARRAY_SIZE(class_cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &class_cases[i]);
		for (size_t v = 0; v < ARRAY_SIZE(scales); v++) {
			uint64_t lo = sp.lo, hi = sp.j.lf.peak0, b;

			sp.re.keep_aim = sp.sc.keep_aim = hi;
			for (uint32_t k = 0; k < 12 && hi > lo + 1; k++) {
				b = lo + (hi - lo) / 2;
				same_sweep(_metadata, &sp.re, &sp.sc, b,
					   scales[v]);
				beyond_below_scan(_metadata, &sp.re, &exact);
				if (sp.sc.short_by)
					lo = b;
				else
					hi = b;
			}
			sp.re.keep_aim = sp.sc.keep_aim = 0;
		}
		quarter_sweeps(_metadata, &sp, &x, beyond_below_scan, &exact);
		hits += sp.re.beyond_hits;
		EXPECT_EQ(0, sp.sc.beyond_hits);
		pair_free(&sp);
	}
	EXPECT_LT(1000, hits);	/* picks ended by the second floors */
	EXPECT_LT(100, exact);
}

/*
 * The emitter's quiet slots (passes/sched.c, bare()): a schedule that
 * tracks its evicted tensors alone, emitted in pulls of 1 to 9 steps
 * (stretches starting and ending at either slot of a step, as the busy
 * steps cut them), against the same evictions emitted replaying every
 * tensor, whole.  The emitter replays every tensor when one that breaks
 * a rule with nothing offloaded is not evicted: a copy of the life that
 * says so of a tensor the evictions leave alone.  The same homes, slots
 * and cops, or the same error.
 */
static void bare_as_replayed(struct __test_metadata *_metadata,
			     const struct job *j, const struct evict *ev,
			     size_t nev, struct hp_simbuf *buf, unsigned int i,
			     void *seen)
{
	struct hp_err ea = { "" }, eb = { "" };
	struct life all = j->lf;
	struct hp_mem mem = { 0 };
	uint32_t t, steps, nb;
	uint64_t x = i + 1;
	struct sched a, b;
	size_t v, n;
	int ra, rb;

	for (t = 0; t < j->g.nt; t++) {
		for (v = 0; v < nev && ev[v].t != t; v++)
			;
		if (v == nev)
			break;
	}
	if (t == j->g.nt)
		return;		/* every tensor evicted */
	all.dirty_t = &t;
	all.ndirty = 1;
	ra = hyper_plan__sched_start_in(&a, &all, ev, nev, NULL, &mem, &ea);
	ASSERT_EQ(0, ra) TH_LOG("%s", ea.msg);
	ASSERT_EQ(NULL, hyper_plan__sched_busy(&a, &n));
	((size_t *)seen)[0]++;
	ra = hyper_plan__sched_emit(&a, a.n, &ea);
	rb = hyper_plan__sched_start_in(&b, &j->lf, ev, nev, &buf->emit, &mem,
					&eb);
	ASSERT_EQ(0, rb) TH_LOG("%s", eb.msg);
	((size_t *)seen)[1] += hyper_plan__sched_busy(&b, &n) != NULL;
	for (steps = 0; !rb && hyper_plan__sched_emitted(&b) < b.n;) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		nb = 1 + (uint32_t)(x >> 33) % 9;
		steps = steps + nb < b.n ? steps + nb : b.n;
		rb = hyper_plan__sched_emit(&b, steps, &eb);
	}
	emit_same(_metadata, &a, ra, &ea, &b, rb, &eb);
	hyper_plan__sched_free(&a);
	hyper_plan__sched_free(&b);
}

TEST(quiet_slots_in_pulls_are_the_replayed_ones)
{
	/* probes replayed whole, and those emitted through bare() */
	size_t seen[2] = { 0 };

	each_probe(_metadata, sim_cases, ARRAY_SIZE(sim_cases), 3,
		   bare_as_replayed, seen);
	EXPECT_LT(40, seen[0]);
	EXPECT_LT(20, seen[1]);
}

/*
 * The heap as it was written before it was generated from util/heap.h,
 * on its own array: the same items must sit at the same places after
 * every push and pop.
 */
static void old_heap_push(struct heap_item *a, size_t *n, double key,
			  uint32_t val)
{
	size_t i = (*n)++, p;

	for (; i && a[p = (i - 1) / 2].key > key; i = p)
		a[i] = a[p];
	a[i] = (struct heap_item){ key, val };
}

static struct heap_item old_heap_pop(struct heap_item *a, size_t *n)
{
	struct heap_item top = a[0], last = a[--*n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < *n) {
		if (c + 1 < *n && a[c + 1].key < a[c].key)
			c++;
		if (a[c].key >= last.key)
			break;
		a[i] = a[c];
		i = c;
	}
	if (*n)
		a[i] = last;
	return top;
}

/*
 * Keys from a few values, so that many tie, and one in eight NaN, which
 * no comparison orders: a pop's sift moves a NaN child up past the item
 * sifted down (its test is >=, not !<), and a push stops below one.
 */
TEST(heap_keeps_its_order_with_ties_and_nan_keys)
{
	struct hp_mem mem = { 0 };
	unsigned int seed = 11;

	for (int round = 0; round < 40; round++) {
		struct heap h = { 0 };
		struct heap_item ref[600];
		size_t nref = 0;

		for (int step = 0; step < 1500; step++) {
			bool push = nref < 600 &&
				    (!nref || rand_r(&seed) % 3);

			if (push) {
				double key = rand_r(&seed) % 8 ?
					     (double)(rand_r(&seed) % 9) : NAN;

				old_heap_push(ref, &nref, key, (uint32_t)step);
				ASSERT_EQ(0, hyper_plan__heap_push(&h, key,
							(uint32_t)step, &mem));
			} else {
				struct heap_item x = old_heap_pop(ref, &nref);
				struct heap_item y = hyper_plan__heap_pop(&h);

				ASSERT_EQ(x.val, y.val);
			}
			ASSERT_EQ(nref, h.n);
			for (size_t i = 0; i < nref; i++)
				ASSERT_EQ(ref[i].val, h.a[i].val)
					TH_LOG("round %d, step %d", round,
					       step);
		}
		hyper_plan__heap_free(&h);
	}
}

/*
 * A tie at the second floor (passes/plan.c, next_bucket(): a pick of the
 * first class equal to floor_beyond asks on, the tensor breaks the tie).
 * x1 and x (1 MB, the cheaper class, asked first) and y (8 MB, created
 * before x: the lower tensor) are read by one op; x1 is written first, x
 * and y by one op after it.  A transient p pushes the device over while
 * the link has room before the read: x1 is the first pick, through the
 * loop, which leaves floor_beyond at y's key from its second base; x then
 * leads the first class with the same start and use as y, and y is the
 * pick, as on the from-scratch path, where x would be if a pick equal to
 * the second floor ended the loop.
 */
TEST(classes_tied_at_the_second_floor_give_the_lower_tensor)
{
	static const uint32_t order[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	static const double scales[] = { 1.0, 1.3 };
	static const char *const idle[] = { "o4", "o5", "o6", "o7" };
	/* x1, y, x, p: their ids and quarters of a MB */
	static const char *const ids[] = { "x1", "y", "x", "p" };
	static const uint64_t quarters[] = { 4, 32, 4, 6 };
	const uint64_t mb = 1 << 20;
	uint32_t t[4];
	struct graph g;
	struct life lf;

	hyper_plan__graph_init(&g, "tie2");
	for (uint32_t i = 0; i < ARRAY_SIZE(t); i++)
		t[i] = hyper_plan__graph_add_tensor(&g, ids[i],
						    quarters[i] * mb / 4,
						    HYPER_KIND_ACTIVATION, 0,
						    NULL);
	hyper_plan__graph_add_op(&g, "o0", 10000000, NULL, 0, t, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o1", 10000000, NULL, 0, t + 1, 2, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o2", 10000000, NULL, 0, t + 3, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o3", 10000000, t + 3, 1, NULL, 0, NULL,
				 NULL);
	for (uint32_t k = 0; k < ARRAY_SIZE(idle); k++)
		hyper_plan__graph_add_op(&g, idle[k], 10000000, NULL, 0, NULL,
					 0, NULL, NULL);
	hyper_plan__graph_add_op(&g, "o8", 10000000, t, 3, NULL, 0, NULL,
				 NULL);
	hyper_plan__graph_add_op(&g, "o9", 10000000, NULL, 0, NULL, 0, NULL,
				 NULL);
	ASSERT_EQ(0, hyper_plan__life_build(&lf, &g, order, &g.mem));
	for (size_t v = 0; v < ARRAY_SIZE(scales); v++) {
		struct hp_mem mr = { 0 }, ms = { 0 };
		struct plan_ctx re, sc;

		ASSERT_EQ(0, hyper_plan__plan_init(&re, &lf, &gbps, &mr));
		ASSERT_EQ(0, hyper_plan__plan_init(&sc, &lf, &gbps, &ms));
		sc.scratch = true;
		same_sweep(_metadata, &re, &sc, 10 * mb, scales[v]);
		ASSERT_LE(2, re.nev);
		EXPECT_EQ(t[0], re.ev[0].t);	/* x1, then y */
		EXPECT_EQ(t[1], re.ev[1].t);
		EXPECT_LE(2, re.beyond_tries);	/* the second floor asked */
		hyper_plan__plan_free(&re);
		hyper_plan__plan_free(&sc);
	}
	hyper_plan__life_free(&lf);
	hyper_plan__graph_free(&g);
}

/*
 * The issue steps of a selection are the deadline order's alone
 * (passes/plan_take.c: a take records its due step, and
 * hyper_plan__issue_in_deadline_order() sets every prefetch's): the
 * evictions of selections that fit, issued again with their issue steps
 * scrambled, come out as they were.  Random graphs, a decode and MoE
 * training, at aims from the largest working set to the peak on links
 * of three speeds.
 */
TEST(issue_steps_come_from_the_deadlines_alone)
{
	static const double scales[] = { 1.0, 1.3, ANY_WAIT };
	struct plan_case cases[] = {
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 1500, 4 },
		{ "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t x = 0x3c6ef372fe94f82bULL, moved = 0;
	uint32_t fits = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		for (uint32_t k = 0; k < 24; k++) {
			struct plan_ctx *pc = &sp.re;
			struct evict *was;
			uint32_t fail;

			x = plan_xorshift(x);
			if (hyper_plan__plan_select(pc, sp.lo + x % (sp.span + 1),
						    scales[k % 3], &fail))
				continue;
			was = malloc((pc->nev + 1) * sizeof(*was));
			ASSERT_NE(NULL, was);
			memcpy(was, pc->ev, pc->nev * sizeof(*was));
			for (size_t v = 0; v < pc->nev; v++) {
				x = x * 6364136223846793005ULL + 1;
				if (pc->ev[v].j >= (int32_t)pc->lf->n)
					continue;
				pc->ev[v].fetch_step = (int32_t)((x >> 33) %
						       (pc->lf->n + 1));
				moved += pc->ev[v].fetch_step !=
					 was[v].fetch_step;
			}
			ASSERT_EQ(0, hyper_plan__issue_in_deadline_order(pc));
			EXPECT_EQ(0, memcmp(was, pc->ev,
					    pc->nev * sizeof(*was)));
			fits++;
			free(was);
		}
		pair_free(&sp);
	}
	EXPECT_LT(10, fits);
	EXPECT_LT(1000, moved);
}

/*
 * A phase's arrays in one block (util/huge.h, hyper_plan__block()):
 * every part starts on 64 bytes, after the part before it ends and
 * inside the block hu_block_len() sizes; the parts marked zeroed are
 * zero, the block starts on 2 MiB from a huge page's size on, and each
 * part can be written whole (ASan sees past the block).  One allocation
 * through the job's hp_mem: a failure injected there, or a size that
 * overflows, leaves every part's pointer NULL and the hp_mem failed.
 */
TEST(block_parts_aligned_disjoint_and_zeroed)
{
	static const size_t sizes[] = { 1, 4, 8, 12, 24 };
	static const size_t counts[] = {
		0, 1, 3, 65, 1000, 40000, 150000, 300000,
	};
	uint64_t x = 0x2545f4914f6cdd1dULL;

	for (int round = 0; round < 40; round++) {
		struct hp_mem mem = { 0 };
		struct hu_part part[9];
		void *p[9];
		size_t np = 1 + round % 9, len, end = 0;
		char *b;

		for (size_t i = 0; i < np; i++) {
			x = plan_xorshift(x);
			p[i] = &x;	/* set by the block */
			part[i] = (struct hu_part){
				.pp = &p[i],
				.n = counts[(x >> 8) % ARRAY_SIZE(counts)] >>
				     (round < 32 ? 4 : 0),
				.size = sizes[(x >> 20) % ARRAY_SIZE(sizes)],
				.zero = (x >> 30) & 1,
			};
		}
		ASSERT_TRUE(hu_block_len(part, np, &len));
		b = hyper_plan__block(&mem, part, np);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(1, mem.nr);
		ASSERT_FALSE(mem.failed);
		if (len >= HU_HUGE_PAGE)
			ASSERT_EQ(0, (uintptr_t)b % HU_HUGE_PAGE);
		for (size_t i = 0; i < np; i++) {
			char *q = p[i];
			size_t bytes = part[i].n * part[i].size;

			ASSERT_EQ(0, (uintptr_t)q % HU_PART_ALIGN)
				TH_LOG("round %d part %zu", round, i);
			ASSERT_TRUE(q >= b + end)
				TH_LOG("round %d part %zu", round, i);
			ASSERT_TRUE(q + bytes <= b + len);
			for (size_t k = 0; part[i].zero && k < bytes; k++) {
				ASSERT_EQ(0, q[k]) TH_LOG("round %d part %zu",
							  round, i);
			}
			end = q - b + bytes;
		}
		for (size_t i = 0; i < np; i++)	/* none overlaps another */
			memset(p[i], 0xa5, part[i].n * part[i].size);
		for (size_t i = 0; i < np; i++)
			for (size_t k = 0; k < part[i].n * part[i].size;
			     k += 4093) {
				ASSERT_EQ((char)0xa5, ((char *)p[i])[k]);
			}
		free(b);

		mem = (struct hp_mem){ .fail_at = 1 };
		for (size_t i = 0; i < np; i++)
			p[i] = &x;
		ASSERT_EQ(NULL, hyper_plan__block(&mem, part, np));
		ASSERT_TRUE(mem.failed);
		for (size_t i = 0; i < np; i++)
			ASSERT_EQ(NULL, p[i]);

		mem = (struct hp_mem){ 0 };
		for (size_t i = 0; i < np; i++)
			p[i] = &x;
		/* the bytes of a part, then its end aligned, past SIZE_MAX */
		part[np - 1].size = 8;
		part[np - 1].n = SIZE_MAX / 8 + (round & 1);
		ASSERT_FALSE(hu_block_len(part, np, &len));
		ASSERT_EQ(NULL, hyper_plan__block(&mem, part, np));
		ASSERT_TRUE(mem.failed);
		for (size_t i = 0; i < np; i++)
			ASSERT_EQ(NULL, p[i]);
	}
}

/*
 * A calendar's arrays lie in one block where they span a huge page, and
 * stay apart below (passes/calendar.c): one allocation for a big
 * calendar's, on a 2 MiB bound, one an array for a small one's; each array
 * apart from the others and whole, the tree's padding past step n intact
 * after every array is written end to end, and the twins' base freed
 * with the last of them.  Every allocation failing in turn frees what
 * came before (the test run under ASan sees a leak).
 */
static void cal_fill(void *p, size_t bytes, int v, size_t *len)
{
	if (p)
		memset(p, v, bytes);
	*len = p ? bytes : 0;
}

static void cal_filled(struct __test_metadata *_metadata, const void *p,
		       size_t bytes, int v)
{
	const unsigned char *q = p;
	size_t k = 0;

	while (k < bytes && q[k] == v)
		k++;
	ASSERT_EQ(bytes, k) TH_LOG("byte %zu of %zu", k, bytes);
}

TEST(calendar_arrays_in_one_block)
{
	static const uint32_t ns[] = { 0, 1, 5, 8, 1000, 300000 };
	static const unsigned int uses[] = { CAL_LATEST, CAL_RUNS, CAL_ALL };

	for (size_t i = 0; i < ARRAY_SIZE(ns); i++) {
		for (size_t u = 0; u < ARRAY_SIZE(uses); u++) {
			uint32_t n = ns[i];
			struct hp_mem mem = { 0 };
			struct calendar c, t;
			size_t len[7], k, top2;
			const void *p[7];

			uint64_t arrays, all;
			bool big = n >= 300000;

			/* cap and fen, left, or right, zeros and used */
			arrays = 2 + (uses[u] & CAL_LATEST ? 1 : 0) +
				 (uses[u] & CAL_RUNS ? 3 : 0);
			ASSERT_EQ(0, hyper_plan__cal_init(&c, n, uses[u],
							  &mem));
			/* the base's struct and tree, and the undo list */
			ASSERT_EQ((big ? 1 : arrays) + 3, mem.nr);
			ASSERT_EQ(0, hyper_plan__cal_init_twin(&t, &c, uses[u],
							       &mem));
			all = mem.nr;
			ASSERT_EQ(2 * (big ? 1 : arrays) + 4, all);
			ASSERT_EQ(c.base, t.base);
			ASSERT_EQ(2, c.base->refs);
			top2 = 2 * (size_t)c.top;
			ASSERT_EQ(big, !!c.blk);
			ASSERT_EQ(big, !!t.blk);
			if (big) {
				ASSERT_EQ(0, (uintptr_t)c.blk % HU_HUGE_PAGE);
				ASSERT_EQ((void *)c.cap, c.blk);
			}
			cal_fill(c.cap, n * sizeof(*c.cap), 0x11, &len[0]);
			cal_fill(c.left, (n + 1) * sizeof(*c.left), 0x22,
				 &len[1]);
			cal_fill(c.right, (n + 1) * sizeof(*c.right), 0x33,
				 &len[2]);
			cal_fill(c.zeros, (n + 1) * sizeof(*c.zeros), 0x44,
				 &len[3]);
			cal_fill(c.used, n, 0x55, &len[4]);
			cal_fill(c.undo, CAL_UNDO * sizeof(*c.undo), 0x66,
				 &len[5]);
			cal_fill(c.base->fen0, (n + 1) * sizeof(double), 0x77,
				 &len[6]);
			memset(c.fen, 0x08, (n + 1) * sizeof(*c.fen));
			memset(t.cap, 0x09, n * sizeof(*t.cap));
			memset(t.fen, 0x0a, (n + 1) * sizeof(*t.fen));
			memset(t.undo, 0x0b, CAL_UNDO * sizeof(*t.undo));
			p[0] = c.cap;
			p[1] = c.left;
			p[2] = c.right;
			p[3] = c.zeros;
			p[4] = c.used;
			p[5] = c.undo;
			p[6] = c.base->fen0;
			for (k = 0; k < 7; k++)
				cal_filled(_metadata, p[k], len[k], 0x11 * (k + 1));
			cal_filled(_metadata, c.fen, (n + 1) * sizeof(*c.fen),
				   0x08);
			for (k = (size_t)n + 1; k < top2; k++) {
				ASSERT_EQ(INFINITY, c.fen[k]);
				ASSERT_EQ(INFINITY, t.fen[k]);
			}
			ASSERT_EQ(!(uses[u] & CAL_LATEST), !c.left);
			ASSERT_EQ(!(uses[u] & CAL_RUNS), !c.used);
			hyper_plan__cal_free(&c);
			ASSERT_EQ(1, t.base->refs);
			cal_filled(_metadata, t.base->fen0,
				   (n + 1) * sizeof(double), 0x77);
			hyper_plan__cal_free(&t);
			ASSERT_EQ(NULL, t.blk);

			for (uint64_t f = 1; f <= all; f++) {
				int r;

				mem = (struct hp_mem){ .fail_at = f };
				r = hyper_plan__cal_init(&c, n, uses[u], &mem);
				if (r) {
					ASSERT_EQ(NULL, c.cap);
					ASSERT_EQ(NULL, c.base);
				} else {
					r = hyper_plan__cal_init_twin(&t, &c,
								      uses[u],
								      &mem);
					ASSERT_EQ(NULL, t.cap);
					ASSERT_EQ(1, c.base->refs);
					hyper_plan__cal_free(&c);
				}
				ASSERT_EQ(-ENOMEM, r);
				ASSERT_TRUE(mem.failed);
			}
		}
	}
}

/*
 * hu_block_size() (util/huge.h): the one rounding rule of a block's
 * bytes.  Below a huge page, and with an end past the last whole huge
 * page shorter than HU_HUGE_TAIL, a block is its bytes; a longer end
 * rounds up to one more huge page, but where that would pass SIZE_MAX.
 * hu_block_huge() allocates that many (ASan: exactly that many; every
 * byte written), on 2 MiB from a huge page on.
 */
TEST(block_size_is_what_block_huge_allocates)
{
	const size_t hp = HU_HUGE_PAGE, tail = HU_HUGE_TAIL;
	const size_t top = SIZE_MAX & ~(HU_HUGE_PAGE - 1);
	static const struct {
		size_t huge, extra, want_huge, want_extra;
	} rule[] = {
		{ 0, 0, 0, 0 },
		{ 0, 1, 0, 1 },
		{ 0, HU_HUGE_TAIL, 0, HU_HUGE_TAIL },
		{ 0, HU_HUGE_PAGE - 1, 0, HU_HUGE_PAGE - 1 },
		{ 1, 0, 1, 0 },
		{ 1, 1, 1, 1 },
		{ 1, HU_HUGE_TAIL - 1, 1, HU_HUGE_TAIL - 1 },
		{ 1, HU_HUGE_TAIL, 2, 0 },
		{ 1, HU_HUGE_PAGE - 1, 2, 0 },
		{ 7, 24, 7, 24 },
		{ 7, HU_HUGE_TAIL + 5, 8, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rule); i++) {
		size_t len = rule[i].huge * hp + rule[i].extra;
		size_t want = rule[i].want_huge * hp + rule[i].want_extra;
		struct hu_part part;
		char *p, *b;

		EXPECT_EQ(want, hu_block_size(len)) TH_LOG("rule %zu", i);
		part = (struct hu_part)HU_PART(p, len, false);
		b = hu_block_huge(&part, 1);
		ASSERT_NE(NULL, b);
		ASSERT_EQ(b, p);
		EXPECT_LE(want ? want : 1, malloc_usable_size(b));
		EXPECT_GT(want + 4096, malloc_usable_size(b))
			TH_LOG("rule %zu: %zu bytes for %zu", i,
			       malloc_usable_size(b), want);
		if (len >= hp)
			EXPECT_EQ(0, (uintptr_t)b % hp);
		memset(b, 0x5a, want);
		free(b);
	}
	/* at the top of size_t: rounded where the next page fits */
	EXPECT_EQ(SIZE_MAX, hu_block_size(SIZE_MAX));
	EXPECT_EQ(top + tail, hu_block_size(top + tail));
	EXPECT_EQ(top, hu_block_size(top - hp + tail));
	EXPECT_EQ(top - hp + tail - 1, hu_block_size(top - hp + tail - 1));
}

/*
 * The emitter's block path (passes/sched.c, items_room()): where the
 * items and their sort's other half span a huge page (87,382 items or
 * more, at least three an eviction) they are one block, kept in the
 * probes' buffer for smaller probes.  A random graph of 16,000
 * operators, distance evictions of a quarter of its tensors (two
 * arrays), all of them (the block), then fewer again through the kept
 * block: each schedule emitted through the buffer is the one built
 * alone, which below the block's size is built on two arrays of its
 * own, so a block whose parts overlap or end short is seen.
 * emitter_items_block_grows_and_is_kept's probes never reach the block.
 */
TEST(emitter_block_kept_emits_as_two_arrays)
{
	static const unsigned int shifts[] = { 2, 0, 2, 3, 0, 1 };
	const struct plan_case pc = { NULL, NULL, 16000, 41 };
	struct hp_emitbuf buf = { 0 };
	struct hp_mem mem = { 0 };
	struct distance_ctx d;
	size_t most, small = 0;
	struct hp_err e;
	struct job j = { 0 };

	ASSERT_EQ(0, case_job(&j, &pc, &hyper_plan__profile_table[0], &e))
		TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__distance_init(&d, &j.lf, &mem));
	most = emit_shifted(_metadata, &j, &d, shifts, ARRAY_SIZE(shifts),
			    true, &buf, &mem, &small);
	/* three items an eviction at least: the block was made */
	EXPECT_LE(87382, 3 * most);
	/* and a quarter's, at most that and two an access, alone on two */
	EXPECT_GT(87382, 3 * small + 2 * (size_t)j.lf.n);
	hyper_plan__emitbuf_free(&buf);
	hyper_plan__distance_free(&d);
	hyper_plan__job_free(&j);
}

/*
 * The residency without offload (passes/life.c, gaps(): one pair of
 * differences per run of steps a tensor holds) against a plain walk of
 * every access and live gap, each its own pair: each step's residency,
 * the end's slot (base[n], its difference left as written) and the
 * peak, on random graphs (pinned, live_out and rewritten tensors), a
 * decode and a training step.
 */
TEST(life_residency_matches_gap_walk)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 1 }, { NULL, NULL, 600, 2 },
		{ NULL, NULL, 1000, 3 }, { NULL, NULL, 1500, 4 },
		{ NULL, NULL, 2000, 5 }, { "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t runs = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct job j = { 0 };
		const struct life *lf = &j.lf;
		struct hp_err e;
		int64_t *d, run = 0;
		uint64_t peak = 0;
		uint32_t t, k;

		ASSERT_EQ(0, case_job(&j, &cases[c],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		d = calloc((size_t)lf->n + 1, sizeof(*d));
		ASSERT_NE(NULL, d);
		for (t = 0; t < j.g.nt; t++) {
			int64_t b = j.g.t[t].bytes, a, z, was = -2;
			size_t cnt = nr_accesses(lf, t), i;

			for (i = 0; i < cnt; i++) {
				k = lf->acc_step[lf->acc_off[t] + i];
				d[k] += b;
				d[k + 1] -= b;
			}
			for (i = 0; i <= cnt; i++) {
				hyper_plan__gap_ends(lf, t, i, &a, &z);
				if (!hyper_plan__gap_live(lf, t, i) ||
				    a + 1 > z - 1)
					continue;
				d[a + 1] += b;
				d[z] -= b;
				runs += a + 1 != was;
				was = z;
			}
		}
		for (k = 0; k < lf->n; k++) {
			run += d[k];
			ASSERT_EQ(run, (int64_t)lf->base[k])
				TH_LOG("case %zu step %u", c, k);
			if ((uint64_t)run > peak)
				peak = run;
		}
		ASSERT_EQ(d[lf->n], (int64_t)lf->base[lf->n]);
		ASSERT_EQ(peak, lf->peak0);
		free(d);
		hyper_plan__job_free(&j);
	}
	EXPECT_LT(1000, runs);
}

/*
 * The distance baseline's longest gaps (policy_distance.c's
 * longest_gap(), one walk over a tensor's accesses) against gap_ends()
 * and gap_live() on made-up lives that a real graph's life pass does not
 * give: a first access that reads a value not live in, gaps that end in
 * a write after a long dead stretch, never-touched and pinned tensors,
 * every flag mix; and equal-gap groups of every size for the
 * bit-reversed spread.
 */
TEST(distance_gaps_on_made_up_lives)
{
	for (uint32_t round = 0; round < 40; round++) {
		uint32_t nt = 1 + round * 7, steps = 8 + round * 3, t, x;
		struct tensor *ts = calloc(nt, sizeof(*ts));
		size_t *off = calloc((size_t)nt + 1, sizeof(*off));
		uint32_t *step = calloc((size_t)nt * steps, sizeof(*step));
		uint8_t *rw = calloc((size_t)nt * steps, 1);
		struct graph g = { 0 };
		struct life lf = { 0 };
		uint64_t seed = 0x9e3779b97f4a7c15ULL * (round + 1);
		size_t m = 0;

		ASSERT_NE(NULL, ts);
		ASSERT_NE(NULL, off);
		ASSERT_NE(NULL, step);
		ASSERT_NE(NULL, rw);
		for (t = 0; t < nt; t++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			ts[t].flags = (uint8_t)((seed >> 33) & 7) &
				      (TF_LIVE_IN | TF_LIVE_OUT |
				       ((seed >> 40) % 5 ? 0 : TF_PIN));
			off[t] = m;
			for (x = 0; x < steps; x++) {
				seed = seed * 6364136223846793005ULL +
				       1442695040888963407ULL;
				if ((seed >> 35) % (2 + round % 5))
					continue;
				step[m] = x;
				rw[m++] = (uint8_t)(1 + (seed >> 50) % 3);
			}
		}
		off[nt] = m;
		g.t = ts;
		g.nt = nt;
		lf.g = &g;
		lf.n = steps;
		lf.acc_off = off;
		lf.acc_step = step;
		lf.acc_rw = rw;
		rank_against_sort(_metadata, &lf);
		free(ts);
		free(off);
		free(step);
		free(rw);
	}
}

/*
 * hu_jbuf_dec() writes a number's digits forward from table words:
 * every value below 10^4 (each word of the table), and for every digit
 * count from 1 to 20 its least and greatest values and pseudo-random
 * ones between, must read as printf() writes them, with nothing stored
 * before the cursor or more than HU_JBUF_DEC_OVER bytes past the end.
 */
static void dec_one(struct __test_metadata *_metadata, uint64_t v)
{
	char want[24], buf[64], *end;
	unsigned int len = hu_dec_len(v), i;

	snprintf(want, sizeof(want), "%" PRIu64, v);
	ASSERT_EQ(strlen(want), len);
	memset(buf, '#', sizeof(buf));
	end = hu_jbuf_dec(buf + 8, v, len);
	ASSERT_EQ(buf + 8 + len, end);
	ASSERT_EQ(0, memcmp(buf + 8, want, len)) TH_LOG("%s", want);
	for (i = 0; i < 8; i++)
		ASSERT_EQ('#', buf[i]) TH_LOG("%s", want);
	for (i = 8 + len + HU_JBUF_DEC_OVER; i < sizeof(buf); i++)
		ASSERT_EQ('#', buf[i]) TH_LOG("%s", want);
	memset(buf, '#', sizeof(buf));
	ASSERT_EQ(buf + 3 + len, hu_cur_u64(buf + 3, v));
	ASSERT_EQ(0, memcmp(buf + 3, want, len)) TH_LOG("%s", want);
}

TEST(json_dec_forward_is_printf)
{
	uint64_t lo = 1, x = 88172645463325252ULL;

	for (uint64_t v = 0; v < 10000; v++)
		dec_one(_metadata, v);
	for (unsigned int len = 1; len <= 20; len++, lo *= 10) {
		uint64_t hi = len == 20 ? UINT64_MAX : lo * 10 - 1;

		dec_one(_metadata, len == 1 ? 0 : lo);
		dec_one(_metadata, hi);
		for (unsigned int i = 0; i < 2000; i++) {
			x = plan_xorshift(x);
			dec_one(_metadata, lo + x % (hi - lo + 1));
		}
	}
}

/*
 * hyper_plan__plan_init() lists the candidates walking each tensor's
 * accesses itself, counting what index_by_use() needs as it goes
 * (passes/plan.c, tensor_cands()): the same candidates, in the same
 * order, as asking hyper_plan__gap_ends() and hyper_plan__gap_live() of
 * every gap, with the same epochs, last writes, start gaps, smallness,
 * cheapest prefetch and liveness at reset; and the index as
 * check_index() says, on random graphs (pinned, live_in and live_out
 * tensors, tensors written twice), a decode and a training step, under
 * two profiles.
 */
TEST(cands_match_gap_walk)
{
	struct plan_case cases[] = {
		{ NULL, NULL, 300, 21 }, { NULL, NULL, 800, 22 },
		{ NULL, NULL, 1500, 23 }, { "llama2-7b", "infer", 0, 1 },
		{ "olmoe-1b-7b", "train", 0, 1 },
	};
	uint64_t seen[5] = { 0 };	/* start, inner, end gaps, small, epoch > 0 */

	for (size_t c = 0; c < 2 * ARRAY_SIZE(cases); c++) {
		const struct profile *p = &hyper_plan__profile_table[c & 1];
		struct hp_mem mem = { 0 };
		struct plan_ctx pc;
		struct job j = { 0 };
		struct hp_err e;
		size_t x = 0;
		uint32_t t, ep = 0;
		double min_fetch = 1e300;

		ASSERT_EQ(0, case_job(&j, &cases[c / 2], p, &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__plan_init(&pc, &j.lf, &j.p, &mem));
		for (t = 0; t < j.g.nt; t++) {
			const struct life *lf = &j.lf;
			size_t cnt = nr_accesses(lf, t), i;
			size_t base = lf->acc_off[t];
			double bytes = j.g.t[t].bytes;
			bool small = bytes / j.p.h2d_bps * 1e9 < j.p.latency_ns ||
				     bytes / j.p.d2h_bps * 1e9 < j.p.latency_ns;
			uint32_t fg = NONE, writes = 0;
			int32_t w = -1;
			int64_t a, z;

			if (j.g.t[t].flags & TF_PIN) {
				ASSERT_EQ(NONE, pc.first_gap[t]);
				continue;
			}
			for (i = 0; i <= cnt; i++) {
				if (i && (lf->acc_rw[base + i - 1] & ACC_W)) {
					w = lf->acc_step[base + i - 1];
					writes++;
				}
				hyper_plan__gap_ends(lf, t, i, &a, &z);
				if (!hyper_plan__gap_live(lf, t, i) ||
				    a + 1 > z - 1)
					continue;
				ASSERT_LT(x, pc.nc);
				ASSERT_EQ(t, pc.c[x].t) TH_LOG("case %zu at %zu", c, x);
				ASSERT_EQ(a, pc.c[x].a) TH_LOG("case %zu at %zu", c, x);
				ASSERT_EQ(z, pc.c[x].j) TH_LOG("case %zu at %zu", c, x);
				ASSERT_EQ(w, pc.c[x].w) TH_LOG("case %zu at %zu", c, x);
				ASSERT_EQ(ep + writes, pc.c[x].epoch);
				ASSERT_EQ(small, pc.c[x].small);
				ASSERT_EQ(!small, pc.alive0[x]);
				if (a < 0)
					fg = x;
				if (z < lf->n && !small &&
				    h2d_ns(&j.p, bytes) < min_fetch)
					min_fetch = h2d_ns(&j.p, bytes);
				seen[a < 0 ? 0 : z == lf->n ? 2 : 1]++;
				seen[3] += small;
				seen[4] += writes > 0;
				x++;
			}
			ASSERT_EQ(fg, pc.first_gap[t]) TH_LOG("tensor %u", t);
			ep += writes + 1;
		}
		ASSERT_EQ(x, pc.nc);
		ASSERT_EQ(ep, pc.nep);
		ASSERT_EQ(min_fetch, pc.min_fetch);
		check_index(_metadata, &pc);
		hyper_plan__plan_free(&pc);
		hyper_plan__job_free(&j);
	}
	for (size_t k = 0; k < ARRAY_SIZE(seen); k++) {
		EXPECT_LT(0, seen[k]) TH_LOG("kind %zu", k);
	}
}

/*
 * A writer at a cursor (hu_jbuf_at(), hu_jbuf_room(), hu_jbuf_set())
 * writes what stdio writes: pieces of every size up to the room asked
 * for, across many flushes, each number's words past its end written
 * over by the next piece, and a hu_jbuf_*() call between cursors.
 */
TEST(json_cursor_writes_what_stdio_writes)
{
	static const char *const words[] = {
		"", ", ", "  { \"id\": ", "x", "0123456789abcdefghij",
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	struct jpair j;
	char *p;

	jpair_open(_metadata, &j);
	p = hu_jbuf_at(&j.w);
	for (unsigned int i = 0; i < 40000; i++) {
		const char *wd = words[i % 5];
		uint64_t v;

		x = plan_xorshift(x);
		v = x >> (x & 63);
		p = hu_jbuf_room(&j.w, p, 64);
		hu_copy_short(p, wd, strlen(wd));
		p = hu_cur_u64(p + strlen(wd), v);
		p = HU_CUR_LIT(p, " ]");
		fprintf(j.fa, "%s%" PRIu64 " ]", wd, v);
		if (i % 1000 == 999) {
			hu_jbuf_set(&j.w, p);
			hu_jbuf_str(&j.w, "a\"b");
			fputs("\"a\\\"b\"", j.fa);
			p = hu_jbuf_at(&j.w);
		}
	}
	hu_jbuf_set(&j.w, p);
	jpair_agree(_metadata, &j);
}

/*
 * An id for tensor or op @i of a graph whose ids the writer and the
 * identity must take as the graph measured them: a third need an escape
 * (a quote, a backslash, a tab, a DEL), the others carry a two- or
 * three-byte UTF-8 character or nothing odd, all of lengths from 2 to
 * HP_MAX_ID bytes.  Distinct: the number comes first, then a letter.
 */
static void odd_graph_id(char id[HP_MAX_ID + 1], uint32_t i)
{
	static const char *const piece[] = {
		"q\"uote", "plain", "back\\slash", "\xc3\xa9t\xc3\xa9",
		"tab\there", "euro\xe2\x82\xac", "del\x7f",
	};
	int n = snprintf(id, HP_MAX_ID + 1, "%u%s", i, piece[i % 7]);
	size_t len = (size_t)n + (i * 37) % (HP_MAX_ID + 1 - (size_t)n);

	memset(id + n, 'a' + (int)(i % 26), len - (size_t)n);
	id[len] = '\0';
}

/*
 * The graph measures each id as it takes it (struct tensor's and struct
 * op's @id_len and @id_plain): its length, and whether no byte needs a
 * JSON escape, as hu_json_plain_len() says.  The schedule's writer and
 * the graph's identity take them from there: on a graph with ids of
 * every kind above, for tensors and ops (the writer once measured
 * tensor ids itself and wrote op ids through hu_jbuf_str()), the
 * schedule is what the plain writer gives, byte for byte, and the
 * identity its definition.
 */
TEST(graph_measures_ids_for_the_writer)
{
	static const struct plan_case c = { "llama3-8b", "train", 0, 1 };
	char id[HP_MAX_ID + 1], hash[HYPER_GRAPH_HASH_LEN];
	char want_hash[HYPER_GRAPH_HASH_LEN], *text, *want;
	uint32_t plain[2] = { 0 }, escaped[2] = { 0 };
	struct goal gl = { 0.01, 0 };
	struct job j = { 0 }, k = { 0 };
	struct problem pb;
	struct result r;
	struct hp_err e;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e))
		TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__graph_init(&k.g, "odd ids"));
	k.p = j.p;
	memcpy(k.g.timed_on, j.g.timed_on, sizeof(k.g.timed_on));
	for (uint32_t t = 0; t < j.g.nt; t++) {
		const struct tensor *x = &j.g.t[t];

		uint32_t got;

		odd_graph_id(id, t);
		got = hyper_plan__graph_add_tensor(&k.g, t % 3 ? x->id : id,
						   x->bytes, x->kind, x->flags,
						   &e);
		ASSERT_EQ(t, got) TH_LOG("%s", e.msg);
	}
	for (uint32_t i = 0; i < j.g.nop; i++) {
		const struct op *o = &j.g.op[i];

		uint32_t got;

		odd_graph_id(id, i);
		got = hyper_plan__graph_add_op(&k.g, i % 3 != 1 ? o->id : id,
					       o->compute_ns, op_in(&j.g, o),
					       o->n_in, op_out(&j.g, o),
					       o->n_out, &o->gemm, &e);
		ASSERT_EQ(i, got) TH_LOG("%s", e.msg);
		k.g.op[i].flops = o->flops;
		k.g.op[i].bytes = o->bytes;
	}
	for (uint32_t t = 0; t < k.g.nt; t++) {
		const struct tensor *x = &k.g.t[t];
		bool p = hu_json_plain_len(x->id) != SIZE_MAX;

		EXPECT_EQ(strlen(x->id), x->id_len) TH_LOG("tensor %u", t);
		EXPECT_EQ(p, x->id_plain) TH_LOG("tensor %u", t);
		(p ? plain : escaped)[0]++;
	}
	for (uint32_t i = 0; i < k.g.nop; i++) {
		const struct op *o = &k.g.op[i];
		bool p = hu_json_plain_len(o->id) != SIZE_MAX;

		EXPECT_EQ(strlen(o->id), o->id_len) TH_LOG("op %u", i);
		EXPECT_EQ(p, o->id_plain) TH_LOG("op %u", i);
		(p ? plain : escaped)[1]++;
	}
	for (int w = 0; w < 2; w++) {
		EXPECT_LT(5, plain[w]);
		EXPECT_LT(5, escaped[w]);
	}
	hyper_plan__graph_identity(&k.g, hash);
	id_ref(&k.g, want_hash);
	EXPECT_STREQ(want_hash, hash);
	ASSERT_EQ(0, hyper_plan__job_prepare(&k, false, &e)) TH_LOG("%s", e.msg);
	hyper_plan__job_problem(&k, &pb, &gl, &k.g.mem);
	ASSERT_EQ(0, hyper_plan__run_plan(&pb, &r, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, 0, &k.g.mem, &e));
	text = schedule_text(&r.s);
	want = ref_schedule_text(&r.s);
	EXPECT_STREQ(want, text);
	EXPECT_NE(NULL, strstr(text, "back\\\\slash"));
	free(text);
	free(want);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
	hyper_plan__job_free(&k);
}

/*
 * An id all ASCII is taken with no byte-by-byte check (all_ascii(),
 * libhyperplan/graph/graph.c, a word at a time): one byte from 0x80 in
 * any place of an id of any length still sends it through the UTF-8
 * check, which refuses a lone 0xff at its byte and takes a two-byte
 * character.
 */
TEST(graph_ids_checked_as_utf8_in_every_place)
{
	char id[HP_MAX_ID + 1], want[64];
	struct hp_err e;
	struct graph g;
	uint32_t n = 0, got;

	ASSERT_EQ(0, hyper_plan__graph_init(&g, "utf-8"));
	for (size_t len = 2; len <= HP_MAX_ID; len++)
		for (size_t at = 0; at + 1 < len; at++) {
			memset(id, 'a' + (int)(len % 26), len);
			id[len] = '\0';
			id[at] = (char)0xff;
			e.msg[0] = '\0';
			got = hyper_plan__graph_add_tensor(&g, id, 1,
							   HYPER_KIND_WEIGHT,
							   0, &e);
			EXPECT_EQ(NONE, got);
			snprintf(want, sizeof(want),
				 "id is not valid UTF-8 (byte %zu)", at);
			EXPECT_NE(NULL, strstr(e.msg, want))
				TH_LOG("length %zu, at %zu: %s", len, at, e.msg);
			/* "é" in its place: each id its own */
			id[at] = (char)0xc3;
			id[at + 1] = (char)0xa9;
			got = hyper_plan__graph_add_tensor(&g, id, 1,
							   HYPER_KIND_WEIGHT,
							   0, &e);
			EXPECT_EQ(n, got)
				TH_LOG("length %zu, at %zu: %s", len, at, e.msg);
			n++;
		}
	hyper_plan__graph_free(&g);
}

/*
 * After a sweep of a context that guesses the class to ask first
 * (passes/plan.c, class_guess()): the floors and floor_others hold for
 * the class it asks first (floors_below_scan()), every guess names a
 * class, and @count counts the sweeps that ended with the guess on
 * another class than the last pick's.
 */
static void guess_floors_scan(struct __test_metadata *_metadata,
			      const struct plan_ctx *pc, uint64_t *count)
{
	uint64_t exact = 0, bad = 0;

	floors_below_scan(_metadata, pc, &exact);
	for (size_t x = 0; x < (size_t)pc->ncls * pc->ncls; x++)
		bad += (uint8_t)pc->cls_next[x] >= pc->ncls;
	ASSERT_EQ(0, bad);
	ASSERT_GT(pc->ncls, pc->cls_pick);
	*count += pc->cls_pick != pc->cls_won;
}

/*
 * The class asked first guessed from the last two picks' classes
 * (passes/plan.c, class_guess(), class_after_loop(), class_guess_first())
 * from the first pick on, against the from-scratch path, which asks every
 * class at every pick, and against a scan after each sweep: the class
 * asked first is then not the last pick's, and floor_others and
 * floor_beyond must leave out its floor, not the last pick's (a pick of
 * the guessed class below them asks no other class).  Aims in each
 * quarter, links of three speeds, the class floors' seven graphs.
 */
TEST(sweep_guessed_first_class_as_scratch)
{
	uint64_t x = 0x3c6ef372fe94f82bULL, moved = 0;

	for (size_t i = 0; i < ARRAY_SIZE(class_cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &class_cases[i]);
		sp.re.guess_left = 0;
		sp.re.guess_on = true;
		quarter_sweeps(_metadata, &sp, &x, guess_floors_scan, &moved);
		pair_free(&sp);
	}
	EXPECT_LT(10, moved);
}

/*
 * Whether the guess is used (passes/plan.c, class_after_loop()): at a
 * decode, where the classes come round in a layer's order and the last
 * pick's class is seldom the next, it is; on random graphs, where
 * neither names the next class often, it is not.  Aims in each quarter,
 * 96 sweeps: enough loops over the classes to decide.
 */
TEST(class_guess_used_where_it_pays)
{
	static const struct plan_case cases[] = {
		{ "llama2-7b", "infer", 0, 1 }, { "gpt2", "infer", 0, 1 },
		{ NULL, NULL, 600, 2 }, { NULL, NULL, 2000, 33 },
	};
	static const bool used[] = { true, true, false, false };
	uint64_t x = 0xa54ff53a5f1d36f1ULL, moved = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sweep_pair sp;

		pair_init(_metadata, &sp, &cases[i]);
		quarter_sweeps(_metadata, &sp, &x, guess_floors_scan, &moved);
		quarter_sweeps(_metadata, &sp, &x, guess_floors_scan, &moved);
		EXPECT_EQ(0, sp.re.guess_left) TH_LOG("case %zu", i);
		EXPECT_EQ(used[i], sp.re.guess_on) TH_LOG("case %zu", i);
		pair_free(&sp);
	}
	EXPECT_LT(10, moved);
}

TEST_HARNESS_MAIN
