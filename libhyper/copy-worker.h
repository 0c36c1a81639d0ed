/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The copy worker (copy-worker.c): libhyper's own threads that copy
 * between the mapped pool and the arena.  Single producer (the executor),
 * any number of workers.
 */
#ifndef LIBHYPER_COPY_WORKER_H
#define LIBHYPER_COPY_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <hyper/hyper.h>

struct hx_cw;

/*
 * One finished copy: @res is the length, or -ECANCELED if never copied;
 * @start_ns is when a worker took it (0 if none did).
 */
struct hx_cw_done {
	uint64_t ud;
	uint64_t start_ns;
	uint64_t done_ns;
	int32_t res;
};

/* @depth: the most copies ever queued or unreaped at once. */
int hx_cw_start(const struct hyper_copy_opts *o, int numa_node, uint32_t depth,
		struct hx_cw **cwp);
void hx_cw_stop(struct hx_cw *cw);
int hx_cw_revive(struct hx_cw *cw);
void hx_cw_queue(struct hx_cw *cw, void *dst, const void *src, uint64_t len,
		 uint64_t ud);
bool hx_cw_staged(const struct hx_cw *cw);
void hx_cw_kick(struct hx_cw *cw);
bool hx_cw_ready(const struct hx_cw *cw);
unsigned int hx_cw_reap(struct hx_cw *cw, struct hx_cw_done *out,
			unsigned int max);
/* Until a completion is ready; copies queued jobs meanwhile (not NO_HELP). */
void hx_cw_wait(struct hx_cw *cw);
/* Jobs the executor copied itself since the last call. */
uint64_t hx_cw_take_helped(struct hx_cw *cw);
/* For tests: while paused, no worker takes a job (only a waiting executor). */
void hx_cw_pause(struct hx_cw *cw, bool paused);
/* memcpy, with non-temporal stores from @nt_bytes on. */
void hx_cw_copy(void *dst, const void *src, uint64_t len, uint64_t nt_bytes);

#endif /* LIBHYPER_COPY_WORKER_H */
