// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#include "gen/gen_build.h"
#include "util/dec.h"

void gb_init(struct gb *b, struct graph *g, const struct profile *p,
	     struct hp_err *e)
{
	*b = (struct gb){ .g = g, .p = p, .e = e, .dt = BF16 };
	snprintf(g->timed_on, sizeof(g->timed_on), "%s", p->name);
}

int gb_finish(struct gb *b)
{
	free(b->in);
	free(b->out);
	return b->err;
}

uint32_t gb_tensor_id(struct gb *b, enum hyper_tensor_kind kind,
		      uint64_t bytes, uint8_t flags, const char *id)
{
	uint32_t t;

	if (b->err)
		return 0;
	t = hyper_plan__graph_add_tensor(b->g, id, bytes, kind, flags, b->e);
	if (t == NONE) {
		b->err = -EINVAL;
		return 0;
	}
	return t;
}

uint32_t gb_tensor(struct gb *b, enum hyper_tensor_kind kind, uint64_t bytes,
		   uint8_t flags, const char *fmt, ...)
{
	char id[HP_MAX_ID + 1];
	va_list ap;

	if (b->err)
		return 0;
	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	return gb_tensor_id(b, kind, bytes, flags, id);
}

/* Generators look tensors up by the names they gave them. */
uint32_t gb_find_id(struct gb *b, const char *id)
{
	uint32_t t = b->err ? 0 : hyper_plan__graph_tensor(b->g, id);

	if (t == NONE)
		b->err = hyper_plan__errf(b->e, "generator: no tensor \"%s\"", id);
	return t == NONE ? 0 : t;
}

uint32_t gb_find(struct gb *b, const char *fmt, ...)
{
	char id[HP_MAX_ID + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	return gb_find_id(b, id);
}

size_t gb_cat(char *id, size_t n, const char *s)
{
	while (*s && n < HP_MAX_ID)
		id[n++] = *s++;
	id[n] = 0;
	return n;
}

size_t gb_cat_u(char *id, size_t n, uint32_t u)
{
	char d[HU_DEC_MAX], *end = d + sizeof(d);
	const char *p = hu_dec_put(end, u);

	while (p < end && n < HP_MAX_ID)
		id[n++] = *p++;
	id[n] = 0;
	return n;
}

const char *gb_lname(char *id, const char *pfx, uint32_t l, const char *name,
		     const char *tail)
{
	size_t n = 0;

	if (pfx) {
		n = gb_cat(id, n, pfx);
		n = gb_cat(id, n, ".");
	}
	n = gb_cat(id, n, "L");
	n = gb_cat_u(id, n, l);
	n = gb_cat(id, n, ".");
	n = gb_cat(id, n, name);
	if (tail)
		gb_cat(id, n, tail);
	return id;
}

void gb_in(struct gb *b, uint32_t t)
{
	if (hyper_plan__grow(&b->g->mem, &b->in, &b->cap_in, b->n_in, sizeof(*b->in))) {
		b->err = b->err ? b->err : hyper_plan__nomem(b->e);
		return;
	}
	b->in[b->n_in++] = t;
}

void gb_out(struct gb *b, uint32_t t)
{
	if (hyper_plan__grow(&b->g->mem, &b->out, &b->cap_out, b->n_out,
		    sizeof(*b->out))) {
		b->err = b->err ? b->err : hyper_plan__nomem(b->e);
		return;
	}
	b->out[b->n_out++] = t;
}

void gb_op_id(struct gb *b, double flops, double bytes,
	      const struct gemm *gm, const char *id)
{
	double ns = ceil(roofline_ns(b->p, flops, bytes));

	if (!b->err && ns > HP_MAX_OP_NS)
		b->err = hyper_plan__errf(b->e, "generator: op \"%s\" would take %.0f s; batch or sequence too large",
				 id, ns / 1e9);
	if (!b->err &&
	    hyper_plan__graph_add_op(b->g, id, (uint64_t)ns, b->in, b->n_in, b->out,
			 b->n_out, gm, b->e) == NONE)
		b->err = -EINVAL;
	if (!b->err) {		/* kept, so that another profile re-times it */
		b->g->op[b->g->nop - 1].flops = flops;
		b->g->op[b->g->nop - 1].bytes = bytes;
	}
	b->n_in = b->n_out = 0;
}

void gb_op(struct gb *b, double flops, double bytes, const struct gemm *gm,
	   const char *fmt, ...)
{
	char id[HP_MAX_ID + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	gb_op_id(b, flops, bytes, gm, id);
}

void gb_gemm_id(struct gb *b, uint32_t m, uint32_t n, uint32_t k,
		double extra, const char *id)
{
	struct gemm gm = { m, n, k };
	double flops = 2.0 * m * n * k;
	double bytes = b->dt * ((double)m * k + (double)k * n + (double)m * n);

	gb_op_id(b, flops, bytes + extra, &gm, id);
}

void gb_gemm(struct gb *b, uint32_t m, uint32_t n, uint32_t k, double extra,
	     const char *fmt, ...)
{
	char id[HP_MAX_ID + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(id, sizeof(id), fmt, ap);
	va_end(ap);
	gb_gemm_id(b, m, n, k, extra, id);
}
