/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Static placement of buffers whose lifetimes are known in advance: every
 * residency interval of a schedule gets an offset in one arena, so that
 * no two intervals live at the same time share a byte.  One
 * implementation for the planner (which writes the offsets into the
 * schedule) and libhyper (which lays out a schedule that carries none).
 * Internal: linked into each, never exported.
 */
#ifndef HYPER_UTIL_ARENA_H
#define HYPER_UTIL_ARENA_H

#include <stdint.h>

/*
 * One residency interval, live over [start, end) on any time scale
 * (UINT64_MAX: to the end).  @bytes is what it occupies, already rounded
 * to the arena's granule; @off is set by hu_arena_place().
 */
struct hu_ival {
	uint64_t start, end;
	uint64_t bytes;
	uint64_t off;
};

/*
 * The most bytes live at one time, in *@peak: no placement is lower than
 * this.  Return: 0, or -ENOMEM (*@peak then 0, which bounds nothing).
 */
int hu_arena_live_peak(const struct hu_ival *v, uint32_t n, uint64_t *peak);

/*
 * Gives each of @n intervals an offset and stores the arena's height
 * (highest offset + bytes) in *@height.  Several greedy placements are
 * tried (by size, by lifetime, by area and by start; lowest and best
 * fit), as compilers' static memory planners do, then a randomised search
 * around the best order spends up to @effort interval placements (0:
 * none; HU_ARENA_EFFORT is the planner's); the lowest is kept.
 *
 * Trying stops at the first placement at or below hu_arena_enough():
 * more tries could win back less than its slack, and the first greedy
 * placement of a decode or training graph is often there already.  The
 * result depends on the input and @limit alone.
 * Return: 0, or -ENOMEM (offsets then undefined).
 */
#define HU_ARENA_EFFORT	(1U << 17)
int hu_arena_place(struct hu_ival *v, uint32_t n, uint64_t effort,
		   uint64_t limit, uint64_t *height);

/*
 * Where hu_arena_place() stops trying, for @n intervals whose live peak
 * (which no placement beats) is @floor: a HU_ARENA_SLACK'th above it, a
 * HU_ARENA_SLACK_BIG'th for sets larger than HU_ARENA_EFFORT (where each
 * try costs more than the randomised search's whole budget, so that
 * search never runs), and at most @limit if that is lower (0: no limit;
 * the budget a caller must fit, so that stopping never costs a fit), but
 * never below the floor.
 */
#define HU_ARENA_SLACK		1024
#define HU_ARENA_SLACK_BIG	256
uint64_t hu_arena_enough(uint64_t floor, uint64_t limit, uint32_t n);

/*
 * How each fit finds the intervals it must avoid: by time (read the
 * buckets of the run it shares time with, each in offset order: cheap
 * when few are live at once), by offset (read all placed bottom up:
 * cheap when most overlap), or split (the long intervals by offset, the
 * others by time).  The offsets are the same every way;
 * hu_arena_place() splits (AUTO is SPLIT).  The others are for tests.
 */
enum hu_arena_way {
	HU_ARENA_AUTO,
	HU_ARENA_BY_TIME,
	HU_ARENA_BY_OFFSET,
	HU_ARENA_SPLIT,
	/*
	 * Or'ed into a way: every placement tried runs to its end, where
	 * one is otherwise given up as soon as it is taller than one it
	 * could replace, its keys sorted first, and by time in one bucket
	 * with no spans read as one (no shortcut: a reference).  The same
	 * offsets; for tests.
	 */
	HU_ARENA_WHOLE = 0x100,
	/*
	 * Or'ed into a way: a placement under way is stopped only once it
	 * is as tall as one it could replace, never earlier by a bound on
	 * the height it will reach.  The same offsets; for tests.
	 */
	HU_ARENA_NO_BOUND = 0x200,
	/*
	 * Or'ed into a way: a fit by offset passes over no block by its
	 * entries' start instants.  The same offsets; for tests.
	 */
	HU_ARENA_NO_INSTANTS = 0x800,
	/*
	 * Or'ed into a way: trying stops only at the live peak, never
	 * within HU_ARENA_SLACK of it nor at @limit.  Offsets as tall or
	 * lower; for tests.
	 */
	HU_ARENA_NO_SLACK = 0x400,
	/*
	 * Or'ed into a way: no greedy order and no search, but the
	 * intervals in start order, each at the offset of one of its size
	 * that has ended before it starts, else on top: O(n log n) where
	 * the greedy placements are far from linear when many intervals
	 * share time; offsets as valid, in an arena of each size times
	 * the most of it live at once, summed (@effort and @limit are not
	 * read).  For a layout that need only pass the validator, its
	 * height read by nothing (the planner's --compare rows that are
	 * printed only).
	 */
	HU_ARENA_ONLINE = 0x1000,
};

int hu_arena_place_way(struct hu_ival *v, uint32_t n, uint64_t effort,
		       uint64_t limit, enum hu_arena_way way,
		       uint64_t *height);

/*
 * hu_arena_live_peak(), and in *@at the first instant it is reached;
 * with HU_ARENA_WHOLE in @way, by one sort of every start and end (the
 * reference).  The same either way; for tests.
 */
int hu_arena_live_peak_way(const struct hu_ival *v, uint32_t n,
			   enum hu_arena_way way, uint64_t *peak, uint64_t *at);

#endif /* HYPER_UTIL_ARENA_H */
