// SPDX-License-Identifier: GPL-2.0
/*
 * Where the two kernels' io_uring differ under the transfer engine:
 * - from 6.7 a queued command is cancelable, so that tearing a ring down
 *   stops a large transfer at its next chunk; before, it runs to the end;
 * - the payload is read from the SQE in the shared ring (6.12 unless the
 *   request goes async, 6.1 too), which userspace may rewrite while the
 *   kernel reads it: the module copies it once and acts on the copy;
 * - a non-blocking first attempt that cannot pin the user pages returns
 *   -EAGAIN, and io_uring retries from an io-wq worker.
 * Runs in the VM with the module loaded, on every kernel of KVERS.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define REGION	(64 * MiB)

/* Whether this kernel has io_uring_cmd_mark_cancelable() (6.7). */
static bool kernel_cancels(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 7);
}

/* The io-wq workers of this process ("iou-wrk-PID"). */
static int io_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[300], comm[32];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		if (!hyper_read_file(path, comm, sizeof(comm)) &&
		    !strncmp(comm, "iou-wrk-", 8))
			n++;
	}
	closedir(d);
	return n;
}

FIXTURE(uring) {
	int fd;
	uint32_t h;
	uint8_t *buf;
};

FIXTURE_SETUP(uring)
{
	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &self->h, NULL));
	self->buf = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, REGION);
	ASSERT_EQ(0, hyper_sysfs_write(0, "reset_stats", "1"));
}

FIXTURE_TEARDOWN(uring)
{
	hyper_sysfs_write(0, "workers", "2");
	hyper_sysfs_write(0, "chunk_size", "1048576");
	munmap(self->buf, REGION);
	close(self->fd);
}

static void wait_idle(struct __test_metadata *_metadata)
{
	/* Bounded by the harness's (scaled) timeout. */
	while (hyper_stat(0, "inflight"))
		usleep(10000);
}

/*
 * 1 GiB in one batch (16 x the 64 MiB region, one worker, 64 KiB chunks)
 * is queued, then the ring is torn down.  From 6.7 io_uring calls the
 * module back (IO_URING_F_CANCEL) and the request ends -ECANCELED at its
 * next chunk: counted as an error, no bytes.  Before 6.7 it runs to the
 * end.  A transfer that ended before the ring went away proves nothing,
 * and is tried again.
 */
TEST_F_TIMEOUT(uring, closing_the_ring_cancels_a_queued_transfer, 600)
{
	struct hyper_xfer descs[16];
	bool cancels = kernel_cancels();
	int canceled = 0, finished = 0;

	ASSERT_EQ(0, hyper_sysfs_write(0, "workers", "1"));
	ASSERT_EQ(0, hyper_sysfs_write(0, "chunk_size", "65536"));
	for (int i = 0; i < 16; i++)
		descs[i] = (struct hyper_xfer){
			.addr = (uintptr_t)self->buf, .len = REGION,
			.handle = self->h, .dir = HYPER_DIR_STORE,
		};
	for (int attempt = 0; attempt < 3 && !canceled; attempt++) {
		long long err0 = hyper_stat(0, "errors");
		long long bytes0 = hyper_stat(0, "bytes_store");
		struct io_uring ring;

		ASSERT_EQ(0, hyper_ring_init(&ring, 4));
		hyper_prep_batch(io_uring_get_sqe(&ring), self->fd, descs, 16, -1);
		ASSERT_EQ(1, io_uring_submit(&ring));
		if (hyper_stat(0, "inflight") != 1) {
			io_uring_queue_exit(&ring);
			wait_idle(_metadata);
			continue;
		}
		io_uring_queue_exit(&ring);
		wait_idle(_metadata);
		if (hyper_stat(0, "bytes_store") - bytes0 == 16 * REGION) {
			finished++;
			EXPECT_EQ(err0, hyper_stat(0, "errors"));
			if (!cancels)
				break;
			continue;
		}
		/* Nothing half-counted: a canceled request moved no bytes. */
		EXPECT_EQ(bytes0, hyper_stat(0, "bytes_store"));
		EXPECT_EQ(err0 + 1, hyper_stat(0, "errors"));
		canceled++;
	}
	TH_LOG("%s: %d canceled, %d ran to the end", cancels ?
	       "cancelable commands (6.7+)" : "no cancelation (before 6.7)",
	       canceled, finished);
	EXPECT_EQ(cancels ? 1 : 0, canceled);
	EXPECT_EQ(0, hyper_stat(0, "inflight"));
}

/* A thread that rewrites the payload of the SQE being submitted. */
struct rewriter {
	struct io_uring_sqe *sqe;
	struct hyper_xfer v[2];
	atomic_bool stop;
};

static void *rewrite(void *arg)
{
	struct rewriter *rw = arg;
	unsigned int seed = 1;

	while (!atomic_load_explicit(&rw->stop, memory_order_relaxed)) {
		for (int k = 0; k < 2; k++) {
			memcpy(rw->sqe->cmd, &rw->v[k], sizeof(rw->v[k]));
			/* A varying pause, so both payloads get seen. */
			for (volatile int d = rand_r(&seed) % 256; d > 0; d--)
				;
		}
	}
	return NULL;
}

/*
 * The SQE's payload flips between a 4 KiB store and an 8 KiB prefetch
 * with a bad direction bit while it is submitted; with @fault the user
 * pages are dropped first, so the first attempt returns -EAGAIN and the
 * retry from io-wq reads the payload again.  Each completion is one
 * whole payload's outcome, and the statistics agree with the CQEs.
 */
