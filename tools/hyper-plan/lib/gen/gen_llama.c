// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Roofline terms: a matrix multiply moves its three operands; a norm or
 * an element-wise op moves its tensors once; attention reads the KV of
 * every earlier position of every sequence.  Every tensor has the element
 * size of --dtype (bf16 unless asked).
 */
#include "gen/gen_llama.h"

int shape_init(struct shape *s, const struct gen_params *gp,
	       struct hp_err *e)
{
	const struct model *m = gp->m;

	uint32_t ctx = gp->mode == GEN_TRAIN ? gp->seq : gp->seq + gp->decode;

	if (m->top_k > ROUTE_MAX_K || m->top_k > m->experts)
		return hyper_plan__errf(e, "model %s: top-%u routing of %u experts: at most top-%u, and no more than the experts",
			       m->name, m->top_k, m->experts, ROUTE_MAX_K);
	if (!gp->batch || gp->batch > 65536)
		return hyper_plan__errf(e, "batch must be in 1..65536 (got %u)", gp->batch);
	if (!gp->seq || gp->seq > (1U << 20))
		return hyper_plan__errf(e, "sequence length must be in 1..%u (got %u)",
			       1U << 20, gp->seq);
	if (gp->decode > (1U << 20))
		return hyper_plan__errf(e, "decode steps must be in 0..%u (got %u)",
			       1U << 20, gp->decode);
	if (!gp->kv_block || gp->kv_block > (1U << 20))
		return hyper_plan__errf(e, "kv block must be in 1..%u tokens (got %u)",
			       1U << 20, gp->kv_block);
	if (gp->layers > 1024)
		return hyper_plan__errf(e, "layers must be in 1..1024 (got %u)", gp->layers);
	if (m->max_pos && ctx > m->max_pos)
		return hyper_plan__errf(e, "model %s learned %u positions (n_positions): a context of %u tokens does not fit; shorten --seq or --decode",
			       m->name, m->max_pos, ctx);
	/*
	 * A scaled model keeps the head size and divides the number of heads,
	 * the feed-forward width and the vocabulary: the same layer structure,
	 * small enough for a test VM.
	 */
	if (!gp->scale || m->heads % gp->scale || m->ffn % gp->scale ||
	    m->vocab % gp->scale || m->hidden % gp->scale ||
	    m->expert_ffn % gp->scale || m->shared_ffn % gp->scale ||
	    m->kv_lora % gp->scale || m->q_lora % gp->scale)
		return hyper_plan__errf(e, "model %s cannot be scaled by 1/%u: it must divide its %u heads, %u hidden, %u-wide feed-forward and %u-token vocabulary",
			       m->name, gp->scale, m->heads, m->hidden, m->ffn,
			       m->vocab);
	*s = (struct shape){
		.m = m, .L = gp->layers ? gp->layers : m->layers,
		.h = m->hidden / gp->scale,
		.hd = m->head_dim ? m->head_dim : m->hidden / m->heads,
		.ffn = m->ffn / gp->scale, .V = m->vocab / gp->scale,
		.E = m->experts, .topk = m->top_k, .B = gp->batch,
		.eff = (m->expert_ffn ? m->expert_ffn : m->ffn) / gp->scale,
		.sffn = m->shared_ffn / gp->scale, .window = m->window,
		.seed = gp->seed,
	};
	s->qd = s->hd * (m->heads / gp->scale);
	s->kvd = s->hd * (m->kv_heads > gp->scale ? m->kv_heads / gp->scale : 1);
	s->od = s->qd;
	s->cached = 2 * s->kvd;
	if (m->kv_lora) {
		/*
		 * MLA: a query of nope + rope a head; one latent a token
		 * (kv_lora + rope, the KV cache), expanded into every head's
		 * key (nope part) and value.
		 */
		s->kvl = m->kv_lora / gp->scale;
		s->ql = m->q_lora / gp->scale;
		s->qd = (m->qk_nope + m->qk_rope) * (m->heads / gp->scale);
		s->kvd = s->kvl + m->qk_rope;
		s->kexp = (m->qk_nope + m->v_head) * (m->heads / gp->scale);
		s->od = m->v_head * (m->heads / gp->scale);
		s->cached = s->kvd;
	}
	return 0;
}

