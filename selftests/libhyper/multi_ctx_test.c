// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts are independent: two in one thread, interleaved step by step,
 * and several threads each with its own context, all sharing one loaded
 * schedule, each checking that its own data (distinct patterns) arrives.
 *
 * usage: multi_ctx_test [--backend shmem|kmod]
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define NT	8
#define TB	(512 * 1024)
#define NTHREADS 4

/* Eight 512 KiB weights streamed two at a time through a 1 MiB arena. */
static struct hyper_schedule *make_schedule(void)
{
	static char json[8192];
	struct hyper_schedule *s;
	char err[256];
	int n;

	n = snprintf(json, sizeof(json), "{" HDR "'device_budget_bytes':%d,'tensors':[", 2 * TB);
	for (int i = 0; i < NT; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      "%s{'id':'w%d','bytes':%d,'kind':'weight','home':'pool'}",
			      i ? "," : "", i, TB);
	n += snprintf(json + n, sizeof(json) - n, "],'steps':[");
	for (int i = 0; i < NT; i++) {
		n += snprintf(json + n, sizeof(json) - n, "%s{'op':'L%d','before':[", i ? "," : "", i);
		if (i == 0)
			n += snprintf(json + n, sizeof(json) - n,
				      "{'op':'prefetch','tensor':'w0'}");
		if (i + 1 < NT)
			n += snprintf(json + n, sizeof(json) - n,
				      "%s{'op':'prefetch','tensor':'w%d'}", i == 0 ? "," : "", i + 1);
		n += snprintf(json + n, sizeof(json) - n,
			      "],'uses':['w%d'],'after':[{'op':'detach','tensor':'w%d'}]}", i, i);
	}
	snprintf(json + n, sizeof(json) - n, "]}");
	if (parse_sq(json, &s, err, sizeof(err))) {
		fprintf(stderr, "# %s\n", err);
		return NULL;
	}
	return s;
}

struct runner {
	struct hyper_ctx *ctx;
	void *dev;
	uint64_t seed;
	int ret;
	char msg[256];
};

static int runner_init(struct runner *r, struct hyper_schedule *s, uint64_t seed)
{
	struct iovec iov;
	int ret;

	memset(r, 0, sizeof(*r));
	r->seed = seed;
	r->dev = dev_mem(2 * TB);
	if (!r->dev)
		return -ENOMEM;
	iov.iov_base = r->dev;
	iov.iov_len = 2 * TB;
	ret = open_test_ctx(&r->ctx);
	if (!ret)
		ret = hyper_register_buffers(r->ctx, &iov, 1);
	if (!ret)
		ret = hyper_attach(r->ctx, s);
	if (!ret)
		ret = hyper_set_arena(r->ctx, r->dev, 2 * TB);
	if (!ret)
		ret = hyper_prepare(r->ctx);
	if (ret)
		return ret;
	for (int i = 0; i < NT; i++)
		fill_pat(hyper_tensor_pool_ptr(r->ctx, i), TB, seed * 100 + i);
	return 0;
}

static void runner_fini(struct runner *r)
{
	hyper_close(r->ctx);
	munmap(r->dev, 2 * TB);
}

/* One step of @r: begin, check the used weight, end. */
static int runner_step(struct runner *r)
{
	int step = hyper_step_begin(r->ctx);
	long bad;

	if (step < 0) {
		snprintf(r->msg, sizeof(r->msg), "%s", hyper_last_error(r->ctx));
		return step;
	}
	bad = check_pat(hyper_tensor_ptr(r->ctx, step), TB, r->seed * 100 + step);
	if (bad >= 0) {
		snprintf(r->msg, sizeof(r->msg), "seed %llu step %d: byte %ld wrong",
			 (unsigned long long)r->seed, step, bad);
		return -EIO;
	}
	return hyper_step_end(r->ctx);
}

TEST(two_contexts_interleaved)
{
	struct hyper_schedule *s = make_schedule();
	struct hyper_stats st;
	struct runner a, b;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, runner_init(&a, s, 1));
	ASSERT_EQ(0, runner_init(&b, s, 2));
	/* The contexts hold the schedule; the caller's reference can go. */
	hyper_schedule_free(s);
	for (int i = 0; i < NT; i++) {
		ASSERT_EQ(0, runner_step(&a)) TH_LOG("%s", a.msg);
		ASSERT_EQ(0, runner_step(&b)) TH_LOG("%s", b.msg);
	}
	ASSERT_EQ(0, hyper_get_stats(a.ctx, &st));
	EXPECT_EQ(NT, st.steps);
	EXPECT_EQ(NT * TB, st.bytes_prefetched);
	EXPECT_EQ(2 * TB, st.peak_resident_bytes);
	/* An error in one context leaves the other alone. */
	EXPECT_EQ(-ENODATA, hyper_step_begin(a.ctx));
	EXPECT_STREQ("", hyper_last_error(b.ctx));
	runner_fini(&a);
	runner_fini(&b);
}

static void *thread_main(void *arg)
{
	struct runner *r = arg;

	for (int round = 0; round < 20 && !r->ret; round++) {
		for (int i = 0; i < NT && !r->ret; i++)
			r->ret = runner_step(r);
		if (!r->ret)
			r->ret = hyper_rewind(r->ctx);
	}
	if (r->ret && !r->msg[0])
		snprintf(r->msg, sizeof(r->msg), "%s", hyper_last_error(r->ctx));
	return NULL;
}

TEST(threads_own_contexts)
{
	struct hyper_schedule *s = make_schedule();
	struct runner r[NTHREADS];
	pthread_t th[NTHREADS];

	ASSERT_NE(NULL, s);
	for (int i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, runner_init(&r[i], s, i + 10));
	hyper_schedule_free(s);
	for (int i = 0; i < NTHREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, thread_main, &r[i]));
	for (int i = 0; i < NTHREADS; i++) {
		struct hyper_stats st;

		pthread_join(th[i], NULL);
		EXPECT_EQ(0, r[i].ret) TH_LOG("thread %d: %s", i, r[i].msg);
		ASSERT_EQ(0, hyper_get_stats(r[i].ctx, &st));
		EXPECT_EQ(20 * NT, st.steps);
		EXPECT_EQ(20ULL * NT * TB, st.bytes_prefetched);
		runner_fini(&r[i]);
	}
}

HYPER_TEST_MAIN
