// SPDX-License-Identifier: GPL-2.0
/*
 * HYPER_OPEN_EARLY_PREFETCH: after a late prefetch the executor issues
 * later ones ahead of their step, and that never takes residency past
 * the schedule's budget (its validated peak when it has none), never
 * places a tensor anywhere but its laid-out place, and every use still
 * sees the bytes it must.  Correctness only: nothing is timed.
 *
 * The schedule streams t0..t7: t(k) is prefetched before step k, used by
 * it, and detached before step k + 1, after t(k + 1)'s prefetch, so the
 * layout alternates two places and t(k + 1)'s is free while step k runs:
 * with room in the budget it can be prefetched a step early.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "copy-worker.h"
#include "internal.h"

#define MiB	(1UL << 20)
#define DEV_LEN	(8 * MiB)
#define TB	262336		/* 256 KiB and change: not a multiple of a chunk */
#define NT	8

struct ev_peak {
	uint64_t max_resident;
	uint64_t max_arena;
};

static void track(const struct hyper_event *ev, void *arg)
{
	struct ev_peak *p = arg;

	if (ev->resident_bytes > p->max_resident)
		p->max_resident = ev->resident_bytes;
	if (ev->arena_bytes > p->max_arena)
		p->max_arena = ev->arena_bytes;
}

/*
 * A context (@flags added to the test options) with an arena of DEV_LEN
 * registered and set, @s attached, events counted into @pk if given, and
 * prepared.  close_arena() undoes it.
 */
static void open_arena(struct __test_metadata *_metadata, uint32_t flags,
		       struct hyper_schedule *s, struct ev_peak *pk,
		       struct hyper_ctx **ctx, struct iovec *iov)
{
	struct hyper_open_opts o;

	test_opts(&o);
	o.flags |= flags;
	ASSERT_EQ(0, hyper_open(ctx, &o));
	iov->iov_base = dev_mem(DEV_LEN);
	iov->iov_len = DEV_LEN;
	ASSERT_NE(NULL, iov->iov_base);
	ASSERT_EQ(0, hyper_register_buffers(*ctx, iov, 1));
	ASSERT_EQ(0, hyper_set_arena(*ctx, iov->iov_base, DEV_LEN));
	ASSERT_EQ(0, hyper_attach(*ctx, s));
	if (pk)
		ASSERT_EQ(0, hyper_set_event_fn(*ctx, track, pk));
	ASSERT_EQ(0, hyper_prepare(*ctx)) TH_LOG("%s", hyper_last_error(*ctx));
}

static void close_arena(struct hyper_ctx *ctx, struct hyper_schedule *s,
			struct iovec *iov)
{
	if (ctx->cw)
		hx_cw_pause(ctx->cw, false);
	hyper_close(ctx);
	hyper_schedule_free(s);
	munmap(iov->iov_base, DEV_LEN);
}

/* The schedule, with a budget of @budget bytes (0: none). */
static char *sched_json(uint64_t budget)
{
	char *j = malloc(8192);
	int n;

	if (!j)
		return NULL;
	n = sprintf(j, "{" HDR);
	if (budget)
		n += sprintf(j + n, "'device_budget_bytes':%llu,",
			     (unsigned long long)budget);
	n += sprintf(j + n, "'tensors':[");
	for (int k = 0; k < NT; k++)
		n += sprintf(j + n, "%s{'id':'t%d','bytes':%d,'kind':'weight','home':'pool'}",
			     k ? "," : "", k, TB);
	n += sprintf(j + n, "],'steps':[");
	for (int k = 0; k < NT; k++) {
		n += sprintf(j + n, "%s{'op':'s%d','before':[{'op':'prefetch','tensor':'t%d'}",
			     k ? "," : "", k, k);
		if (k)
			n += sprintf(j + n, ",{'op':'detach','tensor':'t%d'}", k - 1);
		n += sprintf(j + n, "],'uses':['t%d']", k);
		if (k == NT - 1)
			n += sprintf(j + n, ",'after':[{'op':'detach','tensor':'t%d'}]", k);
		n += sprintf(j + n, "}");
	}
	sprintf(j + n, "]}");
	return j;
}

