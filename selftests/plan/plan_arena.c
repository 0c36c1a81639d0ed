// SPDX-License-Identifier: GPL-2.0
/*
 * The planner's arena layout, over many generated graphs:
 *  - no two residencies live at the same time share a byte, each offset
 *    is aligned and inside the arena, the arena is at least the peak
 *    (an independent replay of the schedule, not the planner's own);
 *  - under a budget the arena fits it, or the plan carries no offsets and
 *    says by how much it would not have fit;
 *  - the layout reaches libhyper the same through JSON and in process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include <hyper/plan.h>

#include "api/api.h"
#include "policies/list.h"
#include "out/output.h"
#include "plan_cases.h"
#include "plan_chain.h"
#include "util/arena.h"
#include "util/arena_int.h"
#include "util/sort.h"

#define SLOW	0.01

struct rival {
	uint64_t start, end, off, bytes;
	uint64_t raw;		/* the tensor's bytes, not rounded */
};

/* The schedule's residencies, replayed here from its slots. */
static size_t replay(const struct sched *s, struct rival *v, uint32_t *next)
{
	const struct graph *g = s->g;
	uint64_t now = 0;
	size_t n = 0;
	int64_t *open = calloc(g->nt, sizeof(*open));

#define BEGIN(x) do {							\
		if (!open[x]) {						\
			v[n] = (struct rival){ now, UINT64_MAX,		\
				s->res_off[s->res_first[x] + next[x]++], \
				(g->t[x].bytes + 63) / 64 * 64,		\
				g->t[x].bytes };			\
			open[x] = (int64_t)++n;				\
		}							\
	} while (0)
	for (uint32_t t = 0; t < g->nt; t++)
		if (s->home[t] == HYPER_HOME_DEVICE)
			BEGIN(t);
	now++;
	for (uint32_t k = 0; k < s->n; k++) {
		const struct op *o = &g->op[s->order[k]];

		/* "before", then the operator's defines, then "after" */
		for (int part = 0; part < 3; part++) {
			size_t sl = 2 * (size_t)k + (part == 2);

			if (part == 1) {
				for (uint32_t j = 0; j < o->n_out; j++, now++)
					BEGIN(op_out(g, o)[j]);
				continue;
			}
			for (size_t i = s->slot_off[sl]; i < s->slot_off[sl + 1]; i++, now++) {
				uint32_t t = s->cops[i].t;

				if (s->cops[i].kind == HYPER_OP_PREFETCH) {
					BEGIN(t);
				} else if (s->cops[i].kind == HYPER_OP_DETACH && open[t]) {
					v[open[t] - 1].end = now;
					open[t] = 0;
				}
			}
		}
	}
#undef BEGIN
	free(open);
	return n;
}

/* Checks @r's layout; returns 1 if it has one, 0 if it (rightly) has none. */
static int layout_ok(struct __test_metadata *_metadata, const struct job *j,
		     const struct result *r, uint64_t limit)
{
	const struct sched *s = &r->s;
	struct rival *v;
	uint32_t *next;
	uint64_t live_max = 0, raw_max = 0;
	size_t n;

	if (!s->res_off) {
		/* Only when even a lower budget could not make it fit. */
		EXPECT_NE(0, limit);
		EXPECT_GT(s->arena_over, limit) TH_LOG("%s", j->g.name);
		return 0;
	}
	EXPECT_EQ(0, s->arena_over);
	if (limit) {
		EXPECT_LE(s->arena, limit) TH_LOG("%s", j->g.name);
	}
	EXPECT_GE(s->arena, s->res_peak) TH_LOG("%s", j->g.name);
	v = calloc(s->res_first[j->g.nt] + 1, sizeof(*v));
	next = calloc(j->g.nt, sizeof(*next));
	n = replay(s, v, next);
	EXPECT_EQ(s->res_first[j->g.nt], n);
	for (uint32_t t = 0; t < j->g.nt; t++)
		EXPECT_EQ(s->res_first[t + 1] - s->res_first[t], next[t]);
	for (size_t a = 0; a < n; a++) {
		uint64_t live = 0, raw = 0;

		EXPECT_EQ(0, v[a].off % HYPER_ARENA_ALIGN);
		EXPECT_LE(v[a].off + v[a].bytes, s->arena);
		for (size_t b = 0; b < n; b++) {
			bool together = v[a].start < v[b].end && v[b].start < v[a].end;

			if (together && v[a].start >= v[b].start) {
				live += v[b].bytes;
				raw += v[b].raw;
			}
			if (b <= a || !together)
				continue;
			EXPECT_TRUE(v[a].off + v[a].bytes <= v[b].off ||
				    v[b].off + v[b].bytes <= v[a].off) {
				TH_LOG("%s: residencies %zu and %zu overlap", j->g.name, a, b);
			}
		}
		if (live > live_max)
			live_max = live;
		if (raw > raw_max)
			raw_max = raw;
	}
	/* The tallest moment fits under the arena: it is a real floor. */
	EXPECT_LE(live_max, s->arena);
	EXPECT_LE(s->res_peak, live_max);
	/* the peak residency reported: the most live at one start, exactly */
	EXPECT_EQ(raw_max, s->res_peak) TH_LOG("%s", j->g.name);
	free(next);
	free(v);
	return 1;
}

static int one(struct __test_metadata *_metadata, const struct plan_case *c,
	       const struct profile *p, double where)
{
	struct goal gl = { SLOW, 0 };
	struct problem pb;
	struct result r;
	struct job j = { 0 };
	struct hp_err e;
	int laid = 0;

	if (case_job(&j, c, p, &e))
		return 0;
	if (where > 0) {
		uint64_t floor = hyper_plan__life_floor(&j.lf, NULL);

		gl.budget = floor + (j.lf.peak0 - floor) * where;
	}
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	if (!hyper_plan__run_policy_fit(POL_PLAN, &pb, &r, &e) && r.ok) {
		laid = layout_ok(_metadata, &j, &r, gl.budget);
		/*
		 * The three peaks of the summary: the timed one (the
		 * schedule's prediction) counts every residency, and a
		 * detached tensor until its store ends, so it is never
		 * below the residency; the arena is never below it either.
		 */
		EXPECT_EQ(r.sim.peak, r.s.pred.peak);
		EXPECT_GE(r.sim.peak, r.s.res_peak) TH_LOG("%s", j.g.name);
		/*
		 * The timed peak is above the arena only by the stores in
		 * flight, as the summary says: simulated with the arena as
		 * its budget, where a prefetch waits for them as libhyper's
		 * does, the schedule runs and never holds more.
		 */
		if (r.s.arena && !r.s.arena_over) {
			struct sched in_arena = r.s;
			struct sim_result sr;

			in_arena.budget = r.s.arena;
			EXPECT_EQ(0, hyper_plan__simulate(&in_arena, pb.p, NULL, &sr,
					      &j.g.mem, &e))
				TH_LOG("%s: %s", j.g.name, e.msg);
			EXPECT_LE(sr.peak, r.s.arena) TH_LOG("%s", j.g.name);
			if (r.sim.peak > r.s.arena)
				TH_LOG("%s: timed %llu above the arena %llu, %llu within it",
				       j.g.name, (unsigned long long)r.sim.peak,
				       (unsigned long long)r.s.arena,
				       (unsigned long long)sr.peak);
		}
		/* and libhyper takes it as it is */
		EXPECT_EQ(0, hyper_plan__sched_check(&r.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
		hyper_plan__result_free(&r);
	}
	hyper_plan__job_free(&j);
	return laid;
}

FIXTURE(many) {};
FIXTURE_SETUP(many) {}
FIXTURE_TEARDOWN(many) {}

/* Dozens of plans, each planned again until its arena fits: a slow test. */
TEST_F_TIMEOUT(many, random_graphs_layout_never_overlaps, 300)
{
	static const double where[] = { 0, 0.9, 0.6, 0.3 };
	unsigned int laid = 0, tried = 0;

	for (unsigned int seed = 1; seed <= 10; seed++)
		for (unsigned int w = 0; w < ARRAY_SIZE(where); w++, tried++) {
			struct plan_case c = { NULL, NULL, 20 + seed * 17 % 200,
					       seed + 300 };

			laid += one(_metadata, &c, &hyper_plan__profile_table[seed % 3],
				    where[w]);
		}
	/* Most plans carry a layout: a placer that gave up would fail here. */
	EXPECT_LE(tried * 3 / 4, laid) TH_LOG("%u of %u laid out", laid, tried);
}

TEST_F_TIMEOUT(many, models_layout_never_overlaps, 300)
{
	static const struct plan_case models[] = {
		{ "llama2-7b", "infer", 0, 1 },
		{ "llama2-7b", "train", 0, 1 },
		{ "mixtral-8x7b", "infer", 0, 3 },
	};

	for (unsigned int m = 0; m < ARRAY_SIZE(models); m++) {
		EXPECT_EQ(1, one(_metadata, &models[m], &hyper_plan__profile_table[0], 0));
		one(_metadata, &models[m], &hyper_plan__profile_table[0], 0.5);
	}
}

static unsigned int kept(const struct hp_laycache *lc)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < HP_LAYCACHE_N; i++)
		k += !!lc->ent[i];
	return k;
}

/*
 * The layouts a graph's plans made under a budget are kept, and a
 * schedule laid out again takes its kept offsets: the same as the
 * placer's own, with no second copy kept.  Without a budget none is kept.
 */
