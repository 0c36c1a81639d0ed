// SPDX-License-Identifier: GPL-2.0
/*
 * hyper_set_copy_engine(): every engine moves the right bytes (each tensor
 * checked at every use, stores read back), bad choices are refused with
 * -EINVAL and a message, and a copy worker that dies mid-run leaves no
 * tensor resident that was not copied.  Correctness only: nothing is timed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "copy-worker.h"
#include "internal.h"

#define MiB	(1UL << 20)
#define DEV_LEN	(32 * MiB)
#define TB	1048768		/* not a multiple of the 256 KiB requests */

#define T(id, home) \
	"{'id':'" id "','bytes':1048768,'kind':'weight','home':'" home "'}"
#define PF(t)	"{'op':'prefetch','tensor':'" t "'}"
#define ST(t)	"{'op':'store','tensor':'" t "'}"
#define DT(t)	"{'op':'detach','tensor':'" t "'}"

/*
 * Weights a..d stream through; x is read, rewritten by step 1, stored,
 * dropped and prefetched back at step 3, where its new bytes must arrive.
 */
static const char sched_json[] = "{" HDR "'tensors':["
	T("a", "pool") "," T("b", "pool") "," T("c", "pool") "," T("d", "pool") ","
	T("x", "pool") "],'steps':["
	"{'op':'s0','before':[" PF("a") "," PF("b") "," PF("x") "],'uses':['a','b','x'],"
	"'after':[" DT("a") "]},"
	"{'op':'s1','before':[" PF("c") "],'uses':['b','c'],'defines':['x'],"
	"'after':[" DT("b") "," ST("x") "," DT("x") "]},"
	"{'op':'s2','before':[" PF("d") "],'uses':['c','d'],'after':[" DT("c") "]},"
	"{'op':'s3','before':[" PF("x") "],'uses':['d','x'],'after':[" DT("d") "," DT("x") "]}"
	"]}";

FIXTURE(copy) {
	struct hyper_ctx *ctx;
	struct hyper_schedule *s;
	char *dev;
};

FIXTURE_SETUP(copy)
{
	struct hyper_open_opts o;
	char err[256];

	test_opts(&o);
	o.chunk_bytes = 256 * 1024;
	o.queue_depth = 8;
	ASSERT_EQ(0, hyper_open(&self->ctx, &o));
	self->dev = dev_mem(DEV_LEN);
	ASSERT_NE(NULL, self->dev);
	ASSERT_EQ(0, parse_sq(sched_json, &self->s, err, sizeof(err))) TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(copy)
{
	hyper_close(self->ctx);
	hyper_schedule_free(self->s);
	munmap(self->dev, DEV_LEN);
}

static int attach(FIXTURE_DATA(copy) *self)
{
	struct iovec iov = { self->dev, DEV_LEN };
	int ret;

	ret = hyper_register_buffers(self->ctx, &iov, 1);
	if (!ret)
		ret = hyper_set_arena(self->ctx, self->dev, DEV_LEN);
	if (!ret)
		ret = hyper_attach(self->ctx, self->s);
	if (!ret)
		ret = hyper_prepare(self->ctx);
	for (unsigned int i = 0; !ret && i < 5; i++)
		fill_pat(hyper_tensor_pool_ptr(self->ctx, i), TB, 100 + i);
	return ret;
}

/* Every use sees its bytes; step 1 rewrites x, which step 3 must see. */
static int check_step(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	const struct hyper_schedule *s = arg;
	struct hyper_step_info si;

	hyper_schedule_step(s, step, &si);
	for (unsigned int j = 0; j < si.nr_uses; j++) {
		unsigned int t = si.uses[j];
		uint64_t seed = 100 + t;

		if (t == 4 && step == 3)
			seed = 999;
		if (check_pat(hyper_tensor_ptr(ctx, t), TB, seed) >= 0)
			return -EILSEQ;
	}
	if (step == 1)
		fill_pat(hyper_tensor_ptr(ctx, 4), TB, 999);
	return 0;
}

static void run_engine(struct __test_metadata *_metadata,
		       FIXTURE_DATA(copy) *self, const struct hyper_copy_opts *o,
		       bool pause)
{
	struct hyper_stats st;

	ASSERT_EQ(0, hyper_set_copy_engine(self->ctx, o))
		TH_LOG("%s", hyper_last_error(self->ctx));
	if (pause)
		hx_cw_pause(self->ctx->cw, true);
	ASSERT_EQ(0, attach(self)) TH_LOG("%s", hyper_last_error(self->ctx));
	EXPECT_EQ((int)o->engine, hyper_copy_engine(self->ctx));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, hyper_run(self->ctx, check_step, self->s))
			TH_LOG("round %d: %s", round, hyper_last_error(self->ctx));
		ASSERT_EQ(0, hyper_drain(self->ctx));
		/* The store really reached the pool. */
		EXPECT_GT(0, check_pat(hyper_tensor_pool_ptr(self->ctx, 4), TB, 999));
		fill_pat(hyper_tensor_pool_ptr(self->ctx, 4), TB, 104);
		ASSERT_EQ(0, hyper_rewind(self->ctx));
	}
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(3ULL * 6 * TB, st.bytes_prefetched);
	EXPECT_EQ(3ULL * TB, st.bytes_stored);
}

