/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A schedule in libhyper's format v1 (Documentation/schedule-format.md):
 * the execution order, each tensor's home, and the cache operators
 * placed before and after every step.  Cache operators live in "slots":
 * slot 2k is step k's "before" list, slot 2k+1 its "after" list.
 */
#ifndef HP_SCHED_H
#define HP_SCHED_H

#include <stdio.h>

#include "passes/life.h"

/* Cache ops and homes are libhyper's (<hyper/vocab.h>). */

struct hp_emit;

struct cop {
	uint32_t t;
	uint8_t kind;		/* enum hyper_cache_op */
};

struct prediction {
	uint64_t peak;
	double stall_ns;
	double makespan_ns;
};

struct sched {
	const struct graph *g;
	const uint32_t *order;
	uint32_t n;
	uint8_t *home;
	uint32_t *slot_off;	/* 2n + 1 offsets into cops (cops_room()) */
	struct cop *cops;
	size_t ncops;
	uint64_t budget;	/* 0: none */
	struct prediction pred;
	/*
	 * hyper_plan__sched_layout(): the arena offset of each residency, grouped by
	 * tensor (res_first[t] is tensor t's first, res_first[nt] the count)
	 * in the order they begin, and the arena they need.  res_off is NULL
	 * when the arena would exceed the user's budget: the schedule then
	 * carries no offsets, and arena_over says how much it needed.
	 * res_peak is the most bytes resident at once (the validator's peak).
	 */
	uint64_t *res_off;
	uint32_t *res_first;
	uint64_t arena;
	uint64_t arena_over;
	uint64_t res_peak;
	/* hyper_plan__run_policy_fit(): the residency budget that made the arena fit */
	uint64_t planned_under;
	/*
	 * hyper_plan__sched_start(): what is still to emit, NULL once the
	 * schedule is whole.  Only the slots of the steps emitted so far
	 * (hyper_plan__sched_emit()) are there.
	 */
	struct hp_emit *emit;
};

/*
 * One live gap taken off the device.  a = -1 is the start: with no detach
 * slot the tensor's home is the pool, with one it is detached there
 * before its first use.  j = n is the end: it is not fetched back.
 */
struct evict {
	uint32_t t;
	int32_t a, j;
	int32_t store_slot;	/* -1: store at the detach if one is needed */
	int32_t detach_slot;	/* where the device copy goes; -1: none */
	int32_t fetch_step;	/* whose "before" list prefetches (j < n) */
};

/*
 * Builds the schedule; dead values are freed after their last access.
 * 0, -ENOMEM ("out of memory" in @e), or -EINVAL (an internal error).
 */
int hyper_plan__sched_build(struct sched *s, const struct life *lf,
		const struct evict *ev, size_t nev, struct hp_mem *mem,
		struct hp_err *e);
/*
 * The same, step by step, for a run that may stop early (the simulator
 * pulls each step's slots before it runs them, hyper_plan__simulate()):
 * hyper_plan__sched_start() does everything but write the slots; each
 * hyper_plan__sched_emit() then writes those of the steps before @steps
 * not yet written (through @s->emit: @s is written, though const to its
 * reader), and the last one frees @s->emit.  A schedule given up part
 * way holds what was emitted; hyper_plan__sched_free() frees the rest.
 * What the slots hold is hyper_plan__sched_build()'s, byte for byte.
 * 0, -ENOMEM or -EINVAL, said in @e; after an error @s is only to free.
 */
int hyper_plan__sched_start(struct sched *s, const struct life *lf,
			    const struct evict *ev, size_t nev,
			    struct hp_mem *mem, struct hp_err *e);
int hyper_plan__sched_emit(const struct sched *s, uint32_t steps,
			   struct hp_err *e);
/*
 * What the emissions of one search keep from one probe to the next: the
 * emitter's own arrays (its decisions, their sort's scratch, the states,
 * the tracked tensors), which would otherwise be allocated for every
 * probe, those of the graph's size and many megabytes at a million
 * operators.  A schedule's own arrays are its own.  One emission uses it
 * at a time: one started while another is under way (hyper_plan__sched_
 * emitted() short of the whole) has its own.  A zeroed one is empty; one
 * thread uses it (the probes' buffers, struct hp_simbuf in sim/sim.h).
 */
struct hp_emitbuf {
	struct hp_emit *m;	/* NULL: none yet */
	bool busy;		/* m is a schedule's, being emitted */
};

/*
 * hyper_plan__sched_start() with the emitter's arrays from @buf (NULL:
 * its own); the same schedule.
 */
int hyper_plan__sched_start_in(struct sched *s, const struct life *lf,
			       const struct evict *ev, size_t nev,
			       struct hp_emitbuf *buf, struct hp_mem *mem,
			       struct hp_err *e);
/*
 * Frees what @buf keeps; an emission under way through it keeps its
 * context, freed with its schedule.  @buf is empty after.
 */