TEST(a_kept_layout_is_the_placers_own)
{
	const struct plan_case c = { NULL, NULL, 120, 307 };
	struct goal gl = { SLOW, 0 };
	struct job j = { 0 };
	struct problem pb;
	struct result r;
	struct hp_err e;
	uint64_t floor, arena, *off;
	unsigned int k;
	size_t n;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e)) TH_LOG("%s", e.msg);
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(&j.lay, pb.lay);
	ASSERT_EQ(0, hyper_plan__run_policy_fit(POL_PLAN, &pb, &r, &e)) TH_LOG("%s", e.msg);
	ASSERT_TRUE(r.ok);
	EXPECT_EQ(0u, kept(&j.lay));
	hyper_plan__result_free(&r);

	floor = hyper_plan__life_floor(&j.lf, NULL);
	gl.budget = floor + (j.lf.peak0 - floor) * 0.6;
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_policy_fit(POL_PLAN, &pb, &r, &e)) TH_LOG("%s", e.msg);
	ASSERT_TRUE(r.ok);
	ASSERT_TRUE(r.s.arena && !r.s.arena_over) TH_LOG("no layout to compare");
	k = kept(&j.lay);
	EXPECT_LE(1u, k);
	n = r.s.res_first[j.g.nt];
	arena = r.s.arena;
	off = malloc(n * sizeof(*off));
	ASSERT_NE(NULL, off);
	memcpy(off, r.s.res_off, n * sizeof(*off));
	/* again through the cache: found there, nothing more kept */
	ASSERT_EQ(0, hyper_plan__sched_layout_cached(&r.s, gl.budget, &j.lay,
						     &j.g.mem, &e));
	EXPECT_EQ(k, kept(&j.lay));
	EXPECT_EQ(arena, r.s.arena);
	EXPECT_EQ(0, memcmp(off, r.s.res_off, n * sizeof(*off)));
	/* and by the placer itself */
	ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, gl.budget, &j.g.mem, &e));
	EXPECT_EQ(arena, r.s.arena);
	EXPECT_EQ(0, memcmp(off, r.s.res_off, n * sizeof(*off)));
	free(off);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
	EXPECT_EQ(0u, kept(&j.lay));
}

/*
 * A layout that runs out of memory leaves the schedule as if it had never
 * been laid out (hyper_plan__sched_layout_nomem(), shared by the placer
 * and a row's twin), and it can be laid out again afterwards.
 */
TEST(a_layout_out_of_memory_is_dropped)
{
	const struct plan_case c = { NULL, NULL, 120, 307 };
	struct goal gl = { SLOW, 0 };
	struct hp_mem failing = { 0 };
	struct job j = { 0 };
	struct problem pb;
	struct result r;
	struct hp_err e;
	uint64_t arena;

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e)) TH_LOG("%s", e.msg);
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_policy_fit(POL_PLAN, &pb, &r, &e)) TH_LOG("%s", e.msg);
	ASSERT_TRUE(r.ok);
	ASSERT_TRUE(r.s.arena && r.s.res_off && r.s.res_peak) TH_LOG("no layout");
	arena = r.s.arena;
	e.msg[0] = '\0';
	EXPECT_EQ(-ENOMEM, hyper_plan__sched_layout_nomem(&r.s, &failing, &e));
	EXPECT_TRUE(failing.failed);
	EXPECT_NE(NULL, strstr(e.msg, "out of memory")) TH_LOG("%s", e.msg);
	EXPECT_EQ(NULL, r.s.res_off);
	EXPECT_EQ(NULL, r.s.res_first);
	EXPECT_EQ(0u, r.s.arena);
	EXPECT_EQ(0u, r.s.arena_over);
	EXPECT_EQ(0u, r.s.res_peak);
	/* dropped twice is dropped: nothing left to free */
	hyper_plan__sched_layout_drop(&r.s);
	EXPECT_EQ(NULL, r.s.res_off);
	ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, 0, &j.g.mem, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(arena, r.s.arena);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
}

/*
 * Each offset written is the one the placer gives that residency: the
 * residencies replayed here (in the order they begin, as the builder
 * makes them) and placed again by hu_arena_place() land where the
 * schedule says, a tensor's every residency in its own slot.  The
 * layout frees the builder's array before it places and keeps each
 * residency's slot alone (passes/arena.c): a slot off by one, or a
 * tensor's residencies swapped, fails here.  Under budgets, so that
 * tensors come back after an eviction and have several residencies.
 */
TEST(each_offset_is_its_residencys_own)
{
	static const double where[] = { 0.9, 0.6, 0.3 };
	unsigned int again = 0, laid = 0;

	for (unsigned int seed = 1; seed <= 6; seed++)
		for (unsigned int w = 0; w < ARRAY_SIZE(where); w++) {
			const struct plan_case c = { NULL, NULL,
						     40 + seed * 23 % 120,
						     seed + 500 };
			struct goal gl = { SLOW, 0 };
			struct job j = { 0 };
			struct problem pb;
			struct result r;
			struct hp_err e;
			struct rival *v;
			struct hu_ival *h;
			uint32_t *next;
			uint64_t floor, height;
			size_t n, wrong;

			ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[seed % 3],
					      &e)) TH_LOG("%s", e.msg);
			floor = hyper_plan__life_floor(&j.lf, NULL);
			gl.budget = floor + (j.lf.peak0 - floor) * where[w];
			hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
			if (hyper_plan__run_policy_fit(POL_PLAN, &pb, &r, &e) ||
			    !r.ok) {
				hyper_plan__job_free(&j);
				continue;
			}
			/* laid out again with no budget: every plan has one */
			ASSERT_EQ(0, hyper_plan__sched_layout(&r.s, 0, &j.g.mem,
							      &e)) TH_LOG("%s", e.msg);
			ASSERT_NE(NULL, r.s.res_off);
			n = r.s.res_first[j.g.nt];
			v = calloc(n + 1, sizeof(*v));
			h = calloc(n + 1, sizeof(*h));
			next = calloc(j.g.nt, sizeof(*next));
			ASSERT_TRUE(v && h && next);
			ASSERT_EQ(n, replay(&r.s, v, next));
			for (size_t i = 0; i < n; i++)
				h[i] = (struct hu_ival){ v[i].start, v[i].end,
							 v[i].bytes, 0 };
			ASSERT_EQ(0, hu_arena_place(h, (uint32_t)n,
						    HU_ARENA_EFFORT, 0, &height));
			EXPECT_EQ(r.s.arena, height) TH_LOG("%s", j.g.name);
			wrong = 0;
			for (size_t i = 0; i < n; i++)
				if (h[i].off != v[i].off && !wrong++)
					TH_LOG("%s: residency %zu at %llu, placed at %llu",
					       j.g.name, i,
					       (unsigned long long)v[i].off,
					       (unsigned long long)h[i].off);
			EXPECT_EQ(0u, wrong);
			for (uint32_t t = 0; t < j.g.nt; t++)
				again += next[t] > 1;
			laid++;
			free(next);
			free(h);
			free(v);
			hyper_plan__result_free(&r);
			hyper_plan__job_free(&j);
		}
	/* the test means something only where tensors come back */
	EXPECT_LE(6u, laid);
	EXPECT_LT(0u, again) TH_LOG("no tensor with a second residency");
}

/* The same offsets from hyper_plan_schedule() and from the JSON file. */
TEST(json_and_in_process_carry_the_same_layout)
{
	struct hyper_plan_opts o = { .profile = "h100-pcie",
				     .budget_bytes = 80 * MIB };
	struct hyper_plan_prediction pr;
	struct hyper_schedule_info ia, ib;
	struct hyper_schedule *a, *b;
	struct hyper_plan_graph *g;
	struct hyper_plan *p;
	char err[256], path[] = "/tmp/hyper-plan-arena-XXXXXX";
	unsigned int with = 0;
	int fd;

	g = plan_chain(_metadata, 24, 100);
	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	hyper_plan_graph_free(g);
	ASSERT_EQ(0, hyper_plan_schedule(p, &a, err, sizeof(err))) TH_LOG("%s", err);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, hyper_plan_write_json(p, path, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_load(path, &b, err, sizeof(err))) TH_LOG("%s", err);
	unlink(path);
	ASSERT_EQ(0, hyper_schedule_info(a, &ia));
	ASSERT_EQ(0, hyper_schedule_info(b, &ib));
	EXPECT_TRUE(ia.flags & HYPER_SCHED_ARENA);
	EXPECT_TRUE(ib.flags & HYPER_SCHED_ARENA);
	EXPECT_NE(0, ia.arena_bytes);
	EXPECT_LE(ia.arena_bytes, 80 * MIB);
	EXPECT_EQ(ia.arena_bytes, ib.arena_bytes);
	ASSERT_EQ(ia.nr_tensors, ib.nr_tensors);
	for (unsigned int t = 0; t < ia.nr_tensors; t++) {
		struct hyper_tensor_info ta, tb;

		ASSERT_EQ(0, hyper_schedule_tensor(a, t, &ta));
		ASSERT_EQ(0, hyper_schedule_tensor(b, t, &tb));
		ASSERT_EQ(ta.nr_arena_offsets, tb.nr_arena_offsets);
		for (uint32_t i = 0; i < ta.nr_arena_offsets; i++)
			EXPECT_EQ(ta.arena_offsets[i], tb.arena_offsets[i]);
		with += ta.nr_arena_offsets > 0;
	}
	EXPECT_LE(24, with);
	/* the prediction names the arena the schedule carries */
	ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
	EXPECT_EQ(0, pr.arena_over);
	EXPECT_EQ(ia.arena_bytes, pr.arena_bytes);
	hyper_schedule_free(a);
	hyper_schedule_free(b);
	hyper_plan_free(p);
}

/*
 * A budget of exactly the largest working set, sizes not a multiple of
 * the arena's alignment: no residency budget lays out under it.  The plan
 * still comes back (its residency fits), and the prediction says its
 * arena does not: no offsets in the schedule, and how much it needs.
 */
