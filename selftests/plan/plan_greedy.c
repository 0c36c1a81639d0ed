// SPDX-License-Identifier: GPL-2.0
/*
 * The greedy baseline's walk (libhyperplan/policies/policy_greedy.c)
 * stops once the simulator's clocks, followed from below beside it, put
 * the run beyond the slowdown goal.  Over the budgets the search bisects
 * (so many near where probes start to meet the goal), on random graphs
 * and cut-down models on every reference profile:
 *  - a walk that stops is one whose whole evictions, emitted and
 *    simulated without a budget and at the walk's budget, miss the goal;
 *  - a walk that does not stop makes the same evictions, byte for byte,
 *    as the walk that never stops.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"

#include "plan_cases.h"
#include "policies/policy.h"
#include "sim/sim.h"

#ifdef __SANITIZE_ADDRESS__
/*
 * Every allocation of this program comes filled with 0xff, not with
 * AddressSanitizer's 0xbe in its first 4 KiB alone: an entry that an
 * allocation was to clear and did not then reads as set, a residency
 * as a device copy (HYPER_RES_DEVICE, bit 0), which walks compared
 * with scratch's then tell (scratch_walks_start_cleared, which checks
 * that the fill is on).
 */
const char *__asan_default_options(void)
{
	return "malloc_fill_byte=255:max_malloc_fill_size=1073741824";
}
#endif

static const double slows[] = { 0.01, 0.1 };
static const uint32_t aheads[] = { 1, 8, 64 };

static const struct plan_case models[] = {
	{ "llama2-7b", "infer", 0, 1 },
	{ "llama2-7b", "train", 0, 1 },
	{ "mixtral-8x7b", "infer", 0, 3 },
};

struct tally {
	unsigned int walks, stops, past_floor, missed;
	/* walks that evicted and met the goal at their budget; the least
	 * margin of their peak above budget less the largest tensor */
	unsigned int evicting_fits;
	double least_margin;
};


/* Simulates @ev whole at @budget (0: none); whether it meets @slow. */
static bool meets(struct __test_metadata *_metadata, const struct job *j,
		  const struct evict *ev, size_t nev, uint64_t budget,
		  double slow, uint64_t *peak)
{
	struct hp_mem mem = { 0 };
	struct sim_result r;
	struct hp_err e;
	struct sched s;
	int ret;

	if (hyper_plan__sched_build(&s, &j->lf, ev, nev, &mem, &e)) {
		EXPECT_TRUE(false) TH_LOG("%s", e.msg);
		return false;
	}
	s.budget = budget;
	/* a budget the run cannot keep fails it: that misses the goal too */
	ret = hyper_plan__simulate(&s, &j->p, NULL, &r, &mem, &e);
	EXPECT_NE(-ENOMEM, ret);
	hyper_plan__sched_free(&s);
	*peak = r.peak;
	return !ret && slowdown(&r) <= slow + 1e-12;
}

/* One bisection of the budget, as hyper_plan__run_greedy()'s. */
static void bisect(struct __test_metadata *_metadata, const struct job *j,
		   double slow, uint32_t ahead, struct tally *n)
{
	const struct life *lf = &j->lf;
	struct hp_mem mem = { 0 };
	struct greedy_ctx stop = { .lf = lf, .mem = &mem, .p = &j->p,
				   .max_slow = slow };
	struct greedy_ctx whole = { .lf = lf, .mem = &mem };
	uint64_t lo = lf->max_ws, hi = lf->peak0, b, peak;
	unsigned int it;
	double floor;

	for (it = 0; it < 12 && hi > lo + 1; it++) {
		b = lo + (hi - lo) / 2;
		ASSERT_EQ(0, hyper_plan__greedy_evicts(&stop, b, ahead));
		ASSERT_EQ(0, hyper_plan__greedy_evicts(&whole, b, ahead));
		EXPECT_FALSE(whole.beyond);
		n->walks++;
		if (!stop.beyond) {
			ASSERT_EQ(whole.nev, stop.nev);
			EXPECT_EQ(0, memcmp(whole.ev, stop.ev,
					    whole.nev * sizeof(*whole.ev)))
				TH_LOG("%s: a walk not stopped changed", j->g.name);
		}
		if (stop.beyond) {
			n->stops++;
			EXPECT_FALSE(meets(_metadata, j, whole.ev, whole.nev, 0,
					   slow, &peak))
				TH_LOG("%s on %s: budget %llu, lookahead %u, slowdown %g: stopped, yet it meets the goal",
				       j->g.name, j->p.name,
				       (unsigned long long)b, ahead, slow);
			/* the prefetches' floor alone would not have stopped it */
			ASSERT_EQ(0, hyper_plan__sim_fetch_floor(lf, &j->p,
				whole.ev, whole.nev, &mem, &floor));
			if (!hyper_plan__sim_beyond(floor, lf->t0[lf->n], slow))
				n->past_floor++;
		}
		if (meets(_metadata, j, whole.ev, whole.nev, b, slow, &peak)) {
			EXPECT_FALSE(stop.beyond);
			/* an evicting walk that fits peaks above b - most:
			 * what the greedy search's stop rests on */
			if (whole.nev) {
				uint64_t most = hyper_plan__graph_largest(&j->g);
				double margin = ((double)peak + most - b) / most;

				EXPECT_LT(b, peak + most)
					TH_LOG("%s on %s: budget %llu, lookahead %u: peak %llu",
					       j->g.name, j->p.name,
					       (unsigned long long)b, ahead,
					       (unsigned long long)peak);
				if (!n->evicting_fits++ || margin < n->least_margin)
					n->least_margin = margin;
			}
			hi = peak < b ? peak : b;
		} else {
			if (!stop.beyond)
				n->missed++;
			lo = b;
		}
	}
	hyper_plan__greedy_free(&stop);
	hyper_plan__greedy_free(&whole);
}

static void walks_on(struct __test_metadata *_metadata,
		     const struct plan_case *c, const struct profile *p,
		     struct tally *n)
{
	struct job j = { 0 };
	struct hp_err e;
	size_t s, a;

	ASSERT_EQ(0, case_job(&j, c, p, &e))
		TH_LOG("%s", e.msg);
	for (s = 0; s < ARRAY_SIZE(slows); s++)
		for (a = 0; a < ARRAY_SIZE(aheads); a++)
			bisect(_metadata, &j, slows[s], aheads[a], n);
	hyper_plan__job_free(&j);
}

/*
 * One walk of @kept and of @sc (gc->scratch) at budget @b and lookahead
 * @ahead: the same stop and the same evictions, byte for byte, but that
 * a kept walk may stop sooner on the evictions it still owes
 * (policy_greedy.c, owe_beyond()), scratch only on its clocks: then
 * both stop, and the kept walk's evictions are the first of scratch's,
 * each fetched at the same step or not yet.  Returns whether it stopped
 * sooner.
 */