static int check_step(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	/* Step k uses t(k), index k, filled with seed 100 + k. */
	if (check_pat(hyper_tensor_ptr(ctx, step), TB, 100 + step) >= 0)
		return -EILSEQ;
	return 0;
}

/*
 * Run the schedule three times with early prefetches on; @pause keeps
 * the copy worker from taking jobs (shmem), so that every prefetch is
 * late and the executor copies it while it waits.
 */
static void run(struct __test_metadata *_metadata, uint64_t budget,
		bool pause, struct hyper_stats *st, struct ev_peak *pk,
		struct hyper_schedule_info *info)
{
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	char err[256], *j = sched_json(budget), *d;
	struct iovec iov;

	ASSERT_NE(NULL, j);
	d = sq(j);
	free(j);
	ASSERT_EQ(0, hyper_schedule_parse(d, strlen(d), &s, err, sizeof(err)))
		TH_LOG("%s", err);
	free(d);
	ASSERT_EQ(0, hyper_schedule_info(s, info));
	open_arena(_metadata, HYPER_OPEN_EARLY_PREFETCH, s, pk, &ctx, &iov);
	if (pause && ctx->cw)
		hx_cw_pause(ctx->cw, true);
	for (int k = 0; k < NT; k++)
		fill_pat(hyper_tensor_pool_ptr(ctx, k), TB, 100 + k);
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, hyper_run(ctx, check_step, NULL))
			TH_LOG("round %d: %s", round, hyper_last_error(ctx));
		ASSERT_EQ(0, hyper_drain(ctx));
		ASSERT_EQ(0, hyper_rewind(ctx));
	}
	ASSERT_EQ(0, hyper_get_stats(ctx, st));
	close_arena(ctx, s, &iov);
}

/* Room for one more tensor: prefetches go a step early, within it. */
TEST(early_within_budget)
{
	struct hyper_schedule_info info;
	struct ev_peak pk = { 0 };
	struct hyper_stats st;
	uint64_t budget = 4 * TB;

	run(_metadata, budget, true, &st, &pk, &info);
	EXPECT_EQ(2ULL * TB, info.peak_device_bytes);
	EXPECT_GE(budget, st.peak_resident_bytes);
	EXPECT_GE(budget, pk.max_resident);
	EXPECT_GE(DEV_LEN, pk.max_arena);
	/* Every prefetch still counted once, early or not. */
	EXPECT_EQ(3ULL * NT, st.nr_prefetch);
	EXPECT_EQ(3ULL * NT * TB, st.bytes_prefetched);
	if (test_backend == HYPER_BACKEND_SHMEM) {
		/* Paused worker: every prefetch late, so some go early. */
		EXPECT_LT(3, st.nr_early);
	}
	TH_LOG("%llu early prefetches, peak %llu of budget %llu",
	       (unsigned long long)st.nr_early,
	       (unsigned long long)st.peak_resident_bytes,
	       (unsigned long long)budget);
}

/*
 * A budget with no room for a third tensor: while a step's prefetch and
 * its predecessor's detach keep two resident, nothing more comes early;
 * only step 0, which holds one, may take t1 ahead.
 */
TEST(early_budget_tight)
{
	struct hyper_schedule_info info;
	struct ev_peak pk = { 0 };
	struct hyper_stats st;

	run(_metadata, 2 * TB + TB / 2, true, &st, &pk, &info);
	EXPECT_GE(3, st.nr_early);
	EXPECT_EQ(2ULL * TB, st.peak_resident_bytes);
	EXPECT_EQ(2ULL * TB, pk.max_resident);
}

