// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <math.h>
#include <string.h>

#include "passes/calendar.h"
#include "lib/util.h"
#include "util/huge.h"

#define EMPTY	1e-6		/* ns: less than this left is a full step */

/*
 * A calendar's arrays, in one block where they span a huge page
 * (hyper_plan__parts()): at 1M steps each apart, a heap block of 1 to
 * 8 MB on no 2 MiB bound, cost about 450 faults of 4 KiB around its
 * huge pages, some 2,400 in all at the first reset; in the block they
 * lie on whole huge pages.  Below that they stay arrays apart, as the
 * emission's items do (passes/sched.c): one block of a few hundred KB
 * misses the holes that earlier phases freed in the heap, and took
 * OLMoE-1B-7B training --compare about 200 faults more.  The undo list
 * (16 KiB) stays apart either way, allocated after the base as before.
 */
static int cal_init(struct calendar *c, uint32_t n, unsigned int uses,
		    struct cal_base *base, struct hp_mem *mem)
{
	bool latest = uses & CAL_LATEST, runs = uses & CAL_RUNS;
	struct hu_part part[6];
	size_t i, np = 0;
	int err;

	memset(c, 0, sizeof(*c));
	c->n = n;
	for (c->top = 1, c->levels = 1; c->top * 2 <= n; c->top *= 2)
		c->levels++;
	part[np++] = (struct hu_part)HU_PART(c->cap, n, false);
	/* up to 2 top - 1, the descent's last entry: see cal_reach_sum() */
	part[np++] = (struct hu_part)HU_PART(c->fen, 2 * (size_t)c->top, false);
	if (latest)
		part[np++] = (struct hu_part)HU_PART(c->left, (size_t)n + 1,
						     false);
	if (runs) {
		part[np++] = (struct hu_part)HU_PART(c->right, (size_t)n + 1,
						     false);
		part[np++] = (struct hu_part)HU_PART(c->zeros, (size_t)n + 1,
						     false);
		part[np++] = (struct hu_part)HU_PART(c->used, n, false);
	}
	err = hyper_plan__parts(mem, part, np, &c->blk);
	if (!base) {
		base = hyper_plan__calloc(mem, 1, sizeof(*base));
		if (base) {
			base->fen0 = hyper_plan__array(mem, (size_t)n + 1,
						       sizeof(*base->fen0));
			if (!base->fen0) {
				free(base);
				base = NULL;
			}
		}
	}
	if (base) {
		c->base = base;
		base->refs++;
	}
	c->undo = hyper_plan__array(mem, CAL_UNDO, sizeof(*c->undo));
	if (!err && c->base && c->undo) {
		for (i = (size_t)n + 1; i < 2 * (size_t)c->top; i++)
			c->fen[i] = INFINITY;
		return 0;
	}
	hyper_plan__cal_free(c);
	return -ENOMEM;
}

int hyper_plan__cal_init(struct calendar *c, uint32_t n, unsigned int uses,
			 struct hp_mem *mem)
{
	return cal_init(c, n, uses, NULL, mem);
}

int hyper_plan__cal_init_twin(struct calendar *c, struct calendar *twin,
			      unsigned int uses, struct hp_mem *mem)
{
	return cal_init(c, twin->n, uses, twin->base, mem);
}

void hyper_plan__cal_free(struct calendar *c)
{
	hyper_plan__cal_free_in(c, NULL);
}

void hyper_plan__cal_free_in(struct calendar *c, struct hp_mem *mem)
{
	struct hu_part part[] = {
		HU_PART(c->cap, 0, false), HU_PART(c->fen, 0, false),
		HU_PART(c->left, 0, false), HU_PART(c->right, 0, false),
		HU_PART(c->zeros, 0, false), HU_PART(c->used, 0, false),
	};

	hyper_plan__block_free(mem, &c->blk, part, ARRAY_SIZE(part));
	if (c->base && !--c->base->refs) {
		free(c->base->fen0);
		free(c->base);
	}
	free(c->undo);
	memset(c, 0, sizeof(*c));
}

