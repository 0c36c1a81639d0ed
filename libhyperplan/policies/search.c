// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The knobs are searched by bisection where more of a knob means less
 * memory and more transfers (a budget, a number of tensors); a probe
 * whose simulation breaks the goal only moves the bisection.  The best
 * probe seen wins, so a non-monotone corner costs quality, not validity.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pipeline.h"
#include "passes/plan.h"
#include "policies/list.h"
#include "policies/policy.h"
#include "policies/search.h"

static bool feasible(const struct goal *gl, const struct result *r)
{
	if (!r->ok)
		return false;
	if (gl->budget)
		return r->sim.peak <= gl->budget;
	return slowdown(&r->sim) <= gl->max_slow + 1e-12;
}

static bool better(const struct goal *gl, const struct result *a,
		   const struct result *b)
{
	double sa = slowdown(&a->sim), sb = slowdown(&b->sim);

	if (!b->ok)
		return true;
	if (gl->budget)
		return sa < sb || (sa == sb && a->sim.peak < b->sim.peak);
	return a->sim.peak < b->sim.peak ||
	       (a->sim.peak == b->sim.peak && sa < sb);
}

bool hyper_plan__result_better(const struct goal *gl, const struct result *a,
		   const struct result *b)
{
	return feasible(gl, a) && better(gl, a, b);
}

/*
 * Emits and simulates one probe: the pipeline's passes (passes/pipeline.c);
 * ok is false if the simulation fails.
 */
static int probe(const struct problem *pb, const struct life *lf,
		 const struct evict *ev, size_t nev, uint64_t budget,
		 struct result *r, struct hp_err *e)
{
	return hyper_plan__probe(pb, lf, ev, nev, budget, false, r, e);
}

/*
 * The same for a search that reads nothing of a probe that misses the
 * goal but that it missed (keep() and feasible(); a peak only once
 * feasible): its simulation stops as soon as the goal is out of reach.
 * Every search here but "none", which hands out what it simulated.
 */
static int probe_goal(const struct problem *pb, const struct life *lf,
		      const struct evict *ev, size_t nev, uint64_t budget,
		      struct result *r, struct hp_err *e)
{
	return hyper_plan__probe(pb, lf, ev, nev, budget, true, r, e);
}

/*
 * Keeps @cand as @best if it is feasible and better (its schedule moves
 * over; otherwise it is freed).  Returns whether it won; @cand's figures
 * stay readable either way.
 */
static bool keep(const struct problem *pb, struct result *best,
		 struct result *cand)
{
	bool win = feasible(&pb->goal, cand) && better(&pb->goal, cand, best);

	best->probes++;
	if (win) {
		cand->probes = best->probes;
		memcpy(cand->policy, best->policy, sizeof(cand->policy));
		hyper_plan__sched_free(&best->s);
		*best = *cand;
	} else {
		hyper_plan__sched_free(&cand->s);
	}
	return win;
}

void hyper_plan__result_free(struct result *r)
{
	hyper_plan__sched_free(&r->s);
	memset(r, 0, sizeof(*r));
}

static void begin(struct result *r, const char *policy, double *t0)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->policy, sizeof(r->policy), "%s", policy);
	*t0 = hyper_plan__now_ns();
}

/*
 * A schedule simulated without a budget gets the peak it was shown to
 * need as its budget: nothing waits for room then, so the simulation with
 * that budget is the same one.
 */
static int finish(const struct problem *pb, struct result *r, double t0,
		  struct hp_err *e)
{
	r->ms = (hyper_plan__now_ns() - t0) / 1e6;
	if (r->ok) {
		if (!r->s.budget)
			r->s.budget = r->sim.peak;
		return 0;
	}
	return hyper_plan__errf(e, "%s: no schedule meets the goal", r->policy);
}

int hyper_plan__run_none(const struct problem *pb, struct result *r, struct hp_err *e)
{
	struct result c;
	double t0;

	int ret;

	begin(r, "none", &t0);
	ret = probe(pb, pb->lf, NULL, 0, 0, &c, e);
	if (ret)
		return ret;
	if (pb->goal.budget && c.sim.peak > pb->goal.budget) {
		hyper_plan__sched_free(&c.s);
		return finish(pb, r, t0, e);
	}
	c.probes = 1;
	memcpy(c.policy, r->policy, sizeof(c.policy));
	*r = c;
	snprintf(r->params, sizeof(r->params), "-");
	return finish(pb, r, t0, e);
}

