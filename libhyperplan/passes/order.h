/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dependencies between operators, the topological order, and the
 * execution-order refinement pass.  A read sees the last write listed
 * before it (or the live_in value); a read listed before every write of a
 * tensor that is not live_in is a forward reference to its first write.
 * That is the only way to express a cycle, and cycles are rejected.
 */
#ifndef HP_ORDER_H
#define HP_ORDER_H

#include "graph/graph.h"

struct deps {
	size_t *off;		/* successors of op i: dst[off[i]..off[i+1]) */
	uint32_t *dst;
	uint32_t *indeg;
	void *blk;		/* the three in one block, or NULL: apart */
};

/* -ENOMEM ("out of memory" in @e) when @mem runs out, as hyper_plan__topo_order(). */
int hyper_plan__graph_deps(const struct graph *g, struct deps *d, struct hp_mem *mem,
	       struct hp_err *e);
void hyper_plan__deps_free(struct deps *d);

/* The listed order when it is valid; otherwise forward references are
 * resolved.  Fails naming the operators of a cycle. */
int hyper_plan__topo_order(const struct graph *g, const struct deps *d, uint32_t *order,
	       struct hp_mem *mem, struct hp_err *e);

/* Memory-aware refinement: see reorder.c.  0, or with @order as it was
 * -ENOMEM, or -EINVAL where @d has a cycle (hyper_plan__topo_order()
 * rejects those first). */
int hyper_plan__refine_order(const struct graph *g, const struct deps *d,
		 uint32_t *order, struct hp_mem *mem);

#endif
