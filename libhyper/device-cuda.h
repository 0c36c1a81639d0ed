/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CUDA transport (device-cuda.c): a context opened with
 * HYPER_DEVICE_CUDA moves bytes with cudaMemcpyAsync on copy streams of
 * its own, between the pinned host pool and an arena in GPU memory.  It
 * sits below the executor, in the place of the copy worker or io_uring:
 * the schedule, the validator and the executor are the same.
 */
#ifndef LIBHYPER_DEVICE_CUDA_H
#define LIBHYPER_DEVICE_CUDA_H

#include <stdbool.h>
#include <stdint.h>

struct hyper_ctx;
struct hyper_open_opts;
struct hyper_region;
struct hx_cu;
struct hx_cw_done;

/* hyper_open(): load the runtime, pick the device, create the streams. */
int hx_cu_open(struct hyper_ctx *ctx, const struct hyper_open_opts *o);
/* hyper_close(): after the executor drained, before regions go. */
void hx_cu_close(struct hyper_ctx *ctx);
/* hyper_set_arena() for a CUDA context: *@basep NULL allocates. */
int hx_cu_set_arena(struct hyper_ctx *ctx, void **basep, uint64_t bytes);
/* hyper_bind_device(): @addr must be device memory of the context's GPU. */
int hx_cu_check_device_ptr(struct hyper_ctx *ctx, const void *addr,
			   uint64_t bytes, const char *what);
/* hyper_prepare(): pin every mapped region, per-tensor events. */
int hx_cu_prepare(struct hyper_ctx *ctx);
void hx_cu_unregister(struct hyper_ctx *ctx, struct hyper_region *reg);

/* The executor's transport calls (exec.c), as for the copy worker. */
void hx_cu_queue(struct hyper_ctx *ctx, int dir, uint32_t tensor, void *dev,
		 void *host, uint64_t len, uint64_t ud);
/* After a cache op's last request: the tensor's event for that direction. */
void hx_cu_mark(struct hyper_ctx *ctx, int dir, uint32_t tensor);
bool hx_cu_ready(struct hyper_ctx *ctx);
unsigned int hx_cu_reap(struct hyper_ctx *ctx, struct hx_cw_done *out,
			unsigned int max);
int hx_cu_wait(struct hyper_ctx *ctx);
/* Arena space was released: the next prefetch waits for the compute stream. */
void hx_cu_released(struct hyper_ctx *ctx);
/*
 * Kernels may be queued on the compute stream from now on (a step began
 * or ended, a rewind): the next transfer that needs the fence records it anew.
 */
void hx_cu_kernels_follow(struct hyper_ctx *ctx);
/* The compute stream waits for @tensor's transfers (prefetch, and store). */
int hx_cu_stream_wait(struct hyper_ctx *ctx, uint32_t tensor, void *stream,
		      bool stores);
void *hx_cu_compute_stream(const struct hyper_ctx *ctx);
/* For tests: pin the pool in calls of @bytes (not exported). */
void hx_cu_test_pin_chunk(struct hyper_ctx *ctx, uint64_t bytes);
/* The stream stores are copied on. */
void *hx_cu_store_stream(const struct hyper_ctx *ctx);

#endif /* LIBHYPER_DEVICE_CUDA_H */
