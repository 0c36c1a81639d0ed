// SPDX-License-Identifier: LGPL-2.1-or-later
/* The residency-interval builder (residency.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/hyper.h>

#include "util/huge.h"
#include "util/residency.h"

static void *lib_realloc(void *ctx, void *p, size_t n)
{
	(void)ctx;
	return hu_realloc_huge(p, n);
}

static void *zalloc(struct hu_res *r, size_t n, size_t size)
{
	void *p;

	if (n > SIZE_MAX / size)
		return NULL;
	p = r->realloc(r->ctx, NULL, n * size);
	return p ? memset(p, 0, n * size) : NULL;
}

int hu_res_init(struct hu_res *r, uint32_t nr_tensors, uint64_t align,
		void *(*realloc_fn)(void *ctx, void *p, size_t n), void *ctx)
{
	*r = (struct hu_res){
		.nr_tensors = nr_tensors, .align = align ? align : 1,
		.step = UINT32_MAX, .realloc = realloc_fn ? realloc_fn : lib_realloc,
		.ctx = ctx,
	};
	r->open = zalloc(r, nr_tensors ? nr_tensors : 1, sizeof(*r->open));
	if (r->open)
		r->count = zalloc(r, nr_tensors ? nr_tensors : 1,
				  sizeof(*r->count));
	if (!r->count)
		r->err = -ENOMEM;
	return r->err;
}

/*
 * The first room of a builder on libhyper's own allocator, where it
 * takes a huge page or more: a block of whole huge pages on a 2 MiB
 * bound.  From malloc() an array that big is mapped apart on no 2 MiB
 * bound, and the ends outside its aligned inside took a 4 KiB fault a
 * page: 649 at 1M decode operators, 1.3M intervals of 53 MB, where
 * the block takes 28.  The block grows later as any other, through
 * realloc (free() and realloc() take what posix_memalign() gave).
 */
static struct hu_resid *first_room(struct hu_res *r, size_t n)
{
	struct hu_resid *v;
	struct hu_part part = HU_PART(v, n, false);

	if (r->v || r->realloc != lib_realloc || n * sizeof(*v) < HU_HUGE_MIN)
		return r->realloc(r->ctx, r->v, n * sizeof(*v));
	(void)hu_block_huge(&part, 1);
	return v;
}

int hu_res_reserve(struct hu_res *r, uint32_t n)
{
	struct hu_resid *v;

	if (r->err || n <= r->cap)
		return r->err;
	v = first_room(r, n);
	if (!v)
		return r->err = -ENOMEM;
	r->v = v;
	r->cap = n;
	return 0;
}

int hu_res_grow(struct hu_res *r)
{
	/* size_t holds 2^32 intervals' bytes on 64-bit */
	if (r->cap > UINT32_MAX / 2)
		return r->err = -ENOMEM;
	return hu_res_reserve(r, r->cap ? 2 * r->cap : 64);
}

void hu_res_op(struct hu_res *r, uint32_t op, uint32_t t, uint64_t bytes)
{
	if (op == HYPER_OP_PREFETCH)
		hu_res_begin(r, t, bytes);
	else if (op == HYPER_OP_DETACH)
		hu_res_end(r, t);
	hu_res_tick(r);
}

int hu_res_finish(struct hu_res *r, struct hu_resid **vp, uint32_t *np)
{
	int ret = r->err;

	*vp = NULL;
	*np = 0;
	if (!ret) {
		*vp = r->v;
		*np = r->n;
		r->v = NULL;
	}
	hu_res_free(r);
	return ret;
}

void hu_res_free(struct hu_res *r)
{
	free(r->v);
	free(r->open);
	free(r->count);
	r->v = NULL;
	r->open = r->count = NULL;
	r->n = r->cap = 0;
}
