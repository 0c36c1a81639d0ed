// SPDX-License-Identifier: GPL-2.0
/*
 * Bad transfer requests: each completes with a clear -errno in its CQE,
 * moves nothing, and leaves a good request submitted with it untouched.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define REGION	(4 * MiB)

FIXTURE(bad) {
	int fd;
	struct io_uring ring;
	uint32_t h;
	uint8_t *pool;
	uint8_t *buf;		/* registered as buffer 0 */
	uint8_t *good;		/* source of the good neighbour request */
};

FIXTURE_SETUP(bad)
{
	struct iovec iov;
	uint64_t off;

	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hyper_ring_init_all(&self->ring, 16));
	ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &self->h, &off));
	self->pool = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, off);
	ASSERT_NE(MAP_FAILED, self->pool);
	memset(self->pool, 0xaa, REGION);
	self->buf = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x55, REGION);
	self->good = malloc(MiB);
	ASSERT_NE(NULL, self->good);
	memset(self->good, 0x77, MiB);
	iov.iov_base = self->buf;
	iov.iov_len = REGION;
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
}

FIXTURE_TEARDOWN(bad)
{
	io_uring_queue_exit(&self->ring);
	free(self->good);
	munmap(self->buf, REGION);
	munmap(self->pool, REGION);
	close(self->fd);
}

/*
 * Submits @x (on buffer @bidx) together with a good 1 MiB store of 0x77
 * into the second MiB of the region.  The bad one must fail with @err;
 * the good one must succeed; and the rest of the region must still hold
 * 0xaa: nothing was moved for the bad request.
 */
static void bad_with_neighbour(struct __test_metadata *_metadata,
			       FIXTURE_DATA(bad) *self,
			       const struct hyper_xfer *x, int bidx, int err)
{
	struct hyper_xfer g = { .addr = (uintptr_t)self->good, .len = MiB,
				.region_off = MiB, .handle = self->h,
				.dir = HYPER_DIR_STORE };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	memset(self->pool, 0xaa, REGION);
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_xfer(sqe, self->fd, x, bidx);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_xfer(sqe, self->fd, &g, -1);
	sqe->user_data = 2;
	ASSERT_EQ(2, io_uring_submit(&self->ring));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&self->ring, &cqe));
		EXPECT_EQ(cqe->user_data == 1 ? err : (int)MiB, cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
	}
	for (uint64_t i = 0; i < REGION; i++) {
		uint8_t want = i >= MiB && i < 2 * MiB ? 0x77 : 0xaa;

		if (self->pool[i] != want) {
			TH_LOG("byte %llu is %#x", (unsigned long long)i,
			       self->pool[i]);
			ASSERT_EQ(want, self->pool[i]);
		}
	}
}

static struct hyper_xfer good_store(FIXTURE_DATA(bad) *self)
{
	return (struct hyper_xfer) {
		.addr = (uintptr_t)self->buf, .len = 8192,
		.region_off = 2 * MiB, .handle = self->h,
		.dir = HYPER_DIR_STORE,
	};
}

TEST_F(bad, region_range_out_of_bounds)
{
	struct hyper_xfer x = good_store(self);

	x.region_off = REGION - 4096;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x.region_off = REGION + 4096;
	x.len = 1;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
}

TEST_F(bad, region_offset_overflows)
{
	struct hyper_xfer x = good_store(self);

	x.region_off = ~0ULL - 100;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x.region_off = 4096;
	x.len = ~0ULL - 2048;
	bad_with_neighbour(_metadata, self, &x, 0, -E2BIG);
}

TEST_F(bad, buffer_range_out_of_the_registered_buffer)
{
	struct hyper_xfer x = good_store(self);

	x.addr = (uintptr_t)self->buf + REGION - 4096;
	bad_with_neighbour(_metadata, self, &x, 0, -EFAULT);
	x.addr = (uintptr_t)self->buf - 4096;
	bad_with_neighbour(_metadata, self, &x, 0, -EFAULT);
}

