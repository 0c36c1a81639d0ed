// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The step executor.  hyper_step_begin() issues the step's "before" ops,
 * then blocks only on what the operator needs: the prefetches of its
 * "uses", and any transfer still touching a tensor it "defines".
 * hyper_step_end() issues the "after" ops and returns at once.  Every
 * other wait is an ordering one: a transfer never starts while another
 * one on the same tensor could race with it, and arena space is never
 * reused while a transfer still reads or writes it.
 *
 * The common step (nothing in flight to wait for) makes no system call
 * beyond one io_uring_submit() when it issued transfers (on kmod, a
 * BATCH command per prefetch of several requests, one for its stores);
 * with the copy worker, at most one wake-up of a sleeping worker.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "copy-worker.h"
#include "device-cuda.h"
#include "internal.h"
#include "util/clock.h"
#include "util/units.h"

#define XF_NONE		UINT32_MAX

static const char *step_op(const struct hyper_ctx *ctx)
{
	return ctx->cur < ctx->sched->nr_steps ? ctx->sched->steps[ctx->cur].op : "-";
}

static const char *tensor_id(const struct hyper_ctx *ctx, uint32_t ti)
{
	return ctx->sched->tensors[ti].id;
}

static void emit(struct hyper_ctx *ctx, uint32_t type, uint32_t tensor,
		 uint32_t op, uint64_t bytes, uint64_t time_ns)
{
	struct hyper_event ev = {
		.type = type, .step = ctx->cur, .tensor = tensor, .op = op,
		.bytes = bytes, .time_ns = time_ns ? time_ns : hu_now_ns(),
		.resident_bytes = ctx->st.resident_bytes,
		.arena_bytes = ctx->st.arena_bytes,
	};

	if (ctx->ev_fn)
		ctx->ev_fn(&ev, ctx->ev_arg);
}

static void emit_resident(struct hyper_ctx *ctx)
{
	if (ctx->ev_fn)
		emit(ctx, HYPER_EV_RESIDENT, UINT32_MAX, 0, 0, 0);
}

static bool busy(const struct hx_tensor *t)
{
	return t->nr_prefetch || t->nr_store;
}

static void release_dev(struct hyper_ctx *ctx, struct hx_tensor *t,
			uint64_t bytes)
{
	if (t->free_pending) {
		t->free_pending = false;
		ctx->nr_free_pending--;
	}
	if (!t->arena_held)
		return;
	hx_range_free(&ctx->arena, t->arena_off, bytes);
	ctx->st.arena_bytes -= hx_range_round(&ctx->arena, bytes);
	/* Kernels queued on the GPU may still read it. */
	if (ctx->cu)
		hx_cu_released(ctx);
	t->arena_held = false;
	t->dev = 0;
	emit_resident(ctx);
}

static void finish(struct hyper_ctx *ctx, uint32_t xi);

static void complete(struct hyper_ctx *ctx, uint64_t ud, int32_t res,
		     uint64_t start_ns, uint64_t done_ns)
{
	struct hx_xfer *x = &ctx->xf[(uint32_t)ud];
	uint32_t len = ud >> 32;

	if (start_ns && (!x->copy_ns || start_ns < x->copy_ns))
		x->copy_ns = start_ns;
	if (done_ns > x->done_ns)
		x->done_ns = done_ns;
	if (res < 0 && !x->err)
		x->err = res;
	else if (res >= 0 && (uint32_t)res != len && !x->err)
		x->err = -EIO;		/* a short copy leaves stale bytes */
	else if (res > 0)
		x->bytes += res;
	if (--x->left == 0)
		finish(ctx, (uint32_t)ud);
}

/* The last request of a cache op is done: account it, release what waits. */
static void finish(struct hyper_ctx *ctx, uint32_t xi)
{
	struct hx_xfer *x = &ctx->xf[xi];
	struct hx_tensor *t = &ctx->t[x->tensor];
	const char *what;


	if (x->dir == HX_DIR_PREFETCH) {
		t->nr_prefetch--;
		ctx->st.bytes_prefetched += x->bytes;
		what = "prefetch";
	} else {
		t->nr_store--;
		ctx->st.bytes_stored += x->bytes;
		what = "store";
	}
	/* Where the engine tells when the copy began: queue wait vs copy. */
	if (x->copy_ns)
		emit(ctx, HYPER_EV_XFER_COPY, x->tensor,
		     x->dir == HX_DIR_PREFETCH ? HYPER_OP_PREFETCH : HYPER_OP_STORE,
		     x->bytes, x->copy_ns);
	emit(ctx, HYPER_EV_XFER_DONE, x->tensor,
	     x->dir == HX_DIR_PREFETCH ? HYPER_OP_PREFETCH : HYPER_OP_STORE,
	     x->bytes, x->done_ns);
	/* What was not copied is not there: no residency, no valid pool copy. */
	if (x->err && x->dir == HX_DIR_PREFETCH && t->resident) {
		t->resident = false;
		ctx->st.resident_bytes -= ctx->sched->tensors[x->tensor].bytes;
		emit_resident(ctx);
	} else if (x->err && x->dir == HX_DIR_STORE) {
		t->pool_valid = false;
	}
	if (x->err && !ctx->async_err) {
		ctx->async_err = x->err;
		hx_err(ctx, x->err, "%s of tensor \"%s\" failed: %s", what,
		       tensor_id(ctx, x->tensor), hyper_strerror(x->err));
		memcpy(ctx->async_msg, ctx->err, sizeof(ctx->async_msg));
	}
	if (t->free_pending && !busy(t))
		release_dev(ctx, t, ctx->sched->tensors[x->tensor].bytes);
	x->next_free = ctx->xf_free;
	ctx->xf_free = xi;
}

