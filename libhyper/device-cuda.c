// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The CUDA device: the arena is GPU memory, the pool stays host memory
 * (the shmem memfd, or a hyper.ko region mapped into the process) pinned
 * with cudaHostRegister, and every request is a cudaMemcpyAsync on one of
 * two copy streams of libhyper's own (host to device, device to host),
 * followed by a CUDA event the executor polls for its completion.
 *
 * Ordering with the caller's kernels, which run on its compute stream
 * (hyper_set_compute_stream(), the legacy default stream until set):
 *  - a use waits on the GPU, not on the host: hyper_step_begin() makes the
 *    compute stream wait for the event of each used tensor's prefetch,
 *    and hyper_wait_tensor_stream() does the same for any stream;
 *  - a store is ordered after the kernels that produced its tensor: the
 *    store stream waits for an event recorded on the compute stream after
 *    the step began;
 *  - arena space released by a detach may still be read by queued
 *    kernels: the next prefetch waits for a compute-stream event too.
 *
 * The CUDA runtime is loaded at hyper_open() (dlopen of libcudart.so.13,
 * .so.12, .so, or $HYPER_CUDART), so libhyper neither links nor needs it
 * on a machine without CUDA.  The toolkit's header, when the build found
 * one, checks every prototype below against the real one.
 */
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy-worker.h"
#include "device-cuda.h"
#include "internal.h"
#include "util/clock.h"

#ifdef HX_HAVE_CUDA_H
#include <cuda_runtime_api.h>
#define HX_CU_FN(ret, name, args)	__typeof__(&name) name
#else
/* The few types and values used, as the CUDA 13 headers define them. */
typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
enum cudaMemcpyKind {
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
};
struct cudaPointerAttributes {
	int type;
	int device;
	void *devicePointer;
	void *hostPointer;
	long reserved[8];
};
#define cudaSuccess			0
#define cudaErrorNotReady		600
#define cudaMemoryTypeDevice		2
#define cudaStreamNonBlocking		0x01
#define cudaEventDisableTiming		0x02
#define cudaHostRegisterPortable	0x01
#define HX_CU_FN(ret, name, args)	ret (*name) args
#endif

/* One cudaHostRegister call: below the 512 GiB a single call may pin. */
#define HX_CU_REG_CHUNK		(64ULL << 30)
_Static_assert(HX_CU_REG_CHUNK < (512ULL << 30), "cudaHostRegister limit");
#define HX_CU_Q_H2D		0
#define HX_CU_Q_D2H		1

/* Every runtime function libhyper calls: return type, name, parameters. */
#define HX_CUDART_FNS(X)							\
	X(cudaError_t, cudaGetDeviceCount, (int *))				\
	X(cudaError_t, cudaGetDevice, (int *))					\
	X(cudaError_t, cudaSetDevice, (int))					\
	X(const char *, cudaGetErrorString, (cudaError_t))			\
	X(cudaError_t, cudaMalloc, (void **, size_t))				\
	X(cudaError_t, cudaFree, (void *))					\
	X(cudaError_t, cudaPointerGetAttributes,				\
	  (struct cudaPointerAttributes *, const void *))			\
	X(cudaError_t, cudaHostRegister, (void *, size_t, unsigned int))	\
	X(cudaError_t, cudaHostUnregister, (void *))				\
	X(cudaError_t, cudaStreamCreateWithFlags, (cudaStream_t *, unsigned int)) \
	X(cudaError_t, cudaStreamDestroy, (cudaStream_t))			\
	X(cudaError_t, cudaStreamWaitEvent, (cudaStream_t, cudaEvent_t, unsigned int)) \
	X(cudaError_t, cudaEventCreateWithFlags, (cudaEvent_t *, unsigned int)) \
	X(cudaError_t, cudaEventDestroy, (cudaEvent_t))			\
	X(cudaError_t, cudaEventRecord, (cudaEvent_t, cudaStream_t))		\
	X(cudaError_t, cudaEventQuery, (cudaEvent_t))				\
	X(cudaError_t, cudaEventSynchronize, (cudaEvent_t))			\
	X(cudaError_t, cudaMemcpyAsync, (void *, const void *, size_t,		\
					 enum cudaMemcpyKind, cudaStream_t))

