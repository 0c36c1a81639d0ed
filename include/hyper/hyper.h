/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libhyper: run a compiler-produced transfer schedule against pooled
 * memory.  See libhyper(7) for the model and the thread-safety rules, and
 * Documentation/schedule-format.md for the schedule format.
 *
 * Every function that can fail returns 0 (or a non-negative value) on
 * success and a negative errno on failure; none of them exits or prints.
 * Structures passed in have reserved fields that must be zero; structures
 * passed out have room to grow.
 */
#ifndef HYPER_HYPER_H
#define HYPER_HYPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <hyper/vocab.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HYPER_SCHEDULE_VERSION	1

struct hyper_ctx;
struct hyper_region;
struct hyper_schedule;

/* ---- context ---------------------------------------------------------- */

enum hyper_backend {
	HYPER_BACKEND_DEFAULT	= 0,	/* kmod if the device exists, else shmem */
	HYPER_BACKEND_KMOD	= 1,	/* /dev/hyperN and its transfer engine */
	HYPER_BACKEND_SHMEM	= 2,	/* memfd pool, READ_FIXED/WRITE_FIXED */
};

/* hyper_open_opts.device_kind: where the arena is (LIBHYPER_1.3) */
enum hyper_device {
	HYPER_DEVICE_HOST	= 0,	/* host memory the caller registers */
	HYPER_DEVICE_CUDA	= 1,	/* GPU memory; copies on CUDA streams */
};

/* hyper_open_opts.flags */
#define HYPER_OPEN_NUMA		(1U << 0)	/* shmem: bind the pool to numa_node */
/*
 * After a prefetch came late (the operator waited for it), issue later
 * steps' prefetches ahead of their step, within the schedule's budget and
 * its arena layout.  See hyper_open(3).
 */
#define HYPER_OPEN_EARLY_PREFETCH (1U << 1)
/*
 * Fault injection for testing runners' own checks: hyper_step_begin() does
 * not wait for the prefetches of the tensors the operator uses.  Never set
 * it outside such a test; data races are its whole point.
 */
#define HYPER_OPEN_TEST_NO_WAIT	(1U << 31)
#define HYPER_OPEN_FLAGS_MASK	(HYPER_OPEN_NUMA | HYPER_OPEN_EARLY_PREFETCH | \
				 HYPER_OPEN_TEST_NO_WAIT)

/**
 * struct hyper_open_opts - how to open a context; all-zero means defaults
 * @backend:		enum hyper_backend
 * @flags:		HYPER_OPEN_*
 * @device:		kmod: device path, NULL for "/dev/hyper0"
 * @pool_bytes:		shmem: pool capacity (sparse), 0 for 64 GiB
 * @numa_node:		shmem: NUMA node of the pool, with HYPER_OPEN_NUMA
 * @queue_depth:	io_uring submission queue entries, 0 for 256
 * @chunk_bytes:	largest single transfer request, 0 for 4 MiB (HOST)
 *			or 1 GiB (CUDA: one copy and one event per transfer)
 * @device_kind:	enum hyper_device: HOST (0) or CUDA (LIBHYPER_1.3)
 * @device_ordinal:	CUDA: the device, as cudaSetDevice() numbers it
 * @objects_dir:	shmem: the directory of shared objects (LIBHYPER_1.5);
 *			NULL for $HYPER_OBJECTS_DIR, else
 *			/dev/shm/hyperoffload-objects-<uid>; kmod: must be NULL
 * @reserved:		must be zero
 */
struct hyper_open_opts {
	uint32_t backend;
	uint32_t flags;
	const char *device;
	uint64_t pool_bytes;
	int32_t numa_node;
	uint32_t queue_depth;
	uint64_t chunk_bytes;
	uint32_t device_kind;
	int32_t device_ordinal;
	const char *objects_dir;
	uint64_t reserved[4];
};

int hyper_open(struct hyper_ctx **ctxp, const struct hyper_open_opts *opts);
void hyper_close(struct hyper_ctx *ctx);
int hyper_backend(const struct hyper_ctx *ctx);

const char *hyper_strerror(int err);
const char *hyper_last_error(const struct hyper_ctx *ctx);

/* ---- pool regions ----------------------------------------------------- */

/* hyper_region_alloc() flags */
#define HYPER_REGION_HUGE_ALIGN	(1U << 0)	/* start on a 2 MiB boundary */

