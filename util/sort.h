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
 * (stack depth O(log n)).  Not stable: elements neither before the other
 * may come out in any order.
 */
#define HU_DEFINE_SORT(name, type, before)				\
static void name(type *a, size_t n)					\
{									\
	while (n > 16) {						\
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
			name(a, j + 1);					\
			a += j + 1;					\
			n -= j + 1;					\
		} else {						\
			name(a + j + 1, n - j - 1);			\
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
}

#endif
