// SPDX-License-Identifier: GPL-2.0
/*
 * make bench-native, part 1: the shmem copy path against memcpy, natively.
 *
 * The executor (the "compute" thread) runs on CPU COMPUTE, the copy path
 * on CPU COPY.  For each size from 4 KiB to 256 MiB and each engine
 * (worker, uring, sqpoll), a one-tensor schedule is prefetched over and
 * over; the time of hyper_step_begin() (issue, copy, wait) is set
 * against a plain memcpy of the same size on the copy CPU, interleaved
 * run by run.  Then the limit: memcpy bandwidth on the copy CPU alone and
 * while an SGEMM runs on the compute CPU, the SGEMM rate alone and with
 * the copies, and the share of its CPU each thread really got (the host
 * is shared).  Prints a table, "ok"/"not ok" per target, JSON to FILE.
 *
 * usage: bench_native [--json FILE] [--quick] [--nt BYTES]
 *   --nt: the worker's non-temporal threshold (hyper_copy_opts.nt_bytes)
 * exit status: 0 all targets met, 1 a target missed, 2 setup failed
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cblas.h>
#include <hyper/hyper.h>

#include "hyper_bench.h"

#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define MAX_SIZE	(256 * MiB)
#define NR_SIZES	9		/* 4 KiB, x4 ... 256 MiB */
#define MAX_RUNS	201
#define BLOCK		5

static int compute_cpu, copy_cpu;
static bool quick;
static uint64_t nt_bytes;	/* 0: libhyper's default */
static char *dev;

static const char *const engine_name[] = { "default", "uring", "sqpoll", "worker" };
static const int engines[] = { HYPER_COPY_WORKER, HYPER_COPY_URING, HYPER_COPY_SQPOLL };
#define NR_ENGINES	3

struct result {
	double memcpy_ns[NR_SIZES];
	double xfer_ns[NR_ENGINES][NR_SIZES];
};

static uint64_t size_of(int i)
{
	return 4 * KiB << (2 * i);
}

static int runs_for(uint64_t size)
{
	uint64_t r = (quick ? 256 : 1024) * MiB / size;

	return r < 10 ? 10 : r > MAX_RUNS ? MAX_RUNS : (int)r;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- a plain memcpy loop on the copy CPU ------------------------------ */

struct memcpy_job {
	void *dst;
	const void *src;
	uint64_t size;
	int runs;
	double median_ns;
	double total_ns;	/* wall time of the whole loop */
	double cpu_share;	/* thread CPU time / wall time */
	double deadline;	/* or loop until bench_now() passes it */
};

static void *memcpy_loop(void *arg)
{
	struct memcpy_job *j = arg;
	double v[MAX_RUNS], c0, t0 = bench_now();
	int i = 0;

	pin(copy_cpu);
	c0 = thread_cpu_ns();
	for (i = 0; i < j->runs || (j->deadline && bench_now() < j->deadline); i++) {
		uint64_t a = bench_now();

		memcpy(j->dst, j->src, j->size);
		__asm__ volatile("" ::: "memory");
		if (i < MAX_RUNS)
			v[i] = bench_now() - a;
	}
	j->total_ns = bench_now() - t0;
	j->cpu_share = (thread_cpu_ns() - c0) / j->total_ns;
	j->median_ns = median(v, i < MAX_RUNS ? i : MAX_RUNS);
	j->runs = i;
	return NULL;
}

/* ---- a memcpy helper on the copy CPU, timed there, on request -------- */

struct mc_helper {
	pthread_t tid;
	int req;		/* 1: copy, 2: exit; 0 when done */
	void *dst;
	const void *src;
	uint64_t size;
	double ns;
};

static void *mc_helper_fn(void *arg)
{
	struct mc_helper *h = arg;
	int req;

	pin(copy_cpu);
	for (;;) {
		/* Spins like an awake copy thread; sleeps between sizes. */
		for (int i = 0; !(req = __atomic_load_n(&h->req, __ATOMIC_ACQUIRE)); i++)
			if (i > 100000)
				usleep(50);
		if (req == 2)
			return NULL;
		uint64_t t0 = bench_now();

		memcpy(h->dst, h->src, h->size);
		__asm__ volatile("" ::: "memory");
		h->ns = bench_now() - t0;
		__atomic_store_n(&h->req, 0, __ATOMIC_RELEASE);
	}
}

static double mc_time(struct mc_helper *h, void *dst, const void *src, uint64_t size)
{
	h->dst = dst;
	h->src = src;
	h->size = size;
	__atomic_store_n(&h->req, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->req, __ATOMIC_ACQUIRE))
		;
	return h->ns;
}

