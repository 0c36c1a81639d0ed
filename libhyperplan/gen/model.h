/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Built-in decoder LLMs (published shapes) and the graph generators that
 * turn one into an inference or training graph.  See planner.md.
 */
#ifndef HP_MODEL_H
#define HP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "profile.h"

struct model {
	const char *name;
	const char *desc;
	uint32_t layers, hidden, heads, kv_heads, ffn, vocab;
	uint32_t experts, top_k;	/* 0: dense feed-forward */
};

extern const struct model model_table[];
extern const unsigned int model_table_len;

enum gen_mode { GEN_INFER, GEN_TRAIN };

struct gen_params {
	const struct model *m;
	enum gen_mode mode;
	bool keep_act;		/* training: saved activations stay on device */
	uint32_t batch;
	uint32_t seq;		/* prompt (inference) or sequence (training) */
	uint32_t decode;	/* inference: generated tokens after prefill */
	uint32_t kv_block;	/* tokens per KV-cache block tensor */
	uint32_t layers;	/* 0: the model's own count */
	uint32_t scale;		/* width divided by this (1: as published) */
	uint32_t dtype_bytes;	/* bytes per element: 2 (bf16) or 4 (fp32) */
	uint64_t seed;		/* MoE routing */
};

/* The graph name the CLI and the benchmark give a generated graph. */
void gen_graph_name(char *buf, size_t len, const struct gen_params *gp);
const struct model *model_find(const char *name, struct hp_err *e);
void gen_defaults(struct gen_params *gp, const struct model *m);
int gen_model(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e);

struct random_params {
	uint32_t ops;
	uint64_t seed;
};

/* Random valid graphs for property tests and scaling runs. */
int gen_random(struct graph *g, const struct random_params *rp,
	       struct hp_err *e);

#endif