/* No budget: the validated peak is the cap. */
TEST(early_no_budget_keeps_peak)
{
	struct hyper_schedule_info info;
	struct ev_peak pk = { 0 };
	struct hyper_stats st;

	run(_metadata, 0, true, &st, &pk, &info);
	EXPECT_GE(3, st.nr_early);
	EXPECT_EQ(info.peak_device_bytes, st.peak_resident_bytes);
	EXPECT_EQ(info.peak_device_bytes, pk.max_resident);
}

/*
 * A step's peak before its prefetch: step 2 prefetches x, then detaches
 * y, then prefetches e, so the plan holds y + x (the budget exactly)
 * just before y goes.  e issued early while step 1 runs is resident at
 * that moment too: it must wait for its step.  Units of U; the layout
 * (arena offsets) is the planner's, so e's place is free during step 1.
 */
#define U	(64UL * 1024)
static int check_e(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	if (step == 2 && check_pat(hyper_tensor_ptr(ctx, 4), U, 9) >= 0)
		return -EILSEQ;
	return 0;
}

TEST(early_budget_peak_before_prefetch)
{
	char js[2048];
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct hyper_stats st;
	struct ev_peak pk = { 0 };
	uint64_t budget = 65ULL * U;
	char err[256];
	struct iovec iov;

	snprintf(js, sizeof(js), "{" HDR "'device_budget_bytes':%llu,'arena_bytes':%llu,"
		"'tensors':["
		"{'id':'y','bytes':%lu,'kind':'weight','home':'device','arena_offsets':[0]},"
		"{'id':'w','bytes':%lu,'kind':'weight','home':'pool','arena_offsets':[%lu]},"
		"{'id':'z','bytes':%lu,'kind':'weight','home':'pool','arena_offsets':[%lu]},"
		"{'id':'x','bytes':%lu,'kind':'weight','home':'pool','arena_offsets':[%lu]},"
		"{'id':'e','bytes':%lu,'kind':'weight','home':'pool','arena_offsets':[%lu]}],"
		"'steps':["
		"{'op':'s0','before':[{'op':'prefetch','tensor':'w'},{'op':'prefetch','tensor':'z'}],"
		"'uses':['w','y','z'],'after':[{'op':'detach','tensor':'w'}]},"
		"{'op':'s1','uses':['y','z'],'after':[{'op':'detach','tensor':'z'}]},"
		"{'op':'s2','before':[{'op':'prefetch','tensor':'x'},{'op':'detach','tensor':'y'},"
		"{'op':'prefetch','tensor':'e'}],'uses':['x','e'],"
		"'after':[{'op':'detach','tensor':'x'},{'op':'detach','tensor':'e'}]}]}",
		(unsigned long long)budget, 66ULL * U,
		30 * U, 33 * U, 30 * U, 2 * U, 63 * U, 35 * U, 30 * U, 1 * U, 65 * U);
	ASSERT_EQ(0, parse_sq(js, &s, err, sizeof(err))) TH_LOG("%s", err);
	open_arena(_metadata, HYPER_OPEN_EARLY_PREFETCH, s, &pk, &ctx, &iov);
	if (ctx->cw)
		hx_cw_pause(ctx->cw, true);
	fill_pat(hyper_tensor_pool_ptr(ctx, 4), U, 9);
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, hyper_run(ctx, check_e, NULL))
			TH_LOG("round %d: %s", round, hyper_last_error(ctx));
		ASSERT_EQ(0, hyper_drain(ctx));
		ASSERT_EQ(0, hyper_rewind(ctx));
	}
	ASSERT_EQ(0, hyper_get_stats(ctx, &st));
	EXPECT_GE(budget, st.peak_resident_bytes);
	EXPECT_GE(budget, pk.max_resident);
	TH_LOG("%llu early prefetches, peak %llu of budget %llu",
	       (unsigned long long)st.nr_early,
	       (unsigned long long)st.peak_resident_bytes,
	       (unsigned long long)budget);
	close_arena(ctx, s, &iov);
}