/* One probe at the given budget on links @scale faster; *fits tells
 * whether the sweep fitted it and the simulation kept it. */
static int budget_probe(const struct problem *pb, struct plan_ctx *pc,
			const struct life *lf, const char *which,
			double scale, struct result *best, bool *fits,
			struct hp_err *e)
{
	struct result c;
	uint32_t fail;
	int ret = hyper_plan__plan_select(pc, pb->goal.budget, scale, &fail);

	*fits = !ret;
	if (ret == -ENOMEM)
		return hyper_plan__nomem(e);
	if (!*fits)
		return 0;
	ret = probe_goal(pb, lf, pc->ev, pc->nev, pb->goal.budget, &c, e);
	if (ret)
		return ret;
	*fits = feasible(&pb->goal, &c);
	if (keep(pb, best, &c))
		snprintf(best->params, sizeof(best->params),
			 "order=%s link-scale=%.3g", which, scale);
	return 0;
}

/*
 * Budget given: the slowest link the sweep can fit it with (a faster
 * assumed link means waiting for it), found by growing the assumed speed
 * and then bisecting between the last that failed and the first that fit.
 */
static int plan_budget(const struct problem *pb, struct plan_ctx *pc,
		       const struct life *lf, const char *which,
		       struct result *best, struct hp_err *e)
{
	static const double scale[] = { 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 100,
					ANY_WAIT };
	double lo = 1, hi, mid;
	bool fits = false;
	uint32_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(scale) && !fits; i++) {
		ret = budget_probe(pb, pc, lf, which, scale[i], best, &fits, e);
		if (ret)
			return ret;
		if (!fits)
			lo = scale[i];
	}
	if (!fits || i == 1)
		return 0;
	hi = scale[i - 1] < ANY_WAIT ? scale[i - 1] : 1000;
	for (i = 0; i < 6; i++) {
		mid = sqrt(lo * hi);
		ret = budget_probe(pb, pc, lf, which, mid, best, &fits, e);
		if (ret)
			return ret;
		if (fits)
			hi = mid;
		else
			lo = mid;
	}
	return 0;
}

/* Guesses one bisection may follow, and in a row just short of the last. */
#define MAX_GUESS	16
#define MAX_CREEP	8

/*
 * Bisects the budget the sweep aims at, below @hi, on links @scale faster;
 * each probe is judged by the simulation of what it really holds.
 *
 * A sweep that fails stops at the step it cannot fit, which is near its
 * start when the aim is low; one that fits walks every step and is then
 * emitted and simulated, a hundred times the cost.  So a failure's
 * shortfall picks the next aim: the failing step would have fitted an aim
 * that much higher, had the steps swept before it taken the same gaps,
 * and where that step is the graph's bottleneck they do (a decode's last
 * layers: the aim it gives then fits, one sweep where the bisection took
 * five).  A guess comes only from a sweep that failed within its first
 * 64th of the steps, after steps that took gaps (a step that fails
 * before any is the graph's end, whose shortfall says nothing of the
 * steps behind it), and is taken when it lies below @hi and moves the
 * bracket by a sixteenth or more, or right after a guess that fell just
 * short (the next step failed: MAX_CREEP in a row).  Past a guess that
 * failed, the aim that fits is likely close above, so the next aims
 * gallop up from it (the tolerance, then twice as far each failure);
 * otherwise, and after a fit, the midpoint.  A guess only picks where to
 * probe: the bracket moves by what each sweep and simulation shows, as
 * before, and guesses do not count towards the bisection's 30 rounds.
 */