struct hx_cudart {
	void *dl;
#define HX_CU_MEMBER(ret, name, args)	HX_CU_FN(ret, name, args);
	HX_CUDART_FNS(HX_CU_MEMBER)
#undef HX_CU_MEMBER
};

/* One request on a copy stream: its completion event, in stream order. */
struct hx_cu_req {
	cudaEvent_t ev;
	uint64_t ud;
	uint64_t issue_ns;
	int32_t res;		/* its length, or -errno if it never went out */
};

struct hx_cu_q {
	cudaStream_t s;
	struct hx_cu_req *r;
	uint32_t head, tail, mask;
	uint64_t fence_seen;	/* fence_epoch this stream last waited for */
};

/* A pinned host range: the start of each cudaHostRegister call. */
struct hx_cu_pin {
	struct hx_cu_pin *next;
	const struct hyper_region *reg;
	char *base;
	uint64_t len;
};

struct hx_cu {
	struct hx_cudart rt;
	int dev;
	int prev_dev;		/* the caller's current device, restored */
	struct hx_cu_q q[2];
	uint32_t depth;
	cudaStream_t compute;
	cudaEvent_t fence;	/* recorded on the compute stream */
	uint64_t epoch;		/* steps begun (kernels may follow) */
	uint64_t fence_epoch;	/* epoch the fence was last recorded in */
	bool released;		/* arena space freed since the last prefetch */
	cudaEvent_t *tev;	/* per tensor: [2 * t + q], last request's event */
	bool *tev_set;
	uint32_t nr_tev;
	void *own_arena;	/* cudaMalloc'd by hyper_set_arena(NULL) */
	uint64_t pin_chunk;	/* HX_CU_REG_CHUNK; smaller in a test */
	struct hx_cu_pin *pins;
};

static const char *cu_str(const struct hx_cu *cu, cudaError_t e)
{
	const char *s = cu->rt.cudaGetErrorString(e);

	return s ? s : "unknown CUDA error";
}

static int cu_err(struct hyper_ctx *ctx, int err, const char *call, cudaError_t e)
{
	return hx_err(ctx, err, "%s: CUDA error %d: %s", call, (int)e,
		      cu_str(ctx->cu, e));
}

/*
 * dlsym() of @name into the function pointer at @fp, or false where the
 * library lacks it.  Copied, not stored through (void **)@fp: that would
 * access the pointer as an object of another type, which strict aliasing
 * lets the compiler reorder against the member's own reads (util/huge.h's
 * hu_part_set()).  POSIX gives a function pointer void *'s
 * representation; the caller checks the size.
 */
static bool cu_sym(void *dl, const char *name, void *fp)
{
	void *sym = dlsym(dl, name);

	if (!sym)
		return false;
	memcpy(fp, &sym, sizeof(sym));
	return true;
}

/* dlopen the runtime: $HYPER_CUDART if set (a test double), else libcudart. */
static int load(struct hyper_ctx *ctx, struct hx_cudart *rt)
{
	static const char *const names[] = {
		"libcudart.so.13", "libcudart.so.12", "libcudart.so",
	};
	const char *env = secure_getenv("HYPER_CUDART");
	const char *missing = NULL;
	char tried[256] = "";
	size_t i;

	if (env && *env) {
		rt->dl = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!rt->dl)
			return hx_err(ctx, -ENODEV,
				      "no CUDA runtime library found: HYPER_CUDART=%s: %s",
				      env, dlerror());
	} else {
		for (i = 0; i < sizeof(names) / sizeof(names[0]) && !rt->dl; i++) {
			rt->dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
			if (!rt->dl)
				snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried),
					 "%s%s", i ? ", " : "", names[i]);
		}
		if (!rt->dl)
			return hx_err(ctx, -ENODEV,
				      "no CUDA runtime library found (tried %s): install the CUDA runtime or add its directory to LD_LIBRARY_PATH, or set HYPER_CUDART to its path",
				      tried);
	}
	/* Each function, or the first one missing. */