TEST_F(bad, buffer_address_overflows)
{
	struct hyper_xfer x = good_store(self);

	x.addr = ~0ULL - 4095;
	bad_with_neighbour(_metadata, self, &x, -1, -EFAULT);
	bad_with_neighbour(_metadata, self, &x, 0, -EFAULT);
}

TEST_F(bad, wrong_buffer_index)
{
	struct hyper_xfer x = good_store(self);

	bad_with_neighbour(_metadata, self, &x, 1, -EFAULT);
	bad_with_neighbour(_metadata, self, &x, 65535, -EFAULT);
}

TEST_F(bad, unregistered_buffer)
{
	struct hyper_xfer x = good_store(self);

	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	bad_with_neighbour(_metadata, self, &x, 0, -EFAULT);
}

TEST_F(bad, unmapped_plain_address)
{
	struct hyper_xfer x = good_store(self);
	void *hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, 8192);
	x.addr = (uintptr_t)hole;
	bad_with_neighbour(_metadata, self, &x, -1, -EFAULT);
	x.dir = HYPER_DIR_PREFETCH;
	bad_with_neighbour(_metadata, self, &x, -1, -EFAULT);
}

TEST_F(bad, read_only_mapping_as_prefetch_destination)
{
	struct hyper_xfer x = good_store(self);
	uint8_t *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	x.addr = (uintptr_t)ro;
	x.dir = HYPER_DIR_PREFETCH;
	bad_with_neighbour(_metadata, self, &x, -1, -EFAULT);
	EXPECT_EQ(0, ro[0]);
	/* Reading from it for a store is fine. */
	x.dir = HYPER_DIR_STORE;
	EXPECT_EQ(8192, hyper_xfer_sync(&self->ring, self->fd, self->h,
					HYPER_DIR_STORE, ro, 8192, 0, -1));
	/* And io_uring refuses to register it in the first place. */
	struct iovec iov = { .iov_base = ro, .iov_len = 8192 };
	struct io_uring ring2;

	ASSERT_EQ(0, hyper_ring_init(&ring2, 4));
	EXPECT_EQ(-EFAULT, io_uring_register_buffers(&ring2, &iov, 1));
	io_uring_queue_exit(&ring2);
	munmap(ro, 8192);
}

TEST_F(bad, region_of_another_opener)
{
	struct hyper_xfer x = good_store(self);
	int fd2 = hyper_dev_open(0);
	struct io_uring r2;
	uint32_t hs[3];

	ASSERT_LE(0, fd2);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, hyper_alloc(fd2, MiB, 0, &hs[i], NULL));
	/* Handles are per file: the other file's third one is not ours. */
	ASSERT_NE(self->h, hs[2]);
	x.handle = hs[2];
	bad_with_neighbour(_metadata, self, &x, 0, -ENOENT);
	/* Through the other file, our handle number names its own region. */
	ASSERT_EQ(0, hyper_ring_init(&r2, 4));
	EXPECT_EQ(MiB, hyper_xfer_sync(&r2, fd2, self->h, HYPER_DIR_STORE,
				       self->good, MiB, 0, -1));
	io_uring_queue_exit(&r2);
	for (uint64_t i = 0; i < MiB; i++)
		ASSERT_EQ(0xaa, self->pool[i]);
	close(fd2);
}

TEST_F(bad, freed_handle)
{
	struct hyper_xfer x = good_store(self);
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, MiB, 0, &h, NULL));
	ASSERT_EQ(0, hyper_free(self->fd, h));
	x.handle = h;
	bad_with_neighbour(_metadata, self, &x, 0, -ENOENT);
}

TEST_F(bad, reserved_bits_and_unknown_direction)
{
	struct hyper_xfer x = good_store(self);

	x.reserved0 = 1;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x = good_store(self);
	x.flags = 1;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x.flags = 0x8000;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x = good_store(self);
	x.dir = 0;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x.dir = 3;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
}