/* A batch completes as one CQE: the total moved, or the first error. */
static void complete_batch(struct hyper_ctx *ctx, uint64_t ud, int32_t res,
			   uint64_t done_ns)
{
	struct hx_batch *b = (struct hx_batch *)(uintptr_t)(ud & ~HX_UD_BATCH);
	int32_t err = res < 0 ? res : (uint64_t)res != b->bytes ? -EIO : 0;

	for (uint32_t i = 0; i < b->n; i++)
		complete(ctx, b->ud[i], err ? err : (int32_t)(b->ud[i] >> 32),
			 0, done_ns);
	free(b);
}

static void reap_cw(struct hyper_ctx *ctx)
{
	struct hx_cw_done d[64];
	unsigned int n;

	ctx->st.nr_copied_inline += hx_cw_take_helped(ctx->cw);
	do {
		n = hx_cw_reap(ctx->cw, d, 64);
		for (unsigned int i = 0; i < n; i++)
			complete(ctx, d[i].ud, d[i].res, d[i].start_ns,
				 d[i].done_ns);
		ctx->inflight -= n;
	} while (n == 64);
}

static void reap_cu(struct hyper_ctx *ctx)
{
	struct hx_cw_done d[64];
	unsigned int n;

	do {
		n = hx_cu_reap(ctx, d, 64);
		for (unsigned int i = 0; i < n; i++)
			complete(ctx, d[i].ud, d[i].res, 0, d[i].done_ns);
		ctx->inflight -= n;
	} while (n == 64);
}

static void reap(struct hyper_ctx *ctx)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	uint64_t now = 0;
	bool big = ctx->ring.flags & IORING_SETUP_CQE32;

	if (ctx->cw) {
		reap_cw(ctx);
		return;
	}
	if (ctx->cu) {
		reap_cu(ctx);
		return;
	}

	io_uring_for_each_cqe(&ctx->ring, head, cqe) {
		/* The kmod backend stamps when the copy ended; else: now. */
		uint64_t done = big ? cqe->big_cqe[0] : 0;

		if (!done)
			done = now ? now : (now = hu_now_ns());
		if (cqe->user_data & HX_UD_BATCH)
			complete_batch(ctx, cqe->user_data, cqe->res, done);
		else
			complete(ctx, cqe->user_data, cqe->res, 0, done);
		n++;
	}
	io_uring_cq_advance(&ctx->ring, n);
	ctx->inflight -= n;
}

/* Completions waiting to be reaped / requests waiting to be submitted. */
static bool cq_ready(struct hyper_ctx *ctx)
{
	if (ctx->cu)
		return hx_cu_ready(ctx);
	return ctx->cw ? hx_cw_ready(ctx->cw) : io_uring_cq_ready(&ctx->ring);
}

static bool sq_ready(struct hyper_ctx *ctx)
{
	/* CUDA copies are on their streams as soon as they are queued. */
	if (ctx->cu)
		return false;
	return ctx->cw ? hx_cw_staged(ctx->cw) :
	       ctx->stage || io_uring_sq_ready(&ctx->ring);
}

static int flush_stage(struct hyper_ctx *ctx);

static int submit(struct hyper_ctx *ctx, unsigned int wait_nr)
{
	int ret;

	if (ctx->cw) {
		hx_cw_kick(ctx->cw);
		if (wait_nr)
			hx_cw_wait(ctx->cw);
		return 0;
	}
	ret = flush_stage(ctx);
	if (ret)
		return ret;
	do {
		ret = io_uring_submit_and_wait(&ctx->ring, wait_nr);
	} while (ret == -EINTR);
	if (ret < 0)
		return hx_err(ctx, ret, "io_uring submit: %s", hyper_strerror(ret));
	return 0;
}

/* Block until at least one completion arrives, then reap all there are. */
static int wait_one(struct hyper_ctx *ctx)
{
	struct io_uring_cqe *cqe;
	int ret;

	if (sq_ready(ctx)) {
		ret = submit(ctx, 1);
	} else if (ctx->cw) {
		hx_cw_wait(ctx->cw);
		ret = 0;
	} else if (ctx->cu) {
		ret = hx_cu_wait(ctx);
	} else {
		do {
			ret = io_uring_wait_cqe(&ctx->ring, &cqe);
		} while (ret == -EINTR);
		if (ret)
			hx_err(ctx, ret, "io_uring wait: %s", hyper_strerror(ret));
	}
	if (ret)
		return ret;
	reap(ctx);
	return 0;
}

static int fail_async(struct hyper_ctx *ctx)
{
	memcpy(ctx->err, ctx->async_msg, sizeof(ctx->async_msg));
	return ctx->async_err;
}

