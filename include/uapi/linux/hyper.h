/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * hyperoffload: supernode pool memory as device memory.
 *
 * This is the one definition of the user/kernel interface of /dev/hyperN,
 * shared by the module (kmod/) and userspace (libhyper/, tools/,
 * selftests/).  Every structure has an explicit size that is checked at
 * compile time, every reserved field must be zero on input and is zero on
 * output, and every flag word has a mask of known bits: anything else is
 * rejected with -EINVAL.  See Documentation/uapi.md and
 * Documentation/transfer-engine.md.
 */
#ifndef _UAPI_LINUX_HYPER_H
#define _UAPI_LINUX_HYPER_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define HYPER_ABI_VERSION	1

/*
 * ioctl and uring_cmd numbers are ioctl-encoded with this type.  'h'
 * 0x00-0x7f is taken by other drivers in ioctl-number.rst, so ours start
 * at 0x80.
 */
#define HYPER_IOC_MAGIC		'h'

/* Pool sources, as reported by HYPER_IOC_INFO and sysfs "source". */
enum hyper_pool_source {
	HYPER_SOURCE_WINDOW	= 1,	/* firmware-reserved physical window */
	HYPER_SOURCE_EMULATED	= 2,	/* pages taken from a NUMA node */
};

/**
 * struct hyper_pool_info - HYPER_IOC_INFO result
 * @abi_version:	HYPER_ABI_VERSION of the running module
 * @source:		enum hyper_pool_source
 * @size:		pool size in bytes
 * @free:		bytes not allocated to any region, all openers
 * @numa_node:		NUMA node of the pool memory, -1 if unknown
 * @nr_regions:		regions held by this open file
 * @page_size:		allocation granule (PAGE_SIZE)
 * @huge_align:		alignment given by HYPER_ALLOC_HUGE_ALIGN
 * @max_batch:		largest descriptor count of HYPER_URING_CMD_BATCH
 * @reserved0:		zero
 * @reserved:		zero
 */
struct hyper_pool_info {
	__u32 abi_version;
	__u32 source;
	__u64 size;
	__u64 free;
	__s32 numa_node;
	__u32 nr_regions;
	__u32 page_size;
	__u32 huge_align;
	__u32 max_batch;
	__u32 reserved0;
	__u64 reserved[4];
};

/* HYPER_IOC_ALLOC flags */
#define HYPER_ALLOC_HUGE_ALIGN	(1U << 0)	/* start on a 2 MiB boundary */
#define HYPER_ALLOC_FLAGS_MASK	(HYPER_ALLOC_HUGE_ALIGN)

/**
 * struct hyper_alloc - HYPER_IOC_ALLOC argument
 * @size:		in: bytes, a non-zero multiple of the page size
 * @flags:		in: HYPER_ALLOC_* flags
 * @handle:		out: region handle, valid for this open file only;
 *			handles are given out cyclically, a freed one is not
 *			reused at once
 * @mmap_offset:	out: offset to pass to mmap() for this region
 * @reserved:		in: must be zero
 *
 * The region is zero-filled before it is handed out; a fatal signal
 * during the zeroing ends the call with -EINTR, and nothing is kept.
 */
struct hyper_alloc {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 mmap_offset;
	__u64 reserved[2];
};

/**
 * struct hyper_free - HYPER_IOC_FREE argument
 * @handle:	region handle from HYPER_IOC_ALLOC
 * @flags:	must be zero
 * @reserved:	must be zero
 *
 * The handle is gone at once; the memory returns to the pool when the last
 * mapping and the last in-flight transfer using it are gone too.
 */
struct hyper_free {
	__u32 handle;
	__u32 flags;
	__u64 reserved[1];
};

/**
 * struct hyper_region_info - HYPER_IOC_QUERY argument
 * @handle:		in: region handle
 * @flags:		out: HYPER_ALLOC_* flags the region was made with
 * @size:		out: region size in bytes
 * @mmap_offset:	out: offset to pass to mmap()
 * @reserved:		in: must be zero; out: zero
 */
struct hyper_region_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u64 mmap_offset;
	__u64 reserved[2];
};

