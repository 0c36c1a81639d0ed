// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The "this-machine" profile, measured on the path a run takes.  On a
 * host without an accelerator, libhyper's shmem backend makes ordinary
 * memory the "device" and a memfd the pool, and its copy engine moves
 * the data; so the link is measured through libhyper itself (the engine
 * the run will use, set as it sets it with hyper_set_copy_engine()), and
 * while the executor's thread runs an OpenBLAS SGEMM, as hyper-run's
 * "gemm" compute does between issuing a prefetch and using its tensor:
 * on this machine the copies and the compute share memory bandwidth and,
 * when the host is busy, CPU time, and the link the run sees is the
 * slower one.  The same link alone is kept beside it.
 *
 * The device memory bandwidth is a streaming read, the compute rate what
 * OpenBLAS reaches on one thread on a square SGEMM of 256.  The sizes keep
 * the measurement to seconds under emulation too (the test VM's CPU is
 * QEMU TCG).  Each figure is the median of a few runs: the host is shared.
 *
 * OpenBLAS is loaded only here: linked in, its threads would start with
 * every planning run and spin on this two-core machine.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile/profile.h"

#define READ_BYTES	(64UL << 20)
#define SMALL_BYTES	4096UL
#define DEF_LINK_BYTES	(16UL << 20)
#define MAX_LINK_BYTES	(1UL << 30)
#define DEF_RUNS	7
/* Memory and SGEMM vary less than the link; the test VM's CPU is slow. */
#define HOST_RUNS	5
#define MAX_RUNS	101
#define GEMM_N		256
/* Compute covers this share of the link's time alone (see measure_link). */
#define OVERLAP		0.8

/* cblas_sgemm(), row-major, no transposes: the enum values of cblas.h */
typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k,
			 float alpha, const float *a, int lda, const float *b,
			 int ldb, float beta, float *c, int ldc);

#define ROW_MAJOR	101
#define NO_TRANS	111

struct blas {
	void *lib;
	sgemm_fn sgemm;
	void (*set_threads)(int);
	int (*get_threads)(void);
	int old_threads;
	float *a, *b, *c;	/* GEMM_N x GEMM_N each */
};

/* The executor: its link, what it measured, and what went wrong. */
struct meas {
	const struct hyper_plan_measure_opts *o;
	uint64_t link;
	unsigned int runs;
	struct blas blas;
	struct profile *p;
	uint32_t engine;
	bool blas_found;
	struct hp_err *e;
	int ret;
};

static double read_bps(const uint64_t *buf, size_t words, unsigned int runs)
{
	double v[MAX_RUNS], t;
	volatile uint64_t sink;
	uint64_t sum;
	size_t i;

	for (unsigned int r = 0; r < runs; r++) {
		t = hyper_plan__now_ns();
		sum = 0;
		for (i = 0; i < words; i++)
			sum += buf[i];
		sink = sum;
		v[r] = words * 8.0 / (hyper_plan__now_ns() - t) * 1e9;
	}
	(void)sink;
	return hyper_plan__median(v, runs);
}

/* -ENOMEM with @b to blas_close(); no OpenBLAS is not an error. */
static int blas_open(struct blas *b)
{
	memset(b, 0, sizeof(*b));
	b->lib = dlopen("libopenblas.so.0", RTLD_NOW);
	if (!b->lib)
		return 0;
	b->sgemm = (sgemm_fn)dlsym(b->lib, "cblas_sgemm");
	b->set_threads = (void (*)(int))dlsym(b->lib, "openblas_set_num_threads");
	b->get_threads = (int (*)(void))dlsym(b->lib, "openblas_get_num_threads");
	/* One thread, as the executor's compute; the caller's setting comes back. */
	if (b->set_threads && b->get_threads) {
		b->old_threads = b->get_threads();
		b->set_threads(1);
	}
	b->a = malloc(sizeof(float) * GEMM_N * GEMM_N);
	b->b = malloc(sizeof(float) * GEMM_N * GEMM_N);
	b->c = malloc(sizeof(float) * GEMM_N * GEMM_N);
	if (!b->a || !b->b || !b->c)
		return -ENOMEM;
	for (int i = 0; i < GEMM_N * GEMM_N; i++) {
		b->a[i] = (i % 7) * 0.25f;
		b->b[i] = (i % 5) * 0.5f;
	}
	return 0;
}