static int bisect_aim(const struct problem *pb, struct plan_ctx *pc,
		      const struct life *lf, const char *which, double scale,
		      uint64_t hi, struct result *best, struct hp_err *e)
{
	uint64_t lo = lf->max_ws, b, guess = 0, step = 0;
	double tol = lf->peak0 * 0.001 > 1048576 ? lf->peak0 * 0.001 : 1048576;
	uint32_t fail, i = 0, guesses = 0, creep = 0;
	struct result c;
	int ret;

	while (i < 30 && hi > lo + tol) {
		bool far = guess > lo + (hi - lo) / 16;

		if (guess > lo && guess < hi && guesses < MAX_GUESS &&
		    (far || (creep && creep < MAX_CREEP))) {
			b = guess;
			guesses++;
			creep++;
		} else {
			if (creep)	/* just above a guess that failed */
				step = (uint64_t)tol;
			if (step && step < (hi - lo) / 2) {
				b = lo + step;
				step *= 2;
			} else {
				b = lo + (hi - lo) / 2;
				step = 0;
			}
			creep = 0;
			i++;
		}
		guess = 0;
		pc->keep_aim = hi;	/* no later aim here lies above */
		ret = hyper_plan__plan_select(pc, b, scale, &fail);
		if (ret == -ENOMEM)
			return hyper_plan__nomem(e);
		if (ret) {
			lo = b;
			/* a guess only from a sweep that failed cheaply,
			 * behind steps that took gaps */
			if (fail >= lf->n - lf->n / 64 && pc->nev_before)
				guess = b + pc->short_by;
			continue;
		}
		step = 0;
		creep = 0;
		ret = probe_goal(pb, lf, pc->ev, pc->nev, 0, &c, e);
		if (ret)
			return ret;
		if (!feasible(&pb->goal, &c))
			lo = b;
		else
			hi = c.sim.peak < b ? c.sim.peak : b;
		if (keep(pb, best, &c))
			snprintf(best->params, sizeof(best->params),
				 "order=%s aim=%llu link-scale=%.3f", which,
				 (unsigned long long)b, scale);
	}
	return 0;
}

/*
 * Lowest peak.  First with links as fast as the profile says (nothing
 * waits), then spending the slowdown allowed: the steps where the link
 * ran out are where waiting buys memory, so the link is assumed faster by
 * the allowance spread over just those steps' compute time.
 */
static int plan_peak(const struct problem *pb, struct plan_ctx *pc,
		     const struct life *lf, const char *which,
		     struct result *best, struct hp_err *e)
{
	uint64_t aim = best->sim.peak;
	double busy, scale;
	int ret;

	ret = bisect_aim(pb, pc, lf, which, 1.0, lf->peak0, best, e);
	if (ret)
		return ret;
	if (best->sim.peak >= aim || pb->goal.max_slow <= 0)
		return 0;
	ret = hyper_plan__plan_select_saturated(pc, best->sim.peak, 1.0,
						&busy);
	if (ret == -ENOMEM)
		return hyper_plan__nomem(e);
	if (ret || busy <= 0)
		return 0;
	scale = 1 + 0.9 * pb->goal.max_slow * lf->t0[lf->n] / busy;
	return bisect_aim(pb, pc, lf, which, scale < 2 ? scale : 2,
			  best->sim.peak, best, e);
}

static int plan_order(const struct problem *pb, const struct life *lf,
		      const char *which, struct result *best,
		      struct hp_err *e)
{
	struct plan_ctx pc;
	int ret;

	if (hyper_plan__plan_init(&pc, lf, pb->p, pb->mem))
		return hyper_plan__nomem(e);
	ret = pb->goal.budget ? plan_budget(pb, &pc, lf, which, best, e) :
	      plan_peak(pb, &pc, lf, which, best, e);
	hyper_plan__plan_free(&pc);
	return ret;
}

int hyper_plan__run_plan(const struct problem *pb, struct result *r, struct hp_err *e)
{
	struct result c;
	double t0;
	int ret;

	begin(r, "plan", &t0);
	/* Offloading nothing is a candidate too: never worse than that. */
	ret = probe_goal(pb, pb->lf, NULL, 0, pb->goal.budget, &c, e);
	if (ret)
		return ret;
	keep(pb, r, &c);
	snprintf(r->params, sizeof(r->params), "order=initial no-offload");
	ret = plan_order(pb, pb->lf, "initial", r, e);
	if (!ret && pb->refined)
		ret = plan_order(pb, pb->refined, "refined", r, e);
	if (ret) {
		hyper_plan__result_free(r);
		return ret;
	}
	return finish(pb, r, t0, e);
}