/* Off (the default): never early, even with every prefetch late. */
TEST(early_off_by_default)
{
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct hyper_stats st;
	char err[256], *j = sched_json(4 * TB), *d;
	struct iovec iov;

	ASSERT_NE(NULL, j);
	d = sq(j);
	free(j);
	ASSERT_EQ(0, hyper_schedule_parse(d, strlen(d), &s, err, sizeof(err)));
	free(d);
	open_arena(_metadata, 0, s, NULL, &ctx, &iov);
	if (ctx->cw)
		hx_cw_pause(ctx->cw, true);
	for (int k = 0; k < NT; k++)
		fill_pat(hyper_tensor_pool_ptr(ctx, k), TB, 100 + k);
	ASSERT_EQ(0, hyper_run(ctx, check_step, NULL));
	ASSERT_EQ(0, hyper_get_stats(ctx, &st));
	EXPECT_EQ(0, st.nr_early);
	EXPECT_EQ(2ULL * TB, st.peak_resident_bytes);
	close_arena(ctx, s, &iov);
}

/*
 * kv is defined, stored and detached by step 0; w, which the layout puts
 * in kv's place, is prefetched before step 1 but used only by step 2.
 */
#define BEHIND_STORE							\
	"{" HDR "'tensors':["						\
	"{'id':'kv','bytes':262336,'kind':'kv','home':'none'},"		\
	"{'id':'w','bytes':262336,'kind':'weight','home':'pool'}],'steps':[" \
	"{'op':'s0','defines':['kv'],'after':[{'op':'store','tensor':'kv'}," \
	"{'op':'detach','tensor':'kv'}]},"				\
	"{'op':'s1','before':[{'op':'prefetch','tensor':'w'}]},"	\
	"{'op':'s2','uses':['w'],'after':[{'op':'detach','tensor':'w'}]}]}"

/*
 * A prefetch whose laid-out place a detached tensor holds while its store
 * runs is deferred, not waited for: kv is defined, stored and detached by
 * step 0; w, which the layout puts in kv's place, is prefetched before
 * step 1 but used only by step 2.  With the worker paused the store stays
 * queued, so step 1 would stall if the prefetch waited for the space.
 */
TEST(prefetch_deferred_behind_store)
{
	static const char js[] = BEHIND_STORE;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct hyper_stats st;
	char err[256];
	struct iovec iov;

	ASSERT_EQ(0, parse_sq(js, &s, err, sizeof(err))) TH_LOG("%s", err);
	open_arena(_metadata, 0, s, NULL, &ctx, &iov);
	fill_pat(hyper_tensor_pool_ptr(ctx, 1), TB, 7);
	if (ctx->cw)
		hx_cw_pause(ctx->cw, true);
	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, hyper_step_begin(ctx));
		fill_pat(hyper_tensor_ptr(ctx, 0), TB, 50 + round);
		ASSERT_EQ(0, hyper_step_end(ctx));
		hyper_reset_stats(ctx);
		ASSERT_EQ(1, hyper_step_begin(ctx)) TH_LOG("%s", hyper_last_error(ctx));
		ASSERT_EQ(0, hyper_get_stats(ctx, &st));
		if (ctx->cw)
			EXPECT_EQ(0, st.nr_stalls);
		if (ctx->cw && round == 1) {
			/* Deferred: no address until hyper_wait_tensor() places it. */
			ASSERT_TRUE(ctx->t[1].deferred);
			EXPECT_EQ(NULL, hyper_tensor_ptr(ctx, 1));
			ASSERT_EQ(0, hyper_wait_tensor(ctx, 1))
				TH_LOG("%s", hyper_last_error(ctx));
			ASSERT_NE(NULL, hyper_tensor_ptr(ctx, 1));
			EXPECT_GT(0, check_pat(hyper_tensor_ptr(ctx, 1), TB, 7));
		}
		ASSERT_EQ(0, hyper_step_end(ctx));
		ASSERT_EQ(2, hyper_step_begin(ctx)) TH_LOG("%s", hyper_last_error(ctx));
		EXPECT_GT(0, check_pat(hyper_tensor_ptr(ctx, 1), TB, 7));
		ASSERT_EQ(0, hyper_step_end(ctx));
		ASSERT_EQ(0, hyper_drain(ctx));
		/* The store reached the pool before w took kv's place. */
		EXPECT_GT(0, check_pat(hyper_tensor_pool_ptr(ctx, 0), TB, 50 + round));
		ASSERT_EQ(0, hyper_rewind(ctx));
	}
	close_arena(ctx, s, &iov);
}