static bool walk_pair(struct __test_metadata *_metadata, const struct job *j,
		      struct greedy_ctx *kept, struct greedy_ctx *sc,
		      uint64_t b, uint32_t ahead)
{
	bool sooner = false;

	EXPECT_EQ(0, hyper_plan__greedy_evicts(kept, b, ahead));
	EXPECT_EQ(0, hyper_plan__greedy_evicts(sc, b, ahead));
	EXPECT_EQ(sc->beyond, kept->beyond)
		TH_LOG("%s: budget %llu, lookahead %u, slowdown %g",
		       j->g.name, (unsigned long long)b, ahead, sc->max_slow);
	if (!kept->beyond || !sc->beyond) {
		EXPECT_EQ(sc->nev, kept->nev)
			TH_LOG("%s: budget %llu, lookahead %u",
			       j->g.name, (unsigned long long)b, ahead);
		if (sc->nev == kept->nev && sc->nev)	/* ev may be NULL */
			EXPECT_EQ(0, memcmp(sc->ev, kept->ev,
					    sc->nev * sizeof(*sc->ev)))
				TH_LOG("%s: budget %llu, lookahead %u",
				       j->g.name, (unsigned long long)b, ahead);
		return false;
	}
	EXPECT_GE(sc->nev, kept->nev);
	for (size_t i = 0; i < kept->nev && i < sc->nev; i++) {
		struct evict k = kept->ev[i], s = sc->ev[i];

		/* fetched after the kept walk stopped */
		if (k.fetch_step == (int32_t)j->lf.n &&
		    s.fetch_step != k.fetch_step) {
			sooner = true;
			k.fetch_step = s.fetch_step;
		}
		EXPECT_EQ(0, memcmp(&k, &s, sizeof(k)))
			TH_LOG("%s: budget %llu, lookahead %u: eviction %zu",
			       j->g.name, (unsigned long long)b, ahead, i);
	}
	return sooner || kept->nev < sc->nev;
}

/* A case's job, and a kept and a scratch walk context on it. */
struct walks {
	struct hp_mem mem;
	struct job j;
	struct greedy_ctx kept, sc;
};

/* @w for case @c on the reference profile @n picks (cyclically). */
static void walks_begin(struct __test_metadata *_metadata, struct walks *w,
			const struct plan_case *c, size_t n)
{
	size_t np = hyper_plan__profile_table_len;
	struct hp_err e;

	memset(w, 0, sizeof(*w));
	w->kept = (struct greedy_ctx){ .lf = &w->j.lf, .mem = &w->mem };
	w->sc = (struct greedy_ctx){ .lf = &w->j.lf, .mem = &w->mem,
				     .scratch = true };
	ASSERT_EQ(0, case_job(&w->j, c, &hyper_plan__profile_table[n % np], &e))
		TH_LOG("%s", e.msg);
}

static void walks_end(struct walks *w)
{
	hyper_plan__greedy_free(&w->kept);
	hyper_plan__greedy_free(&w->sc);
	hyper_plan__job_free(&w->j);
}

/*
 * The first walk of @w, at the peak: it builds the start, whose
 * residency is known after it.  *@lo: that or the largest working set,
 * the higher; *@span: from there to the peak.
 */
static void start_span(struct __test_metadata *_metadata, struct walks *w,
		       uint64_t *lo, uint64_t *span)
{
	walk_pair(_metadata, &w->j, &w->kept, &w->sc, w->j.lf.peak0, 1);
	*lo = w->kept.mem0 > w->j.lf.max_ws ? w->kept.mem0 : w->j.lf.max_ws;
	*span = w->j.lf.peak0 > *lo ? w->j.lf.peak0 - *lo : 1;
}

/* Seconds of CPU, minutes on a loaded shared machine. */
FIXTURE(many) {};
FIXTURE_SETUP(many) {}
FIXTURE_TEARDOWN(many) {}

TEST_F_TIMEOUT(many, stops_only_out_of_reach, 300)
{
	struct tally n = { 0 };
	unsigned int seed, i;

	for (seed = 1; seed <= 6; seed++)
		for (i = 0; i < hyper_plan__profile_table_len; i++) {
			struct plan_case c = { NULL, NULL, 20 + seed * 37 % 200,
					       seed + 900 };

			walks_on(_metadata, &c, &hyper_plan__profile_table[i], &n);
		}
	for (i = 0; i < ARRAY_SIZE(models); i++)
		walks_on(_metadata, &models[i],
			 &hyper_plan__profile_table[i % hyper_plan__profile_table_len],
			 &n);
	TH_LOG("%u walks, %u stopped (%u the fetch floor would not stop), %u not stopped that miss the goal",
	       n.walks, n.stops, n.past_floor, n.missed);
	TH_LOG("%u evicting walks met the goal, the closest %.3f of the largest tensor above budget less that tensor",
	       n.evicting_fits, n.least_margin);
	EXPECT_LT(0, n.evicting_fits);
	/* stops the fetch floor alone would miss, or the test proves little */
	EXPECT_LT(0, n.past_floor);
}

/*
 * What a context keeps from one walk to the next (gc->live_after, the
 * gaps' liveness by access) and the candidates listed by next use
 * against the from-scratch path (gc->scratch: hyper_plan__gap_live()
 * asked at every access, the candidates in a lazy binary heap, the
 * furthest next use and then the lowest tensor first): random graphs and
 * models, budgets from the largest working set to the peak in a
 * scrambled order, each lookahead, with the clocks' stop and without;
 * the same evictions, byte for byte, and the same stops.  The kept path
 * also stops walking once its evictions are settled (gc->settled: none
 * left to fetch, the rest fits without more) and copies its start from
 * the context's; scratch walks every step from a start built tensor by
 * tensor, so a settled walk that would still have evicted or fetched,
 * or a start copied wrong, differs.
 */
TEST(walks_kept_match_scratch)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 60, 11 }, { NULL, NULL, 250, 12 },
		{ NULL, NULL, 700, 13 }, { "llama2-7b", "infer", 0, 1 },
		{ "mixtral-8x7b", "train", 0, 2 },
	};
	uint64_t x = 88172645463325252ULL;
	unsigned int walks = 0, early = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, span;

		walks_begin(_metadata, &w, &cases[c], c);
		lo = w.j.lf.max_ws;
		span = w.j.lf.peak0 > lo ? w.j.lf.peak0 - lo : 1;
		for (uint32_t k = 0; k < 24; k++) {
			uint64_t b;
			uint32_t ahead;

			x = plan_xorshift(x);
			b = lo + x % (span + 1);
			ahead = aheads[(x >> 40) % ARRAY_SIZE(aheads)];
			w.kept.p = w.sc.p = k % 2 ? &w.j.p : NULL;
			w.kept.max_slow = w.sc.max_slow = slows[k / 2 % 2];
			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b, ahead);
			EXPECT_EQ(w.j.lf.n, w.sc.settled);
			walks++;
			if (w.kept.settled < w.j.lf.n && w.kept.nev)
				early++;	/* settled after evicting */
		}
		EXPECT_TRUE(w.kept.live_after != NULL);
		EXPECT_TRUE(w.sc.live_after == NULL);
		walks_end(&w);
	}
	TH_LOG("%u walks, %u settled early after evicting", walks, early);
	EXPECT_LT(0, early);	/* or the settled stop goes untested */
}

/*
 * The kept path writes a step's stamps (its tensors, which make_room()
 * passes over) only once the step runs short, and passes the lookahead's
 * window without a look while no eviction is owed (policy_greedy.c,
 * run_step(), lookahead_rows()); scratch stamps every step and looks at
 * every want.  Budgets from the largest working set up, where steps run
 * short of room most, on the mixtures' training (steps of many tensors),
 * each lookahead, with clocks and not: a stamp written late or not at
 * all evicts a tensor of the step, a want passed with one owed misses a
 * prefetch, and the evictions differ from scratch's.
 */