int hyper_plan__count_search(uint32_t n, bool most, bool gallop,
			     int (*test)(void *arg, uint32_t count, bool *ok),
			     void *arg, uint32_t *found)
{
	uint32_t lo = 0, hi = n, c;
	bool ok;
	int ret;

	for (c = 1; most && gallop && lo < hi; c = c <= hi / 2 ? 2 * c : hi) {
		ret = test(arg, c, &ok);
		if (ret)
			return ret;
		if (!ok) {
			hi = c - 1;
			break;
		}
		lo = c;
	}
	while (lo < hi) {
		c = most ? lo + (hi - lo + 1) / 2 : lo + (hi - lo) / 2;
		ret = test(arg, c, &ok);
		if (ret)
			return ret;
		if (most && ok)
			lo = c;
		else if (most)
			hi = c - 1;
		else if (ok)
			hi = c;
		else
			lo = c + 1;
	}
	*found = lo;
	return 0;
}

struct distance_search {
	const struct problem *pb;
	struct distance_ctx *d;
	struct distance_params *dp;
	struct result *r;
	struct hp_err *e;
};

/* The most distance probes a memo tells of (list.h); ~80 bytes each. */
#define DSEEN_MAX	4096

/*
 * What one distance probe's simulation said under a budget goal.  The
 * schedule is the same at every budget (emitted with none); the budget
 * only stops the simulation once the peak passes it.  So a simulation
 * run to its end gives its peak, and the same run, at any budget; one
 * given up on under a budget has a peak above it, and fails at any
 * budget as low.
 */
struct hp_dseen {
	const struct life *lf;
	const struct profile *p;
	double max_slow;
	uint32_t prefetch, release, count;
	bool whole;		/* simulated to its end: @sim is the run's */
	uint64_t under;		/* the budget it was simulated under */
	struct sim_result sim;
};

static struct hp_dseen *dseen_find(const struct problem *pb,
				   const struct distance_params *dp)
{
	struct hp_polmemo *m = pb->memo;

	for (uint32_t i = 0; i < m->nseen; i++) {
		struct hp_dseen *sn = &m->seen[i];

		if (sn->count == dp->count && sn->prefetch == dp->prefetch &&
		    sn->release == dp->release && sn->lf == pb->lf &&
		    sn->p == pb->p && sn->max_slow == pb->goal.max_slow)
			return sn;
	}
	return NULL;
}

/* Tells @pb's memo what @c's simulation said (in @sn if seen before). */
static int dseen_note(const struct problem *pb,
		      const struct distance_params *dp, struct hp_dseen *sn,
		      const struct result *c)
{
	struct hp_polmemo *m = pb->memo;

	if (!sn) {
		if (!m->seen)
			m->seen = hyper_plan__array(pb->mem, DSEEN_MAX,
						    sizeof(*m->seen));
		if (!m->seen)
			return -ENOMEM;
		if (m->nseen == DSEEN_MAX)
			return 0;
		sn = &m->seen[m->nseen++];
	}
	*sn = (struct hp_dseen){ pb->lf, pb->p, pb->goal.max_slow,
				 dp->prefetch, dp->release, dp->count,
				 c->ok, pb->goal.budget, c->sim };
	return 0;
}

/*
 * One distance probe of @count tensors; *@ok: it met the goal.  Under a
 * budget with a memo, a probe whose simulation the memo tells of
 * (struct hp_dseen) is not simulated again unless it would be kept:
 * one that misses the budget, or meets it and loses to the best so
 * far, only counts, as it would have.
 */
static int distance_probe(void *arg, uint32_t count, bool *ok)
{
	struct distance_search *ds = arg;
	const struct problem *pb = ds->pb;
	struct hp_dseen *sn = NULL;
	bool seen = pb->memo && pb->goal.budget;
	struct result c;
	int ret;

	ds->dp->count = count;
	if (seen)
		sn = dseen_find(pb, ds->dp);
	if (sn && (sn->whole || pb->goal.budget <= sn->under)) {
		memset(&c, 0, sizeof(c));
		c.ok = sn->whole && sn->sim.peak <= pb->goal.budget;
		if (c.ok)
			c.sim = sn->sim;
		*ok = feasible(&pb->goal, &c);
		if (!*ok || !better(&pb->goal, &c, ds->r)) {
			keep(pb, ds->r, &c);	/* counted, not kept */
			pb->memo->seen_hits++;
			return 0;
		}
		/* kept: its schedule, emitted and simulated as before */
	}
	if (hyper_plan__distance_evicts(ds->d, ds->dp))
		return hyper_plan__nomem(ds->e);
	ret = probe_goal(pb, pb->lf, ds->d->ev, ds->d->nev, 0, &c, ds->e);
	if (ret)
		return ret;
	*ok = feasible(&pb->goal, &c);
	if (keep(pb, ds->r, &c))
		snprintf(ds->r->params, sizeof(ds->r->params),
			 "prefetch=%u release=%u tensors=%u",
			 ds->dp->prefetch, ds->dp->release, count);
	if (seen && dseen_note(pb, ds->dp, sn, &c))
		return hyper_plan__nomem(ds->e);
	return 0;
}