/* ---- the copy path: one prefetch, from issue to the operator's start -- */

struct eng_ctx {
	struct hyper_ctx *ctx;
	struct hyper_schedule *s;
};

static int eng_open(int engine, uint64_t size, struct eng_ctx *e)
{
	struct hyper_open_opts o = { .backend = HYPER_BACKEND_SHMEM,
				     .pool_bytes = 2 * MAX_SIZE };
	struct hyper_copy_opts c = { .engine = engine };
	struct iovec iov = { dev, MAX_SIZE };
	char json[512], err[256];
	int ret;

	if (engine == HYPER_COPY_WORKER) {
		c.nr_workers = 1;
		c.nr_cpus = 1;
		c.cpus = &copy_cpu;
		c.nt_bytes = nt_bytes;
	} else if (engine == HYPER_COPY_SQPOLL) {
		c.nr_cpus = 1;
		c.cpus = &copy_cpu;
	}
	snprintf(json, sizeof(json),
		 "{\"format\":\"hyper-schedule\",\"version\":1,\"tensors\":"
		 "[{\"id\":\"t\",\"bytes\":%llu,\"kind\":\"weight\",\"home\":\"pool\"}],"
		 "\"steps\":[{\"op\":\"use\",\"before\":[{\"op\":\"prefetch\",\"tensor\":\"t\"}],"
		 "\"uses\":[\"t\"],\"after\":[{\"op\":\"detach\",\"tensor\":\"t\"}]}]}",
		 (unsigned long long)size);
	ret = hyper_schedule_parse(json, strlen(json), &e->s, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bench_native: %s\n", err);
		return ret;
	}
	ret = hyper_open(&e->ctx, &o);
	if (!ret && (ret = hyper_set_copy_engine(e->ctx, &c)) == 0 &&
	    (ret = hyper_register_buffers(e->ctx, &iov, 1)) == 0 &&
	    (ret = hyper_set_arena(e->ctx, dev, MAX_SIZE)) == 0 &&
	    (ret = hyper_attach(e->ctx, e->s)) == 0)
		ret = hyper_prepare(e->ctx);
	if (ret) {
		fprintf(stderr, "bench_native: %s: %s\n", engine_name[engine],
			e->ctx ? hyper_last_error(e->ctx) : hyper_strerror(ret));
		return ret;
	}
	memset(hyper_tensor_pool_ptr(e->ctx, 0), 0x5a, size);
	return 0;
}

static int eng_step(struct eng_ctx *e, double *ns)
{
	uint64_t t0;
	int ret = hyper_rewind(e->ctx);

	t0 = bench_now();
	if (!ret && (ret = hyper_step_begin(e->ctx)) == 0)
		*ns = bench_now() - t0;
	if (!ret)
		ret = hyper_step_end(e->ctx);
	if (ret)
		fprintf(stderr, "bench_native: %s\n", hyper_last_error(e->ctx));
	return ret;
}

/*
 * One size: memcpy and the three engines, interleaved run by run so that
 * the host's load (shared with other tenants) falls on all of them alike.
 */