TEST(arena_over_the_budget_is_reported)
{
	/* layer 3 reads x3 and w3 (16 MiB + 3) and writes x4 */
	const uint64_t budget = 18 * MIB + 3;
	struct hyper_plan_opts o = { .profile = "h100-pcie",
				     .budget_bytes = budget };
	struct hyper_plan_prediction pr;
	struct hyper_schedule_info si;
	struct hyper_schedule *s;
	struct hyper_plan_graph *g;
	struct hyper_plan *p;
	char err[256];

	g = plan_chain(_metadata, 4, 1);
	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	hyper_plan_graph_free(g);
	ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
	EXPECT_LE(pr.peak_device_bytes, budget);
	EXPECT_EQ(1, pr.arena_over);
	EXPECT_LT(budget, pr.arena_bytes);
	ASSERT_EQ(0, hyper_plan_schedule(p, &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_info(s, &si));
	EXPECT_FALSE(si.flags & HYPER_SCHED_ARENA);
	hyper_schedule_free(s);
	hyper_plan_free(p);
}

/*
 * The placer's ways of finding what a fit must avoid (by time, by
 * offset, the long intervals by offset and the rest by time) give the
 * same offsets, on interval sets shaped like decode
 * (many short, few live at once, some a few hundred times as long, each
 * in many of the time order's buckets), like training (most live from the
 * forward pass to the backward), and like a training step's nested
 * activations (one made at t freed at the mirror of t, where a fit by
 * offset passes over whole blocks by their pins), and every layout is
 * valid: no two
 * intervals that share time share a byte, and the height is the top of
 * the highest and at least the live peak.
 */
static uint64_t arena_set(struct hu_ival *v, uint32_t n, unsigned int seed,
			  bool dense, bool nested)
{
	uint64_t span = dense || nested ? 4 * n : 40 * n;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = rand_r(&seed) % span, l;

		if (rand_r(&seed) % 10 == 0) {
			v[i] = (struct hu_ival){ 0, span + 1, 64, 0 };
		} else if (nested && rand_r(&seed) % 4) {
			a %= span / 2;
			v[i] = (struct hu_ival){ a, span - a, 0, 0 };
		} else if (!dense && rand_r(&seed) % 25 == 0) {
			/* a KV block's length: many buckets of the short */
			l = span / 200 + rand_r(&seed) % (span / 100 + 1);
			v[i] = (struct hu_ival){ a, a + l, 0, 0 };
		} else {
			l = dense && rand_r(&seed) % 3 ? span / 2 +
				rand_r(&seed) % (span / 2) :
				rand_r(&seed) % 50 ? 1 + rand_r(&seed) % 20 : 0;
			v[i] = (struct hu_ival){ a, a + l, 0, 0 };
		}
		/*
		 * a few sizes, as layers repeat: many ties; and a few of none
		 * (a fit of positive size may read spans that touch as one;
		 * one of none may not)
		 */
		v[i].bytes = rand_r(&seed) % 32 ? 64 * (1 + rand_r(&seed) %
				(rand_r(&seed) % 2 ? 4 : 300)) : 0;
	}
	return span;
}

/*
 * The set @set of @n intervals placed each of @nw @ways, a copy each in
 * @v[w] (the caller frees them), with the height in @h[w].
 */
static void place_ways(struct __test_metadata *_metadata, struct hu_ival **v,
		       uint64_t *h, const enum hu_arena_way *ways, int nw,
		       const struct hu_ival *set, uint32_t n, uint64_t effort)
{
	for (int w = 0; w < nw; w++) {
		v[w] = malloc(n * sizeof(*v[w]));
		ASSERT_NE(NULL, v[w]);
		memcpy(v[w], set, n * sizeof(*v[w]));
		ASSERT_EQ(0, hu_arena_place_way(v[w], n, effort, 0, ways[w],
						&h[w]));
	}
}

/* Every way's height and offsets are the first's (the reference). */
static void ways_agree(struct __test_metadata *_metadata,
		       struct hu_ival *const *v, const uint64_t *h, int nw,
		       uint32_t n, unsigned int seed)
{
	for (int w = 1; w < nw; w++) {
		EXPECT_EQ(h[0], h[w]) TH_LOG("seed %u way %d", seed, w);
		for (uint32_t i = 0; i < n; i++) {
			ASSERT_EQ(v[0][i].off, v[w][i].off)
				TH_LOG("seed %u way %d interval %u",
				       seed, w, i);
		}
	}
}

#define MAX_WAYS	8

/*
 * @set (made from @seed, freed here) placed each of @nw @ways: the same
 * offsets and height as the first, the reference.
 */
static void places_agree(struct __test_metadata *_metadata,
			 const enum hu_arena_way *ways, int nw,
			 struct hu_ival *set, uint32_t n, uint64_t effort,
			 unsigned int seed)
{
	struct hu_ival *v[MAX_WAYS] = { NULL };
	uint64_t h[MAX_WAYS];

	ASSERT_GE(MAX_WAYS, nw);
	place_ways(_metadata, v, h, ways, nw, set, n, effort);
	ways_agree(_metadata, v, h, nw, n, seed);
	for (int w = 0; w < nw; w++)
		free(v[w]);
	free(set);
}

/* A set of @n intervals, zeroed for a generator to fill. */
static struct hu_ival *new_set(struct __test_metadata *_metadata, uint32_t n)
{
	struct hu_ival *v = calloc(n, sizeof(*v));

	ASSERT_NE(NULL, v);
	return v;
}

TEST(arena_ways_agree_and_are_valid)
{
	/* the first is the reference: every placement whole, no shortcut */
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_BY_TIME,
		HU_ARENA_BY_OFFSET, HU_ARENA_SPLIT, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET | HU_ARENA_WHOLE };
	const int nw = ARRAY_SIZE(ways);
	unsigned int cases = 0;

	for (unsigned int seed = 1; seed <= 32; seed++) {
		uint32_t n = seed % 4 == 0 ? 1500 : 1 + seed * 37 % 400;
		struct hu_ival *v[ARRAY_SIZE(ways)], *set = new_set(_metadata, n);
		uint64_t h[ARRAY_SIZE(ways)], top = 0, peak;

		arena_set(set, n, seed, seed % 2, seed > 24);
		place_ways(_metadata, v, h, ways, nw, set, n,
			   seed % 3 ? 4000 : 0);
		free(set);
		ways_agree(_metadata, v, h, nw, n, seed);
		for (uint32_t i = 0; i < n; i++) {
			const struct hu_ival *a = &v[0][i];

			if (a->off + a->bytes > top)
				top = a->off + a->bytes;
			for (uint32_t j = i + 1; j < n; j++) {
				const struct hu_ival *b = &v[0][j];

				if (a->start < b->end && b->start < a->end) {
					ASSERT_TRUE(a->off + a->bytes <= b->off ||
						    b->off + b->bytes <= a->off)
						TH_LOG("seed %u: %u and %u overlap",
						       seed, i, j);
				}
			}
		}
		ASSERT_EQ(0, hu_arena_live_peak(v[0], n, &peak));
		EXPECT_EQ(top, h[0]);
		EXPECT_LE(peak, h[0]);
		cases++;
		for (int w = 0; w < nw; w++)
			free(v[w]);
	}
	EXPECT_EQ(32, cases);
}

/* Whether no two of @n placed intervals that share time share a byte. */
static bool no_overlap(const struct hu_ival *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (v[i].start < v[j].end && v[j].start < v[i].end &&
			    v[i].off + v[i].bytes > v[j].off &&
			    v[j].off + v[j].bytes > v[i].off)
				return false;
	return true;
}

struct by_start {
	uint64_t start;
	uint32_t i;
};

