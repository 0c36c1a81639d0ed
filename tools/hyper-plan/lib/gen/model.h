/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoder LLMs (described by config.json files; the built-in ones ship
 * with hyper-plan) and the graph generators that turn one into an
 * inference or training graph.  See planner.md.
 */
#ifndef HP_MODEL_H
#define HP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "profile/profile.h"

/*
 * A decoder LLM's shape.  The fields after top_k default to 0 (false), a
 * Llama-style layer: head_dim = hidden / heads, a gated SiLU MLP after
 * the attention, full attention, untied embeddings, no shared expert.
 */
struct model {
	const char *name;
	const char *desc;
	uint32_t layers, hidden, heads, kv_heads, ffn, vocab;
	uint32_t experts, top_k;	/* 0: dense feed-forward */
	uint32_t head_dim;	/* 0: hidden / heads */
	uint32_t window;	/* sliding-window attention span; 0: full */
	uint32_t expert_ffn;	/* each expert's width; 0: ffn */
	uint32_t shared_ffn;	/* a shared expert's width (MoE); 0: none */
	bool tied;		/* the LM head is the embedding matrix */
	bool plain_mlp;		/* up, activation, down: no gate projection */
	bool parallel;		/* attention and MLP read one norm, side by side */
	bool gelu;		/* GELU rather than SiLU (same cost here) */
	uint32_t first_dense;	/* MoE: the first layers keep a dense MLP */
	uint32_t kv_lora, q_lora;	/* MLA latent ranks (DeepSeek-V2); 0: none */
	uint32_t qk_nope, qk_rope, v_head;	/* MLA per-head widths */
	uint32_t max_pos;	/* learned position table (gpt2); 0: rotary */
	bool qkv_bias;		/* q, k and v projections have biases */
	bool o_bias;		/* so has the attention's output projection */
	bool mlp_bias;		/* and the MLP's projections */
	bool ln_bias;		/* LayerNorm with a bias (gpt2, falcon) */
	bool qk_norm;		/* RMSNorm of q and of k (olmoe) */
	bool sandwich;		/* norms after attention and MLP too (gemma2) */
	bool two_ln;		/* parallel block, a norm for each (falcon-40b) */
	bool shared_gate;	/* the shared expert has a gate (qwen2_moe) */
	/* what model_from_config() ignored, and why; "" if nothing */
	const char *ignored;
};

/* The size of the @names buffer model_from_config() wants. */
#define MODEL_NAMES_LEN	2048

/*
 * Reads a Hugging Face style config.json into @m (Documentation/
 * planner.md lists the keys).  @m's strings point into @names, which must
 * outlive it (MODEL_NAMES_LEN bytes hold every note).  Keys that change
 * neither memory nor compute are ignored and listed in m->ignored; a key
 * that would change the graph but is not modelled, an unknown key and an
 * impossible shape fail naming them.
 */
int model_from_config(const char *path, struct model *m, char *names,
		      size_t len, struct hp_err *e);

/*
 * The built-in models are hyper-plan's shipped configs, NAME.json in the
 * first folder of: $HYPER_PLAN_CONFIGS (what make sets for the programs of
 * the build tree it runs); share/hyper-plan/configs beside the running
 * program's bin/ (installed).  model_dir() names it.
 */
int model_dir(char *buf, size_t len, struct hp_err *e);
/* -m NAME: NAME.json read as model_from_config() does. */
int model_load(const char *name, struct model *m, char *names, size_t len,
	       struct hp_err *e);
/* The names, sorted, NULL-terminated in *@names; returns their count. */
int model_list(char ***names, struct hp_err *e);
void model_list_free(char **names);

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