int hyper_region_alloc(struct hyper_ctx *ctx, uint64_t bytes, unsigned int flags,
		       struct hyper_region **regp);
int hyper_region_free(struct hyper_ctx *ctx, struct hyper_region *reg);
int hyper_region_map(struct hyper_ctx *ctx, struct hyper_region *reg,
		     void **addrp);
uint64_t hyper_region_size(const struct hyper_region *reg);

/*
 * One synchronous transfer between a region and a caller's buffer
 * through the context's transfer engine (LIBHYPER_1.5): read is a
 * PREFETCH, write a STORE.  The buffer need not be registered.
 */
int hyper_region_read(struct hyper_ctx *ctx, struct hyper_region *reg,
		      uint64_t off, void *buf, uint64_t len);
int hyper_region_write(struct hyper_ctx *ctx, struct hyper_region *reg,
		       uint64_t off, const void *buf, uint64_t len);

/* ---- shared objects (LIBHYPER_1.5) ------------------------------------ */

/*
 * Named pool memory other nodes (processes, with shmem) can open: created
 * writable, published once, read-only from then on.  See libhyper(7) and
 * Documentation/supernode.md.  Names are 1 to HYPER_OBJECT_NAME_MAX
 * characters of A-Z a-z 0-9 . _ - (not "." or "..").
 */
#define HYPER_OBJECT_NAME_MAX	63

int hyper_object_create(struct hyper_ctx *ctx, const char *name, uint64_t bytes,
			struct hyper_region **regp);
int hyper_object_publish(struct hyper_ctx *ctx, struct hyper_region *reg);
int hyper_object_open(struct hyper_ctx *ctx, const char *name,
		      struct hyper_region **regp);
int hyper_object_delete(struct hyper_ctx *ctx, const char *name);

/*
 * Tensors in an object: a directory at its start names each one (id, a
 * free-form description such as a dtype and shape, kind, bytes, offset).
 */
struct hyper_object_entry {
	const char *id;
	const char *desc;		/* "" when none */
	uint64_t offset;		/* from the object's start */
	uint64_t bytes;
	uint32_t kind;			/* enum hyper_tensor_kind, 0: none given */
	uint32_t reserved0;
	uint64_t reserved[2];
};

/* Pack @n caller buffers (@data[i] holds ents[i].bytes) as a published object. */
int hyper_object_pack(struct hyper_ctx *ctx, const char *name,
		      const struct hyper_object_entry *ents,
		      const void *const *data, unsigned int n,
		      struct hyper_region **regp);
/* Entry @idx of @obj's directory; -ENOENT past the last. */
int hyper_object_entry(struct hyper_ctx *ctx, struct hyper_region *obj,
		       unsigned int idx, struct hyper_object_entry *e);

/* ---- device memory ---------------------------------------------------- */

int hyper_register_buffers(struct hyper_ctx *ctx, const struct iovec *iov,
			   unsigned int nr);
int hyper_set_arena(struct hyper_ctx *ctx, void *base, uint64_t bytes);

/* ---- schedules -------------------------------------------------------- */

/* Arena offsets a schedule carries are multiples of this (and sizes round up to it). */
#define HYPER_ARENA_ALIGN	64

/* struct hyper_schedule_info.flags */
#define HYPER_SCHED_BUDGET		(1U << 0)
#define HYPER_SCHED_PRED_PEAK		(1U << 1)
#define HYPER_SCHED_PRED_STALL		(1U << 2)
#define HYPER_SCHED_PRED_MAKESPAN	(1U << 3)
/*
 * The schedule places its tensors itself: arena_bytes is its arena and
 * every residency has an offset in it (hyper_tensor_info.arena_offsets).
 */
#define HYPER_SCHED_ARENA		(1U << 4)

struct hyper_schedule_info {
	const char *name;		/* "" when absent */
	uint32_t version;
	uint32_t flags;			/* HYPER_SCHED_* */
	uint32_t nr_tensors;
	uint32_t nr_steps;
	uint64_t budget_bytes;		/* with HYPER_SCHED_BUDGET */
	uint64_t peak_device_bytes;	/* replayed by the validator */
	uint64_t total_compute_ns;
	uint64_t pred_peak_device_bytes;
	uint64_t pred_stall_ns;
	uint64_t pred_makespan_ns;
	uint64_t arena_bytes;		/* arena the layout needs, 0: none */
	/* "graph": what it was planned for; NULL when the schedule says not */
	const char *graph_name;
	const char *graph_hash;		/* "fnv1a64:" + 16 hex digits, checked */
	uint64_t reserved[5];
};

