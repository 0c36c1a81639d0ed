// SPDX-License-Identifier: GPL-2.0
/*
 * The CUDA device (HYPER_DEVICE_CUDA): transfers of 4 KiB to 64 MiB (1 GiB
 * on a GPU) checked byte for byte, the GPU-side ordering (a use waits for
 * its prefetch on the compute stream, a store for the kernels that wrote
 * its tensor, a prefetch into freed space for the kernels that read it),
 * hyper_wait_tensor_stream() on another stream, the pool pinned in
 * chunks, bad input, and -ENODEV with the reason when there is no CUDA
 * runtime library or no device.
 *
 * In `make check` libhyper loads the fake runtime (libfake_cudart.so, set
 * as HYPER_CUDART here), which makes libhyper's copies slow so that a
 * missing ordering shows as stale bytes every time.  With
 * HYPER_TEST_REAL_CUDA=1 (tools/gpu/check.sh) it loads the real
 * libcudart and a GPU; the tests that need the fake's knobs skip.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "device-cuda.h"

#define KiB	(1ULL << 10)
#define MiB	(1ULL << 20)

typedef int (*fn_malloc)(void **, size_t);
typedef int (*fn_free)(void *);
typedef int (*fn_stream)(void **);
typedef int (*fn_sync)(void *);
typedef int (*fn_copy)(void *, const void *, size_t, int, void *);
typedef int (*fn_host)(void *, void (*)(void *), void *);

/* The test's own handle on the runtime libhyper loads. */
static struct {
	void *dl;
	bool fake;
	fn_malloc cudaMalloc, cudaMallocHost;
	fn_free cudaFree, cudaFreeHost;
	fn_stream cudaStreamCreate;
	fn_sync cudaStreamDestroy, cudaStreamSynchronize;
	fn_copy cudaMemcpyAsync;
	fn_host cudaLaunchHostFunc;
	void (*stats)(uint64_t s[4]);
} rt;

#define H2D	1
#define D2H	2

static bool real_cuda(void)
{
	const char *v = getenv("HYPER_TEST_REAL_CUDA");

	return v && *v == '1';
}

static int load_rt(void)
{
	const char *path = getenv("HYPER_CUDART");

	if (rt.dl)
		return 0;
	rt.dl = dlopen(path && *path ? path : "libcudart.so.13", RTLD_NOW);
	if (!rt.dl && !(path && *path))
		rt.dl = dlopen("libcudart.so", RTLD_NOW);
	if (!rt.dl)
		return -1;
#define SYM(n) (*(void **)&rt.n = dlsym(rt.dl, #n))
	if (!SYM(cudaMalloc) || !SYM(cudaMallocHost) || !SYM(cudaFree) ||
	    !SYM(cudaFreeHost) || !SYM(cudaStreamCreate) ||
	    !SYM(cudaStreamDestroy) || !SYM(cudaStreamSynchronize) ||
	    !SYM(cudaMemcpyAsync) || !SYM(cudaLaunchHostFunc))
		return -1;
#undef SYM
	*(void **)&rt.stats = dlsym(rt.dl, "fake_cudart_stats");
	rt.fake = rt.stats != NULL;
	return 0;
}

static void cuda_opts(struct hyper_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = HYPER_BACKEND_SHMEM;
	o->device_kind = HYPER_DEVICE_CUDA;
	o->pool_bytes = real_cuda() ? 4ULL << 30 : 256ULL << 20;
}

/* Kernel stand-in: the compute stream is busy for a while. */
static void slow(void *arg)
{
	usleep((useconds_t)(uintptr_t)arg);
}

/*
 * Step 0 reads w and writes a, slowly; a is stored, w and a dropped, and
 * step 1 reads v, prefetched into the space they held.  @between: w and a
 * are dropped by step 1, and read by kernels queued between the steps.
 */
#define DROP_WA	"{'op':'detach','tensor':'w'},{'op':'detach','tensor':'a'}"

