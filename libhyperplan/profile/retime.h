/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef HP_RETIME_H
#define HP_RETIME_H

#include "graph/graph.h"
#include "profile/profile.h"

/*
 * Times @g's operators for @p: the roofline of those with flops or bytes;
 * refuses, naming both profiles, a graph whose other operators were timed
 * on another profile.  Then @g is timed on @p.
 */
int hyper_plan__graph_retime(struct graph *g, const struct profile *p, struct hp_err *e);

#endif
