// SPDX-License-Identifier: GPL-2.0
/*
 * Where the two kernels' io_uring differ under the transfer engine:
 * - from 6.7 a queued command is cancelable, so that tearing a ring down
 *   stops a large transfer at its next chunk; before, it runs to the end;
 * - the payload is read from the SQE in the shared ring (6.12 unless the
 *   request goes async, 6.1 too), which userspace may rewrite while the
 *   kernel reads it: the module copies it once and acts on the copy;
 * - a non-blocking first attempt that cannot pin the user pages returns
 *   -EAGAIN, and io_uring retries from an io-wq worker;
 * - a command io_uring starts after io_uring_submit() returned (linked
 *   behind another, left at the end of an unterminated link, retried from
 *   io-wq) must run what was submitted, whatever the application wrote
 *   into its SQ slot or descriptor array since: on 6.10 to 6.13 io_uring
 *   hands such a command the slot itself, and the module refuses it
 *   (-EOPNOTSUPP) unless the SQE had IOSQE_ASYNC.
 * Runs in the VM with the module loaded, on every kernel of KVERS.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define REGION	(64 * MiB)

/* Whether this kernel has io_uring_cmd_mark_cancelable() (6.7). */
static bool kernel_cancels(void)
{
	return hyper_kernel_version() >= 607;
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
 * Late starts.  Each try submits @want, a 4 KiB store of pattern @seed to
 * region offset 0, then does what an application preparing its next SQE
 * does: it writes @other (an 8 KiB store to offset 1 MiB + 4 KiB) into the
 * same SQ slot, or into the same descriptor array.  The region's first
 * 2 MiB are zero before; after, they hold exactly @want's bytes, or
 * nothing if the command was refused.
 */
#define TRIES		20
#define CHECK_SPAN	(2 * MiB)

enum late_kind {
	LATE_LINKED,		/* XFER linked behind a 24 MiB STORE */
	LATE_LINKED_ASYNC,	/* the same with IOSQE_ASYNC on the XFER */
	LATE_LONE_LINK,		/* one XFER with IOSQE_IO_LINK */
	LATE_RETRY,		/* XFER retried from io-wq after -EAGAIN */
	LATE_BATCH_RETRY,	/* BATCH retried from io-wq, array rewritten */
};

struct late {
	struct io_uring ring;
	uint8_t *chk;		/* CHECK_SPAN bytes, for reading back */
	int memfd;		/* 12 KiB: @want's bytes, then @other's */
	int ran, refused, wrong;
};

/* 1: exactly @seed's 4 KiB at 0; 0: nothing; -1: anything else. */
static int late_outcome(struct late *l, FIXTURE_DATA(uring) *self,
			uint64_t seed)
{
	if (hyper_xfer_sync(&l->ring, self->fd, self->h, HYPER_DIR_PREFETCH,
			    l->chk, CHECK_SPAN, 0, -1) != CHECK_SPAN)
		return -1;
	if (hyper_first_nonzero(l->chk + 4096, CHECK_SPAN - 4096) !=
	    CHECK_SPAN - 4096)
		return -1;
	if (hyper_first_nonzero(l->chk, 4096) == 4096)
		return 0;
	return hyper_check(l->chk, 4096, seed) == 4096 ? 1 : -1;
}

static int late_try(struct __test_metadata *_metadata,
		    FIXTURE_DATA(uring) *self, struct late *l,
		    enum late_kind kind, int i)
{
	uint64_t seed = 1000 + i;
	struct hyper_xfer want = {
		.len = 4096, .handle = self->h, .dir = HYPER_DIR_STORE,
	};
	struct hyper_xfer other = {
		.len = 8192, .region_off = MiB + 4096, .handle = self->h,
		.dir = HYPER_DIR_STORE,
	};
	struct hyper_xfer big = {
		.addr = (uintptr_t)self->buf, .len = 24 * MiB,
		.region_off = 8 * MiB, .handle = self->h,
		.dir = HYPER_DIR_STORE,
	};
	struct hyper_xfer descs[1];
	struct io_uring_sqe *sqe;
	int res = 0, n = 1;
	uint8_t *src;

	/* Clear the span, and lay out the two sources in the memfd. */
	memset(l->chk, 0, CHECK_SPAN);
	if (hyper_xfer_sync(&l->ring, self->fd, self->h, HYPER_DIR_STORE,
			    l->chk, CHECK_SPAN, 0, -1) != CHECK_SPAN)
		return -1;
	hyper_fill(l->chk, 4096, seed);
	memset(l->chk + 4096, 0xa5, 8192);
	if (pwrite(l->memfd, l->chk, 3 * 4096, 0) != 3 * 4096)
		return -1;
	/*
	 * A fresh shared mapping: the pages are in the page cache but not
	 * mapped yet, so a non-blocking pin fails and the module answers
	 * -EAGAIN; io_uring retries from a worker, which may fault.
	 */
	src = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, l->memfd, 0);
	if (src == MAP_FAILED)
		return -1;
	want.addr = (uintptr_t)src;
	other.addr = (uintptr_t)src + 4096;
	if (kind != LATE_RETRY && kind != LATE_BATCH_RETRY) {
		/* Not the case under test: fault them in. */
		for (int k = 0; k < 3; k++)
			res += src[k * 4096];
	}

	if (kind == LATE_LINKED || kind == LATE_LINKED_ASYNC) {
		sqe = io_uring_get_sqe(&l->ring);
		hyper_prep_xfer(sqe, self->fd, &big, -1);
		sqe->flags |= IOSQE_IO_LINK;
		sqe->user_data = 1;
		n = 2;
	}
	sqe = io_uring_get_sqe(&l->ring);
	if (kind == LATE_BATCH_RETRY) {
		descs[0] = want;
		hyper_prep_batch(sqe, self->fd, descs, 1, -1);
	} else {
		hyper_prep_xfer(sqe, self->fd, &want, -1);
	}
	sqe->user_data = 2;
	if (kind == LATE_LINKED_ASYNC)
		sqe->flags |= IOSQE_ASYNC;
	if (kind == LATE_LONE_LINK)
		sqe->flags |= IOSQE_IO_LINK;
	if (io_uring_submit(&l->ring) != n)
		return -1;
	/* The application moves on. */
	if (kind == LATE_BATCH_RETRY)
		descs[0] = other;
	else
		hyper_prep_xfer(sqe, self->fd, &other, -1);

	while (n--) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&l->ring, &cqe))
			return -1;
		if (cqe->user_data == 1) {
			EXPECT_EQ(24 * MiB, cqe->res);
		} else {
			res = cqe->res;
		}
		io_uring_cqe_seen(&l->ring, cqe);
	}
	munmap(src, 3 * 4096);
	switch (late_outcome(l, self, seed)) {
	case 1:
		if (res == 4096) {
			l->ran++;
			return 0;
		}
		break;
	case 0:
		if (res == -EOPNOTSUPP) {
			l->refused++;
			return 0;
		}
		break;
	}
	TH_LOG("try %d: res %d, and not what was submitted moved", i, res);
	l->wrong++;
	return 0;
}