TEST(short_steps_match_scratch)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 31 },
		{ "qwen1.5-moe-a2.7b", "train", 0, 32 },
		{ "mixtral-8x7b", "train-keep", 0, 33 },
	};
	unsigned int walks = 0, evicting = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;

		walks_begin(_metadata, &w, &cases[c], c);
		for (uint32_t k = 0; k < 16; k++) {
			/* the lower half more densely: k^2 / 256 */
			uint64_t b = w.j.lf.max_ws +
				     (w.j.lf.peak0 - w.j.lf.max_ws) / 256 * k * k;
			uint32_t ahead = aheads[k % ARRAY_SIZE(aheads)];

			w.kept.p = w.sc.p = k / 3 % 2 ? &w.j.p : NULL;
			w.kept.max_slow = w.sc.max_slow = 0.1;
			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b, ahead);
			walks++;
			evicting += w.kept.nev > 0;
		}
		walks_end(&w);
	}
	TH_LOG("%u walks, %u evicting", walks, evicting);
	EXPECT_LT(walks / 2, evicting);
}

/*
 * A settled walk's clocks still run to the end: the kept path runs them
 * without the steps' fetches once every fetch taken has been read
 * (policy_greedy.c, clock_rest()), scratch step by step.  Where the run
 * meets a slowdown goal only just, a stall those clocks leave out or
 * count twice flips the stop: the goal is bisected, on scratch, to
 * where its walk starts to stop, and the kept walk must stop alike at
 * every goal tried.
 */
TEST(settled_tails_stop_as_scratch)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 60, 21 }, { NULL, NULL, 250, 22 },
		{ NULL, NULL, 400, 23 }, { "llama2-7b", "infer", 0, 1 },
	};
	unsigned int tails = 0, flips = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;

		walks_begin(_metadata, &w, &cases[c], c);
		w.kept.p = w.sc.p = &w.j.p;
		for (uint32_t k = 1; k < 8; k++) {
			uint64_t b = w.j.lf.max_ws +
				     (w.j.lf.peak0 - w.j.lf.max_ws) / 8 * k;
			uint32_t ahead = aheads[k % ARRAY_SIZE(aheads)];
			double lo = 0, hi = 1;

			for (int it = 0; it < 40; it++) {
				double s = (lo + hi) / 2;

				w.kept.max_slow = w.sc.max_slow = s;
				ASSERT_EQ(0, hyper_plan__greedy_evicts(&w.sc, b,
								       ahead));
				ASSERT_EQ(0, hyper_plan__greedy_evicts(&w.kept, b,
								       ahead));
				EXPECT_EQ(w.sc.beyond, w.kept.beyond)
					TH_LOG("%s: budget %llu, lookahead %u, slowdown %.17g",
					       w.j.g.name, (unsigned long long)b,
					       ahead, s);
				if (w.kept.settled < w.j.lf.n && w.kept.nev)
					tails++;
				if (w.sc.beyond)
					lo = s;
				else
					hi = s;
			}
			flips += lo > 0 && hi < 1;
		}
		walks_end(&w);
	}
	TH_LOG("%u settled walks near their goals, %u goals bisected", tails,
	       flips);
	EXPECT_LT(0, tails);
	EXPECT_LT(0, flips);
}

/* @r with its peak moved by @d bytes: a result to beat. */
static struct result moved(const struct result *r, int64_t d)
{
	struct result m = { .ok = true, .sim = r->sim };

	m.sim.peak = r->sim.peak + d;
	return m;
}

/*
 * Given a result to beat (pb->beat), hyper_plan__run_greedy() stops each
 * bisection once nothing it has left could beat it.  Whatever it returns
 * must beat that result exactly when the whole search's result does,
 * and must then be that result (the same probe: the same peak, time and
 * parameters).  Against the planner's own result, and against results a
 * little above, at and below the whole search's, on random graphs and
 * models on each profile at two goals; some searches must stop early,
 * and some must still win after stopping, or the test proves little.
 */
TEST(stopped_searches_keep_their_winner)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 80, 41 }, { NULL, NULL, 200, 42 },
		{ NULL, NULL, 500, 43 }, { "llama2-7b", "infer", 0, 1 },
		{ "mixtral-8x7b", "infer", 0, 3 },
	};
	unsigned int runs = 0, stopped = 0, won_stopped = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++)
	for (size_t pi = 0; pi < hyper_plan__profile_table_len; pi++)
	for (size_t si = 0; si < ARRAY_SIZE(slows); si++) {
		const struct profile *p = &hyper_plan__profile_table[pi];
		struct goal gl = { slows[si], 0 };
		struct result full, plan, cut, beats[4];
		struct job j = { 0 };
		struct problem pb;
		struct hp_err e;
		uint64_t most;

		ASSERT_EQ(0, case_job(&j, &cases[c], p, &e))
			TH_LOG("%s", e.msg);
		most = hyper_plan__graph_largest(&j.g);
		hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
		pb.memo = NULL;
		ASSERT_EQ(0, hyper_plan__run_greedy(&pb, &full, &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, hyper_plan__run_plan(&pb, &plan, &e))
			TH_LOG("%s", e.msg);
		beats[0] = plan;
		beats[1] = moved(&full, (int64_t)most / 2);
		beats[2] = moved(&full, 0);
		beats[3] = moved(&full, -1);
		for (size_t b = 0; b < ARRAY_SIZE(beats); b++) {
			bool wins = hyper_plan__result_better(&gl, &full,
							      &beats[b]);

			pb.beat = &beats[b];
			ASSERT_EQ(0, hyper_plan__run_greedy(&pb, &cut, &e))
				TH_LOG("%s", e.msg);
			pb.beat = NULL;
			runs++;
			stopped += cut.probes < full.probes;
			EXPECT_EQ(wins, hyper_plan__result_better(&gl, &cut,
								  &beats[b]))
				TH_LOG("%s on %s, slowdown %g, beat %zu",
				       j.g.name, p->name, slows[si], b);
			if (wins) {
				won_stopped += cut.probes < full.probes;
				EXPECT_EQ(full.sim.peak, cut.sim.peak);
				EXPECT_EQ(full.sim.makespan_ns, cut.sim.makespan_ns);
				EXPECT_STREQ(full.params, cut.params);
			}
			hyper_plan__result_free(&cut);
		}
		hyper_plan__result_free(&full);
		hyper_plan__result_free(&plan);
		hyper_plan__job_free(&j);
	}
	TH_LOG("%u searches given a result to beat, %u stopped early, %u of them still won",
	       runs, stopped, won_stopped);
	EXPECT_LT(0, stopped);
	EXPECT_LT(0, won_stopped);
}

/*
 * A kept walk also stops once the evictions it still owes, fetched from
 * the lookahead before their reads on, put the run beyond the goal
 * (policy_greedy.c, owe_beyond()); scratch stops only on its clocks,
 * which take those fetches later.  On training graphs (activations
 * evicted in the forward pass, owed until the backward) the budget
 * bisected under a slowdown goal, at each lookahead: the same walks stop
 * as scratch's, some sooner (walk_pair()).  A bound that started the
 * fetches later than the lookahead allows, or kept a walk's owed ones
 * for the next, stops walks that scratch does not.
 */
