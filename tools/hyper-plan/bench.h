/* SPDX-License-Identifier: GPL-2.0 */
/* `make bench-plan`: see Documentation/bench-plan.md. */
#ifndef HP_BENCH_H
#define HP_BENCH_H

#include "model.h"

void bench_graph_name(char *buf, size_t len, const struct gen_params *gp);
int bench_run(const char *dir, bool quick, struct hp_err *e);

#endif