static void blas_close(struct blas *b)
{
	if (b->set_threads && b->old_threads > 0)
		b->set_threads(b->old_threads);
	free(b->a);
	free(b->b);
	free(b->c);
	if (b->lib)
		dlclose(b->lib);
}

static void gemm(const struct blas *b, int n)
{
	b->sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, b->a, n, b->b,
		 n, 0.0f, b->c, n);
}

static double gemm_flops(const struct blas *b, unsigned int runs)
{
	double v[MAX_RUNS], t;

	if (!b->sgemm)
		return 1e9;	/* said in the profile's desc */
	for (unsigned int r = 0; r < runs; r++) {
		t = hyper_plan__now_ns();
		gemm(b, GEMM_N);
		v[r] = 2.0 * GEMM_N * GEMM_N * GEMM_N / (hyper_plan__now_ns() - t) * 1e9;
	}
	return hyper_plan__median(v, runs);
}

/*
 * The executor's compute until @until: SGEMMs small enough (a quarter of
 * the time at most) not to overshoot it by much.
 */
static void compute_until(const struct meas *m, double until)
{
	double left = until - hyper_plan__now_ns();
	int n = GEMM_N;

	if (!m->blas.sgemm || left <= 0)
		return;
	while (n > 32 && 2.0 * n * n * n / m->p->flops * 1e9 > left / 4)
		n /= 2;
	while (hyper_plan__now_ns() < until)
		gemm(&m->blas, n);
}

/* ---- the link, through libhyper --------------------------------------- */

enum { T_BIG, T_SMALL, T_OUT };
enum { S_H2D, S_USE, S_H2D_SMALL, S_USE_SMALL, S_D2H };

struct link {
	struct hyper_ctx *ctx;
	struct hyper_schedule *s;
	void *dev;
	size_t dev_bytes;
};

/*
 * A prefetch of "big" issued in one step and used in the next (the
 * executor computes in between), the same for a page-sized "small" (the
 * per-transfer latency), and a store of the device-born "out".
 */
static int link_schedule(uint64_t bytes, struct hyper_schedule **s,
			 struct hp_err *e)
{
	char json[1024], err[256];
	int n;

	n = snprintf(json, sizeof(json),
		     "{\"format\":\"hyper-schedule\",\"version\":1,\"name\":\"measure-profile\","
		     "\"tensors\":["
		     "{\"id\":\"big\",\"bytes\":%llu,\"kind\":\"weight\",\"home\":\"pool\"},"
		     "{\"id\":\"small\",\"bytes\":%lu,\"kind\":\"weight\",\"home\":\"pool\"},"
		     "{\"id\":\"out\",\"bytes\":%llu,\"kind\":\"activation\",\"home\":\"device\"}],"
		     "\"steps\":["
		     "{\"op\":\"h2d\",\"before\":[{\"op\":\"prefetch\",\"tensor\":\"big\"}]},"
		     "{\"op\":\"use\",\"uses\":[\"big\"],\"after\":[{\"op\":\"detach\",\"tensor\":\"big\"}]},"
		     "{\"op\":\"h2d-small\",\"before\":[{\"op\":\"prefetch\",\"tensor\":\"small\"}]},"
		     "{\"op\":\"use-small\",\"uses\":[\"small\"],\"after\":[{\"op\":\"detach\",\"tensor\":\"small\"}]},"
		     "{\"op\":\"d2h\",\"after\":[{\"op\":\"store\",\"tensor\":\"out\"}]}]}",
		     (unsigned long long)bytes, SMALL_BYTES, (unsigned long long)bytes);
	if (hyper_schedule_parse(json, (size_t)n, s, err, sizeof(err)))
		return hyper_plan__errf(e, "measuring the link: %s", err), -EINVAL;
	return 0;
}

static int hx_fail(struct link *l, int ret, const char *what, struct hp_err *e)
{
	hyper_plan__errf(e, "measuring the link: %s: %s", what,
		l->ctx ? hyper_last_error(l->ctx) : hyper_strerror(ret));
	return ret;
}