/*
 * A linear layer's weight, @in × @out, and its bias when it has one: one
 * tensor, as the optimizer updates them together.
 */
static void linear_w(struct gb *b, uint64_t in, uint64_t out, bool bias,
		     uint32_t l, const char *pfx, const char *name)
{
	gb_tensor(b, HYPER_KIND_WEIGHT, (in + bias) * out * b->dt,
		  hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT), "L%u.%s%s", l, pfx,
		  name);
}

/* A norm's scale, and its bias when it is a LayerNorm with one. */
static void norm_w(struct gb *b, const struct shape *s, uint64_t n,
		   uint32_t l, const char *name)
{
	gb_tensor(b, HYPER_KIND_WEIGHT, (1 + s->m->ln_bias) * n * b->dt,
		  hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT), "L%u.%s.w", l, name);
}

/* An MLP's weights "L3.<pfx>w1" (gate or up), "w3" (up, gated), "w2". */
static void mlp_weights(struct gb *b, const struct shape *s, uint32_t l,
			const char *pfx, uint64_t width, bool gated)
{
	bool bias = s->m->mlp_bias;

	linear_w(b, s->h, width, bias, l, pfx, "w1");
	if (gated)
		linear_w(b, s->h, width, bias, l, pfx, "w3");
	linear_w(b, width, s->h, bias, l, pfx, "w2");
}

/*
 * MLA's weights: the query (xn·wq, or xn·wq_a, normed, ·wq_b), the
 * latent (wkv_a: kv_lora + rope), its norm and expansion (wkv_b).
 */
static void mla_weights(struct gb *b, const struct shape *s, uint32_t l)
{
	const uint8_t f = hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT);
	uint64_t h = s->h;

	if (s->ql) {
		gb_tensor(b, HYPER_KIND_WEIGHT, h * s->ql * b->dt, f, "L%u.wq_a", l);
		norm_w(b, s, s->ql, l, "q_a_norm");
		gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->ql * s->qd * b->dt,
			  f, "L%u.wq_b", l);
	} else {
		gb_tensor(b, HYPER_KIND_WEIGHT, h * s->qd * b->dt, f, "L%u.wq", l);
	}
	gb_tensor(b, HYPER_KIND_WEIGHT, h * s->kvd * b->dt, f, "L%u.wkv_a", l);
	norm_w(b, s, s->kvl, l, "kv_a_norm");
	gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->kvl * s->kexp * b->dt, f,
		  "L%u.wkv_b", l);
}

static void layer_weights(struct gb *b, const struct shape *s, uint32_t l)
{
	const uint8_t f = hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT);
	const struct model *m = s->m;
	uint64_t h = s->h;
	char pfx[16];
	uint32_t x;

	/* gemma2's norm after attention shares the tensor of the one before */
	norm_w(b, s, h * (1 + m->sandwich), l, "attn_norm");
	if (m->kv_lora) {
		mla_weights(b, s, l);
	} else {
		linear_w(b, h, s->qd, m->qkv_bias, l, "", "wq");
		linear_w(b, h, s->kvd, m->qkv_bias, l, "", "wk");
		linear_w(b, h, s->kvd, m->qkv_bias, l, "", "wv");
	}
	if (m->qk_norm) {
		gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->qd * b->dt, f,
			  "L%u.q_norm.w", l);
		gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->kvd * b->dt, f,
			  "L%u.k_norm.w", l);
	}
	linear_w(b, s->od, h, m->o_bias, l, "", "wo");
	if (!m->parallel || m->two_ln)
		norm_w(b, s, h * (1 + m->sandwich), l, "ffn_norm");
	if (!is_moe(s, l)) {
		mlp_weights(b, s, l, "", s->ffn, !m->plain_mlp);
		return;
	}
	gb_tensor(b, HYPER_KIND_WEIGHT, h * (s->E + m->shared_gate) * b->dt, f,
		  "L%u.router.w", l);
	for (x = 0; x < s->E; x++) {
		snprintf(pfx, sizeof(pfx), "e%u.", x);
		mlp_weights(b, s, l, pfx, s->eff, true);
	}
	if (s->sffn)
		mlp_weights(b, s, l, "shared.", s->sffn, true);
}