static int sched_for(uint64_t bytes, bool between, struct hyper_schedule **sp)
{
	unsigned long long n = bytes;
	char j[2048], err[256];
	int ret;

	snprintf(j, sizeof(j), "{" HDR "'tensors':["
		 "{'id':'w','bytes':%llu,'kind':'weight','home':'pool'},"
		 "{'id':'a','bytes':%llu,'kind':'activation','home':'pool'},"
		 "{'id':'v','bytes':%llu,'kind':'weight','home':'pool'}],'steps':["
		 "{'op':'s0','before':[{'op':'prefetch','tensor':'w'}],'uses':['w'],"
		 "'defines':['a'],'after':[{'op':'store','tensor':'a'}%s]},"
		 "{'op':'s1','before':[%s{'op':'prefetch','tensor':'v'}],'uses':['v'],"
		 "'after':[{'op':'detach','tensor':'v'}]}]}",
		 n, n, n, between ? "" : "," DROP_WA, between ? DROP_WA "," : "");
	ret = parse_sq(j, sp, err, sizeof(err));
	if (ret)
		fprintf(stderr, "# schedule: %s\n", err);
	return ret;
}

struct run {
	struct hyper_ctx *ctx;
	uint64_t bytes;
	void *compute;		/* the compute stream */
	bool explicit_wait;	/* HYPER_OPEN_TEST_NO_WAIT + stream waits */
	bool between;		/* w and a read by kernels between the steps */
	char *seen_a;
	char *pat_a;		/* pinned: what step 0 writes into a */
	char *seen_w, *seen_v;	/* pinned: what the steps read */
	int err;
};

static int op(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	struct run *r = arg;
	void *s = r->compute;
	int e = 0;

	/* Without the executor's waits, the step waits on its stream itself. */
	if (r->explicit_wait) {
		e = hyper_wait_tensor_stream(ctx, step ? 2 : 0, s);
		if (e)
			return e;
	}
	if (step == 0) {
		/* Long enough that an unordered store or prefetch runs first. */
		e = rt.cudaLaunchHostFunc(s, slow, (void *)(uintptr_t)(rt.fake ? 60000 : 0));
		if (!e)
			e = rt.cudaMemcpyAsync(hyper_tensor_ptr(ctx, 1), r->pat_a,
					       r->bytes, H2D, s);
		if (!e && !r->between)
			e = rt.cudaMemcpyAsync(r->seen_w, hyper_tensor_ptr(ctx, 0),
					       r->bytes, D2H, s);
	} else if (step == UINT32_MAX) {
		/* Between the steps: slow again, then read w and a. */
		e = rt.cudaLaunchHostFunc(s, slow, (void *)(uintptr_t)(rt.fake ? 60000 : 0));
		if (!e)
			e = rt.cudaMemcpyAsync(r->seen_w, hyper_tensor_ptr(ctx, 0),
					       r->bytes, D2H, s);
		if (!e)
			e = rt.cudaMemcpyAsync(r->seen_a, hyper_tensor_ptr(ctx, 1),
					       r->bytes, D2H, s);
	} else {
		e = rt.cudaMemcpyAsync(r->seen_v, hyper_tensor_ptr(ctx, 2),
				       r->bytes, D2H, s);
	}
	if (e)
		r->err = e;
	return e ? -EIO : 0;
}

/* hyper_run(), or the steps by hand with kernels queued between them. */
static int run_steps(struct run *r)
{
	int ret;

	if (!r->between)
		return hyper_run(r->ctx, op, r);
	for (unsigned int i = 0; i < 2; i++) {
		ret = hyper_step_begin(r->ctx);
		if (ret >= 0)
			ret = op(r->ctx, i, r);
		if (!ret)
			ret = hyper_step_end(r->ctx);
		if (!ret && i == 0)
			ret = op(r->ctx, UINT32_MAX, r);
		if (ret)
			return ret;
	}
	return 0;
}