/* The executor starts waiting on @ti: counted, and told to a tracer. */
static uint64_t stall_begin(struct hyper_ctx *ctx, uint32_t ti)
{
	uint64_t t0 = hu_now_ns();

	ctx->st.nr_stalls++;
	emit(ctx, HYPER_EV_STALL_BEGIN, ti, 0, 0, t0);
	return t0;
}

static void stall_end(struct hyper_ctx *ctx, uint32_t ti, uint64_t t0)
{
	uint64_t now = hu_now_ns();

	ctx->st.stall_ns += now - t0;
	emit(ctx, HYPER_EV_STALL_END, ti, 0, 0, now);
}

static int issue_deferred(struct hyper_ctx *ctx);

/* Wait for @ti's in-flight prefetch, or for all its transfers. */
static int wait_tensor(struct hyper_ctx *ctx, uint32_t ti, bool prefetch_only)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint64_t t0;
	int ret = 0;

#define PENDING() (prefetch_only ? t->nr_prefetch : busy(t))
	if (!PENDING())
		return 0;
	reap(ctx);
	if (!PENDING())
		return 0;
	t0 = stall_begin(ctx, ti);
	/* A deferred prefetch (below) is placed as soon as its place frees. */
	while (PENDING() && !(ret = issue_deferred(ctx)) && PENDING() &&
	       !(ret = wait_one(ctx)))
		;
	stall_end(ctx, ti, t0);
#undef PENDING
	return ret;
}

/*
 * CUDA: @stream waits on the GPU for @ti's prefetch (and, with @stores,
 * its store).  A deferred prefetch has no copy queued yet: the host
 * waits until it is placed and queued, then the stream waits for it.
 */
static int stream_wait(struct hyper_ctx *ctx, uint32_t ti, void *stream,
		       bool stores)
{
	int ret;

	if (ctx->t[ti].deferred) {
		uint64_t t0 = stall_begin(ctx, ti);

		ret = 0;
		while (ctx->t[ti].deferred && !(ret = issue_deferred(ctx)) &&
		       ctx->t[ti].deferred && !(ret = wait_one(ctx)))
			;
		stall_end(ctx, ti, t0);
		if (ret)
			return ret;
	}
	if (!busy(&ctx->t[ti]))
		return 0;
	return hx_cu_stream_wait(ctx, ti, stream, stores);
}

/* The compute stream waits for what an operator of this step touches. */
static int use_on_stream(struct hyper_ctx *ctx, uint32_t ti, bool stores)
{
	return stream_wait(ctx, ti, hx_cu_compute_stream(ctx), stores);
}

