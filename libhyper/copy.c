// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Choosing how a context moves bytes (hyper_set_copy_engine): io_uring
 * through io-wq, io_uring with an SQPOLL thread that copies inline on its
 * own CPU, or libhyper's copy worker.  The kmod backend always submits to
 * its transfer engine through io_uring.  See hyper_set_copy_engine(3) for
 * the measurements behind the default.
 */
#include <errno.h>
#include <numa.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "copy-worker.h"
#include "internal.h"

static long nr_cpus_online(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? n : 1;
}

/* A CPU this process may run on (libnuma read the allowed set at start). */
static bool cpu_usable(int cpu)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return false;
	if (numa_available() >= 0)
		return cpu < numa_num_possible_cpus() &&
		       numa_bitmask_isbitset(numa_all_cpus_ptr, cpu);
	return cpu < nr_cpus_online();
}

static int check_opts(struct hyper_ctx *ctx, const struct hyper_copy_opts *o)
{
	long ncpu = nr_cpus_online();

	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return hx_err(ctx, -EINVAL, "hyper_copy_opts.reserved must be zero");
	if (o->flags & ~HYPER_COPY_FLAGS_MASK)
		return hx_err(ctx, -EINVAL, "unknown copy flags 0x%x",
			      o->flags & ~HYPER_COPY_FLAGS_MASK);
	if (o->engine > HYPER_COPY_WORKER)
		return hx_err(ctx, -EINVAL,
			      "unknown copy engine %u (default, uring, sqpoll or worker)",
			      o->engine);
	if (ctx->be->id == HYPER_BACKEND_KMOD &&
	    (o->engine == HYPER_COPY_SQPOLL || o->engine == HYPER_COPY_WORKER))
		return hx_err(ctx, -EINVAL,
			      "the %s copy engine is for the shmem backend; kmod copies in the module's transfer engine (use uring or default)",
			      hyper_copy_engine_name(o->engine));
	if (o->nr_cpus && !o->cpus)
		return hx_err(ctx, -EINVAL, "%u copy CPUs given, but no array of them",
			      o->nr_cpus);
	for (uint32_t i = 0; i < o->nr_cpus; i++)
		if (!cpu_usable(o->cpus[i]))
			return hx_err(ctx, -EINVAL,
				      "copy CPU %d is not one this process may run on (this machine has CPUs 0 to %ld)",
				      o->cpus[i], ncpu - 1);
	switch (o->engine) {
	case HYPER_COPY_WORKER:
		if (!o->nr_workers || o->nr_workers > ncpu)
			return hx_err(ctx, -EINVAL,
				      "%u copy workers: give 1 to %ld, the number of CPUs",
				      o->nr_workers, ncpu);
		if (o->nr_cpus > o->nr_workers)
			return hx_err(ctx, -EINVAL,
				      "%u copy CPUs for %u workers: give at most one CPU per worker",
				      o->nr_cpus, o->nr_workers);
		break;
	case HYPER_COPY_SQPOLL:
		if (o->nr_workers > 1 || o->nr_cpus > 1)
			return hx_err(ctx, -EINVAL,
				      "sqpoll has one kernel thread: give at most one worker and one CPU");
		if (o->nt_bytes || o->spin_ns)
			return hx_err(ctx, -EINVAL,
				      "nt_bytes and spin_ns are for the worker engine");
		break;
	default:
		if (o->nr_workers || o->nr_cpus || o->nt_bytes || o->spin_ns)
			return hx_err(ctx, -EINVAL,
				      "workers, CPUs, nt_bytes and spin_ns are for the worker and sqpoll engines");
	}
	if ((o->flags & HYPER_COPY_TEST_DIE) && o->engine != HYPER_COPY_WORKER)
		return hx_err(ctx, -EINVAL, "HYPER_COPY_TEST_DIE needs the worker engine");
	return 0;
}

/* Set the ring up again, with or without an SQPOLL thread on @cpu. */
static int ring_reinit(struct hyper_ctx *ctx, bool sqpoll, int cpu, bool poll)
{
	unsigned int qd = *ctx->ring.sq.kring_entries;
	struct io_uring_params p;
	int ret;

	io_uring_queue_exit(&ctx->ring);
	ctx->ring_ok = false;
	memset(&p, 0, sizeof(p));
	p.flags = ctx->be->ring_flags;
	if (sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		if (cpu >= 0) {
			p.flags |= IORING_SETUP_SQ_AFF;
			p.sq_thread_cpu = cpu;
		}
		/* ms the thread spins idle before it sleeps: polling only if asked. */
		p.sq_thread_idle = poll ? 60000 : 1;
	}
	ret = io_uring_queue_init_params(qd, &ctx->ring, &p);
	if (ret)
		return hx_err(ctx, ret, "io_uring setup%s (%u entries): %s",
			      sqpoll ? " with SQPOLL" : "", qd, strerror(-ret));
	return hx_ring_ready(ctx, &p);
}

