/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A link's time as a resource, step by step: step k offers as much
 * transfer time as its operator computes (a transfer is hidden only when
 * it runs behind compute).  Sums come from a Fenwick tree; walks skip full
 * steps with union-find.
 *
 * Two ways to take time.  hyper_plan__cal_take_latest() takes it latest first before
 * a deadline, wherever it is left: a preemptive ("fluid") schedule, which
 * a queue still serves on time provided that transfers are issued in
 * deadline order (plan_take.c sees to that).  hyper_plan__cal_find_run() and
 * hyper_plan__cal_take_run() take a run of consecutive steps, earliest first, that no
 * other run crosses, for transfers whose release cannot move earlier (a
 * store cannot start before its value is written): a queue serves those
 * as planned only if their runs do not interleave.  A run takes a step's
 * time from its start, so the next run may begin in a step another took
 * part of, but not continue through it.
 */
#ifndef HP_CALENDAR_H
#define HP_CALENDAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What a calendar is used for (hyper_plan__cal_init()).  Each way of
 * taking time walks arrays of its own, and a calendar holds only its
 * uses' arrays (NULL the others): the planner's two links each use one
 * way, and at 1M steps each array the other way needs is 1 to 4 MB more
 * to write at every reset, fresh memory the first time.
 */
#define CAL_LATEST	1	/* hyper_plan__cal_take_latest(): left */
#define CAL_RUNS	2	/* cal_next(), the runs: right, zeros, used */
#define CAL_ALL		(CAL_LATEST | CAL_RUNS)

struct calendar {
	uint32_t n;
	uint32_t top;		/* the Fenwick descent's first stride */
	uint32_t levels;	/* its levels: log2(top) + 1 */
	double *cap;		/* time left in each step */
	double *fen;		/* Fenwick tree over cap, 1-based */
	uint32_t *left;		/* union-find: 1 + nearest step at or before with time left */
	uint32_t *right;	/* union-find: nearest step at or after with time left */
	uint32_t *zeros;	/* steps with no time at all, before each step */
	uint8_t *used;		/* some store took time in the step */
	uint32_t low;		/* the first step taken from since its user set it */
	/*
	 * What the last full reset built (hyper_plan__cal_restore()): the
	 * tree over its steps, kept in @base (shared with a twin), which
	 * build of it (@base's gen then), from which step's capacities,
	 * and the first entry written since (every array's entries below it
	 * are as built).
	 */
	struct cal_base *base;
	uint32_t gen;
	const double *cap0;
	double scale;
	uint32_t dirty;
	uint32_t *undo;		/* steps written, while nundo <= CAL_UNDO */
	uint32_t nundo;
	void *blk;		/* cap .. used in one block, or NULL (cal_init()) */
};

#define CAL_UNDO	4096

/*
 * A calendar's entries from step @from on, and what its restore needs,
 * as hyper_plan__cal_save() found them: the steps before @from are as
 * the last reset built them.  The buffers hold @room steps; @left, or
 * @right and @used, only where the calendar keeps them (its uses).
 */
struct cal_snap {
	uint32_t from, low, dirty, nundo;
	size_t room;
	double *cap, *fen;
	uint32_t *left, *right, *undo;
	uint8_t *used;
};

/*
 * The tree a full reset builds from its steps' capacities and scale, read
 * only after: the planner's two links offer the same time per step, and
 * at 1M steps a copy of each was 8 MB more to write at every full reset
 * (fresh memory the first time).  A calendar reset on the capacities and
 * scale its base was last built from copies the tree from it.
 */
struct cal_base {
	double *fen0;
	const double *cap0;
	double scale;
	uint32_t gen;		/* builds so far; 0: none yet */
	uint32_t refs;		/* calendars holding it */
};

struct hp_mem;

/*
 * 0, or -ENOMEM with @c freed.  @uses: CAL_LATEST, CAL_RUNS or both; a
 * calendar is asked only what its uses name.
 */
int hyper_plan__cal_init(struct calendar *c, uint32_t n, unsigned int uses,
			 struct hp_mem *mem);
/*
 * The same over @twin's steps, sharing its base: either calendar's
 * full reset on the capacities and scale the other's last built on
 * copies that tree.  The capacities an array holds must not change while
 * a calendar was reset on it (as for hyper_plan__cal_restore()).
 */
int hyper_plan__cal_init_twin(struct calendar *c, struct calendar *twin,
			      unsigned int uses, struct hp_mem *mem);
void hyper_plan__cal_free(struct calendar *c);
/* The same, its block through @mem (hyper_plan__free()): NULL frees it. */
void hyper_plan__cal_free_in(struct calendar *c, struct hp_mem *mem);
/* Each step k offers cap0[k] × scale. */
void hyper_plan__cal_reset(struct calendar *c, const double *cap0, double scale);
/*
 * The same, rebuilding only the steps written since the last reset when
 * it had the same @cap0 and @scale: each of them while they are few,
 * else all from the first; O(steps written) after a run that stopped
 * early.  The arrays end the same as hyper_plan__cal_reset()'s.
 */
void hyper_plan__cal_restore(struct calendar *c, const double *cap0,
			     double scale);
double hyper_plan__cal_avail(const struct calendar *c, uint32_t lo, uint32_t hi);
/* The first step hi with at least @amount in [lo, hi]; n if none. */
uint32_t hyper_plan__cal_reach(const struct calendar *c, uint32_t lo, double amount);
/*
 * The same in two halves, for many amounts from one @lo: the time
 * offered before step @lo, then the first step hi whose [0, hi] holds
 * @want (that sum plus the amount).  The same sums, the same steps.  The
 * first inline: the sweep asks it as each step over budget starts and
 * for each take's room (DeepSeek-V2-Lite training: 290 k calls).
 */
static inline double hyper_plan__cal_before(const struct calendar *c,
					    uint32_t lo)
{
	double s = 0;
	size_t k;

	for (k = lo; k; k &= k - 1)
		s += c->fen[k];
	return s;
}
uint32_t hyper_plan__cal_reach_sum(const struct calendar *c, double want);
/* The first step at or after @lo with time left; n if none. */
uint32_t hyper_plan__cal_next(struct calendar *c, uint32_t lo);
/* Takes @amount from [lo, hi], latest first, across anything already
 * taken; returns the first step used. */
uint32_t hyper_plan__cal_take_latest(struct calendar *c, uint32_t lo, uint32_t hi,
			 double amount);
/* The earliest run in [lo, hi] holding @amount: 0 with its first and
 * last steps, or -1. */
int hyper_plan__cal_find_run(struct calendar *c, uint32_t lo, uint32_t hi, double amount,
		 uint32_t *first, uint32_t *last);
void hyper_plan__cal_take_run(struct calendar *c, uint32_t first, uint32_t last,
		  double amount);
/* Keeps what @c wrote since its last reset in @s: 0, or -ENOMEM. */
int hyper_plan__cal_save(const struct calendar *c, struct cal_snap *s,
			 struct hp_mem *mem);
/*
 * Writes @s back into @c, which a reset (or restore) since has left as
 * the one before @s was saved, on the same steps' capacities and scale.
 */
void hyper_plan__cal_load(struct calendar *c, const struct cal_snap *s);
void hyper_plan__cal_snap_free(struct cal_snap *s);

#endif
