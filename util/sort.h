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
		const type *x = &a[0], *y = &a[n / 2], *z = &a[n - 1];	\
		type pivot = before(x, y) ?				\
			(before(y, z) ? *y : before(x, z) ? *z : *x) :	\
			(before(x, z) ? *x : before(y, z) ? *z : *y);	\
		size_t i = 0, j = n - 1;				\
		type t;							\
									\
		for (;;) {						\
			while (before(&a[i], &pivot))			\
				i++;					\
			while (before(&pivot, &a[j]))			\
				j--;					\
			if (i >= j)					\
				break;					\
			t = a[i];					\
			a[i++] = a[j];					\
			a[j--] = t;					\
		}							\
		/* [0, j] and [j + 1, n): recurse into the smaller */	\
		if (j + 1 < n - j - 1) {				\
			name##_intro(a, j + 1, depth);			\
			a += j + 1;					\
			n -= j + 1;					\
		} else {						\
			name##_intro(a + j + 1, n - j - 1, depth);	\
			n = j + 1;					\
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

#endif