TEST_F(copy, uring)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_URING };

	run_engine(_metadata, self, &o, false);
}

TEST_F(copy, default_engine)
{
	struct hyper_stats st;

	ASSERT_EQ(0, attach(self)) TH_LOG("%s", hyper_last_error(self->ctx));
	EXPECT_EQ(test_backend == HYPER_BACKEND_SHMEM ? HYPER_COPY_WORKER :
		  HYPER_COPY_URING, hyper_copy_engine(self->ctx));
	ASSERT_EQ(0, hyper_run(self->ctx, check_step, self->s))
		TH_LOG("%s", hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	/* kmod: each 5-request prefetch, and step 1's store, went as a BATCH. */
	EXPECT_EQ(test_backend == HYPER_BACKEND_KMOD, st.nr_batches >= 1);
}

TEST_F(copy, sqpoll)
{
	int cpu = 0;
	struct hyper_copy_opts o = { .engine = HYPER_COPY_SQPOLL, .nr_cpus = 1,
				     .cpus = &cpu };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "sqpoll is a shmem engine");
	run_engine(_metadata, self, &o, false);
}

TEST_F(copy, worker_one)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER, .nr_workers = 1 };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	run_engine(_metadata, self, &o, false);
}

TEST_F(copy, worker_pinned_nt_all)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int cpus[2] = { 0, n > 1 ? 1 : 0 };
	/* Non-temporal stores for every request, odd tails included. */
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER,
				     .nr_workers = n > 1 ? 2 : 1,
				     .nr_cpus = n > 1 ? 2 : 1, .cpus = cpus,
				     .nt_bytes = 1 };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	run_engine(_metadata, self, &o, false);
}

TEST_F(copy, worker_poll)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER, .nr_workers = 1,
				     .flags = HYPER_COPY_POLL,
				     .nt_bytes = UINT64_MAX };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	run_engine(_metadata, self, &o, false);
}

/*
 * A waiting executor copies queued requests itself: with the worker
 * paused (it takes no job), every request is copied on the caller's
 * thread, and every use still sees its bytes.
 */
TEST_F(copy, worker_paused_executor_copies)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER, .nr_workers = 1 };
	struct hyper_stats st;

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	run_engine(_metadata, self, &o, true);
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(st.nr_requests, st.nr_copied_inline);
	hx_cw_pause(self->ctx->cw, false);
}

/* HYPER_COPY_NO_HELP: the caller never copies; the worker does it all. */
TEST_F(copy, worker_no_help)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER, .nr_workers = 1,
				     .flags = HYPER_COPY_NO_HELP };
	struct hyper_stats st;

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	run_engine(_metadata, self, &o, false);
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(0, st.nr_copied_inline);
}