void hyper_plan__emitbuf_free(struct hp_emitbuf *buf);
/*
 * While @s is being emitted tracking its evicted tensors alone (the
 * emitter's choice, passes/sched.c): the first step from @k on that
 * uses or defines one of them or whose slots may hold a cache op of
 * one; @s->n if none.  The steps before it hold nothing but dead
 * detaches of other tensors in their "after" slots, and every tensor
 * they touch follows its transitions with nothing offloaded, which
 * break no rule.  @k where that is not known: the emitter replays
 * every tensor, or the emission is over (@s->emit NULL).
 */
uint32_t hyper_plan__sched_quiet_until(const struct sched *s, uint32_t k);
/*
 * The steps hyper_plan__sched_quiet_until() does not call quiet, in
 * order, *@n of them, for a caller that walks them itself (the
 * simulator, at every busy step): there while @s->emit is, and only
 * when it tracks the evicted tensors alone; else NULL.
 */
const uint32_t *hyper_plan__sched_busy(const struct sched *s, size_t *n);
/*
 * The first of the busy steps @busy[0 .. @n) from @k on, @end if none:
 * *@x is the caller's cursor, moved to it (forward, or back should @k
 * be lower than the last asked).  hyper_plan__sched_quiet_until() and
 * the simulator's own walk over hyper_plan__sched_busy()'s list.
 */
static inline uint32_t hyper_plan__busy_from(const uint32_t *busy, size_t n,
					     size_t *x, uint32_t k,
					     uint32_t end)
{
	size_t i = *x;

	while (i > 0 && busy[i - 1] >= k)
		i--;
	while (i < n && busy[i] < k)
		i++;
	*x = i;
	return i < n ? busy[i] : end;
}
/*
 * The life @s is emitted from, while it is being emitted tracking its
 * evicted tensors alone; else NULL.
 */
const struct life *hyper_plan__sched_life(const struct sched *s);
/*
 * The tensors @s is emitted tracking, *@n of them, each once: every
 * tensor it evicts, and the only ones whose homes may differ from the
 * life's.  There while hyper_plan__sched_life() is; else NULL.
 */
const uint32_t *hyper_plan__sched_tracked(const struct sched *s, size_t *n);
/* The steps whose slots are there: @s->n once it is whole. */
uint32_t hyper_plan__sched_emitted(const struct sched *s);
void hyper_plan__sched_free(struct sched *s);
/*
 * Places every residency in the device arena (passes/arena.c); @limit is
 * the user's budget, which the arena may not exceed (0: none).
 * 0, or -ENOMEM (said in @e) with no layout.
 */
int hyper_plan__sched_layout(struct sched *s, uint64_t limit, struct hp_mem *mem,
		 struct hp_err *e);
/* Frees @s's layout and zeroes its figures: @s as if never laid out. */
void hyper_plan__sched_layout_drop(struct sched *s);
/*
 * A layout that ran out of memory: dropped, @mem marked failed and the
 * failure said in @e; returns -ENOMEM.  Every path that lays out @s
 * (passes/arena.c, a row's twin in passes/rows.c) unwinds through it,
 * so that a failed layout leaves the same schedule behind.
 */
int hyper_plan__sched_layout_nomem(struct sched *s, struct hp_mem *mem,
				   struct hp_err *e);

/*
 * The layouts a graph's plans made under a budget, kept so that a schedule
 * laid out again (a baseline the planner fitted, then fitted as its own
 * row) takes its offsets back rather than placing them again: a layout
 * depends on the residencies alone.  A few of them, the oldest dropped
 * first; a zeroed cache is an empty one.  One thread uses it: the tools'
 * job plans one goal at a time, and the API's plans keep none (plan_api.c).
 */
#define HP_LAYCACHE_N	16

struct hp_layent;

struct hp_laycache {
	unsigned int next;		/* the slot the next one takes */
	size_t bytes;			/* what they hold */
	struct hp_layent *ent[HP_LAYCACHE_N];
};

/* As hyper_plan__sched_layout(), through @lc (NULL: none). */
int hyper_plan__sched_layout_cached(struct sched *s, uint64_t limit,
				    struct hp_laycache *lc, struct hp_mem *mem,
				    struct hp_err *e);
void hyper_plan__laycache_free(struct hp_laycache *lc);
/*
 * As hyper_plan__sched_layout() with no limit, by one online placement
 * in start order (HU_ARENA_ONLINE, O(n log n)): offsets libhyper's
 * validator takes, in an arena most often taller than that layout's.
 * For a schedule whose layout nothing else reads (passes/pipeline.c: a
 * --compare row that is printed only).
 */
int hyper_plan__sched_layout_first(struct sched *s, struct hp_mem *mem,
				   struct hp_err *e);

static inline size_t slot_len(const struct sched *s, size_t slot)
{
	return s->slot_off[slot + 1] - s->slot_off[slot];
}

struct profile;
/* The planner's "x-planner" note: which policy, profile and knobs. */
void hyper_plan__plan_note(char *buf, size_t len, const char *policy,
	       const struct profile *p, const char *params);
void hyper_plan__sched_write_json(const struct sched *s, FILE *f, const char *name,
		      const char *extra_json);

#endif