TEST(owed_stops_as_scratch)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 41 },
		{ "llama2-7b", "train", 0, 42 },
		{ NULL, NULL, 300, 43 },
	};
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	unsigned int walks = 0, stops = 0, sooner = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;

		walks_begin(_metadata, &w, &cases[c], c);
		w.kept.p = w.sc.p = &w.j.p;
		w.kept.max_slow = w.sc.max_slow = 0.01;
		for (size_t a = 0; a < ARRAY_SIZE(ahead); a++) {
			uint64_t lo = w.j.lf.max_ws, hi = w.j.lf.peak0;

			for (int it = 0; it < 8 && hi > lo + 1; it++) {
				uint64_t b = lo + (hi - lo) / 2;

				sooner += walk_pair(_metadata, &w.j, &w.kept, &w.sc,
						    b, ahead[a]);
				walks++;
				stops += w.sc.beyond;
				if (w.sc.beyond)
					lo = b;
				else
					hi = b;
			}
		}
		walks_end(&w);
	}
	TH_LOG("%u walks, %u stopped, %u of them sooner on what they owe",
	       walks, stops, sooner);
	EXPECT_LT(0, sooner);	/* or the owed fetches' stop goes untested */
}

/*
 * A kept walk whose start evicts nothing takes up the walk without
 * budget where it first makes room or is settled (policy_greedy.c,
 * prefix_to()), that walk kept from the walks before, run on or begun
 * again.  Budgets rising (the bisections' walks that miss the goal),
 * falling (those that meet it, and the next lookahead's first), and at
 * random, with the goal changed between walks: each walk as scratch's,
 * which walks every step.  A prefix stopped a step late, taken past a
 * step beyond the goal, or not begun again for a lower budget or
 * another goal, changes a walk here.
 */
TEST(prefix_walks_as_scratch)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 51 },
		{ "llama2-7b", "train", 0, 52 },
		{ NULL, NULL, 300, 53 },
		{ NULL, NULL, 80, 54 },
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned int walks = 0, after = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, span;

		walks_begin(_metadata, &w, &cases[c], c);
		w.kept.p = w.sc.p = &w.j.p;
		w.kept.max_slow = w.sc.max_slow = 0.01;
		start_span(_metadata, &w, &lo, &span);
		for (uint32_t k = 0; k < 48; k++) {
			uint64_t b;

			if (k < 16) {		/* rising */
				b = lo + span / 16 * k;
			} else if (k < 32) {	/* falling */
				b = lo + span / 16 * (32 - k);
			} else {
				x = plan_xorshift(x);
				b = lo + x % (span + 1);
				w.kept.max_slow = w.sc.max_slow =
					slows[(x >> 30) % 2];
				w.kept.p = w.sc.p = x >> 50 & 1 ? &w.j.p : NULL;
			}
			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b,
				  aheads[k % ARRAY_SIZE(aheads)]);
			walks++;
			after += w.kept.nev > 0 && b >= w.kept.mem0;
		}
		EXPECT_TRUE(w.kept.pre != NULL);
		EXPECT_TRUE(w.sc.pre == NULL);
		walks_end(&w);
	}
	TH_LOG("%u walks, %u of them evicting after a prefix", walks, after);
	EXPECT_LT(walks / 4, after);
}

/*
 * The walk without budget lists its candidates where it stops
 * (policy_greedy.c, prefix_to()), and a walk that takes it up copies
 * them with its state (prefix_copy()), then lists only what moved since:
 * stale entries (listed there, detached dead since) are passed over.
 * Each lookahead's budgets rising, each walked twice (the second copy
 * into a walk that held the first's lists), then falling for the next
 * lookahead (the prefix begun again), with the goal and without (walks
 * that make room to the end): each walk as scratch's.  On a decode graph
 * walks copy the tensors touched, on training graphs every tensor.  A
 * use's first tensor, a tensor's links or the bits not copied, or a
 * prefix listed before its last steps, changes a walk here.
 */
TEST(prefix_lists_walks_as_scratch)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 71 },
		{ "llama2-7b", "infer", 0, 72 },
		{ NULL, NULL, 300, 73 },
	};
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	unsigned int walks = 0, after = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, span;

		walks_begin(_metadata, &w, &cases[c], c);
		start_span(_metadata, &w, &lo, &span);
		for (size_t a = 0; a < ARRAY_SIZE(ahead); a++) {
			w.kept.p = w.sc.p = a % 2 ? NULL : &w.j.p;
			w.kept.max_slow = w.sc.max_slow = 0.01;
			for (uint32_t k = 0; k < 8; k++) {
				uint64_t b = lo + span / 5 * (k / 2 + 1);

				walk_pair(_metadata, &w.j, &w.kept, &w.sc, b,
					  ahead[a]);
				walks++;
				after += w.kept.nev > 0;
			}
		}
		EXPECT_TRUE(w.kept.pre != NULL);
		walks_end(&w);
	}
	TH_LOG("%u walks, %u of them evicting after a prefix", walks, after);
	EXPECT_LT(walks / 4, after);
}

/* xorshift64: the next of @x */
/*
 * A kept walk leaves its arrays as it ends them: the next walk cleans
 * them for itself (policy_greedy.c, walk_clean()), or copies the walk
 * without budget over them where it takes that up (prefix_take()), over
 * the tensors either touched or, where that is nearly all of them, each
 * array whole.  Walks from the start (budgets under the start's
 * residency), deep into the graph (near the peak) and short (just above
 * the start's), one after the other in a scrambled order, each lookahead,
 * with the goal and without: each walk as scratch's, which builds its
 * own.  A tensor the walk before touched and the next left as it was
 * (its entries, its place in the lists, an eviction or a fetch step of
 * it), changes a walk here.
 */
TEST(walks_take_up_any_walk)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 81 },
		{ "llama2-7b", "infer", 0, 82 },
		{ NULL, NULL, 300, 83 },
		{ "mixtral-8x7b", "train-keep", 0, 84 },
	};
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	uint64_t x = 0x2545f4914f6cdd1dULL;
	unsigned int walks = 0, kinds[3] = { 0 };

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, mid, span;

		walks_begin(_metadata, &w, &cases[c], c);
		/* the first walk builds the start: mem0 is known after it */
		walk_pair(_metadata, &w.j, &w.kept, &w.sc, w.j.lf.peak0, 1);
		lo = w.j.lf.max_ws;
		mid = w.kept.mem0 > lo ? w.kept.mem0 : lo;
		span = w.j.lf.peak0 > mid ? w.j.lf.peak0 - mid : 1;
		for (uint32_t k = 0; k < 36; k++) {
			uint32_t kind;
			uint64_t b;

			x = plan_xorshift(x);
			kind = (uint32_t)(x >> 20) % 3;
			if (kind == 0)		/* from the start */
				b = lo + (x >> 30) % (mid - lo + 1);
			else if (kind == 1)	/* deep: near the peak */
				b = w.j.lf.peak0 - span / 8 +
				    (x >> 30) % (span / 8 + 1);
			else			/* short: above the start's */
				b = mid + (x >> 30) % (span / 8 + 1);
			w.kept.p = w.sc.p = x >> 60 & 1 ? &w.j.p : NULL;
			w.kept.max_slow = w.sc.max_slow = slows[x >> 61 & 1];
			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b,
				  ahead[x >> 62]);
			walks++;
			kinds[kind] += w.kept.nev > 0;
		}
		EXPECT_TRUE(w.kept.pre != NULL);
		walks_end(&w);
	}
	TH_LOG("%u walks; evicting from the start %u, deep %u, short %u",
	       walks, kinds[0], kinds[1], kinds[2]);
	EXPECT_LT(0, kinds[0]);
	EXPECT_LT(0, kinds[1]);
	EXPECT_LT(0, kinds[2]);
}