static void transfer(struct __test_metadata *_metadata, uint64_t bytes,
		     bool own_arena, bool explicit_wait, bool between)
{
	struct hyper_open_opts o;
	struct hyper_schedule *s;
	struct hyper_stats st;
	struct run r = { .bytes = bytes, .explicit_wait = explicit_wait,
			 .between = between };
	uint64_t slot = (bytes + 4095) & ~4095ULL;
	void *arena = NULL;
	int ret;

	ASSERT_EQ(0, load_rt());
	ASSERT_EQ(0, sched_for(bytes, between, &s));
	cuda_opts(&o);
	if (explicit_wait)
		o.flags |= HYPER_OPEN_TEST_NO_WAIT;
	ret = hyper_open(&r.ctx, &o);
	ASSERT_EQ(0, ret) TH_LOG("%s", r.ctx ? hyper_last_error(r.ctx) : "");
	ASSERT_EQ(0, rt.cudaStreamCreate(&r.compute));
	ASSERT_EQ(0, rt.cudaMallocHost((void **)&r.pat_a, bytes));
	ASSERT_EQ(0, rt.cudaMallocHost((void **)&r.seen_w, bytes));
	ASSERT_EQ(0, rt.cudaMallocHost((void **)&r.seen_v, bytes));
	ASSERT_EQ(0, rt.cudaMallocHost((void **)&r.seen_a, bytes));
	memset(r.seen_a, 0, bytes);
	fill_pat(r.pat_a, bytes, 7);
	memset(r.seen_w, 0, bytes);
	memset(r.seen_v, 0, bytes);
	/* Room for two tensors: v takes the place w or a had. */
	if (!own_arena)
		ASSERT_EQ(0, rt.cudaMalloc(&arena, 2 * slot));
	ASSERT_EQ(0, hyper_set_arena(r.ctx, arena, 2 * slot))
		TH_LOG("%s", hyper_last_error(r.ctx));
	ASSERT_EQ(0, hyper_set_compute_stream(r.ctx, r.compute));
	ASSERT_EQ(0, hyper_attach(r.ctx, s));
	ASSERT_EQ(0, hyper_prepare(r.ctx)) TH_LOG("%s", hyper_last_error(r.ctx));
	fill_pat(hyper_tensor_pool_ptr(r.ctx, 0), bytes, 5);
	memset(hyper_tensor_pool_ptr(r.ctx, 1), 0, bytes);
	fill_pat(hyper_tensor_pool_ptr(r.ctx, 2), bytes, 9);

	for (int round = 0; round < 2; round++) {
		ret = run_steps(&r);
		ASSERT_EQ(0, ret) TH_LOG("round %d: %s (CUDA error %d)", round,
					 hyper_last_error(r.ctx), r.err);
		ASSERT_EQ(0, rt.cudaStreamSynchronize(r.compute));
		ASSERT_EQ(0, hyper_drain(r.ctx)) TH_LOG("%s", hyper_last_error(r.ctx));
		/* A use saw its prefetch; v was not overwritten, nor w early. */
		EXPECT_GT(0, check_pat(r.seen_w, bytes, 5)) TH_LOG("w, round %d", round);
		EXPECT_GT(0, check_pat(r.seen_v, bytes, 9)) TH_LOG("v, round %d", round);
		if (between)
			EXPECT_GT(0, check_pat(r.seen_a, bytes, 7)) TH_LOG("seen a, round %d", round);
		/* The store of a copied what the step wrote, not before. */
		EXPECT_GT(0, check_pat(hyper_tensor_pool_ptr(r.ctx, 1), bytes, 7))
			TH_LOG("a, round %d", round);
		memset(hyper_tensor_pool_ptr(r.ctx, 1), 0, bytes);
		memset(r.seen_w, 0, bytes);
		memset(r.seen_v, 0, bytes);
		ASSERT_EQ(0, hyper_rewind(r.ctx));
	}
	ASSERT_EQ(0, hyper_get_stats(r.ctx, &st));
	EXPECT_EQ(2 * 2 * bytes, st.bytes_prefetched);
	EXPECT_EQ(2 * bytes, st.bytes_stored);
	hyper_close(r.ctx);
	hyper_schedule_free(s);
	rt.cudaFree(arena);
	rt.cudaFreeHost(r.pat_a);
	rt.cudaFreeHost(r.seen_w);
	rt.cudaFreeHost(r.seen_v);
	rt.cudaFreeHost(r.seen_a);
	rt.cudaStreamDestroy(r.compute);
}

static const uint64_t sizes[] = {
	4 * KiB, 64 * KiB + 64, 1 * MiB, 16 * MiB + 4 * KiB, 64 * MiB,
};
static const uint64_t gpu_sizes[] = { 256 * MiB, 1024 * MiB };

TEST(transfers)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		TH_LOG("%llu bytes", (unsigned long long)sizes[i]);
		transfer(_metadata, sizes[i], i & 1, false, false);
	}
	if (real_cuda())
		for (size_t i = 0; i < sizeof(gpu_sizes) / sizeof(gpu_sizes[0]); i++) {
			TH_LOG("%llu bytes", (unsigned long long)gpu_sizes[i]);
			transfer(_metadata, gpu_sizes[i], false, false, false);
		}
}