static int measure_size(struct mc_helper *h, int si, struct result *r)
{
	uint64_t size = size_of(si);
	int runs = runs_for(size), ret = 0;
	static double v[NR_ENGINES + 1][MAX_RUNS];
	struct eng_ctx e[NR_ENGINES] = { 0 };

	for (int k = 0; k < NR_ENGINES && !ret; k++)
		ret = eng_open(engines[k], size, &e[k]);
	/*
	 * Blocks of BLOCK runs back to back, as a running model issues them
	 * (a copy thread between two of them stays awake); blocks rotate.
	 */
	for (int b = 0; b < runs && !ret; b += BLOCK) {
		int n = runs - b < BLOCK ? runs - b : BLOCK;

		for (int i = b; i < b + n; i++)
			v[0][i] = mc_time(h, dev, hyper_tensor_pool_ptr(e[0].ctx, 0), size);
		for (int k = 0; k < NR_ENGINES && !ret; k++)
			for (int i = b; i < b + n && !ret; i++)
				ret = eng_step(&e[k], &v[k + 1][i]);
	}
	if (!ret) {
		r->memcpy_ns[si] = median(v[0], runs);
		for (int k = 0; k < NR_ENGINES; k++)
			r->xfer_ns[k][si] = median(v[k + 1], runs);
	}
	for (int k = 0; k < NR_ENGINES; k++) {
		hyper_close(e[k].ctx);
		hyper_schedule_free(e[k].s);
	}
	return ret;
}

/* ---- the limit: bandwidth and CPU with both running ------------------- */

struct gemm_job {
	int n;
	float *a, *b, *c;
	double gflops;
	double cpu_share;
	volatile bool *stop;
	double seconds;		/* run at least this long */
};

static void *gemm_loop(void *arg)
{
	struct gemm_job *g = arg;
	double t0, c0, flops = 0;

	pin(compute_cpu);
	t0 = bench_now();
	c0 = thread_cpu_ns();
	while (!*g->stop || bench_now() - t0 < g->seconds * 1e9) {
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n,
			    g->n, 1.0f, g->a, g->n, g->b, g->n, 0.0f, g->c, g->n);
		flops += 2.0 * g->n * g->n * g->n;
		if (*g->stop && bench_now() - t0 >= g->seconds * 1e9)
			break;
	}
	g->gflops = flops / (bench_now() - t0);
	g->cpu_share = (thread_cpu_ns() - c0) / (bench_now() - t0);
	return NULL;
}

struct limit {
	double copy_alone_gbs, copy_with_gemm_gbs;
	double copy_share_alone, copy_share_with_gemm;
	double gemm_alone_gflops, gemm_with_copy_gflops;
	double gemm_share_alone, gemm_share_with_copy;
};

static int measure_limit(struct limit *l, void *src)
{
	const int n = 512;
	volatile bool stop = false;
	struct gemm_job g = { n, NULL, NULL, NULL, 0, 0, &stop, quick ? 0.5 : 1.5 };
	struct memcpy_job j = { dev, src, 16 * MiB, 0, 0, 0, 0, 0 };
	pthread_t gt, ct;

	g.a = calloc((size_t)n * n, sizeof(float));
	g.b = calloc((size_t)n * n, sizeof(float));
	g.c = calloc((size_t)n * n, sizeof(float));
	if (!g.a || !g.b || !g.c)
		return -ENOMEM;
	/* The copies alone, then the SGEMM alone, then both. */
	j.deadline = bench_now() + g.seconds * 1e9;
	pthread_create(&ct, NULL, memcpy_loop, &j);
	pthread_join(ct, NULL);
	l->copy_alone_gbs = j.size / j.median_ns;
	l->copy_share_alone = j.cpu_share;
	stop = true;
	pthread_create(&gt, NULL, gemm_loop, &g);
	pthread_join(gt, NULL);
	l->gemm_alone_gflops = g.gflops;
	l->gemm_share_alone = g.cpu_share;
	stop = false;
	j.deadline = bench_now() + g.seconds * 1e9;
	pthread_create(&gt, NULL, gemm_loop, &g);
	pthread_create(&ct, NULL, memcpy_loop, &j);
	pthread_join(ct, NULL);
	stop = true;
	pthread_join(gt, NULL);
	l->copy_with_gemm_gbs = j.size / j.median_ns;
	l->copy_share_with_gemm = j.cpu_share;
	l->gemm_with_copy_gflops = g.gflops;
	l->gemm_share_with_copy = g.cpu_share;
	free(g.a);
	free(g.b);
	free(g.c);
	return 0;
}

