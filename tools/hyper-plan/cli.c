// SPDX-License-Identifier: GPL-2.0
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/hyper.h>

#include "cli.h"
#include "policies/list.h"

enum {
	O_MODE = 256, O_BATCH, O_SEQ, O_DECODE, O_KVB, O_LAYERS, O_SEED,
	O_KEEP, O_OPS, O_PFILE, O_EMIT, O_PLOT, O_TRACE, O_COMPARE, O_BOUND,
	O_NOREORDER, O_MEASURE, O_LMODELS, O_LPROFILES, O_BENCH, O_QUICK,
	O_SCALE, O_DTYPE, O_TIMELINE, O_CONFIG, O_FEEDBACK, O_COPY, O_COPY_CPU,
	O_COMPUTE_CPU, O_ALONE, O_PASSES,
};

static const struct option opts[] = {
	{ "graph", required_argument, NULL, 'g' },
	{ "model", required_argument, NULL, 'm' },
	{ "config", required_argument, NULL, O_CONFIG },
	{ "mode", required_argument, NULL, O_MODE },
	{ "batch", required_argument, NULL, O_BATCH },
	{ "seq", required_argument, NULL, O_SEQ },
	{ "decode", required_argument, NULL, O_DECODE },
	{ "kv-block", required_argument, NULL, O_KVB },
	{ "layers", required_argument, NULL, O_LAYERS },
	{ "scale", required_argument, NULL, O_SCALE },
	{ "dtype", required_argument, NULL, O_DTYPE },
	{ "timeline", required_argument, NULL, O_TIMELINE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "keep-activations", no_argument, NULL, O_KEEP },
	{ "ops", required_argument, NULL, O_OPS },
	{ "profile", required_argument, NULL, 'p' },
	{ "profile-file", required_argument, NULL, O_PFILE },
	{ "feedback", required_argument, NULL, O_FEEDBACK },
	{ "budget", required_argument, NULL, 'b' },
	{ "slowdown", required_argument, NULL, 's' },
	{ "policy", required_argument, NULL, 'P' },
	{ "output", required_argument, NULL, 'o' },
	{ "emit-graph", required_argument, NULL, O_EMIT },
	{ "plot", required_argument, NULL, O_PLOT },
	{ "trace", required_argument, NULL, O_TRACE },
	{ "compare", no_argument, NULL, O_COMPARE },
	{ "bound", no_argument, NULL, O_BOUND },
	{ "no-reorder", no_argument, NULL, O_NOREORDER },
	{ "measure-profile", no_argument, NULL, O_MEASURE },
	{ "copy", required_argument, NULL, O_COPY },
	{ "copy-cpu", required_argument, NULL, O_COPY_CPU },
	{ "compute-cpu", required_argument, NULL, O_COMPUTE_CPU },
	{ "alone", no_argument, NULL, O_ALONE },
	{ "list-models", no_argument, NULL, O_LMODELS },
	{ "list-profiles", no_argument, NULL, O_LPROFILES },
	{ "passes", no_argument, NULL, O_PASSES },
	{ "bench", required_argument, NULL, O_BENCH },
	{ "quick", no_argument, NULL, O_QUICK },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void cli_usage(FILE *f)
{
	fputs("usage: hyper-plan (--graph FILE | (--model NAME | --config config.json)\n"
	      "                   [generator options])\n"
	      "                  [--profile NAME | --profile-file FILE] [--feedback RUN.json]\n"
	      "                  [--budget SIZE | --slowdown PCT] [--policy POLICY]\n"
	      "                  [-o SCHEDULE.json] [--compare] [--bound]\n"
	      "                  [--plot FILE.svg] [--trace FILE.json] [--emit-graph FILE]\n"
	      "                  [-v (the config keys ignored, each pass timed)] [-q]\n"
	      "       hyper-plan --measure-profile [-o FILE] [--copy ENGINE] [--copy-cpu N]\n"
	      "                  [--compute-cpu N] [--alone]\n"
	      "       hyper-plan --timeline RUN.json... [--plot FILE.svg] [--trace FILE.json]\n"
	      "       hyper-plan --list-models | --list-profiles | --passes\n"
	      "       hyper-plan --bench DIR [--quick]\n"
	      "generator: --mode infer|train --batch N --seq N --decode N --kv-block N\n"
	      "           --layers N --scale N --dtype bf16|fp32 --seed N --keep-activations;\n"
	      "           --model random --ops N\n"
	      "policies: plan (default), none, distance, greedy.  See hyper-plan(1).\n",
	      f);
}

/*
 * A bad option value is one line naming the option, the value and what is
 * accepted; cli_parse() adds the pointer to --help.
 */
static int bad_value(const char *opt, const char *arg, const char *what,
		     const char *use)
{
	fprintf(stderr, "hyper-plan: %s: \"%s\" is not %s%s%s%s\n", opt, arg,
		what, use ? " (" : "", use ? use : "", use ? ")" : "");
	return -1;
}

static int number(const char *opt, const char *arg, uint64_t max,
		  uint64_t *v)
{
	char what[64];

	if (!hyper_plan__parse_u64(arg, v) && *v <= max)
		return 0;
	snprintf(what, sizeof(what), "an integer in 0..%llu",
		 (unsigned long long)max);
	return bad_value(opt, arg, what, NULL);
}

static int set_u32(const char *opt, const char *arg, uint32_t *dst)
{
	uint64_t v;

	if (number(opt, arg, UINT32_MAX, &v))
		return -1;
	*dst = v;
	return 0;
}

static int percent(const char *arg, double *dst)
{
	char *end;
	double v = strtod(arg, &end);

	if (end != arg && !*end && v >= 0 && v <= 1000) {
		*dst = v / 100;
		return 0;
	}
	return bad_value("--slowdown", arg, "a percentage in 0..1000",
			 "use e.g. 5 for 5%");
}

static int size(const char *arg, uint64_t *dst)
{
	if (hu_parse_size(arg, dst))
		return bad_value("--budget", arg, "a size", "use e.g. 2GiB");
	if (!*dst)
		return bad_value("--budget", arg, "a size above 0",
				 "use e.g. 2GiB");
	return 0;
}

static int option(struct cli *c, int o, const char *arg)
{
	uint64_t v;

	switch (o) {
	case 'g': c->graph = arg; return 0;
	case 'm': c->model = arg; return 0;
	case O_CONFIG: c->config = arg; return 0;
	case O_MODE:
		if (strcmp(arg, "infer") && strcmp(arg, "train"))
			return bad_value("--mode", arg, "a mode",
					 "use infer or train");
		c->mode = arg;
		return 0;
	case O_BATCH: return set_u32("--batch", arg, &c->gp.batch);
	case O_SEQ: return set_u32("--seq", arg, &c->gp.seq);
	case O_DECODE: return set_u32("--decode", arg, &c->gp.decode);
	case O_KVB: return set_u32("--kv-block", arg, &c->gp.kv_block);
	case O_LAYERS:
		/* 0 is the generator's "all layers": not something to type. */
		if (!hyper_plan__parse_u64(arg, &v) && v >= 1 && v <= 1024) {
			c->gp.layers = (uint32_t)v;
			return 0;
		}
		return bad_value("--layers", arg, "an integer in 1..1024",
				 "leave --layers out for all the model's layers");
	case O_SCALE: return set_u32("--scale", arg, &c->gp.scale);
	case O_DTYPE:
		if (!strcmp(arg, "bf16"))
			c->gp.dtype_bytes = 2;
		else if (!strcmp(arg, "fp32"))
			c->gp.dtype_bytes = 4;
		else
			return bad_value("--dtype", arg, "a dtype",
					 "use bf16 or fp32");
		return 0;
	case O_OPS: return set_u32("--ops", arg, &c->rp.ops);
	case O_SEED:
		if (number("--seed", arg, UINT64_MAX, &v))
			return -1;
		c->gp.seed = c->rp.seed = v;
		return 0;
	case O_KEEP: c->gp.keep_act = true; return 0;
	case 'p': c->profile = arg; return 0;
	case O_PFILE: c->profile_file = arg; return 0;
	case O_FEEDBACK: c->feedback = arg; return 0;
	case 'b': return size(arg, &c->budget);
	case 's': return percent(arg, &c->max_slow);
	case 'P':
		if (hyper_plan__policy_parse(arg) < 0)
			return bad_value("--policy", arg, "a policy",
					 "use plan, none, distance or greedy");
		c->policy = arg;
		return 0;
	case 'o': c->output = arg; return 0;
	case O_EMIT: c->emit_graph = arg; return 0;
	case O_PLOT: c->plot = arg; return 0;
	case O_TRACE: c->trace = arg; return 0;
	case O_COMPARE: c->compare = true; return 0;
	case O_BOUND: c->bound = true; return 0;
	case O_NOREORDER: c->no_reorder = true; return 0;
	case O_MEASURE: c->action = ACT_MEASURE; return 0;
	case O_COPY:
		for (c->copy_engine = 0; hyper_copy_engine_name(c->copy_engine); c->copy_engine++)
			if (!strcmp(arg, hyper_copy_engine_name(c->copy_engine)))
				return 0;
		fprintf(stderr, "hyper-plan: --copy wants default, uring, sqpoll or worker, not \"%s\"\n",
			arg);
		return -1;
	case O_COPY_CPU:
		if (number("--copy-cpu", arg, INT32_MAX, &v))
			return -1;
		c->copy_cpu = (int)v;
		return 0;
	case O_COMPUTE_CPU:
		if (number("--compute-cpu", arg, INT32_MAX, &v))
			return -1;
		c->compute_cpu = (int)v;
		return 0;
	case O_ALONE: c->alone = true; return 0;
	case O_LMODELS: c->action = ACT_LIST_MODELS; return 0;
	case O_LPROFILES: c->action = ACT_LIST_PROFILES; return 0;
	case O_PASSES: c->action = ACT_PASSES; return 0;
	case O_BENCH: c->action = ACT_BENCH; c->bench_dir = arg; return 0;
	case O_QUICK: c->quick = true; return 0;
	case O_TIMELINE:
		if (c->nr_timelines == ARRAY_SIZE(c->timelines)) {
			fprintf(stderr, "hyper-plan: at most %zu --timeline files\n",
				ARRAY_SIZE(c->timelines));
			return -1;
		}
		c->timelines[c->nr_timelines++] = arg;
		c->action = ACT_RENDER;
		return 0;
	case 'q': c->quiet = true; return 0;
	case 'v': c->verbose = true; return 0;
	case 'h': c->action = ACT_HELP; return 0;
	default: return -1;
	}
}

static int try_help(void)
{
	fputs("Try 'hyper-plan --help'.\n", stderr);
	return -1;
}

int cli_parse(struct cli *c, int argc, char **argv)
{
	int o;

	memset(c, 0, sizeof(*c));
	gen_defaults(&c->gp, NULL);
	c->rp = (struct random_params){ .ops = 1000, .seed = 1 };
	c->profile = "supernode-npu";
	c->policy = "plan";
	c->mode = "infer";
	c->max_slow = 0.01;
	c->copy_engine = -1;
	c->copy_cpu = -1;
	c->compute_cpu = -1;
	/* getopt_long() names an unknown option or a missing value itself. */
	while ((o = getopt_long(argc, argv, "g:m:p:b:s:P:o:qvh", opts, NULL)) != -1)
		if (option(c, o, optarg))
			return try_help();
	if (optind < argc) {
		fprintf(stderr, "hyper-plan: unexpected argument \"%s\"\n",
			argv[optind]);
		return try_help();
	}
	if (c->action == ACT_RENDER && (c->graph || c->model || c->config ||
					(!c->plot && !c->trace))) {
		fprintf(stderr, "hyper-plan: --timeline draws runs: give --plot and/or --trace, and no graph or model\n");
		return try_help();
	}
	if (c->action != ACT_MEASURE && (c->copy_engine >= 0 || c->copy_cpu >= 0 ||
					 c->compute_cpu >= 0 || c->alone)) {
		fprintf(stderr, "hyper-plan: --copy, --copy-cpu, --compute-cpu and --alone go with --measure-profile\n");
		return try_help();
	}
	if (c->action == ACT_PLAN && !!c->graph + !!c->model + !!c->config != 1) {
		fprintf(stderr, "hyper-plan: give exactly one of --graph, --model and --config\n");
		return try_help();
	}
	return 0;
}