TEST(wait_tensor_stream)
{
	transfer(_metadata, 1 * MiB, false, true, false);
	transfer(_metadata, 4 * KiB, true, true, false);
}

/* Kernels queued between two steps are behind the next step's prefetches. */
TEST(kernels_between_steps)
{
	transfer(_metadata, 4 * KiB, false, false, true);
	transfer(_metadata, 1 * MiB + 64, true, false, true);
}

/* The pool is pinned in calls of the chunk size, and unpinned at close. */
TEST(pinned_pool_chunks)
{
	struct hyper_open_opts o;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	uint64_t before[4], after[4], closed[4];

	ASSERT_EQ(0, load_rt());
	if (!rt.fake)
		SKIP(return, "needs the fake runtime's counters");
	ASSERT_EQ(0, sched_for(5 * MiB + 64, false, &s));
	cuda_opts(&o);
	ASSERT_EQ(0, hyper_open(&ctx, &o));
	hx_cu_test_pin_chunk(ctx, 1 * MiB);
	ASSERT_EQ(0, hyper_set_arena(ctx, NULL, 16 * MiB));
	ASSERT_EQ(0, hyper_attach(ctx, s));
	rt.stats(before);
	ASSERT_EQ(0, hyper_prepare(ctx)) TH_LOG("%s", hyper_last_error(ctx));
	rt.stats(after);
	/* Three tensors of 5 MiB + 64 in one region: 15 calls of 1 MiB, one of 192 bytes. */
	EXPECT_EQ(16ULL, after[0] - before[0]);
	EXPECT_EQ(1 * MiB, after[2]);
	EXPECT_EQ(15 * MiB + 192, after[3] - before[3]);
	hyper_close(ctx);
	rt.stats(closed);
	EXPECT_EQ(before[3], closed[3]);
	EXPECT_EQ(closed[1] - before[1], after[0] - before[0]);
	hyper_schedule_free(s);
}

/* A pool CUDA cannot pin (a PFN mapping) is refused with the reason. */
TEST(pin_refused)
{
	struct hyper_open_opts o;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;

	ASSERT_EQ(0, load_rt());
	if (!rt.fake)
		SKIP(return, "needs the fake runtime's knobs");
	ASSERT_EQ(0, sched_for(4 * KiB, false, &s));
	cuda_opts(&o);
	ASSERT_EQ(0, hyper_open(&ctx, &o));
	ASSERT_EQ(0, hyper_set_arena(ctx, NULL, 1 * MiB));
	ASSERT_EQ(0, hyper_attach(ctx, s));
	setenv("FAKE_CUDART_REGISTER_FAIL", "1", 1);
	EXPECT_EQ(-EOPNOTSUPP, hyper_prepare(ctx));
	unsetenv("FAKE_CUDART_REGISTER_FAIL");
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "cudaHostRegister"))
		TH_LOG("%s", hyper_last_error(ctx));
	hyper_close(ctx);
	hyper_schedule_free(s);
}