int hyper_set_copy_engine(struct hyper_ctx *ctx, const struct hyper_copy_opts *opts)
{
	static const struct hyper_copy_opts defaults;
	const struct hyper_copy_opts *o = opts ? opts : &defaults;
	bool was_sqpoll, sqpoll;
	int ret;

	if (!ctx)
		return -EINVAL;
	if (ctx->prepared)
		return hx_err(ctx, -EBUSY, "set the copy engine before hyper_prepare()");
	if (ctx->cu)
		return hx_err(ctx, -EINVAL,
			      "a CUDA context copies with cudaMemcpyAsync on its own streams: there is no copy engine to choose");
	ret = check_opts(ctx, o);
	if (ret)
		return ret;
	was_sqpoll = ctx->ring.flags & IORING_SETUP_SQPOLL;
	sqpoll = o->engine == HYPER_COPY_SQPOLL;
	if (was_sqpoll != sqpoll || sqpoll) {
		if (ctx->bufs)
			return hx_err(ctx, -EBUSY,
				      "choose the %s copy engine before hyper_register_buffers()",
				      hyper_copy_engine_name(sqpoll ? HYPER_COPY_SQPOLL : o->engine));
		ret = ring_reinit(ctx, sqpoll, o->nr_cpus ? o->cpus[0] : -1,
				  o->flags & HYPER_COPY_POLL);
		/* Leave the context usable: back to a plain ring. */
		if (ret && (!sqpoll || ring_reinit(ctx, false, -1, false)))
			return ret;
		if (ret)
			return ret;
	}
	hx_cw_stop(ctx->cw);
	ctx->cw = NULL;
	ctx->copy_engine = o->engine;
	/* The default engine becomes a worker at hyper_prepare(): keep them. */
	ctx->copy_flags = o->flags & (HYPER_COPY_POLL | HYPER_COPY_NO_HELP);
	if (o->engine == HYPER_COPY_WORKER) {
		ret = hx_cw_start(o, ctx->numa_node, ctx->cq_entries, &ctx->cw);
		if (ret) {
			ctx->copy_engine = HYPER_COPY_DEFAULT;
			return hx_err(ctx, ret, "starting %u copy workers: %s",
				      o->nr_workers, hyper_strerror(ret));
		}
	}
	return 0;
}

int hyper_copy_engine(const struct hyper_ctx *ctx)
{
	return ctx ? (int)ctx->copy_engine : -EINVAL;
}

/*
 * At hyper_prepare(): the default engine becomes a real one.  shmem: one
 * copy worker, on the pool's NUMA node if it has CPUs, else unpinned;
 * kmod: io_uring to the module.  On hyper_rewind(): workers that died
 * are replaced.
 */
int hx_copy_prepare(struct hyper_ctx *ctx)
{
	struct hyper_copy_opts o;
	int ret;

	if (ctx->cw) {
		ret = hx_cw_revive(ctx->cw);
		return ret ? hx_err(ctx, ret, "restarting a copy worker: %s",
				    hyper_strerror(ret)) : 0;
	}
	if (ctx->copy_engine != HYPER_COPY_DEFAULT || ctx->cu)
		return 0;
	if (ctx->be->id != HYPER_BACKEND_SHMEM) {
		ctx->copy_engine = HYPER_COPY_URING;
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.engine = HYPER_COPY_WORKER;
	o.flags = ctx->copy_flags;
	o.nr_workers = 1;
	ret = hx_cw_start(&o, ctx->numa_node, ctx->cq_entries, &ctx->cw);
	if (ret)
		return hx_err(ctx, ret, "starting the copy worker: %s",
			      hyper_strerror(ret));
	ctx->copy_engine = o.engine;
	return 0;
}

void hx_copy_fini(struct hyper_ctx *ctx)
{
	hx_cw_stop(ctx->cw);
	ctx->cw = NULL;
}
