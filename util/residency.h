/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The residency intervals of a schedule: one builder for libhyper's
 * layout and validator (libhyper/layout.c) and the planner's arena
 * (libhyperplan/passes/arena.c), so that the two count the same
 * residencies on the same clock.  A residency runs from a tensor's
 * becoming resident (home "device" at the start, a prefetch, a define of
 * a tensor not resident) to its detach.  Time is a counter over the
 * schedule's events: each cache operation and each define is one tick,
 * the start one more.  Internal: linked into each, never exported.
 */
#ifndef HYPER_UTIL_RESIDENCY_H
#define HYPER_UTIL_RESIDENCY_H

#include <stddef.h>
#include <stdint.h>

/* One residency: [start, end) on the event counter (end UINT64_MAX: to
 * the end), its bytes rounded up to the arena's granule. */
struct hu_resid {
	uint64_t start, end;
	uint64_t bytes;
	uint32_t tensor;
	uint32_t nth;		/* the tensor's residency number, from 0 */
	uint32_t step;		/* where it begins; UINT32_MAX: at the start */
};

/*
 * The builder.  @realloc (NULL: the C library's) is called for every
 * allocation, with @ctx, so that a caller counting its allocations (the
 * planner's hp_mem) sees these too; everything is freed with free().
 */
struct hu_res {
	struct hu_resid *v;
	uint32_t n, cap;
	uint32_t *open;		/* tensor -> interval index + 1 */
	uint32_t *count;	/* tensor -> residencies so far */
	uint32_t nr_tensors;
	uint64_t now, align;
	uint32_t step;		/* set by the caller as it walks the steps */
	int err;		/* -ENOMEM once an allocation failed */
	void *(*realloc)(void *ctx, void *p, size_t n);
	void *ctx;
};

/* 0, or -ENOMEM (then hu_res_free()).  @align: a power of two. */
int hu_res_init(struct hu_res *r, uint32_t nr_tensors, uint64_t align,
		void *(*realloc_fn)(void *ctx, void *p, size_t n), void *ctx);
/*
 * Room for @n intervals at once, before the first begins, for a caller
 * that knows a bound: the array then grows only past it.  0, or -ENOMEM
 * (also kept in r->err, for hu_res_finish(); or hu_res_free()).
 */
int hu_res_reserve(struct hu_res *r, uint32_t n);
/* Room for one more interval: 0, or -ENOMEM (also kept in r->err). */
int hu_res_grow(struct hu_res *r);

/*
 * Tensor @t of @bytes becomes resident now, unless it is already.
 * Inline, as is hu_res_end(): libhyper's replay calls both for every
 * cache op it validates, where a call saved and restored the registers
 * the replay holds.
 */
static inline void hu_res_begin(struct hu_res *r, uint32_t t, uint64_t bytes)
{
	if (r->err || r->open[t] || (r->n == r->cap && hu_res_grow(r)))
		return;
	r->v[r->n] = (struct hu_resid){
		.start = r->now, .end = UINT64_MAX, .tensor = t,
		.nth = r->count[t]++, .step = r->step,
		.bytes = (bytes + r->align - 1) & ~(r->align - 1),
	};
	r->open[t] = ++r->n;
}

/* Tensor @t is detached now, if it is resident. */
static inline void hu_res_end(struct hu_res *r, uint32_t t)
{
	if (r->err)
		return;
	if (r->open[t])
		r->v[r->open[t] - 1].end = r->now;
	r->open[t] = 0;
}
/* One event: the clock moves on. */
static inline void hu_res_tick(struct hu_res *r)
{
	r->now++;
}

/* One cache operation (HYPER_OP_*) on @t, then a tick. */
void hu_res_op(struct hu_res *r, uint32_t op, uint32_t t, uint64_t bytes);
/*
 * Hands over the intervals (in the order they begin; free() them) and
 * frees the rest.  0, or -ENOMEM if any allocation failed (nothing
 * handed over).
 */
int hu_res_finish(struct hu_res *r, struct hu_resid **vp, uint32_t *np);
void hu_res_free(struct hu_res *r);

#endif /* HYPER_UTIL_RESIDENCY_H */
