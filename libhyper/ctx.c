// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Contexts: backend choice, the io_uring ring, errors, and the caller's
 * registered device memory.  All state lives in struct hyper_ctx; the
 * library has no global mutable state, so contexts are independent.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "device-cuda.h"
#include "internal.h"

/* Fields come out of reserved[]: the structure keeps its size. */
_Static_assert(sizeof(struct hyper_open_opts) == 88, "hyper_open_opts ABI");

int hx_err(struct hyper_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *hyper_strerror(int err)
{
	const char *s;

	if (err < 0)
		err = -err;
	/* The codes libhyper gives a meaning of its own. */
	switch (err) {
	case 0:
		return "success";
	case EBADMSG:
		return "invalid schedule";
	case EPROTONOSUPPORT:
		return "unsupported schedule version";
	case ENODATA:
		return "no more steps in the schedule";
	}
	/* strerror() may write a static buffer; this never does. */
	s = strerrordesc_np(err);
	return s ? s : "unknown error";
}

const char *hyper_last_error(const struct hyper_ctx *ctx)
{
	return ctx ? ctx->err : "no context";
}

int hyper_backend(const struct hyper_ctx *ctx)
{
	return ctx ? ctx->be->id : -EINVAL;
}

/*
 * A ring set up with @p, by hyper_open() or again by a change of copy
 * engine: note it, and register the pool's file for IOSQE_FIXED_FILE.
 */
int hx_ring_ready(struct hyper_ctx *ctx, const struct io_uring_params *p)
{
	int ret;

	ctx->ring_ok = true;
	ctx->cq_entries = p->cq_entries;
	ret = io_uring_register_files(&ctx->ring, &ctx->fd, 1);
	if (ret)
		return hx_err(ctx, ret, "io_uring file registration: %s",
			      strerror(-ret));
	return 0;
}

static int open_ring(struct hyper_ctx *ctx, unsigned int qd)
{
	struct io_uring_params p;
	int ret;

	/*
	 * COOP_TASKRUN spares the executor an interrupt per completion; it
	 * needs 5.19, so fall back to plain flags on older kernels.
	 */
	memset(&p, 0, sizeof(p));
	p.flags = ctx->be->ring_flags | IORING_SETUP_COOP_TASKRUN;
	ret = io_uring_queue_init_params(qd, &ctx->ring, &p);
	if (ret == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = ctx->be->ring_flags;
		ret = io_uring_queue_init_params(qd, &ctx->ring, &p);
	}
	if (ret)
		return hx_err(ctx, ret, "io_uring setup (%u entries): %s", qd,
			      strerror(-ret));
	return hx_ring_ready(ctx, &p);
}

int hyper_open(struct hyper_ctx **ctxp, const struct hyper_open_opts *opts)
{
	static const struct hyper_open_opts defaults;
	const struct hyper_open_opts *o = opts ? opts : &defaults;
	struct hyper_ctx *ctx;
	const char *dev;
	int ret;

	if (!ctxp)
		return -EINVAL;
	*ctxp = NULL;
	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return -EINVAL;
	if (o->flags & ~HYPER_OPEN_FLAGS_MASK || o->backend > HYPER_BACKEND_SHMEM ||
	    o->chunk_bytes > HX_MAX_CHUNK || o->device_kind > HYPER_DEVICE_CUDA ||
	    (o->device_kind == HYPER_DEVICE_HOST && o->device_ordinal))
		return -EINVAL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->fd = -1;
	ctx->objdir_fd = -1;
	ctx->flags = o->flags;
	ctx->numa_node = -1;
	ctx->chunk = o->chunk_bytes ? o->chunk_bytes :
		     o->device_kind == HYPER_DEVICE_CUDA ? HX_MAX_CHUNK :
		     HX_DEFAULT_CHUNK;

	switch (o->backend) {
	case HYPER_BACKEND_KMOD:
		ctx->be = &hx_backend_kmod;
		break;
	case HYPER_BACKEND_SHMEM:
		ctx->be = &hx_backend_shmem;
		break;
	default:
		/*
		 * The documented rule: the module when its device exists; for
		 * a CUDA device shmem, whose pool CUDA can pin.
		 */
		dev = o->device ? o->device : HX_DEFAULT_DEVICE;
		ctx->be = o->device_kind == HYPER_DEVICE_CUDA || access(dev, F_OK) ?
			  &hx_backend_shmem : &hx_backend_kmod;
		break;
	}
	ret = ctx->be->open(ctx, o);
	if (!ret)
		ret = open_ring(ctx, o->queue_depth ? o->queue_depth : HX_DEFAULT_QD);
	if (!ret && o->device_kind == HYPER_DEVICE_CUDA)
		ret = hx_cu_open(ctx, o);
	if (ret) {
		/*
		 * The caller gets no context, so there is no last error to
		 * read.  The exception: a CUDA runtime or device that is not
		 * there (-ENODEV) comes back with a context for
		 * hyper_last_error() and hyper_close() only (hyper_open(3)).
		 */
		if (ret == -ENODEV && ctx->cu) {
			hx_cu_close(ctx);
			*ctxp = ctx;
			return ret;
		}
		hyper_close(ctx);
		return ret;
	}
	*ctxp = ctx;
	return 0;
}

void hyper_close(struct hyper_ctx *ctx)
{
	if (!ctx)
		return;
	hx_exec_fini(ctx);
	if (ctx->ring_ok)
		io_uring_queue_exit(&ctx->ring);
	/* Unpins the pool and frees the arena it allocated. */
	hx_cu_close(ctx);
	hx_regions_free_all(ctx);
	if (ctx->be)
		ctx->be->close(ctx);
	hx_range_fini(&ctx->arena);
	free(ctx->bufs);
	free(ctx);
}

/* Index of the registered buffer holding [addr, addr + len), or -1. */
int hx_buf_find(const struct hyper_ctx *ctx, uintptr_t addr, uint64_t len)
{
	uint32_t lo = 0, hi = ctx->nr_bufs;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (ctx->bufs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ctx->nr_bufs || ctx->bufs[lo].start > addr)
		return -1;
	/* Contiguous registered buffers count as one span. */
	for (uint32_t i = lo; i < ctx->nr_bufs; i++) {
		if (addr + len <= ctx->bufs[i].end)
			return (int)lo;
		if (i + 1 == ctx->nr_bufs || ctx->bufs[i + 1].start != ctx->bufs[i].end)
			break;
	}
	return -1;
}

static int cmp_buf(const void *a, const void *b)
{
	const struct hx_buf *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * io_uring refused to pin the buffers with -ENOMEM: when RLIMIT_MEMLOCK
 * is what stopped it (io_uring charges pinned pages to it unless the
 * caller has CAP_IPC_LOCK), say so with the numbers and the fix, and
 * return true.  Debian's default limit is 8 MiB.
 */
static bool memlock_short(struct hyper_ctx *ctx, const struct iovec *kv,
			  uint32_t n)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), need = 0;
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	/* Whole pages are pinned. */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = (uintptr_t)kv[i].iov_base;

		need += (a + kv[i].iov_len + page - 1) / page * page - a / page * page;
	}
	if (need <= rl.rlim_cur)
		/* Other locked memory of this user may still be the cause. */
		hx_err(ctx, -ENOMEM, "io_uring_register_buffers: %s: pinning %llu bytes of buffers counts against RLIMIT_MEMLOCK (%llu bytes), with everything else this user has locked; raise it with ulimit -l or a memlock line in /etc/security/limits.conf (see libhyper(7))",
		       strerror(ENOMEM), (unsigned long long)need,
		       (unsigned long long)rl.rlim_cur);
	else
		hx_err(ctx, -ENOMEM, "io_uring_register_buffers: %s: pinning %llu bytes of buffers needs RLIMIT_MEMLOCK of at least that, and it is %llu bytes; raise it with ulimit -l %llu (KiB) or ulimit -l unlimited in the shell that starts the program, or a memlock line in /etc/security/limits.conf (see libhyper(7))",
		       strerror(ENOMEM), (unsigned long long)need,
		       (unsigned long long)rl.rlim_cur,
		       (unsigned long long)(need + 1023) / 1024);
	return true;
}