/* The executor's XFER_START <= XFER_COPY <= XFER_DONE, for each transfer. */
struct xf_order {
	uint64_t issue[5][3], copy[5][3];
	unsigned int starts, copies, dones, bad;
};

static void order_event(const struct hyper_event *ev, void *arg)
{
	struct xf_order *l = arg;
	uint32_t t = ev->tensor, d = ev->op;

	if (ev->type != HYPER_EV_XFER_START && ev->type != HYPER_EV_XFER_COPY &&
	    ev->type != HYPER_EV_XFER_DONE)
		return;
	if (t >= 5 || d > 2) {
		l->bad++;
		return;
	}
	switch (ev->type) {
	case HYPER_EV_XFER_START:
		l->starts++;
		l->issue[t][d] = ev->time_ns;
		l->copy[t][d] = 0;
		break;
	case HYPER_EV_XFER_COPY:
		l->copies++;
		l->bad += !l->issue[t][d] || ev->time_ns < l->issue[t][d];
		l->copy[t][d] = ev->time_ns;
		break;
	case HYPER_EV_XFER_DONE:
		l->dones++;
		l->bad += !l->copy[t][d] || ev->time_ns < l->copy[t][d];
		l->issue[t][d] = 0;
		break;
	}
}

TEST_F(copy, worker_events_issue_copy_done_ordered)
{
	struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER, .nr_workers = 1 };
	struct xf_order l = { 0 };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	ASSERT_EQ(0, hyper_set_event_fn(self->ctx, order_event, &l));
	run_engine(_metadata, self, &o, false);
	/* Per round: six prefetches and one store. */
	EXPECT_EQ(3 * 7, l.starts);
	EXPECT_EQ(3 * 7, l.copies);
	EXPECT_EQ(3 * 7, l.dones);
	EXPECT_EQ(0, l.bad);
}

#define EXPECT_REFUSED(o, what)						\
	do {								\
		EXPECT_EQ(-EINVAL, hyper_set_copy_engine(self->ctx, &(o)));	\
		EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), what))	\
			TH_LOG("%s", hyper_last_error(self->ctx));	\
	} while (0)

TEST_F(copy, bad_input)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int bad_cpu[] = { -1, (int)n, 1 << 20 };
	struct hyper_copy_opts o;

	EXPECT_EQ(-EINVAL, hyper_set_copy_engine(NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_copy_engine(NULL));
	if (test_backend == HYPER_BACKEND_KMOD) {
		o = (struct hyper_copy_opts){ .engine = HYPER_COPY_WORKER, .nr_workers = 1 };
		EXPECT_REFUSED(o, "for the shmem backend");
		return;
	}
	o = (struct hyper_copy_opts){ .engine = HYPER_COPY_WORKER };
	EXPECT_REFUSED(o, "0 copy workers: give 1 to");
	o.nr_workers = n + 1;
	EXPECT_REFUSED(o, "the number of CPUs");
	o.nr_workers = 1;
	for (unsigned int i = 0; i < 3; i++) {
		o.nr_cpus = 1;
		o.cpus = &bad_cpu[i];
		EXPECT_REFUSED(o, "is not one this process may run on");
	}
	o.nr_cpus = 1;
	o.cpus = NULL;
	EXPECT_REFUSED(o, "no array");
	o = (struct hyper_copy_opts){ .engine = 7 };
	EXPECT_REFUSED(o, "unknown copy engine 7");
	o = (struct hyper_copy_opts){ .engine = HYPER_COPY_URING, .nr_workers = 1 };
	EXPECT_REFUSED(o, "for the worker and sqpoll engines");
	o = (struct hyper_copy_opts){ .flags = 1U << 20 };
	EXPECT_REFUSED(o, "unknown copy flags");
	o = (struct hyper_copy_opts){ .reserved[1] = 1 };
	EXPECT_REFUSED(o, "reserved");
	/* Nothing refused changed the engine; the context still runs. */
	EXPECT_EQ(HYPER_COPY_DEFAULT, hyper_copy_engine(self->ctx));
	ASSERT_EQ(0, attach(self));
	o = (struct hyper_copy_opts){ .engine = HYPER_COPY_URING };
	EXPECT_EQ(-EBUSY, hyper_set_copy_engine(self->ctx, &o));
	EXPECT_STREQ("set the copy engine before hyper_prepare()",
		     hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_run(self->ctx, check_step, self->s));
}

