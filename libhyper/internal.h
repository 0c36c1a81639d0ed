/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhyper internals: the context, its backend, its device memory and the
 * executor's per-tensor state.  Nothing here is shared between contexts.
 */
#ifndef LIBHYPER_INTERNAL_H
#define LIBHYPER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <liburing.h>

#include <hyper/hyper.h>
#include <linux/hyper.h>

#include "range.h"
#include "schedule.h"

#define HX_DEFAULT_DEVICE	"/dev/hyper0"
#define HX_DEFAULT_POOL		(64ULL << 30)
#define HX_DEFAULT_QD		256
#define HX_DEFAULT_CHUNK	(4ULL << 20)
/* Fits the length half of a CQE's user_data, and a single read(2). */
#define HX_MAX_CHUNK		(1ULL << 30)
/* io_uring refuses to register more than 1 GiB as one buffer. */
#define HX_MAX_BUF		(1ULL << 30)
/* Device placement granule: a cache line, enough for any vector unit. */
#define HX_DEV_ALIGN		HS_DEV_ALIGN
#define HX_POOL_ALIGN		64

#define HX_DIR_PREFETCH		1
#define HX_DIR_STORE		2

struct hyper_ctx;
struct hx_cu;
struct hx_cw;
struct hx_batch;

struct hyper_region {
	struct hyper_region *next;
	uint64_t size;
	unsigned int flags;
	bool internal;		/* libhyper's own, for unbound pool copies */
	void *map;
	/* shmem: offset in the memfd; kmod: handle and mmap offset */
	uint64_t off;
	uint32_t handle;
	uint64_t mmap_off;
	/* shared objects (object.c) */
	bool object;
	bool published;		/* visible to other nodes */
	bool rdonly;		/* published or opened: no store, PROT_READ */
	bool dir_ok;		/* its tensor directory was checked */
	int ofd;		/* shmem: the object's file, else -1 */
	char name[HYPER_OBJECT_NAME_MAX + 1];
};

struct hx_backend {
	const char *name;
	int id;			/* enum hyper_backend */
	unsigned int ring_flags;
	int (*open)(struct hyper_ctx *ctx, const struct hyper_open_opts *o);
	void (*close)(struct hyper_ctx *ctx);
	int (*region_alloc)(struct hyper_ctx *ctx, struct hyper_region *reg);
	void (*region_free)(struct hyper_ctx *ctx, struct hyper_region *reg);
	int (*region_map)(struct hyper_ctx *ctx, struct hyper_region *reg);
	void (*prep_xfer)(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			  int dir, void *addr, uint32_t len, uint16_t buf_index,
			  const struct hyper_region *reg, uint64_t off);
	/* kmod: several requests as one SQE (NULL: the backend has none) */
	void (*fill_desc)(struct hyper_xfer *x, int dir, void *addr, uint32_t len,
			  const struct hyper_region *reg, uint64_t off);
	void (*prep_batch)(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			   const struct hx_batch *b);
	/* hyper_region_read/_write: a plain (unregistered) user buffer */
	void (*prep_plain)(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			   int dir, void *addr, uint32_t len,
			   const struct hyper_region *reg, uint64_t off);
	/* shared objects: reg->name is set; size in reg->size (open: out) */
	int (*obj_create)(struct hyper_ctx *ctx, struct hyper_region *reg);
	int (*obj_publish)(struct hyper_ctx *ctx, struct hyper_region *reg);
	int (*obj_open)(struct hyper_ctx *ctx, struct hyper_region *reg);
	int (*obj_delete)(struct hyper_ctx *ctx, const char *name);
};

/* Requests of one step staged as one HYPER_URING_CMD_BATCH (kmod). */
#define HX_BATCH_MAX		256
/* user_data of a batch's CQE: this bit and the batch's address. */
#define HX_UD_BATCH		(1ULL << 63)

struct hx_batch {
	uint32_t n;
	uint16_t buf_index;
	uint64_t bytes;
	uint64_t ud[HX_BATCH_MAX];	/* each request's own user_data */
	/* The module reads these until the command completes. */
	struct hyper_xfer desc[HX_BATCH_MAX];
};

extern const struct hx_backend hx_backend_shmem;
extern const struct hx_backend hx_backend_kmod;

/* One registered buffer (a caller's iovec may be split at 1 GiB). */
struct hx_buf {
	uintptr_t start, end;
};

struct hx_tensor {
	uintptr_t dev;		/* device address while it holds space */
	struct hyper_region *reg;
	uint64_t reg_off;
	uint64_t arena_off;
	uint32_t nr_prefetch;	/* in flight */
	uint32_t nr_store;	/* in flight */
	bool resident;
	bool pool_valid;
	bool explicit_dev;	/* hyper_bind_device() */
	bool arena_held;	/* arena_off is allocated */
	bool free_pending;	/* detached: free arena space when idle */
	uint32_t res_next;	/* residencies placed so far, for the layout */
	bool early;		/* its next scheduled prefetch was issued ahead */
	bool deferred;		/* prefetch issued, waiting for its place (exec.c) */
	/* HYPER_BIND_OBJECT_COPY: its pool copy is filled from here at prepare */
	struct hyper_region *copy_from;
	uint64_t copy_off;
};