static int xf_get(struct hyper_ctx *ctx, uint32_t *idx)
{
	if (ctx->xf_free == XF_NONE) {
		uint32_t n = ctx->nr_xf ? 2 * ctx->nr_xf : 64;
		struct hx_xfer *v = realloc(ctx->xf, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (uint32_t i = ctx->nr_xf; i < n; i++)
			v[i].next_free = i + 1 < n ? i + 1 : XF_NONE;
		ctx->xf = v;
		ctx->xf_free = ctx->nr_xf;
		ctx->nr_xf = n;
	}
	*idx = ctx->xf_free;
	ctx->xf_free = ctx->xf[*idx].next_free;
	return 0;
}

static int get_sqe(struct hyper_ctx *ctx, struct io_uring_sqe **sqep)
{
	int ret;

	/* Never more requests out than the CQ ring holds. */
	while (ctx->inflight >= ctx->cq_entries) {
		ret = wait_one(ctx);
		if (ret)
			return ret;
	}
	if (ctx->cw || ctx->cu)
		return 0;
	*sqep = io_uring_get_sqe(&ctx->ring);
	if (!*sqep) {
		ret = submit(ctx, 0);
		if (ret)
			return ret;
		/* An SQPOLL thread takes entries in its own time. */
		while (!(*sqep = io_uring_get_sqe(&ctx->ring)) &&
		       ctx->ring.flags & IORING_SETUP_SQPOLL) {
			ret = io_uring_sqring_wait(&ctx->ring);
			if (ret < 0 && ret != -EINTR)
				return hx_err(ctx, ret, "io_uring SQ wait: %s",
					      hyper_strerror(ret));
		}
		if (!*sqep)
			return hx_err(ctx, -EBUSY, "io_uring submission queue full");
	}
	return 0;
}

/*
 * kmod: the staged requests go out as one SQE, a BATCH command when there
 * are several.  If that fails, each of them completes with the error.
 */
static int flush_stage(struct hyper_ctx *ctx)
{
	struct hx_batch *st = ctx->stage;
	struct io_uring_sqe *sqe;
	int ret;

	if (!st)
		return 0;
	ctx->stage = NULL;
	ret = get_sqe(ctx, &sqe);
	if (ret) {
		for (uint32_t i = 0; i < st->n; i++)
			complete(ctx, st->ud[i], ret, 0, 0);
		free(st);
		return ret;
	}
	ctx->be->prep_batch(ctx, sqe, st);
	if (st->n == 1) {
		/* A single request travels inline in the SQE. */
		io_uring_sqe_set_data64(sqe, st->ud[0]);
		free(st);
	} else {
		io_uring_sqe_set_data64(sqe, HX_UD_BATCH | (uintptr_t)st);
		ctx->st.nr_batches++;
	}
	ctx->inflight++;
	return 0;
}

static int stage(struct hyper_ctx *ctx, int dir, void *addr, uint32_t len,
		 int buf, const struct hyper_region *reg, uint64_t off,
		 uint64_t ud)
{
	struct hx_batch *st = ctx->stage;
	int ret;

	/* One registered buffer per command, and the module's limits. */
	if (st && (st->buf_index != buf || st->n == ctx->max_batch ||
		   st->bytes + len > HYPER_XFER_MAX_BYTES)) {
		ret = flush_stage(ctx);
		if (ret)
			return ret;
		st = NULL;
	}
	if (!st) {
		st = malloc(sizeof(*st));
		if (!st)
			return -ENOMEM;
		st->n = 0;
		st->bytes = 0;
		st->buf_index = buf;
		ctx->stage = st;
	}
	ctx->be->fill_desc(&st->desc[st->n], dir, addr, len, reg, off);
	st->ud[st->n++] = ud;
	st->bytes += len;
	return 0;
}

/* Queue one cache op as requests of at most ctx->chunk bytes. */
static int queue_xfer(struct hyper_ctx *ctx, uint32_t ti, int dir)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint64_t left = ctx->sched->tensors[ti].bytes, off = t->reg_off;
	uintptr_t a = t->dev;
	struct io_uring_sqe *sqe = NULL;
	struct hx_xfer *x;
	uint32_t xi;
	int b, ret;

	/* CUDA: device pointers were checked when bound or set as the arena. */
	b = ctx->cu ? 0 : hx_buf_find(ctx, a, left);
	if (b < 0)
		return hx_err(ctx, -EFAULT, "tensor \"%s\" is outside the registered buffers",
			      tensor_id(ctx, ti));
	ret = xf_get(ctx, &xi);
	if (ret)
		return ret;
	x = &ctx->xf[xi];
	memset(x, 0, sizeof(*x));
	x->tensor = ti;
	x->dir = dir;
	/* The op counts as in flight from its first request on. */
	if (dir == HX_DIR_PREFETCH)
		t->nr_prefetch++;
	else
		t->nr_store++;
	x->left = 1;	/* held until every request is queued */
	emit(ctx, HYPER_EV_XFER_START, ti,
	     dir == HX_DIR_PREFETCH ? HYPER_OP_PREFETCH : HYPER_OP_STORE, left,
	     0);
	while (left) {
		uint64_t n = left < ctx->chunk ? left : ctx->chunk;

		if (!ctx->cu && n > ctx->bufs[b].end - a)
			n = ctx->bufs[b].end - a;
		if (ctx->max_batch > 1) {
			/* Counted in flight when its batch gets an SQE. */
			ret = stage(ctx, dir, (void *)a, (uint32_t)n, b, t->reg,
				    off, n << 32 | xi);
			if (ret)
				break;
		} else {
			ret = get_sqe(ctx, &sqe);
			if (ret)
				break;
			if (ctx->cu) {
				hx_cu_queue(ctx, dir, ti, (void *)a,
					    (char *)t->reg->map + off, n, n << 32 | xi);
			} else if (ctx->cw) {
				void *pool = (char *)t->reg->map + off;

				if (dir == HX_DIR_PREFETCH)
					hx_cw_queue(ctx->cw, (void *)a, pool, n, n << 32 | xi);
				else
					hx_cw_queue(ctx->cw, pool, (void *)a, n, n << 32 | xi);
			} else {
				ctx->be->prep_xfer(ctx, sqe, dir, (void *)a, (uint32_t)n,
						   b, t->reg, off);
				io_uring_sqe_set_data64(sqe, n << 32 | xi);
			}
			ctx->inflight++;
		}
		x->left++;
		ctx->st.nr_requests++;
		a += n;
		off += n;
		left -= n;
		if (!ctx->cu && a == ctx->bufs[b].end)
			b++;
	}
	/* A stream waits for the whole op with one event (hyper_wait_tensor_stream). */
	if (ctx->cu && !ret)
		hx_cu_mark(ctx, dir, ti);
	/*
	 * A batch completes as one CQE, so an operator would wait for every
	 * tensor in it: a prefetch's requests form a batch of their own.
	 * Stores, which no operator waits for, share one per step.  Either
	 * way the step still submits with one system call.
	 */
	if (!ret && dir == HX_DIR_PREFETCH)
		ret = flush_stage(ctx);
	/* Drop the hold; if every request already completed, finish here. */
	if (ret && !x->err)
		x->err = ret;
	if (--x->left == 0)
		finish(ctx, xi);
	return ret;
}

/*
 * Without a layout (an arena smaller than it, or a schedule too large to
 * lay out), tensors this large are placed from the top of the arena and
 * the rest from the bottom, which keeps streamed weights from being
 * fragmented by activations (see hx_range_alloc_high()).
 */
#define HX_ARENA_LARGE	(256 * 1024)

