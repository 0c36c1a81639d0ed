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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* x86-64's PMD size; larger ones still take advice on 2 MiB bounds. */
#define HU_HUGE_PAGE	((size_t)2 << 20)
/*
 * Below this a block holds no aligned huge page.  From 2 MiB, not 4: a
 * block of 2 to 4 MiB holds one where its start allows, and at 100k
 * decode operators that took about 1.6k faults of 8.5k away.
 */
#define HU_HUGE_MIN	((size_t)2 << 20)

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

/*
 * One block for a phase's arrays.  Arrays of 0.4 to 4 MiB each, on no
 * 2 MiB bound, cost a 4 KiB fault a page however they are advised (but
 * the aligned inside of the biggest); side by side in one block they
 * span whole huge pages.  The caller lists its parts (HU_PART()):
 * each gets an offset aligned to HU_PART_ALIGN, its pointer set into the
 * block, and those marked zeroed are cleared.  One free() of the block
 * releases them all.
 */
struct hu_part {
	void *pp;		/* the part's pointer, set to its address */
	size_t n, size;		/* elements, and the bytes of one */
	bool zero;		/* cleared */
};

#define HU_PART(ptr, n, zero)	{ &(ptr), (n), sizeof(*(ptr)), (zero) }
#define HU_PART_ALIGN	((size_t)64)
/*
 * A block's end past its last whole huge page is rounded up to one more
 * when it holds this much or more: 64 faults of 4 KiB cost more than the
 * kernel's clearing of a huge page, so at most 2 MiB less this a block
 * is held that no part uses.
 */
#define HU_HUGE_TAIL	((size_t)256 << 10)

/*
 * Sets the pointer at @pp to @p.  That pointer is the caller's int *,
 * struct x *, ... (HU_PART() takes its address): a store through
 * (void **)pp would access it as an object of another type, which
 * strict aliasing lets the compiler reorder against the caller's own
 * reads of it.  memcpy() may copy into any object; every object pointer
 * has void *'s size and representation on the platforms this builds
 * for, so the bytes copied are @p as the caller's type.
 */
static inline void hu_part_set(void *pp, void *p)
{
	memcpy(pp, &p, sizeof(p));
}

/* The pointer at @pp (hu_part_set()'s), read the same way. */
static inline void *hu_part_get(const void *pp)
{
	void *p;

	memcpy(&p, pp, sizeof(p));
	return p;
}

static inline void hu_block_none(const struct hu_part *parts, size_t nparts)
{
	size_t i;

	for (i = 0; i < nparts; i++)
		hu_part_set(parts[i].pp, NULL);
}

/*
 * Frees what a phase's arrays were given, each through @release(@ctx, p)
 * (NULL p for a part never allocated): the block at *@blk where there is
 * one (the parts lie in it), else each part's array of its own.  Then
 * *@blk and every part's pointer are NULL.  The parts' counts and sizes
 * are not read.
 */
static inline void hu_block_release(void **blk, const struct hu_part *parts,
				    size_t nparts,
				    void (*release)(void *ctx, void *p),
				    void *ctx)
{
	size_t i;

	if (*blk)
		release(ctx, *blk);
	else
		for (i = 0; i < nparts; i++)
			release(ctx, hu_part_get(parts[i].pp));
	*blk = NULL;
	hu_block_none(parts, nparts);
}

static inline void hu_free_ctx(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

/* hu_block_release() through free(). */
static inline void hu_block_free(void **blk, const struct hu_part *parts,
				 size_t nparts)
{
	hu_block_release(blk, parts, nparts, hu_free_ctx, NULL);
}

/*
 * The block's bytes for @parts in *@len, each part's offset aligned;
 * false where a size overflows.
 */
static inline bool hu_block_len(const struct hu_part *parts, size_t nparts,
				size_t *len)
{
	size_t i, off = 0;

	for (i = 0; i < nparts; i++) {
		size_t a = parts[i].size;

		if (a && parts[i].n > SIZE_MAX / a)
			return false;
		a *= parts[i].n;
		if (a > SIZE_MAX - (HU_PART_ALIGN - 1) ||
		    off > SIZE_MAX - (HU_PART_ALIGN - 1) - a)
			return false;
		off = ((off + HU_PART_ALIGN - 1) & ~(HU_PART_ALIGN - 1)) + a;
	}
	*len = off;
	return true;
}

/*
 * The bytes hu_block_huge() allocates for a block of @len: from a huge
 * page on, an end of HU_HUGE_TAIL or more past the last whole huge page
 * rounded up to one more; otherwise (or where that would overflow)
 * @len.  The one rounding rule: a caller that can use every byte it is
 * given (libhyper's pool chunks) asks for this many.
 */
static inline size_t hu_block_size(size_t len)
{
	size_t whole = len & ~(HU_HUGE_PAGE - 1);

	if (whole && len - whole >= HU_HUGE_TAIL &&
	    whole <= SIZE_MAX - HU_HUGE_PAGE)
		return whole + HU_HUGE_PAGE;
	return len;
}

/*
 * Lays @parts out in @b (of hu_block_len()'s bytes or more, aligned to
 * 16 bytes at least): each part's pointer set, those marked zeroed
 * cleared.  Returns @b.
 */
static inline void *hu_block_lay(void *b, const struct hu_part *parts,
				 size_t nparts)
{
	size_t i, off = 0;

	for (i = 0; i < nparts; i++) {
		char *p;

		off = (off + HU_PART_ALIGN - 1) & ~(HU_PART_ALIGN - 1);
		p = (char *)b + off;
		hu_part_set(parts[i].pp, p);
		off += parts[i].n * parts[i].size;
		if (parts[i].zero)
			memset(p, 0, parts[i].n * parts[i].size);
	}
	return b;
}

/*
 * A block of a huge page or more starts on a 2 MiB bound and is advised
 * whole (but a short end); a smaller one starts on HU_PART_ALIGN.  It is
 * allocated, not mapped, so that the caller frees it like any other
 * block.  Returns the block, or NULL with every part's pointer NULL.
 */
static inline void *hu_block_huge(const struct hu_part *parts, size_t nparts)
{
	size_t len, whole;
	void *b = NULL;

	if (!hu_block_len(parts, nparts, &len)) {
		hu_block_none(parts, nparts);
		return NULL;
	}
	len = hu_block_size(len);
	whole = len & ~(HU_HUGE_PAGE - 1);
	if (posix_memalign(&b, whole ? HU_HUGE_PAGE : HU_PART_ALIGN,
			   len ? len : 1)) {
		hu_block_none(parts, nparts);
		return NULL;
	}
#ifdef MADV_HUGEPAGE
	if (whole)
		(void)madvise(b, whole, MADV_HUGEPAGE);
#endif
	return hu_block_lay(b, parts, nparts);
}

#endif
