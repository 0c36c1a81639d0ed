// SPDX-License-Identifier: GPL-2.0
/*
 * Transfer-engine benchmark, run inside the VM by `make bench`.
 *
 * Everything is measured in the same VM run and reported as ratios, since
 * TCG times mean nothing on their own:
 *   - prefetch and store throughput, 4 KiB .. 64 MiB, one transfer in
 *     flight, against a userspace memcpy() of the same bytes between the
 *     same memory (the mmap'd region and the buffer);
 *   - the round trip of one 4 KiB transfer against IORING_OP_NOP;
 *   - 64 transfers of 4 KiB as one batch against 64 single SQEs.
 * Each figure is the median of several trials.  JSON goes to stdout
 * between BENCH-JSON-BEGIN/END lines, a table to stderr.
 */
#include <sys/mman.h>

#include "hyper_bench.h"
#include "hyper_uring.h"

#define MAX	(64 * MiB)
#define TRIALS	5

struct ctx {
	int fd;
	struct io_uring ring;
	uint32_t h;
	uint8_t *pool;
	uint8_t *buf;
};

/* Repeat @fn until at least @min_ns passed; returns ns per call. */
#define TIMED(min_ns, body) ({						\
	uint64_t _t0 = bench_now(), _n = 0, _dt;			\
	do {								\
		body;							\
		_n++;							\
		_dt = bench_now() - _t0;				\
	} while (_dt < (min_ns));					\
	(double)_dt / _n;						\
})

static void die(const char *what, int err)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(-err));
	exit(1);
}

static double xfer_ns(struct ctx *c, uint8_t dir, uint64_t len)
{
	double v[TRIALS];

	for (int t = 0; t < TRIALS; t++)
		v[t] = TIMED(200000000ULL, {
			int r = hyper_xfer_sync(&c->ring, c->fd, c->h, dir,
						c->buf, len, 0, 0);
			if (r != (int)len)
				die("transfer", r);
		});
	return median(v, TRIALS);
}

static double memcpy_ns(void *dst, const void *src, uint64_t len)
{
	double v[TRIALS];

	for (int t = 0; t < TRIALS; t++)
		v[t] = TIMED(200000000ULL, {
			memcpy(dst, src, len);
			__asm__ volatile("" : : "r"(dst) : "memory");
		});
	return median(v, TRIALS);
}

static double nop_ns(struct ctx *c)
{
	double v[TRIALS];

	for (int t = 0; t < TRIALS; t++)
		v[t] = TIMED(200000000ULL, {
			io_uring_prep_nop(io_uring_get_sqe(&c->ring));
			hyper_submit_wait(&c->ring, NULL);
		});
	return median(v, TRIALS);
}

static double batch_ns(struct ctx *c, bool batched)
{
	struct hyper_xfer d[64];
	double v[TRIALS];

	for (int i = 0; i < 64; i++)
		d[i] = (struct hyper_xfer) {
			.addr = (uintptr_t)(c->buf + i * 4096), .len = 4096,
			.region_off = (uint64_t)i * 8192, .handle = c->h,
			.dir = i & 1 ? HYPER_DIR_PREFETCH : HYPER_DIR_STORE,
		};
	for (int t = 0; t < TRIALS; t++)
		v[t] = TIMED(200000000ULL, {
			struct io_uring_cqe *cqe;
			int n = batched ? 1 : 64;

			if (batched)
				hyper_prep_batch(io_uring_get_sqe(&c->ring),
						 c->fd, d, 64, 0);
			else
				for (int i = 0; i < 64; i++)
					hyper_prep_xfer(io_uring_get_sqe(&c->ring),
							c->fd, &d[i], 0);
			io_uring_submit_and_wait(&c->ring, n);
			for (int i = 0; i < n; i++) {
				if (io_uring_wait_cqe(&c->ring, &cqe) ||
				    cqe->res < 0)
					die("batch", cqe->res);
				io_uring_cqe_seen(&c->ring, cqe);
			}
		});
	return median(v, TRIALS);
}

