/* SPDX-License-Identifier: GPL-2.0 */
/* Graphs the planner tests run on: random ones and cut-down models. */
#ifndef PLAN_CASES_H
#define PLAN_CASES_H

#include <stdlib.h>

#include "job.h"
#include "gen/model.h"

/*
 * -m NAME reads $HYPER_PLAN_CONFIGS (make sets it to the sources'
 * configs); a test run by hand reads the same ones.
 */
static inline void plan_configs_from_sources(void)
{
	setenv("HYPER_PLAN_CONFIGS", HP_SRCDIR "/tools/hyper-plan/configs", 0);
}

/* The tests' random numbers: the next of Marsaglia's xorshift64 (13, 7, 17). */
static inline uint64_t plan_xorshift(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	return x ^ x << 17;
}

struct plan_case {
	const char *model;	/* NULL: a random graph */
	const char *mode;	/* infer, train, train-keep */
	uint32_t ops;		/* random graphs */
	uint64_t seed;
};

/* Small enough for many runs under the sanitizers. */
static inline int case_job(struct job *j, const struct plan_case *c,
			   const struct profile *p, struct hp_err *e)
{
	struct random_params rp = { c->ops, c->seed };
	struct gen_params gp;
	char names[600];
	struct model m;
	int ret;

	hyper_plan__graph_init(&j->g, c->model ? c->model : "random");
	j->p = *p;
	if (!c->model) {
		ret = gen_random(&j->g, &rp, e);
	} else {
		plan_configs_from_sources();
		if (model_load(c->model, &m, names, sizeof(names), e))
			return -1;
		gen_defaults(&gp, &m);
		gp.mode = c->mode[0] == 't' ? GEN_TRAIN : GEN_INFER;
		gp.keep_act = !strcmp(c->mode, "train-keep");
		gp.layers = 2;
		gp.seq = gp.mode == GEN_TRAIN ? 512 : 96;
		gp.decode = 4;
		gp.kv_block = 32;
		gp.seed = c->seed;
		ret = gen_model(&j->g, &gp, p, e);
	}
	return ret ? ret : hyper_plan__job_prepare(j, false, e);
}

#endif