/*
 * Peak goal: the most tensors still fast enough, searched from below
 * (where the first tensors already miss it, a decode graph at 1%, that is
 * one probe); budget goal: the fewest that fit, bisected.  Both assume
 * more tensors means less memory, more traffic.
 */
static int distance_bisect(const struct problem *pb, struct distance_ctx *d,
			   struct distance_params *dp, struct result *r,
			   struct hp_err *e)
{
	struct distance_search ds = { pb, d, dp, r, e };
	uint32_t found;

	return hyper_plan__count_search(d->nrank, !pb->goal.budget, true,
					distance_probe, &ds, &found);
}

int hyper_plan__run_distance(const struct problem *pb, struct result *r,
		 struct hp_err *e)
{
	static const uint32_t dist[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	struct distance_params dp = { 0 };
	struct distance_ctx d;
	struct result c;
	double t0;
	uint32_t i;
	int ret;

	begin(r, "distance", &t0);
	ret = hyper_plan__distance_init(&d, pb->lf, pb->mem);
	if (ret) {
		hyper_plan__distance_free(&d);
		return hyper_plan__nomem(e);
	}
	ret = probe_goal(pb, pb->lf, NULL, 0, 0, &c, e);	/* zero tensors */
	if (!ret && keep(pb, r, &c))
		snprintf(r->params, sizeof(r->params), "tensors=0");
	for (i = 0; i < ARRAY_SIZE(dist) && !ret; i++) {
		dp.prefetch = dist[i];
		ret = distance_bisect(pb, &d, &dp, r, e);
	}
	hyper_plan__distance_free(&d);
	if (ret)
		hyper_plan__result_free(r);
	return ret ? ret : finish(pb, r, t0, e);
}

/*
 * Whether a greedy bisection whose budgets are all above @lo can still
 * give what beats pb->beat (@r: its best so far).  A walk at budget b
 * that offloads anything evicted until a need fitted (or nothing was
 * left to evict), so right after that its residency was above b less
 * one tensor: the last evicted, or the need.  The simulation counts what
 * the walk counts from the same steps on, and longer (a detached tensor
 * until its store ends), so a probe at b that meets the goal peaks
 * above b - @most, @most the largest tensor.  One that offloads nothing
 * is the no-offload schedule, which the planner tried first.  So once
 * @lo is @most above the peak to beat, every later probe peaks above it
 * and loses, and only @r could still win.
 */
static bool greedy_cannot_win(const struct problem *pb, const struct result *r,
			      uint64_t lo, uint64_t most)
{
	return pb->beat && lo > most && lo - most >= pb->beat->sim.peak &&
	       !hyper_plan__result_better(&pb->goal, r, pb->beat);
}

int hyper_plan__run_greedy(const struct problem *pb, struct result *r, struct hp_err *e)
{
	static const uint32_t ahead[] = { 1, 8, 64, 512 };
	const struct life *lf = pb->lf;
	/* a slowdown goal: a walk whose prefetches miss it stops early */
	struct greedy_ctx gc = { .lf = lf, .mem = pb->mem,
				 .p = pb->goal.budget ? NULL : pb->p,
				 .max_slow = pb->goal.max_slow };
	double tol = lf->peak0 * 0.001 > 1048576 ? lf->peak0 * 0.001 : 1048576;
	uint64_t lo, hi, b, most;
	struct result c;
	uint32_t i, it;
	double t0;
	int ret = 0;

	begin(r, "greedy", &t0);
	/* what a bisection stops on, given a result to beat */
	most = pb->beat ? hyper_plan__graph_largest(lf->g) : 0;
	ret = probe_goal(pb, lf, NULL, 0, 0, &c, e);	/* room for everything */
	if (!ret && keep(pb, r, &c))
		snprintf(r->params, sizeof(r->params), "budget=no-offload peak");
	for (i = 0; i < ARRAY_SIZE(ahead) && !ret; i++) {
		lo = lf->max_ws;
		hi = lf->peak0;
		for (it = 0; it < 30 && !ret; it++) {
			if (!pb->goal.budget && (hi - lo <= tol ||
			    greedy_cannot_win(pb, r, lo, most)))
				break;
			b = pb->goal.budget ? pb->goal.budget : lo + (hi - lo) / 2;
			ret = hyper_plan__greedy_evicts(&gc, b, ahead[i]);
			if (ret) {
				ret = hyper_plan__nomem(e);
				break;
			}
			if (gc.beyond)	/* a probe out of reach: not emitted */
				memset(&c, 0, sizeof(c));
			else
				ret = probe_goal(pb, lf, gc.ev, gc.nev, b, &c, e);
			if (ret)
				break;
			if (!feasible(&pb->goal, &c))
				lo = b;
			else
				hi = c.sim.peak < b ? c.sim.peak : b;
			if (keep(pb, r, &c))
				snprintf(r->params, sizeof(r->params),
					 "lookahead=%u budget=%llu", ahead[i],
					 (unsigned long long)b);
			if (pb->goal.budget)
				break;
		}
	}
	hyper_plan__greedy_free(&gc);
	if (ret)
		hyper_plan__result_free(r);
	return ret ? ret : finish(pb, r, t0, e);
}

/*
 * What the planner returns: its own search, then each baseline's, the
 * best that meets the goal kept.  Taking the best of the candidates is
 * the floor the planner promises (Documentation/planner.md): at the same
 * goal it is never worse than a baseline, even where its own heuristics
 * lose (short graphs whose every gap is latency-bound, orders the
 * distance heuristic happens to suit).  @r->from names the winner.
 */
int hyper_plan__run_plan_best(const struct problem *pb, struct result *r,
		  struct hp_err *e)
{
	/* through hyper_plan__run_policy(): each kept under a budget */
	static const int base[] = { POL_DISTANCE, POL_GREEDY };
	double t0 = hyper_plan__now_ns();
	struct problem q = *pb;
	struct hp_err own = { "" };
	char params[sizeof(r->params)];
	struct result c;
	size_t i;
	int ret;

