// SPDX-License-Identifier: GPL-2.0
/*
 * The step executor, on the backend given by --backend (shmem natively,
 * kmod in the VM): data arrives where and when the schedule says, defines
 * wait for stores, detached space is reused only when idle, bindings and
 * the arena behave, errors are reported and sticky.
 *
 * usage: exec_test [--backend shmem|kmod]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <sys/ioctl.h>

#include <linux/hyper.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "copy-worker.h"
#include "internal.h"

#define MiB	(1UL << 20)
#define DEV_LEN	(64 * MiB)

FIXTURE(exec) {
	struct hyper_ctx *ctx;
	struct hyper_schedule *s;
	char *dev;
};

static int open_chunked(struct hyper_ctx **ctx, uint64_t chunk, unsigned int qd)
{
	struct hyper_open_opts o;

	test_opts(&o);
	o.chunk_bytes = chunk;
	o.queue_depth = qd;
	return hyper_open(ctx, &o);
}

FIXTURE_SETUP(exec)
{
	struct iovec iov;

	/* Small requests and a small ring, so that splitting and queue-full paths run. */
	ASSERT_EQ(0, open_chunked(&self->ctx, 256 * 1024, 16));
	self->dev = dev_mem(DEV_LEN);
	ASSERT_NE(NULL, self->dev);
	iov.iov_base = self->dev;
	iov.iov_len = DEV_LEN;
	ASSERT_EQ(0, hyper_register_buffers(self->ctx, &iov, 1))
		TH_LOG("%s", hyper_last_error(self->ctx));
	self->s = NULL;
}

FIXTURE_TEARDOWN(exec)
{
	hyper_close(self->ctx);
	hyper_schedule_free(self->s);
	munmap(self->dev, DEV_LEN);
}

/* Parse, attach, use the first @arena bytes of device memory as arena. */
static int setup(struct __test_metadata *_metadata, FIXTURE_DATA(exec) *self,
		 const char *json, uint64_t arena)
{
	char err[512];
	int ret = parse_sq(json, &self->s, err, sizeof(err));

	if (ret) {
		TH_LOG("%s", err);
		return ret;
	}
	ret = hyper_attach(self->ctx, self->s);
	if (!ret && arena)
		ret = hyper_set_arena(self->ctx, self->dev, arena);
	return ret;
}

static uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int tid(FIXTURE_DATA(exec) *self, const char *id)
{
	return hyper_schedule_find(self->s, id);
}

/* Pool copies of home "pool" tensors get pattern seed = index + 1. */
static void fill_pool(FIXTURE_DATA(exec) *self)
{
	struct hyper_tensor_info ti;

	for (unsigned int i = 0; !hyper_schedule_tensor(self->s, i, &ti); i++)
		if (ti.home == HYPER_HOME_POOL)
			fill_pat(hyper_tensor_pool_ptr(self->ctx, i), ti.bytes, i + 1);
}

static uint64_t tbytes(FIXTURE_DATA(exec) *self, int t)
{
	struct hyper_tensor_info ti;

	hyper_schedule_tensor(self->s, t, &ti);
	return ti.bytes;
}

#define T(id, bytes, home) \
	"{'id':'" id "','bytes':" #bytes ",'kind':'weight','home':'" home "'}"
#define PF(t)	"{'op':'prefetch','tensor':'" t "'}"
#define ST(t)	"{'op':'store','tensor':'" t "'}"
#define DT(t)	"{'op':'detach','tensor':'" t "'}"