static int link_open(const struct meas *m, struct link *l, struct hp_err *e)
{
	struct hyper_open_opts oo = { .backend = HYPER_BACKEND_SHMEM };
	struct iovec iov;
	int ret;

	memset(l, 0, sizeof(*l));
	ret = link_schedule(m->link, &l->s, e);
	if (ret)
		return ret;
	/* Both big tensors resident at once, each on its own 2 MiB boundary. */
	l->dev_bytes = 2 * m->link + (8UL << 20);
	l->dev = mmap(NULL, l->dev_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->dev == MAP_FAILED) {
		l->dev = NULL;
		return hyper_plan__errf(e, "measuring the link: cannot map %zu bytes of \"device\" memory for link_bytes %llu: %s; give a smaller link_bytes",
			       l->dev_bytes, (unsigned long long)m->link,
			       strerror(errno)), -ENOMEM;
	}
	memset(l->dev, 0, l->dev_bytes);
	ret = hyper_open(&l->ctx, &oo);
	if (ret)
		return hyper_plan__errf(e, "measuring the link: cannot open libhyper's shmem backend (its pool is a memfd, its copies io_uring or a copy thread): %s; allow memfd_create and io_uring here, or plan with a profile file (--profile-file)",
			       hyper_strerror(ret)), ret;
	if (m->o->copy && (ret = hyper_set_copy_engine(l->ctx, m->o->copy)))
		return hx_fail(l, ret, "the copy engine (hyper_copy_opts)", e);
	iov.iov_base = l->dev;
	iov.iov_len = l->dev_bytes;
	if ((ret = hyper_register_buffers(l->ctx, &iov, 1)) ||
	    (ret = hyper_set_arena(l->ctx, l->dev, l->dev_bytes)) ||
	    (ret = hyper_attach(l->ctx, l->s)) ||
	    (ret = hyper_prepare(l->ctx)))
		return hx_fail(l, ret, "setting up", e);
	/* The pool's pages exist before the first copy, as a run's weights do. */
	for (unsigned int t = T_BIG; t <= T_OUT; t++) {
		void *pool = hyper_tensor_pool_ptr(l->ctx, t);

		if (pool)
			memset(pool, 0x5a, t == T_SMALL ? SMALL_BYTES : m->link);
	}
	return 0;
}

static void link_close(struct link *l)
{
	hyper_close(l->ctx);
	hyper_schedule_free(l->s);
	if (l->dev)
		munmap(l->dev, l->dev_bytes);
}

struct sample {
	double h2d_ns, small_ns, d2h_ns;
};

static int step(struct link *l)
{
	int ret = hyper_step_begin(l->ctx);

	return ret < 0 ? ret : hyper_step_end(l->ctx);
}

/*
 * One pass over the schedule.  A transfer's time is from before the call
 * that issues it to the return of the one that waits for it, as the
 * executor sees it; with @c_h2d or @c_d2h the executor computes that long
 * in between.  The compute stops short of the transfer's time alone
 * (OVERLAP of it), so that the wait, not the compute, ends the interval.
 */
static int one_pass(const struct meas *m, struct link *l, double c_h2d,
		    double c_d2h, struct sample *s)
{
	double t0;
	int ret;

	ret = hyper_rewind(l->ctx);
	if (ret)
		return ret;
	t0 = hyper_plan__now_ns();
	ret = hyper_step_begin(l->ctx);
	if (ret < 0)
		return ret;
	compute_until(m, t0 + c_h2d);
	if ((ret = hyper_step_end(l->ctx)) || (ret = hyper_step_begin(l->ctx)) < 0)
		return ret;
	s->h2d_ns = hyper_plan__now_ns() - t0;
	if ((ret = hyper_step_end(l->ctx)))
		return ret;

	t0 = hyper_plan__now_ns();
	if ((ret = step(l)) || (ret = hyper_step_begin(l->ctx)) < 0)
		return ret;
	s->small_ns = hyper_plan__now_ns() - t0;
	if ((ret = hyper_step_end(l->ctx)))
		return ret;

	ret = hyper_step_begin(l->ctx);
	if (ret < 0)
		return ret;
	t0 = hyper_plan__now_ns();
	if ((ret = hyper_step_end(l->ctx)))
		return ret;
	compute_until(m, t0 + c_d2h);
	if ((ret = hyper_drain(l->ctx)))
		return ret;
	s->d2h_ns = hyper_plan__now_ns() - t0;
	return 0;
}

