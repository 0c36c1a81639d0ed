/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A binary min-heap in an array, generated for one element type and one
 * order, inline where a call would compare through a pointer: the
 * arena's online placement (util/arena.c) keeps its live intervals in
 * one, libhyperplan's passes and simulator their (key, value) pairs
 * (libhyperplan/lib/heap.c, which grows the array).  Internal, header
 * only.
 */
#ifndef HYPER_UTIL_HEAP_H
#define HYPER_UTIL_HEAP_H

#include <stddef.h>

/*
 * HU_DEFINE_HEAP(name, type, ctx_type, before, stays) defines
 *	static inline void name##_push(ctx_type ctx, type *a, size_t n,
 *				       type x)
 * which adds @x to the heap of the @n elements at @a (room for n + 1),
 * and
 *	static inline type name##_pop(ctx_type ctx, type *a, size_t n)
 * which takes the first of the @n (n >= 1) out and returns it, the other
 * n - 1 left a heap at @a.  @before(ctx, const type *x, const type *y):
 * @x comes out before @y, a strict weak order; @stays(ctx, x, y): the
 * last element @y, sifted down from the top, stays above its child @x.
 * For a total order @stays is !@before.  It is asked apart so that a
 * user whose keys may be unordered (a NaN double) keeps its own test:
 * the sift moves such a child up where !@before would stop it.
 */
#define HU_DEFINE_HEAP(name, type, ctx_type, before, stays)		\
static inline void name##_push(ctx_type ctx, type *a, size_t n, type x) \
{									\
	size_t i = n, up;						\
									\
	for (; i && before(ctx, &x, &a[up = (i - 1) / 2]); i = up)	\
		a[i] = a[up];						\
	a[i] = x;							\
}									\
									\
static inline type name##_pop(ctx_type ctx, type *a, size_t n)		\
{									\
	type top = a[0], last = a[--n];					\
	size_t i = 0, c;						\
									\
	while ((c = 2 * i + 1) < n) {					\
		if (c + 1 < n && before(ctx, &a[c + 1], &a[c]))		\
			c++;						\
		if (stays(ctx, &a[c], &last))				\
			break;						\
		a[i] = a[c];						\
		i = c;							\
	}								\
	a[i] = last;							\
	return top;							\
}

#endif /* HYPER_UTIL_HEAP_H */