TEST(bad_input)
{
	struct hyper_open_opts o;
	struct hyper_ctx *ctx, *host;
	struct hyper_schedule *s;
	struct iovec iov;
	char *mem;
	void *dev;

	ASSERT_EQ(0, load_rt());
	cuda_opts(&o);
	o.device_kind = 7;
	EXPECT_EQ(-EINVAL, hyper_open(&ctx, &o));
	EXPECT_EQ(NULL, ctx);
	test_opts(&o);
	o.device_ordinal = 1;		/* an ordinal for the host */
	EXPECT_EQ(-EINVAL, hyper_open(&ctx, &o));

	cuda_opts(&o);
	o.backend = HYPER_BACKEND_DEFAULT;	/* shmem, whatever /dev/hyper0 */
	ASSERT_EQ(0, hyper_open(&ctx, &o));
	EXPECT_EQ(HYPER_BACKEND_SHMEM, hyper_backend(ctx));
	mem = malloc(1 * MiB);
	ASSERT_NE(NULL, mem);
	iov.iov_base = mem;
	iov.iov_len = 1 * MiB;
	EXPECT_EQ(-EINVAL, hyper_register_buffers(ctx, &iov, 1));
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "hyper_set_arena"));
	/* Host memory is not an arena for the GPU. */
	EXPECT_EQ(-EINVAL, hyper_set_arena(ctx, mem, 1 * MiB));
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "not memory of CUDA device 0"))
		TH_LOG("%s", hyper_last_error(ctx));
	EXPECT_EQ(-EINVAL, hyper_set_arena(ctx, NULL, 0));
	ASSERT_EQ(0, rt.cudaMalloc(&dev, 1 * MiB));
	/* Past the allocation's end. */
	EXPECT_EQ(-EINVAL, hyper_set_arena(ctx, dev, 2 * MiB));
	EXPECT_EQ(-EINVAL, hyper_set_copy_engine(ctx, NULL));
	ASSERT_EQ(0, sched_for(4 * KiB, false, &s));
	ASSERT_EQ(0, hyper_attach(ctx, s));
	/* A device copy must be GPU memory. */
	EXPECT_EQ(-EINVAL, hyper_bind_device(ctx, 0, mem));
	EXPECT_EQ(0, hyper_bind_device(ctx, 0, dev));
	EXPECT_EQ(-EINVAL, hyper_wait_tensor_stream(ctx, 0, NULL));	/* not prepared */
	ASSERT_EQ(0, hyper_set_arena(ctx, (char *)dev + 64 * KiB, 512 * KiB));
	ASSERT_EQ(0, hyper_prepare(ctx)) TH_LOG("%s", hyper_last_error(ctx));
	EXPECT_EQ(-ERANGE, hyper_wait_tensor_stream(ctx, 3, NULL));
	EXPECT_EQ(0, hyper_wait_tensor_stream(ctx, 0, NULL));
	EXPECT_EQ(0, hyper_step_begin(ctx));
	EXPECT_EQ(-EBUSY, hyper_set_compute_stream(ctx, NULL));
	EXPECT_EQ(0, hyper_step_end(ctx));
	EXPECT_EQ(0, hyper_drain(ctx));
	hyper_close(ctx);
	hyper_schedule_free(s);
	rt.cudaFree(dev);

	/* The stream calls are for a CUDA context. */
	ASSERT_EQ(0, open_test_ctx(&host));
	EXPECT_EQ(-EOPNOTSUPP, hyper_set_compute_stream(host, NULL));
	EXPECT_NE(NULL, strstr(hyper_last_error(host), "HYPER_DEVICE_CUDA"));
	hyper_close(host);
	EXPECT_EQ(-EINVAL, hyper_set_compute_stream(NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_wait_tensor_stream(NULL, 0, NULL));
	free(mem);
}

/* A CUDA context copies only from the pool it pinned: objects are copied in. */
TEST(shared_objects)
{
	char dir[] = "/tmp/hyper-cuobj-XXXXXX", pat[4 * KiB];
	struct hyper_object_entry e = { .id = "w", .bytes = sizeof(pat) };
	const void *data[1] = { pat };
	struct hyper_open_opts o;
	struct hyper_region *obj;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	void *dev;

	ASSERT_EQ(0, load_rt());
	ASSERT_NE(NULL, mkdtemp(dir));
	cuda_opts(&o);
	o.objects_dir = dir;
	fill_pat(pat, sizeof(pat), 4);
	ASSERT_EQ(0, sched_for(4 * KiB, false, &s));
	ASSERT_EQ(0, rt.cudaMalloc(&dev, 1 * MiB));
	for (int copy = 0; copy < 2; copy++) {
		ASSERT_EQ(0, hyper_open(&ctx, &o));
		if (!copy)
			ASSERT_EQ(0, hyper_object_pack(ctx, "cu-w", &e, data, 1, NULL))
				TH_LOG("%s", hyper_last_error(ctx));
		ASSERT_EQ(0, hyper_object_open(ctx, "cu-w", &obj));
		ASSERT_EQ(0, hyper_object_entry(ctx, obj, 0, &e));
		ASSERT_EQ(0, hyper_attach(ctx, s));
		ASSERT_EQ(0, hyper_set_arena(ctx, dev, 1 * MiB));
		if (!copy) {
			EXPECT_EQ(-EOPNOTSUPP, hyper_bind_object(ctx, obj, 0));
			EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "bind it with HYPER_BIND_OBJECT_COPY"));
			/* Nor one tensor at a time. */
			ASSERT_EQ(0, hyper_bind_pool(ctx, 0, obj, e.offset));
			EXPECT_EQ(-EOPNOTSUPP, hyper_prepare(ctx));
			EXPECT_STREQ("tensor \"w\" is bound to shared object \"cu-w\": a CUDA context copies only from the pool it pinned; bind the object with HYPER_BIND_OBJECT_COPY",
				     hyper_last_error(ctx));
		} else {
			EXPECT_EQ(1, hyper_bind_object(ctx, obj, HYPER_BIND_OBJECT_COPY));
			ASSERT_EQ(0, hyper_prepare(ctx)) TH_LOG("%s", hyper_last_error(ctx));
			EXPECT_EQ(-1, check_pat(hyper_tensor_pool_ptr(ctx, 0), sizeof(pat), 4));
			EXPECT_EQ(0, hyper_object_delete(ctx, "cu-w"));
		}
		hyper_close(ctx);
	}
	hyper_schedule_free(s);
	rt.cudaFree(dev);
	EXPECT_EQ(0, rmdir(dir));
}