struct figures {
	double h2d_bps, d2h_bps, latency_ns;
	double h2d_ns, d2h_ns;	/* medians of one transfer */
};

static int measure_link(const struct meas *m, struct link *l, bool compute,
			const struct figures *alone, struct figures *f)
{
	double h2d[MAX_RUNS], d2h[MAX_RUNS], small[MAX_RUNS];
	double c_h2d = compute ? OVERLAP * alone->h2d_ns : 0;
	double c_d2h = compute ? OVERLAP * alone->d2h_ns : 0;
	struct sample s;
	int ret;

	for (unsigned int r = 0; r < m->runs; r++) {
		ret = one_pass(m, l, c_h2d, c_d2h, &s);
		if (ret)
			return hx_fail(l, ret, compute ? "with compute" : "alone", m->e);
		h2d[r] = s.h2d_ns;
		d2h[r] = s.d2h_ns;
		small[r] = s.small_ns;
	}
	f->h2d_ns = hyper_plan__median(h2d, m->runs);
	f->d2h_ns = hyper_plan__median(d2h, m->runs);
	f->h2d_bps = m->link / f->h2d_ns * 1e9;
	f->d2h_bps = m->link / f->d2h_ns * 1e9;
	/* What a page costs beyond its bytes at the link's rate. */
	f->latency_ns = hyper_plan__median(small, m->runs) - SMALL_BYTES / f->h2d_bps * 1e9;
	if (f->latency_ns < 0)
		f->latency_ns = 0;
	return 0;
}

static int measure_links(struct meas *m)
{
	struct figures alone, with;
	struct sample warm;
	struct link l;
	int ret;

	ret = link_open(m, &l, m->e);
	if (!ret)
		m->engine = (uint32_t)hyper_copy_engine(l.ctx);
	/* One pass first: the pool's store pages and the engine's start-up. */
	if (!ret && (ret = one_pass(m, &l, 0, 0, &warm)))
		hx_fail(&l, ret, "first pass", m->e);
	if (!ret)
		ret = measure_link(m, &l, false, NULL, &alone);
	if (!ret && (m->o->flags & HYPER_PLAN_MEASURE_ALONE))
		with = alone;
	else if (!ret)
		ret = measure_link(m, &l, true, &alone, &with);
	link_close(&l);
	if (ret)
		return ret;
	m->p->h2d_bps = with.h2d_bps;
	m->p->d2h_bps = with.d2h_bps;
	m->p->latency_ns = with.latency_ns;
	m->p->h2d_alone_bps = alone.h2d_bps;
	m->p->d2h_alone_bps = alone.d2h_bps;
	m->p->latency_alone_ns = alone.latency_ns;
	return 0;
}

static void *executor(void *arg)
{
	struct meas *m = arg;
	char *buf = malloc(READ_BYTES);

	if (!buf) {
		m->ret = hyper_plan__nomem(m->e);
		return NULL;
	}
	memset(buf, 1, READ_BYTES);
	m->p->mem_bps = read_bps((const uint64_t *)buf, READ_BYTES / 8, HOST_RUNS);
	free(buf);
	if (blas_open(&m->blas)) {
		blas_close(&m->blas);
		m->ret = hyper_plan__nomem(m->e);
		return NULL;
	}
	m->p->flops = gemm_flops(&m->blas, HOST_RUNS);
	m->blas_found = m->blas.sgemm;
	m->ret = measure_links(m);
	blas_close(&m->blas);
	return NULL;
}

/* ---- arguments --------------------------------------------------------- */