/*
 * The tree over the steps as reset: the base's when it was built from
 * the same capacities and scale (the same sums in the same order: the
 * same bits), else built here, and the base then this build's.
 */
static void build_tree(struct calendar *c, const double *cap0, double scale)
{
	struct cal_base *b = c->base;
	uint32_t i, up;

	if (b->gen && b->cap0 == cap0 && b->scale == scale) {
		memcpy(c->fen, b->fen0, ((size_t)c->n + 1) * sizeof(*c->fen));
		c->gen = b->gen;
		return;
	}
	c->fen[0] = 0;
	for (i = 0; i < c->n; i++)
		c->fen[i + 1] = c->cap[i];
	for (i = 1; i <= c->n; i++) {		/* linear Fenwick build */
		up = i + (i & -i);
		if (up <= c->n)
			c->fen[up] += c->fen[i];
	}
	memcpy(b->fen0, c->fen, ((size_t)c->n + 1) * sizeof(*c->fen));
	b->cap0 = cap0;
	b->scale = scale;
	if (!++b->gen)		/* wrapped: 0 means none built */
		b->gen = 1;
	c->gen = b->gen;
}

/*
 * Steps @from .. n - 1 as hyper_plan__cal_reset() leaves them, all but the
 * tree and the runs' zeros: one array at a time, each loop a few
 * instructions a step, where a step at a time tested each array's use and
 * reloaded the capacities and scale through @c for every step (a restore
 * from the first step written rewrites thousands of steps on MoE training,
 * 19 instructions each).  The same values either way.
 */
static void restore_from(struct calendar *c, uint32_t from)
{
	const double *cap0 = c->cap0;
	double scale = c->scale, *cap = c->cap;
	uint32_t i, n = c->n, *up;

	for (i = from; i < n; i++)
		cap[i] = cap0[i] * scale;
	up = c->left;
	if (up)
		for (i = from; i < n; i++)
			up[i + 1] = cap[i] <= EMPTY ? i : i + 1;
	up = c->right;
	if (up) {
		for (i = from; i < n; i++)
			up[i] = cap[i] <= EMPTY ? i + 1 : i;
		up[n] = n;
		memset(c->used + from, 0, n - from);
	}
}

void hyper_plan__cal_reset(struct calendar *c, const double *cap0, double scale)
{
	uint32_t i;

	c->cap0 = cap0;
	c->scale = scale;
	if (c->left)
		c->left[0] = 0;
	restore_from(c, 0);
	if (c->right) {
		c->zeros[0] = 0;
		for (i = 0; i < c->n; i++)
			c->zeros[i + 1] = c->zeros[i] + (c->right[i] != i);
	}
	build_tree(c, cap0, scale);
	c->low = c->n;
	c->dirty = c->n;
	c->nundo = 0;
}

/* Step i as hyper_plan__cal_reset() left it, all but the tree. */
static void restore_step(struct calendar *c, uint32_t i)
{
	bool full;

	c->cap[i] = c->cap0[i] * c->scale;
	full = c->cap[i] <= EMPTY;
	if (c->left)
		c->left[i + 1] = full ? i : i + 1;
	if (c->right) {
		c->right[i] = full ? i + 1 : i;
		c->used[i] = 0;
	}
}

void hyper_plan__cal_restore(struct calendar *c, const double *cap0,
			     double scale)
{
	const double *fen0 = c->base->fen0;
	uint32_t u, from = c->dirty;
	size_t e;

	if (cap0 != c->cap0 || scale != c->scale || c->gen != c->base->gen) {
		hyper_plan__cal_reset(c, cap0, scale);
		return;
	}
	if (c->nundo <= CAL_UNDO) {
		for (u = 0; u < c->nundo; u++) {
			restore_step(c, c->undo[u]);
			for (e = (size_t)c->undo[u] + 1; e <= c->n;
			     e = (e | (e - 1)) + 1)
				c->fen[e] = fen0[e];
		}
	} else {
		restore_from(c, from);
		memcpy(c->fen + from + 1, fen0 + from + 1,
		       ((size_t)c->n - from) * sizeof(*c->fen));
	}
	if (c->right)
		c->right[c->n] = c->n;
	c->low = c->n;
	c->dirty = c->n;
	c->nundo = 0;
}

