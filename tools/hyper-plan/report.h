/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include "job.h"
#include "policies/list.h"

void report_header(FILE *f, const struct job *j);
void report_row(FILE *f, const struct result *r, uint64_t peak0);
void report_arena(FILE *f, const struct result *r);
void report_bound(FILE *f, uint64_t bound, uint64_t peak0, double max_slow);

#endif
