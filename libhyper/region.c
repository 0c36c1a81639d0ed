// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Pool regions: what the caller (or libhyper itself, for pool copies the
 * caller did not bind) holds in the pool.  The backend does the real work;
 * this file keeps the per-context list so that close frees everything.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device-cuda.h"
#include "internal.h"

/* @make gives @reg (calloc'd, filled in) its memory; the context keeps it. */
int hx_region_add(struct hyper_ctx *ctx, struct hyper_region *reg,
		  int (*make)(struct hyper_ctx *ctx, struct hyper_region *reg),
		  struct hyper_region **regp)
{
	int ret = make(ctx, reg);

	if (ret) {
		free(reg);
		return ret;
	}
	reg->next = ctx->regions;
	ctx->regions = reg;
	*regp = reg;
	return 0;
}

int hx_region_new(struct hyper_ctx *ctx, uint64_t bytes, unsigned int flags,
		  bool internal, struct hyper_region **regp)
{
	struct hyper_region *reg;

	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->size = bytes;
	reg->flags = flags;
	reg->internal = internal;
	reg->ofd = -1;
	return hx_region_add(ctx, reg, ctx->be->region_alloc, regp);
}

/* @reg is one of the caller's regions of @ctx (not libhyper's own). */
bool hx_region_mine(const struct hyper_ctx *ctx, const struct hyper_region *reg)
{
	for (const struct hyper_region *r = ctx->regions; r; r = r->next)
		if (r == reg)
			return !r->internal;
	return false;
}

int hyper_region_alloc(struct hyper_ctx *ctx, uint64_t bytes, unsigned int flags,
		       struct hyper_region **regp)
{
	if (!ctx || !regp)
		return -EINVAL;
	*regp = NULL;
	if (!bytes)
		return hx_err(ctx, -EINVAL, "region size must not be zero");
	if (flags & ~HYPER_REGION_HUGE_ALIGN)
		return hx_err(ctx, -EINVAL, "unknown region flags 0x%x", flags);
	return hx_region_new(ctx, bytes, flags, false, regp);
}

static bool region_in_use(const struct hyper_ctx *ctx,
			  const struct hyper_region *reg)
{
	if (!ctx->t)
		return false;
	for (uint32_t i = 0; i < ctx->sched->nr_tensors; i++)
		if (ctx->t[i].reg == reg || ctx->t[i].copy_from == reg)
			return true;
	return false;
}

int hyper_region_free(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_region **pp;

	if (!ctx || !reg)
		return -EINVAL;
	for (pp = &ctx->regions; *pp && *pp != reg; pp = &(*pp)->next)
		;
	if (!*pp || reg->internal)
		return hx_err(ctx, -ENOENT, "not a region of this context");
	if (region_in_use(ctx, reg))
		return hx_err(ctx, -EBUSY, "region is bound to schedule tensors");
	*pp = reg->next;
	hx_cu_unregister(ctx, reg);
	ctx->be->region_free(ctx, reg);
	free(reg);
	return 0;
}

int hyper_region_map(struct hyper_ctx *ctx, struct hyper_region *reg,
		     void **addrp)
{
	int ret;

	if (!ctx || !reg || !addrp)
		return -EINVAL;
	if (!reg->map) {
		ret = ctx->be->region_map(ctx, reg);
		if (ret)
			return ret;
	}
	*addrp = reg->map;
	return 0;
}

uint64_t hyper_region_size(const struct hyper_region *reg)
{
	return reg ? reg->size : 0;
}

void hx_regions_free_all(struct hyper_ctx *ctx)
{
	struct hyper_region *reg;

	while ((reg = ctx->regions)) {
		ctx->regions = reg->next;
		ctx->be->region_free(ctx, reg);
		free(reg);
	}
}