#define HX_CU_SYM(ret, name, args)					\
	static_assert(sizeof(rt->name) == sizeof(void *), #name);	\
	if (!missing && !cu_sym(rt->dl, #name, &rt->name))		\
		missing = #name;
	HX_CUDART_FNS(HX_CU_SYM)
#undef HX_CU_SYM
	if (missing) {
		hx_err(ctx, -ENODEV,
		       "the CUDA runtime library found lacks %s: it is not a CUDA runtime of version 12 or later",
		       missing);
		dlclose(rt->dl);
		rt->dl = NULL;
		return -ENODEV;
	}
	return 0;
}

/* Run on the context's device; the caller's current device is restored. */
static int enter(struct hyper_ctx *ctx)
{
	struct hx_cu *cu = ctx->cu;
	cudaError_t e;

	e = cu->rt.cudaGetDevice(&cu->prev_dev);
	if (e == cudaSuccess && cu->prev_dev != cu->dev)
		e = cu->rt.cudaSetDevice(cu->dev);
	if (e != cudaSuccess)
		return cu_err(ctx, -EIO, "cudaSetDevice", e);
	return 0;
}

static void leave(struct hyper_ctx *ctx)
{
	struct hx_cu *cu = ctx->cu;

	if (cu->prev_dev != cu->dev)
		cu->rt.cudaSetDevice(cu->prev_dev);
}

static int q_init(struct hyper_ctx *ctx, struct hx_cu_q *q, uint32_t depth)
{
	struct hx_cu *cu = ctx->cu;
	cudaError_t e;

	q->mask = depth - 1;
	q->r = calloc(depth, sizeof(*q->r));
	if (!q->r)
		return hx_err(ctx, -ENOMEM, "out of memory");
	e = cu->rt.cudaStreamCreateWithFlags(&q->s, cudaStreamNonBlocking);
	if (e != cudaSuccess)
		return cu_err(ctx, -EIO, "cudaStreamCreateWithFlags", e);
	for (uint32_t i = 0; i < depth; i++) {
		e = cu->rt.cudaEventCreateWithFlags(&q->r[i].ev, cudaEventDisableTiming);
		if (e != cudaSuccess)
			return cu_err(ctx, -EIO, "cudaEventCreateWithFlags", e);
	}
	return 0;
}

static void q_fini(struct hx_cu *cu, struct hx_cu_q *q)
{
	if (!q->r)
		return;
	for (uint32_t i = 0; i <= q->mask; i++)
		if (q->r[i].ev)
			cu->rt.cudaEventDestroy(q->r[i].ev);
	if (q->s)
		cu->rt.cudaStreamDestroy(q->s);
	free(q->r);
	q->r = NULL;
}

int hx_cu_open(struct hyper_ctx *ctx, const struct hyper_open_opts *o)
{
	struct hx_cu *cu;
	uint32_t depth = 1;
	cudaError_t e;
	int n = 0, ret;

	cu = calloc(1, sizeof(*cu));
	if (!cu)
		return hx_err(ctx, -ENOMEM, "out of memory");
	ctx->cu = cu;
	cu->dev = o->device_ordinal;
	cu->pin_chunk = HX_CU_REG_CHUNK;
	ret = load(ctx, &cu->rt);
	if (ret)
		return ret;
	e = cu->rt.cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n <= 0)
		return hx_err(ctx, -ENODEV,
			      "no CUDA device: the CUDA runtime is there, but cudaGetDeviceCount says %s",
			      e != cudaSuccess ? cu_str(cu, e) : "0 devices");
	if (o->device_ordinal < 0 || o->device_ordinal >= n)
		return hx_err(ctx, -ENODEV,
			      "no CUDA device %d: this machine has %d (ordinals 0 to %d)",
			      o->device_ordinal, n, n - 1);
	ret = enter(ctx);
	if (ret)
		return ret;
	/* Never more requests out than the executor's limit (its CQ size). */
	while (depth < ctx->cq_entries)
		depth <<= 1;
	cu->depth = depth;
	ret = q_init(ctx, &cu->q[HX_CU_Q_H2D], depth);
	if (!ret)
		ret = q_init(ctx, &cu->q[HX_CU_Q_D2H], depth);
	if (!ret && (e = cu->rt.cudaEventCreateWithFlags(&cu->fence,
							  cudaEventDisableTiming)))
		ret = cu_err(ctx, -EIO, "cudaEventCreateWithFlags", e);
	leave(ctx);
	return ret;
}

static void unpin(struct hx_cu *cu, const struct hyper_region *reg)
{
	struct hx_cu_pin **pp = &cu->pins, *p;

	while ((p = *pp)) {
		if (reg && p->reg != reg) {
			pp = &p->next;
			continue;
		}
		cu->rt.cudaHostUnregister(p->base);
		*pp = p->next;
		free(p);
	}
}

void hx_cu_unregister(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	if (ctx->cu && ctx->cu->rt.dl)
		unpin(ctx->cu, reg);
}

void hx_cu_close(struct hyper_ctx *ctx)
{
	struct hx_cu *cu = ctx->cu;

	if (!cu)
		return;
	if (cu->rt.dl) {
		/* Destroying a stream does not wait for it; freeing does. */
		for (int i = 0; i < 2; i++)
			q_fini(cu, &cu->q[i]);
		for (uint32_t i = 0; i < 2 * cu->nr_tev; i++)
			if (cu->tev[i])
				cu->rt.cudaEventDestroy(cu->tev[i]);
		if (cu->fence)
			cu->rt.cudaEventDestroy(cu->fence);
		unpin(cu, NULL);
		if (cu->own_arena)
			cu->rt.cudaFree(cu->own_arena);
		dlclose(cu->rt.dl);
	}
	free(cu->tev);
	free(cu->tev_set);
	free(cu);
	ctx->cu = NULL;
}

int hx_cu_check_device_ptr(struct hyper_ctx *ctx, const void *addr,
			   uint64_t bytes, const char *what)
{
	struct hx_cu *cu = ctx->cu;
	struct cudaPointerAttributes a;
	cudaError_t e;

	memset(&a, 0, sizeof(a));
	e = cu->rt.cudaPointerGetAttributes(&a, addr);
	if (e == cudaSuccess && a.type == cudaMemoryTypeDevice)
		e = cu->rt.cudaPointerGetAttributes(&a, (const char *)addr + bytes - 1);
	if (e != cudaSuccess || a.type != cudaMemoryTypeDevice || a.device != cu->dev)
		return hx_err(ctx, -EINVAL,
			      "%s at %p (%llu bytes) is not memory of CUDA device %d: give memory from cudaMalloc or the framework's allocator on that device",
			      what, addr, (unsigned long long)bytes, cu->dev);
	return 0;
}

int hx_cu_set_arena(struct hyper_ctx *ctx, void **basep, uint64_t bytes)
{
	struct hx_cu *cu = ctx->cu;
	void *base = *basep;
	cudaError_t e;
	int ret;

	/* A set_arena that failed after this call left these behind. */
	free(ctx->bufs);
	ctx->bufs = NULL;
	ctx->nr_bufs = 0;
	if (cu->own_arena) {
		cu->rt.cudaFree(cu->own_arena);
		cu->own_arena = NULL;
	}
	if (!bytes)
		return hx_err(ctx, -EINVAL, "the arena is empty");
	if (base) {
		ret = hx_cu_check_device_ptr(ctx, base, bytes, "the arena");
		if (ret)
			return ret;
	} else {
		ret = enter(ctx);
		if (ret)
			return ret;
		e = cu->rt.cudaMalloc(&base, bytes);
		leave(ctx);
		if (e != cudaSuccess)
			return hx_err(ctx, -ENOMEM,
				      "cudaMalloc of a %llu-byte arena on CUDA device %d: %s",
				      (unsigned long long)bytes, cu->dev, cu_str(cu, e));
		cu->own_arena = base;
	}
	/* The arena is the one span transfers may touch (hx_buf_find()). */
	ctx->bufs = calloc(1, sizeof(*ctx->bufs));
	if (!ctx->bufs) {
		ret = -ENOMEM;
		goto fail;
	}
	ctx->bufs[0].start = (uintptr_t)base;
	ctx->bufs[0].end = (uintptr_t)base + bytes;
	ctx->nr_bufs = 1;
	*basep = base;
	return 0;
fail:
	if (cu->own_arena) {
		cu->rt.cudaFree(cu->own_arena);
		cu->own_arena = NULL;
	}
	return ret;
}

/* Pin [base, base + len) of @reg in calls of at most HX_CU_REG_CHUNK. */
static int pin(struct hyper_ctx *ctx, const struct hyper_region *reg,
	       char *base, uint64_t len)
{
	struct hx_cu *cu = ctx->cu;
	struct hx_cu_pin *p;
	cudaError_t e;

	for (uint64_t off = 0; off < len; off += cu->pin_chunk) {
		uint64_t n = len - off < cu->pin_chunk ? len - off : cu->pin_chunk;

		p = calloc(1, sizeof(*p));
		if (!p)
			return hx_err(ctx, -ENOMEM, "out of memory");
		e = cu->rt.cudaHostRegister(base + off, n, cudaHostRegisterPortable);
		if (e != cudaSuccess) {
			free(p);
			return hx_err(ctx, -EOPNOTSUPP,
				      "cudaHostRegister of %llu bytes of the %s pool at %p: %s: the CUDA device copies only from memory it can pin; a hyper.ko region mapped as PFNs cannot be pinned: use the shmem backend with HYPER_DEVICE_CUDA",
				      (unsigned long long)n, ctx->be->name, base + off,
				      cu_str(cu, e));
		}
		p->reg = reg;
		p->base = base + off;
		p->len = n;
		p->next = cu->pins;
		cu->pins = p;
	}
	return 0;
}

static bool pinned(const struct hx_cu *cu, const struct hyper_region *reg)
{
	for (const struct hx_cu_pin *p = cu->pins; p; p = p->next)
		if (p->reg == reg)
			return true;
	return false;
}

int hx_cu_prepare(struct hyper_ctx *ctx)
{
	struct hx_cu *cu = ctx->cu;
	uint32_t n = ctx->sched->nr_tensors;
	cudaError_t e;
	int ret;

	ret = enter(ctx);
	if (ret)
		return ret;
	for (struct hyper_region *r = ctx->regions; r; r = r->next) {
		/* Shared objects are never a CUDA context's pool (object.c). */
		if (!r->map || r->object || pinned(cu, r))
			continue;
		ret = pin(ctx, r, r->map, r->size);
		if (ret)
			goto out;
	}
	cu->tev = calloc(2 * (size_t)(n ?: 1), sizeof(*cu->tev));
	cu->tev_set = calloc(2 * (size_t)(n ?: 1), sizeof(*cu->tev_set));
	if (!cu->tev || !cu->tev_set) {
		ret = hx_err(ctx, -ENOMEM, "out of memory");
		goto out;
	}
	cu->nr_tev = n;
	for (uint32_t i = 0; i < 2 * n; i++) {
		e = cu->rt.cudaEventCreateWithFlags(&cu->tev[i], cudaEventDisableTiming);
		if (e != cudaSuccess) {
			ret = cu_err(ctx, -EIO, "cudaEventCreateWithFlags", e);
			goto out;
		}
	}
out:
	leave(ctx);
	return ret;
}

/* The fence covers every kernel queued on the compute stream so far. */
static int fence(struct hyper_ctx *ctx, struct hx_cu_q *q)
{
	struct hx_cu *cu = ctx->cu;
	cudaError_t e;

	if (cu->fence_epoch != cu->epoch) {
		e = cu->rt.cudaEventRecord(cu->fence, cu->compute);
		if (e != cudaSuccess)
			return cu_err(ctx, -EIO, "cudaEventRecord on the compute stream", e);
		cu->fence_epoch = cu->epoch;
	}
	if (q->fence_seen != cu->fence_epoch) {
		e = cu->rt.cudaStreamWaitEvent(q->s, cu->fence, 0);
		if (e != cudaSuccess)
			return cu_err(ctx, -EIO, "cudaStreamWaitEvent on the compute fence", e);
		q->fence_seen = cu->fence_epoch;
	}
	return 0;
}

void hx_cu_queue(struct hyper_ctx *ctx, int dir, uint32_t tensor, void *dev,
		 void *host, uint64_t len, uint64_t ud)
{
	struct hx_cu *cu = ctx->cu;
	int qi = dir == HX_DIR_PREFETCH ? HX_CU_Q_H2D : HX_CU_Q_D2H;
	struct hx_cu_q *q = &cu->q[qi];
	struct hx_cu_req *r = &q->r[q->tail & q->mask];
	cudaError_t e = cudaSuccess;
	const char *call = "cudaMemcpyAsync";
	int ret = 0;

	r->ud = ud;
	r->issue_ns = hu_now_ns();
	r->res = (int32_t)len;
	q->tail++;
	/* Stores after the kernels that wrote; prefetches after freed space's readers. */
	if (qi == HX_CU_Q_D2H || cu->released) {
		ret = fence(ctx, q);
		if (!ret && qi == HX_CU_Q_H2D)
			cu->released = false;
	}
	if (!ret) {
		e = qi == HX_CU_Q_H2D ?
		    cu->rt.cudaMemcpyAsync(dev, host, len, cudaMemcpyHostToDevice, q->s) :
		    cu->rt.cudaMemcpyAsync(host, dev, len, cudaMemcpyDeviceToHost, q->s);
		if (e == cudaSuccess) {
			call = "cudaEventRecord";
			e = cu->rt.cudaEventRecord(r->ev, q->s);
		}
		if (e != cudaSuccess)
			ret = cu_err(ctx, -EIO, call, e);
	}
	if (ret) {
		/* Completes with the error when reaped; the message says why. */
		r->res = ret;
		if (!ctx->async_err) {
			ctx->async_err = ret;
			snprintf(ctx->async_msg, sizeof(ctx->async_msg),
				 "%s of tensor \"%.64s\" failed: %.400s",
				 qi == HX_CU_Q_H2D ? "prefetch" : "store",
				 ctx->sched->tensors[tensor].id, ctx->err);
		}
	}
}

void hx_cu_mark(struct hyper_ctx *ctx, int dir, uint32_t tensor)
{
	struct hx_cu *cu = ctx->cu;
	int qi = dir == HX_DIR_PREFETCH ? HX_CU_Q_H2D : HX_CU_Q_D2H;
	uint32_t i = 2 * tensor + qi;

	if (cu->rt.cudaEventRecord(cu->tev[i], cu->q[qi].s) == cudaSuccess)
		cu->tev_set[i] = true;
}

/* 1: done (res set), 0: not yet. */
static int req_done(struct hyper_ctx *ctx, struct hx_cu_req *r)
{
	struct hx_cu *cu = ctx->cu;
	cudaError_t e;

	if (r->res < 0)
		return 1;
	e = cu->rt.cudaEventQuery(r->ev);
	if (e == cudaErrorNotReady)
		return 0;
	if (e != cudaSuccess) {
		r->res = cu_err(ctx, -EIO, "a copy on a libhyper stream", e);
		if (!ctx->async_err) {
			ctx->async_err = r->res;
			memcpy(ctx->async_msg, ctx->err, sizeof(ctx->async_msg));
		}
	}
	return 1;
}

bool hx_cu_ready(struct hyper_ctx *ctx)
{
	for (int i = 0; i < 2; i++) {
		struct hx_cu_q *q = &ctx->cu->q[i];

		if (q->head != q->tail && req_done(ctx, &q->r[q->head & q->mask]))
			return true;
	}
	return false;
}

/* Up to @max completed requests, in each stream's order. */
unsigned int hx_cu_reap(struct hyper_ctx *ctx, struct hx_cw_done *out,
			unsigned int max)
{
	uint64_t now = 0;
	unsigned int n = 0;

	for (int i = 0; i < 2; i++) {
		struct hx_cu_q *q = &ctx->cu->q[i];

		while (q->head != q->tail && n < max) {
			struct hx_cu_req *r = &q->r[q->head & q->mask];

			if (!req_done(ctx, r))
				break;
			q->head++;
			out[n].ud = r->ud;
			out[n].res = r->res;
			out[n].start_ns = 0;
			out[n].done_ns = now ? now : (now = hu_now_ns());
			n++;
		}
	}
	return n;
}

/* Block on the oldest request in flight. */
int hx_cu_wait(struct hyper_ctx *ctx)
{
	struct hx_cu *cu = ctx->cu;
	struct hx_cu_q *q = NULL;
	struct hx_cu_req *r;
	cudaError_t e;

	for (int i = 0; i < 2; i++) {
		struct hx_cu_q *c = &cu->q[i];

		if (c->head != c->tail &&
		    (!q || c->r[c->head & c->mask].issue_ns <
			   q->r[q->head & q->mask].issue_ns))
			q = c;
	}
	if (!q)
		return 0;
	r = &q->r[q->head & q->mask];
	if (r->res < 0)
		return 0;
	e = cu->rt.cudaEventSynchronize(r->ev);
	/* An error is the request's own: reaping reports it. */
	(void)e;
	return 0;
}

void hx_cu_released(struct hyper_ctx *ctx)
{
	ctx->cu->released = true;
}

void hx_cu_kernels_follow(struct hyper_ctx *ctx)
{
	ctx->cu->epoch++;
}

int hx_cu_stream_wait(struct hyper_ctx *ctx, uint32_t tensor, void *stream,
		      bool stores)
{
	struct hx_cu *cu = ctx->cu;
	cudaError_t e;

	for (int qi = 0; qi < (stores ? 2 : 1); qi++) {
		uint32_t i = 2 * tensor + qi;

		if (!cu->tev_set[i])
			continue;
		e = cu->rt.cudaStreamWaitEvent((cudaStream_t)stream, cu->tev[i], 0);
		if (e != cudaSuccess)
			return cu_err(ctx, -EIO, "cudaStreamWaitEvent", e);
	}
	return 0;
}

void *hx_cu_compute_stream(const struct hyper_ctx *ctx)
{
	return ctx->cu->compute;
}

void hx_cu_test_pin_chunk(struct hyper_ctx *ctx, uint64_t bytes)
{
	ctx->cu->pin_chunk = bytes;
}

void *hx_cu_store_stream(const struct hyper_ctx *ctx)
{
	return ctx->cu->q[HX_CU_Q_D2H].s;
}

int hyper_set_compute_stream(struct hyper_ctx *ctx, void *stream)
{
	if (!ctx)
		return -EINVAL;
	if (!ctx->cu)
		return hx_err(ctx, -EOPNOTSUPP,
			      "a compute stream is for a CUDA context (hyper_open_opts.device_kind = HYPER_DEVICE_CUDA)");
	if (ctx->in_step)
		return hx_err(ctx, -EBUSY,
			      "set the compute stream between steps, not inside step %u",
			      ctx->cur);
	ctx->cu->compute = (cudaStream_t)stream;
	/* Kernels on the new stream are not behind the old fence. */
	ctx->cu->epoch++;
	return 0;
}
