/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An in-place sort generated for one element type and one comparison,
 * inline where qsort() would call a comparison and copy through a buffer
 * at each of its O(n log n) steps.  Internal, header only.
 */
#ifndef HYPER_UTIL_SORT_H
#define HYPER_UTIL_SORT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * HU_DEFINE_SORT(name, type, before) defines
 *	static void name(type *a, size_t n)
 * which sorts @a by @before(const type *, const type *), a strict weak
 * order ("comes before"): an insertion sort for up to 16 elements, a
 * quicksort around a median of three for more, the smaller side first
 * (stack depth O(log n)), and a heap sort for a part that is still
 * being split after 2 log2(n) rounds (an introsort: a median of three
 * goes quadratic on some inputs, such as the ends of a decode plan's
 * intervals).  Not stable: elements neither before the other may come
 * out in any order.
 */
#define HU_DEFINE_SORT(name, type, before)				\
static void name##_sift(type *a, size_t i, size_t n)			\
{									\
	type t = a[i];							\
									\
	for (size_t c; (c = 2 * i + 1) < n; i = c) {			\
		if (c + 1 < n && before(&a[c], &a[c + 1]))		\
			c++;						\
		if (!before(&t, &a[c]))					\
			break;						\
		a[i] = a[c];						\
	}								\
	a[i] = t;							\
}									\
									\
/* Splits @a (n > 16) around a median of three: [0, k) come before	\
 * [k, n); returns k, 0 < k < n. */					\
static inline size_t name##_split(type *a, size_t n)			\
{									\
	const type *x = &a[0], *y = &a[n / 2], *z = &a[n - 1];		\
	type pivot = before(x, y) ?					\
		(before(y, z) ? *y : before(x, z) ? *z : *x) :		\
		(before(x, z) ? *x : before(y, z) ? *z : *y);		\
	size_t i = 0, j = n - 1;					\
	type t;								\
									\
	for (;;) {							\
		while (before(&a[i], &pivot))				\
			i++;						\
		while (before(&pivot, &a[j]))				\
			j--;						\
		if (i >= j)						\
			return j + 1;					\
		t = a[i];						\
		a[i++] = a[j];						\
		a[j--] = t;						\
	}								\
}									\
									\
static void name##_intro(type *a, size_t n, unsigned int depth)	\
{									\
	while (n > 16) {						\
		if (!depth--) {						\
			/* pivots gone wrong: a heap sort, O(n log n) */ \
			for (size_t k = n / 2; k--;)			\
				name##_sift(a, k, n);			\
			while (--n) {					\
				type h = a[0];				\
									\
				a[0] = a[n];				\
				a[n] = h;				\
				name##_sift(a, 0, n);			\
			}						\
			return;						\
		}							\
		size_t k = name##_split(a, n);				\
									\
		/* [0, k) and [k, n): recurse into the smaller */	\
		if (k < n - k) {					\
			name##_intro(a, k, depth);			\
			a += k;						\
			n -= k;						\
		} else {						\
			name##_intro(a + k, n - k, depth);		\
			n = k;						\
		}							\
	}								\
	for (size_t i = 1; i < n; i++) {				\
		type t = a[i];						\
		size_t j = i;						\
									\
		for (; j && before(&t, &a[j - 1]); j--)			\
			a[j] = a[j - 1];				\
		a[j] = t;						\
	}								\
}									\
									\
static void name(type *a, size_t n)					\
{									\
	unsigned int depth = 0;						\
									\
	for (size_t m = n; m > 1; m /= 2)				\
		depth += 2;						\
	name##_intro(a, n, depth);					\
}

/*
 * HU_DEFINE_SORT_FIRST(name, type), after HU_DEFINE_SORT(name, ...),
 * defines
 *	static void name##_first(type *a, size_t n, size_t m)
 * which puts the first @m of the @n elements at the front in order, the
 * others after them in any order: the same splits, leaving unsorted the
 * parts wholly past @m (for a consumer that may stop early).  A part still
 * being split after 2 log2(n) rounds is sorted whole.
 */
#define HU_DEFINE_SORT_FIRST(name, type)				\
static void name##_first(type *a, size_t n, size_t m)			\
{									\
	unsigned int depth = 0;						\
									\
	for (size_t x = n; x > 1; x /= 2)				\
		depth += 2;						\
	while (n > 16 && m < n && depth--) {				\
		size_t k = name##_split(a, n);				\
									\
		if (m <= k) {						\
			n = k;						\
			continue;					\
		}							\
		name(a, k);						\
		a += k;							\
		n -= k;							\
		m -= k;							\
	}								\
	name(a, n);							\
}

#endif