TEST_F(exec, prefetch_use_store_roundtrip)
{
	struct hyper_schedule_info info;
	struct hyper_stats st;
	int w, x;

	/* 3 MiB + 8 bytes: twelve 256 KiB requests and a tail. */
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w", 3145736, "pool") ","
			   T("x", 1048583, "none") "],'steps':["
			   "{'op':'s0','before':[" PF("w") "],'uses':['w'],'defines':['x'],"
			   "'after':[" ST("x") "," DT("w") "]},"
			   "{'op':'s1','after':[" DT("x") "]},"
			   "{'op':'s2','before':[" PF("x") "],'uses':['x']}]}", 8 * MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx)) TH_LOG("%s", hyper_last_error(self->ctx));
	w = tid(self, "w");
	x = tid(self, "x");
	fill_pool(self);
	EXPECT_EQ(NULL, hyper_tensor_ptr(self->ctx, w));

	ASSERT_EQ(0, hyper_step_begin(self->ctx)) TH_LOG("%s", hyper_last_error(self->ctx));
	ASSERT_NE(NULL, hyper_tensor_ptr(self->ctx, w));
	EXPECT_EQ(-1, check_pat(hyper_tensor_ptr(self->ctx, w), tbytes(self, w), w + 1));
	fill_pat(hyper_tensor_ptr(self->ctx, x), tbytes(self, x), 77);
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	EXPECT_EQ(NULL, hyper_tensor_ptr(self->ctx, w));

	ASSERT_EQ(1, hyper_step_begin(self->ctx));
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	/*
	 * Clobber the arena: step 2 must bring x back from the pool.  The
	 * store of x may still be reading its detached space (on the kmod
	 * backend it usually is), so let it finish first.
	 */
	ASSERT_EQ(0, hyper_drain(self->ctx));
	memset(self->dev, 0xa5, 8 * MiB);
	ASSERT_EQ(2, hyper_step_begin(self->ctx));
	EXPECT_EQ(-1, check_pat(hyper_tensor_ptr(self->ctx, x), tbytes(self, x), 77));
	EXPECT_EQ(-1, check_pat(hyper_tensor_pool_ptr(self->ctx, x), tbytes(self, x), 77));
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	EXPECT_EQ(-ENODATA, hyper_step_begin(self->ctx));
	EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "all 3 steps ran"));
	ASSERT_EQ(0, hyper_drain(self->ctx));

	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	ASSERT_EQ(0, hyper_schedule_info(self->s, &info));
	EXPECT_EQ(3, st.steps);
	EXPECT_EQ(2, st.nr_prefetch);
	EXPECT_EQ(1, st.nr_store);
	EXPECT_EQ(2, st.nr_detach);
	EXPECT_EQ(tbytes(self, w) + tbytes(self, x), st.bytes_prefetched);
	EXPECT_EQ(tbytes(self, x), st.bytes_stored);
	EXPECT_EQ(13 + 5 + 5, st.nr_requests);
	EXPECT_EQ(info.peak_device_bytes, st.peak_resident_bytes);
	EXPECT_EQ(tbytes(self, x), st.resident_bytes);
	EXPECT_GE(st.peak_arena_bytes, st.peak_resident_bytes);
}

TEST_F(exec, defines_wait_for_store)
{
	struct hyper_stats st;
	int x;

	/* If step 1 did not wait, its writes would race the store of step 0. */
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("x", 33554432, "none") "],"
			   "'steps':[{'op':'a','defines':['x'],'after':[" ST("x") "]},"
			   "{'op':'b','defines':['x']}]}", 40 * MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	x = tid(self, "x");
	ASSERT_EQ(0, hyper_step_begin(self->ctx));
	fill_pat(hyper_tensor_ptr(self->ctx, x), tbytes(self, x), 1);
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(1, hyper_step_begin(self->ctx));
	memset(hyper_tensor_ptr(self->ctx, x), 0, tbytes(self, x));
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(0, hyper_drain(self->ctx));
	EXPECT_EQ(-1, check_pat(hyper_tensor_pool_ptr(self->ctx, x), tbytes(self, x), 1));
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(tbytes(self, x), st.bytes_stored);
}

TEST_F(exec, arena_reuses_detached_space)
{
	struct hyper_stats st;

	/* Three 1 MiB weights stream through a 2 MiB arena. */
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w0", 1048576, "pool") ","
			   T("w1", 1048576, "pool") "," T("w2", 1048576, "pool") "],'steps':["
			   "{'op':'a','before':[" PF("w0") "," PF("w1") "],'uses':['w0'],'after':[" DT("w0") "]},"
			   "{'op':'b','before':[" PF("w2") "],'uses':['w1'],'after':[" DT("w1") "]},"
			   "{'op':'c','uses':['w2']}]}", 2 * MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	fill_pool(self);
	for (int i = 0; i < 3; i++) {
		int t = i;	/* step i uses w<i> = tensor i */

		ASSERT_EQ(i, hyper_step_begin(self->ctx)) TH_LOG("%s", hyper_last_error(self->ctx));
		EXPECT_EQ(-1, check_pat(hyper_tensor_ptr(self->ctx, t), MiB, t + 1));
		ASSERT_EQ(0, hyper_step_end(self->ctx));
	}
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(2 * MiB, st.peak_arena_bytes);
}

