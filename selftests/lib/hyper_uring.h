/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io_uring helpers for transfer tests: liburing 2.3 has no
 * io_uring_prep_uring_cmd(), so the command SQE is built by hand.
 */
#ifndef HYPER_URING_H
#define HYPER_URING_H

#include <liburing.h>
#include <sys/utsname.h>

#include "hyper_test.h"

/* This kernel's version as major * 100 + minor, 0 if unknown. */
static inline int hyper_kernel_version(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/*
 * The flags a hyper SQE needs when io_uring starts it after the submission
 * (linked behind another SQE, drained): IOSQE_ASYNC on 6.10 to 6.13, whose
 * io_uring would hand it the SQ slot itself, which the module refuses
 * (Documentation/transfer-engine.md); none elsewhere.
 */
static inline unsigned int hyper_link_flags(void)
{
	int v = hyper_kernel_version();

	return v >= 610 && v < 614 ? IOSQE_ASYNC : 0;
}

/* buf_index < 0: a plain user address; otherwise a registered buffer. */
static inline void hyper_prep_cmd(struct io_uring_sqe *sqe, int fd,
				  uint32_t op, const void *payload, size_t len,
				  int buf_index)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, HYPER_URING_CMD_PAYLOAD);
	memcpy(sqe->cmd, payload, len);
	if (buf_index >= 0) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = buf_index;
	}
}

static inline void hyper_prep_xfer(struct io_uring_sqe *sqe, int fd,
				   const struct hyper_xfer *x, int buf_index)
{
	hyper_prep_cmd(sqe, fd, HYPER_URING_CMD_XFER, x, sizeof(*x), buf_index);
}

static inline void hyper_prep_batch(struct io_uring_sqe *sqe, int fd,
				    const struct hyper_xfer *descs,
				    uint32_t count, int buf_index)
{
	struct hyper_xfer_batch b = {
		.descs = (uintptr_t)descs,
		.count = count,
	};

	hyper_prep_cmd(sqe, fd, HYPER_URING_CMD_BATCH, &b, sizeof(b),
		       buf_index);
}

static inline int hyper_ring_init(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, IORING_SETUP_SQE128);
}

/*
 * For tests that pair a bad SQE with a good one: without SUBMIT_ALL,
 * io_uring stops submitting at an SQE that fails its own checks.
 */
static inline int hyper_ring_init_all(struct io_uring *ring,
				      unsigned int entries)
{
	return io_uring_queue_init(entries, ring, IORING_SETUP_SQE128 |
				   IORING_SETUP_SUBMIT_ALL);
}

/* Submits what is queued and returns the res of the next CQE. */
static inline int hyper_submit_wait(struct io_uring *ring, uint64_t *user_data)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_submit_and_wait(ring, 1);

	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	if (user_data)
		*user_data = cqe->user_data;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * Reaps @n CQEs; returns how many had a res other than @want, or -errno
 * if waiting failed.
 */
static inline int hyper_reap(struct io_uring *ring, int n, int want)
{
	int bad = 0;

	while (n--) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(ring, &cqe);

		if (ret)
			return ret;
		bad += cqe->res != want;
		io_uring_cqe_seen(ring, cqe);
	}
	return bad;
}

/* One transfer, waited for: the CQE res. */
static inline int hyper_xfer_sync(struct io_uring *ring, int fd,
				  uint32_t handle, uint8_t dir, void *buf,
				  uint64_t len, uint64_t region_off,
				  int buf_index)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct hyper_xfer x = {
		.addr = (uintptr_t)buf,
		.len = len,
		.region_off = region_off,
		.handle = handle,
		.dir = dir,
	};

	if (!sqe)
		return -EBUSY;
	hyper_prep_xfer(sqe, fd, &x, buf_index);
	return hyper_submit_wait(ring, NULL);
}

static inline long long hyper_stat(int idx, const char *name)
{
	char attr[64];

	snprintf(attr, sizeof(attr), "stats/%s", name);
	return hyper_sysfs_ll(idx, attr);
}

#endif /* HYPER_URING_H */
