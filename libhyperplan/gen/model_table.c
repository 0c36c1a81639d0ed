// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Published shapes (model cards / config.json of each release).  bf16
 * weights; hidden = heads × head_dim.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"

#define LLAMA(n, d, L, h, nh, kv, f, V, E, k)				\
	{ .name = n, .desc = d, .layers = L, .hidden = h, .heads = nh,	\
	  .kv_heads = kv, .ffn = f, .vocab = V, .experts = E, .top_k = k }

const struct model model_table[] = {
	LLAMA("llama2-7b", "Llama-2 7B", 32, 4096, 32, 32, 11008, 32000, 0, 0),
	LLAMA("llama2-13b", "Llama-2 13B", 40, 5120, 40, 40, 13824, 32000, 0, 0),
	LLAMA("llama2-70b", "Llama-2 70B (GQA, 8 KV heads)",
	      80, 8192, 64, 8, 28672, 32000, 0, 0),
	LLAMA("llama3-8b", "Llama-3 8B (GQA, 128k vocabulary)",
	      32, 4096, 32, 8, 14336, 128256, 0, 0),
	LLAMA("mixtral-8x7b", "Mixtral-8x7B-style MoE: 8 experts, top-2",
	      32, 4096, 32, 8, 14336, 32000, 8, 2),
};

const unsigned int model_table_len = ARRAY_SIZE(model_table);

const struct model *model_find(const char *name, struct hp_err *e)
{
	char known[256] = "";
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < model_table_len; i++) {
		if (!strcmp(name, model_table[i].name))
			return &model_table[i];
		len += snprintf(known + len, sizeof(known) - len, "%s%s",
				i ? ", " : "", model_table[i].name);
	}
	hp_errf(e, "unknown model \"%.64s\" (known: %s, random)", name, known);
	return NULL;
}

void gen_defaults(struct gen_params *gp, const struct model *m)
{
	memset(gp, 0, sizeof(*gp));
	gp->m = m;
	gp->mode = GEN_INFER;
	gp->batch = 1;
	gp->seq = 2048;
	gp->decode = 32;
	gp->kv_block = 256;
	gp->seed = 1;
	gp->scale = 1;
	gp->dtype_bytes = 2;
}

void gen_graph_name(char *buf, size_t len, const struct gen_params *gp)
{
	if (gp->mode == GEN_TRAIN)
		snprintf(buf, len, "%s train batch %u seq %u%s%s", gp->m->name,
			 gp->batch, gp->seq,
			 gp->keep_act ? " activations kept" : "",
			 gp->layers ? " (layers cut)" : "");
	else
		snprintf(buf, len, "%s infer batch %u prompt %u decode %u%s",
			 gp->m->name, gp->batch, gp->seq, gp->decode,
			 gp->layers ? " (layers cut)" : "");
}