double hyper_plan__cal_avail(const struct calendar *c, uint32_t lo, uint32_t hi)
{
	return lo > hi ? 0 : hyper_plan__cal_before(c, hi + 1) -
			     hyper_plan__cal_before(c, lo);
}

/*
 * One level of the Fenwick descent, its stride a constant: @at is the
 * entry at the position so far, so that the stride is the load's offset.
 */
#define DESCEND(stride)						\
	do {							\
		if (at[stride] < want) {			\
			at += (stride);				\
			want -= *at;				\
		}						\
	} while (0)

#define fallthrough	__attribute__((__fallthrough__))

/*
 * The entries past n hold infinity, which no sum wants: the descent
 * reads them where it would have stopped at n, with no test of its own
 * (a third of its instructions).  Its levels unrolled, entered at the
 * calendar's first (c->levels): each stride a constant in the load's
 * address and the step's add, where the loop added the stride to the
 * position, halved it and tested it at every level (17 levels at 100k
 * decode operators, 7 instructions each; 4 now).  The same entries
 * compared and subtracted in the same order.
 *
 * Nor does it move past n, so the position it ends at is the step,
 * n where no prefix holds @want: no clamp to n (cal_init() sets levels
 * from 1 to 32, the switch's only cases).
 */
uint32_t hyper_plan__cal_reach_sum(const struct calendar *c, double want)
{
	const double *at = c->fen;

	switch (c->levels) {
	case 32:
		DESCEND(1u << 31);
		fallthrough;
	case 31:
		DESCEND(1u << 30);
		fallthrough;
	case 30:
		DESCEND(1u << 29);
		fallthrough;
	case 29:
		DESCEND(1u << 28);
		fallthrough;
	case 28:
		DESCEND(1u << 27);
		fallthrough;
	case 27:
		DESCEND(1u << 26);
		fallthrough;
	case 26:
		DESCEND(1u << 25);
		fallthrough;
	case 25:
		DESCEND(1u << 24);
		fallthrough;
	case 24:
		DESCEND(1u << 23);
		fallthrough;
	case 23:
		DESCEND(1u << 22);
		fallthrough;
	case 22:
		DESCEND(1u << 21);
		fallthrough;
	case 21:
		DESCEND(1u << 20);
		fallthrough;
	case 20:
		DESCEND(1u << 19);
		fallthrough;
	case 19:
		DESCEND(1u << 18);
		fallthrough;
	case 18:
		DESCEND(1u << 17);
		fallthrough;
	case 17:
		DESCEND(1u << 16);
		fallthrough;
	case 16:
		DESCEND(1u << 15);
		fallthrough;
	case 15:
		DESCEND(1u << 14);
		fallthrough;
	case 14:
		DESCEND(1u << 13);
		fallthrough;
	case 13:
		DESCEND(1u << 12);
		fallthrough;
	case 12:
		DESCEND(1u << 11);
		fallthrough;
	case 11:
		DESCEND(1u << 10);
		fallthrough;
	case 10:
		DESCEND(1u << 9);
		fallthrough;
	case 9:
		DESCEND(1u << 8);
		fallthrough;
	case 8:
		DESCEND(1u << 7);
		fallthrough;
	case 7:
		DESCEND(1u << 6);
		fallthrough;
	case 6:
		DESCEND(1u << 5);
		fallthrough;
	case 5:
		DESCEND(1u << 4);
		fallthrough;
	case 4:
		DESCEND(1u << 3);
		fallthrough;
	case 3:
		DESCEND(1u << 2);
		fallthrough;
	case 2:
		DESCEND(1u << 1);
		fallthrough;
	case 1:
		DESCEND(1u);
		break;
	default:
		__builtin_unreachable();
	}
	return (uint32_t)(at - c->fen);
}

