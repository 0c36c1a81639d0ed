/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one simulator: replays any schedule on a profile with a compute
 * stream and one FIFO stream per link direction, the way libhyper runs
 * it: "before" ops are issued when a step begins, the step waits only for
 * its uses' prefetches (and for a store still reading a tensor it
 * defines), "after" ops are issued when it ends.  A prefetch or a define
 * that would exceed the budget waits for detached tensors whose stores
 * are still in flight, as libhyper waits for arena space.
 */
#ifndef HP_SIM_H
#define HP_SIM_H

#include "lib/heap.h"
#include "profile/profile.h"
#include "passes/sched.h"

struct sim_hooks {
	void *ctx;
	void (*compute)(void *ctx, uint32_t step, double start, double end);
	void (*xfer)(void *ctx, uint32_t t, int store, double start,
		     double end);
	void (*mem)(void *ctx, double time, uint64_t bytes);
	/*
	 * give_up: stop as soon as the run cannot end within @max_slow of
	 * slowdown (slowdown() below, the search's rule with its 1e-12), or
	 * its peak passes @max_peak (0: no such limit).  A search that only
	 * asks whether a probe meets its goal needs no more: the makespan
	 * and the peak only grow.  The result is then partial.
	 */
	bool give_up;
	double max_slow;
	uint64_t max_peak;
	/*
	 * give_up: the life the schedule was emitted from, if known (NULL:
	 * not).  Its t0[n] is the whole run's compute summed as the run
	 * sums it, step after step from 0, so the run need not sum it first.
	 */
	const struct life *lf;
};

struct sim_result {
	uint64_t peak;
	double stall_ns;
	double makespan_ns;
	double compute_ns;
	double h2d_bytes, d2h_bytes;
};

/*
 * 0; 1: given up (@hooks->give_up), the goal out of reach, said in @e;
 * -1: the schedule breaks a rule or its budget (said in @e); -ENOMEM.
 * A schedule still being emitted (@s->emit, hyper_plan__sched_start())
 * is emitted as far as the run goes, a few steps ahead of it, and whole
 * once the run ends: -EINVAL if its emission fails (said in @e).
 */
int hyper_plan__simulate(const struct sched *s, const struct profile *p,
	     const struct sim_hooks *hooks, struct sim_result *r,
	     struct hp_mem *mem, struct hp_err *e);

/* When a tensor's last prefetch ends and its last store. */
struct hp_sim_xend {
	double fetch, store;
};

struct hp_simq;

/*
 * What the runs of one search keep from one run to the next, so that a
 * probe neither allocates nor zeroes buffers of the graph's size: the
 * per-tensor ends are whatever the last run left (a run reads a
 * tensor's only once it has set both, at its first transfer), the
 * fetch floor's per-step sums and bits are zero between runs (each
 * zeroes the steps it added to); the state is set up by each run (a
 * run in bulk sets its tracked tensors' alone, st_zero) and the heap.
 * A zeroed one is empty; one thread uses it (a job's memo,
 * policies/list.h).
 */
struct hp_simbuf {
	struct hp_sim_xend *end;	/* the last run's, not zeroed */
	uint8_t *st;
	size_t nt;			/* tensors end and st have room for */
	/*
	 * st is zero for every tensor (sim.c, init_tracked()): a run in
	 * bulk leaves it so, which sets the states of its tracked tensors
	 * alone; any other run sets every tensor's.
	 */
	bool st_zero;
	uint32_t *mine;			/* a run in bulk's tracked tensors */
	size_t mine_cap;
	struct heap pend;
	/* runs without hooks: stores pending in order (sim.c, pend_push()) */
	struct heap_item *fq;
	size_t fq_cap;
	/* zero between runs: nbusy steps' sums, then a bit a step */
	double *busy;
	size_t nbusy;			/* steps busy has room for */
	/*
	 * What each step of one life's order does with nothing offloaded,
	 * for the steps a run takes in bulk (sim.c, quiet_steps()): built
	 * by the first run that can, kept for the next runs of that life.
	 * q_lf NULL: none.  The life is told by its arrays as well as its
	 * address, all of which a search keeps until it ends.
	 */
	const struct life *q_lf;
	const uint32_t *q_order, *q_dead;
	uint32_t q_n;
	struct hp_simq *q;		/* q_n + 1 steps */
	uint8_t *q_new;			/* each step's defines: allocated? */
	void *q_blk;			/* q's and q_new's (and scratch) */
	struct hp_mem *q_mem;		/* q_blk's: it goes back there */
	/*
	 * The bytes the device holds from the life's homes (home0): a run
	 * of a schedule whose homes are these but a few starts from them
	 * (sim.c, init_tracked()).
	 */
	uint64_t q_mem0;
	/* the probes' emissions (hyper_plan__sched_start_in()) */
	struct hp_emitbuf emit;
};