/*
 * The walk without budget is kept where walks took it up (gc->kept,
 * policy_greedy.c, prefix_keep()), and a later walk takes up the
 * furthest of those it gets to, or gc->pre run on from there
 * (prefix_to()).  Bisections as hyper_plan__run_greedy()'s, at each
 * lookahead, which ask the same steps again, the third under a tighter
 * goal: each walk as scratch's.  One kept taken up by a walk that stops
 * before it changes a walk here (one taken up under another goal, the
 * random goals of walks_take_up_any_walk).
 */
static unsigned int kept_bisections(struct __test_metadata *_metadata,
				    const struct plan_case *c, size_t n)
{
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	struct walks w;
	unsigned int kept;

	walks_begin(_metadata, &w, c, n);
	for (size_t a = 0; a < ARRAY_SIZE(ahead); a++) {
		uint64_t lo = w.j.lf.max_ws, hi = w.j.lf.peak0;

		w.kept.p = w.sc.p = &w.j.p;
		w.kept.max_slow = w.sc.max_slow = a == 2 ? 0.001 : 0.01;
		for (int it = 0; it < 12 && hi > lo + 1; it++) {
			uint64_t b = lo + (hi - lo) / 2;

			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b, ahead[a]);
			if (w.kept.beyond)
				lo = b;
			else
				hi = b;
		}
	}
	kept = w.kept.nkept;
	walks_end(&w);
	return kept;
}

TEST(prefix_kept_walks_as_scratch)
{
	const struct plan_case olmoe = { "olmoe-1b-7b", "train", 0, 91 };
	const struct plan_case llama = { "llama2-7b", "train", 0, 92 };
	const struct plan_case mixtral = { "mixtral-8x7b", "train-keep", 0, 93 };
	const struct plan_case random = { NULL, NULL, 300, 94 };
	unsigned int kept;

	kept = kept_bisections(_metadata, &olmoe, 0) +
	       kept_bisections(_metadata, &llama, 1) +
	       kept_bisections(_metadata, &mixtral, 2) +
	       kept_bisections(_metadata, &random, 3);
	TH_LOG("%u kept of the walk without budget", kept);
	EXPECT_LT(4, kept);
}

/*
 * The owed evictions' tree, built a level at a time where a walk first
 * asks it (policy_greedy.c, owe_warm()), holds the same doubles as built
 * eviction by eviction: on training graphs, bisections under a slowdown
 * goal at each lookahead, two kept walks, one built each way, stop at
 * the same step (the same evictions, each fetched or not at the same
 * step).  A leaf summed in another order, a node joined from its halves
 * the wrong way round or a level left out changes a stop here.
 */
TEST(owed_tree_built_as_by_paths)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 61 },
		{ "llama2-7b", "train", 0, 62 },
		{ NULL, NULL, 300, 63 },
	};
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	unsigned int walks = 0, stops = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		struct greedy_ctx *a = &w.kept, *p = &w.sc;

		walks_begin(_metadata, &w, &cases[c], c);
		*p = (struct greedy_ctx){ .lf = &w.j.lf, .mem = &w.mem,
					  .owe_paths = true };
		a->p = p->p = &w.j.p;
		a->max_slow = p->max_slow = 0.01;
		for (size_t h = 0; h < ARRAY_SIZE(ahead); h++) {
			uint64_t lo = w.j.lf.max_ws, hi = w.j.lf.peak0;

			for (int it = 0; it < 10 && hi > lo + 1; it++) {
				uint64_t b = lo + (hi - lo) / 2;
				uint32_t la = ahead[h];
				int ra = hyper_plan__greedy_evicts(a, b, la);
				int rp = hyper_plan__greedy_evicts(p, b, la);

				ASSERT_EQ(0, ra);
				ASSERT_EQ(0, rp);
				EXPECT_EQ(p->beyond, a->beyond);
				ASSERT_EQ(p->nev, a->nev)
					TH_LOG("%s: budget %llu, lookahead %u",
					       w.j.g.name,
					       (unsigned long long)b, ahead[h]);
				if (a->nev)	/* ev may be NULL */
					EXPECT_EQ(0, memcmp(a->ev, p->ev,
						sizeof(*a->ev) * a->nev));
				walks++;
				stops += a->beyond;
				if (a->beyond)
					lo = b;
				else
					hi = b;
			}
		}
		walks_end(&w);
	}
	TH_LOG("%u walks, %u stopped", walks, stops);
	EXPECT_LT(walks / 4, stops);
}

/*
 * A walk whose start does not fit takes the start's evictions in the
 * order of the start's candidates sorted once per search, and leaves
 * the rest waiting to be listed by its first make_room()
 * (policy_greedy.c, start(), q->ord); one that owes evictions passes the
 * lookahead's window without a look while none of them is read within
 * it (lookahead_rows(), q->owe_min).  Random graphs and models, budgets
 * below the start's residency and above it in turn (so that start walks
 * follow walks taken up from the walk without budget, and the reverse),
 * each lookahead, with the goal and without: each walk as scratch's,
 * which lists every candidate at the start and looks at every want.  A
 * tie broken by the highest tensor, a candidate not left waiting, one
 * evicted and still marked waiting, or a want passed while one owed is
 * read within the window changes a walk here.
 */
TEST(start_walks_as_scratch)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 200, 71 }, { NULL, NULL, 600, 72 },
		{ "llama2-7b", "infer", 0, 73 },
		{ "olmoe-1b-7b", "train", 0, 74 },
		{ "llama2-7b", "train", 0, 75 },
	};
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	unsigned int walks = 0, starts = 0, later = 0, fetched = 0;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, hi;

		walks_begin(_metadata, &w, &cases[c], c);
		lo = w.j.lf.max_ws;
		hi = w.j.lf.peak0 > lo ? w.j.lf.peak0 : lo + 1;
		for (uint32_t k = 0; k < 32; k++) {
			/* the start's residency, known after the first walk */
			uint64_t mid = w.kept.mem0 > lo && w.kept.mem0 < hi ?
				       w.kept.mem0 : lo + (hi - lo) / 2;
			size_t i, nstart = 0, nfetch = 0;
			uint64_t b;

			x = plan_xorshift(x);
			b = k % 2 ? lo + (x >> 20) % (mid - lo) :
				    mid + (x >> 20) % (hi - mid);
			w.kept.p = w.sc.p = k % 3 ? &w.j.p : NULL;
			w.kept.max_slow = w.sc.max_slow = slows[k / 3 % 2];
			walk_pair(_metadata, &w.j, &w.kept, &w.sc, b,
				  ahead[(x >> 60) % ARRAY_SIZE(ahead)]);
			walks++;
			for (i = 0; i < w.kept.nev; i++) {
				nstart += w.kept.ev[i].detach_slot < 0;
				nfetch += w.kept.ev[i].fetch_step <
					  (int32_t)w.j.lf.n;
			}
			starts += nstart > 0;
			later += nstart > 0 && nstart < w.kept.nev;
			fetched += nstart > 0 && nfetch > 0;
		}
		walks_end(&w);
	}
	TH_LOG("%u walks, %u evicting at the start, %u of them after it too, %u fetching",
	       walks, starts, later, fetched);
	EXPECT_LT(walks / 4, starts);
	EXPECT_LT(0, later);	/* or the candidates left waiting go untested */
	EXPECT_LT(0, fetched);
}