static int cmp_by_start(const void *pa, const void *pb)
{
	const struct by_start *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/*
 * The online way (HU_ARENA_ONLINE), for layouts only checked: on random
 * sets, their starts in order or not, no two intervals that share time
 * share a byte (the brute check), each offset is aligned as the sizes
 * are and ends within the height, which is the top of the highest, at
 * least the live peak, and for each size the size times the most of it
 * live at once, summed: counted here for each interval as those of its
 * size before it in start order (ties by index) that end after it
 * starts, and itself.
 */
TEST(arena_online_way_reuses_each_size_and_is_valid)
{
	unsigned int cases = 0, sorted = 0, reused = 0;

	for (unsigned int seed = 1; seed <= 40; seed++) {
		uint32_t n = seed % 5 == 0 ? 2000 : 1 + seed * 53 % 700;
		struct hu_ival *v = new_set(_metadata, n);
		struct by_start *ord = calloc(n, sizeof(*ord));
		uint32_t *most = calloc(n, sizeof(*most));
		uint64_t h, top = 0, peak, want = 0;

		ASSERT_NE(NULL, ord);
		ASSERT_NE(NULL, most);
		arena_set(v, n, seed, seed % 2, seed > 30);
		for (uint32_t i = 0; i < n; i++)
			ord[i] = (struct by_start){ v[i].start, i };
		qsort(ord, n, sizeof(*ord), cmp_by_start);
		if (seed % 3 == 0) {
			/* already in start order, as the planner's are */
			struct hu_ival *in = new_set(_metadata, n);

			for (uint32_t i = 0; i < n; i++) {
				in[i] = v[ord[i].i];
				ord[i].i = i;
			}
			free(v);
			v = in;
			sorted++;
		}
		ASSERT_EQ(0, hu_arena_place_way(v, n, 0, 0, HU_ARENA_ONLINE,
						&h));
		ASSERT_TRUE(no_overlap(v, n)) TH_LOG("seed %u", seed);
		for (uint32_t j = 0; j < n; j++) {
			const struct hu_ival *x = &v[ord[j].i];
			uint32_t live = 1, first = j;

			ASSERT_EQ(0, x->off % 64);
			ASSERT_LE(x->off + x->bytes, h);
			if (x->off + x->bytes > top)
				top = x->off + x->bytes;
			if (!x->bytes)
				continue;
			/* most[] at the first of each size, in start order */
			for (uint32_t k = 0; k < j; k++) {
				const struct hu_ival *y = &v[ord[k].i];

				if (y->bytes != x->bytes)
					continue;
				if (first == j)
					first = k;
				live += y->end > x->start;
			}
			reused += live < j - first + 1;
			if (live > most[first])
				most[first] = live;
		}
		for (uint32_t j = 0; j < n; j++)
			want += most[j] * v[ord[j].i].bytes;
		ASSERT_EQ(0, hu_arena_live_peak(v, n, &peak));
		EXPECT_EQ(top, h) TH_LOG("seed %u", seed);
		EXPECT_EQ(want, h) TH_LOG("seed %u", seed);
		EXPECT_LE(peak, h) TH_LOG("seed %u", seed);
		free(most);
		free(ord);
		free(v);
		cases++;
	}
	EXPECT_EQ(40, cases);
	EXPECT_EQ(13, sorted);
	EXPECT_LT(1000, reused);
}

/*
 * Trying stops at the first placement within a HU_ARENA_SLACK'th of the
 * live peak, or at the caller's limit if that is lower: against the
 * placer that tries on to the live peak (HU_ARENA_NO_SLACK), a placement
 * is valid, never lower (it tried a prefix of the same placements), the
 * same one whenever it is above where it may stop, and fits every limit
 * the full one fits.  Decode- and training-shaped sets, with no limit
 * and limits at, just above and below the full placement's height; some
 * stop early with a taller placement, which a placer without the stop
 * would not give.
 */
TEST(arena_stops_close_enough_to_the_live_peak)
{
	const uint64_t g = 1ULL << 30;
	unsigned int early = 0, cases = 0;

	/* the slack, the larger one for sets past the search's budget */
	EXPECT_EQ(g + g / 1024, hu_arena_enough(g, 0, 1000));
	EXPECT_EQ(g + g / 1024, hu_arena_enough(g, 0, HU_ARENA_EFFORT));
	EXPECT_EQ(g + g / 256, hu_arena_enough(g, 0, HU_ARENA_EFFORT + 1));
	EXPECT_EQ(g + 5, hu_arena_enough(g, g + 5, 1000));
	EXPECT_EQ(g + g / 1024, hu_arena_enough(g, 2 * g, 1000));
	EXPECT_EQ(g, hu_arena_enough(g, g - 1, 1000));
	EXPECT_EQ(UINT64_MAX, hu_arena_enough(UINT64_MAX - 1, 0, 1000));

	for (unsigned int seed = 300; seed < 340; seed++) {
		uint32_t n = 100 + seed * 53 % 700;
		struct hu_ival *set = new_set(_metadata, n), *full, *v;
		uint64_t floor, h_full, lims[4];

		arena_set(set, n, seed, seed % 2, seed % 5 == 0);
		full = malloc(n * sizeof(*full));
		v = malloc(n * sizeof(*v));
		ASSERT_NE(NULL, full);
		ASSERT_NE(NULL, v);
		memcpy(full, set, n * sizeof(*full));
		ASSERT_EQ(0, hu_arena_place_way(full, n, 4000, 0,
						HU_ARENA_AUTO | HU_ARENA_NO_SLACK,
						&h_full));
		ASSERT_EQ(0, hu_arena_live_peak(set, n, &floor));
		lims[0] = 0;
		lims[1] = h_full;
		lims[2] = h_full + h_full / 4096;
		lims[3] = h_full > floor ? h_full - 1 : floor;
		for (int l = 0; l < 4; l++) {
			uint64_t lim = lims[l], h;
			uint64_t stop = hu_arena_enough(floor, lim, n);

			memcpy(v, set, n * sizeof(*v));
			ASSERT_EQ(0, hu_arena_place_way(v, n, 4000, lim,
							HU_ARENA_AUTO, &h));
			ASSERT_TRUE(no_overlap(v, n)) TH_LOG("seed %u", seed);
			EXPECT_LE(h_full, h) TH_LOG("seed %u limit %d", seed, l);
			EXPECT_LE(floor, h);
			if (lim && h_full <= lim) {
				EXPECT_LE(h, lim) TH_LOG("seed %u limit %d",
							 seed, l);
			}
			if (h > stop) {
				EXPECT_EQ(h_full, h) TH_LOG("seed %u", seed);
				for (uint32_t i = 0; i < n; i++) {
					ASSERT_EQ(full[i].off, v[i].off)
						TH_LOG("seed %u interval %u",
						       seed, i);
				}
			}
			early += h != h_full;
			cases++;
		}
		free(v);
		free(full);
		free(set);
	}
	EXPECT_EQ(160, cases);
	EXPECT_LT(0, early);
}

/*
 * A fit by time that spans several buckets reads each bucket wholly
 * inside its time as that bucket's union of offsets, a few spans where
 * its intervals are many.  Decode-shaped sets: many short intervals, a
 * fifth a few buckets long (so many fits have buckets inside them), of
 * a few sizes (many spans that touch, joined in a union), some of none
 * (a fit of none may not read a union: an interval of none can end
 * where another starts); every bucket way agrees with one bucket read
 * entry by entry.  A union that lost a span, kept one that overlaps the
 * next, or was read for a bucket the fit only partly covers (the first
 * and last), gives other offsets here; so does a fit in one bucket whose
 * entries, read where they are, are not filtered by time or lose the
 * first.
 */
TEST(arena_bucket_unions_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_BY_TIME,
		HU_ARENA_AUTO, HU_ARENA_SPLIT };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 200; seed < 248; seed++) {
		uint32_t n = 200 + seed * 97 % 1800;
		struct hu_ival *set = new_set(_metadata, n);
		unsigned int r = seed;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = rand_r(&r) % (8 * (uint64_t)n);
			uint64_t l = rand_r(&r) % 5 ? rand_r(&r) % 12 :
				     20 + rand_r(&r) % 200;
			uint64_t b = rand_r(&r) % 16 ? 64 *
				     (1 + rand_r(&r) % 3) : 0;

			set[i] = (struct hu_ival){ a, a + l, b, 0 };
		}
		places_agree(_metadata, ways, nw, set, n,
			     seed % 2 ? 8 * n : 0, seed);
	}
}

/*
 * Larger decode-shaped sets, a few thousand intervals: a placement
 * that may not stop early (the first, the search's first rounds) sorts
 * its keys whole at once, one that may sorts them as it goes, from the
 * first KEYS_FIRST (1024) doubling; the fits by time span many buckets
 * and groups of them (read and updated inline).  Every way agrees with
 * the reference, which reads one bucket and sorts every placement's
 * keys whole: keys sorted only in part where a placement runs whole, or
 * the buckets of a fit taken wrong, give other offsets here.
 */
TEST(arena_large_sets_sort_whole_and_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_TIME, HU_ARENA_BY_OFFSET };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 300; seed < 303; seed++) {
		uint32_t n = 2500 + seed * 389 % 800;
		struct hu_ival *set = new_set(_metadata, n);

		arena_set(set, n, seed, seed % 2, false);
		places_agree(_metadata, ways, nw, set, n,
			     seed % 2 ? 4 * n : 0, seed);
	}
}

/*
 * A set of @n intervals whose keys pack in one word each, or do not
 * (util/arena_sort.c), by @shape: 0 decode-like (a dozen sizes from 64
 * bytes to 1 GiB, so ranked; a few hundred lengths, some open-ended;
 * starts packed as they are), 1 starts spread over 2^36 instants (more
 * values than the rank table holds: packed as they are, 36 bits), 2 sizes
 * all apart over 40 bits (too wide to pack with the rest: compared).
 * Every seventh interval repeats the one before it, so that keys tie on
 * all three words and their index decides.
 */
static void packed_set(struct hu_ival *v, uint32_t n, unsigned int seed,
		       int shape)
{
	static const uint64_t sizes[] = {
		64, 2048, 8192, 28672, 256512, 1064960, 1208320,
		4194304, 8388608, 16777216, 33554432, 218103808,
		1050673152 };
	uint64_t span = 40 * (uint64_t)n;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = rand_r(&seed) % span, l;

		if (i && i % 7 == 0) {
			v[i] = v[i - 1];
			continue;
		}
		l = rand_r(&seed) % 40 ? 1 + rand_r(&seed) % 400 :
		    UINT64_MAX - a;
		if (shape == 1) {
			a = ((uint64_t)rand_r(&seed) << 20 ^
			     (uint64_t)rand_r(&seed)) & ((1ULL << 36) - 1);
			l = 1 + rand_r(&seed) % (1U << 20);
		}
		v[i] = (struct hu_ival){ a, a + l, 0, 0 };
		v[i].bytes = shape == 2 ?
			     64 * (1 + (((uint64_t)rand_r(&seed) << 20 ^
					 (uint64_t)rand_r(&seed)) &
					((1ULL << 34) - 1))) :
			     sizes[rand_r(&seed) % ARRAY_SIZE(sizes)];
	}
}

/*
 * Sets of 4096 intervals and more, where a placement that sorts its keys
 * whole packs each key's words, ranked or as they are, in one word with
 * its index and sorts those by digits: the same order as the comparison
 * (the reference's, which never packs), ties on all three words broken by
 * the index.  Every way agrees with the reference: a rank out of order,
 * a word packed in the wrong place, or an unstable pass (ties in another
 * order) gives other offsets here.
 */
TEST(arena_packed_keys_sort_as_compared)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 400; seed < 406; seed++) {
		uint32_t n = 4096 + seed * 211 % 900;
		struct hu_ival *set = new_set(_metadata, n);

		packed_set(set, n, seed, seed % 3);
		places_agree(_metadata, ways, nw, set, n,
			     seed < 403 ? 0 : 2 * n, seed);
	}
}

/*
 * A placement under way is stopped once a bound on the height it will
 * reach (at an instant, what is live and not placed yet must go in the
 * holes free now, each in one at least its size) says it cannot be kept:
 * that changes no offset.  Many placements are decided on the bound
 * here: the greedy orders, and the search's rounds, each kept or dropped
 * against the last one kept, which steers the rounds after it.  A bound
 * that is not one (an interval counted that is placed already, a hole
 * counted for a larger interval than it holds) stops a placement that
 * would have been kept, and the offsets differ.
 */