/*
 * hyper_rewind() in the middle of a step with a deferred prefetch drops
 * it: no copy whose result is thrown away, w not resident, and the runs
 * after it place and check w as usual.  Same schedule as above.
 */
TEST(rewind_drops_deferred_prefetch)
{
	static const char js[] = BEHIND_STORE;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct hyper_stats st;
	char err[256];
	struct iovec iov;
	bool deferred;

	ASSERT_EQ(0, parse_sq(js, &s, err, sizeof(err))) TH_LOG("%s", err);
	open_arena(_metadata, 0, s, NULL, &ctx, &iov);
	fill_pat(hyper_tensor_pool_ptr(ctx, 1), TB, 7);
	if (ctx->cw)
		hx_cw_pause(ctx->cw, true);
	ASSERT_EQ(0, hyper_step_begin(ctx));
	fill_pat(hyper_tensor_ptr(ctx, 0), TB, 50);
	ASSERT_EQ(0, hyper_step_end(ctx));
	ASSERT_EQ(1, hyper_step_begin(ctx)) TH_LOG("%s", hyper_last_error(ctx));
	if (ctx->cw)	/* paused worker: kv's store holds w's place */
		ASSERT_TRUE(ctx->t[1].deferred);
	/*
	 * Without a copy worker to pause (the kmod backend) the store may
	 * finish first: then w's prefetch was issued, not deferred, and
	 * rewind waits for it, which counts its bytes.
	 */
	deferred = ctx->t[1].deferred;
	hyper_reset_stats(ctx);
	ASSERT_EQ(0, hyper_rewind(ctx)) TH_LOG("%s", hyper_last_error(ctx));
	ASSERT_EQ(0, hyper_get_stats(ctx, &st));
	if (deferred)
		EXPECT_EQ(0, st.bytes_prefetched);
	EXPECT_EQ(0, st.resident_bytes);
	EXPECT_EQ(0, ctx->nr_defer);
	EXPECT_FALSE(ctx->t[1].deferred);
	EXPECT_EQ(0, ctx->t[1].nr_prefetch);
	EXPECT_FALSE(ctx->t[1].resident);
	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, hyper_step_begin(ctx));
		fill_pat(hyper_tensor_ptr(ctx, 0), TB, 60 + round);
		ASSERT_EQ(0, hyper_step_end(ctx));
		ASSERT_EQ(1, hyper_step_begin(ctx)) TH_LOG("%s", hyper_last_error(ctx));
		ASSERT_EQ(0, hyper_step_end(ctx));
		ASSERT_EQ(2, hyper_step_begin(ctx)) TH_LOG("%s", hyper_last_error(ctx));
		EXPECT_GT(0, check_pat(hyper_tensor_ptr(ctx, 1), TB, 7));
		ASSERT_EQ(0, hyper_step_end(ctx));
		ASSERT_EQ(0, hyper_drain(ctx));
		EXPECT_GT(0, check_pat(hyper_tensor_pool_ptr(ctx, 0), TB, 60 + round));
		ASSERT_EQ(0, hyper_rewind(ctx));
	}
	close_arena(ctx, s, &iov);
}

HYPER_TEST_MAIN
