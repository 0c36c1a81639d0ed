// SPDX-License-Identifier: GPL-2.0
/*
 * hyper.ko's transfer engine without libhyper: allocate a pool region,
 * store a registered buffer into it through io_uring, prefetch it back
 * into the zeroed buffer and compare.  usage: kmod_xfer [/dev/hyperN]
 * (cc ... -luring; needs hyper.ko loaded)
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/hyper.h>

#define LEN	(1 << 20)

/* One transfer between the registered buffer 0 and the region; its res. */
static int xfer(struct io_uring *ring, int fd, void *buf, uint32_t handle,
		uint32_t dir)
{
	struct hyper_xfer x = {
		.addr = (uintptr_t)buf,		/* user side */
		.len = LEN,
		.region_off = 0,		/* pool side: region + offset */
		.handle = handle,		/* from HYPER_IOC_ALLOC */
		.dir = dir,			/* HYPER_DIR_PREFETCH or _STORE */
	};
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = HYPER_URING_CMD_XFER;
	memset(sqe->cmd, 0, 80);		/* the payload's padding must be 0 */
	memcpy(sqe->cmd, &x, sizeof(x));
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;	/* registered buffer ... */
	sqe->buf_index = 0;				/* ... number 0 */
	if ((res = io_uring_submit(ring)) != 1 || (res = io_uring_wait_cqe(ring, &cqe)))
		return res < 0 ? res : -EIO;
	res = cqe->res;				/* bytes moved, or -errno */
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/hyper0";
	struct hyper_alloc a = { .size = LEN };
	struct hyper_free f = { 0 };
	struct io_uring ring;
	struct iovec iov;
	unsigned char *buf;
	int fd, ret;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fprintf(stderr, "kmod_xfer: %s: %s (is hyper.ko loaded?)\n",
			       dev, strerror(errno)), 1;
	if (ioctl(fd, HYPER_IOC_ALLOC, &a))
		return fprintf(stderr, "kmod_xfer: HYPER_IOC_ALLOC: %s\n", strerror(errno)), 1;
	/* A command's payload is 32 bytes: the ring needs 128-byte SQEs. */
	if ((ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128)))
		return fprintf(stderr, "kmod_xfer: io_uring: %s\n", strerror(-ret)), 1;
	buf = aligned_alloc(4096, LEN);
	iov.iov_base = buf;
	iov.iov_len = LEN;
	if (!buf || (ret = io_uring_register_buffers(&ring, &iov, 1)))
		return fprintf(stderr, "kmod_xfer: registering the buffer failed\n"), 1;
	for (int i = 0; i < LEN; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	if ((ret = xfer(&ring, fd, buf, a.handle, HYPER_DIR_STORE)) != LEN)
		return fprintf(stderr, "kmod_xfer: store: %d\n", ret), 1;
	memset(buf, 0, LEN);
	if ((ret = xfer(&ring, fd, buf, a.handle, HYPER_DIR_PREFETCH)) != LEN)
		return fprintf(stderr, "kmod_xfer: prefetch: %d\n", ret), 1;
	for (int i = 0; i < LEN; i++)
		if (buf[i] != (unsigned char)(i * 7 + 1))
			return fprintf(stderr, "kmod_xfer: byte %d differs\n", i), 1;
	f.handle = a.handle;
	if (ioctl(fd, HYPER_IOC_FREE, &f))
		return fprintf(stderr, "kmod_xfer: HYPER_IOC_FREE: %s\n", strerror(errno)), 1;
	printf("stored %d bytes into region %u and prefetched them back intact\n",
	       LEN, a.handle);
	io_uring_queue_exit(&ring);
	free(buf);
	return 0;
}