	ret = hyper_plan__run_plan(pb, r, &own);
	if (ret == -ENOMEM || (ret && r->ok)) {	/* a real failure */
		hyper_plan__result_free(r);
		hyper_plan__errf(e, "%s", own.msg);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	snprintf(r->from, sizeof(r->from), "plan");
	for (i = 0; i < ARRAY_SIZE(base); i++) {
		struct hp_err ignored;
		unsigned int probes = r->probes;

		/*
		 * The greedy baseline may stop once it cannot beat @r, unless
		 * its whole result is kept for --compare's row.
		 */
		q.beat = base[i] == POL_GREEDY && r->ok &&
			 !(pb->memo && pb->memo->rows) ? r : NULL;
		ret = hyper_plan__run_policy(base[i], &q, &c, &ignored);
		if (ret == -ENOMEM) {
			hyper_plan__result_free(r);
			return hyper_plan__nomem(e);
		}
		if (ret)
			continue;	/* that baseline meets nothing */
		snprintf(params, sizeof(params), "%s", c.params);
		c.probes += probes;
		if (keep(pb, r, &c)) {
			snprintf(r->from, sizeof(r->from), "%s",
				 hyper_plan__policy_name[base[i]]);
			snprintf(r->params, sizeof(r->params), "%s's schedule: %.120s",
				 hyper_plan__policy_name[base[i]], params);
		}
	}
	r->ms = (hyper_plan__now_ns() - t0) / 1e6;
	if (!r->ok)
		return hyper_plan__errf(e, "%s", own.msg[0] ? own.msg :
			       "plan: no schedule meets the goal");
	if (!r->s.budget)
		r->s.budget = r->sim.peak;
	return 0;
}