TEST(arena_bound_stops_only_what_would_be_dropped)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_AUTO | HU_ARENA_NO_BOUND, HU_ARENA_BY_OFFSET };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 100; seed < 164; seed++) {
		uint32_t n = 50 + seed * 53 % 700;
		struct hu_ival *set = new_set(_metadata, n);

		arena_set(set, n, seed, seed % 2, seed % 3 == 0);
		places_agree(_metadata, ways, nw, set, n, 40 * n, seed);
	}
}

/*
 * A decode-shaped set of @n intervals: one in @long_in KV-like (a 64th of
 * the run to an eighth of it long), the others a few instants long (one
 * in @empty_in of no length; with @empty_in 0, none), of a few sizes
 * (some of none).
 */
static void decode_set(struct hu_ival *v, uint32_t n, unsigned int seed,
		       unsigned int long_in, unsigned int empty_in)
{
	uint64_t span = 4 * (uint64_t)n;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = rand_r(&seed) % span, l;

		if (rand_r(&seed) % long_in == 0)
			l = span / 64 + rand_r(&seed) % (span / 8);
		else if (empty_in && rand_r(&seed) % empty_in == 0)
			l = 0;
		else
			l = 1 + rand_r(&seed) % 12;
		v[i] = (struct hu_ival){ a, a + l, 0, 0 };
		v[i].bytes = rand_r(&seed) % 24 ?
			     64 * (1 + rand_r(&seed) % (seed % 2 ? 4 : 30)) :
			     0;
	}
}

/* The ways a decode-shaped set is placed, each against the reference. */
static const enum hu_arena_way split_ways[] = {
	HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
	HU_ARENA_AUTO | HU_ARENA_NO_INSTANTS,
	HU_ARENA_AUTO | HU_ARENA_NO_BOUND };

/*
 * A fit by offset passes over a block by its start instants alone.  On
 * sets shaped like a training step's layouts (nested activations, and
 * expert-like intervals of a few sizes, a 64th of the run to half of it
 * long, that share time with a fit over part of it), every way agrees
 * with the reference, which reads each placed interval, and with the
 * offset way that reads every block it meets (HU_ARENA_NO_INSTANTS).
 */
static void moe_set(struct hu_ival *v, uint32_t n, unsigned int seed)
{
	uint64_t span = 8 * (uint64_t)n;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = rand_r(&seed) % span, l;

		if (rand_r(&seed) % 3 == 0) {
			a %= span / 2;
			v[i] = (struct hu_ival){ a, span - a, 0, 0 };
		} else {
			l = span / 64 + rand_r(&seed) % (span / 2);
			v[i] = (struct hu_ival){ a, a + l, 0, 0 };
		}
		v[i].bytes = 64 * (1 + rand_r(&seed) % (seed % 2 ? 3 : 40));
	}
}

TEST(arena_moe_skip_agrees)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE,
		HU_ARENA_BY_OFFSET | HU_ARENA_NO_INSTANTS, HU_ARENA_BY_OFFSET,
		HU_ARENA_AUTO, HU_ARENA_BY_OFFSET | HU_ARENA_NO_BOUND };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 200; seed < 232; seed++) {
		uint32_t n = 50 + seed * 97 % 500;
		struct hu_ival *set = new_set(_metadata, n);

		if (seed % 4)
			moe_set(set, n, seed);
		else
			arena_set(set, n, seed, false, true);
		places_agree(_metadata, ways, nw, set, n, 4 * n, seed);
	}
}

/*
 * A fit by time many buckets long reads, for each group of buckets (32
 * of them) wholly inside its time, the group's union of offsets instead
 * of each bucket's.  Decode-shaped sets with many
 * buckets, the starts in order as a plan's come: most intervals a few
 * instants long, a tenth hundreds to thousands (fits over groups, by
 * time or, split, by offset reading the buckets), of a few sizes and
 * some of none, several starting at each instant; and sets whose starts
 * lie a few instants apart, with more than 1,024 buckets, where a long
 * fit reads dozens of groups (there is one level of them).  A group's
 * union missing an interval gives other offsets here.
 */
TEST(arena_bucket_groups_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_BY_TIME,
		HU_ARENA_AUTO };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 400; seed < 420; seed++) {
		uint32_t n = 2000 + seed * 389 % 3000;
		struct hu_ival *set = new_set(_metadata, n);
		unsigned int r = seed;
		bool sparse = seed >= 416;
		uint64_t a = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t l = rand_r(&r) % 10 ?
				     1 + rand_r(&r) % (sparse ? 3 : 8) :
				     100 + rand_r(&r) % ((sparse ? 8 : 2) * n);
			uint64_t b = rand_r(&r) % 16 ? 64 *
				     (1 + rand_r(&r) % 3) : 0;

			if (sparse)
				a += 2 + rand_r(&r) % 4;
			else
				a += rand_r(&r) % 3 ? rand_r(&r) % 5 : 0;
			set[i] = (struct hu_ival){ a, a + l, b, 0 };
		}
		places_agree(_metadata, ways, nw, set, n, 0, seed);
	}
}

/*
 * Where the intervals kept by offset are at least a fifth of the others
 * (a training step's layouts), the groups of buckets are fine: 2, 4, ...
 * 32 buckets, and a fit many buckets long reads the union of each group
 * inside its time, the largest that starts at its bucket first.  Sets
 * shaped so: the starts in order, two fifths of the intervals a 50th of
 * the run to half of it long (kept by offset, each reading many buckets
 * by time), the rest a few instants, of a few sizes and some of none.  A
 * group read past the fit's last bucket, or a bucket's union missing from
 * its groups, gives other offsets here.
 */
TEST(arena_fine_bucket_groups_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_SPLIT, HU_ARENA_BY_TIME };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 500; seed < 516; seed++) {
		uint32_t n = 1500 + seed * 389 % 2500;
		struct hu_ival *set = new_set(_metadata, n);
		unsigned int r = seed;
		uint64_t a = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t l = rand_r(&r) % 5 < 2 ?
				     n / 50 + rand_r(&r) % (n / 2) :
				     1 + rand_r(&r) % 8;
			uint64_t b = rand_r(&r) % 16 ? 64 *
				     (1 + rand_r(&r) % (seed % 2 ? 3 : 20)) : 0;

			a += rand_r(&r) % 3 ? rand_r(&r) % 3 : 0;
			set[i] = (struct hu_ival){ a, a + l, b, 0 };
		}
		places_agree(_metadata, ways, nw, set, n, seed % 4 ? 0 : n,
			     seed);
	}
}

/*
 * A comb: @k pairs of long intervals of 64 bytes stacked in turn (their
 * lengths alternate, so every order places them so), the second of each
 * pair ending before the first, so that @k holes of 64 bytes lie between
 * the @k teeth left; then @k intervals of one instant, all at one
 * instant after the holes opened, each taking the lowest hole: the union
 * of their bucket (4 instants, as the fillers make it) is @k spans apart.
 * A fit of 32 bytes across that instant, by time, made last by its
 * size: over the bucket and its neighbours (@seed even), or over the
 * whole group of 32 buckets that holds it (odd); it finds no hole below
 * the top only if it reads the @k spans.  Then fillers of one instant,
 * far off, for the buckets' length and a run long enough that the fit
 * over a group is kept by time.  Return: how many intervals (at most
 * 2400 + 3 * @k).
 */
static uint32_t comb_set(struct hu_ival *v, unsigned int seed, uint32_t k)
{
	uint64_t t = seed % 7, at = t + 1150, g;
	unsigned int r = seed;
	uint32_t n = 0;

	for (uint32_t j = 0; j < k; j++) {
		v[n++] = (struct hu_ival){ t + 800 + 2 * j, t + 1400, 64, 0 };
		v[n++] = (struct hu_ival){ t + 401 + 2 * j, t + 1000, 64, 0 };
	}
	for (uint32_t j = 0; j < k; j++)
		v[n++] = (struct hu_ival){ at, at + 1, 64, 0 };
	/* the run's first instant is t + 401: its groups are 128 long */
	g = t + 401 + (at - t - 401) / 128 * 128;
	if (seed % 2)
		v[n++] = (struct hu_ival){ g - 2, g + 134, 32, 0 };
	else
		v[n++] = (struct hu_ival){ at - 8, at + 8, 32, 0 };
	for (uint32_t j = 0; j < 2300; j++) {
		uint64_t a = t + 1500 + rand_r(&r) % 8000;

		v[n++] = (struct hu_ival){ a, a + 1, 64, 0 };
	}
	return n;
}

/*
 * Each union of offsets, a bucket's or a group's, has room for
 * UNION_ROOM (32) spans, and one that would outgrow it is dropped for
 * the attempt: a fit over its bucket reads the bucket's entries, one
 * over its group the smaller groups' or the buckets' unions.  Combs of
 * 20 to 59 teeth (comb_set()), so unions of fewer, as many and more
 * spans than the room: every way agrees with the reference (one bucket,
 * no unions), and the fit across the comb lands on its top.  A dropped
 * union read as empty, or a dropped group passed over without its
 * buckets, puts that fit in the lowest hole here.
 */
TEST(arena_unions_past_their_room_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_TIME, HU_ARENA_SPLIT };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 600; seed < 640; seed++) {
		uint32_t k = 20 + seed % 40;
		struct hu_ival *set = new_set(_metadata, 2400 + 3 * k);
		struct hu_ival *v[ARRAY_SIZE(ways)];
		uint32_t n = comb_set(set, seed, k);
		uint64_t h[ARRAY_SIZE(ways)];

		place_ways(_metadata, v, h, ways, nw, set, n, 0);
		free(set);
		ways_agree(_metadata, v, h, nw, n, seed);
		for (int w = 0; w < nw; w++) {
			EXPECT_EQ(128 * (uint64_t)k, v[w][3 * k].off)
				TH_LOG("seed %u way %d", seed, w);
			free(v[w]);
		}
	}
}

