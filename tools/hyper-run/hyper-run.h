/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HYPER_RUN_H
#define HYPER_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include <hyper/hyper.h>

#include "util/clock.h"
#include "util/units.h"

enum compute_mode { COMPUTE_SPIN, COMPUTE_TOUCH, COMPUTE_NONE, COMPUTE_GEMM };

struct run_opts {
	const char *schedule;
	const char *output;
	struct hyper_open_opts open;
	struct hyper_copy_opts copy;	/* set with --copy* */
	bool copy_set;
	int copy_cpus[64];
	int compute_cpu;		/* -1: not pinned */
	uint64_t device_bytes;
	enum compute_mode compute;
	double compute_scale;
	unsigned int iterations;
	size_t verify_stride;		/* 1: every word; larger: sampled */
	const char *corrupt;		/* tensor whose pool copy gets a flipped byte */
	const char *timeline;		/* where to write the run's timeline */
	const char *name;		/* the run's name in reports */
	bool quiet;
	bool validate;			/* load and validate only */
	const char *graph_of;		/* a schedule whose graph this one must be for */
};

/* Scratch matrices and counters of the "gemm" compute mode. */
struct gemm_ws {
	float *a, *b, *c;
	size_t a_cap, b_cap, c_cap;
	double flops;
	uint64_t gemms, weight_gemms;
};

/* The runner's model of what each copy of each tensor must hold. */
struct tensor_model {
	uint32_t dev_gen;
	uint32_t pool_gen;
	uint32_t next_gen;
};

struct run_result {
	bool ok;
	char error[768];
	uint64_t wall_ns;
	uint64_t compute_ns;		/* synthetic compute asked for */
	uint64_t overrun_ns;		/* checks that took longer than that */
	uint64_t checks, bytes_checked;
	uint64_t steps;
	uint64_t device_bytes;
	uint64_t gemms, weight_gemms;	/* "gemm" mode: SGEMMs, and on weights */
	double gemm_flops;
	struct hyper_stats st;
};

void compute(enum compute_mode mode, uint64_t deadline, void *const *bufs,
	     const uint64_t *lens, unsigned int n);
int write_report(const struct run_opts *o, const struct hyper_schedule *s,
		 const char *backend, const struct run_result *r);

int gemm_init(struct gemm_ws *ws);
void gemm_fini(struct gemm_ws *ws);
int gemm_run(struct gemm_ws *ws, uint64_t m, uint64_t n, uint64_t k,
	     const float *weight);

struct timeline;
struct timeline *timeline_new(const struct hyper_schedule *s);
void timeline_free(struct timeline *tl);
void timeline_event(const struct hyper_event *ev, void *arg);
void timeline_op(struct timeline *tl, uint32_t step, uint64_t start,
		 uint64_t end);
int timeline_write(struct timeline *tl, const char *path, const char *name,
		   uint64_t t0);

#endif /* HYPER_RUN_H */
