/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decoder layer as operators, shared by the inference and training
 * generators.  Tensor names: weights "L3.wq", the KV cache "L3.kv5" (one
 * tensor per layer and block of kv_block tokens), activations
 * "<pass>.L3.q" where the pass is "p" (prefill), "d7" (decode step 7) or
 * "f" (training forward).
 */
#ifndef HP_GEN_LLAMA_H
#define HP_GEN_LLAMA_H

#include "gen/gen_build.h"
#include "gen/model.h"

struct shape {
	const struct model *m;
	uint32_t L, h, hd, kvd, ffn, V, E, topk, B;
	uint32_t qd;		/* query (and attention output) width */
	uint32_t eff;		/* each expert's width */
	uint32_t sffn;		/* the shared expert's width; 0: none */
	uint32_t window;	/* attention span; 0: full */
	uint32_t od;		/* the attention's output width (o_proj's input) */
	uint32_t cached;	/* KV-cache elements a token and layer */
	/* MLA: latent ranks, the expanded keys' and values' width */
	uint32_t kvl, ql, kexp;
	uint64_t seed;
};

/* The feed-forward's input: the second norm, or the first (parallel). */
static inline const char *ffn_in(const struct shape *s)
{
	return s->m->parallel && !s->m->two_ln ? "xn" : "xn2";
}

/* Layer @l's feed-forward is a mixture of experts. */
static inline bool is_moe(const struct shape *s, uint32_t l)
{
	return s->E && l >= s->m->first_dense;
}

/* The LM head's weight: its own, or the embedding (tied). */
static inline const char *head_w(const struct shape *s)
{
	return s->m->tied ? "embed.w" : "lm_head.w";
}

struct pass {
	const char *pfx;
	uint32_t step;		/* decode step, for MoE routing */
	uint32_t n;		/* new tokens per sequence */
	uint32_t pos0;		/* position of the first new token */
	uint32_t kv_block;	/* 0: no KV cache (training) */
	uint8_t act_flags;	/* TF_PIN: saved activations stay */
};

int shape_init(struct shape *s, const struct gen_params *gp,
	       struct hp_err *e);
void make_weights(struct gb *b, const struct shape *s);
/* Returns the layer stack's output tensor. */
uint32_t forward(struct gb *b, const struct shape *s, const struct pass *ps,
		 uint32_t tokens);
/* Final norm and the vocabulary projection of @m rows. */
uint32_t head(struct gb *b, const struct shape *s, const struct pass *ps,
	      uint32_t x, uint32_t m);

int gen_infer(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e);
int gen_train(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e);

/*
 * A MoE layer's arrays, zeroed: tokens per expert, and a tensor per
 * expert and the shared one.  On failure b->err is -ENOMEM, returned.
 */
int gen_moe_arrays(struct gb *b, const struct shape *s, uint32_t **count,
		   uint32_t **ids);

/* The bytes of weight @id: what its gradient and optimizer state cover. */
uint64_t gen_weight_bytes(struct gb *b, const char *id);

/* Tokens routed to each expert in one layer of one pass (MoE only). */
#define ROUTE_MAX_K	64
void route(const struct shape *s, uint32_t step, uint32_t layer,
	   uint32_t rows, uint32_t *count);

static inline uint32_t tokens_of(const struct shape *s, const struct pass *ps)
{
	return s->B * ps->n;
}

#endif