static int check_opts(const struct hyper_plan_measure_opts *o, cpu_set_t *set,
		      struct hp_err *e)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t allowed;

	for (size_t i = 0; i < ARRAY_SIZE(o->reserved); i++)
		if (o->reserved[i])
			return hyper_plan__errf(e, "hyper_plan_measure_opts: reserved fields must be zero"), -EINVAL;
	if (o->reserved0)
		return hyper_plan__errf(e, "hyper_plan_measure_opts: reserved fields must be zero"), -EINVAL;
	if (o->flags & ~HYPER_PLAN_MEASURE_FLAGS_MASK)
		return hyper_plan__errf(e, "hyper_plan_measure_opts: unknown flags 0x%x",
			       o->flags & ~HYPER_PLAN_MEASURE_FLAGS_MASK), -EINVAL;
	if (o->link_bytes && (o->link_bytes < SMALL_BYTES ||
			      o->link_bytes > MAX_LINK_BYTES ||
			      o->link_bytes % SMALL_BYTES))
		return hyper_plan__errf(e, "hyper_plan_measure_opts: link_bytes %llu: give a multiple of 4 KiB from 4 KiB to 1 GiB, or 0 for 16 MiB",
			       (unsigned long long)o->link_bytes), -EINVAL;
	if (o->runs > MAX_RUNS)
		return hyper_plan__errf(e, "hyper_plan_measure_opts: runs %u: give 1 to %d, or 0 for %d",
			       o->runs, MAX_RUNS, DEF_RUNS), -EINVAL;
	if (o->nr_compute_cpus && !o->compute_cpus)
		return hyper_plan__errf(e, "hyper_plan_measure_opts: %u compute CPUs given, but no array of them",
			       o->nr_compute_cpus), -EINVAL;
	if (!o->nr_compute_cpus && o->compute_cpus)
		return hyper_plan__errf(e, "hyper_plan_measure_opts: compute_cpus given with nr_compute_cpus 0: set how many"), -EINVAL;
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (uint32_t i = 0; i < o->nr_compute_cpus; i++) {
		int cpu = o->compute_cpus[i];

		if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed))
			return hyper_plan__errf(e, "hyper_plan_measure_opts: compute CPU %d is not one this process may run on (this machine has CPUs 0 to %ld)",
				       cpu, ncpu - 1), -EINVAL;
		CPU_SET(cpu, set);
	}
	return 0;
}

int hyper_plan__profile_measure(const struct hyper_plan_measure_opts *opts,
		    struct profile *p, uint32_t *engine, struct hp_err *e)
{
	static const struct hyper_plan_measure_opts defaults;
	const struct hyper_plan_measure_opts *o = opts ? opts : &defaults;
	struct meas m = { .o = o, .p = p, .e = e };
	pthread_attr_t attr;
	pthread_t tid;
	cpu_set_t set;
	int ret;

	ret = check_opts(o, &set, e);
	if (ret)
		return ret;
	m.link = o->link_bytes ? o->link_bytes : DEF_LINK_BYTES;
	m.runs = o->runs ? o->runs : DEF_RUNS;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", THIS_MACHINE);
	p->device_bytes = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	/*
	 * The executor is a thread of its own, pinned where the run's would
	 * be: the caller's thread keeps its affinity.
	 */
	if (pthread_attr_init(&attr))
		return hyper_plan__errf(e, "measuring: pthread_attr_init failed"), -ENOMEM;
	if (o->nr_compute_cpus)
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	ret = pthread_create(&tid, &attr, executor, &m);
	pthread_attr_destroy(&attr);
	if (ret)
		return hyper_plan__errf(e, "measuring: cannot start a thread: %s", strerror(ret)), -ret;
	pthread_join(tid, NULL);
	if (m.ret)
		return m.ret < 0 ? m.ret : -EIO;
	snprintf(p->desc, sizeof(p->desc),
		 "measured: %ld CPUs, link: %s engine %s, %s",
		 sysconf(_SC_NPROCESSORS_ONLN), hyper_copy_engine_name(m.engine),
		 o->flags & HYPER_PLAN_MEASURE_ALONE ? "alone" : "with SGEMM running",
		 m.blas_found ? "OpenBLAS SGEMM on one thread" :
		 "no OpenBLAS: 1 GFLOP/s assumed");
	if (engine)
		*engine = m.engine;
	return 0;
}