/*
 * Shared objects (Documentation/supernode.md, "Shared objects"): named,
 * reference-counted pool memory that every node of a formatted pool can
 * open.  They exist only on a module that joined a pool (node_id >= 0);
 * elsewhere every HYPER_IOC_OBJ_* is -ENODEV.
 *
 * A node creates an object (HYPER_IOC_OBJ_CREATE) and gets a writable
 * region handle of this open file: it writes it by mmap or by
 * HYPER_DIR_STORE, as any region.  A store into an object flushes what it
 * wrote from this CPU's caches before it completes.  HYPER_IOC_OBJ_PUBLISH
 * flushes what mappings may have written, then writes the record that
 * makes the object visible, last; until then no other node and no other
 * open file can see it, and an object whose publish did not finish (its
 * node died) is never visible.  After publish the object never changes:
 * the creator's handle is read-only too.
 *
 * HYPER_IOC_OBJ_OPEN (any node, any open file with FMODE_READ) returns a
 * read-only region handle: HYPER_DIR_PREFETCH and mmap(PROT_READ) work, a
 * store is -EACCES, a writable mmap or mprotect is -EACCES.  Stale cache
 * lines of the object are dropped before the handle is returned.
 *
 * Every handle of an object holds one reference of its node; the count of
 * each node lives in the pool and only that node writes it.
 * HYPER_IOC_FREE of the handle (or closing the file) drops it.
 * HYPER_IOC_OBJ_DELETE removes the name at once; the memory returns to
 * the pool when the last reference on any node is gone.  Fencing a node
 * drops its references and frees the objects it had not published.
 */
#define HYPER_OBJ_NAME_LEN	64	/* with the NUL: 1..63 of [A-Za-z0-9._-] */

/**
 * struct hyper_obj - HYPER_IOC_OBJ_CREATE, _OPEN and _DELETE argument
 * @name:	in: NUL-terminated name, 1..63 characters of [A-Za-z0-9._-],
 *		bytes after the NUL zero
 * @size:	CREATE in: bytes, a non-zero multiple of the page size;
 *		OPEN out: the object's size; DELETE: must be zero
 * @flags:	in: must be zero
 * @handle:	CREATE, OPEN out: region handle of this open file
 * @mmap_offset: CREATE, OPEN out: offset to pass to mmap()
 * @node:	CREATE, OPEN out: the node that created the object
 * @reserved0:	must be zero
 * @reserved:	must be zero
 *
 * Errors: CREATE -EEXIST (the name is taken, published or not), -ENOSPC
 * (no room in the pool), -ENFILE (the object table is full); OPEN -ENOENT
 * (no published object of that name); DELETE -ENOENT; all -EINVAL for a
 * bad name or a non-zero reserved field, -ENODEV when the module has not
 * joined a pool, -EBADF for CREATE/DELETE on a file not open for writing
 * and OPEN on one not open for reading.
 */