/* struct hyper_tensor_info.flags: what the schedule does with it */
#define HYPER_TENSOR_NEEDS_POOL		(1U << 0)
#define HYPER_TENSOR_NEEDS_DEVICE	(1U << 1)

struct hyper_tensor_info {
	const char *id;
	uint64_t bytes;
	uint32_t kind;			/* enum hyper_tensor_kind */
	uint32_t home;			/* enum hyper_home */
	uint32_t flags;			/* HYPER_TENSOR_* */
	/* arena offset of each residency, in the order they begin */
	uint32_t nr_arena_offsets;
	const uint64_t *arena_offsets;
	uint64_t reserved[3];
};

struct hyper_cop {
	uint32_t op;			/* enum hyper_cache_op */
	uint32_t tensor;		/* tensor index */
};

/* struct hyper_step_info.flags */
#define HYPER_STEP_GEMM		(1U << 0)	/* a valid "x-gemm" shape */

struct hyper_step_info {
	const char *op;
	uint64_t compute_ns;
	const struct hyper_cop *before;
	const struct hyper_cop *after;
	const uint32_t *uses;		/* tensor indices */
	const uint32_t *defines;
	uint32_t nr_before;
	uint32_t nr_after;
	uint32_t nr_uses;
	uint32_t nr_defines;
	uint32_t flags;			/* HYPER_STEP_* */
	uint32_t reserved0;
	uint64_t gemm_m, gemm_n, gemm_k;
	uint64_t reserved[4];
};

/* hyper_schedule_ext() scopes */
enum hyper_ext_scope {
	HYPER_EXT_SCHEDULE	= 0,
	HYPER_EXT_TENSOR	= 1,
	HYPER_EXT_STEP		= 2,
};

int hyper_schedule_parse(const char *buf, size_t len,
			 struct hyper_schedule **schedp, char *err, size_t errlen);
/*
 * A schedule from plain structures (an in-process planner): the info's
 * name, flags, nr_tensors, nr_steps, budget and predictions, each
 * tensor's id, bytes, kind, home and (with HYPER_SCHED_ARENA, which
 * makes arena_bytes an input) arena offsets, each step's op, compute_ns,
 * lists and GEMM shape.  Output-only fields are ignored; validated like a
 * file.
 */
int hyper_schedule_new(const struct hyper_schedule_info *info,
		       const struct hyper_tensor_info *tensors,
		       const struct hyper_step_info *steps,
		       struct hyper_schedule **schedp, char *err, size_t errlen);
/*
 * The same in pieces (LIBHYPER_1.6): begin with the info, add the tensors
 * and the steps in as many calls as the caller likes (each piece is
 * copied and checked as it comes, so the caller's buffer can be reused),
 * then end; hyper_schedule_end() with @schedp NULL gives up.
 */
struct hyper_schedule_builder;

int hyper_schedule_begin(const struct hyper_schedule_info *info,
			 struct hyper_schedule_builder **bp,
			 char *err, size_t errlen);
int hyper_schedule_add_tensors(struct hyper_schedule_builder *b,
			       const struct hyper_tensor_info *tensors,
			       uint32_t n, char *err, size_t errlen);
int hyper_schedule_add_steps(struct hyper_schedule_builder *b,
			     const struct hyper_step_info *steps, uint32_t n,
			     char *err, size_t errlen);
int hyper_schedule_end(struct hyper_schedule_builder *b,
		       struct hyper_schedule **schedp, char *err, size_t errlen);
int hyper_schedule_load(const char *path, struct hyper_schedule **schedp,
			char *err, size_t errlen);
void hyper_schedule_free(struct hyper_schedule *sched);
/* Another reference to @sched (returned), for hyper_schedule_free(). */
struct hyper_schedule *hyper_schedule_get(struct hyper_schedule *sched);
int hyper_schedule_info(const struct hyper_schedule *sched,
			struct hyper_schedule_info *info);
int hyper_schedule_tensor(const struct hyper_schedule *sched, unsigned int idx,
			  struct hyper_tensor_info *info);
int hyper_schedule_step(const struct hyper_schedule *sched, unsigned int idx,
			struct hyper_step_info *info);
int hyper_schedule_find(const struct hyper_schedule *sched, const char *id);
const char *hyper_schedule_ext(const struct hyper_schedule *sched,
			       enum hyper_ext_scope scope, unsigned int idx,
			       const char *key);