/*
 * The last step a walk evicted at (a detach's slot is twice its step;
 * the start's have none), or -1.
 */
static int32_t last_evicting_step(const struct greedy_ctx *gc)
{
	int32_t last = -1;

	for (size_t i = 0; i < gc->nev; i++)
		if (gc->ev[i].detach_slot / 2 > last)
			last = gc->ev[i].detach_slot / 2;
	return last;
}

/*
 * A kept walk that evicted a few tensors lets the steps after wait
 * (policy_greedy.c, quiet()): their device bytes are the walk without
 * offload's less those held away, and they run (catch_up()) only where
 * make_room() is about to read the lists, from the lookahead or a step
 * short of room; a walk that stops or is settled with steps waiting
 * never runs them, and the next walk takes up only the steps run.
 * Budgets from the start's residency to the peak, rising and falling,
 * and bisections as hyper_plan__run_greedy()'s, at each lookahead, with
 * the goal and without (walks that go on to where what they evicted is
 * read again, and make room there or not): each walk as scratch's, which
 * runs every step.  A step let wait that reads a tensor held away, runs
 * short of room, or is left out of what make_room() reads, its bytes
 * not counted while it waits or counted twice once it runs, changes a
 * walk here.  Returns how many walks evicted a few and walked on a
 * while after the last; *@walks counts the walks.
 */
static unsigned int quiet_walks(struct __test_metadata *_metadata,
				const struct plan_case *c, size_t n,
				unsigned int *walks)
{
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	unsigned int quiet = 0;
	uint64_t lo, span, bl = 0, bh = 0, b;
	struct walks w;
	int32_t end;

	walks_begin(_metadata, &w, c, n);
	start_span(_metadata, &w, &lo, &span);
	/* the tables built whole or as the walks ask: a step, or a few */
	w.kept.quiet_chunk = (uint32_t[]){ 0, 1, 5 }[n % 3];
	for (uint32_t k = 0; k < 24 * ARRAY_SIZE(ahead); k++) {
		uint32_t i = k % 24, la = ahead[k / 24];

		if (!i) {
			bl = w.j.lf.max_ws;
			bh = w.j.lf.peak0;
		}
		if (i < 12) {		/* no goal, rising then falling */
			w.kept.p = w.sc.p = NULL;
			b = lo + span / 7 * (i < 6 ? i + 1 : 12 - i);
		} else {		/* the search's bisection */
			w.kept.p = w.sc.p = &w.j.p;
			w.kept.max_slow = w.sc.max_slow = slows[k / 24 % 2];
			b = bl + (bh - bl) / 2;
		}
		walk_pair(_metadata, &w.j, &w.kept, &w.sc, b, la);
		if (i >= 12 && w.kept.beyond)
			bl = b;
		else if (i >= 12)
			bh = b;
		(*walks)++;
		end = w.kept.beyond ? -1 : (int32_t)w.kept.settled;
		if (w.kept.nev && w.kept.nev <= 64 &&
		    end > last_evicting_step(&w.kept) + 32)
			quiet++;
	}
	walks_end(&w);
	return quiet;
}

TEST(quiet_steps_walk_as_scratch)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 120, 101 }, { NULL, NULL, 400, 102 },
		{ NULL, NULL, 900, 103 },
		{ "olmoe-1b-7b", "train", 0, 104 },
		{ "llama2-7b", "train", 0, 105 },
		{ "mixtral-8x7b", "train-keep", 0, 106 },
	};
	unsigned int walks = 0, quiet = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++)
		quiet += quiet_walks(_metadata, &cases[c], c, &walks);
	TH_LOG("%u walks, %u of them walking on after a few evictions",
	       walks, quiet);
	EXPECT_LT(walks / 8, quiet);
}

/*
 * @j a new graph named @name holding @n weights of 1 MB, live in, "w0"
 * on; their indices in @w (room for @n).
 */
static void weights_job(struct __test_metadata *_metadata, struct job *j,
			const char *name, uint32_t n, uint32_t *w)
{
	char id[32];

	memset(j, 0, sizeof(*j));
	hyper_plan__graph_init(&j->g, name);
	j->p = hyper_plan__profile_table[0];
	for (uint32_t i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "w%u", i);
		w[i] = hyper_plan__graph_add_tensor(&j->g, id, 1000000,
						    HYPER_KIND_WEIGHT,
						    TF_LIVE_IN, NULL);
	}
}

/*
 * @n weights live at the start, each read twice (a pass, then another),
 * then @big read last; a small activation carried from op to op and a
 * temporary of @tmp bytes written at the second op and read at the
 * third: the start's residency is the weights and @big, its peak that
 * plus the temporary.
 */
static void twice_read_job(struct __test_metadata *_metadata, struct job *j,
			   uint32_t n, uint64_t big, uint64_t tmp)
{
	const uint8_t in_only = TF_LIVE_IN;
	uint32_t w[16], z, act, x, i;
	struct hp_err e;
	char id[32];

	ASSERT_GE(ARRAY_SIZE(w), n);
	weights_job(_metadata, j, "twice-read", n, w);
	z = hyper_plan__graph_add_tensor(&j->g, "z", big, HYPER_KIND_WEIGHT,
					 in_only, NULL);
	act = hyper_plan__graph_add_tensor(&j->g, "act", 1000,
					   HYPER_KIND_ACTIVATION, TF_LIVE_OUT,
					   NULL);
	x = hyper_plan__graph_add_tensor(&j->g, "x", tmp,
					 HYPER_KIND_ACTIVATION, 0, NULL);
	hyper_plan__graph_add_op(&j->g, "a", 1000, NULL, 0, &act, 1, NULL,
				 NULL);
	hyper_plan__graph_add_op(&j->g, "x", 1000, &act, 1, &x, 1, NULL, NULL);
	hyper_plan__graph_add_op(&j->g, "y", 1000, (uint32_t[]){ x, act }, 2,
				 &act, 1, NULL, NULL);
	for (i = 0; i < 2 * n; i++) {
		snprintf(id, sizeof(id), "%c%u", i < n ? 'f' : 'g', i % n);
		hyper_plan__graph_add_op(&j->g, id, 1000,
					 (uint32_t[]){ w[i % n], act }, 2,
					 &act, 1, NULL, NULL);
	}
	hyper_plan__graph_add_op(&j->g, "z", 1000, (uint32_t[]){ z, act }, 2,
				 &act, 1, NULL, NULL);
	ASSERT_EQ(0, hyper_plan__job_prepare(j, false, &e))
		TH_LOG("%s", e.msg);
}

/*
 * A tensor waits (q->pend) at most once, marked so (q->pending), which
 * bounds the queue by the tensors: a walk cleans for the next the marks
 * of every candidate it listed (walk_clean(), by q->listed: the start's
 * candidates where it flushed them or took up the walk without budget,
 * whose lists hold them all).  Each time below, a walk lists the start's
 * candidates and ends having run a step or two, and the next, from the
 * start, evicts the tensor read last there and walks the rest without
 * making room, each weight's next use moving at its first read: where
 * the weights keep the marks of the lists, it pushes each of them a
 * second time, past the queue's end (ASan), or lists one where the start
 * leaves it waiting.  The first walk takes up the walk without budget,
 * evicts the tensor read last at the temporary, waits to the end, fetches
 * it back and is settled; the third starts with it evicted, makes room
 * at its first step and stops there at the goal.
 */