void hyper_plan__simbuf_free(struct hp_simbuf *b);

/*
 * hyper_plan__simulate() with its buffers in @buf (NULL: its own, freed
 * before it returns); the same figures, whatever ran in @buf before.
 */
int hyper_plan__simulate_in(const struct sched *s, const struct profile *p,
			    const struct sim_hooks *hooks, struct sim_result *r,
			    struct hp_simbuf *buf, struct hp_mem *mem,
			    struct hp_err *e);

/*
 * A floor on the makespan of any run of @ev (@nev evictions in order
 * @lf) on @p, from the pool->device link alone: each prefetch issued
 * no earlier than its step would start without offload.  In *@floor_ns;
 * 0, or -ENOMEM.
 */
int hyper_plan__sim_fetch_floor(const struct life *lf, const struct profile *p,
				const struct evict *ev, size_t nev,
				struct hp_mem *mem, double *floor_ns);
/* The same with its per-step sums in @buf (NULL: its own). */
int hyper_plan__sim_fetch_floor_in(const struct life *lf,
				   const struct profile *p,
				   const struct evict *ev, size_t nev,
				   struct hp_simbuf *buf, struct hp_mem *mem,
				   double *floor_ns);
/*
 * One step of that floor: the link busy until @floor_ns takes @busy_ns
 * of prefetches issued at @t0_ns, a step's start without offload.
 */
static inline double hyper_plan__sim_floor_step(double floor_ns,
						double t0_ns, double busy_ns)
{
	return (floor_ns > t0_ns ? floor_ns : t0_ns) + busy_ns;
}
/*
 * Whether a makespan of at least @floor_ns is surely a slowdown above the
 * goal by slowdown()'s rule with its 1e-12, held against @lim, which
 * hyper_plan__sim_beyond_lim() worked out from the run's compute and the
 * goal: a probe whose floor is beyond its goal need not be emitted, and a
 * run whose floor passes it may be given up.  The floor sums in another
 * order than the run's clocks: rounding may put it a few ulps per
 * transfer above the makespan, which 1e-6 covers many times over; only a
 * floor clearly beyond the goal says the run would miss it.
 *
 * The one form of the test: hyper_plan__sim_beyond() and the simulator's
 * give-up test (sim.c, out_of_reach()) both work it out by these
 * expressions, so a limit worked out once is the same double as the one
 * each call would work out.
 */
static inline double hyper_plan__sim_beyond_lim(double compute_ns,
						double max_slow)
{
	return (1 + max_slow + 1e-9) * compute_ns;
}

static inline bool hyper_plan__sim_beyond_at(double floor_ns, double lim)
{
	return floor_ns * (1 - 1e-6) > lim;
}

/*
 * The same for @compute_ns of compute and the goal @max_slow; never with
 * no compute, where slowdown() is 0.  Inline: the greedy walk asks it at
 * each of its steps (1.6 million calls at 100k decode operators).
 */
static inline bool hyper_plan__sim_beyond(double floor_ns, double compute_ns,
					  double max_slow)
{
	return compute_ns > 0 &&
	       hyper_plan__sim_beyond_at(floor_ns,
			hyper_plan__sim_beyond_lim(compute_ns, max_slow));
}

/*
 * The least double x for which the give-up tests of a run of @compute_ns
 * with the goal @max_slow hold: slowdown()'s rule, x a makespan (@beyond
 * false), or hyper_plan__sim_beyond(), x a floor (@beyond true).  Both
 * never turn from true to false as x grows, so a run tests x >= it, the
 * same answers without a division.  -inf if every number passes, NaN if
 * none does (nothing is >= NaN).
 */
double hyper_plan__sim_reach_at(double compute_ns, double max_slow,
				bool beyond);

/* A run's slowdown from its makespan and compute: 0 with no compute. */
static inline double hyper_plan__slowdown_of(double makespan_ns,
					     double compute_ns)
{
	return compute_ns > 0 ? makespan_ns / compute_ns - 1 : 0;
}

static inline double slowdown(const struct sim_result *r)
{
	return hyper_plan__slowdown_of(r->makespan_ns, r->compute_ns);
}

#endif