TEST_F(bad, payload_tail_not_zero)
{
	struct hyper_xfer x = good_store(self);
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_xfer(sqe, self->fd, &x, 0);
	sqe->cmd[79] = 1;
	EXPECT_EQ(-EINVAL, hyper_submit_wait(&self->ring, NULL));
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_batch(sqe, self->fd, &x, 1, 0);
	sqe->cmd[sizeof(struct hyper_xfer_batch)] = 1;
	EXPECT_EQ(-EINVAL, hyper_submit_wait(&self->ring, NULL));
}

TEST_F(bad, zero_and_oversized_length)
{
	struct hyper_xfer x = good_store(self);

	x.len = 0;
	bad_with_neighbour(_metadata, self, &x, 0, -EINVAL);
	x.len = HYPER_XFER_MAX_BYTES + 1ULL;
	bad_with_neighbour(_metadata, self, &x, -1, -E2BIG);
}

static int batch_res(FIXTURE_DATA(bad) *self, const struct hyper_xfer *d,
		     uint32_t count, uint32_t flags, uint64_t rsv, int bidx)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
	struct hyper_xfer_batch b = { .descs = (uintptr_t)d, .count = count,
				      .flags = flags };

	b.reserved[1] = rsv;
	hyper_prep_cmd(sqe, self->fd, HYPER_URING_CMD_BATCH, &b, sizeof(b),
		       bidx);
	return hyper_submit_wait(&self->ring, NULL);
}

TEST_F(bad, batch_count_zero_or_too_large)
{
	struct hyper_xfer *d = calloc(HYPER_BATCH_MAX + 1, sizeof(*d));

	ASSERT_NE(NULL, d);
	for (int i = 0; i <= HYPER_BATCH_MAX; i++) {
		d[i] = good_store(self);
		d[i].len = 16;
		d[i].region_off = i * 16;
	}
	EXPECT_EQ(-EINVAL, batch_res(self, d, 0, 0, 0, 0));
	EXPECT_EQ(-EINVAL, batch_res(self, d, HYPER_BATCH_MAX + 1, 0, 0, 0));
	EXPECT_EQ(HYPER_BATCH_MAX * 16,
		  batch_res(self, d, HYPER_BATCH_MAX, 0, 0, 0));
	free(d);
}

TEST_F(bad, batch_reserved_and_flags)
{
	struct hyper_xfer d = good_store(self);

	EXPECT_EQ(-EINVAL, batch_res(self, &d, 1, 1, 0, 0));
	EXPECT_EQ(-EINVAL, batch_res(self, &d, 1, 0, 1, 0));
	EXPECT_EQ(8192, batch_res(self, &d, 1, 0, 0, 0));
}

TEST_F(bad, batch_pointer_into_unmapped_memory)
{
	uint8_t *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hyper_xfer *d;

	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, munmap(page + 4096, 4096));
	/* Two descriptors, the second running into the unmapped page. */
	d = (struct hyper_xfer *)(page + 4096 - sizeof(*d));
	*d = good_store(self);
	EXPECT_EQ(-EFAULT, batch_res(self, d, 2, 0, 0, 0));
	EXPECT_EQ(-EFAULT, batch_res(self, NULL, 1, 0, 0, 0));
	EXPECT_EQ(-EFAULT, batch_res(self, (void *)(page + 4096), 1, 0, 0, 0));
	munmap(page, 4096);
}

TEST_F(bad, one_bad_descriptor_fails_the_whole_batch)
{
	struct hyper_xfer d[3];

	memset(self->pool, 0xaa, REGION);
	for (int i = 0; i < 3; i++) {
		d[i] = good_store(self);
		d[i].region_off = i * 8192;
	}
	d[2].region_off = REGION;	/* out of range */
	EXPECT_EQ(-EINVAL, batch_res(self, d, 3, 0, 0, 0));
	/* The good descriptors before it moved nothing either. */
	for (int i = 0; i < 3 * 8192; i++)
		ASSERT_EQ(0xaa, self->pool[i]);
}

