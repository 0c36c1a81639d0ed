// SPDX-License-Identifier: GPL-2.0
/*
 * The transfer engine doing its job: prefetch and store through registered
 * and plain buffers, inline and queued sizes, batches, links, statistics,
 * tracepoints and the tunables.  Runs in the VM with the module loaded.
 */
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define REGION	(32 * MiB)
#define BUF	(32 * MiB)

FIXTURE(xfer) {
	int fd;
	struct io_uring ring;
	uint32_t h;
	uint8_t *pool;		/* the region, mapped */
	uint8_t *buf;		/* registered as buffer 0 */
	uint8_t *plain;		/* not registered */
};

FIXTURE_SETUP(xfer)
{
	struct iovec iov;
	uint64_t off;

	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hyper_ring_init(&self->ring, 64));
	ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &self->h, &off));
	self->pool = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, off);
	ASSERT_NE(MAP_FAILED, self->pool);
	self->buf = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	self->plain = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_NE(MAP_FAILED, self->plain);
	iov.iov_base = self->buf;
	iov.iov_len = BUF;
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	ASSERT_EQ(0, hyper_sysfs_write(0, "reset_stats", "1"));
}

FIXTURE_TEARDOWN(xfer)
{
	io_uring_queue_exit(&self->ring);
	munmap(self->buf, BUF);
	munmap(self->plain, BUF);
	munmap(self->pool, REGION);
	close(self->fd);
}

/* Sizes on both sides of the inline threshold and of the chunk size. */
static const uint64_t sizes[] = {
	1, 7, 4095, 4096, 4097, 65536, 65537, 1048575, 1048577, 5 * MiB + 3,
	16 * MiB,
};

TEST_F(xfer, store_then_prefetch_registered_buffer)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t len = sizes[i], roff = (i * 4099) % (REGION - len + 1);
		uint64_t boff = (i * 131) % (BUF - len + 1);

		hyper_fill(self->buf + boff, len, i);
		ASSERT_EQ(len, hyper_xfer_sync(&self->ring, self->fd, self->h,
					       HYPER_DIR_STORE, self->buf + boff,
					       len, roff, 0)) {
			TH_LOG("store of %llu bytes", (unsigned long long)len);
		}
		/* The pool holds exactly those bytes... */
		ASSERT_EQ(len, hyper_check(self->pool + roff, len, i));
		memset(self->buf + boff, 0, len);
		/* ...and a prefetch brings them back. */
		ASSERT_EQ(len, hyper_xfer_sync(&self->ring, self->fd, self->h,
					       HYPER_DIR_PREFETCH,
					       self->buf + boff, len, roff, 0));
		ASSERT_EQ(len, hyper_check(self->buf + boff, len, i));
	}
}

TEST_F(xfer, store_then_prefetch_plain_address)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t len = sizes[i], roff = REGION - len - (i * 17) % 4096;

		hyper_fill(self->plain + 5, len, 50 + i);
		ASSERT_EQ(len, hyper_xfer_sync(&self->ring, self->fd, self->h,
					       HYPER_DIR_STORE, self->plain + 5,
					       len, roff, -1));
		ASSERT_EQ(len, hyper_check(self->pool + roff, len, 50 + i));
		memset(self->plain + 5, 0, len);
		ASSERT_EQ(len, hyper_xfer_sync(&self->ring, self->fd, self->h,
					       HYPER_DIR_PREFETCH,
					       self->plain + 5, len, roff, -1));
		ASSERT_EQ(len, hyper_check(self->plain + 5, len, 50 + i));
	}
}

TEST_F(xfer, prefetch_sees_direct_stores_to_the_pool)
{
	/* Pool memory written through mmap is what a prefetch reads. */
	hyper_fill(self->pool + 4096, 8 * MiB, 77);
	ASSERT_EQ(8 * MiB, hyper_xfer_sync(&self->ring, self->fd, self->h,
					   HYPER_DIR_PREFETCH, self->buf,
					   8 * MiB, 4096, 0));
	EXPECT_EQ(8 * MiB, hyper_check(self->buf, 8 * MiB, 77));
}