struct hyper_obj {
	char  name[HYPER_OBJ_NAME_LEN];
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 mmap_offset;
	__u32 node;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct hyper_obj_publish - HYPER_IOC_OBJ_PUBLISH argument
 * @handle:	in: handle that HYPER_IOC_OBJ_CREATE returned on this file
 * @flags:	in: must be zero
 * @reserved:	must be zero
 *
 * Errors: -EINVAL (not an object this file created), -EALREADY (already
 * published), -EBUSY (a writable mapping of it exists: munmap it first;
 * or pages are still pinned or spliced through one: release them).
 */
struct hyper_obj_publish {
	__u32 handle;
	__u32 flags;
	__u64 reserved[1];
};

/* HYPER_IOC_QUERY out flags, beside the HYPER_ALLOC_* ones */
#define HYPER_REGION_OBJECT	(1U << 16)	/* the region is a shared object */
#define HYPER_REGION_RDONLY	(1U << 17)	/* opened, or published: no store */

#define HYPER_IOC_INFO	_IOR(HYPER_IOC_MAGIC, 0x80, struct hyper_pool_info)
#define HYPER_IOC_ALLOC	_IOWR(HYPER_IOC_MAGIC, 0x81, struct hyper_alloc)
#define HYPER_IOC_FREE	_IOW(HYPER_IOC_MAGIC, 0x82, struct hyper_free)
#define HYPER_IOC_QUERY	_IOWR(HYPER_IOC_MAGIC, 0x83, struct hyper_region_info)
#define HYPER_IOC_OBJ_CREATE	_IOWR(HYPER_IOC_MAGIC, 0x84, struct hyper_obj)
#define HYPER_IOC_OBJ_PUBLISH	_IOW(HYPER_IOC_MAGIC, 0x85, struct hyper_obj_publish)
#define HYPER_IOC_OBJ_OPEN	_IOWR(HYPER_IOC_MAGIC, 0x86, struct hyper_obj)
#define HYPER_IOC_OBJ_DELETE	_IOW(HYPER_IOC_MAGIC, 0x87, struct hyper_obj)

/*
 * Transfers: IORING_OP_URING_CMD on /dev/hyperN.  The ring must be set up
 * with IORING_SETUP_SQE128: the command payload (sqe->cmd) is
 * HYPER_URING_CMD_PAYLOAD (80) bytes and
 * a transfer needs more than the 16 of a plain SQE.  The payload bytes
 * after the command's structure are reserved and must be zero.  IOPOLL
 * rings are not supported (io_uring answers -EOPNOTSUPP).  The CQE res is the
 * number of bytes moved, or -errno.  On a ring set up with
 * IORING_SETUP_CQE32 as well, big_cqe[0] of the CQE is the time the
 * request completed in the module, CLOCK_MONOTONIC nanoseconds: what a
 * tracer needs, since the CQE may be reaped much later.
 *
 * The user side of a transfer is either a registered buffer
 * (sqe->uring_cmd_flags = IORING_URING_CMD_FIXED, sqe->buf_index = index;
 * @addr must lie inside that buffer), which is the zero-copy path, or a
 * plain user address that the module pins for the life of the request.
 *
 * The payload, and a batch's descriptor array, are read once, when
 * io_uring first hands the command to the module (also when it retries
 * the command later from a worker): after io_uring_submit() returned, the
 * SQ slot and the array may be reused.  On Linux 6.10 to 6.13, a command
 * io_uring starts later (one after an IOSQE_IO_LINK SQE, IOSQE_IO_DRAIN,
 * the last of an unterminated link) needs IOSQE_ASYNC: otherwise io_uring
 * hands the module the SQ slot itself, and the module refuses the command
 * with -EOPNOTSUPP once the slot went back to the application.
 */
/* Bytes of an SQE128 command payload (sqe->cmd): 128 - 48 of the header. */
#define HYPER_URING_CMD_PAYLOAD	80

#define HYPER_DIR_PREFETCH	1	/* pool region -> user buffer */
#define HYPER_DIR_STORE		2	/* user buffer -> pool region */

/**
 * struct hyper_xfer - one transfer
 * @addr:	user address of the buffer side
 * @len:	bytes, non-zero
 * @region_off:	byte offset into the region; @region_off + @len <= size
 * @handle:	region handle of the submitting file
 * @dir:	HYPER_DIR_PREFETCH or HYPER_DIR_STORE
 * @reserved0:	must be zero
 * @flags:	must be zero
 *
 * Used inline as the payload of HYPER_URING_CMD_XFER and as the element of
 * the array that HYPER_URING_CMD_BATCH points to.
 */
struct hyper_xfer {
	__u64 addr;
	__u64 len;
	__u64 region_off;
	__u32 handle;
	__u8  dir;
	__u8  reserved0;
	__u16 flags;
};

#define HYPER_XFER_FLAGS_MASK	0

/*
 * Most bytes one request (one SQE, all its descriptors together) may move:
 * the CQE res that reports them is a signed 32-bit value.
 */
#define HYPER_XFER_MAX_BYTES	(1U << 30)

/* Largest descriptor count of one HYPER_URING_CMD_BATCH. */
#define HYPER_BATCH_MAX		1024

/**
 * struct hyper_xfer_batch - payload of HYPER_URING_CMD_BATCH
 * @descs:	user pointer to @count struct hyper_xfer
 * @count:	1..HYPER_BATCH_MAX
 * @flags:	must be zero
 * @reserved:	must be zero
 *
 * The descriptors may run in parallel and complete as one CQE whose res is
 * the total of bytes moved, or the first error.  The array is copied
 * when the command is first issued; changing it afterwards changes
 * nothing.  With
 * IORING_URING_CMD_FIXED every descriptor's @addr must lie inside the one
 * registered buffer named by sqe->buf_index.
 */
struct hyper_xfer_batch {
	__u64 descs;
	__u32 count;
	__u32 flags;
	__u64 reserved[2];
};

#define HYPER_BATCH_FLAGS_MASK	0

/*
 * Ranges of the transfer-engine tunables in /sys/class/hyper/hyperN/
 * (Documentation/ABI/testing/sysfs-class-hyper); chunk_size is also a
 * power of two.
 */
#define HYPER_WORKERS_MIN	1
#define HYPER_WORKERS_MAX	64
#define HYPER_CHUNK_SIZE_MIN	(64U << 10)
#define HYPER_CHUNK_SIZE_MAX	(64U << 20)
#define HYPER_QUEUE_DEPTH_MIN	1
#define HYPER_QUEUE_DEPTH_MAX	4096
#define HYPER_INLINE_BYTES_MIN	0
#define HYPER_INLINE_BYTES_MAX	(1U << 20)

#define HYPER_URING_CMD_XFER	_IOW(HYPER_IOC_MAGIC, 0x90, struct hyper_xfer)
#define HYPER_URING_CMD_BATCH	_IOW(HYPER_IOC_MAGIC, 0x91, struct hyper_xfer_batch)

#endif /* _UAPI_LINUX_HYPER_H */
