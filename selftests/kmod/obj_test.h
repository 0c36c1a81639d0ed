/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the shared-object tests (selftests/kmod/objects.c, one node;
 * twonode_objects.c and twonode_fence.c, two): the HYPER_IOC_OBJ_*
 * ioctls, one synchronous STORE or PREFETCH, and the pool's object table
 * (sysfs pool/objects).
 */
#ifndef OBJ_TEST_H
#define OBJ_TEST_H

#include "hyper_uring.h"

#define OBJ_STALL	"/sys/kernel/debug/hyper/hyper0/obj_stall"

/* CREATE or OPEN: 0 or -errno; fills the handle, mmap offset, size, node. */
static inline int obj_call(int fd, unsigned long cmd, const char *name,
			   uint64_t size, struct hyper_obj *out)
{
	struct hyper_obj o;

	memset(&o, 0, sizeof(o));
	snprintf(o.name, sizeof(o.name), "%s", name);
	o.size = size;
	if (ioctl(fd, cmd, &o))
		return -errno;
	if (out)
		*out = o;
	return 0;
}

static inline int obj_create(int fd, const char *name, uint64_t size,
			     struct hyper_obj *out)
{
	return obj_call(fd, HYPER_IOC_OBJ_CREATE, name, size, out);
}

static inline int obj_open(int fd, const char *name, struct hyper_obj *out)
{
	return obj_call(fd, HYPER_IOC_OBJ_OPEN, name, 0, out);
}

static inline int obj_delete(int fd, const char *name)
{
	return obj_call(fd, HYPER_IOC_OBJ_DELETE, name, 0, NULL);
}

static inline int obj_publish(int fd, uint32_t handle)
{
	struct hyper_obj_publish p = { .handle = handle };

	return ioctl(fd, HYPER_IOC_OBJ_PUBLISH, &p) ? -errno : 0;
}

/* The region flags HYPER_IOC_QUERY gives, or -errno. */
static inline long long obj_query_flags(int fd, uint32_t handle)
{
	struct hyper_region_info q;

	memset(&q, 0, sizeof(q));
	q.handle = handle;
	if (ioctl(fd, HYPER_IOC_QUERY, &q))
		return -errno;
	return q.flags;
}

/* One STORE (@store) or PREFETCH through a ring of its own: 0 or -errno. */
static inline int obj_xfer(int fd, uint32_t handle, uint64_t off, void *buf,
			   uint64_t len, bool store)
{
	struct hyper_xfer x;
	struct io_uring ring;
	int ret;

	memset(&x, 0, sizeof(x));
	x.handle = handle;
	x.dir = store ? HYPER_DIR_STORE : HYPER_DIR_PREFETCH;
	x.region_off = off;
	x.addr = (uintptr_t)buf;
	x.len = len;
	ret = hyper_ring_init(&ring, 4);
	if (ret)
		return ret;
	hyper_prep_xfer(io_uring_get_sqe(&ring), fd, &x, -1);
	ret = hyper_submit_wait(&ring, NULL);
	io_uring_queue_exit(&ring);
	return ret < 0 ? ret : (uint64_t)ret == len ? 0 : -EIO;
}

/*
 * The line of object @name in pool/objects ("NAME STATE SIZE NODE REFS"):
 * its state and references; -ENOENT when it is not listed.
 */
static inline int obj_line(const char *name, char *state, size_t len,
			   long long *size, int *node, long long *refs)
{
	char line[256], n[80], st[32];
	long long sz, rf;
	int nd, ret = -ENOENT;
	FILE *f;

	f = fopen(HYPER_SYSFS "/hyper0/pool/objects", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%79s %31s %lld %d %lld", n, st, &sz, &nd,
			   &rf) == 5 && !strcmp(n, name)) {
			if (state)
				snprintf(state, len, "%s", st);
			if (size)
				*size = sz;
			if (node)
				*node = nd;
			if (refs)
				*refs = rf;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/* debugfs obj_stall: 0 off, 1 armed, 2 a PUBLISH waits, its record torn. */
static inline int obj_stall(void)
{
	char buf[16];

	if (hyper_read_file(OBJ_STALL, buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

#endif /* OBJ_TEST_H */