uint32_t hyper_plan__cal_reach(const struct calendar *c, uint32_t lo, double amount)
{
	return hyper_plan__cal_reach_sum(c, hyper_plan__cal_before(c, lo) +
					 amount);
}

/*
 * Step @x noted in @undo, *@nundo the notes' count: it stops at
 * CAL_UNDO + 1, past the list's room, where the restore goes by the
 * range from c->dirty instead.  Shared by dirty() and take_latest(),
 * which holds the count in a register.
 */
static inline __attribute__((always_inline)) void
undo_note(uint32_t *undo, uint32_t *nundo, uint32_t x)
{
	if (*nundo <= CAL_UNDO) {
		if (*nundo < CAL_UNDO)
			undo[*nundo] = x;
		(*nundo)++;
	}
}

/* Step @x's entries may be written: restore them. */
static void dirty(struct calendar *c, uint32_t x)
{
	if (x < c->dirty)
		c->dirty = x;
	undo_note(c->undo, &c->nundo, x);
}

/*
 * The root of x in @up (left or right), halving the path; a pointer it
 * moves is noted for hyper_plan__cal_restore(): entry x belongs to step
 * x - @off (left[x] to step x - 1, right[x] to step x).
 */
static uint32_t find(struct calendar *c, uint32_t *up, uint32_t off,
		     uint32_t x)
{
	while (up[x] != x) {
		uint32_t g = up[up[x]];

		if (g != up[x]) {
			dirty(c, x - off);
			up[x] = g;
		}
		x = up[x];
	}
	return x;
}

/* Did a transfer take all of some step strictly between a and b? */
static bool crossed(const struct calendar *c, uint32_t a, uint32_t b)
{
	return b - a - 1 != c->zeros[b] - c->zeros[a + 1];
}

uint32_t hyper_plan__cal_next(struct calendar *c, uint32_t lo)
{
	return lo < c->n ? find(c, c->right, 0, lo) : c->n;
}

int hyper_plan__cal_find_run(struct calendar *c, uint32_t lo, uint32_t hi, double amount,
		 uint32_t *first, uint32_t *last)
{
	uint32_t x, prev = NONE;
	double acc = 0;

	x = hyper_plan__cal_next(c, lo);
	/* no step with time left in [lo, hi]: no run, no sums needed */
	if (x > hi || x >= c->n || hyper_plan__cal_avail(c, lo, hi) < amount)
		return -1;
	for (; x <= hi && x < c->n; prev = x, x = find(c, c->right, 0, x + 1)) {
		if (prev == NONE || c->used[x] || crossed(c, prev, x)) {
			acc = 0;	/* a run starts here */
			*first = x;
		}
		acc += c->cap[x];
		if (acc >= amount - EMPTY) {
			*last = x;
			return 0;
		}
	}
	return -1;
}

/*
 * Step k's time and marks for a take of @got in a run, all but the tree:
 * its entries are walk()'s, which the takes may run in pairs.
 */
static inline __attribute__((always_inline)) void
take(struct calendar *c, uint32_t k, double got)
{
	dirty(c, k);
	c->cap[k] -= got;
	if (c->used)
		c->used[k] = 1;
	if (k < c->low)
		c->low = k;
	if (c->cap[k] <= EMPTY) {
		if (c->left)
			c->left[k + 1] = k;
		if (c->right)
			c->right[k] = k + 1;
	}
}

/*
 * The walks below go by p = i - 1 for tree entry i, over @fen1 = fen + 1:
 * i + (i & -i) is then p | (p + 1), and i <= n is p < n, two
 * instructions a step where i's (i | (i - 1)) + 1 took three, and the
 * entry's address one more (the same entries: a take walks eleven at
 * 100k decode operators, twenty at 1M).
 */
static inline __attribute__((always_inline)) void
walk(double *fen1, size_t n, size_t p, double got)
{
	for (; p < n; p |= p + 1)
		fen1[p] -= got;
}

/*
 * Two takes' walks from entry p + 1 up, @g1's then @g2's at each entry:
 * the same subtractions in the same order as walk() twice, one pass.
 */