int main(void)
{
	static const uint64_t sizes[] = {
		4096, 16384, 65536, 262144, MiB, 4 * MiB, 16 * MiB, 64 * MiB,
	};
	const int nsizes = sizeof(sizes) / sizeof(sizes[0]);
	struct iovec iov;
	struct ctx c;
	uint64_t off;
	char workers[16];
	double nop, one, b1, b64;
	int ret;

	ret = hyper_module_ensure();
	if (ret)
		die("load module", ret);
	c.fd = hyper_dev_open(0);
	if (c.fd < 0)
		die("open", c.fd);
	ret = hyper_ring_init(&c.ring, 128);
	if (ret)
		die("ring", ret);
	ret = hyper_alloc(c.fd, MAX, HYPER_ALLOC_HUGE_ALIGN, &c.h, &off);
	if (ret)
		die("alloc", ret);
	c.pool = mmap(NULL, MAX, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd, off);
	c.buf = mmap(NULL, MAX, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c.pool == MAP_FAILED || c.buf == MAP_FAILED)
		die("mmap", -errno);
	memset(c.pool, 1, MAX);
	iov.iov_base = c.buf;
	iov.iov_len = MAX;
	ret = io_uring_register_buffers(&c.ring, &iov, 1);
	if (ret)
		die("register", ret);
	hyper_sysfs_read(0, "workers", workers, sizeof(workers));

	printf("BENCH-JSON-BEGIN\n{\n  \"workers\": %s,\n  \"throughput\": [\n",
	       workers);
	fprintf(stderr, "%10s %12s %12s %12s %12s %8s %8s\n", "bytes",
		"prefetch", "memcpy-in", "store", "memcpy-out", "ratio-p",
		"ratio-s");
	for (int i = 0; i < nsizes; i++) {
		uint64_t len = sizes[i];
		double p = xfer_ns(&c, HYPER_DIR_PREFETCH, len);
		double mi = memcpy_ns(c.buf, c.pool, len);
		double s = xfer_ns(&c, HYPER_DIR_STORE, len);
		double mo = memcpy_ns(c.pool, c.buf, len);

		/* Ratios of throughput: the engine's over memcpy's. */
		printf("    { \"bytes\": %llu, \"prefetch_ns\": %.0f, \"memcpy_in_ns\": %.0f, \"store_ns\": %.0f, \"memcpy_out_ns\": %.0f, \"prefetch_vs_memcpy\": %.3f, \"store_vs_memcpy\": %.3f }%s\n",
		       (unsigned long long)len, p, mi, s, mo, mi / p, mo / s,
		       i + 1 < nsizes ? "," : "");
		fprintf(stderr, "%10llu %10.1fMB/s %10.1fMB/s %10.1fMB/s %10.1fMB/s %8.3f %8.3f\n",
			(unsigned long long)len, len * 1e3 / p, len * 1e3 / mi,
			len * 1e3 / s, len * 1e3 / mo, mi / p, mo / s);
	}
	nop = nop_ns(&c);
	one = xfer_ns(&c, HYPER_DIR_PREFETCH, 4096);
	b64 = batch_ns(&c, false);
	b1 = batch_ns(&c, true);
	printf("  ],\n  \"nop_ns\": %.0f,\n  \"xfer_4k_ns\": %.0f,\n  \"xfer_4k_vs_nop\": %.3f,\n",
	       nop, one, one / nop);
	printf("  \"singles_64x4k_ns\": %.0f,\n  \"batch_64x4k_ns\": %.0f,\n  \"batch_vs_singles\": %.3f\n}\nBENCH-JSON-END\n",
	       b64, b1, b1 / b64);
	fprintf(stderr, "4 KiB round trip %.0f ns, NOP %.0f ns: %.2fx\n", one,
		nop, one / nop);
	fprintf(stderr, "64 x 4 KiB: batch %.0f ns, singles %.0f ns: %.2fx\n",
		b1, b64, b1 / b64);
	return 0;
}