/* One cache op in flight, possibly split into several requests. */
struct hx_xfer {
	uint32_t tensor;
	uint32_t left;		/* requests not yet completed */
	uint32_t next_free;
	int32_t err;
	uint8_t dir;
	uint64_t bytes;		/* moved so far */
	uint64_t copy_ns;	/* earliest copy start of its requests, 0: unknown */
	uint64_t done_ns;	/* latest completion time of its requests */
};

struct hyper_ctx {
	const struct hx_backend *be;
	unsigned int flags;
	struct io_uring ring;
	bool ring_ok;
	uint32_t cq_entries;
	uint64_t chunk;
	char err[512];

	/* backend state */
	int fd;
	uint64_t pool_size;
	struct hx_range pool;	/* shmem: memfd space */
	int numa_node;		/* shmem, -1 if unbound */
	uint64_t page_size;	/* kmod: region granule */
	struct hyper_region *regions;
	char *objects_dir;	/* shmem: where shared objects are files */
	int objdir_fd;		/* shmem: that directory, opened at first use */

	/* device memory */
	struct hx_buf *bufs;
	uint32_t nr_bufs;
	uintptr_t arena_base;
	struct hx_range arena;
	bool has_arena;

	/* executor */
	struct hyper_schedule *sched;
	struct hx_tensor *t;
	bool prepared;
	bool in_step;
	uint32_t cur;		/* next step to begin */
	int async_err;		/* first failed transfer, sticky */
	char async_msg[512];
	int broken;		/* a step failed half-way, sticky */
	struct hx_xfer *xf;
	uint32_t nr_xf, xf_free;
	uint32_t inflight;	/* requests submitted, CQE not reaped */
	uint32_t unsubmitted;	/* SQEs prepared, not yet submitted */
	struct hx_batch *stage;	/* kmod: requests not yet in an SQE */
	uint32_t max_batch;	/* kmod: the module's limit, 0: no batches */
	uint32_t nr_free_pending;
	uint32_t *defer;	/* prefetches waiting for their place, in order */
	uint32_t nr_defer;
	struct hyper_stats st;

	/* copy engine: enum hyper_copy_engine, never DEFAULT once resolved */
	uint32_t copy_engine;
	uint32_t copy_flags;	/* HYPER_COPY_POLL, _NO_HELP for a default engine */
	struct hx_cw *cw;	/* HYPER_COPY_WORKER's threads */
	struct hx_cu *cu;	/* HYPER_DEVICE_CUDA: the transport (device-cuda.c) */

	/* late-prefetch adaptation (early.c) */
	uint32_t early_ahead;	/* steps looked ahead, 0: not (yet) */
	uint64_t *early_extra;	/* per step: bytes resident ahead of the plan */
	uint64_t *step_peak;	/* per step: the plan's most resident bytes */
	/* per before op: the plan's most in its step up to, not counting, it */
	uint64_t *pre_peak;
	uint32_t *pre_first;	/* per step: index of its first before op */

	/* tracer */
	hyper_event_fn ev_fn;
	void *ev_arg;
};

__attribute__((format(printf, 3, 4)))
int hx_err(struct hyper_ctx *ctx, int err, const char *fmt, ...);
int hx_ring_ready(struct hyper_ctx *ctx, const struct io_uring_params *p);

int hx_region_add(struct hyper_ctx *ctx, struct hyper_region *reg,
		  int (*make)(struct hyper_ctx *ctx, struct hyper_region *reg),
		  struct hyper_region **regp);
int hx_region_new(struct hyper_ctx *ctx, uint64_t bytes, unsigned int flags,
		  bool internal, struct hyper_region **regp);
bool hx_region_mine(const struct hyper_ctx *ctx, const struct hyper_region *reg);
int hx_object_check(struct hyper_ctx *ctx);
void hx_object_fill(struct hyper_ctx *ctx);
void hx_regions_free_all(struct hyper_ctx *ctx);
int hx_buf_find(const struct hyper_ctx *ctx, uintptr_t addr, uint64_t len);
int hx_exec_reset(struct hyper_ctx *ctx);
void hx_exec_fini(struct hyper_ctx *ctx);
int hx_copy_prepare(struct hyper_ctx *ctx);
int hx_prefetch_now(struct hyper_ctx *ctx, uint32_t ti);
void hx_early_late(struct hyper_ctx *ctx);
int hx_early_issue(struct hyper_ctx *ctx);
int hx_early_reset(struct hyper_ctx *ctx);
void hx_early_fini(struct hyper_ctx *ctx);
void hx_copy_fini(struct hyper_ctx *ctx);

#endif /* LIBHYPER_INTERNAL_H */