TEST_F(xfer, batch_of_64_completes_as_one_cqe)
{
	struct hyper_xfer d[64];
	uint64_t total = 0;
	int i;

	/* Stores of 64 pieces, then one batch prefetching them shuffled. */
	for (i = 0; i < 64; i++) {
		uint64_t len = 4096 * (1 + i % 5) + i;

		d[i] = (struct hyper_xfer) {
			.addr = (uintptr_t)(self->buf + i * 65536),
			.len = len,
			.region_off = (uint64_t)(63 - i) * 65536,
			.handle = self->h,
			.dir = HYPER_DIR_STORE,
		};
		hyper_fill(self->buf + i * 65536, len, 1000 + i);
		total += len;
	}
	hyper_prep_batch(io_uring_get_sqe(&self->ring), self->fd, d, 64, 0);
	ASSERT_EQ(total, hyper_submit_wait(&self->ring, NULL));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(d[i].len, hyper_check(self->pool + (63 - i) * 65536,
					  d[i].len, 1000 + i));

	memset(self->buf, 0, 64 * 65536);
	for (i = 0; i < 64; i++)
		d[i].dir = HYPER_DIR_PREFETCH;
	hyper_prep_batch(io_uring_get_sqe(&self->ring), self->fd, d, 64, 0);
	ASSERT_EQ(total, hyper_submit_wait(&self->ring, NULL));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(d[i].len, hyper_check(self->buf + i * 65536, d[i].len,
					  1000 + i));
	EXPECT_EQ(2, hyper_stat(0, "requests"));
	EXPECT_EQ(64, hyper_stat(0, "ops_store"));
	EXPECT_EQ(64, hyper_stat(0, "ops_prefetch"));
}

TEST_F(xfer, batch_mixes_directions_and_plain_addresses)
{
	struct hyper_xfer d[2] = {
		{ .addr = (uintptr_t)self->plain, .len = 3 * MiB,
		  .region_off = 0, .handle = self->h, .dir = HYPER_DIR_STORE },
		{ .addr = (uintptr_t)(self->plain + 4 * MiB), .len = 2 * MiB,
		  .region_off = 8 * MiB, .handle = self->h,
		  .dir = HYPER_DIR_PREFETCH },
	};

	hyper_fill(self->plain, 3 * MiB, 5);
	hyper_fill(self->pool + 8 * MiB, 2 * MiB, 6);
	hyper_prep_batch(io_uring_get_sqe(&self->ring), self->fd, d, 2, -1);
	ASSERT_EQ(5 * MiB, hyper_submit_wait(&self->ring, NULL));
	EXPECT_EQ(3 * MiB, hyper_check(self->pool, 3 * MiB, 5));
	EXPECT_EQ(2 * MiB, hyper_check(self->plain + 4 * MiB, 2 * MiB, 6));
}

TEST_F(xfer, linked_store_prefetch_chain_keeps_order)
{
	/*
	 * store A -> prefetch into B -> store B elsewhere -> prefetch into C:
	 * each step reads what the one before it wrote, so any reordering
	 * shows up as wrong bytes in C.
	 */
	for (int round = 0; round < 8; round++) {
		uint64_t len = 3 * MiB + round * 4096;
		struct {
			uint8_t dir;
			uint64_t boff, roff;
		} step[4] = {
			{ HYPER_DIR_STORE, 0, 0 },
			{ HYPER_DIR_PREFETCH, 8 * MiB, 0 },
			{ HYPER_DIR_STORE, 8 * MiB, 16 * MiB },
			{ HYPER_DIR_PREFETCH, 24 * MiB, 16 * MiB },
		};

		hyper_fill(self->buf, len, 300 + round);
		memset(self->buf + 8 * MiB, 0, len);
		memset(self->buf + 24 * MiB, 0, len);
		for (int s = 0; s < 4; s++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
			struct hyper_xfer x = {
				.addr = (uintptr_t)(self->buf + step[s].boff),
				.len = len, .region_off = step[s].roff,
				.handle = self->h, .dir = step[s].dir,
			};

			hyper_prep_xfer(sqe, self->fd, &x, 0);
			sqe->user_data = s;
			if (s < 3)
				sqe->flags |= IOSQE_IO_LINK;
			if (s > 0)
				sqe->flags |= hyper_link_flags();
		}
		ASSERT_EQ(4, io_uring_submit(&self->ring));
		EXPECT_EQ(0, hyper_reap(&self->ring, 4, (int)len));
		ASSERT_EQ(len, hyper_check(self->buf + 24 * MiB, len, 300 + round));
	}
}

