/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HP_GRAPH_JSON_H
#define HP_GRAPH_JSON_H

#include <stdio.h>

#include "graph/graph.h"

/* Parse graph format v1 into an initialised, empty graph. */
int hyper_plan__graph_parse_json(struct graph *g, const char *text, struct hp_err *e);
/*
 * The largest graph file read: a 1M-operator graph takes about a quarter
 * of it.  Documented in Documentation/graph-format.md.
 */
#define GRAPH_MAX_FILE	(2048ULL << 20)

int hyper_plan__graph_load_json(struct graph *g, const char *path, struct hp_err *e);
void hyper_plan__graph_write_json(const struct graph *g, FILE *f);

#endif
