/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the generators share: naming, staging an operator's inputs and
 * outputs, and its roofline compute time.  The first error sticks; later
 * calls do nothing, so generators check once at the end.
 */
#ifndef HP_GEN_BUILD_H
#define HP_GEN_BUILD_H

#include "graph/graph.h"
#include "profile/profile.h"

#define BF16	2ULL
#define FP32	4ULL

struct gb {
	struct graph *g;
	uint64_t dt;		/* bytes per element of every tensor */
	const struct profile *p;
	struct hp_err *e;
	int err;
	uint32_t *in, *out;
	uint32_t n_in, n_out;
	size_t cap_in, cap_out;
};

void gb_init(struct gb *b, struct graph *g, const struct profile *p,
	     struct hp_err *e);
int gb_finish(struct gb *b);

uint32_t gb_tensor(struct gb *b, enum hyper_tensor_kind kind, uint64_t bytes,
		   uint8_t flags, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
uint32_t gb_find(struct gb *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Names built from their parts by copying, for the ones made per layer and
 * per pass ("d12.L3.q_proj", "L3.kv7"): a 1M decode graph makes and looks
 * up about 4.7 million, and vsnprintf() parsing a format for each was 6% of
 * a 100k decode run.  @id holds HP_MAX_ID + 1 bytes; each call appends at
 * @n, truncates at HP_MAX_ID as snprintf() would, and returns the new
 * length.  gb_lname() makes "<pfx>.L<l>.<name><tail>" ("L<l>.<name><tail>"
 * without @pfx); @tail may be NULL.
 */
size_t gb_cat(char *id, size_t n, const char *s);
size_t gb_cat_u(char *id, size_t n, uint32_t u);
const char *gb_lname(char *id, const char *pfx, uint32_t l, const char *name,
		     const char *tail);

/* gb_tensor(), gb_find(), gb_op() and gb_gemm() of a name already made. */
uint32_t gb_tensor_id(struct gb *b, enum hyper_tensor_kind kind,
		      uint64_t bytes, uint8_t flags, const char *id);
uint32_t gb_find_id(struct gb *b, const char *id);
void gb_op_id(struct gb *b, double flops, double bytes,
	      const struct gemm *gm, const char *id);
void gb_gemm_id(struct gb *b, uint32_t m, uint32_t n, uint32_t k,
		double extra, const char *id);
void gb_in(struct gb *b, uint32_t t);
void gb_out(struct gb *b, uint32_t t);

/* Adds the staged operator, timed by the roofline. */
void gb_op(struct gb *b, double flops, double bytes, const struct gemm *gm,
	   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A matrix multiply C[m×n] = A[m×k]·B[k×n] in bf16, plus @extra bytes. */
void gb_gemm(struct gb *b, uint32_t m, uint32_t n, uint32_t k, double extra,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