TEST_F(xfer, linked_inline_transfers_keep_the_chain)
{
	/* Small transfers complete in the submitter; a link still holds. */
	for (int s = 0; s < 4; s++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
		struct hyper_xfer x = {
			.addr = (uintptr_t)(self->buf + (s & 1) * 4096),
			.len = 4096, .region_off = 0, .handle = self->h,
			.dir = s & 1 ? HYPER_DIR_PREFETCH : HYPER_DIR_STORE,
		};

		if (s == 0)
			hyper_fill(self->buf, 4096, 4242);
		hyper_prep_xfer(sqe, self->fd, &x, 0);
		if (s < 3)
			sqe->flags |= IOSQE_IO_LINK;
		if (s > 0)
			sqe->flags |= hyper_link_flags();
	}
	ASSERT_EQ(4, io_uring_submit(&self->ring));
	EXPECT_EQ(0, hyper_reap(&self->ring, 4, 4096));
	EXPECT_EQ(4096, hyper_check(self->buf + 4096, 4096, 4242));
}

TEST_F(xfer, retried_from_io_worker_completes)
{
	/*
	 * Untouched pages cannot be pinned without faulting, so the first,
	 * non-blocking attempt asks io_uring to retry from its worker; and
	 * IOSQE_ASYNC sends a request there directly.  Both must complete.
	 */
	for (int async = 0; async < 2; async++) {
		for (int big = 0; big < 2; big++) {
			uint64_t len = big ? 2 * MiB : 8192;
			uint8_t *fresh = mmap(NULL, len, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS,
					      -1, 0);
			struct io_uring_sqe *sqe;
			struct hyper_xfer x = {
				.addr = (uintptr_t)fresh, .len = len,
				.handle = self->h, .dir = HYPER_DIR_STORE,
			};

			ASSERT_NE(MAP_FAILED, fresh);
			sqe = io_uring_get_sqe(&self->ring);
			hyper_prep_xfer(sqe, self->fd, &x, -1);
			if (async)
				sqe->flags |= IOSQE_ASYNC;
			EXPECT_EQ((int)len, hyper_submit_wait(&self->ring, NULL));
			EXPECT_EQ(len, hyper_first_nonzero(self->pool, len));
			munmap(fresh, len);
		}
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

TEST_F(xfer, cqe32_carries_the_completion_time)
{
	struct io_uring big;
	struct iovec iov = { .iov_base = self->buf, .iov_len = BUF };

	ASSERT_EQ(0, io_uring_queue_init(8, &big, IORING_SETUP_SQE128 |
					 IORING_SETUP_CQE32));
	ASSERT_EQ(0, io_uring_register_buffers(&big, &iov, 1));
	/* Inline, queued, and refused requests all say when they ended. */
	for (int i = 0; i < 3; i++) {
		uint64_t len = i == 1 ? 8 * MiB : 4096;
		struct hyper_xfer x = {
			.addr = (uintptr_t)self->buf, .len = len,
			.handle = i == 2 ? 9999 : self->h,
			.dir = HYPER_DIR_STORE,
		};
		struct io_uring_cqe *cqe;
		uint64_t t0, seen, done;

		hyper_prep_xfer(io_uring_get_sqe(&big), self->fd, &x, 0);
		t0 = mono_ns();
		ASSERT_EQ(1, io_uring_submit(&big));
		/*
		 * Look at the completion without reaping it, then reap it
		 * late on purpose: the stamp lies between the submission and
		 * the first sight of the CQE, however slow the machine, so
		 * it is neither the reap time nor a guess.
		 */
		ASSERT_EQ(0, io_uring_wait_cqe(&big, &cqe));
		seen = mono_ns();
		usleep(20000);
		ASSERT_EQ(0, io_uring_wait_cqe(&big, &cqe));
		EXPECT_EQ(i == 2 ? -ENOENT : (int)len, cqe->res);
		done = cqe->big_cqe[0];
		io_uring_cqe_seen(&big, cqe);
		EXPECT_LE(t0, done);
		EXPECT_GE(seen, done);
	}
	io_uring_queue_exit(&big);
}

TEST_F(xfer, failed_link_cancels_the_rest)
{
	struct hyper_xfer bad = { .addr = (uintptr_t)self->buf, .len = 4096,
				  .region_off = REGION, .handle = self->h,
				  .dir = HYPER_DIR_STORE };
	struct hyper_xfer good = { .addr = (uintptr_t)self->buf, .len = 4096,
				   .handle = self->h,
				   .dir = HYPER_DIR_STORE };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_xfer(sqe, self->fd, &bad, 0);
	sqe->flags |= IOSQE_IO_LINK;
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_xfer(sqe, self->fd, &good, 0);
	sqe->user_data = 2;
	ASSERT_EQ(2, io_uring_submit(&self->ring));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		EXPECT_EQ(cqe->user_data == 1 ? -EINVAL : -ECANCELED, cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
	}
}

TEST_F(xfer, many_in_flight_on_one_ring)
{
	/* 32 queued 1 MiB stores to distinct places, completing in any order. */
	for (int i = 0; i < 32; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
		struct hyper_xfer x = {
			.addr = (uintptr_t)(self->buf + i * MiB), .len = MiB,
			.region_off = (uint64_t)(31 - i) * MiB,
			.handle = self->h, .dir = HYPER_DIR_STORE,
		};

		hyper_fill(self->buf + i * MiB, MiB, 700 + i);
		hyper_prep_xfer(sqe, self->fd, &x, 0);
		sqe->user_data = i;
	}
	ASSERT_EQ(32, io_uring_submit(&self->ring));
	EXPECT_EQ(0, hyper_reap(&self->ring, 32, (int)MiB));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(MiB, hyper_check(self->pool + (31 - i) * MiB, MiB, 700 + i));
	EXPECT_EQ(0, hyper_stat(0, "inflight"));
}

TEST_F(xfer, statistics_count_what_moved)
{
	long long hist = 0;
	char buf[4096], *line;

	ASSERT_EQ(MiB, hyper_xfer_sync(&self->ring, self->fd, self->h,
				       HYPER_DIR_STORE, self->buf, MiB, 0, 0));
	ASSERT_EQ(4096, hyper_xfer_sync(&self->ring, self->fd, self->h,
					HYPER_DIR_PREFETCH, self->buf, 4096,
					0, 0));
	ASSERT_EQ(8192, hyper_xfer_sync(&self->ring, self->fd, self->h,
					HYPER_DIR_PREFETCH, self->buf, 8192,
					0, -1));
	ASSERT_EQ(-EINVAL, hyper_xfer_sync(&self->ring, self->fd, self->h,
					   HYPER_DIR_PREFETCH, self->buf, 0,
					   0, 0));
	EXPECT_EQ(MiB, hyper_stat(0, "bytes_store"));
	EXPECT_EQ(4096 + 8192, hyper_stat(0, "bytes_prefetch"));
	EXPECT_EQ(1, hyper_stat(0, "ops_store"));
	EXPECT_EQ(2, hyper_stat(0, "ops_prefetch"));
	/* The zero-length one failed: a request, an error, no bytes. */
	EXPECT_EQ(4, hyper_stat(0, "requests"));
	EXPECT_EQ(1, hyper_stat(0, "errors"));
	EXPECT_EQ(0, hyper_stat(0, "inflight"));

	/* Every completed request is in exactly one latency bucket. */
	ASSERT_EQ(0, hyper_sysfs_read(0, "stats/latency_hist", buf,
				      sizeof(buf)));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		hist += strtoll(strchr(line, ' ') + 1, NULL, 10);
	EXPECT_EQ(4, hist);

	ASSERT_EQ(0, hyper_sysfs_write(0, "reset_stats", "1"));
	EXPECT_EQ(0, hyper_stat(0, "bytes_store"));
	EXPECT_EQ(0, hyper_stat(0, "requests"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "reset_stats", "0"));
}

TEST_F(xfer, errors_are_counted)
{
	ASSERT_EQ(-ENOENT, hyper_xfer_sync(&self->ring, self->fd, 999,
					   HYPER_DIR_STORE, self->buf, 4096,
					   0, 0));
	ASSERT_EQ(-EINVAL, hyper_xfer_sync(&self->ring, self->fd, self->h,
					   HYPER_DIR_STORE, self->buf, 4096,
					   REGION, 0));
	EXPECT_EQ(2, hyper_stat(0, "requests"));
	EXPECT_EQ(2, hyper_stat(0, "errors"));
	ASSERT_EQ(2 * MiB, hyper_xfer_sync(&self->ring, self->fd, self->h,
					   HYPER_DIR_STORE, self->buf,
					   2 * MiB, 0, 0));
	EXPECT_EQ(3, hyper_stat(0, "requests"));
	EXPECT_EQ(2, hyper_stat(0, "errors"));
	EXPECT_EQ(0, hyper_stat(0, "bytes_prefetch"));
	EXPECT_EQ(2 * MiB, hyper_stat(0, "bytes_store"));
}

static int trace_write(const char *file, const char *val)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

TEST_F(xfer, tracepoints_and_chunks_spread_over_workers)
{
	char line[512], pids[8][32];
	int npids = 0, submit = 0, complete = 0, chunks = 0;
	FILE *f;

	if (access("/sys/kernel/tracing/trace", F_OK))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	ASSERT_EQ(0, hyper_sysfs_write(0, "workers", "2"));
	ASSERT_EQ(0, hyper_sysfs_write(0, "chunk_size", "65536"));
	ASSERT_EQ(0, trace_write("trace", ""));
	ASSERT_EQ(0, trace_write("events/hyper/enable", "1"));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(16 * MiB, hyper_xfer_sync(&self->ring, self->fd,
						    self->h, HYPER_DIR_STORE,
						    self->buf, 16 * MiB, 0, 0));
	ASSERT_EQ(0, trace_write("events/hyper/enable", "0"));
	ASSERT_EQ(0, hyper_sysfs_write(0, "chunk_size", "1048576"));

	f = fopen("/sys/kernel/tracing/trace", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char task[32];

		if (line[0] == '#')
			continue;
		submit += !!strstr(line, "hyper_xfer_submit:");
		complete += !!strstr(line, "hyper_xfer_complete:");
		if (!strstr(line, "hyper_xfer_chunk:"))
			continue;
		chunks++;
		/* "  kworker/u4:1-52  [001] ..." : the task is the first word. */
		if (sscanf(line, " %31s", task) != 1)
			continue;
		int seen = 0;

		for (int i = 0; i < npids; i++)
			seen |= !strcmp(pids[i], task);
		if (!seen && npids < 8)
			strcpy(pids[npids++], task);
	}
	fclose(f);
	EXPECT_EQ(4, submit);
	EXPECT_EQ(4, complete);
	EXPECT_EQ(4 * 256, chunks);
	/* One transfer's chunks were copied by more than one worker. */
	EXPECT_LE(2, npids);
}

TEST_F(xfer, tunables_accept_good_and_refuse_bad_values)
{
	static const struct {
		const char *attr, *good, *bad[3];
	} t[] = {
		{ "workers", "1", { "0", "65", "two" } },
		{ "chunk_size", "262144", { "65535", "100000", "134217728" } },
		{ "queue_depth", "8", { "0", "4097", "-1" } },
		{ "inline_bytes", "0", { "1048577", "x", "-5" } },
	};
	char old[32], now[32];

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		ASSERT_EQ(0, hyper_sysfs_read(0, t[i].attr, old, sizeof(old)));
		ASSERT_EQ(0, hyper_sysfs_write(0, t[i].attr, t[i].good));
		ASSERT_EQ(0, hyper_sysfs_read(0, t[i].attr, now, sizeof(now)));
		EXPECT_STREQ(t[i].good, now);
		for (int b = 0; b < 3; b++) {
			EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, t[i].attr,
							     t[i].bad[b]));
			ASSERT_EQ(0, hyper_sysfs_read(0, t[i].attr, now,
						      sizeof(now)));
			EXPECT_STREQ(t[i].good, now);
		}
		/* Transfers still work with the new value. */
		EXPECT_EQ(3 * MiB, hyper_xfer_sync(&self->ring, self->fd,
						   self->h, HYPER_DIR_STORE,
						   self->buf, 3 * MiB, 0, 0));
		ASSERT_EQ(0, hyper_sysfs_write(0, t[i].attr, old));
	}
	ASSERT_EQ(0, hyper_sysfs_read(0, "copy_engine", now, sizeof(now)));
	EXPECT_STREQ("cpu", now);
}