TEST(listed_walks_clean_their_candidates)
{
	static const uint32_t ahead[] = { 1, 8 };
	const uint32_t n = 12;
	const uint64_t tmp = 3000000, big = 2 * tmp;
	const uint64_t mem0 = n * 1000000ULL + big;

	for (size_t a = 0; a < ARRAY_SIZE(ahead); a++) {
		struct hp_mem mem = { 0 };
		struct greedy_ctx kept = { .mem = &mem, .max_slow = 0.01 };
		struct greedy_ctx sc = { .mem = &mem, .scratch = true,
					 .max_slow = 0.01 };
		struct job j;

		twice_read_job(_metadata, &j, n, big, tmp);
		kept.lf = sc.lf = &j.lf;
		ASSERT_EQ(mem0 + 1000 + tmp, j.lf.peak0);
		for (int w = 0; w < 4; w++) {
			uint64_t b = w == 0 ? j.lf.peak0 - 1 :
				     w == 2 ? mem0 - big : mem0 - 1;

			kept.p = sc.p = w == 2 ? &j.p : NULL;
			walk_pair(_metadata, &j, &kept, &sc, b, ahead[a]);
			ASSERT_EQ(mem0, kept.mem0);
			ASSERT_LE(1, kept.nev);
			EXPECT_EQ(n, kept.ev[0].t);	/* the big one */
			if (w == 0) {
				ASSERT_EQ(1, kept.nev);
				EXPECT_EQ(1, kept.ev[0].detach_slot / 2);
				EXPECT_EQ(j.lf.n - 1 - ahead[a],
					  kept.ev[0].fetch_step);
				EXPECT_EQ(j.lf.n - ahead[a], kept.settled);
			} else if (w == 2) {
				EXPECT_TRUE(kept.beyond);
				ASSERT_EQ(2, kept.nev);
				EXPECT_EQ(0, kept.ev[1].detach_slot / 2);
			} else {
				ASSERT_EQ(1, kept.nev);
				EXPECT_GT(0, kept.ev[0].detach_slot);
				EXPECT_GT(j.lf.n, kept.ev[0].fetch_step);
			}
		}
		hyper_plan__greedy_free(&kept);
		hyper_plan__greedy_free(&sc);
		hyper_plan__job_free(&j);
	}
}

/* The last walk of @w evicted none of its pinned tensors. */
static void no_pinned_evicted(struct __test_metadata *_metadata,
			      const struct walks *w)
{
	for (size_t i = 0; i < w->kept.nev; i++) {
		EXPECT_FALSE(w->j.g.t[w->kept.ev[i].t].flags & TF_PIN)
			TH_LOG("%s: tensor %u evicted", w->j.g.name,
			       w->kept.ev[i].t);
	}
}

/*
 * Bisections of @w's budget at each lookahead, under a goal and without
 * (where walks run on to the end), which keep the walk without budget
 * at a few steps; then each budget of theirs again, after a walk from
 * the start (which leaves nothing to take up from) or one at the peak:
 * each walk as scratch's (walk_pair()).  *@walks counts the walks, and
 * no walk may evict one of @w's pinned tensors.  Returns how many were
 * kept.
 */
static unsigned int kept_walks(struct __test_metadata *_metadata,
			       struct walks *w, unsigned int *walks)
{
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	uint64_t lo, span, bs[48];
	bool goal[48];
	size_t nb = 0;

	start_span(_metadata, w, &lo, &span);
	w->kept.max_slow = w->sc.max_slow = 0.1;
	for (size_t a = 0; a < ARRAY_SIZE(ahead); a++) {
		uint64_t l = lo, h = w->j.lf.peak0;

		/* without a goal every other: walks run on */
		w->kept.p = w->sc.p = a % 2 ? &w->j.p : NULL;
		for (int it = 0; it < 12 && h > l + 1; it++) {
			uint64_t b = l + (h - l) / 2;

			walk_pair(_metadata, &w->j, &w->kept, &w->sc, b,
				  ahead[a]);
			no_pinned_evicted(_metadata, w);
			goal[nb] = a % 2;
			bs[nb++] = b;
			if (w->kept.beyond)
				l = b;
			else
				h = b;
		}
	}
	for (size_t i = 0; i < nb; i++) {
		/* from the start, or at the peak */
		uint64_t b0 = i % 2 && w->kept.mem0 ? w->kept.mem0 - 1 :
			      w->j.lf.peak0;

		w->kept.p = w->sc.p = goal[nb - 1 - i] ? &w->j.p : NULL;
		walk_pair(_metadata, &w->j, &w->kept, &w->sc, b0,
			  ahead[i % 4]);
		no_pinned_evicted(_metadata, w);
		walk_pair(_metadata, &w->j, &w->kept, &w->sc, bs[nb - 1 - i],
			  ahead[i % 4]);
		no_pinned_evicted(_metadata, w);
		*walks += 2;
	}
	EXPECT_TRUE(w->kept.pre != NULL);
	return w->kept.nkept;
}

/*
 * One kept of the walk without budget holds each tensor's residency and
 * accesses run alone (policy_greedy.c, prefix_keep()); a walk that takes
 * it up derives the rest: its waiting entries (the pinned alone) and its
 * lists (every other resident tensor under its next use), tensor by
 * tensor where it stood near there (take_one()), else over the tensors
 * the kept's steps touched and the start's candidates (take_kept()).
 * Bisections at each lookahead, under a goal and without (where walks
 * run on to the end), keep it at a few steps; then each budget of theirs
 * again, after a walk from the start (which leaves nothing to take up
 * from) or one at the peak: each walk as scratch's.
 * Every third tensor pinned in the second round, which never waits to be
 * listed or is listed.  A kept's tensor taken with the start's entries,
 * a pinned one listed, a start candidate left waiting or listed twice
 * changes a walk here.
 */
TEST(kept_taken_up_as_scratch)
{
	static const struct plan_case cases[] = {
		{ "olmoe-1b-7b", "train", 0, 101 },
		{ "mixtral-8x7b", "train-keep", 0, 102 },
		{ NULL, NULL, 300, 103 },
	};
	unsigned int kept = 0, walks = 0;

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		for (int round = 0; round < 2; round++) {
			struct walks w;

			walks_begin(_metadata, &w, &cases[c], c + round);
			if (round) {
				for (uint32_t t = 0; t < w.j.g.nt; t += 3)
					w.j.g.t[t].flags |= TF_PIN;
				hyper_plan__life_free(&w.j.lf);
				ASSERT_EQ(0, hyper_plan__life_build(&w.j.lf,
						&w.j.g, w.j.order, &w.mem));
			}
			kept += kept_walks(_metadata, &w, &walks);
			walks_end(&w);
		}
	}
	TH_LOG("%u walks, %u kept of the walk without budget", walks, kept);
	EXPECT_LT(4, kept);
}

/*
 * @n weights of 1 MB live at the start, each read twice (a pass f, then
 * a pass g), and a pinned one of 4 MB read by the first operator and the
 * first four of f, then by the last: from there on the resident tensor
 * read furthest ahead.  Each f operator writes a temporary, 64 kB more
 * for each, read by the next: budgets from the start's residency to the
 * peak first run short of room in f, the later the higher.  Each g
 * operator writes three small tensors (one read by the next), so that
 * the tensors f's first steps touch are few of all: a walk taking up
 * one kept there takes it up tensor by tensor (policy_greedy.c,
 * take_kept()), one taking up another after a walk to the end whole.
 */
