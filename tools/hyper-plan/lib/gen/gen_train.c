// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One training step: forward over batch × seq tokens, the loss, the
 * backward pass layer by layer in reverse, then a mixed-precision Adam
 * update of every weight (fp32 master copy and two moments, 12 bytes per
 * parameter).  The optimizer runs after the whole backward pass, as a
 * framework's optimizer.step() does; moving it earlier is the planner's
 * execution-order refinement, not the generator's.
 */
#include <stdarg.h>

#include "gen/gen_llama.h"

static uint32_t grad(struct gb *b, uint64_t bytes, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static uint32_t grad(struct gb *b, uint64_t bytes, const char *fmt, ...)
{
	char id[HP_MAX_ID + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	return gb_tensor(b, HYPER_KIND_GRADIENT, bytes, 0, "%s", id);
}

/* dX = dY·Wᵀ (m=T) then dW = Xᵀ·dY (m=rows of W), for y = x·W. */
static uint32_t linear_bwd(struct gb *b, uint32_t T, uint32_t in,
			   uint32_t out, uint32_t dy, uint32_t x,
			   const char *w, uint32_t acc, const char *dxname)
{
	uint32_t dx = grad(b, (uint64_t)T * in * b->dt, "%s", dxname);

	gb_in(b, dy);
	gb_in(b, gb_find(b, "%s", w));
	if (acc != NONE)
		gb_in(b, acc);
	gb_out(b, dx);
	gb_gemm(b, T, in, out, acc != NONE ? (double)T * in * b->dt : 0,
		"%s.dx", dxname);
	gb_in(b, dy);
	gb_in(b, x);
	gb_out(b, grad(b, gen_weight_bytes(b, w), "%s.grad", w));
	gb_gemm(b, in, out, T, 0, "%s.dw", dxname);
	return dx;
}

/*
 * A norm's backward.  A weight that two norms share (gemma2's before and
 * after a block) has one gradient: the second adds to the first's.
 */
static uint32_t norm_bwd(struct gb *b, uint32_t T, uint32_t h, uint32_t dy,
			 uint32_t x, const char *w, uint32_t resid,
			 const char *dxname)
{
	uint32_t dx = grad(b, (uint64_t)T * h * b->dt, "%s", dxname);
	char gname[HP_MAX_ID + 1];
	uint32_t g;

	snprintf(gname, sizeof(gname), "%s.grad", w);
	g = hyper_plan__graph_tensor(b->g, gname);
	gb_in(b, dy);
	gb_in(b, x);
	gb_in(b, gb_find(b, "%s", w));
	if (resid != NONE)
		gb_in(b, resid);
	if (g != NONE)
		gb_in(b, g);
	gb_out(b, dx);
	gb_out(b, g != NONE ? g : grad(b, gen_weight_bytes(b, w), "%s", gname));
	gb_op(b, 10.0 * T * h, 5.0 * T * h * b->dt, NULL, "%s", dxname);
	return dx;
}

struct lctx {
	const struct shape *s;
	uint32_t l, T;
	char p[64];		/* "b.L3." */
	char w[32];		/* "L3." */
};

static uint32_t fwd_act(struct gb *b, const struct lctx *c, const char *n)
{
	return gb_find(b, "f.L%u.%s", c->l, n);
}

/*
 * act(g)·u backward with the down projection: dg, du from dY (@width
 * wide); without a gate (@u is NONE), d of the up projection alone.
 */
static void down_bwd(struct gb *b, const struct lctx *c, uint32_t rows,
		     uint32_t width, uint32_t dout, uint32_t g, uint32_t u,
		     uint32_t rt, const char *w2, const char *sub)
{
	const struct shape *s = c->s;
	double gu = (u != NONE ? 2.0 : 1.0) * rows * width * b->dt;

	gb_in(b, dout);
	gb_in(b, gb_find(b, "%s", w2));
	gb_in(b, g);
	if (u != NONE)
		gb_in(b, u);
	if (rt != NONE)
		gb_in(b, rt);
	gb_out(b, grad(b, (uint64_t)rows * width * b->dt, "%s%sdg", c->p, sub));
	if (u != NONE)
		gb_out(b, grad(b, (uint64_t)rows * width * b->dt, "%s%sdu", c->p,
			       sub));
	gb_gemm(b, rows, width, s->h, 2 * gu, "%s%sdown.dx", c->p, sub);
	gb_in(b, dout);
	gb_in(b, g);
	if (u != NONE)
		gb_in(b, u);
	if (rt != NONE)
		gb_in(b, rt);
	gb_out(b, grad(b, gen_weight_bytes(b, w2), "%s.grad", w2));
	gb_gemm(b, width, s->h, rows, gu, "%s%sdown.dw", c->p, sub);
}

/* Gate and up projections backward; returns d(ffn input) of these rows. */
static uint32_t gate_up_bwd(struct gb *b, const struct lctx *c,
			    uint32_t rows, uint32_t width, bool gated,
			    const char *sub, const char *wp)
{
	char n1[96], n2[96], w1[48], w3[48];
	uint32_t xn2 = fwd_act(b, c, ffn_in(c->s)), dxa;

	snprintf(w1, sizeof(w1), "%sw1", wp);
	snprintf(w3, sizeof(w3), "%sw3", wp);
	snprintf(n1, sizeof(n1), "%s%sdxn2a", c->p, sub);
	snprintf(n2, sizeof(n2), "%s%sdxn2", c->p, sub);
	dxa = linear_bwd(b, rows, c->s->h, width,
			 gb_find(b, "%s%sdg", c->p, sub), xn2, w1, NONE,
			 gated ? n1 : n2);
	if (!gated)
		return dxa;
	return linear_bwd(b, rows, c->s->h, width,
			  gb_find(b, "%s%sdu", c->p, sub), xn2, w3, dxa, n2);
}

static uint32_t dense_bwd(struct gb *b, const struct lctx *c, uint32_t dout)
{
	bool gated = !c->s->m->plain_mlp;
	char w2[48];

	snprintf(w2, sizeof(w2), "%sw2", c->w);
	down_bwd(b, c, c->T, c->s->ffn, dout, fwd_act(b, c, "g"),
		 gated ? fwd_act(b, c, "u") : NONE, NONE, w2, "");
	return gate_up_bwd(b, c, c->T, c->s->ffn, gated, "", c->w);
}

static uint32_t moe_bwd(struct gb *b, const struct lctx *c, uint32_t dout)
{
	const struct shape *s = c->s;
	uint32_t *count, *dx, x, n = 0, rt = fwd_act(b, c, "route");
	char sub[16], wp[64], w2[80], name[64];
	uint32_t dxn2;

	if (gen_moe_arrays(b, s, &count, &dx))
		return 0;
	route(s, 0, c->l, c->T, count);
	for (x = 0; x < s->E; x++) {
		if (!count[x])
			continue;
		snprintf(sub, sizeof(sub), "e%u.", x);
		snprintf(wp, sizeof(wp), "%se%u.", c->w, x);
		snprintf(w2, sizeof(w2), "%sw2", wp);
		snprintf(name, sizeof(name), "e%u.g", x);
		down_bwd(b, c, count[x], s->eff, dout, fwd_act(b, c, name),
			 gb_find(b, "f.L%u.e%u.u", c->l, x), rt, w2, sub);
		dx[n++] = gate_up_bwd(b, c, count[x], s->eff, true, sub, wp);
	}
	if (s->sffn) {
		snprintf(wp, sizeof(wp), "%sshared.", c->w);
		snprintf(w2, sizeof(w2), "%sw2", wp);
		down_bwd(b, c, c->T, s->sffn, dout, fwd_act(b, c, "shared.g"),
			 fwd_act(b, c, "shared.u"), NONE, w2, "shared.");
		dx[n++] = gate_up_bwd(b, c, c->T, s->sffn, true, "shared.", wp);
	}
	dxn2 = grad(b, (uint64_t)c->T * s->h * b->dt, "%sdxn2", c->p);
	gb_in(b, dout);
	gb_in(b, rt);
	gb_in(b, fwd_act(b, c, ffn_in(s)));
	gb_in(b, gb_find(b, "%srouter.w", c->w));
	for (x = 0; x < n; x++)
		gb_in(b, dx[x]);
	gb_out(b, dxn2);
	snprintf(name, sizeof(name), "%srouter.w", c->w);
	gb_out(b, grad(b, gen_weight_bytes(b, name), "%s.grad", name));
	gb_gemm(b, c->T, s->h, s->E, (double)c->T * s->h * b->dt * (1 + n),
		"%srouter.bwd", c->p);
	free(count);
	free(dx);
	return dxn2;
}

static void attn_bwd(struct gb *b, const struct lctx *c, uint32_t dao)
{
	const struct shape *s = c->s;
	uint64_t T = c->T;
	const char *n[] = { "q", "k", "v" };
	uint32_t dqkv[3], i;

	gb_in(b, dao);
	for (i = 0; i < 3; i++)
		gb_in(b, fwd_act(b, c, n[i]));
	gb_in(b, fwd_act(b, c, "ao"));
	if (s->m->qk_norm) {
		gb_in(b, gb_find(b, "%sq_norm.w", c->w));
		gb_in(b, gb_find(b, "%sk_norm.w", c->w));
	}
	double seq = (double)T / s->B, span = s->window && s->window < seq ?
					     s->window : seq;

	for (i = 0; i < 3; i++) {
		dqkv[i] = grad(b, T * (i ? s->kvd : s->qd) * b->dt, "%sd%s",
			       c->p, n[i]);
		gb_out(b, dqkv[i]);
	}
	for (i = 0; s->m->qk_norm && i < 2; i++) {
		char w[48];

		snprintf(w, sizeof(w), "%s%s_norm.w", c->w, n[i]);
		gb_out(b, grad(b, gen_weight_bytes(b, w), "%s.grad", w));
	}
	/* flash-attention backward: about 2.5× the forward's work */
	gb_op(b, 2.5 * 2.0 * s->B * s->qd * seq * span,
	      4.0 * T * (s->qd + s->kvd) * b->dt, NULL, "%sattn.bwd", c->p);
}

/* @acc: a gradient of xn to add in (the parallel MLP's), or NONE. */
static uint32_t qkv_bwd(struct gb *b, const struct lctx *c, uint32_t acc)
{
	const struct shape *s = c->s;
	uint32_t xn = fwd_act(b, c, "xn");
	const char *n[] = { "q", "k", "v" };
	char w[48], dx[96];
	unsigned int i;

	for (i = 0; i < 3; i++) {
		snprintf(w, sizeof(w), "%sw%s", c->w, n[i]);
		snprintf(dx, sizeof(dx), "%sdxn.%s", c->p, n[i]);
		acc = linear_bwd(b, c->T, s->h, i ? s->kvd : s->qd,
				 gb_find(b, "%sd%s", c->p, n[i]), xn, w, acc,
				 dx);
	}
	return acc;
}

/*
 * y = norm(x)·w backward (gen_llama.c's latent_up()), x @xw wide of which
 * the first @in are normed and projected to @out: d(x), with @acc added
 * unless NONE, named @dxname; the gradients of w and of the norm.
 */
static uint32_t latent_up_bwd(struct gb *b, const struct lctx *c,
			      uint32_t dy, uint32_t acc, uint32_t x,
			      uint32_t xw, uint32_t in, uint32_t out,
			      const char *nw, const char *w, const char *dxname)
{
	uint64_t T = c->T;
	uint32_t dx = grad(b, T * xw * b->dt, "%s%s", c->p, dxname);
	const char *ws[] = { w, nw };
	char id[48];
	int i;

	gb_in(b, dy);
	if (acc != NONE)
		gb_in(b, acc);
	gb_in(b, gb_find(b, "%s%s", c->w, w));
	gb_in(b, gb_find(b, "%s%s", c->w, nw));
	gb_in(b, x);
	gb_out(b, dx);
	gb_gemm(b, T, in, out, 2.0 * T * xw * b->dt, "%s%s.dx", c->p, w);
	gb_in(b, dy);
	gb_in(b, x);
	for (i = 0; i < 2; i++) {
		snprintf(id, sizeof(id), "%s%s", c->w, ws[i]);
		gb_out(b, grad(b, gen_weight_bytes(b, id), "%s.grad", id));
	}
	gb_gemm(b, in, out, T, 0, "%s%s.dw", c->p, w);
	return dx;
}

/*
 * MLA backward (the forward is gen_llama.c's mla()): attention into dq,
 * the expanded keys and values (dkv) and the rope keys (dkr); the
 * latent's expansion and norm; then wkv_a and the query's projections,
 * summed into d(xn).
 */
static uint32_t mla_bwd(struct gb *b, const struct lctx *c, uint32_t dao)
{
	const struct shape *s = c->s;
	const struct model *m = s->m;
	uint64_t T = c->T;
	uint32_t nh = s->od / m->v_head, xn = fwd_act(b, c, "xn");
	uint32_t dq, dkv, dkr, dckv, dqa, acc, ckv = fwd_act(b, c, "ckv");
	double seq = (double)T / s->B;
	char w[48], dx[96];

	gb_in(b, dao);
	gb_in(b, fwd_act(b, c, "q"));
	gb_in(b, fwd_act(b, c, "kv"));
	gb_in(b, ckv);
	gb_in(b, fwd_act(b, c, "ao"));
	dq = grad(b, T * s->qd * b->dt, "%sdq", c->p);
	dkv = grad(b, T * s->kexp * b->dt, "%sdkv", c->p);
	dkr = grad(b, T * m->qk_rope * b->dt, "%sdkr", c->p);
	gb_out(b, dq);
	gb_out(b, dkv);
	gb_out(b, dkr);
	/* about 2.5× the forward's work, as attn_bwd */
	gb_op(b, 2.5 * s->B * nh * seq * seq *
		 (m->qk_nope + m->qk_rope + m->v_head),
	      2.0 * T * (s->qd + s->kexp + s->od + m->qk_rope) * b->dt, NULL,
	      "%sattn.bwd", c->p);

	/* the rope keys' gradient joins the latent's */
	dckv = latent_up_bwd(b, c, dkv, dkr, ckv, s->kvd, s->kvl, s->kexp,
			     "kv_a_norm.w", "wkv_b", "dckv");
	snprintf(w, sizeof(w), "%swkv_a", c->w);
	snprintf(dx, sizeof(dx), "%sdxn.kv", c->p);
	acc = linear_bwd(b, T, s->h, s->kvd, dckv, xn, w, NONE, dx);
	snprintf(dx, sizeof(dx), "%sdxn.q", c->p);
	if (!s->ql) {
		snprintf(w, sizeof(w), "%swq", c->w);
		return linear_bwd(b, T, s->h, s->qd, dq, xn, w, acc, dx);
	}
	/* q = norm(xn·wq_a)·wq_b */
	dqa = latent_up_bwd(b, c, dq, NONE, fwd_act(b, c, "qa"), s->ql, s->ql,
			    s->qd, "q_a_norm.w", "wq_b", "dqa");
	snprintf(w, sizeof(w), "%swq_a", c->w);
	return linear_bwd(b, T, s->h, s->ql, dqa, xn, w, acc, dx);
}

static uint32_t layer_bwd(struct gb *b, const struct shape *s, uint32_t l,
			  uint32_t T, uint32_t dout)
{
	struct lctx c = { .s = s, .l = l, .T = T };
	const struct model *m = s->m;
	uint32_t dxn2, dmid, dao, dxn, x, dy = dout, dxm = NONE;
	char name[96], w[48];

	snprintf(c.p, sizeof(c.p), "b.L%u.", l);
	snprintf(c.w, sizeof(c.w), "L%u.", l);
	x = l ? gb_find(b, "f.L%u.out", l - 1) : gb_find(b, "f.embed");
	snprintf(w, sizeof(w), "%sffn_norm.w", c.w);
	if (m->sandwich) {	/* out = mid + norm(y) */
		snprintf(name, sizeof(name), "%sdy", c.p);
		dy = norm_bwd(b, T, s->h, dout, fwd_act(b, &c, "y"), w, NONE,
			      name);
	}
	dxn2 = is_moe(s, l) ? moe_bwd(b, &c, dy) : dense_bwd(b, &c, dy);
	if (m->parallel) {
		/* mid only passes the residual on; the MLP's d(xn) joins q, k, v's */
		dmid = dout;
		if (m->two_ln) {	/* or its own norm's, with the residual */
			snprintf(name, sizeof(name), "%sdxm", c.p);
			dxm = norm_bwd(b, T, s->h, dxn2, x, w, dout, name);
		}
	} else {
		snprintf(name, sizeof(name), "%sdmid", c.p);
		dmid = norm_bwd(b, T, s->h, dxn2, fwd_act(b, &c, "mid"), w,
				dout, name);
	}
	snprintf(w, sizeof(w), "%sattn_norm.w", c.w);
	dy = dmid;
	if (m->sandwich) {	/* mid = x + norm(ay) */
		snprintf(name, sizeof(name), "%sday", c.p);
		dy = norm_bwd(b, T, s->h, dmid, fwd_act(b, &c, "ay"), w, NONE,
			      name);
	}
	snprintf(name, sizeof(name), "%sdao", c.p);
	snprintf(w, sizeof(w), "%swo", c.w);
	dao = linear_bwd(b, T, s->od, s->h, dy, fwd_act(b, &c, "ao"), w,
			 NONE, name);
	if (m->kv_lora) {
		dxn = mla_bwd(b, &c, dao);
	} else {
		attn_bwd(b, &c, dao);
		dxn = qkv_bwd(b, &c, m->parallel && !m->two_ln ? dxn2 : NONE);
	}
	snprintf(name, sizeof(name), "%sdx", c.p);
	snprintf(w, sizeof(w), "%sattn_norm.w", c.w);
	return norm_bwd(b, T, s->h, dxn, x, w, dxm != NONE ? dxm : dmid, name);
}

static void loss_and_head_bwd(struct gb *b, const struct shape *s,
			      uint32_t T, uint32_t logits, uint32_t labels,
			      uint32_t *dx)
{
	uint32_t dlogits = grad(b, (uint64_t)T * s->V * b->dt, "b.dlogits");
	uint32_t dxf;

	gb_in(b, logits);
	gb_in(b, labels);
	gb_out(b, dlogits);
	gb_op(b, 5.0 * T * s->V, 2.0 * T * s->V * b->dt, NULL, "loss");
	dxf = linear_bwd(b, T, s->h, s->V, dlogits, gb_find(b, "f.xf"),
			 head_w(s), NONE, "b.dxf");
	*dx = norm_bwd(b, T, s->h, dxf, gb_find(b, "f.L%u.out", s->L - 1),
		       "final_norm.w", NONE, "b.dx_final");
}

static void embed_bwd(struct gb *b, const struct shape *s, uint32_t T,
		      uint32_t dx, uint32_t labels)
{
	gb_in(b, dx);
	gb_in(b, labels);
	if (s->m->tied) {
		/* the LM head's gradient is there already: add to it */
		uint32_t g = gb_find(b, "embed.w.grad");

		gb_in(b, g);
		gb_out(b, g);
	} else {
		gb_out(b, grad(b, (uint64_t)s->V * s->h * b->dt, "embed.w.grad"));
	}
	if (s->m->max_pos)
		gb_out(b, grad(b, gen_weight_bytes(b, "pos_embed.w"),
			       "pos_embed.w.grad"));
	gb_op(b, (double)T * s->h, ((double)s->V + 2.0 * T) * s->h * b->dt,
	      NULL, "b.embed");
}

/* Mixed-precision Adam on one weight: 30 bytes and ~12 FLOP a parameter. */
static void adam(struct gb *b, uint32_t w)
{
	const uint8_t f = hyper_plan__tkind_default_flags(HYPER_KIND_OPTIMIZER);
	const char *id = b->g->t[w].id;
	uint64_t params = b->g->t[w].bytes / b->dt;
	const char *st[] = { "master", "m", "v" };
	uint32_t s[3], i, g;
	char gname[HP_MAX_ID + 1];

	snprintf(gname, sizeof(gname), "%s.grad", id);
	g = hyper_plan__graph_tensor(b->g, gname);
	if (g == NONE)		/* an expert no token was routed to */
		return;
	for (i = 0; i < 3; i++)
		s[i] = gb_tensor(b, HYPER_KIND_OPTIMIZER, params * FP32, f, "%s.%s",
				 id, st[i]);
	gb_in(b, g);
	gb_in(b, w);
	for (i = 0; i < 3; i++)
		gb_in(b, s[i]);
	gb_out(b, w);
	for (i = 0; i < 3; i++)
		gb_out(b, s[i]);
	gb_op(b, 12.0 * params, 30.0 * params, NULL, "opt.%s", id);
}

int gen_train(struct graph *g, const struct gen_params *gp,
	      const struct profile *p, struct hp_err *e)
{
	struct pass ps = { .pfx = "f", .n = gp->seq,
			   .act_flags = gp->keep_act ? TF_PIN : 0 };
	uint32_t T, labels, x, l, w, nweights;
	struct shape s;
	struct gb b;

	if (shape_init(&s, gp, e))
		return -1;
	T = s.B * gp->seq;
	gb_init(&b, g, p, e);
	b.dt = gp->dtype_bytes;
	make_weights(&b, &s);
	nweights = g->nt;
	labels = gb_tensor(&b, HYPER_KIND_ACTIVATION, (uint64_t)T * 4, TF_LIVE_IN,
			   "batch.tokens");
	x = forward(&b, &s, &ps, labels);
	x = head(&b, &s, &ps, x, T);
	loss_and_head_bwd(&b, &s, T, x, labels, &x);
	for (l = s.L; l-- > 0 && !b.err;)
		x = layer_bwd(&b, &s, l, T, x);
	embed_bwd(&b, &s, T, x, labels);
	for (w = 0; w < nweights && !b.err; w++)
		adam(&b, w);
	return gb_finish(&b);
}