/* ---- execution -------------------------------------------------------- */

int hyper_attach(struct hyper_ctx *ctx, struct hyper_schedule *sched);
int hyper_bind_device(struct hyper_ctx *ctx, unsigned int tensor, void *addr);
int hyper_bind_pool(struct hyper_ctx *ctx, unsigned int tensor,
		    struct hyper_region *reg, uint64_t offset);
int hyper_prepare(struct hyper_ctx *ctx);

/*
 * A schedule's tensors and shared objects (LIBHYPER_1.5).  Export: after
 * hyper_prepare(), every tensor whose kind bit (1u << HYPER_KIND_*) is in
 * @kinds and that has a pool copy, from it, as a new published object.
 * Bind: after hyper_attach(), every tensor named in @obj's directory takes
 * its pool copy from it, read-only in place, or copied into a private
 * pool copy at hyper_prepare() with HYPER_BIND_OBJECT_COPY.
 */
#define HYPER_BIND_OBJECT_COPY	(1U << 0)

int hyper_object_export(struct hyper_ctx *ctx, const char *name, uint32_t kinds,
			struct hyper_region **regp);
int hyper_bind_object(struct hyper_ctx *ctx, struct hyper_region *obj,
		      unsigned int flags);

void *hyper_tensor_ptr(const struct hyper_ctx *ctx, unsigned int tensor);
void *hyper_tensor_pool_ptr(const struct hyper_ctx *ctx, unsigned int tensor);

int hyper_step_begin(struct hyper_ctx *ctx);
int hyper_step_end(struct hyper_ctx *ctx);

typedef int (*hyper_op_fn)(struct hyper_ctx *ctx, unsigned int step, void *arg);
int hyper_run(struct hyper_ctx *ctx, hyper_op_fn fn, void *arg);

int hyper_wait_tensor(struct hyper_ctx *ctx, unsigned int tensor);
/*
 * CUDA contexts (LIBHYPER_1.3): @stream is a cudaStream_t.  The caller's
 * kernels run on the compute stream (the legacy default stream until
 * set); hyper_wait_tensor_stream() makes @stream wait for the tensor's
 * transfers without blocking the CPU.
 */
int hyper_set_compute_stream(struct hyper_ctx *ctx, void *stream);
int hyper_wait_tensor_stream(struct hyper_ctx *ctx, unsigned int tensor,
			     void *stream);
int hyper_drain(struct hyper_ctx *ctx);
int hyper_rewind(struct hyper_ctx *ctx);

/**
 * struct hyper_stats - executor counters since open or hyper_reset_stats()
 *
 * Bytes count what completed transfers moved; residency follows the
 * schedule's state machine (the validator's peak for a full run), arena
 * figures what libhyper really holds, alignment and detached tensors whose
 * store is still in flight included.
 */
struct hyper_stats {
	uint64_t steps;
	uint64_t stall_ns;
	uint64_t nr_stalls;
	uint64_t bytes_prefetched;
	uint64_t bytes_stored;
	uint64_t nr_prefetch;
	uint64_t nr_store;
	uint64_t nr_detach;
	uint64_t nr_requests;
	uint64_t resident_bytes;
	uint64_t peak_resident_bytes;
	uint64_t arena_bytes;
	uint64_t peak_arena_bytes;
	uint64_t nr_batches;		/* kmod: BATCH commands (LIBHYPER_1.2) */
	uint64_t nr_copied_inline;	/* worker: requests a waiting caller copied */
	uint64_t nr_early;		/* prefetches issued ahead of their step */
	uint64_t reserved[4];
};

int hyper_get_stats(const struct hyper_ctx *ctx, struct hyper_stats *stats);
void hyper_reset_stats(struct hyper_ctx *ctx);

/* ---- events, for tracers ---------------------------------------------- */

enum hyper_event_type {
	HYPER_EV_XFER_START	= 1,	/* a cache op issued: its first request queued */
	HYPER_EV_XFER_DONE	= 2,	/* its last request completed */
	HYPER_EV_STALL_BEGIN	= 3,	/* the executor starts waiting */
	HYPER_EV_STALL_END	= 4,
	HYPER_EV_RESIDENT	= 5,	/* residency or arena use changed */
	HYPER_EV_XFER_COPY	= 6,	/* its first copy began (copy worker only) */
};

