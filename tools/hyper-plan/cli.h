/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HP_CLI_H
#define HP_CLI_H

#include "gen/model.h"

/* --timeline files handed to hyper-timeline */
#define RENDER_MAX	6

enum action { ACT_PLAN, ACT_MEASURE, ACT_LIST_MODELS, ACT_LIST_PROFILES,
	      ACT_PASSES,
	      ACT_BENCH, ACT_RENDER, ACT_HELP };

struct cli {
	enum action action;
	const char *graph, *model, *config, *profile, *profile_file;
	const char *output, *emit_graph, *plot, *trace, *policy, *bench_dir;
	struct gen_params gp;
	struct random_params rp;
	const char *mode;
	const char *feedback;	/* --feedback: a run's timeline */
	uint64_t budget;
	double max_slow;
	bool compare, bound, no_reorder, quiet, quick;
	bool verbose;		/* -v: say what the config's reader ignored */
	/* --measure-profile: the copy path and where things run; -1: unset */
	int copy_engine, copy_cpu, compute_cpu;
	bool alone;
	const char *timelines[RENDER_MAX];	/* --timeline: real runs to draw */
	unsigned int nr_timelines;
};

/* Returns 0, or -1 after printing a usage error. */
int cli_parse(struct cli *c, int argc, char **argv);
void cli_usage(FILE *f);

#endif
