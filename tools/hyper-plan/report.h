/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include "job.h"

enum { POL_NONE, POL_PLAN, POL_DISTANCE, POL_GREEDY, POL_NR };

extern const char *const policy_name[POL_NR];
int policy_parse(const char *s);

/* Runs one policy's search; a baseline that finds nothing is not fatal. */
int run_policy(int pol, const struct problem *pb, struct result *r,
	       struct hp_err *e);

void report_header(FILE *f, const struct job *j);
void report_row(FILE *f, const struct result *r, uint64_t peak0);
void report_bound(FILE *f, uint64_t bound, uint64_t peak0, double max_slow);

#endif