static bool laid_out(const struct hyper_ctx *ctx)
{
	return ctx->sched->arena_bytes &&
	       ctx->arena.size >= ctx->sched->arena_bytes;
}

/* The layout's offset for this residency when it applies, else a hole. */
static int take(struct hyper_ctx *ctx, uint32_t ti, uint64_t bytes,
		uint64_t *off)
{
	const struct hyper_schedule *s = ctx->sched;

	if (laid_out(ctx)) {
		*off = s->res_off[s->tensors[ti].res_first + ctx->t[ti].res_next];
		return hx_range_alloc_at(&ctx->arena, *off, bytes);
	}
	if (bytes >= HX_ARENA_LARGE)
		return hx_range_alloc_high(&ctx->arena, bytes, off);
	return hx_range_alloc(&ctx->arena, bytes, 0, off);
}

/* @ti now holds [off, off + its bytes) of the arena. */
static void hold(struct hyper_ctx *ctx, uint32_t ti, uint64_t off)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint64_t bytes = ctx->sched->tensors[ti].bytes;

	t->arena_off = off;
	t->arena_held = true;
	t->res_next++;
	t->dev = ctx->arena_base + off;
	ctx->st.arena_bytes += hx_range_round(&ctx->arena, bytes);
	if (ctx->st.arena_bytes > ctx->st.peak_arena_bytes)
		ctx->st.peak_arena_bytes = ctx->st.arena_bytes;
	emit_resident(ctx);
}

static int place(struct hyper_ctx *ctx, uint32_t ti)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint64_t bytes = ctx->sched->tensors[ti].bytes, off, t0 = 0;
	char need[32], size[32], held[32], hole[32];
	int ret = 0;

	if (t->explicit_dev || t->arena_held)
		return 0;
	while (take(ctx, ti, bytes, &off)) {
		/* Space still held by detached tensors frees as their stores finish. */
		if (cq_ready(ctx)) {
			reap(ctx);
			/* Prefetches deferred before this one come first. */
			ret = issue_deferred(ctx);
			if (ret)
				break;
			continue;
		}
		if (!ctx->nr_free_pending && laid_out(ctx)) {
			ret = hx_err(ctx, -EFAULT,
				     "step %u (%s): the layout's place for tensor \"%s\" at arena offset %llu is taken",
				     ctx->cur, step_op(ctx), tensor_id(ctx, ti),
				     (unsigned long long)off);
			break;
		}
		if (!ctx->nr_free_pending) {
			hu_fmt_bytes(need, sizeof(need), bytes, 1);
			hu_fmt_bytes(size, sizeof(size), ctx->arena.size, 1);
			hu_fmt_bytes(held, sizeof(held), ctx->arena.used, 1);
			hu_fmt_bytes(hole, sizeof(hole), hx_range_largest(&ctx->arena), 1);
			ret = hx_err(ctx, -ENOMEM,
				     "step %u (%s): no %s hole in the device arena for tensor \"%s\" (arena %s, %s held, largest hole %s)",
				     ctx->cur, step_op(ctx), need, tensor_id(ctx, ti),
				     size, held, hole);
			break;
		}
		if (!t0)
			t0 = stall_begin(ctx, ti);
		ret = wait_one(ctx);
		if (ret)
			break;
	}
	if (t0)
		stall_end(ctx, ti, t0);
	if (ret)
		return ret;
	hold(ctx, ti, off);
	return 0;
}

static void make_resident(struct hyper_ctx *ctx, uint32_t ti)
{
	ctx->t[ti].resident = true;
	ctx->st.resident_bytes += ctx->sched->tensors[ti].bytes;
	if (ctx->st.resident_bytes > ctx->st.peak_resident_bytes)
		ctx->st.peak_resident_bytes = ctx->st.resident_bytes;
	emit_resident(ctx);
}

/*
 * Issue @ti's next prefetch now, ahead of its step, if its planned arena
 * place is free now: never waits (-EAGAIN if not free).  The caller
 * (early.c) has checked that nothing touches @ti before that step.
 */
int hx_prefetch_now(struct hyper_ctx *ctx, uint32_t ti)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint64_t off;

	if (!laid_out(ctx) || t->explicit_dev || t->arena_held || busy(t) ||
	    t->resident)
		return -EAGAIN;
	if (take(ctx, ti, ctx->sched->tensors[ti].bytes, &off))
		return -EAGAIN;
	hold(ctx, ti, off);
	make_resident(ctx, ti);
	ctx->st.nr_prefetch++;
	ctx->st.nr_early++;
	t->early = true;
	return queue_xfer(ctx, ti, HX_DIR_PREFETCH);
}

/*
 * A prefetch whose laid-out place a detached tensor still holds, while
 * its store runs, is deferred rather than waited for: the operator of
 * this step may not need it, and blocking here stalled it (make
 * bench-feedback under chrt: all of the stall left was a weight's
 * prefetch waiting for the store of the KV tensor whose place the layout
 * gave it, in the step before the weight's use).  The tensor counts as
 * resident and its prefetch as in flight from now on, so a use or a
 * store of it waits (and places it as soon as it can); the deferred go
 * out in order as stores complete.
 */
