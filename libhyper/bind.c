// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Attaching a schedule to a context and binding its tensors: device
 * memory either explicitly (hyper_bind_device) or from the arena, pool
 * copies either explicitly (hyper_bind_pool) or in a region libhyper
 * allocates at hyper_prepare().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device-cuda.h"
#include "internal.h"

int hyper_attach(struct hyper_ctx *ctx, struct hyper_schedule *sched)
{
	if (!ctx || !sched)
		return -EINVAL;
	if (ctx->sched)
		return hx_err(ctx, -EBUSY, "a schedule is already attached");
	ctx->t = calloc(sched->nr_tensors ?: 1, sizeof(*ctx->t));
	if (!ctx->t)
		return -ENOMEM;
	__atomic_add_fetch(&sched->refs, 1, __ATOMIC_RELAXED);
	ctx->sched = sched;
	ctx->xf_free = UINT32_MAX;
	return 0;
}

static int check_bind(struct hyper_ctx *ctx, unsigned int tensor)
{
	if (!ctx)
		return -EINVAL;
	if (!ctx->sched)
		return hx_err(ctx, -EINVAL, "attach a schedule first");
	if (ctx->prepared)
		return hx_err(ctx, -EBUSY, "bindings are fixed by hyper_prepare()");
	if (tensor >= ctx->sched->nr_tensors)
		return hx_err(ctx, -ERANGE, "no tensor %u (the schedule has %u)",
			      tensor, ctx->sched->nr_tensors);
	return 0;
}

int hyper_bind_device(struct hyper_ctx *ctx, unsigned int tensor, void *addr)
{
	uint64_t bytes;
	uintptr_t a = (uintptr_t)addr;
	int ret;

	ret = check_bind(ctx, tensor);
	if (ret)
		return ret;
	bytes = ctx->sched->tensors[tensor].bytes;
	if (ctx->cu && addr) {
		ret = hx_cu_check_device_ptr(ctx, addr, bytes ?: 1, "the device copy");
		if (ret)
			return ret;
	} else if (!addr || hx_buf_find(ctx, a, bytes) < 0)
		return hx_err(ctx, -EINVAL,
			      "tensor \"%s\" (%llu bytes) does not fit in the registered buffers at %p",
			      ctx->sched->tensors[tensor].id,
			      (unsigned long long)bytes, addr);
	/* libhyper would hand the same bytes to another tensor. */
	if (ctx->has_arena && a < ctx->arena_base + ctx->arena.size &&
	    a + bytes > ctx->arena_base)
		return hx_err(ctx, -EINVAL, "tensor \"%s\" overlaps the arena",
			      ctx->sched->tensors[tensor].id);
	ctx->t[tensor].explicit_dev = true;
	ctx->t[tensor].dev = a;
	return 0;
}

int hyper_bind_pool(struct hyper_ctx *ctx, unsigned int tensor,
		    struct hyper_region *reg, uint64_t offset)
{
	uint64_t bytes, end;
	int ret;

	ret = check_bind(ctx, tensor);
	if (ret)
		return ret;
	if (!reg || !hx_region_mine(ctx, reg))
		return hx_err(ctx, -EINVAL, "not a region of this context");
	bytes = ctx->sched->tensors[tensor].bytes;
	if (__builtin_add_overflow(offset, bytes, &end) || end > reg->size)
		return hx_err(ctx, -EINVAL,
			      "tensor \"%s\" does not fit in the region at offset %llu",
			      ctx->sched->tensors[tensor].id,
			      (unsigned long long)offset);
	ctx->t[tensor].reg = reg;
	ctx->t[tensor].reg_off = offset;
	return 0;
}

/* One region for every pool copy the caller left unbound. */
static int place_pool(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;
	struct hyper_region *reg;
	uint64_t total = 0, off = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < s->nr_tensors; i++)
		if (s->tensors[i].flags & HYPER_TENSOR_NEEDS_POOL && !ctx->t[i].reg)
			total += (s->tensors[i].bytes + HX_POOL_ALIGN - 1) &
				 ~(uint64_t)(HX_POOL_ALIGN - 1);
	if (!total)
		return 0;
	ret = hx_region_new(ctx, total, 0, true, &reg);
	if (ret)
		return ret;
	for (i = 0; i < s->nr_tensors; i++) {
		if (!(s->tensors[i].flags & HYPER_TENSOR_NEEDS_POOL) || ctx->t[i].reg)
			continue;
		ctx->t[i].reg = reg;
		ctx->t[i].reg_off = off;
		off += (s->tensors[i].bytes + HX_POOL_ALIGN - 1) &
		       ~(uint64_t)(HX_POOL_ALIGN - 1);
	}
	return 0;
}

int hyper_prepare(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s;
	uint32_t i;
	int ret;

	if (!ctx)
		return -EINVAL;
	if (!ctx->sched)
		return hx_err(ctx, -EINVAL, "attach a schedule first");
	if (ctx->prepared)
		return hx_err(ctx, -EBUSY, "already prepared");
	s = ctx->sched;
	for (i = 0; i < s->nr_tensors; i++)
		if (s->tensors[i].flags & HYPER_TENSOR_NEEDS_DEVICE &&
		    !ctx->t[i].explicit_dev && !ctx->has_arena)
			return hx_err(ctx, -EINVAL,
				      "tensor \"%s\" needs device memory: bind it or set an arena",
				      s->tensors[i].id);
	/* A schedule that places its tensors itself is run only that way. */
	if ((s->flags & HYPER_SCHED_ARENA) && ctx->has_arena &&
	    ctx->arena.size < s->arena_bytes)
		return hx_err(ctx, -ENOSPC,
			      "the schedule places its tensors in an arena of %llu bytes (arena_bytes), the arena set is %llu: give hyper_set_arena() at least that",
			      (unsigned long long)s->arena_bytes,
			      (unsigned long long)ctx->arena.size);
	/* No store into a shared object bound read-only (object.c). */
	ret = hx_object_check(ctx);
	if (ret)
		return ret;
	ret = place_pool(ctx);
	if (ret)
		return ret;
	/* Callers fill pool copies through hyper_tensor_pool_ptr(). */
	for (struct hyper_region *r = ctx->regions; r; r = r->next) {
		if (r->map)
			continue;
		for (i = 0; i < s->nr_tensors && ctx->t[i].reg != r; i++)
			;
		if (i < s->nr_tensors && (ret = ctx->be->region_map(ctx, r)))
			return ret;
	}
	/* HYPER_BIND_OBJECT_COPY: the private copies from their objects. */
	hx_object_fill(ctx);
	/* CUDA: the pool is pinned for the copy engines. */
	if (ctx->cu && (ret = hx_cu_prepare(ctx)))
		return ret;
	ctx->prepared = true;
	ret = hx_exec_reset(ctx);
	if (ret)
		ctx->prepared = false;
	return ret;
}

void *hyper_tensor_ptr(const struct hyper_ctx *ctx, unsigned int tensor)
{
	if (!ctx || !ctx->prepared || tensor >= ctx->sched->nr_tensors ||
	    !ctx->t[tensor].resident)
		return NULL;
	return (void *)ctx->t[tensor].dev;
}

void *hyper_tensor_pool_ptr(const struct hyper_ctx *ctx, unsigned int tensor)
{
	const struct hx_tensor *t;

	if (!ctx || !ctx->prepared || tensor >= ctx->sched->nr_tensors)
		return NULL;
	t = &ctx->t[tensor];
	if (!t->reg || !t->reg->map)
		return NULL;
	return (char *)t->reg->map + t->reg_off;
}