TEST_F(exec, detach_waits_for_store_before_reuse)
{
	int a, b;

	/* b needs a's space while a's store may still read it. */
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("a", 16777216, "none") ","
			   T("b", 16777216, "none") "],'steps':["
			   "{'op':'s0','defines':['a'],'after':[" ST("a") "," DT("a") "]},"
			   "{'op':'s1','defines':['b']}]}", 16 * MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	a = tid(self, "a");
	b = tid(self, "b");
	ASSERT_EQ(0, hyper_step_begin(self->ctx));
	fill_pat(hyper_tensor_ptr(self->ctx, a), tbytes(self, a), 5);
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(1, hyper_step_begin(self->ctx)) TH_LOG("%s", hyper_last_error(self->ctx));
	EXPECT_EQ(self->dev, hyper_tensor_ptr(self->ctx, b));
	memset(hyper_tensor_ptr(self->ctx, b), 0, tbytes(self, b));
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(0, hyper_drain(self->ctx));
	EXPECT_EQ(-1, check_pat(hyper_tensor_pool_ptr(self->ctx, a), tbytes(self, a), 5));
}

TEST_F(exec, arena_too_small)
{
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w0", 1048576, "pool") ","
			   T("w1", 1048576, "pool") "],'steps':["
			   "{'op':'L0','before':[" PF("w0") "," PF("w1") "],'uses':['w0','w1']}]}",
			   MiB + 4096));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	EXPECT_EQ(-ENOMEM, hyper_step_begin(self->ctx));
	EXPECT_STREQ("step 0 (L0): no 1.0 MiB hole in the device arena for tensor \"w1\" "
		     "(arena 1.0 MiB, 1.0 MiB held, largest hole 4.0 KiB)",
		     hyper_last_error(self->ctx));
	/* Half-done steps are not resumed. */
	EXPECT_EQ(-ENOMEM, hyper_step_begin(self->ctx));
	EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "hyper_rewind()"));
}