static int defer(struct hyper_ctx *ctx, uint32_t ti)
{
	struct hx_tensor *t = &ctx->t[ti];

	t->deferred = true;
	t->nr_prefetch++;
	ctx->defer[ctx->nr_defer++] = ti;
	return 0;
}

/* Queue the deferred prefetches whose places are free, in their order. */
static int issue_deferred(struct hyper_ctx *ctx)
{
	uint32_t i, kept = 0;
	int ret = 0;

	for (i = 0; i < ctx->nr_defer; i++) {
		uint32_t ti = ctx->defer[i];
		struct hx_tensor *t = &ctx->t[ti];
		uint64_t off;

		if (ret || take(ctx, ti, ctx->sched->tensors[ti].bytes, &off)) {
			if (!ret && !ctx->nr_free_pending)
				ret = hx_err(ctx, -EFAULT,
					     "step %u (%s): the layout's place for deferred tensor \"%s\" at arena offset %llu is held, with no store pending to free it (libhyper bug: report it with the schedule)",
					     ctx->cur, step_op(ctx), tensor_id(ctx, ti),
					     (unsigned long long)off);
			ctx->defer[kept++] = ti;
			continue;
		}
		hold(ctx, ti, off);
		t->deferred = false;
		t->nr_prefetch--;	/* queue_xfer() counts it again */
		ret = queue_xfer(ctx, ti, HX_DIR_PREFETCH);
	}
	ctx->nr_defer = kept;
	return ret;
}

/* Every deferred prefetch dropped unplaced, none issued: not resident. */
static void drop_deferred(struct hyper_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nr_defer; i++) {
		struct hx_tensor *t = &ctx->t[ctx->defer[i]];

		t->deferred = false;
		t->nr_prefetch--;
		if (t->resident)
			ctx->st.resident_bytes -= ctx->sched->tensors[ctx->defer[i]].bytes;
		t->resident = false;
	}
	ctx->nr_defer = 0;
}

/* A deferred prefetch dropped unplaced: its residency is skipped. */
static void undefer(struct hyper_ctx *ctx, uint32_t ti)
{
	struct hx_tensor *t = &ctx->t[ti];
	uint32_t i;

	for (i = 0; i < ctx->nr_defer && ctx->defer[i] != ti; i++)
		;
	memmove(ctx->defer + i, ctx->defer + i + 1,
		(ctx->nr_defer - i - 1) * sizeof(*ctx->defer));
	ctx->nr_defer--;
	t->deferred = false;
	t->nr_prefetch--;
	t->res_next++;
}

static int issue(struct hyper_ctx *ctx, const struct hyper_cop *c)
{
	struct hx_tensor *t = &ctx->t[c->tensor];
	uint64_t bytes = ctx->sched->tensors[c->tensor].bytes, off;
	int ret;

	switch (c->op) {
	case HYPER_OP_PREFETCH:
		/* Issued ahead of its step (hx_early_issue()): already on its way. */
		if (t->early) {
			t->early = false;
			return 0;
		}
		/* A store may still write the pool copy, or a detach hold the space. */
		ret = wait_tensor(ctx, c->tensor, false);
		if (ret)
			return ret;
		if (laid_out(ctx) && !t->explicit_dev && !t->arena_held &&
		    ctx->nr_free_pending) {
			if (take(ctx, c->tensor, bytes, &off)) {
				make_resident(ctx, c->tensor);
				ctx->st.nr_prefetch++;
				return defer(ctx, c->tensor);
			}
			hold(ctx, c->tensor, off);
		} else {
			ret = place(ctx, c->tensor);
			if (ret)
				return ret;
		}
		make_resident(ctx, c->tensor);
		ctx->st.nr_prefetch++;
		return queue_xfer(ctx, c->tensor, HX_DIR_PREFETCH);
	case HYPER_OP_STORE:
		/*
		 * Storing before the device copy arrived would write stale
		 * data; CUDA: the store stream waits for it, the CPU does not.
		 */
		ret = ctx->cu ? stream_wait(ctx, c->tensor, hx_cu_store_stream(ctx), false) :
		      wait_tensor(ctx, c->tensor, true);
		if (ret)
			return ret;
		t->pool_valid = true;
		ctx->st.nr_store++;
		return queue_xfer(ctx, c->tensor, HX_DIR_STORE);
	case HYPER_OP_DETACH:
		/* Not resident if its prefetch failed (see finish()). */
		if (t->resident)
			ctx->st.resident_bytes -= bytes;
		t->resident = false;
		ctx->st.nr_detach++;
		emit_resident(ctx);
		if (t->explicit_dev)
			return 0;
		if (t->deferred)
			undefer(ctx, c->tensor);
		if (busy(t)) {
			t->free_pending = true;
			ctx->nr_free_pending++;
		} else {
			release_dev(ctx, t, bytes);
		}
		return 0;
	}
	return hx_err(ctx, -EINVAL, "unknown cache op %u", c->op);
}

/*
 * A failure half-way through a step leaves the device state out of step
 * with the schedule: the context refuses to go on until hyper_rewind().
 */
static int broken(struct hyper_ctx *ctx, int err)
{
	ctx->broken = err;
	return err;
}

