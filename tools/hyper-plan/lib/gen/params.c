// SPDX-License-Identifier: LGPL-2.1-or-later
/* A generator's default parameters, and the name it gives its graph. */
#include <stdio.h>
#include <string.h>

#include "gen/model.h"

/* Defaults of what gen_graph_name() names only when it differs. */
#define GEN_KV_BLOCK	256
#define GEN_SEED	1
#define GEN_DTYPE_BYTES	2

void gen_defaults(struct gen_params *gp, const struct model *m)
{
	memset(gp, 0, sizeof(*gp));
	gp->m = m;
	gp->mode = GEN_INFER;
	gp->batch = 1;
	gp->seq = 2048;
	gp->decode = 32;
	gp->kv_block = GEN_KV_BLOCK;
	gp->seed = GEN_SEED;
	gp->scale = 1;
	gp->dtype_bytes = GEN_DTYPE_BYTES;
}

/*
 * Every parameter that changes the graph shows in its name, so that two
 * different graphs are never named the same (the graph's hash is its
 * identity; the name is for people).  The shape comes first, joined to
 * the model's name when it is not the published one: llama2-7b-l4-s8-fp32
 * is four layers, one eighth of the width, fp32.
 */
void gen_graph_name(char *buf, size_t len, const struct gen_params *gp)
{
	const struct model *m = gp->m;
	char shape[64] = "", kv[32] = "", seed[48] = "";
	size_t n = 0;

	if (gp->layers && gp->layers != m->layers)
		n += snprintf(shape + n, sizeof(shape) - n, "-l%u", gp->layers);
	if (gp->scale > 1)
		n += snprintf(shape + n, sizeof(shape) - n, "-s%u", gp->scale);
	if (gp->dtype_bytes != GEN_DTYPE_BYTES)
		snprintf(shape + n, sizeof(shape) - n, "-%s",
			 gp->dtype_bytes == 4 ? "fp32" : "dtype?");
	if (m->experts && gp->seed != GEN_SEED)
		snprintf(seed, sizeof(seed), " routing seed %llu",
			 (unsigned long long)gp->seed);
	if (gp->mode == GEN_TRAIN) {
		snprintf(buf, len, "%s%s train batch %u seq %u%s%s", m->name,
			 shape, gp->batch, gp->seq,
			 gp->keep_act ? " activations kept" : "", seed);
		return;
	}
	if (gp->kv_block != GEN_KV_BLOCK)
		snprintf(kv, sizeof(kv), " kv-block %u", gp->kv_block);
	snprintf(buf, len, "%s%s infer batch %u prompt %u decode %u%s%s",
		 m->name, shape, gp->batch, gp->seq, gp->decode, kv, seed);
}
