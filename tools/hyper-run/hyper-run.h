/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HYPER_RUN_H
#define HYPER_RUN_H

#include <stdbool.h>
#include <stddef.h>
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
	const char *until;		/* run the steps before this one (index or op) */
	const char *from;		/* run this step and the rest */
	const char *publish_weights;	/* export the weights to this object, run from it */
	const char *weights_object;	/* bind the weights read-only to this object */
	const char *export_kv;		/* after the run, export the handed-over KV */
	const char *kv_object;		/* the handed-over KV, copied from this object */
	const char *at_end;		/* shell command run before anything is freed */
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

/* What an object brought or took: for the report. */
struct object_use {
	const char *name;		/* NULL: none */
	uint64_t bytes;			/* the object's size */
	uint64_t tensor_bytes;		/* the bytes of the tensors in it */
	uint32_t tensors;
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
	uint32_t first_step, end_step;	/* the part of the schedule run */
	uint32_t nr_steps;		/* of the whole schedule */
	uint32_t handed;		/* KV tensors handed over at the split */
	struct object_use weights, kv;
};

void compute(enum compute_mode mode, uint64_t deadline, void *const *bufs,
	     const uint64_t *lens, unsigned int n);
int write_report(const struct run_opts *o, const struct hyper_schedule *s,
		 const char *backend, const struct run_result *r);

int gemm_init(struct gemm_ws *ws);
void gemm_fini(struct gemm_ws *ws);
int gemm_run(struct gemm_ws *ws, uint64_t m, uint64_t n, uint64_t k,
	     const float *weight);

/*
 * A part of a schedule (split.c): the steps [first, end) of the whole,
 * the same tensor table, with what the steps before it left as the homes
 * and cache ops of its ends.  A KV tensor holding data at the split that
 * the steps after it read is "handed over": the first part stores it,
 * the second starts with it in the pool.
 */
struct part {
	uint32_t first, end;
	struct tensor_model *model;	/* the runner's model at first, per tensor */
	uint8_t *state;			/* residency at first (HYPER_RES_*) */
	bool *handed;
	uint32_t nr_handed;
};

int part_step(const struct hyper_schedule *s, const char *opt, const char *arg,
	      uint32_t *step, char *err, size_t len);
int part_init(struct part *p, const struct hyper_schedule *s, uint32_t split,
	      char *err, size_t len);
void part_fini(struct part *p);
int part_schedule(const struct part *p, const struct hyper_schedule *s,
		  struct hyper_schedule **partp, char *err, size_t len);
uint32_t part_pool_gen(const struct part *p, uint32_t t);
void model_define(struct tensor_model *m);
void model_cops(struct tensor_model *model, const struct hyper_cop *ops,
		uint32_t n);

struct hyper_region;
int objects_bind_weights(struct hyper_ctx *ctx, const struct hyper_schedule *s,
			 const char *name, bool *from, struct hyper_region **regp,
			 struct object_use *u, char *err, size_t len);
int objects_bind_kv(struct hyper_ctx *ctx, const struct hyper_schedule *s,
		    const char *name, const bool *handed, bool *from,
		    struct hyper_region **regp, struct object_use *u, char *err,
		    size_t len);
int objects_export(struct hyper_ctx *ctx, const struct hyper_schedule *s,
		   const char *name, uint32_t kind, const bool *want,
		   struct object_use *u, char *err, size_t len);

struct timeline;
struct timeline *timeline_new(const struct hyper_schedule *s);
void timeline_free(struct timeline *tl);
void timeline_event(const struct hyper_event *ev, void *arg);
void timeline_op(struct timeline *tl, uint32_t step, uint64_t start,
		 uint64_t end);
int timeline_write(struct timeline *tl, const char *path, const char *name,
		   uint64_t t0);

#endif /* HYPER_RUN_H */