int hyper_register_buffers(struct hyper_ctx *ctx, const struct iovec *iov,
			   unsigned int nr)
{
	struct iovec *kv;
	uint32_t n = 0, i;
	int ret;

	if (!ctx)
		return -EINVAL;
	if (ctx->cu)
		return hx_err(ctx, -EINVAL,
			      "a CUDA context's device memory is its arena: give it to hyper_set_arena(), there is nothing to register");
	if (ctx->bufs)
		return hx_err(ctx, -EBUSY, "buffers are already registered");
	if (!iov || !nr)
		return hx_err(ctx, -EINVAL, "no buffers to register");
	for (i = 0; i < nr; i++) {
		if (!iov[i].iov_base || !iov[i].iov_len ||
		    (uintptr_t)iov[i].iov_base + iov[i].iov_len <
		    (uintptr_t)iov[i].iov_base)
			return hx_err(ctx, -EINVAL, "buffer %u is empty or wraps", i);
		n += (iov[i].iov_len + HX_MAX_BUF - 1) / HX_MAX_BUF;
	}
	if (n > UINT16_MAX)
		return hx_err(ctx, -E2BIG, "%u buffers after splitting at 1 GiB, at most %u",
			      n, UINT16_MAX);
	ctx->bufs = calloc(n, sizeof(*ctx->bufs));
	kv = calloc(n, sizeof(*kv));
	if (!ctx->bufs || !kv) {
		free(kv);
		free(ctx->bufs);
		ctx->bufs = NULL;
		return -ENOMEM;
	}
	/* Split what io_uring would refuse; callers see addresses, not indices. */
	for (i = 0, n = 0; i < nr; i++) {
		uintptr_t a = (uintptr_t)iov[i].iov_base;
		uintptr_t end = a + iov[i].iov_len;

		for (; a < end; a += HX_MAX_BUF, n++) {
			ctx->bufs[n].start = a;
			ctx->bufs[n].end = end - a > HX_MAX_BUF ? a + HX_MAX_BUF : end;
		}
	}
	qsort(ctx->bufs, n, sizeof(*ctx->bufs), cmp_buf);
	for (i = 0; i < n; i++) {
		if (i && ctx->bufs[i].start < ctx->bufs[i - 1].end) {
			ret = hx_err(ctx, -EINVAL, "registered buffers overlap");
			goto fail;
		}
		kv[i].iov_base = (void *)ctx->bufs[i].start;
		kv[i].iov_len = ctx->bufs[i].end - ctx->bufs[i].start;
	}
	ret = io_uring_register_buffers(&ctx->ring, kv, n);
	if (ret == -ENOMEM && memlock_short(ctx, kv, n))
		goto fail;
	if (ret) {
		hx_err(ctx, ret, "io_uring_register_buffers (%u buffers): %s", n,
		       strerror(-ret));
		goto fail;
	}
	free(kv);
	ctx->nr_bufs = n;
	return 0;
fail:
	free(kv);
	free(ctx->bufs);
	ctx->bufs = NULL;
	return ret;
}