static inline __attribute__((always_inline)) void
walk2(double *fen1, size_t n, size_t p, double g1, double g2)
{
	for (; p < n; p |= p + 1) {
		double f = fen1[p] - g1;

		fen1[p] = f - g2;
	}
}

/*
 * The takes of a call walk the tree in pairs: two walks up from any two
 * entries meet at the first entry whose range holds both (each walk
 * climbs through every entry whose range holds its own), and go on as
 * one from there, each entry then subtracting the first take's time
 * then the second's: the same bits as two walks.  Two takes at steps
 * j - 1 and j with j odd meet at once, other neighbours and takes a few
 * steps apart a few entries up.  A take's walk waits in @w until the
 * next is known.
 */
struct walk_wait {
	size_t p;		/* entry p + 1; WALK_NONE: none */
	double got;
};

#define WALK_NONE	SIZE_MAX

/*
 * Entry p + 1 takes @got after the waiting take, if any: the lower of
 * the two walks moves until they meet, each entry of one walk alone
 * taking its own take's time.
 */
static inline __attribute__((always_inline)) void
walk_pair(double *fen1, size_t n, struct walk_wait *w, size_t p,
	  double got)
{
	size_t x = w->p, y = p;

	if (x == WALK_NONE) {
		w->p = p;
		w->got = got;
		return;
	}
	w->p = WALK_NONE;
	while (x != y) {
		if (x < y) {
			if (x >= n)
				return;		/* both past the last entry */
			fen1[x] -= w->got;
			x |= x + 1;
		} else {
			if (y >= n)
				return;
			fen1[y] -= got;
			y |= y + 1;
		}
	}
	walk2(fen1, n, x, w->got, got);
}

/*
 * hyper_plan__cal_take_latest(), for a calendar with the runs' arrays
 * (@runs) or without (the planner's pool->device link): the arrays and
 * the undo count in registers, where the stores through @left (32-bit,
 * as c->n and the undo count are) made every take reload them, and the
 * runs' arrays tested at every take.  A call's takes go down, each step
 * below the one before: the first step taken since the last reset
 * (c->low) and the first written (c->dirty) follow from its last take,
 * once a call.  find() notes the pointers it moves in the undo list and
 * c->dirty itself: the count goes back to @c around it.  The same
 * entries, the same values, in the same order.
 */
static inline __attribute__((always_inline)) uint32_t
take_latest(struct calendar *c, uint32_t lo, uint32_t hi, double amount,
	    bool runs)
{
	struct walk_wait w = { WALK_NONE, 0 };
	double *cap = c->cap, *fen1 = c->fen + 1, got, rest;
	uint32_t *left = c->left, *undo = c->undo;
	uint32_t k, first = hi, nundo = c->nundo;
	size_t n = c->n;
	bool took = false;

	while (amount > EMPTY) {
		/* mostly step hi itself: the one before the last taken */
		k = left[hi + 1];
		if (k != hi + 1) {
			c->nundo = nundo;
			k = find(c, left, 1, hi + 1);
			nundo = c->nundo;
		}
		/* k = 0: no step left at all (left[0] is 0, its own root) */
		if (k <= lo)
			break;		/* rounding: the sum said it fits */
		first = k - 1;
		took = true;
		got = cap[first] < amount ? cap[first] : amount;
		undo_note(undo, &nundo, first);	/* dirty(), its min below */
		rest = cap[first] - got;
		cap[first] = rest;
		if (runs)
			c->used[first] = 1;
		if (rest <= EMPTY) {
			left[k] = first;
			if (runs)
				c->right[first] = k;
		}
		walk_pair(fen1, n, &w, first, got);
		amount -= got;
		/* first 0: hi + 1 wraps to 0, whose root ends the loop */
		hi = first - 1;
	}
	c->nundo = nundo;
	if (w.p != WALK_NONE)
		walk(fen1, n, w.p, w.got);
	if (took) {
		if (first < c->low)
			c->low = first;
		if (first < c->dirty)
			c->dirty = first;
	}
	return first;
}

