// SPDX-License-Identifier: GPL-2.0
/* A generator's default parameters, and the name it gives its graph. */
#include <stdio.h>
#include <string.h>

#include "model.h"

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