/* Issue cache ops in order, then submit them with one system call. */
static int issue_ops(struct hyper_ctx *ctx, const struct hyper_cop *ops,
		     uint32_t n)
{
	int ret;

	for (uint32_t j = 0; j < n; j++) {
		ret = issue(ctx, &ops[j]);
		if (ret)
			return broken(ctx, ret);
	}
	/* Stores that completed meanwhile may have freed deferred ones' places. */
	if (ctx->nr_defer) {
		if (cq_ready(ctx))
			reap(ctx);
		ret = issue_deferred(ctx);
		if (ret)
			return broken(ctx, ret);
	}
	if (sq_ready(ctx)) {
		ret = submit(ctx, 0);
		if (ret)
			return broken(ctx, ret);
	}
	return 0;
}

static int check_run(struct hyper_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	if (!ctx->prepared)
		return hx_err(ctx, -EINVAL, "call hyper_prepare() first");
	if (ctx->async_err)
		return fail_async(ctx);
	if (ctx->broken)
		return hx_err(ctx, ctx->broken,
			      "an earlier step failed; hyper_rewind() to start again");
	return 0;
}

int hyper_step_begin(struct hyper_ctx *ctx)
{
	const struct hs_step *step;
	uint32_t j;
	int ret;

	ret = check_run(ctx);
	if (ret)
		return ret;
	if (ctx->in_step)
		return hx_err(ctx, -EBUSY, "step %u (%s) has not ended", ctx->cur,
			      step_op(ctx));
	if (ctx->cur >= ctx->sched->nr_steps)
		return hx_err(ctx, -ENODATA, "all %u steps ran; hyper_rewind() to run again",
			      ctx->sched->nr_steps);
	step = &ctx->sched->steps[ctx->cur];
	if (cq_ready(ctx))
		reap(ctx);
	ret = issue_deferred(ctx);
	if (ret)
		return broken(ctx, ret);

	ret = issue_ops(ctx, step->before, step->nr_before);
	if (ret)
		return ret;
	if (!(ctx->flags & HYPER_OPEN_TEST_NO_WAIT))
		for (j = 0; j < step->nr_uses && ctx->cu; j++) {
			/* The GPU waits, not the CPU. */
			ret = use_on_stream(ctx, step->uses[j], false);
			if (ret)
				return broken(ctx, ret);
		}
	if (!(ctx->flags & HYPER_OPEN_TEST_NO_WAIT))
		for (j = 0; j < step->nr_uses && !ctx->cu; j++) {
			uint64_t stalls = ctx->st.nr_stalls;

			ret = wait_tensor(ctx, step->uses[j], true);
			if (ret)
				return broken(ctx, ret);
			/* Its prefetch came late: look further ahead from now on. */
			if (ctx->st.nr_stalls != stalls)
				hx_early_late(ctx);
		}
	for (j = 0; j < step->nr_defines; j++) {
		uint32_t ti = step->defines[j];

		/* The operator must not write what a store still reads. */
		ret = ctx->cu ? use_on_stream(ctx, ti, true) :
		      wait_tensor(ctx, ti, false);
		if (!ret && !ctx->t[ti].resident) {
			ret = place(ctx, ti);
			if (!ret)
				make_resident(ctx, ti);
		}
		if (ret)
			return broken(ctx, ret);
		ctx->t[ti].pool_valid = false;
	}
	/* While the operator runs, later steps' prefetches may start. */
	ret = hx_early_issue(ctx);
	if (!ret && sq_ready(ctx))
		ret = submit(ctx, 0);
	if (ret)
		return broken(ctx, ret);
	if (ctx->async_err)
		return fail_async(ctx);
	if (ctx->cu)
		hx_cu_kernels_follow(ctx);
	ctx->in_step = true;
	return (int)ctx->cur;
}

int hyper_step_end(struct hyper_ctx *ctx)
{
	const struct hs_step *step;
	int ret;

	ret = check_run(ctx);
	if (ret)
		return ret;
	if (!ctx->in_step)
		return hx_err(ctx, -EINVAL, "no step has begun");
	step = &ctx->sched->steps[ctx->cur];
	ret = issue_ops(ctx, step->after, step->nr_after);
	if (ret)
		return ret;
	/* Kernels queued before the next step may read what it releases. */
	if (ctx->cu)
		hx_cu_kernels_follow(ctx);
	ctx->in_step = false;
	ctx->cur++;
	ctx->st.steps++;
	return 0;
}

int hyper_run(struct hyper_ctx *ctx, hyper_op_fn fn, void *arg)
{
	int ret;

	if (!ctx || !fn)
		return -EINVAL;
	for (;;) {
		ret = hyper_step_begin(ctx);
		if (ret == -ENODATA)
			return 0;
		if (ret < 0)
			return ret;
		ret = fn(ctx, (unsigned int)ret, arg);
		if (ret)
			return ret;
		ret = hyper_step_end(ctx);
		if (ret)
			return ret;
	}
}

