/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Transparent huge pages for big heap blocks.  A big array touched from
 * end to end soon after it is allocated costs, in 4 KiB pages, one page
 * fault per page the heap had not held before: at a million decode
 * operators the planner took 200k of them, a tenth of its CPU time in
 * the kernel.  hu_advise_huge() asks for huge pages on the 2 MiB
 * aligned inside of a block of HU_HUGE_MIN bytes or more, before anyone
 * touches it, so that where THP is on "madvise" (or "always") a fresh
 * 2 MiB costs one fault.  Only the block's own pages are advised, never
 * a neighbour's; pages already faulted (memory the heap hands out
 * again) stay as they are.  The advice changes no contents, so its
 * failure (THP not built in, "never", a non-Linux build) is ignored.
 * Returns @p, for calls around an allocation.
 */
#ifndef HYPER_UTIL_HUGE_H
#define HYPER_UTIL_HUGE_H

#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* x86-64's PMD size; larger ones still take advice on 2 MiB bounds. */
#define HU_HUGE_PAGE	((size_t)2 << 20)
/* Below this a block holds at most one aligned huge page. */
#define HU_HUGE_MIN	((size_t)4 << 20)

static inline void *hu_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t lo, hi;

	if (!p || n < HU_HUGE_MIN)
		return p;
	lo = ((uintptr_t)p + HU_HUGE_PAGE - 1) & ~(uintptr_t)(HU_HUGE_PAGE - 1);
	hi = ((uintptr_t)p + n) & ~(uintptr_t)(HU_HUGE_PAGE - 1);
	if (lo < hi)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)n;
#endif
	return p;
}

/*
 * malloc(), calloc() and realloc() with the advice, for big arrays: the
 * one place each allocator in the project takes it from.
 */
static inline void *hu_malloc_huge(size_t n)
{
	return hu_advise_huge(malloc(n), n);
}

static inline void *hu_calloc_huge(size_t n, size_t size)
{
	void *p = calloc(n, size);

	return hu_advise_huge(p, p ? n * size : 0);
}

/*
 * realloc() moving a big block would copy it into fresh pages before any
 * advice could reach them (half of what a doubling array faults in), so
 * a big block that grows is moved by hand into a new block advised
 * first.  That gives up growth in place at the heap's top, a copy the
 * faults it saves outweigh.  malloc_usable_size() is at least what was
 * asked for the block: its copy reads nothing outside it.  On failure
 * @p is left as it was, as by realloc().
 */
static inline void *hu_realloc_huge(void *p, size_t n)
{
	size_t old;
	void *q;

	if (!p || n < HU_HUGE_MIN)
		return hu_advise_huge(realloc(p, n), n);
	old = malloc_usable_size(p);
	if (old >= n)
		return realloc(p, n);
	q = hu_malloc_huge(n);
	if (q) {
		memcpy(q, p, old);
		free(p);
	}
	return q;
}

#endif