void make_weights(struct gb *b, const struct shape *s)
{
	const uint8_t f = hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT);
	uint32_t l;

	gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->V * s->h * b->dt, f, "embed.w");
	if (s->m->max_pos)
		gb_tensor(b, HYPER_KIND_WEIGHT,
			  (uint64_t)s->m->max_pos * s->h * b->dt, f, "pos_embed.w");
	for (l = 0; l < s->L; l++)
		layer_weights(b, s, l);
	gb_tensor(b, HYPER_KIND_WEIGHT, (1 + s->m->ln_bias) * (uint64_t)s->h * b->dt,
		  f, "final_norm.w");
	if (!s->m->tied)
		gb_tensor(b, HYPER_KIND_WEIGHT, (uint64_t)s->h * s->V * b->dt, f,
			  "lm_head.w");
}

static uint32_t act(struct gb *b, const struct pass *ps, uint64_t bytes,
		    const char *name, uint32_t l)
{
	char id[HP_MAX_ID + 1];

	return gb_tensor_id(b, HYPER_KIND_ACTIVATION, bytes, ps->act_flags,
			    gb_lname(id, ps->pfx, l, name, NULL));
}

/* RMSNorm of @x into a new activation: one read, one write. */
static uint32_t norm(struct gb *b, const struct shape *s,
		     const struct pass *ps, uint32_t l, uint32_t x,
		     const char *name, const char *out)
{
	double bytes = (double)tokens_of(s, ps) * s->h * b->dt;
	uint32_t y = act(b, ps, bytes, out, l);
	char id[HP_MAX_ID + 1];

	gb_in(b, x);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, name, ".w")));
	gb_out(b, y);
	gb_op_id(b, 5.0 * tokens_of(s, ps) * s->h, 2 * bytes, NULL,
		 gb_lname(id, ps->pfx, l, name, NULL));
	return y;
}

static uint32_t proj(struct gb *b, const struct shape *s,
		     const struct pass *ps, uint32_t l, uint32_t x,
		     const char *w, uint32_t n, const char *out)
{
	uint32_t T = tokens_of(s, ps);
	uint32_t y = act(b, ps, (uint64_t)T * n * b->dt, out, l);
	char id[HP_MAX_ID + 1];

	gb_in(b, x);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, w, NULL)));
	gb_out(b, y);
	gb_gemm_id(b, T, n, s->h, 0, gb_lname(id, ps->pfx, l, out, "_proj"));
	return y;
}

/* Earliest earlier position the pass's first token attends to. */
static uint32_t span_start(const struct shape *s, const struct pass *ps)
{
	return s->window && ps->pos0 + 1 > s->window ?
	       ps->pos0 + 1 - s->window : 0;
}

/*
 * Stages the KV blocks: read the filled ones the window reaches, write
 * the new tokens'.  Blocks the window left behind are not read again.
 */
static double kv_blocks(struct gb *b, const struct shape *s,
			const struct pass *ps, uint32_t l)
{
	uint32_t first = ps->pos0 / ps->kv_block;
	uint32_t last = (ps->pos0 + ps->n - 1) / ps->kv_block, k;
	uint32_t lo = span_start(s, ps) / ps->kv_block;
	char id[HP_MAX_ID + 1];
	size_t n = gb_cat(id, gb_cat_u(id, gb_cat(id, 0, "L"), l), ".kv");

	for (k = lo; k <= last; k++) {
		/* a block whose first token is written now has no old data */
		bool fresh = k * ps->kv_block >= ps->pos0;
		uint32_t t;

		gb_cat_u(id, n, k);
		t = gb_find_id(b, id);
		if (!fresh)
			gb_in(b, t);
		if (k >= first)
			gb_out(b, t);
	}
	/* bytes of the keys and values of the earlier positions it reaches */
	return (double)s->B * (ps->pos0 - span_start(s, ps)) * s->cached * b->dt;
}