TEST_F(exec, explicit_bindings)
{
	struct hyper_region *reg;
	char *map, *at = NULL;
	int w, k;

	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w", 100000, "pool") ","
			   T("kv", 4096, "device") "],'steps':["
			   "{'op':'a','before':[" PF("w") "],'uses':['w','kv'],'defines':['kv'],"
			   "'after':[" ST("kv") "]}]}", 0));
	w = tid(self, "w");
	k = tid(self, "kv");
	ASSERT_EQ(0, hyper_region_alloc(self->ctx, 1 << 20, 0, &reg));
	ASSERT_EQ(0, hyper_region_map(self->ctx, reg, (void **)&map));
	ASSERT_EQ(0, hyper_bind_pool(self->ctx, w, reg, 4096));
	ASSERT_EQ(0, hyper_bind_pool(self->ctx, k, reg, 65536));
	ASSERT_EQ(0, hyper_bind_device(self->ctx, w, self->dev + MiB));
	/* Without an arena, an unbound tensor cannot be placed. */
	EXPECT_EQ(-EINVAL, hyper_prepare(self->ctx));
	EXPECT_STREQ("tensor \"kv\" needs device memory: bind it or set an arena",
		     hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_bind_device(self->ctx, k, self->dev + 2 * MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	EXPECT_EQ(map + 4096, hyper_tensor_pool_ptr(self->ctx, w));
	EXPECT_EQ(self->dev + 2 * MiB, hyper_tensor_ptr(self->ctx, k));
	fill_pat(map + 4096, 100000, 9);
	fill_pat(self->dev + 2 * MiB, 4096, 10);

	ASSERT_EQ(0, hyper_step_begin(self->ctx));
	at = hyper_tensor_ptr(self->ctx, w);
	EXPECT_EQ(self->dev + MiB, at);
	EXPECT_EQ(-1, check_pat(at, 100000, 9));
	fill_pat(self->dev + 2 * MiB, 4096, 11);
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(0, hyper_wait_tensor(self->ctx, k));
	EXPECT_EQ(-1, check_pat(map + 65536, 4096, 11));
	/* A bound region cannot go away under the schedule. */
	EXPECT_EQ(-EBUSY, hyper_region_free(self->ctx, reg));
}

static int op_check(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	unsigned int *calls = arg;

	/* step i uses tensor i, whose pool pattern seed is i + 1 */
	if (check_pat(hyper_tensor_ptr(ctx, step), 65536, step + 1) != -1)
		return -EIO;
	(*calls)++;
	return step == 100 ? -ECANCELED : 0;
}

TEST_F(exec, callback_form_and_rewind)
{
	struct hyper_stats st;
	unsigned int calls = 0;

	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("a", 65536, "pool") ","
			   T("b", 65536, "pool") "," T("c", 65536, "pool") "],'steps':["
			   "{'op':'s0','before':[" PF("a") "," PF("b") "],'uses':['a'],'after':[" DT("a") "]},"
			   "{'op':'s1','before':[" PF("c") "],'uses':['b'],'after':[" DT("b") "]},"
			   "{'op':'s2','uses':['c'],'after':[" DT("c") "]}]}", MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	fill_pool(self);
	ASSERT_EQ(0, hyper_run(self->ctx, op_check, &calls));
	EXPECT_EQ(3, calls);
	/* Same schedule again from the tensors' homes. */
	memset(self->dev, 0, MiB);
	ASSERT_EQ(0, hyper_rewind(self->ctx));
	ASSERT_EQ(0, hyper_run(self->ctx, op_check, &calls));
	EXPECT_EQ(6, calls);
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(6, st.steps);
	EXPECT_EQ(6 * 65536, st.bytes_prefetched);
	EXPECT_EQ(0, st.resident_bytes);
	hyper_reset_stats(self->ctx);
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));
	EXPECT_EQ(0, st.steps);
	EXPECT_EQ(0, st.bytes_prefetched);
}