/**
 * struct hyper_event - one thing the executor did, for a tracer
 *
 * Times are CLOCK_MONOTONIC nanoseconds.  XFER_DONE carries the time the
 * transfer really completed where the backend reports it (kmod, copy
 * worker), which may be earlier than the event is delivered; otherwise
 * the time its completion was seen.  XFER_COPY (copy worker engine only)
 * is delivered just before XFER_DONE and carries the time a worker began
 * copying the op's first request: XFER_START <= XFER_COPY <= XFER_DONE
 * splits a transfer into its wait in the queue and its copy.
 */
struct hyper_event {
	uint32_t type;			/* enum hyper_event_type */
	uint32_t step;			/* step being run or next to run */
	uint32_t tensor;		/* UINT32_MAX when none */
	uint32_t op;			/* enum hyper_cache_op for XFER_* */
	uint64_t bytes;			/* XFER_*: bytes of the tensor / moved */
	uint64_t time_ns;
	uint64_t resident_bytes;	/* after the event */
	uint64_t arena_bytes;		/* after the event */
	uint64_t reserved[2];
};

typedef void (*hyper_event_fn)(const struct hyper_event *ev, void *arg);
int hyper_set_event_fn(struct hyper_ctx *ctx, hyper_event_fn fn, void *arg);

/* ---- copy engine (LIBHYPER_1.2) --------------------------------------- */

enum hyper_copy_engine {
	HYPER_COPY_DEFAULT	= 0,	/* the backend's best: see hyper_set_copy_engine(3) */
	HYPER_COPY_URING	= 1,	/* io_uring: io-wq reads/writes (shmem), URING_CMD (kmod) */
	HYPER_COPY_SQPOLL	= 2,	/* shmem: io_uring SQPOLL thread copies inline */
	HYPER_COPY_WORKER	= 3,	/* shmem: libhyper's memcpy threads */
};

/* "default", "uring", "sqpoll", "worker"; NULL past the last engine. */
static inline const char *hyper_copy_engine_name(uint32_t engine)
{
	static const char *const n[] = { "default", "uring", "sqpoll", "worker" };

	return engine < 4 ? n[engine] : NULL;
}

/* hyper_copy_opts.flags */
#define HYPER_COPY_POLL		(1U << 0)	/* workers and waits spin, never sleep */
/*
 * worker: a wait never copies on the caller's thread.  By default a
 * caller that must wait for a transfer copies the queued ones itself
 * instead of sleeping until a worker gets a CPU.
 */
#define HYPER_COPY_NO_HELP	(1U << 1)
/*
 * Fault injection for testing: the worker dies (pthread_exit) half-way
 * through its copy number test_die_after + 1.  Never set it outside a test.
 */
#define HYPER_COPY_TEST_DIE	(1U << 31)
#define HYPER_COPY_FLAGS_MASK	(HYPER_COPY_POLL | HYPER_COPY_NO_HELP | \
				 HYPER_COPY_TEST_DIE)

/**
 * struct hyper_copy_opts - how a context moves bytes; all-zero means default
 * @engine:		enum hyper_copy_engine
 * @flags:		HYPER_COPY_*
 * @nr_workers:		WORKER: copy threads, 1 to the number of CPUs
 * @nr_cpus:		entries in @cpus; 0 for unpinned threads
 * @cpus:		WORKER: CPU of each worker (round robin when fewer
 *			entries than workers); SQPOLL: cpus[0] for the thread
 * @nt_bytes:		WORKER: non-temporal stores for requests of at least
 *			this size; 0 for the default (never: glibc's memcpy
 *			streams very large copies by itself)
 * @spin_ns:		WORKER: how long an idle worker, and an executor
 *			waiting for it, spin before they sleep; 0 for the
 *			default (100 us), UINT64_MAX never spin
 * @test_die_after:	with HYPER_COPY_TEST_DIE only
 * @reserved:		must be zero
 */
struct hyper_copy_opts {
	uint32_t engine;
	uint32_t flags;
	uint32_t nr_workers;
	uint32_t nr_cpus;
	const int *cpus;
	uint64_t nt_bytes;
	uint64_t spin_ns;
	uint64_t test_die_after;
	uint64_t reserved[4];
};

int hyper_set_copy_engine(struct hyper_ctx *ctx, const struct hyper_copy_opts *opts);
int hyper_copy_engine(const struct hyper_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* HYPER_HYPER_H */
