// SPDX-License-Identifier: GPL-2.0
/*
 * Transfer throughput on the shmem backend: the same bytes in the same
 * 4 MiB requests, once through libhyper's executor (a step that prefetches
 * 16 tensors and uses them, then one that stores them) and once through
 * raw io_uring READ_FIXED/WRITE_FIXED on a memfd with IOSQE_ASYNC, as the
 * backend does.  A raw run without IOSQE_ASYNC (the copy done inline in
 * io_uring_enter, so no overlap with compute) is shown for reference.
 * Prints JSON with medians over several runs.
 *
 * usage: bench_xfer [RUNS]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>
#include <hyper/hyper.h>

#include "hyper_bench.h"

#define NT	16
#define TBYTES	(16ULL << 20)
#define TOTAL	(NT * TBYTES)
#define CHUNK	(4ULL << 20)
#define QD	256

static char *dev;

static struct hyper_ctx *lctx;
static struct hyper_schedule *lsched;

static int lib_setup(void)
{
	struct hyper_open_opts o = { .backend = HYPER_BACKEND_SHMEM,
				     .pool_bytes = 2 * TOTAL, .chunk_bytes = CHUNK,
				     .queue_depth = QD };
	char json[8192], err[256];
	struct iovec iov = { dev, TOTAL };
	int n, i;

	n = snprintf(json, sizeof(json), "{\"format\":\"hyper-schedule\",\"version\":1,\"tensors\":[");
	for (i = 0; i < NT; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      "%s{\"id\":\"t%d\",\"bytes\":%llu,\"kind\":\"weight\",\"home\":\"pool\"}",
			      i ? "," : "", i, TBYTES);
	n += snprintf(json + n, sizeof(json) - n, "],\"steps\":[{\"op\":\"load\",\"before\":[");
	for (i = 0; i < NT; i++)
		n += snprintf(json + n, sizeof(json) - n, "%s{\"op\":\"prefetch\",\"tensor\":\"t%d\"}",
			      i ? "," : "", i);
	n += snprintf(json + n, sizeof(json) - n, "],\"uses\":[");
	for (i = 0; i < NT; i++)
		n += snprintf(json + n, sizeof(json) - n, "%s\"t%d\"", i ? "," : "", i);
	n += snprintf(json + n, sizeof(json) - n, "]},{\"op\":\"save\",\"after\":[");
	for (i = 0; i < NT; i++)
		n += snprintf(json + n, sizeof(json) - n,
			      "{\"op\":\"store\",\"tensor\":\"t%d\"},{\"op\":\"detach\",\"tensor\":\"t%d\"}%s",
			      i, i, i + 1 < NT ? "," : "");
	snprintf(json + n, sizeof(json) - n, "]}]}");
	if (hyper_schedule_parse(json, strlen(json), &lsched, err, sizeof(err))) {
		fprintf(stderr, "bench_xfer: %s\n", err);
		return -1;
	}
	if (hyper_open(&lctx, &o) || hyper_register_buffers(lctx, &iov, 1) ||
	    hyper_set_arena(lctx, dev, TOTAL) || hyper_attach(lctx, lsched) ||
	    hyper_prepare(lctx))
		return -1;
	for (i = 0; i < NT; i++)
		memset(hyper_tensor_pool_ptr(lctx, i), i + 1, TBYTES);
	return 0;
}

static int lib_iter(double *in, double *out)
{
	uint64_t t0, t1, t2;

	if (hyper_rewind(lctx))
		return -1;
	t0 = bench_now();
	if (hyper_step_begin(lctx) != 0)
		return -1;
	t1 = bench_now();
	if (hyper_step_end(lctx) || hyper_step_begin(lctx) != 1 || hyper_step_end(lctx) ||
	    hyper_drain(lctx))
		return -1;
	t2 = bench_now();
	*in = TOTAL / (double)(t1 - t0);
	*out = TOTAL / (double)(t2 - t1);
	return 0;
}

static int raw_pass(struct io_uring *ring, bool write, unsigned int flags)
{
	struct io_uring_cqe *cqe;
	unsigned int n = 0;

	for (uint64_t off = 0; off < TOTAL; off += CHUNK) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (!sqe)
			return -EBUSY;
		if (write)
			io_uring_prep_write_fixed(sqe, 0, dev + off, CHUNK, off, 0);
		else
			io_uring_prep_read_fixed(sqe, 0, dev + off, CHUNK, off, 0);
		sqe->flags |= IOSQE_FIXED_FILE | flags;
		n++;
	}
	if (io_uring_submit(ring) != (int)n)
		return -EIO;
	while (n--) {
		if (io_uring_wait_cqe(ring, &cqe) || cqe->res != (int)CHUNK)
			return -EIO;
		io_uring_cqe_seen(ring, cqe);
	}
	return 0;
}

static struct io_uring rring;

static int raw_setup(void)
{
	struct iovec iov = { dev, TOTAL };
	int fd = memfd_create("bench-pool", MFD_CLOEXEC);
	void *pool;

	if (fd < 0 || ftruncate(fd, TOTAL) || io_uring_queue_init(QD, &rring, 0))
		return -1;
	pool = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pool == MAP_FAILED)
		return -1;
	memset(pool, 7, TOTAL);
	if (io_uring_register_buffers(&rring, &iov, 1) ||
	    io_uring_register_files(&rring, &fd, 1))
		return -1;
	return 0;
}

static int raw_iter(unsigned int flags, double *in, double *out)
{
	uint64_t t0 = bench_now(), t1, t2;

	if (raw_pass(&rring, false, flags))
		return -1;
	t1 = bench_now();
	if (raw_pass(&rring, true, flags))
		return -1;
	t2 = bench_now();
	*in = TOTAL / (double)(t1 - t0);
	*out = TOTAL / (double)(t2 - t1);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 15;
	double li[64], lo[64], ri[64], ro[64], ii[64], io[64];
	double mli, mlo, mri, mro;

	if (runs < 1 || runs > 64)
		return 2;
	dev = mmap(NULL, TOTAL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dev == MAP_FAILED)
		return 1;
	/* Touch the pages first: shadow-paging hosts charge a first user access. */
	memset(dev, 0, TOTAL);
	if (lib_setup() || raw_setup())
		goto fail;
	/* Interleaved, so that drift in the machine hits all alike; run 0 warms up. */
	for (int r = -1; r < runs; r++) {
		int k = r < 0 ? 0 : r;

		if (lib_iter(&li[k], &lo[k]) || raw_iter(IOSQE_ASYNC, &ri[k], &ro[k]) ||
		    raw_iter(0, &ii[k], &io[k]))
			goto fail;
	}
	mli = median(li, runs);
	mlo = median(lo, runs);
	mri = median(ri, runs);
	mro = median(ro, runs);
	printf("{\n  \"benchmark\": \"libhyper-vs-raw-io_uring\",\n  \"backend\": \"shmem\",\n"
	       "  \"bytes_each_way\": %llu,\n  \"request_bytes\": %llu,\n  \"runs\": %d,\n"
	       "  \"libhyper_prefetch_GBps\": %.2f,\n  \"libhyper_store_GBps\": %.2f,\n"
	       "  \"raw_async_prefetch_GBps\": %.2f,\n  \"raw_async_store_GBps\": %.2f,\n"
	       "  \"raw_inline_prefetch_GBps\": %.2f,\n  \"raw_inline_store_GBps\": %.2f,\n"
	       "  \"ratio_prefetch\": %.3f,\n  \"ratio_store\": %.3f\n}\n",
	       TOTAL, CHUNK, runs, mli, mlo, mri, mro, median(ii, runs), median(io, runs),
	       mli / mri, mlo / mro);
	hyper_close(lctx);
	hyper_schedule_free(lsched);
	io_uring_queue_exit(&rring);
	return 0;
fail:
	fprintf(stderr, "bench_xfer: failed\n");
	return 1;
}