TEST_F(copy, sqpoll_after_buffers)
{
	struct iovec iov = { self->dev, DEV_LEN };
	struct hyper_copy_opts o = { .engine = HYPER_COPY_SQPOLL };

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "sqpoll is a shmem engine");
	ASSERT_EQ(0, hyper_register_buffers(self->ctx, &iov, 1));
	EXPECT_EQ(-EBUSY, hyper_set_copy_engine(self->ctx, &o));
	EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx),
			       "before hyper_register_buffers()"));
}

/*
 * The worker dies half-way through copy number @k.  Whatever the schedule
 * had issued by then, a tensor libhyper calls resident holds its bytes,
 * the one being copied is not resident, and the run fails with a message.
 */
TEST_F(copy, worker_dies_mid_run)
{
	unsigned int deaths = 0;

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "the copy worker is a shmem engine");
	for (uint64_t k = 0; k < 30; k += 3) {
		struct hyper_copy_opts o = { .engine = HYPER_COPY_WORKER,
					     .nr_workers = 1,
					     .flags = HYPER_COPY_TEST_DIE,
					     .test_die_after = k };
		struct hyper_stats st;
		unsigned int resident = 0;
		int ret, step = -1;

		struct hyper_open_opts oo;

		/* A fresh context each time: the fault injection is one-shot. */
		hyper_close(self->ctx);
		test_opts(&oo);
		oo.chunk_bytes = 256 * 1024;
		oo.queue_depth = 8;
		ASSERT_EQ(0, hyper_open(&self->ctx, &oo));
		ASSERT_EQ(0, hyper_set_copy_engine(self->ctx, &o));
		ASSERT_EQ(0, attach(self)) TH_LOG("%s", hyper_last_error(self->ctx));
		/* Step by step, without hyper_run(), to look after each one. */
		while ((ret = hyper_step_begin(self->ctx)) >= 0) {
			step = ret;
			ASSERT_EQ(0, check_step(self->ctx, step, self->s));
			ASSERT_EQ(0, hyper_step_end(self->ctx));
		}
		if (ret == -ENODATA) {
			/* k was past the last copy of the run: nothing died. */
			EXPECT_GE(k, 1U);
			continue;
		}
		EXPECT_EQ(-ECANCELED, ret);
		deaths++;
		EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "failed: Operation canceled"))
			TH_LOG("%s", hyper_last_error(self->ctx));
		hyper_drain(self->ctx);
		ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
		for (unsigned int t = 0; t < 5; t++) {
			void *p = hyper_tensor_ptr(self->ctx, t);
			uint64_t seed = 100 + t;

			if (!p)
				continue;
			resident++;
			if (t == 4 && step >= 1)
				seed = 999;
			EXPECT_GT(0, check_pat(p, TB, seed))
				TH_LOG("k %llu: tensor %u resident but not copied",
				       (unsigned long long)k, t);
		}
		EXPECT_EQ(resident * (uint64_t)TB, st.resident_bytes);
		/* hyper_rewind() replaces the worker, and the run completes. */
		ASSERT_EQ(0, hyper_rewind(self->ctx)) TH_LOG("%s", hyper_last_error(self->ctx));
		for (unsigned int i = 0; i < 5; i++)
			fill_pat(hyper_tensor_pool_ptr(self->ctx, i), TB, 100 + i);
		ASSERT_EQ(0, hyper_run(self->ctx, check_step, self->s))
			TH_LOG("k %llu: %s", (unsigned long long)k, hyper_last_error(self->ctx));
	}
	/* 6 prefetches and a store of 5 requests each: 35 copies a run. */
	EXPECT_EQ(10U, deaths);
}

HYPER_TEST_MAIN
