// SPDX-License-Identifier: GPL-2.0
/*
 * The "this-machine" profile.  On a host without an accelerator, libhyper's
 * shmem backend makes ordinary memory the "device" and a memfd the pool,
 * and moves data with the CPU; so the link is a memcpy, the device memory
 * bandwidth a streaming read, and the compute rate what OpenBLAS reaches on
 * one thread on a square SGEMM of 256 (what hyper-run's "gemm" compute runs
 * for "x-gemm" steps, with the other CPU left to the transfers).  The sizes
 * keep the measurement to seconds under emulation too (the test VM's CPU
 * is QEMU TCG).  Each figure is the median of a few runs: this machine is
 * shared.
 * OpenBLAS is loaded only here: linked in, its threads would start with
 * every planning run and spin on this two-core machine.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile.h"

#define BUF_BYTES	(64UL << 20)
#define RUNS		5

static double read_bps(const uint64_t *buf, size_t words)
{
	double v[RUNS], t;
	volatile uint64_t sink;
	uint64_t sum;
	size_t i;
	int r;

	for (r = 0; r < RUNS; r++) {
		t = now_ns();
		sum = 0;
		for (i = 0; i < words; i++)
			sum += buf[i];
		sink = sum;
		v[r] = words * 8.0 / (now_ns() - t) * 1e9;
	}
	(void)sink;
	return median(v, RUNS);
}

static double copy_bps(char *dst, const char *src, size_t n)
{
	double v[RUNS], t;
	int r;

	for (r = 0; r < RUNS; r++) {
		t = now_ns();
		memcpy(dst, src, n);
		v[r] = n / (now_ns() - t) * 1e9;
	}
	return median(v, RUNS);
}

/* cblas_sgemm(), row-major, no transposes: the enum values of cblas.h */
typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k,
			 float alpha, const float *a, int lda, const float *b,
			 int ldb, float beta, float *c, int ldc);

#define ROW_MAJOR	101
#define NO_TRANS	111

static double gemm_flops(void)
{
	void *lib = dlopen("libopenblas.so.0", RTLD_NOW);
	sgemm_fn sgemm = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
	void (*threads)(int) = lib ? (void (*)(int))dlsym(lib, "openblas_set_num_threads") : NULL;
	const int n = 256;
	float *a = xmalloc(sizeof(float) * n * n);
	float *b = xmalloc(sizeof(float) * n * n);
	float *c = xmalloc(sizeof(float) * n * n);
	double v[RUNS], t;
	int r, i;

	for (i = 0; i < n * n; i++) {
		a[i] = (i % 7) * 0.25f;
		b[i] = (i % 5) * 0.5f;
	}
	if (!sgemm) {
		fprintf(stderr, "hyper-plan: OpenBLAS not found (%s); this-machine's compute rate is 1 GFLOP/s\n",
			dlerror());
		v[RUNS / 2] = 1e9;
	}
	if (threads)
		threads(1);
	for (r = 0; sgemm && r < RUNS; r++) {
		t = now_ns();
		sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n,
		      0.0f, c, n);
		v[r] = 2.0 * n * n * n / (now_ns() - t) * 1e9;
	}
	free(a);
	free(b);
	free(c);
	if (lib)
		dlclose(lib);
	return sgemm ? median(v, RUNS) : v[RUNS / 2];
}

/* One small transfer through the kernel, as the shmem backend does it. */
static double small_io_ns(void)
{
	char page[4096] = { 0 };
	double v[101], t;
	int fd = memfd_create("hyper-plan-probe", 0), r;

	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page)) {
		if (fd >= 0)
			close(fd);
		return 1000;
	}
	for (r = 0; r < 101; r++) {
		t = now_ns();
		if (pread(fd, page, sizeof(page), 0) != sizeof(page))
			break;
		v[r] = now_ns() - t;
	}
	close(fd);
	return r == 101 ? median(v, r) : 1000;
}

void profile_measure(struct profile *p)
{
	char *a = xmalloc(BUF_BYTES), *b = xmalloc(BUF_BYTES);

	memset(a, 1, BUF_BYTES);
	memset(b, 2, BUF_BYTES);
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", THIS_MACHINE);
	snprintf(p->desc, sizeof(p->desc),
		 "measured: %ld CPUs, memcpy link, OpenBLAS SGEMM on one thread",
		 sysconf(_SC_NPROCESSORS_ONLN));
	p->device_bytes = (double)sysconf(_SC_PHYS_PAGES) *
			  sysconf(_SC_PAGESIZE);
	p->mem_bps = read_bps((const uint64_t *)a, BUF_BYTES / 8);
	p->h2d_bps = copy_bps(b, a, BUF_BYTES);
	p->d2h_bps = copy_bps(a, b, BUF_BYTES);
	p->flops = gemm_flops();
	p->latency_ns = small_io_ns();
	free(a);
	free(b);
}