/* Decimal, as other drivers' tunables: no octal, no hexadecimal. */
TEST_F(xfer, tunables_are_decimal)
{
	char old[32], now[32];

	ASSERT_EQ(0, hyper_sysfs_read(0, "workers", old, sizeof(old)));
	ASSERT_EQ(0, hyper_sysfs_write(0, "workers", "010"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "workers", now, sizeof(now)));
	EXPECT_STREQ("10", now);
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "workers", "0x10"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "queue_depth", "0x10"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "chunk_size", "0x100000"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "inline_bytes", "0x0"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "workers", now, sizeof(now)));
	EXPECT_STREQ("10", now);
	ASSERT_EQ(0, hyper_sysfs_write(0, "queue_depth", "0100"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "queue_depth", now, sizeof(now)));
	EXPECT_STREQ("100", now);
	ASSERT_EQ(0, hyper_sysfs_write(0, "queue_depth", "256"));
	ASSERT_EQ(0, hyper_sysfs_write(0, "workers", old));
}

TEST_F(xfer, queue_depth_one_still_completes_everything)
{
	ASSERT_EQ(0, hyper_sysfs_write(0, "queue_depth", "1"));
	for (int i = 0; i < 16; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
		struct hyper_xfer x = {
			.addr = (uintptr_t)(self->buf + i * MiB), .len = MiB,
			.region_off = (uint64_t)i * MiB, .handle = self->h,
			.dir = HYPER_DIR_STORE,
		};

		hyper_fill(self->buf + i * MiB, MiB, 900 + i);
		hyper_prep_xfer(sqe, self->fd, &x, 0);
	}
	ASSERT_EQ(16, io_uring_submit(&self->ring));
	EXPECT_EQ(0, hyper_reap(&self->ring, 16, (int)MiB));
	ASSERT_EQ(0, hyper_sysfs_write(0, "queue_depth", "256"));
	for (int i = 0; i < 16; i++)
		ASSERT_EQ(MiB, hyper_check(self->pool + i * MiB, MiB, 900 + i));
}

TEST_HARNESS_MAIN