static void rewritten(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uring) *self, bool fault)
{
	long long moved = 0, n_ok = 0, n_bad = 0, bytes0, err0, req0;
	struct rewriter rw = { 0 };
	struct io_uring ring;
	pthread_t t;

	/* One entry: every submission uses the same SQE slot. */
	ASSERT_EQ(0, hyper_ring_init(&ring, 1));
	rw.v[0] = (struct hyper_xfer){
		.addr = (uintptr_t)self->buf, .len = 4096,
		.handle = self->h, .dir = HYPER_DIR_STORE,
	};
	rw.v[1] = (struct hyper_xfer){
		.addr = (uintptr_t)self->buf + 4096, .len = 8192,
		.region_off = MiB, .handle = self->h, .dir = 0x80,
	};
	rw.sqe = io_uring_get_sqe(&ring);
	ASSERT_NE(NULL, rw.sqe);
	hyper_prep_xfer(rw.sqe, self->fd, &rw.v[0], -1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, hyper_reap(&ring, 1, 4096));
	bytes0 = hyper_stat(0, "bytes_store") + hyper_stat(0, "bytes_prefetch");
	err0 = hyper_stat(0, "errors");
	req0 = hyper_stat(0, "requests");
	ASSERT_EQ(0, pthread_create(&t, NULL, rewrite, &rw));
	for (int i = 0; i < 300; i++) {
		struct io_uring_cqe *cqe;
		struct io_uring_sqe *sqe;

		if (fault)
			madvise(self->buf, 4 * 4096, MADV_DONTNEED);
		/* The slot keeps its header; the payload is the thread's. */
		sqe = io_uring_get_sqe(&ring);
		ASSERT_EQ(rw.sqe, sqe);
		ASSERT_EQ(1, io_uring_submit(&ring));
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		switch (cqe->res) {
		case 4096:
		case 8192:
			moved += cqe->res;
			n_ok++;
			break;
		case -EINVAL:
			n_bad++;
			break;
		default:
			EXPECT_EQ(0, cqe->res) {
				TH_LOG("submission %d: res %d", i, cqe->res);
			}
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	atomic_store(&rw.stop, true);
	pthread_join(t, NULL);
	io_uring_queue_exit(&ring);
	TH_LOG("%s: %lld done (%lld bytes), %lld refused", fault ?
	       "with -EAGAIN retries" : "no faults", n_ok, moved, n_bad);
	EXPECT_EQ(300, n_ok + n_bad);
	/* The module counted exactly what it completed. */
	EXPECT_EQ(moved, hyper_stat(0, "bytes_store") +
		  hyper_stat(0, "bytes_prefetch") - bytes0);
	EXPECT_EQ(n_bad, hyper_stat(0, "errors") - err0);
	EXPECT_EQ(300, hyper_stat(0, "requests") - req0);
}

TEST_F(uring, sqe_rewritten_during_submission)
{
	rewritten(_metadata, self, false);
}

TEST_F(uring, sqe_rewritten_across_an_eagain_retry)
{
	rewritten(_metadata, self, true);
}

/*
 * Pages not yet faulted in cannot be pinned in the non-blocking attempt:
 * the module says -EAGAIN and io_uring retries from its worker thread,
 * which is seen in the process; the data arrives all the same.  A full
 * queue (queue_depth 1) is the other -EAGAIN.
 */
TEST_F(uring, eagain_retries_from_an_io_worker)
{
	uint8_t *fresh = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct io_uring ring;

	ASSERT_NE(MAP_FAILED, fresh);
	ASSERT_EQ(0, hyper_ring_init(&ring, 8));
	ASSERT_EQ(0, io_workers());
	/* A prefetch into untouched pages: they fault in from the worker. */
	ASSERT_EQ(2 * MiB, hyper_xfer_sync(&ring, self->fd, self->h,
					   HYPER_DIR_PREFETCH, fresh, 2 * MiB,
					   0, -1));
	EXPECT_LT(0, io_workers());
	ASSERT_EQ(2 * MiB, hyper_xfer_sync(&ring, self->fd, self->h,
					   HYPER_DIR_STORE, self->buf, 2 * MiB,
					   0, -1));
	ASSERT_EQ(2 * MiB, hyper_xfer_sync(&ring, self->fd, self->h,
					   HYPER_DIR_PREFETCH, fresh, 2 * MiB,
					   0, -1));
	EXPECT_EQ(0, memcmp(fresh, self->buf, 2 * MiB));

	/* Eight queued requests through a queue of one. */
	ASSERT_EQ(0, hyper_sysfs_write(0, "queue_depth", "1"));
	for (int i = 0; i < 8; i++) {
		struct hyper_xfer x = {
			.addr = (uintptr_t)self->buf, .len = 2 * MiB,
			.region_off = (uint64_t)i * 2 * MiB,
			.handle = self->h, .dir = HYPER_DIR_STORE,
		};

		hyper_prep_xfer(io_uring_get_sqe(&ring), self->fd, &x, -1);
	}
	ASSERT_EQ(8, io_uring_submit(&ring));
	EXPECT_EQ(0, hyper_reap(&ring, 8, 2 * MiB));
	EXPECT_EQ(0, hyper_sysfs_write(0, "queue_depth", "256"));
	io_uring_queue_exit(&ring);
	munmap(fresh, 2 * MiB);
}

TEST_HARNESS_MAIN