int hyper_set_arena(struct hyper_ctx *ctx, void *base, uint64_t bytes)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	if (ctx->has_arena || ctx->prepared)
		return hx_err(ctx, -EBUSY, "the arena is already set");
	if (ctx->cu) {
		ret = hx_cu_set_arena(ctx, &base, bytes);
		if (ret)
			return ret;
	}
	if (!base || !bytes || hx_buf_find(ctx, (uintptr_t)base, bytes) < 0)
		return hx_err(ctx, -EINVAL,
			      "the arena must lie inside registered buffers");
	/* Keep the arena's addresses aligned, not just its offsets. */
	ret = hx_range_init(&ctx->arena, bytes, HX_DEV_ALIGN);
	if (ret)
		return ret;
	ctx->arena_base = (uintptr_t)base;
	if (ctx->arena_base % HX_DEV_ALIGN) {
		uint64_t skip = HX_DEV_ALIGN - ctx->arena_base % HX_DEV_ALIGN;

		if (bytes <= skip) {
			hx_range_fini(&ctx->arena);
			return hx_err(ctx, -EINVAL, "the arena is too small");
		}
		hx_range_fini(&ctx->arena);
		ret = hx_range_init(&ctx->arena, bytes - skip, HX_DEV_ALIGN);
		if (ret)
			return ret;
		ctx->arena_base += skip;
	}
	ctx->has_arena = true;
	return 0;
}