/*
 * The live peak and its first instant found the placer's way
 * (HU_ARENA_AUTO) against one sort of every event (HU_ARENA_WHOLE).
 */
static void peak_as_one_sort(struct __test_metadata *_metadata,
			     struct hu_ival *v, uint32_t n, unsigned int seed)
{
	uint64_t peak, want, at, want_at;

	ASSERT_EQ(0, hu_arena_live_peak_way(v, n, HU_ARENA_WHOLE,
					     &want, &want_at));
	ASSERT_EQ(0, hu_arena_live_peak_way(v, n, HU_ARENA_AUTO,
					     &peak, &at));
	EXPECT_EQ(want, peak) TH_LOG("seed %u", seed);
	EXPECT_EQ(want_at, at) TH_LOG("seed %u", seed);
}

/*
 * The live peak (the floor no placement beats, and the instant the bound
 * checks first) is found by a counting sort of the starts and ends into
 * slices of time, each slice of several sorted by key: the same peak and
 * instant as one sort of them all (HU_ARENA_WHOLE).  On arena_set()'s
 * shapes, where many intervals end where others start (ends count
 * first) and a few of none in size or time come and go at one instant,
 * and the same with the instants spread over 2^40 (slices of many
 * instants each, so each must be sorted) or some run to UINT64_MAX (past
 * the last slice).  A slice left in the order its events were counted,
 * or the instants past the last slice put anywhere but last, gives
 * another peak or instant here.
 */
TEST(arena_live_peak_by_slices_agrees)
{
	for (unsigned int seed = 300; seed < 364; seed++) {
		uint32_t n = 1 + seed * 61 % 900;
		struct hu_ival *v = calloc(n, sizeof(*v));
		uint64_t peak, want, at;

		ASSERT_NE(NULL, v);
		arena_set(v, n, seed, seed % 2, seed % 3 == 0);
		for (uint32_t i = 0; i < n; i++) {
			if (seed % 4 == 1) {
				v[i].start <<= 40;
				v[i].end <<= 40;
			}
			if (seed % 4 == 2 && i % 7 == 0)
				v[i].end = UINT64_MAX;
		}
		peak_as_one_sort(_metadata, v, n, seed);
		ASSERT_EQ(0, hu_arena_live_peak_way(v, n, HU_ARENA_WHOLE,
						     &want, &at));
		ASSERT_EQ(0, hu_arena_live_peak(v, n, &peak));
		EXPECT_EQ(want, peak) TH_LOG("seed %u", seed);
		free(v);
	}
}

/*
 * A slice whose events all fall at one instant is taken without a sort
 * (ends, then starts): the same peak and instant as one sort of them
 * all.  Sets where thousands start at the first instant (a training
 * step's), end at the last, and at one instant in between as many end
 * as start (the ends first, else the peak is theirs and the starts'
 * together), a few of no time or size among them; and the same with
 * sizes whose sum passes 2^64, where the order of the wrapped sums
 * tells (there each slice is sorted).  Starts taken before ends, or a
 * sum past 2^64 taken in any order, gives another peak or instant here.
 */
TEST(arena_live_peak_at_one_instant_agrees)
{
	for (unsigned int seed = 700; seed < 716; seed++) {
		uint32_t n = 3000 + seed % 5 * 400;
		struct hu_ival *v = calloc(n, sizeof(*v));
		uint64_t mid = 5 * n;
		unsigned int r = seed;

		ASSERT_NE(NULL, v);
		for (uint32_t i = 0; i < n; i++) {
			uint64_t a = 0, z = 10 * n;

			switch (i % 5) {
			case 0:
				z = mid;
				break;
			case 1:
				a = mid;
				break;
			case 2:
				z = 1 + rand_r(&r) % (10 * n - 1);
				break;
			case 3:
				a = rand_r(&r) % (10 * n);
				break;
			default:
				a = rand_r(&r) % (10 * n);
				z = rand_r(&r) % 8 ? a + 1 + rand_r(&r) % 50 : a;
				break;
			}
			v[i] = (struct hu_ival){ a, z, 0, 0 };
			v[i].bytes = rand_r(&r) % 16 ? 64 * (1 + rand_r(&r) %
					(i % 2 ? 4 : 300)) : 0;
			if (seed % 2 && i % 97 == 3)
				v[i].bytes = (1ULL << 62) + rand_r(&r) % 64;
		}
		peak_as_one_sort(_metadata, v, n, seed);
		free(v);
	}
}

/*
 * Where the instants are fewer than the slices (a plan's clock ticks
 * about twice an interval), the live peak is one running sum over the
 * instants, each instant's starts less its ends at once: the same peak
 * and first instant as one sort of every event.  Decode-shaped sets on
 * such a clock, from 0 or later: starts in order, most a few instants
 * long, some of no time, some to UINT64_MAX, a few of no size, and at
 * every eighth instant a few ending where as many of the same size
 * start (the ends first); peaks reached again later, where only the
 * first instant counts; and sizes past 2^63 that wrap the sum (taken by
 * slices).  An instant's starts taken before its ends, an instant after
 * the first at a peak reached again, or the endless taken off at their
 * last instant give another peak or instant here.
 */
TEST(arena_live_peak_by_instants_agrees)
{
	for (unsigned int seed = 800; seed < 840; seed++) {
		uint32_t n = 200 + seed * 97 % 3000, k = 0;
		struct hu_ival *v = new_set(_metadata, n);
		uint64_t a = seed % 3 ? 0 : 1000 + seed;
		unsigned int r = seed;

		while (k < n) {
			uint64_t l = rand_r(&r) % 8 ? 1 + rand_r(&r) % 40 :
				     rand_r(&r) % 2 ? 0 : UINT64_MAX - a;
			uint64_t b = rand_r(&r) % 16 ? 64 * (1 + rand_r(&r) % 4) :
				     0;

			if (seed % 5 == 4 && k % 211 == 7)
				b = (1ULL << 63) + 64;
			v[k++] = (struct hu_ival){ a, a + l, b, 0 };
			/* at every eighth instant: as many end as start */
			if (a % 8 == 0)
				for (int x = 0; x < 3 && k + 1 < n; x++) {
					v[k++] = (struct hu_ival){ a >= 4 ?
						a - 4 : 0, a, 128, 0 };
					v[k++] = (struct hu_ival){ a, a + 4,
						128, 0 };
				}
			a += rand_r(&r) % 3;
		}
		peak_as_one_sort(_metadata, v, n, seed);
		free(v);
	}
}

/*
 * The live peak's events do not fit in memory: that is -ENOMEM, never a
 * peak of 0 (which the layout once reported as the plan's residency).
 * UINT32_MAX intervals take a sort of 256 GiB of events, refused before
 * any is read; where the kernel promises any size (overcommit_memory 1)
 * it would be granted, so the check is left out there.
 */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

static int overcommit_mode(void)
{
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
	int mode = -1;

	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = -1;
		fclose(f);
	}
	return mode;
}

TEST(arena_live_peak_out_of_memory_is_an_error)
{
	struct hu_ival v = { 0, 1, 64, 0 };
	uint64_t peak = 1, at;

	if (overcommit_mode() == 1)
		SKIP(return, "overcommit_memory is 1: any size is granted");
	EXPECT_EQ(-ENOMEM, hu_arena_live_peak(&v, UINT32_MAX, &peak));
	EXPECT_EQ(0u, peak);
	EXPECT_EQ(-ENOMEM, hu_arena_live_peak_way(&v, UINT32_MAX,
						  HU_ARENA_WHOLE, &peak, &at));
	ASSERT_EQ(0, hu_arena_live_peak(&v, 1, &peak));
	EXPECT_EQ(64u, peak);
}

/*
 * An interval of no time (start == end, of any size) is never live: the
 * live peak of a set is that of the set without them, both ways.  Its
 * end, sorted before its start at one instant, once took its bytes off
 * the live sum first, which wrapped below zero into a "peak" no
 * placement could reach.
 */
TEST(arena_an_instant_is_never_live)
{
	for (unsigned int seed = 500; seed < 532; seed++) {
		uint32_t n = 1 + seed * 61 % 600, m = 0;
		struct hu_ival *v = new_set(_metadata, n);
		struct hu_ival *kept = new_set(_metadata, n);
		uint64_t at, want_at, peak, want;

		arena_set(v, n, seed, seed % 2, seed % 3 == 0);
		for (uint32_t i = 0; i < n; i++) {
			if (i % 5 == 0) {
				v[i].end = v[i].start;
				v[i].bytes = 64 * (1 + seed % 7);
			}
			if (v[i].end > v[i].start)
				kept[m++] = v[i];
		}
		for (int w = 0; w < 2; w++) {
			enum hu_arena_way way = w ? HU_ARENA_AUTO :
					       HU_ARENA_WHOLE;

			ASSERT_EQ(0, hu_arena_live_peak_way(kept, m, way,
							     &want, &want_at));
			ASSERT_EQ(0, hu_arena_live_peak_way(v, n, way, &peak,
							     &at));
			EXPECT_EQ(want, peak) TH_LOG("seed %u way %d", seed, w);
			EXPECT_EQ(want_at, at) TH_LOG("seed %u way %d", seed, w);
		}
		free(kept);
		free(v);
	}
}

/*
 * A fit by offset passes over a block when its start instants (the
 * distinct starts of its entries, with what is live at each) show the
 * highest end among the entries that share time with the fit, and that
 * they do not raise the scan or that those of one instant inside the fit
 * leave less than its size free below it.  Sets of MoE-shaped intervals
 * (moe_set(), read by offset) with a third of short ones beside them
 * (arena_set()'s nested training shape: placed by time, their fits read
 * the offset order holding no pin, and some of no length or size), placed
 * with and without the instants, by offset and split, agree with the
 * reference that reads every placed interval.  Every eighth set has
 * 1,000 to 2,300 intervals, so that offset blocks split again and again
 * and fill to their 128 entries with as many instants.  An instant before
 * the fit taken as live although some of its entries ended, a bound above
 * the others not checked, an entry counted twice in an instant, an
 * instant counted wrong before a pin or an instant's room taken as closed
 * at the fit's size moves an offset here.
 */