TEST_F(bad, ring_without_sqe128)
{
	struct io_uring small;
	struct io_uring_sqe *sqe;
	struct hyper_xfer x = good_store(self);

	ASSERT_EQ(0, io_uring_queue_init(4, &small, 0));
	sqe = io_uring_get_sqe(&small);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, self->fd, NULL, 0, 0);
	sqe->cmd_op = HYPER_URING_CMD_XFER;
	memcpy(sqe->cmd, &x, 16);
	EXPECT_EQ(-EINVAL, hyper_submit_wait(&small, NULL));
	io_uring_queue_exit(&small);
}

TEST_F(bad, unknown_command)
{
	struct hyper_xfer x = good_store(self);
	struct io_uring_sqe *sqe;

	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_cmd(sqe, self->fd, _IOW('x', 0x90, struct hyper_xfer), &x,
		       sizeof(x), 0);
	EXPECT_EQ(-ENOTTY, hyper_submit_wait(&self->ring, NULL));
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_cmd(sqe, self->fd, _IOW('h', 0x9f, struct hyper_xfer), &x,
		       sizeof(x), 0);
	EXPECT_EQ(-ENOTTY, hyper_submit_wait(&self->ring, NULL));
	/* An ioctl number is not a transfer command. */
	sqe = io_uring_get_sqe(&self->ring);
	hyper_prep_cmd(sqe, self->fd, HYPER_IOC_ALLOC, &x, sizeof(x), 0);
	EXPECT_EQ(-ENOTTY, hyper_submit_wait(&self->ring, NULL));
}

/*
 * A store writes the pool and a prefetch reads it: each needs the open
 * mode that write(2) and read(2) would, or completes with -EBADF.
 */
TEST_F(bad, open_mode_decides_store_and_prefetch)
{
	int ro = open("/dev/hyper0", O_RDONLY | O_CLOEXEC);
	int wo = open("/dev/hyper0", O_WRONLY | O_CLOEXEC);
	long long used = hyper_sysfs_ll(0, "used");
	uint32_t h;

	ASSERT_LE(0, ro);
	ASSERT_LE(0, wo);
	/* Read-only: no region of its own, and never a store. */
	EXPECT_EQ(-EBADF, hyper_alloc(ro, MiB, 0, &h, NULL));
	EXPECT_EQ(-EBADF, hyper_xfer_sync(&self->ring, ro, 1, HYPER_DIR_STORE,
					  self->good, MiB, 0, -1));
	EXPECT_EQ(-EBADF, hyper_xfer_sync(&self->ring, ro, 1, HYPER_DIR_STORE,
					  self->buf, MiB, 0, 0));
	EXPECT_EQ(used, hyper_sysfs_ll(0, "used"));

	/* Write-only: stores, but reads nothing back. */
	ASSERT_EQ(0, hyper_alloc(wo, MiB, 0, &h, NULL));
	EXPECT_EQ(MiB, hyper_xfer_sync(&self->ring, wo, h, HYPER_DIR_STORE,
				       self->good, MiB, 0, -1));
	EXPECT_EQ(-EBADF, hyper_xfer_sync(&self->ring, wo, h,
					  HYPER_DIR_PREFETCH, self->buf, MiB,
					  0, 0));
	memset(self->good, 0, MiB);
	EXPECT_EQ(-EBADF, hyper_xfer_sync(&self->ring, wo, h,
					  HYPER_DIR_PREFETCH, self->good, MiB,
					  0, -1));
	EXPECT_EQ(MiB, hyper_first_nonzero(self->good, MiB));
	EXPECT_EQ(0, hyper_free(wo, h));
	close(wo);
	close(ro);
	EXPECT_EQ(used, hyper_sysfs_ll(0, "used"));
}

TEST_HARNESS_MAIN