int hyper_wait_tensor(struct hyper_ctx *ctx, unsigned int tensor)
{
	int ret;

	ret = check_run(ctx);
	if (ret)
		return ret;
	if (tensor >= ctx->sched->nr_tensors)
		return hx_err(ctx, -ERANGE, "no tensor %u", tensor);
	ret = wait_tensor(ctx, tensor, false);
	if (ret)
		return ret;
	return ctx->async_err ? fail_async(ctx) : 0;
}

int hyper_wait_tensor_stream(struct hyper_ctx *ctx, unsigned int tensor,
			     void *stream)
{
	int ret;

	ret = check_run(ctx);
	if (ret)
		return ret;
	if (!ctx->cu)
		return hx_err(ctx, -EOPNOTSUPP,
			      "hyper_wait_tensor_stream() is for a CUDA context (HYPER_DEVICE_CUDA): use hyper_wait_tensor()");
	if (tensor >= ctx->sched->nr_tensors)
		return hx_err(ctx, -ERANGE, "no tensor %u", tensor);
	ret = stream_wait(ctx, tensor, stream, true);
	if (ret)
		return ret;
	return ctx->async_err ? fail_async(ctx) : 0;
}

/*
 * Wait for every transfer.  hyper_drain() places the deferred prefetches
 * first (@place); rewind and teardown drop them instead, since their
 * copies would be thrown away and a place that cannot be taken must not
 * keep every later hyper_rewind() failing.
 */
static int drain(struct hyper_ctx *ctx, bool place)
{
	int ret;

	if (!place)
		drop_deferred(ctx);
	while (ctx->inflight || ctx->stage || ctx->nr_defer) {
		ret = issue_deferred(ctx);
		if (!ret && (ctx->inflight || ctx->stage))
			ret = wait_one(ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int hyper_drain(struct hyper_ctx *ctx)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = drain(ctx, true);
	if (ret)
		return ret;
	return ctx->async_err ? fail_async(ctx) : 0;
}

/* Tensors back at their home; home "device" ones get (new) device space. */
int hx_exec_reset(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;
	int ret;

	ret = drain(ctx, false);
	if (!ret)
		ret = hx_copy_prepare(ctx);
	if (ret)
		return ret;
	ctx->async_err = 0;
	ctx->broken = 0;
	ctx->in_step = false;
	ctx->cur = 0;
	ctx->nr_free_pending = 0;
	ctx->nr_defer = 0;
	if (!ctx->defer) {
		ctx->defer = calloc(s->nr_tensors ?: 1, sizeof(*ctx->defer));
		if (!ctx->defer)
			return hx_err(ctx, -ENOMEM, "out of memory");
	}
	if (ctx->has_arena)
		hx_range_reset(&ctx->arena);
	/* The last run's kernels may still read the arena. */
	if (ctx->cu) {
		hx_cu_released(ctx);
		hx_cu_kernels_follow(ctx);
	}
	ret = hx_early_reset(ctx);
	if (ret)
		return ret;
	ctx->st.resident_bytes = 0;
	ctx->st.arena_bytes = 0;
	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		struct hx_tensor *t = &ctx->t[i];

		t->resident = false;
		t->arena_held = false;
		t->free_pending = false;
		t->res_next = 0;
		t->early = false;
		t->deferred = false;
		t->pool_valid = s->tensors[i].home == HYPER_HOME_POOL;
		if (!t->explicit_dev)
			t->dev = 0;
	}
	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		if (s->tensors[i].home != HYPER_HOME_DEVICE)
			continue;
		ret = place(ctx, i);
		if (ret)
			return ret;
		make_resident(ctx, i);
	}
	return 0;
}

int hyper_rewind(struct hyper_ctx *ctx)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	if (!ctx->prepared)
		return hx_err(ctx, -EINVAL, "call hyper_prepare() first");
	ret = hx_exec_reset(ctx);
	if (ret)
		ctx->broken = ret;
	return ret;
}

void hx_exec_fini(struct hyper_ctx *ctx)
{
	/* Nothing may be freed while the kernel still copies into it. */
	if (ctx->ring_ok)
		drain(ctx, false);
	hx_copy_fini(ctx);
	hx_early_fini(ctx);
	free(ctx->defer);
	ctx->defer = NULL;
	free(ctx->t);
	free(ctx->xf);
	ctx->t = NULL;
	ctx->xf = NULL;
	hyper_schedule_free(ctx->sched);
	ctx->sched = NULL;
}

int hyper_get_stats(const struct hyper_ctx *ctx, struct hyper_stats *stats)
{
	if (!ctx || !stats)
		return -EINVAL;
	*stats = ctx->st;
	return 0;
}

void hyper_reset_stats(struct hyper_ctx *ctx)
{
	struct hyper_stats now;

	if (!ctx)
		return;
	memset(&now, 0, sizeof(now));
	now.resident_bytes = now.peak_resident_bytes = ctx->st.resident_bytes;
	now.arena_bytes = now.peak_arena_bytes = ctx->st.arena_bytes;
	ctx->st = now;
}

int hyper_set_event_fn(struct hyper_ctx *ctx, hyper_event_fn fn, void *arg)
{
	if (!ctx)
		return -EINVAL;
	ctx->ev_fn = fn;
	ctx->ev_arg = arg;
	return 0;
}