static uint32_t attention(struct gb *b, const struct shape *s,
			  const struct pass *ps, uint32_t l, uint32_t q,
			  uint32_t k, uint32_t v)
{
	uint32_t T = tokens_of(s, ps);
	double pairs = (double)ps->n * ps->pos0 + ps->n * (ps->n + 1.0) / 2;
	double bytes = 2.0 * T * (s->qd + s->kvd) * b->dt, flops = 0;
	uint32_t ao = act(b, ps, (uint64_t)T * s->qd * b->dt, "ao", l);
	char id[HP_MAX_ID + 1];

	/* a window caps each token's span (prefill longer than it too) */
	if (s->window && pairs > (double)ps->n * s->window)
		pairs = (double)ps->n * s->window;

	gb_in(b, q);
	gb_in(b, k);
	gb_in(b, v);
	if (s->m->qk_norm) {	/* the norms of q and k, folded in */
		gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "q_norm.w",
						 NULL)));
		gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "k_norm.w",
						 NULL)));
		flops += 5.0 * T * (s->qd + s->kvd);
	}
	if (ps->kv_block)
		bytes += kv_blocks(b, s, ps, l) + 2.0 * T * s->kvd * b->dt;
	gb_out(b, ao);
	gb_op_id(b, flops + 4.0 * s->B * s->qd * pairs, bytes, NULL,
		 gb_lname(id, ps->pfx, l, "attn", NULL));
	return ao;
}

/* norm(@x)·w, @x a latent @in wide: @out, @n wide (MLA). */
static uint32_t latent_up(struct gb *b, const struct shape *s,
			  const struct pass *ps, uint32_t l, uint32_t x,
			  const char *nw, const char *w, uint32_t in, uint32_t n,
			  const char *out)
{
	uint32_t T = tokens_of(s, ps);
	uint32_t y = act(b, ps, (uint64_t)T * n * b->dt, out, l);
	char id[HP_MAX_ID + 1];

	gb_in(b, x);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, nw, NULL)));
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, w, NULL)));
	gb_out(b, y);
	gb_gemm_id(b, T, n, in, (double)T * in * b->dt,
		   gb_lname(id, ps->pfx, l, out, "_up"));
	return y;
}

/*
 * MLA (DeepSeek-V2): q from xn (through the q latent and its norm when
 * q_lora_rank is set); the latent ckv = xn·wkv_a, what the KV cache
 * keeps; kv = norm(ckv)·wkv_b, the new tokens' keys and values.  A
 * decode step attends to the cached latents with wkv_b absorbed into
 * the query and the output (DeepSeek's inference), so it reads wkv_b
 * and scores in the latent's width.
 */
static uint32_t mla(struct gb *b, const struct shape *s,
		    const struct pass *ps, uint32_t l, uint32_t xn)
{
	const struct model *m = s->m;
	uint32_t T = tokens_of(s, ps), q, ckv, kv, ao, nh = s->od / m->v_head;
	double pairs = (double)ps->n * (ps->n + 1.0) / 2, old, flops, bytes;
	char id[HP_MAX_ID + 1];

	if (s->ql) {
		q = proj(b, s, ps, l, xn, "wq_a", s->ql, "qa");
		q = latent_up(b, s, ps, l, q, "q_a_norm.w", "wq_b", s->ql,
			      s->qd, "q");
	} else {
		q = proj(b, s, ps, l, xn, "wq", s->qd, "q");
	}
	ckv = proj(b, s, ps, l, xn, "wkv_a", s->kvd, "ckv");
	kv = latent_up(b, s, ps, l, ckv, "kv_a_norm.w", "wkv_b", s->kvl,
		       s->kexp, "kv");

	ao = act(b, ps, (uint64_t)T * s->od * b->dt, "ao", l);
	gb_in(b, q);
	gb_in(b, kv);
	gb_in(b, ckv);
	/* the new tokens among themselves: expanded heads */
	flops = 2.0 * s->B * nh * pairs * (m->qk_nope + m->qk_rope + m->v_head);
	bytes = (double)T * (s->qd + s->kexp + s->kvd + s->od) * b->dt;
	if (ps->kv_block) {
		old = (double)ps->n * ps->pos0;
		gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "wkv_b", NULL)));
		bytes += kv_blocks(b, s, ps, l) + (double)T * s->kvd * b->dt +
			 (double)s->kvl * s->kexp * b->dt;
		/* absorbed: q into the latent, scores, values, out of it */
		flops += 2.0 * T * nh * s->kvl * (m->qk_nope + m->v_head) +
			 2.0 * s->B * nh * old * (s->kvd + s->kvl);
	}
	gb_out(b, ao);
	gb_op_id(b, flops, bytes, NULL, gb_lname(id, ps->pfx, l, "attn", NULL));
	return ao;
}