static void pinned_job(struct __test_metadata *_metadata, struct job *j,
		       uint32_t n)
{
	uint32_t w[16], pin, act, x = 0, y = 0, i, k;
	struct hp_err e;
	char id[32];

	ASSERT_GE(ARRAY_SIZE(w), n);
	weights_job(_metadata, j, "pinned", n, w);
	pin = hyper_plan__graph_add_tensor(&j->g, "pin", 4000000,
					   HYPER_KIND_WEIGHT,
					   TF_LIVE_IN | TF_PIN, NULL);
	act = hyper_plan__graph_add_tensor(&j->g, "act", 1000,
					   HYPER_KIND_ACTIVATION, TF_LIVE_OUT,
					   NULL);
	hyper_plan__graph_add_op(&j->g, "a", 1000, &pin, 1, &act, 1, NULL,
				 NULL);
	for (i = 0; i < n; i++) {
		uint32_t in[4] = { w[i], act }, out[2] = { act }, nin = 2;

		if (i)
			in[nin++] = x;
		if (i < 4)
			in[nin++] = pin;
		snprintf(id, sizeof(id), "x%u", i);
		x = hyper_plan__graph_add_tensor(&j->g, id, 64000 * (i + 1),
						 HYPER_KIND_ACTIVATION, 0,
						 NULL);
		out[1] = x;
		snprintf(id, sizeof(id), "f%u", i);
		hyper_plan__graph_add_op(&j->g, id, 1000, in, nin, out, 2,
					 NULL, NULL);
	}
	for (i = 0; i < n; i++) {
		uint32_t in[3] = { w[i], act, i ? y : x }, out[4] = { act };
		const enum hyper_tensor_kind a = HYPER_KIND_ACTIVATION;

		for (k = 1; k < 4; k++) {
			snprintf(id, sizeof(id), "y%u.%u", i, k);
			out[k] = hyper_plan__graph_add_tensor(&j->g, id, 1000,
							      a, 0, NULL);
		}
		snprintf(id, sizeof(id), "g%u", i);
		hyper_plan__graph_add_op(&j->g, id, 1000, in, 3, out, 4, NULL,
					 NULL);
		y = out[1];
	}
	hyper_plan__graph_add_op(&j->g, "z", 1000, (uint32_t[]){ pin, act, y },
				 3, &act, 1, NULL, NULL);
	ASSERT_EQ(0, hyper_plan__job_prepare(j, false, &e))
		TH_LOG("%s", e.msg);
}

/*
 * A pinned tensor never leaves the device: it alone waits (q->pending
 * set, never in q->pend) and it is never listed as a candidate
 * (policy_greedy.c, start_state()).  A walk that takes up one kept of
 * the walk without budget sets both from the tensor's flag: tensor by
 * tensor where it stood near there (take_one()), else over the whole
 * arrays or over the tensors the kept's steps touched (take_kept()'s two
 * paths).  On pinned_job(), a listed pinned weight is the first tensor a
 * walk evicts where it runs short of room in f.  Bisections and their
 * budgets again (kept_walks()), then budgets at random, at each
 * lookahead, under the goal and without: each walk as scratch's, and
 * none evicts the pinned weight.  A pinned tensor listed by either path
 * of take_kept() or by take_one(), or not left waiting by take_one(),
 * changes a walk here.
 */
TEST(kept_pinned_wait_alone)
{
	uint64_t x = 0x2545f4914f6cdd1dULL, lo, span;
	unsigned int kept, walks = 0, late = 0;
	struct walks w;

	memset(&w, 0, sizeof(w));
	pinned_job(_metadata, &w.j, 16);
	w.kept = (struct greedy_ctx){ .lf = &w.j.lf, .mem = &w.mem };
	w.sc = (struct greedy_ctx){ .lf = &w.j.lf, .mem = &w.mem,
				    .scratch = true };
	kept = kept_walks(_metadata, &w, &walks);
	lo = w.kept.mem0;
	span = w.j.lf.peak0 > lo ? w.j.lf.peak0 - lo : 1;
	for (int k = 0; k < 96; k++) {
		x = plan_xorshift(x);
		w.kept.p = w.sc.p = x >> 60 & 1 ? &w.j.p : NULL;
		walk_pair(_metadata, &w.j, &w.kept, &w.sc,
			  lo + (x >> 20) % span,
			  aheads[(x >> 61) % ARRAY_SIZE(aheads)]);
		no_pinned_evicted(_metadata, &w);
		walks++;
		/* made room after the pinned weight's early reads */
		late += w.kept.nev && last_evicting_step(&w.kept) > 5;
	}
	walks_end(&w);
	TH_LOG("%u walks, %u kept of the walk without budget, %u making room late in f",
	       walks, kept, late);
	EXPECT_LT(1, kept);
	EXPECT_LT(walks / 8, late);
}

/*
 * A walk's arrays are one block whose residency, stamps and list bits
 * come cleared (policy_greedy.c, walk_alloc(), HU_PART(..., true)).  A
 * scratch walk reads its residency as allocated: start() sets it for
 * the tensors live at the start alone, every other is off the device
 * until a step writes it.  Random graphs and a model, budgets from the
 * largest working set to the peak, at each lookahead without a goal:
 * each scratch walk as the kept walk's, whose arrays walk_reset() sets
 * whole after the allocation.  With every allocation filled with 0xff
 * (above), a residency left as allocated holds a device copy of each
 * tensor not yet written, which run_step() then passes over as
 * resident: the scratch walk's evictions differ here.  The stamps and
 * the list bits no walk tells: walk_reset() clears both again after
 * the allocation, a scratch walk has no list bits, and make_room()
 * reads a stamp only as a step + 1, which a word of one byte repeated
 * (0x01010101 or more) is not below 16M steps.
 */
TEST(scratch_walks_start_cleared)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 300, 121 }, { NULL, NULL, 700, 122 },
		{ "llama2-7b", "train", 0, 123 },
	};
	unsigned int walks = 0, evicting = 0;
	const size_t len = 1 << 20;
	unsigned char *p;
	void *blk = NULL;
	bool filled;

	/* as hu_block_huge() allocates: are allocations filled? */
	ASSERT_EQ(0, posix_memalign(&blk, 64, len));
	p = blk;
	filled = p[0] == 0xff && p[len - 1] == 0xff;
	free(blk);
	if (!filled)
		SKIP(return, "allocations are not filled with 0xff");
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct walks w;
		uint64_t lo, span;

		walks_begin(_metadata, &w, &cases[c], c);
		lo = w.j.lf.max_ws;
		span = w.j.lf.peak0 > lo ? w.j.lf.peak0 - lo : 1;
		for (uint32_t k = 0; k < 12; k++) {
			walk_pair(_metadata, &w.j, &w.kept, &w.sc,
				  lo + span / 12 * k,
				  aheads[k % ARRAY_SIZE(aheads)]);
			walks++;
			evicting += w.sc.nev > 0;
		}
		walks_end(&w);
	}
	TH_LOG("%u walks, %u evicting", walks, evicting);
	EXPECT_LT(walks / 2, evicting);
}

TEST_HARNESS_MAIN