TEST(arena_start_instants_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_AUTO | HU_ARENA_NO_INSTANTS, HU_ARENA_BY_OFFSET,
		HU_ARENA_BY_OFFSET | HU_ARENA_NO_INSTANTS };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 300; seed < 340; seed++) {
		uint32_t n = seed % 8 ? 60 + seed * 89 % 700 :
				1000 + seed * 131 % 1300;
		uint32_t m = n - n / 3;
		struct hu_ival *set = new_set(_metadata, n);

		moe_set(set, m, seed);
		arena_set(set + m, n - m, seed, false, true);
		places_agree(_metadata, ways, nw, set, n, 4 * n, seed);
	}
}

/*
 * A fit by offset that meets start instants of a block inside its time
 * finds their highest top T first, then a witness among the instants at
 * T, walked back from the last, out of line (hu_arena__ins_many()), on
 * training-shaped placements (util/arena_time.c's fine groups).  Sets of
 * 300 to 2,800 intervals shaped like a training step's, all kept by
 * offset, blocks splitting again and again, one in three cut to a 64th
 * to an eighth of the run so that the entries live at a block's
 * instants change inside a fit: split and by offset, with and without
 * the bound, they agree with the reference.  A witness kept from below a
 * higher top, or a hole as wide as the fit taken for none, moves offsets
 * here.
 */
TEST(arena_instants_walked_out_of_line_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET, HU_ARENA_AUTO | HU_ARENA_NO_BOUND };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 800; seed < 830; seed++) {
		uint32_t n = 300 + seed * 131 % 2500;
		uint64_t span = 8 * (uint64_t)n;
		struct hu_ival *set = new_set(_metadata, n);

		moe_set(set, n, seed);
		for (uint32_t i = 0; i < n; i += 3)
			set[i].end = set[i].start + span / 64 +
				     (set[i].end - set[i].start) % (span / 8);
		places_agree(_metadata, ways, nw, set, n, 4 * n, seed);
	}
}

/*
 * The 64ths of the run each block and fit touch (the blocks a fit skips
 * as sharing no time with it) are the high words of 128-bit products by
 * 2^70 / the run's length (when_of(), util/arena_int.h).  Training-shaped
 * sets (ending before 13 n) stretched over runs just under 2^58, 2^59,
 * 2^61 and 2^63 instants, where the products' high words are what count:
 * split, with and without the instants, they agree with the reference,
 * which keeps nothing by offset.  A factor past 2^70 / the length (the
 * 64ths past the 64th bit) moves offsets here and in most sets above.
 */
TEST(arena_wide_runs_agree)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET, HU_ARENA_BY_OFFSET | HU_ARENA_NO_INSTANTS };
	static const unsigned int shift[] = { 58, 59, 61, 63 };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 700; seed < 724; seed++) {
		uint32_t n = 200 + seed * 53 % 900;
		uint64_t scale = (1ULL << shift[seed % 4]) / (13 * (uint64_t)n);
		struct hu_ival *set = new_set(_metadata, n);

		moe_set(set, n, seed);
		for (uint32_t i = 0; i < n; i++) {
			set[i].start *= scale;
			set[i].end *= scale;
		}
		places_agree(_metadata, ways, nw, set, n, 4 * n, seed);
	}
}

/*
 * A fit by offset passes over a block (all its entries share time with
 * the fit and leave no hole as wide as it, or its start instants show
 * the same) even when spans found by time come inside the block's
 * offsets: they are read after it, each below the top it raised the
 * scan to or above every entry of the block that shares time with the
 * fit.  Decode-shaped sets: a quarter of the intervals KV-like, a 64th
 * of the run to an eighth of it long, kept by offset, the rest a few
 * instants long, kept by time, of a few sizes (some of none), at offsets
 * that interleave; and a fifth of them nested training sets.  Split, with
 * and without the instants, they agree with the reference, which reads
 * every placed interval.  A block passed over without raising the scan,
 * or the spans by time inside it dropped with it, moves an offset here.
 */
TEST(arena_blocks_passed_over_beside_spans_by_time_agree)
{
	const int nw = ARRAY_SIZE(split_ways);

	for (unsigned int seed = 600; seed < 640; seed++) {
		uint32_t n = seed % 8 ? 80 + seed * 71 % 900 :
				1200 + seed * 37 % 1000;
		struct hu_ival *set = new_set(_metadata, n);

		if (seed % 5)
			decode_set(set, n, seed, 4, 0);
		else
			arena_set(set, n, seed, false, true);
		places_agree(_metadata, split_ways, nw, set, n, 4 * n, seed);
	}
}

/*
 * A word of the keys with more distinct values than the rank table
 * holds, in two narrow runs below and above 2^63, is packed run after
 * run: the lifetimes of a training step's layout, where the intervals
 * live to the end (UINT64_MAX) have ~len equal to their start and the
 * others ~len near 2^64 (DeepSeek-V2-Lite: 11,095 lifetimes).  Sets of
 * 10,000 to 10,500 intervals, nearly all of distinct lifetimes: a
 * quarter of 1 GiB, seven in eight of those live to the end (stacked by
 * start, the others fit above those they meet: the first placement is
 * at the live peak and kept), the rest of 64 bytes, one in eight live to
 * the end, placed among them in the order of their keys.  The first
 * placement's keys (by size, then lifetime) sorted so agree with the
 * comparison's order, which the reference keeps (by offset, to stay
 * quick).  The runs packed in the wrong order, or the high run not moved
 * past the low one, moves an offset here.
 */
static void two_run_set(struct hu_ival *v, uint32_t n, unsigned int seed)
{
	uint64_t span = 8 * (uint64_t)n;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = rand_r(&seed) % span;
		bool big = rand_r(&seed) % 4 == 0;
		bool to_end = rand_r(&seed) % 8 < (big ? 7 : 1);

		v[i] = (struct hu_ival){ a, to_end ? UINT64_MAX : a + 1 +
					 rand_r(&seed) % 200000,
					 big ? 1073741824 : 64, 0 };
	}
}

TEST(arena_keys_in_two_runs_sort_as_compared)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_OFFSET | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET };
	const int nw = ARRAY_SIZE(ways);

	for (unsigned int seed = 700; seed < 702; seed++) {
		uint32_t n = 10000 + seed * 13 % 500;
		struct hu_ival *set = new_set(_metadata, n);

		two_run_set(set, n, seed);
		places_agree(_metadata, ways, nw, set, n, 0, seed);
	}
}

/*
 * util/sort.h, which sorts the placer's keys and spans: the quicksort
 * with its heap sort fallback gives what qsort() gives, on values with
 * many ties, and so does the fallback alone (no rounds left) and mixed
 * (a round or two of quicksort first).
 */
static inline bool u64_before(const uint64_t *x, const uint64_t *y)
{
	return *x < *y;
}

HU_DEFINE_SORT(sort_u64, uint64_t, u64_before)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

TEST(sort_matches_qsort_with_its_heap_fallback)
{
	unsigned int seed = 7;

	for (size_t n = 0; n < 2000; n += 1 + n / 3) {
		uint64_t *in = calloc(n + 1, sizeof(*in));
		uint64_t *want = calloc(n + 1, sizeof(*want));
		uint64_t *got = calloc(n + 1, sizeof(*got));

		ASSERT_NE(NULL, in);
		ASSERT_NE(NULL, want);
		ASSERT_NE(NULL, got);
		for (size_t i = 0; i < n; i++)
			in[i] = want[i] = rand_r(&seed) % (n / 4 + 1);
		qsort(want, n, sizeof(*want), cmp_u64);
		for (unsigned int depth = 0; depth < 4; depth++) {
			memcpy(got, in, n * sizeof(*got));
			if (depth == 3)
				sort_u64(got, n);
			else
				sort_u64_intro(got, n, depth);
			for (size_t i = 0; i < n; i++) {
				ASSERT_EQ(want[i], got[i])
					TH_LOG("n %zu depth %u at %zu", n, depth, i);
			}
		}
		free(got);
		free(want);
		free(in);
	}
}

/*
 * The online way's offsets, interval by interval, as a replay that keeps
 * no heap: in start order (ties by index), before each interval every
 * live one that has ended by its start leaves, the earliest end first
 * (ties by index), onto its size's list of free blocks, which the next
 * of that size takes from its head.  Which block of a size an interval
 * takes hangs on the order the ended ones leave in, so the heap of live
 * intervals (util/heap.h) must give them in exactly that order: with
 * ties by index reversed, or a sift that stops a level early, offsets
 * move even where the height does not.
 */