/*
 * One MLP over @rows tokens: gate "g" (w1) and up "u" (w3) projections,
 * or up alone (w1) without a gate, then the down projection (w2) into
 * "<sub>y".  The activation, and the product with the gate, are folded
 * into the down projection: it reads g and u, not one product.  Weights
 * "L3.<wp>w1"; @rt (the routing, for experts) is read too if not NONE.
 */
static uint32_t mlp(struct gb *b, const struct shape *s,
		    const struct pass *ps, uint32_t l, uint32_t xn, uint32_t rt,
		    uint32_t rows, uint32_t width, bool gated, const char *sub,
		    const char *wp)
{
	char name[32], id[HP_MAX_ID + 1];
	uint32_t gu[2], y;
	int i;

	for (i = 0; i < 1 + gated; i++) {
		snprintf(name, sizeof(name), "%s%s", sub, i ? "u" : "g");
		gb_in(b, xn);
		if (rt != NONE)
			gb_in(b, rt);
		gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, wp,
						 i ? "w3" : "w1")));
		gu[i] = act(b, ps, (uint64_t)rows * width * b->dt, name, l);
		gb_out(b, gu[i]);
		gb_gemm_id(b, rows, width, s->h, 0,
			   gb_lname(id, ps->pfx, l, name, NULL));
	}
	snprintf(name, sizeof(name), "%sy", sub);
	y = act(b, ps, (uint64_t)rows * s->h * b->dt, name, l);
	for (i = 0; i < 1 + gated; i++)
		gb_in(b, gu[i]);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, wp, "w2")));
	gb_out(b, y);
	gb_gemm_id(b, rows, s->h, width, (double)rows * width * gated * b->dt,
		   gb_lname(id, ps->pfx, l, name, NULL));
	return y;
}

/* The experts' outputs, weighted, added to the residual: @k per token. */
static uint32_t combine(struct gb *b, const struct shape *s,
			const struct pass *ps, uint32_t l, uint32_t mid,
			uint32_t rt, const uint32_t *y, uint32_t ny, uint32_t k)
{
	uint32_t T = tokens_of(s, ps), out, x;
	char id[HP_MAX_ID + 1];

	out = act(b, ps, (uint64_t)T * s->h * b->dt, "out", l);
	gb_in(b, mid);
	if (rt != NONE)
		gb_in(b, rt);
	for (x = 0; x < ny; x++)
		gb_in(b, y[x]);
	gb_out(b, out);
	gb_op_id(b, 2.0 * T * s->h * k, (double)T * s->h * b->dt * (2 + k),
		 NULL, gb_lname(id, ps->pfx, l, "combine", NULL));
	return out;
}

/*
 * gemma2's norm after a block: @y normed (with the second half of
 * @name's tensor), added to the residual @x.
 */
static uint32_t post_norm(struct gb *b, const struct shape *s,
			  const struct pass *ps, uint32_t l, uint32_t y,
			  uint32_t x, const char *name, const char *out)
{
	double bytes = (double)tokens_of(s, ps) * s->h * b->dt;
	uint32_t z = act(b, ps, bytes, out, l);
	char id[HP_MAX_ID + 1];

	gb_in(b, y);
	gb_in(b, x);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, name, ".w")));
	gb_out(b, z);
	gb_op_id(b, 6.0 * tokens_of(s, ps) * s->h, 3 * bytes, NULL,
		 gb_lname(id, ps->pfx, l, "post_", name));
	return z;
}