uint32_t hyper_plan__cal_take_latest(struct calendar *c, uint32_t lo, uint32_t hi,
			 double amount)
{
	if (c->right)
		return take_latest(c, lo, hi, amount, true);
	return take_latest(c, lo, hi, amount, false);
}

void hyper_plan__cal_take_run(struct calendar *c, uint32_t first, uint32_t last,
		  double amount)
{
	struct walk_wait w = { WALK_NONE, 0 };
	double *fen1 = c->fen + 1;
	size_t n = c->n;
	uint32_t k;

	for (k = first; k <= last && amount > EMPTY; k++) {
		double got = c->cap[k] < amount ? c->cap[k] : amount;

		if (got > 0) {
			take(c, k, got);
			walk_pair(fen1, n, &w, k, got);
			amount -= got;
		}
	}
	if (w.p != WALK_NONE)
		walk(fen1, n, w.p, w.got);
}

int hyper_plan__cal_save(const struct calendar *c, struct cal_snap *s,
			 struct hp_mem *mem)
{
	size_t m = c->n - c->dirty;

	if (s->room < m || !s->undo) {
		hyper_plan__cal_snap_free(s);
		s->cap = hyper_plan__array(mem, m + 1, sizeof(*s->cap));
		s->fen = hyper_plan__array(mem, m + 1, sizeof(*s->fen));
		/* only the arrays this link's calendar keeps (cal_init()) */
		if (c->left)
			s->left = hyper_plan__array(mem, m + 1,
						    sizeof(*s->left));
		if (c->right) {
			s->right = hyper_plan__array(mem, m + 1,
						     sizeof(*s->right));
			s->used = hyper_plan__malloc(mem, m + 1);
		}
		s->undo = hyper_plan__array(mem, CAL_UNDO, sizeof(*s->undo));
		if (!s->cap || !s->fen || (c->left && !s->left) ||
		    (c->right && (!s->right || !s->used)) || !s->undo) {
			hyper_plan__cal_snap_free(s);
			return -ENOMEM;
		}
		s->room = m;
	}
	s->from = c->dirty;
	s->low = c->low;
	s->dirty = c->dirty;
	s->nundo = c->nundo;
	/* step x's entries: cap, used, right[x], left[x + 1], fen[x + 1] */
	memcpy(s->cap, c->cap + s->from, m * sizeof(*s->cap));
	if (c->right) {
		memcpy(s->used, c->used + s->from, m);
		memcpy(s->right, c->right + s->from, m * sizeof(*s->right));
	}
	if (c->left)
		memcpy(s->left, c->left + s->from + 1, m * sizeof(*s->left));
	memcpy(s->fen, c->fen + s->from + 1, m * sizeof(*s->fen));
	memcpy(s->undo, c->undo, (c->nundo < CAL_UNDO ? c->nundo : CAL_UNDO) *
	       sizeof(*s->undo));
	return 0;
}

void hyper_plan__cal_load(struct calendar *c, const struct cal_snap *s)
{
	size_t m = c->n - s->from;

	memcpy(c->cap + s->from, s->cap, m * sizeof(*s->cap));
	if (c->right) {
		memcpy(c->used + s->from, s->used, m);
		memcpy(c->right + s->from, s->right, m * sizeof(*s->right));
	}
	if (c->left)
		memcpy(c->left + s->from + 1, s->left, m * sizeof(*s->left));
	memcpy(c->fen + s->from + 1, s->fen, m * sizeof(*s->fen));
	memcpy(c->undo, s->undo, (s->nundo < CAL_UNDO ? s->nundo : CAL_UNDO) *
	       sizeof(*s->undo));
	c->low = s->low;
	c->dirty = s->dirty;
	c->nundo = s->nundo;
}

void hyper_plan__cal_snap_free(struct cal_snap *s)
{
	free(s->cap);
	free(s->fen);
	free(s->left);
	free(s->right);
	free(s->used);
	free(s->undo);
	memset(s, 0, sizeof(*s));
}