static void human(char *buf, size_t len, uint64_t b)
{
	if (b >= MiB)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(b / MiB));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(b / KiB));
}

int main(int argc, char **argv)
{
	const char *json_path = NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	static struct result r;
	struct mc_helper h = { 0 };
	struct limit l;
	int failed = 0, nt = 0;
	double worst_ratio = 1e9, worst_over = 0, over[NR_ENGINES];
	FILE *js;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_path = argv[++i];
		else if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--nt") && i + 1 < argc)
			nt_bytes = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: bench_native [--json FILE] [--quick]\n");
			return 2;
		}
	}
	compute_cpu = 0;
	copy_cpu = ncpu > 1 ? 1 : 0;
	openblas_set_num_threads(1);
	pin(compute_cpu);
	dev = mmap(NULL, MAX_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (dev == MAP_FAILED)
		return 2;
	memset(dev, 0, MAX_SIZE);
	if (pthread_create(&h.tid, NULL, mc_helper_fn, &h))
		return 2;

	printf("# bench-native: %ld CPUs; the executor (compute) on CPU %d, the copy path on CPU %d%s\n",
	       ncpu, compute_cpu, copy_cpu,
	       ncpu > 1 ? "" : " (one CPU: they share it)");
	printf("# copy engines: worker = libhyper's copy thread pinned to CPU %d; uring = io-wq\n"
	       "# (unpinned kernel threads); sqpoll = an SQPOLL thread on CPU %d.  Times are\n"
	       "# hyper_step_begin() of a one-prefetch step (issue, copy, wait), medians.\n",
	       copy_cpu, copy_cpu);
	printf("#\n# %-8s %10s | %10s %10s %10s | %8s %8s %8s\n", "size", "memcpy", "worker",
	       "uring", "sqpoll", "w/memcpy", "u/memcpy", "s/memcpy");
	for (int si = 0; si < NR_SIZES; si++) {
		char sz[32];

		if (measure_size(&h, si, &r))
			return 2;
		human(sz, sizeof(sz), size_of(si));
		printf("# %-8s %7.1f us | %7.1f us %7.1f us %7.1f us | %8.2f %8.2f %8.2f\n",
		       sz, r.memcpy_ns[si] / 1e3, r.xfer_ns[0][si] / 1e3,
		       r.xfer_ns[1][si] / 1e3, r.xfer_ns[2][si] / 1e3,
		       r.memcpy_ns[si] / r.xfer_ns[0][si], r.memcpy_ns[si] / r.xfer_ns[1][si],
		       r.memcpy_ns[si] / r.xfer_ns[2][si]);
		fflush(stdout);
	}
	for (int e = 0; e < NR_ENGINES; e++)
		over[e] = r.xfer_ns[e][0] - r.memcpy_ns[0];
	/* The default engine (worker) is the one judged. */
	for (int si = 0; si < NR_SIZES; si++) {
		double ratio = r.memcpy_ns[si] / r.xfer_ns[0][si];
		double o = r.xfer_ns[0][si] - r.memcpy_ns[si];

		if (size_of(si) >= MiB && ratio < worst_ratio)
			worst_ratio = ratio;
		if (size_of(si) < MiB && o > worst_over)
			worst_over = o;
	}
	__atomic_store_n(&h.req, 2, __ATOMIC_RELEASE);
	pthread_join(h.tid, NULL);
	if (measure_limit(&l, dev + MAX_SIZE / 2))
		return 2;
	printf("#\n# per-transfer overhead at 4 KiB (copy-path time - memcpy time): worker %.2f us, uring %.2f us, sqpoll %.2f us\n",
	       over[0] / 1e3, over[1] / 1e3, over[2] / 1e3);
	printf("# the limit, 16 MiB memcpy on CPU %d and a 512^3 SGEMM loop on CPU %d:\n",
	       copy_cpu, compute_cpu);
	printf("#   memcpy alone      %6.2f GB/s, with the SGEMM running %6.2f GB/s (%.0f%%)\n",
	       l.copy_alone_gbs, l.copy_with_gemm_gbs,
	       100 * l.copy_with_gemm_gbs / l.copy_alone_gbs);
	printf("#   SGEMM alone       %6.1f GFLOP/s, with the copies running %6.1f GFLOP/s (%.0f%%)\n",
	       l.gemm_alone_gflops, l.gemm_with_copy_gflops,
	       100 * l.gemm_with_copy_gflops / l.gemm_alone_gflops);
	printf("#   CPU each thread got (thread CPU time / wall time; the host is shared):\n"
	       "#     copy %.0f%% alone, %.0f%% with the SGEMM; SGEMM %.0f%% alone, %.0f%% with the copies\n",
	       100 * l.copy_share_alone, 100 * l.copy_share_with_gemm,
	       100 * l.gemm_share_alone, 100 * l.gemm_share_with_copy);

	printf("%s %d - copy throughput >= 0.9x memcpy for 1 MiB and more: worst %.2fx (worker)\n",
	       worst_ratio >= 0.9 ? "ok" : "not ok", ++nt, worst_ratio);
	failed |= worst_ratio < 0.9;
	printf("%s %d - per-transfer overhead <= 2 us below 1 MiB: worst %.2f us (worker)\n",
	       worst_over <= 2000 ? "ok" : "not ok", ++nt, worst_over / 1e3);
	failed |= worst_over > 2000;

	if (json_path) {
		js = fopen(json_path, "w");
		if (!js)
			return 2;
		fprintf(js, "{\"bench\":\"native-copy\",\"cpus\":%ld,\"compute_cpu\":%d,\"copy_cpu\":%d,\"sizes\":[",
			ncpu, compute_cpu, copy_cpu);
		for (int si = 0; si < NR_SIZES; si++) {
			fprintf(js, "%s{\"bytes\":%llu,\"memcpy_ns\":%.0f", si ? "," : "",
				(unsigned long long)size_of(si), r.memcpy_ns[si]);
			for (int e = 0; e < NR_ENGINES; e++)
				fprintf(js, ",\"%s_ns\":%.0f", engine_name[engines[e]],
					r.xfer_ns[e][si]);
			fprintf(js, "}");
		}
		fprintf(js, "],\"overhead_4k_ns\":{\"worker\":%.0f,\"uring\":%.0f,\"sqpoll\":%.0f},",
			over[0], over[1], over[2]);
		fprintf(js, "\"limit\":{\"memcpy_alone_gbs\":%.3f,\"memcpy_with_gemm_gbs\":%.3f,"
			"\"gemm_alone_gflops\":%.2f,\"gemm_with_copy_gflops\":%.2f,"
			"\"copy_cpu_share_alone\":%.3f,\"copy_cpu_share_with_gemm\":%.3f,"
			"\"gemm_cpu_share_alone\":%.3f,\"gemm_cpu_share_with_copy\":%.3f},",
			l.copy_alone_gbs, l.copy_with_gemm_gbs, l.gemm_alone_gflops,
			l.gemm_with_copy_gflops, l.copy_share_alone, l.copy_share_with_gemm,
			l.gemm_share_alone, l.gemm_share_with_copy);
		fprintf(js, "\"targets\":{\"copy_vs_memcpy_worst\":%.3f,\"overhead_worst_ns\":%.0f,\"ok\":%s}}\n",
			worst_ratio, worst_over, failed ? "false" : "true");
		fclose(js);
	}
	return failed ? 1 : 0;
}