/* A dense MLP whose down projection adds into the residual itself. */
static uint32_t dense_ffn(struct gb *b, const struct shape *s,
			  const struct pass *ps, uint32_t l, uint32_t xn,
			  uint32_t mid)
{
	uint32_t T = tokens_of(s, ps);
	bool gated = !s->m->plain_mlp, post = s->m->sandwich;
	uint32_t g = proj(b, s, ps, l, xn, "w1", s->ffn, "g");
	uint32_t u = gated ? proj(b, s, ps, l, xn, "w3", s->ffn, "u") : NONE;
	uint32_t out = act(b, ps, (uint64_t)T * s->h * b->dt, post ? "y" : "out", l);
	char id[HP_MAX_ID + 1];

	gb_in(b, g);
	if (gated)
		gb_in(b, u);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "w2", NULL)));
	if (!post)
		gb_in(b, mid);
	gb_out(b, out);
	/* the activation (and the gate's product) is folded in */
	gb_gemm_id(b, T, s->h, s->ffn,
		   (double)T * (s->ffn * gated + 2 * s->h * !post) * b->dt,
		   gb_lname(id, ps->pfx, l, "down_proj", NULL));
	return post ? post_norm(b, s, ps, l, out, mid, "ffn_norm", "out") : out;
}

static uint32_t moe_ffn(struct gb *b, const struct shape *s,
			const struct pass *ps, uint32_t l, uint32_t xn,
			uint32_t mid)
{
	uint32_t T = tokens_of(s, ps), *count, *y, x, ny = 0;
	uint32_t rt = act(b, ps, (uint64_t)T * s->E * FP32, "route", l);
	char sub[16], id[HP_MAX_ID + 1];

	if (gen_moe_arrays(b, s, &count, &y))
		return 0;
	gb_in(b, xn);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "router.w", NULL)));
	gb_out(b, rt);
	gb_gemm_id(b, T, s->E, s->h, 0,
		   gb_lname(id, ps->pfx, l, "router", NULL));
	route(s, ps->step, l, T, count);
	for (x = 0; x < s->E; x++) {
		if (!count[x])
			continue;
		snprintf(sub, sizeof(sub), "e%u.", x);
		y[ny++] = mlp(b, s, ps, l, xn, rt, count[x], s->eff, true, sub,
			      sub);
	}
	/* the shared expert sees every token */
	if (s->sffn)
		y[ny++] = mlp(b, s, ps, l, xn, NONE, T, s->sffn, true, "shared.",
			      "shared.");
	x = combine(b, s, ps, l, mid, rt, y, ny, s->topk + !!s->sffn);
	free(count);
	free(y);
	return x;
}

/*
 * Sequential (Llama): x -> norm -> attention -> + x = mid -> norm ->
 * MLP -> + mid.  Parallel (Falcon, GPT-J): one norm feeds both, and the
 * MLP adds to mid, which is the same sum x + attention + MLP.
 */
static uint32_t layer(struct gb *b, const struct shape *s,
		      const struct pass *ps, uint32_t l, uint32_t x)
{
	uint32_t T = tokens_of(s, ps), xn, q, k, v, ao, mid, fin;
	bool post = s->m->sandwich;
	char id[HP_MAX_ID + 1];

	xn = norm(b, s, ps, l, x, "attn_norm", "xn");
	if (s->m->kv_lora) {
		ao = mla(b, s, ps, l, xn);
	} else {
		q = proj(b, s, ps, l, xn, "wq", s->qd, "q");
		k = proj(b, s, ps, l, xn, "wk", s->kvd, "k");
		v = proj(b, s, ps, l, xn, "wv", s->kvd, "v");
		ao = attention(b, s, ps, l, q, k, v);
	}
	mid = act(b, ps, (uint64_t)T * s->h * b->dt, post ? "ay" : "mid", l);
	gb_in(b, ao);
	gb_in(b, gb_find_id(b, gb_lname(id, NULL, l, "wo", NULL)));
	if (!post)
		gb_in(b, x);
	gb_out(b, mid);
	/* the residual read when there is no norm after the block */
	gb_gemm_id(b, T, s->h, s->od, (double)T * s->h * b->dt * !post,
		   gb_lname(id, ps->pfx, l, "o_proj", NULL));
	if (post)
		mid = post_norm(b, s, ps, l, mid, x, "attn_norm", "mid");
	if (!s->m->parallel)
		fin = norm(b, s, ps, l, mid, "ffn_norm", "xn2");
	else	/* falcon-40b: the MLP's own norm of x */
		fin = s->m->two_ln ? norm(b, s, ps, l, x, "ffn_norm", "xn2") : xn;
	return is_moe(s, l) ? moe_ffn(b, s, ps, l, fin, mid) :
	       dense_ffn(b, s, ps, l, fin, mid);
}

