/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner's input: operators in their initial order, each reading
 * and writing tensors, with a compute-time estimate.  Documented in
 * Documentation/graph-format.md.
 */
#ifndef HP_GRAPH_H
#define HP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <hyper/plan.h>

#include "graph/idmap.h"
#include "lib/util.h"

/* Tensor kinds are enum hyper_tensor_kind, from the shared vocabulary. */

/* Tensor flags: the public ones, documented in <hyper/plan.h>. */
#define TF_LIVE_IN	HYPER_PLAN_LIVE_IN
#define TF_LIVE_OUT	HYPER_PLAN_LIVE_OUT
#define TF_PIN		HYPER_PLAN_PIN

/*
 * An id's length and whether it is written as it is in a JSON string
 * (hu_json_plain_len() said so), measured once when the graph takes it:
 * the graph's identity hashes each tensor's id again in every step that
 * lists it, and the schedule's JSON writes it there too (at 100k decode
 * operators 720,000 times for 100,664 tensors).  Both fit in what was
 * padding: struct tensor and struct op keep their sizes.  @id_len 0:
 * not known (an id set by hand, as some tests do), measured where used;
 * @id_plain false: written through hu_jbuf_str().
 */
struct tensor {
	const char *id;
	uint64_t bytes;
	uint8_t kind;
	uint8_t flags;
	uint8_t id_len;		/* strlen(id), 1..HP_MAX_ID; 0: not known */
	bool id_plain;		/* no byte of id needs a JSON escape */
};

/* A matrix multiply's shape, copied to the schedule as "x-gemm". */
struct gemm {
	uint32_t m, n, k;
};

struct op {
	const char *id;
	uint64_t compute_ns;
	size_t ref;		/* inputs, then outputs, in graph->refs */
	uint32_t n_in, n_out;
	struct gemm gemm;	/* all zero: not a matrix multiply */
	/*
	 * Set by hyper_plan__graph_add_op() when no output is also an input,
	 * as for most ops: listing an op's distinct tensors then looks for no
	 * output among its inputs (for_each_op_tensor(), the order and life
	 * passes).  false: look.
	 */
	bool outs_unread;
	uint8_t id_len;		/* as struct tensor's */
	bool id_plain;
	/* Its cost, which a profile turns into compute_ns; both 0: unknown. */
	double flops, bytes;
};

struct str_arena {
	char *block;
	size_t used, size;
	char **blocks;
	size_t nblocks, capblocks;
};

/* Must not be moved once initialised: its id maps point back at it. */
struct graph {
	char *name;
	struct tensor *t;
	size_t nt, cap_t;
	uint64_t total_bytes;	/* of every tensor: at most HP_MAX_TOTAL */
	struct op *op;
	size_t nop, cap_op;
	uint32_t *refs;
	size_t nrefs, cap_refs;
	struct idmap tmap, omap;
	bool ids_dropped;	/* hyper_plan__graph_drop_ids() freed them */
	/* The profile the ops' compute_ns are for; "": not said. */
	char timed_on[32];
	struct str_arena strs;
	struct hp_mem mem;	/* what adding tensors and ops allocates */
};


/* 0, or -ENOMEM (g->name is then NULL; hyper_plan__graph_free() still applies). */
int hyper_plan__graph_init(struct graph *g, const char *name);
void hyper_plan__graph_free(struct graph *g);
/*
 * Empties @g as hyper_plan__graph_init() would, keeping its name and its allocator
 * (g->mem: the allocation count and the fail_at test hook).
 */
void hyper_plan__graph_reset(struct graph *g);
int hyper_plan__tkind_parse(const char *s);
void hyper_plan__graph_identity(const struct graph *g, char *hash);
uint8_t hyper_plan__tkind_default_flags(enum hyper_tensor_kind k);

uint32_t hyper_plan__graph_add_tensor(struct graph *g, const char *id, uint64_t bytes,
			  enum hyper_tensor_kind kind, uint8_t flags, struct hp_err *e);
uint32_t hyper_plan__graph_add_op(struct graph *g, const char *id, uint64_t compute_ns,
		      const uint32_t *in, uint32_t n_in,
		      const uint32_t *out, uint32_t n_out,
		      const struct gemm *gemm, struct hp_err *e);
uint32_t hyper_plan__graph_tensor(const struct graph *g, const char *id);
/* The bytes of @g's largest tensor; 0 if it has none. */
uint64_t hyper_plan__graph_largest(const struct graph *g);
/*
 * Frees @g's id maps (two hash tables, 34 MB at a million operators),
 * for a caller that looks no id up once the graph is prepared (the API's
 * frozen graphs, hyper-plan): the search, the layout and the checks then
 * have the memory.  A look-up still answers (by a scan); adding to @g
 * builds the maps again first.
 */
void hyper_plan__graph_drop_ids(struct graph *g);

/* An id's length from struct tensor's or struct op's @id_len. */
static inline size_t id_bytes(const char *id, uint8_t id_len)
{
	return id_len ? id_len : strlen(id);
}

static inline const uint32_t *op_in(const struct graph *g, const struct op *o)
{
	return g->refs + o->ref;
}

static inline const uint32_t *op_out(const struct graph *g, const struct op *o)
{
	return g->refs + o->ref + o->n_in;
}

bool hyper_plan__op_reads(const struct graph *g, const struct op *o, uint32_t t);

/*
 * Each distinct tensor @o touches, as @t: its inputs, then the outputs
 * that are not also inputs; (k) < (o)->n_in tells a read.
 */
#define for_each_op_tensor(g, o, t, k)					\
	for ((k) = 0; (k) < (o)->n_in + (o)->n_out &&			\
	     ((t) = (g)->refs[(o)->ref + (k)], 1); (k)++)		\
		if ((k) < (o)->n_in || (o)->outs_unread ||		\
		    !hyper_plan__op_reads((g), (o), (t)))

/* Bytes an operator needs resident: its inputs and outputs, once each. */
uint64_t hyper_plan__op_working_set(const struct graph *g, const struct op *o);

#endif