TEST(arena_online_way_takes_blocks_as_a_replay_without_heap)
{
	for (unsigned int seed = 1; seed <= 30; seed++) {
		uint32_t n = seed % 6 == 0 ? 2000 : 1 + seed * 71 % 900;
		struct hu_ival *v = new_set(_metadata, n);
		struct by_start *ord = calloc(n, sizeof(*ord));
		uint32_t *next = calloc(n, sizeof(*next));
		uint32_t *head = calloc(n, sizeof(*head));
		uint64_t *size = calloc(n, sizeof(*size));
		uint64_t *off = calloc(n, sizeof(*off));
		bool *live = calloc(n, sizeof(*live));
		uint64_t h, top = 0;
		uint32_t nsize = 0;

		ASSERT_NE(NULL, ord);
		ASSERT_NE(NULL, next);
		ASSERT_NE(NULL, head);
		ASSERT_NE(NULL, size);
		ASSERT_NE(NULL, off);
		ASSERT_NE(NULL, live);
		arena_set(v, n, seed * 7919, seed % 2, seed % 5 == 0);
		for (uint32_t i = 0; i < n; i++)
			ord[i] = (struct by_start){ v[i].start, i };
		qsort(ord, n, sizeof(*ord), cmp_by_start);
		for (uint32_t j = 0; j < n; j++) {
			uint32_t i = ord[j].i, s;

			for (;;) {
				uint32_t k = UINT32_MAX;

				for (uint32_t x = 0; x < n; x++)
					if (live[x] && v[x].end <= v[i].start &&
					    (k == UINT32_MAX ||
					     v[x].end < v[k].end))
						k = x;
				if (k == UINT32_MAX)
					break;
				live[k] = false;
				for (s = 0; s < nsize && size[s] != v[k].bytes;
				     s++)
					;
				if (s == nsize) {
					size[nsize] = v[k].bytes;
					head[nsize++] = UINT32_MAX;
				}
				next[k] = head[s];
				head[s] = k;
			}
			if (!v[i].bytes)
				continue;
			for (s = 0; s < nsize && size[s] != v[i].bytes; s++)
				;
			if (s < nsize && head[s] != UINT32_MAX) {
				off[i] = off[head[s]];
				head[s] = next[head[s]];
			} else {
				off[i] = top;
				top += v[i].bytes;
			}
			live[i] = true;
		}
		ASSERT_EQ(0, hu_arena_place_way(v, n, 0, 0, HU_ARENA_ONLINE,
						&h));
		EXPECT_EQ(top, h) TH_LOG("seed %u", seed);
		for (uint32_t i = 0; i < n; i++) {
			ASSERT_EQ(off[i], v[i].off)
				TH_LOG("seed %u, interval %u", seed, i);
		}
		free(live);
		free(off);
		free(size);
		free(head);
		free(next);
		free(ord);
		free(v);
	}
}

/*
 * hu_arena__ins_top() against the one walk by index it stands for (T and
 * its first instant forward, then a witness back from the last instant
 * inside the fit to that first), on random blocks of 1 to 128 instants
 * whose tops are drawn from a few values (many ties at T, the first to
 * reach it at either place of a pair) and fits that end anywhere among
 * them.  Past each block's sentinel lie instants at 0 with tops above
 * every other, as the next block's may be: read, they would change T.
 */
static struct ins_top ins_top_by_index(const uint64_t *t,
				       const struct oins *in, uint64_t ve,
				       uint64_t bytes, uint64_t cut,
				       uint64_t top, bool wit, uint64_t cur)
{
	uint32_t k = 0, n;

	for (n = 0; t[n] < ve; n++) {
		if (in[n].top > top) {
			top = in[n].top;
			k = n;
			wit = false;
		}
	}
	if (top <= cur)
		return (struct ins_top){ top, false };
	for (; n > k && !wit; n--)
		if (in[n - 1].top == top)
			wit = in[n - 1].free < bytes && in[n - 1].lo < cut;
	return (struct ins_top){ top, wit };
}

TEST(arena_instants_top_as_one_walk)
{
	unsigned int seed = 5, wits = 0, tops = 0;
	uint64_t t[OBLK + 4];
	struct oins in[OBLK + 4];

	for (int round = 0; round < 20000; round++) {
		uint32_t ns = 1 + rand_r(&seed) % OBLK;
		uint64_t at = 0, ve, bytes = 1 + rand_r(&seed) % 8;
		uint64_t top = rand_r(&seed) % 4, cur = rand_r(&seed) % 6;
		uint64_t cut = cur + bytes;
		bool wit = rand_r(&seed) % 2;
		struct ins_top a, b;

		for (uint32_t k = 0; k < ns; k++) {
			at += 1 + rand_r(&seed) % 3;
			t[k] = at;
			in[k] = (struct oins){ rand_r(&seed) % 8,
					       rand_r(&seed) % 7,
					       rand_r(&seed) % 10, 0 };
		}
		t[ns] = UINT64_MAX;
		for (uint32_t k = ns + 1; k < OBLK + 4; k++) {
			t[k] = 0;
			in[k] = (struct oins){ 0, 1000, 0, 0 };
		}
		/* most fits end inside the block, some past its instants */
		ve = rand_r(&seed) % 8 ? 1 + rand_r(&seed) % (at + 1) :
		     UINT64_MAX - rand_r(&seed) % 2;
		a = ins_top_by_index(t, in, ve, bytes, cut, top, wit, cur);
		b = hu_arena__ins_top(t, in, ve, bytes, cut, top, wit, cur);
		ASSERT_EQ(a.top, b.top) TH_LOG("round %d", round);
		ASSERT_EQ(a.wit, b.wit) TH_LOG("round %d", round);
		wits += a.wit;
		tops += a.top > top;
	}
	/* both answers are often asked for */
	EXPECT_LT(2000U, wits);
	EXPECT_LT(2000U, tops);
}

/*
 * The offset order is sized for the intervals kept there (a 64th of the
 * run long or more), not for every interval: @nl long intervals that
 * all share the middle of the run, stacked one above the other as they
 * come (each lands on top, and a full block splits in two halves, the
 * most blocks the long ones can fill), among @ns short ones by time.
 * Placed split, all by offset and by time, every way the reference's
 * offsets; room for fewer blocks than the halves fill is written past
 * its end (under the sanitizer, an error).
 */
static struct hu_ival *long_set(struct __test_metadata *_metadata,
				uint32_t nl, uint32_t ns, unsigned int seed)
{
	uint64_t span = 64 * (uint64_t)(nl + ns) + 640;
	struct hu_ival *v = new_set(_metadata, nl + ns);

	for (uint32_t i = 0; i < nl; i++) {
		uint64_t a = span / 4 + rand_r(&seed) % (span / 8);

		v[i] = (struct hu_ival){ a, a + span / 4 +
					 rand_r(&seed) % (span / 8), 64, 0 };
	}
	for (uint32_t i = nl; i < nl + ns; i++) {
		uint64_t a = rand_r(&seed) % span;

		v[i] = (struct hu_ival){ a, a + 1 + rand_r(&seed) % 16,
					 64 * (1 + rand_r(&seed) % 8), 0 };
	}
	return v;
}

TEST(arena_offset_order_sized_for_its_long_intervals)
{
	static const enum hu_arena_way ways[] = {
		HU_ARENA_BY_TIME | HU_ARENA_WHOLE, HU_ARENA_AUTO,
		HU_ARENA_BY_OFFSET, HU_ARENA_BY_TIME };
	static const uint32_t nls[] = { 1, 64, 127, 128, 129, 255, 256,
					257, 511, 700, 1000 };

	for (unsigned int k = 0; k < ARRAY_SIZE(nls); k++) {
		uint32_t ns = k % 2 ? 3000 : 40 + 7 * k;
		struct hu_ival *set = long_set(_metadata, nls[k], ns, k + 1);

		places_agree(_metadata, ways, ARRAY_SIZE(ways), set,
			     nls[k] + ns, 0, k + 1);
	}
}

/*
 * On a decode-shaped layout (the intervals kept by offset at most a
 * quarter as many as those by time) a fit that must read a block's
 * entries among spans by time reads only those the masks of its start
 * instants name: the entries live at the last instant at or before the
 * fit's start and at each instant inside it.  Sets of 500 to 3500
 * intervals, an eighth KV-like (a 64th of the run to an eighth of it
 * long, kept by offset, in blocks that fill and split, so that both
 * words of a mask hold bits), the rest a few instants long (some of no
 * length), of a few sizes (some of none), at offsets that interleave:
 * every way the reference's offsets, with and without the instants and
 * the bound (whose holes scan reads the masks too).  A mask whose bits
 * are not moved up when an entry comes in below them, or that misses
 * the instant before the fit's start or its second word, moves an
 * offset here.
 */
TEST(arena_decode_blocks_read_by_their_masks_agree)
{
	for (unsigned int seed = 700; seed < 740; seed++) {
		uint32_t n = 500 + seed * 97 % 3000;
		struct hu_ival *set = new_set(_metadata, n);

		decode_set(set, n, seed, 8, 40);
		places_agree(_metadata, split_ways, ARRAY_SIZE(split_ways),
			     set, n, seed % 3 ? 4 * n : 0, seed);
	}
}

/*
 * A fit in one bucket reads that bucket's entries in place up to its
 * sentinel (BKT_STOP, util/arena_int.h), which shares time with every
 * fit but those that end at instant 0 or start at UINT64_MAX: those read
 * the bucket as several buckets are read.  Decode-shaped sets whose run
 * starts at 0, a tenth of the intervals of no length at 0 (some of no
 * size) and some one instant long there, and, one set in two, a few of
 * no length at UINT64_MAX beside endless ones: every way the reference's
 * offsets, with and without the instants and the bound.  The walk run
 * past a sentinel, or one not moved up with its bucket's entries on an
 * insert, moves an offset here or reads past the buckets' room.
 */
TEST(arena_bucket_sentinels_agree)
{
	for (unsigned int seed = 800; seed < 832; seed++) {
		uint32_t n = 300 + seed * 89 % 2500;
		struct hu_ival *set = new_set(_metadata, n);
		unsigned int r = seed;

		decode_set(set, n, seed, 8, 40);
		set[0] = (struct hu_ival){ 0, 1, 64, 0 };
		for (uint32_t i = 1; i < n; i++) {
			uint32_t k = rand_r(&r) % 20;

			if (k < 2)
				set[i] = (struct hu_ival){ 0, 0, 64 * k, 0 };
			else if (k == 2)
				set[i] = (struct hu_ival){ 0, 1, 64, 0 };
			else if (k == 3 && seed % 2)
				set[i] = (struct hu_ival){
					UINT64_MAX, UINT64_MAX, 128, 0 };
			else if (k == 4 && seed % 2)
				set[i].end = UINT64_MAX;
		}
		places_agree(_metadata, split_ways, ARRAY_SIZE(split_ways),
			     set, n, seed % 3 ? 4 * n : 0, seed);
	}
}

TEST_HARNESS_MAIN