int gen_moe_arrays(struct gb *b, const struct shape *s, uint32_t **count,
		   uint32_t **ids)
{
	*count = hyper_plan__calloc(&b->g->mem, s->E, sizeof(**count));
	*ids = hyper_plan__calloc(&b->g->mem, s->E + 1, sizeof(**ids));
	if (*count && *ids)
		return 0;
	free(*count);
	free(*ids);
	if (!b->err)
		b->err = hyper_plan__nomem(b->e);
	return b->err;
}

uint64_t gen_weight_bytes(struct gb *b, const char *id)
{
	uint32_t t = gb_find(b, "%s", id);

	return b->err ? 0 : b->g->t[t].bytes;
}

uint32_t forward(struct gb *b, const struct shape *s, const struct pass *ps,
		 uint32_t tokens)
{
	uint32_t T = tokens_of(s, ps), l, x;

	x = gb_tensor(b, HYPER_KIND_ACTIVATION, (uint64_t)T * s->h * b->dt,
		      ps->act_flags, "%s.embed", ps->pfx);
	gb_in(b, gb_find(b, "embed.w"));
	if (s->m->max_pos)	/* learned positions, added */
		gb_in(b, gb_find(b, "pos_embed.w"));
	gb_in(b, tokens);
	gb_out(b, x);
	gb_op(b, (double)T * s->h * !!s->m->max_pos,
	      (2.0 + 2 * !!s->m->max_pos) * T * s->h * b->dt, NULL, "%s.embed",
	      ps->pfx);
	for (l = 0; l < s->L && !b->err; l++)
		x = layer(b, s, ps, l, x);
	return x;
}

uint32_t head(struct gb *b, const struct shape *s, const struct pass *ps,
	      uint32_t x, uint32_t m)
{
	uint32_t T = tokens_of(s, ps), xf, logits;

	xf = gb_tensor(b, HYPER_KIND_ACTIVATION, (uint64_t)T * s->h * b->dt,
		       ps->act_flags, "%s.xf", ps->pfx);
	gb_in(b, x);
	gb_in(b, gb_find(b, "final_norm.w"));
	gb_out(b, xf);
	gb_op(b, 5.0 * T * s->h, 2.0 * T * s->h * b->dt, NULL,
	      "%s.final_norm", ps->pfx);
	logits = gb_tensor(b, HYPER_KIND_ACTIVATION, (uint64_t)m * s->V * b->dt,
			   ps->act_flags, "%s.logits", ps->pfx);
	gb_in(b, xf);
	gb_in(b, gb_find(b, "%s", head_w(s)));
	gb_out(b, logits);
	gb_gemm(b, m, s->V, s->h, 0, "%s.lm_head", ps->pfx);
	return logits;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A compile-time routing drawn from the seed: each row picks top_k
 * distinct experts uniformly.  Real routing is data-dependent; a static
 * planner has to be given one (a trace, or this draw).
 */
void route(const struct shape *s, uint32_t step, uint32_t layer,
	   uint32_t rows, uint32_t *count)
{
	uint64_t st = s->seed * 0x100000001b3ULL + step * 131 + layer;
	uint32_t r, k, pick[ROUTE_MAX_K], j;

	for (r = 0; r < rows; r++)
		for (k = 0; k < s->topk && k < ROUTE_MAX_K; k++) {
			do {
				pick[k] = splitmix(&st) % s->E;
				for (j = 0; j < k && pick[j] != pick[k]; j++)
					;
			} while (j < k);
			count[pick[k]]++;
		}
}

int gen_model(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e)
{
	return gp->mode == GEN_TRAIN ? gen_train(g, gp, p, e) :
	       gen_infer(g, gp, p, e);
}
