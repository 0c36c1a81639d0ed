// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Inference: one prefill pass over the prompt, then @decode steps of one
 * new token per sequence.  Each step's sampled tokens feed the next
 * step's embedding, and every layer's KV cache is a row of block tensors
 * that attention reads and extends, so the steps chain the way they run.
 */
#include "gen/gen_llama.h"

static void make_kv(struct gb *b, const struct shape *s, uint32_t blocks,
		    uint32_t kv_block)
{
	uint64_t bytes = (uint64_t)kv_block * s->cached * b->dt * s->B;
	uint32_t l, k;

	for (l = 0; l < s->L; l++)
		for (k = 0; k < blocks; k++)
			gb_tensor(b, HYPER_KIND_KV, bytes, hyper_plan__tkind_default_flags(HYPER_KIND_KV),
				  "L%u.kv%u", l, k);
}

static uint32_t sample(struct gb *b, const struct shape *s,
		       const struct pass *ps, uint32_t logits)
{
	uint32_t tok = gb_tensor(b, HYPER_KIND_ACTIVATION, s->B * 4ULL, 0,
				 "%s.tokens", ps->pfx);

	gb_in(b, logits);
	gb_out(b, tok);
	gb_op(b, 2.0 * s->B * s->V, (double)s->B * s->V * b->dt, NULL,
	      "%s.sample", ps->pfx);
	return tok;
}

int gen_infer(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e)
{
	uint32_t ctx = gp->seq + gp->decode, step, tok, x;
	char pfx[16];
	struct shape s;
	struct pass ps = { .kv_block = gp->kv_block };
	struct gb b;

	if (shape_init(&s, gp, e))
		return -1;
	gb_init(&b, g, p, e);
	b.dt = gp->dtype_bytes;
	make_weights(&b, &s);
	make_kv(&b, &s, (ctx + gp->kv_block - 1) / gp->kv_block, gp->kv_block);
	tok = gb_tensor(&b, HYPER_KIND_ACTIVATION, (uint64_t)s.B * gp->seq * 4,
			TF_LIVE_IN, "prompt.tokens");
	for (step = 0; step <= gp->decode && !b.err; step++) {
		snprintf(pfx, sizeof(pfx), step ? "d%u" : "p", step);
		ps.pfx = pfx;
		ps.step = step;
		ps.n = step ? 1 : gp->seq;
		ps.pos0 = step ? gp->seq + step - 1 : 0;
		x = forward(&b, &s, &ps, tok);
		/* prefill samples from the last position of each sequence */
		tok = sample(&b, &s, &ps, head(&b, &s, &ps, x, s.B));
	}
	return gb_finish(&b);
}