static void expect_enodev(struct __test_metadata *_metadata, const struct hyper_open_opts *o,
			  const char *says)
{
	struct hyper_ctx *ctx = NULL;

	EXPECT_EQ(-ENODEV, hyper_open(&ctx, o));
	ASSERT_NE(NULL, ctx);
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), says))
		TH_LOG("%s", hyper_last_error(ctx));
	hyper_close(ctx);
}

TEST(enodev)
{
	const char *was = getenv("HYPER_CUDART");
	char *keep = was ? strdup(was) : NULL;
	struct hyper_open_opts o;

	cuda_opts(&o);
	setenv("HYPER_CUDART", "/nonexistent/libcudart.so.13", 1);
	expect_enodev(_metadata, &o, "no CUDA runtime library found");
	/* A library, but not a CUDA runtime. */
	setenv("HYPER_CUDART", "libm.so.6", 1);
	expect_enodev(_metadata, &o, "lacks cudaGetDeviceCount");
	if (keep)
		setenv("HYPER_CUDART", keep, 1);
	else
		unsetenv("HYPER_CUDART");

	o.device_ordinal = 1000;
	expect_enodev(_metadata, &o, "no CUDA device 1000");
	o.device_ordinal = -1;
	expect_enodev(_metadata, &o, "no CUDA device -1");
	o.device_ordinal = 0;
	if (!real_cuda()) {
		setenv("FAKE_CUDART_DEVICES", "0", 1);
		expect_enodev(_metadata, &o, "no CUDA device");
		unsetenv("FAKE_CUDART_DEVICES");
	}
	free(keep);
}

/* Where the toolkit is here but no GPU: the real runtime, refused. */
TEST(real_runtime_without_gpu)
{
	static const char lib[] = "/usr/local/cuda/lib64/libcudart.so.13";
	const char *was = getenv("HYPER_CUDART");
	char *keep = was ? strdup(was) : NULL;
	struct hyper_open_opts o;

	if (real_cuda() || access(lib, R_OK) || !access("/dev/nvidiactl", F_OK)) {
		free(keep);
		SKIP(return, "needs %s and no GPU", lib);
	}
	cuda_opts(&o);
	setenv("HYPER_CUDART", lib, 1);
	expect_enodev(_metadata, &o, "no CUDA device");
	if (keep)
		setenv("HYPER_CUDART", keep, 1);
	else
		unsetenv("HYPER_CUDART");
	free(keep);
}

int main(int argc, char **argv)
{
#ifdef FAKE_CUDART
	/* make check: the fake, with libhyper's copies made slow. */
	if (!real_cuda()) {
		setenv("HYPER_CUDART", FAKE_CUDART, 0);
		setenv("FAKE_CUDART_NB_DELAY_US", "20000", 0);
	}
#endif
	printf("# CUDA runtime: %s\n", real_cuda() ? "real (HYPER_TEST_REAL_CUDA=1)" :
	       getenv("HYPER_CUDART") ? getenv("HYPER_CUDART") : "libcudart");
	return test_harness_run(argc, argv);
}