TEST_F(exec, callback_error_stops)
{
	unsigned int calls = 0;
	static char json[65536];
	int n;

	/* 101 steps; op_check cancels at step 100. */
	n = snprintf(json, sizeof(json), "{" HDR "'tensors':[");
	for (int i = 0; i < 101; i++)
		n += snprintf(json + n, sizeof(json) - n, "%s{'id':'t%d','bytes':65536,'kind':'kv','home':'pool'}",
			      i ? "," : "", i);
	n += snprintf(json + n, sizeof(json) - n, "],'steps':[");
	for (int i = 0; i < 101; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      "%s{'op':'s%d','before':[{'op':'prefetch','tensor':'t%d'}],'uses':['t%d'],"
			      "'after':[{'op':'detach','tensor':'t%d'}]}", i ? "," : "", i, i, i, i);
	snprintf(json + n, sizeof(json) - n, "]}");
	ASSERT_EQ(0, setup(_metadata, self, json, MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	fill_pool(self);
	EXPECT_EQ(-ECANCELED, hyper_run(self->ctx, op_check, &calls));
	EXPECT_EQ(101, calls);
}

TEST_F(exec, api_misuse)
{
	struct iovec iov = { .iov_base = self->dev, .iov_len = 4096 };
	struct hyper_open_opts o;
	struct hyper_ctx *c2;
	int w;

	EXPECT_EQ(-EINVAL, hyper_step_begin(self->ctx));
	EXPECT_STREQ("call hyper_prepare() first", hyper_last_error(self->ctx));
	EXPECT_EQ(-EINVAL, hyper_prepare(self->ctx));
	EXPECT_EQ(-EBUSY, hyper_register_buffers(self->ctx, &iov, 1));
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w", 4096, "pool") "],'steps':["
			   "{'op':'s0','before':[" PF("w") "],'uses':['w']}]}", 0));
	w = tid(self, "w");
	EXPECT_EQ(-EBUSY, hyper_attach(self->ctx, self->s));
	EXPECT_EQ(-EINVAL, hyper_set_arena(self->ctx, (char *)self->dev + DEV_LEN - 4096, 8192));
	EXPECT_EQ(-EINVAL, hyper_bind_device(self->ctx, w, self->dev + DEV_LEN - 100));
	EXPECT_EQ(-ERANGE, hyper_bind_device(self->ctx, 7, self->dev));
	ASSERT_EQ(0, hyper_set_arena(self->ctx, self->dev, MiB));
	EXPECT_EQ(-EINVAL, hyper_bind_device(self->ctx, w, self->dev + 4096));
	EXPECT_STREQ("tensor \"w\" overlaps the arena", hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	EXPECT_EQ(-EBUSY, hyper_prepare(self->ctx));
	EXPECT_EQ(-EBUSY, hyper_bind_device(self->ctx, w, self->dev + 2 * MiB));
	EXPECT_EQ(-EINVAL, hyper_step_end(self->ctx));
	ASSERT_EQ(0, hyper_step_begin(self->ctx));
	EXPECT_EQ(-EBUSY, hyper_step_begin(self->ctx));
	EXPECT_STREQ("step 0 (s0) has not ended", hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_step_end(self->ctx));
	EXPECT_EQ(-ERANGE, hyper_wait_tensor(self->ctx, 1));

	test_opts(&o);
	o.reserved[2] = 1;
	EXPECT_EQ(-EINVAL, hyper_open(&c2, &o));
	test_opts(&o);
	o.flags = 1U << 7;
	EXPECT_EQ(-EINVAL, hyper_open(&c2, &o));
	test_opts(&o);
	o.backend = HYPER_BACKEND_KMOD;
	o.device = "/nonexistent/hyper0";
	EXPECT_EQ(-ENOENT, hyper_open(&c2, &o));
	EXPECT_EQ(-EINVAL, hyper_open(NULL, NULL));
}

TEST_F(exec, default_backend_rule)
{
	struct hyper_open_opts o;
	struct hyper_ctx *c2;

	/* No device node: the default is the shmem backend. */
	memset(&o, 0, sizeof(o));
	o.device = "/nonexistent/hyper0";
	o.pool_bytes = MiB;
	ASSERT_EQ(0, hyper_open(&c2, &o));
	EXPECT_EQ(HYPER_BACKEND_SHMEM, hyper_backend(c2));
	hyper_close(c2);
	if (access("/dev/hyper0", F_OK))
		return;
	memset(&o, 0, sizeof(o));
	ASSERT_EQ(0, hyper_open(&c2, &o));
	EXPECT_EQ(HYPER_BACKEND_KMOD, hyper_backend(c2));
	hyper_close(c2);
}

struct ev_log {
	struct hyper_event ev[256];
	unsigned int n;
};

static void log_event(const struct hyper_event *ev, void *arg)
{
	struct ev_log *l = arg;

	if (l->n < 256)
		l->ev[l->n++] = *ev;
}

TEST_F(exec, events_trace_transfers_stalls_and_residency)
{
	struct ev_log *l = calloc(1, sizeof(*l));
	uint64_t start[2] = { 0 }, peak = 0, now;
	unsigned int starts = 0, dones = 0, stalls = 0;
	struct hyper_stats st;
	int w, x;

	ASSERT_NE(NULL, l);
	/* w comes in, is used (a stall, since nothing hides it), x is stored. */
	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w", 2097152, "pool") ","
			   T("x", 1048576, "none") "],'steps':["
			   "{'op':'s0','before':[" PF("w") "],'uses':['w'],'defines':['x'],"
			   "'after':[" ST("x") "," DT("w") "]},"
			   "{'op':'s1','after':[" DT("x") "]}]}", 8 * MiB));
	ASSERT_EQ(0, hyper_set_event_fn(self->ctx, log_event, l));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	w = tid(self, "w");
	x = tid(self, "x");
	fill_pool(self);
	while (hyper_step_begin(self->ctx) >= 0)
		ASSERT_EQ(0, hyper_step_end(self->ctx));
	ASSERT_EQ(0, hyper_drain(self->ctx));
	now = bench_now_ns();
	ASSERT_EQ(0, hyper_get_stats(self->ctx, &st));

	for (unsigned int i = 0; i < l->n; i++) {
		const struct hyper_event *ev = &l->ev[i];

		EXPECT_GE(now, ev->time_ns);
		if (ev->resident_bytes > peak)
			peak = ev->resident_bytes;
		switch (ev->type) {
		case HYPER_EV_XFER_START:
			starts++;
			EXPECT_EQ(ev->op == HYPER_OP_PREFETCH ? w : x,
				  (int)ev->tensor);
			EXPECT_EQ(tbytes(self, ev->tensor), ev->bytes);
			start[ev->op == HYPER_OP_STORE] = ev->time_ns;
			break;
		case HYPER_EV_XFER_DONE:
			dones++;
			EXPECT_EQ(tbytes(self, ev->tensor), ev->bytes);
			/* A real completion time: after its start, not later. */
			EXPECT_LE(start[ev->op == HYPER_OP_STORE], ev->time_ns);
			break;
		case HYPER_EV_STALL_BEGIN:
			stalls++;
			break;
		}
	}
	EXPECT_EQ(2, starts);
	EXPECT_EQ(2, dones);
	EXPECT_EQ(st.nr_stalls, stalls);
	EXPECT_EQ(st.peak_resident_bytes, peak);
	EXPECT_EQ(0, l->ev[l->n - 1].resident_bytes);
	EXPECT_EQ(-EINVAL, hyper_set_event_fn(NULL, log_event, l));
	free(l);
}