static void late_start(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uring) *self, enum late_kind kind)
{
	static const char *const names[] = {
		"linked behind a 24 MiB store", "linked, with IOSQE_ASYNC",
		"lone IOSQE_IO_LINK", "XFER retried after -EAGAIN",
		"BATCH retried after -EAGAIN",
	};
	bool may_refuse = hyper_link_flags() &&
			  (kind == LATE_LINKED || kind == LATE_LONE_LINK);
	struct late l = { 0 };

	ASSERT_EQ(0, hyper_ring_init(&l.ring, 4));
	l.chk = malloc(CHECK_SPAN);
	ASSERT_NE(NULL, l.chk);
	l.memfd = memfd_create("hyper-late", MFD_CLOEXEC);
	ASSERT_LE(0, l.memfd);
	ASSERT_EQ(0, ftruncate(l.memfd, 3 * 4096));
	for (int i = 0; i < TRIES; i++)
		ASSERT_EQ(0, late_try(_metadata, self, &l, kind, i));
	TH_LOG("%s: %d ran as submitted, %d refused, %d wrong", names[kind],
	       l.ran, l.refused, l.wrong);
	EXPECT_EQ(0, l.wrong);
	/* Refusal is only for what this kernel cannot make safe. */
	if (!may_refuse)
		EXPECT_EQ(TRIES, l.ran);
	close(l.memfd);
	free(l.chk);
	io_uring_queue_exit(&l.ring);
}

TEST_F(uring, linked_xfer_runs_what_was_submitted)
{
	late_start(_metadata, self, LATE_LINKED);
}

TEST_F(uring, linked_xfer_with_iosqe_async_runs_everywhere)
{
	late_start(_metadata, self, LATE_LINKED_ASYNC);
}

TEST_F(uring, lone_link_xfer_runs_what_was_submitted)
{
	late_start(_metadata, self, LATE_LONE_LINK);
}

TEST_F(uring, xfer_retried_from_io_wq_runs_what_was_submitted)
{
	late_start(_metadata, self, LATE_RETRY);
}

TEST_F(uring, batch_array_is_read_once)
{
	late_start(_metadata, self, LATE_BATCH_RETRY);
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