TEST_F(exec, transfer_error_is_sticky)
{
	char msg[128];
	int w, err;

	ASSERT_EQ(0, setup(_metadata, self, "{" HDR "'tensors':[" T("w", 65536, "pool") "],"
			   "'steps':[{'op':'s0','before':[" PF("w") "],'uses':['w']}]}", MiB));
	ASSERT_EQ(0, hyper_prepare(self->ctx));
	w = tid(self, "w");
	if (test_backend == HYPER_BACKEND_SHMEM) {
		/* The pool cannot shrink under the copy worker's mapping. */
		EXPECT_EQ(-1, ftruncate(self->ctx->fd, 0));
		EXPECT_EQ(EPERM, errno);
		/* The copy worker dies half-way through the copy. */
		hx_cw_stop(self->ctx->cw);
		ASSERT_EQ(0, hx_cw_start(&(struct hyper_copy_opts){
				.engine = HYPER_COPY_WORKER, .nr_workers = 1,
				.flags = HYPER_COPY_TEST_DIE },
				-1, self->ctx->cq_entries, &self->ctx->cw));
		err = -ECANCELED;
	} else {
		/* A region freed under us: the module no longer knows it. */
		struct hyper_free f = { .handle = self->ctx->regions->handle };

		ASSERT_EQ(0, ioctl(self->ctx->fd, HYPER_IOC_FREE, &f));
		err = -ENOENT;
	}
	snprintf(msg, sizeof(msg), "prefetch of tensor \"w\" failed: %s",
		 strerror(-err));
	EXPECT_EQ(err, hyper_step_begin(self->ctx));
	EXPECT_STREQ(msg, hyper_last_error(self->ctx));
	EXPECT_EQ(err, hyper_step_begin(self->ctx));
	EXPECT_EQ(err, hyper_wait_tensor(self->ctx, w));
	if (test_backend != HYPER_BACKEND_SHMEM)
		return;
	/* Not resident: its bytes never all arrived. */
	EXPECT_EQ(NULL, hyper_tensor_ptr(self->ctx, w));
	/* hyper_rewind() replaces the dead worker. */
	ASSERT_EQ(0, hyper_rewind(self->ctx));
	ASSERT_EQ(0, hyper_step_begin(self->ctx));
	EXPECT_NE(NULL, hyper_tensor_ptr(self->ctx, w));
}

HYPER_TEST_MAIN
