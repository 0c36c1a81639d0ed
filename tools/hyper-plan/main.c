// SPDX-License-Identifier: GPL-2.0
/*
 * hyper-plan: graph → transfer schedule.  Exit status 0 on success, 1 on
 * bad input (the message names the operator or tensor), 2 on bad usage.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "feedback/feedback.h"
#include "graph/graph_json.h"
#include "out/output.h"
#include "picture/picture.h"
#include "passes/pipeline.h"
#include "report.h"

static int die(const struct hp_err *e)
{
	fprintf(stderr, "hyper-plan: %s\n", e->msg);
	return 1;
}

static FILE *open_out(const char *path, struct hp_err *e)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		hyper_plan__errf(e, "%s: %s", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path, struct hp_err *e)
{
	if (f == stdout)
		return fflush(f) ? hyper_plan__errf(e, "%s: write error", path) : 0;
	return fclose(f) ? hyper_plan__errf(e, "%s: write error", path) : 0;
}

static int set_name(struct job *j, const char *name, struct hp_err *e)
{
	char *s = hyper_plan__strdup(&j->g.mem, name);

	if (!s)
		return hyper_plan__nomem(e);
	free(j->g.name);
	j->g.name = s;
	return 0;
}

static int load_graph(const struct cli *c, struct job *j, struct hp_err *e)
{
	struct gen_params gp = c->gp;
	char name[200], names[MODEL_NAMES_LEN];
	struct model cfg;

	if (c->graph) {
		struct hyper_plan__pipe pp = {
			.j = j, .time_on = &j->p, .verbose = j->verbose,
			.have = HP_PIPELINE_INPUTS,
		};

		/* the pipeline's first pass, before --feedback's times */
		return hyper_plan__graph_load_json(&j->g, c->graph, e) ||
		       hyper_plan__pipeline_run(&pp, HP_PASS_RETIME,
						HP_PASS_RETIME, e) ? -1 : 0;
	}
	if (c->model && !strcmp(c->model, "random")) {
		snprintf(name, sizeof(name), "random ops=%u seed=%llu",
			 c->rp.ops, (unsigned long long)c->rp.seed);
		return set_name(j, name, e) ? -1 : gen_random(&j->g, &c->rp, e);
	}
	if (c->config) {
		if (model_from_config(c->config, &cfg, names, sizeof(names), e))
			return -1;
	} else {
		if (model_load(c->model, &cfg, names, sizeof(names), e))
			return -1;
	}
	if (c->verbose && cfg.ignored[0])
		fprintf(stderr, "hyper-plan: %s: ignored, no effect on memory or compute: %s\n",
			c->config ? c->config : cfg.name, cfg.ignored);
	gp.m = &cfg;
	if (!strcmp(c->mode, "train"))
		gp.mode = GEN_TRAIN;
	else if (strcmp(c->mode, "infer"))
		return hyper_plan__errf(e, "unknown mode \"%.32s\" (infer, train)", c->mode);
	gen_graph_name(name, sizeof(name), &gp);
	return set_name(j, name, e) ? -1 : gen_model(&j->g, &gp, &j->p, e);
}

/* --feedback: the run's measured times replace the model's. */
static int feedback(const struct cli *c, struct job *j, struct hp_err *e)
{
	struct feedback_stats st;

	if (graph_feedback(&j->g, &j->p, c->feedback, &st, e))
		return -1;
	if (!c->quiet)
		fprintf(c->output && !strcmp(c->output, "-") ? stderr : stdout,
			"feedback from %s: %zu operators timed; link from %zu prefetches and %zu stores: %.2f / %.2f GB/s, %.0f ns\n",
			c->feedback, st.ops_timed, st.xfers[0], st.xfers[1],
			j->p.h2d_bps / 1e9, j->p.d2h_bps / 1e9, j->p.latency_ns);
	return 0;
}

static int write_file(const char *path, const struct job *j,
		      const struct result *res, int pol, uint64_t bound,
		      const struct cli *c, struct hp_err *e);

static int outputs(const struct cli *c, const struct job *j,
		   struct result *res, int pol, uint64_t bound,
		   struct hp_err *e)
{
	if (c->output && write_file(c->output, j, res, pol, bound, c, e))
		return -1;
	if (c->trace && write_file(c->trace, j, res, -1, bound, c, e))
		return -1;
	if (c->plot && write_file(c->plot, j, res, -2, bound, c, e))
		return -1;
	return 0;
}

static int write_plot(FILE *f, const struct job *j, const struct result *res,
		      uint64_t bound, struct hp_err *e)
{
	struct series sr[POL_NR];
	size_t n = 0, i;
	char title[300];
	int p, ret = 0;

	for (p = POL_PLAN; ; p = (p + 1) % POL_NR) {
		if (res[p].ok && !ret)
			ret = series_record(&sr[n++], hyper_plan__policy_name[p], &res[p].s,
					    &j->p, e);
		if (p == POL_NONE)
			break;
	}
	snprintf(title, sizeof(title), "%s on %s: device memory, each policy at its best",
		 j->g.name, j->p.name);
	if (!ret)
		plot_svg(f, title, sr, n, bound);
	for (i = 0; i < n; i++)
		series_free(&sr[i]);
	return ret;
}

static int write_file(const char *path, const struct job *j,
		      const struct result *res, int pol, uint64_t bound,
		      const struct cli *c, struct hp_err *e)
{
	FILE *f = open_out(path, e);
	char extra[400];
	int ret = 0;

	if (!f)
		return -1;
	if (pol == -2) {
		ret = write_plot(f, j, res, bound, e);
	} else if (pol == -1) {
		ret = trace_json(f, &res[hyper_plan__policy_parse(c->policy)].s, &j->p, e);
	} else {
		hyper_plan__plan_note(extra, sizeof(extra), hyper_plan__policy_name[pol], &j->p,
			  res[pol].params);
		hyper_plan__sched_write_json(&res[pol].s, f, j->g.name, extra);
	}
	return close_out(f, path, e) || ret ? -1 : 0;
}

/* The pipeline (passes/pipeline.c), each policy through its plan passes. */
static int plan(const struct cli *c, struct job *j, struct hp_err *e)
{
	struct result res[POL_NR] = { 0 };
	struct goal gl = { c->max_slow, c->budget };
	FILE *rep = c->output && !strcmp(c->output, "-") ? stderr : stdout;
	int pol = hyper_plan__policy_parse(c->policy), p, ret = 0;
	bool all = c->compare || c->plot;
	struct hyper_plan__pipe pp;
	struct problem pb;

	if (pol < 0)
		return hyper_plan__errf(e, "unknown policy \"%.32s\" (plan, none, distance, greedy)",
			       c->policy);
	if (hyper_plan__job_prepare(j, c->no_reorder, e))
		return -1;
	/* nothing looks an id up from here on: the maps' memory goes back */
	hyper_plan__graph_drop_ids(&j->g);
	hyper_plan__job_problem(j, &pb, &gl, &j->g.mem);
	/* the planner's floor runs each baseline its own row runs again */
	j->memo.rows = all;
	pp = (struct hyper_plan__pipe){
		.j = j, .pb = &pb, .want_bound = c->bound || all,
		.verbose = j->verbose, .have = j->have,
	};
	if (hyper_plan__pipeline_run(&pp, HP_PASS_GOAL, HP_PASS_GOAL, e))
		return -1;
	if (!c->quiet)
		report_header(rep, j);
	for (p = 0; p < POL_NR && !ret; p++) {
		struct hyper_plan__pipe one = pp;
		struct hp_err pe;

		if (p != pol && !all)
			continue;
		one.pol = p;
		one.r = &res[p];
		/* one nothing reads the layout of but the validator */
		one.printed_only = hyper_plan__row_printed_only(p, pol,
								c->plot != NULL,
								c->budget);
		/* Every schedule printed or written passes libhyper's validator. */
		ret = hyper_plan__pipeline_run(&one, HP_PASS_SELECT,
					       HP_PASS_VALIDATE,
					       p == pol ? e : &pe);
		/* laid out, by the planner's placement, and validated */
		if (!ret && all && !one.printed_only)
			j->memo.row[p] = &res[p];
		if (ret && p != pol && ret != -ENOMEM) {
			fprintf(stderr, "hyper-plan: %s\n", pe.msg);
			ret = 0;
		}
		if (!c->quiet)
			report_row(rep, &res[p], j->lf.peak0);
	}
	if (!ret && !c->quiet && res[pol].ok)
		report_arena(rep, &res[pol]);
	if (!ret) {
		ret = hyper_plan__pipeline_run(&pp, HP_PASS_BOUND, HP_PASS_BOUND, e);
		if (!ret && (pp.have & HP_F_BOUND) && !c->quiet)
			report_bound(rep, pp.bound, j->lf.peak0, c->max_slow);
	}
	if (!ret)
		ret = outputs(c, j, res, pol, pp.bound, e);
	memset(j->memo.row, 0, sizeof(j->memo.row));
	for (p = 0; p < POL_NR; p++)
		hyper_plan__result_free(&res[p]);
	return ret;
}

static int measure(const struct cli *c, struct hp_err *e)
{
	struct hyper_copy_opts copy = { 0 };
	struct hyper_plan_measure_opts mo = { 0 };
	char path[512];
	struct profile p;
	uint32_t engine;

	/* As hyper-run's --copy and --copy-cpus set the run's copy path. */
	if (c->copy_engine >= 0 || c->copy_cpu >= 0) {
		copy.engine = c->copy_engine >= 0 ? (uint32_t)c->copy_engine :
			      HYPER_COPY_WORKER;
		if (copy.engine == HYPER_COPY_WORKER)
			copy.nr_workers = 1;
		if (c->copy_cpu >= 0) {
			copy.nr_cpus = 1;
			copy.cpus = &c->copy_cpu;
		}
		mo.copy = &copy;
	}
	if (c->compute_cpu >= 0) {
		mo.nr_compute_cpus = 1;
		mo.compute_cpus = &c->compute_cpu;
	}
	if (c->alone)
		mo.flags |= HYPER_PLAN_MEASURE_ALONE;
	if (hyper_plan__profile_measure(&mo, &p, &engine, e))
		return -1;
	if (c->output && !strcmp(c->output, "-")) {
		snprintf(path, sizeof(path), "/dev/stdout");
		return hyper_plan__profile_save(&p, path, e);
	}
	/* Not one snprintf: the default path is built in the same buffer. */
	if (c->output)
		snprintf(path, sizeof(path), "%s", c->output);
	else
		hyper_plan__profile_default_path(path, sizeof(path));
	if (hyper_plan__profile_save(&p, path, e))
		return -1;
	printf("%s: memory %.1f GiB, %.1f GB/s; SGEMM %.1f GFLOP/s; link (%s engine) %.1f / %.1f GB/s, %.0f ns %s; alone %.1f / %.1f GB/s, %.0f ns; saved to %s\n",
	       p.name, p.device_bytes / GIB, p.mem_bps / 1e9, p.flops / 1e9,
	       hyper_copy_engine_name(engine), p.h2d_bps / 1e9, p.d2h_bps / 1e9,
	       p.latency_ns, c->alone ? "alone" : "with SGEMM running",
	       p.h2d_alone_bps / 1e9, p.d2h_alone_bps / 1e9, p.latency_alone_ns,
	       path);
	return 0;
}

/* --list-models: the shipped configs, each read as -m would read it. */
static int list_models(struct hp_err *e)
{
	char names[MODEL_NAMES_LEN], **list;
	struct model m;
	int n, i;

	n = model_list(&list, e);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (model_load(list[i], &m, names, sizeof(names), e)) {
			model_list_free(list);
			return -1;
		}
		printf("%-18s %s\n", m.name, m.desc);
	}
	model_list_free(list);
	printf("%-18s random graphs for tests (--ops, --seed)\n", "random");
	return 0;
}

static void list_profiles(void)
{
	unsigned int i;

	for (i = 0; i < hyper_plan__profile_table_len; i++)
		printf("%-14s %s\n", hyper_plan__profile_table[i].name, hyper_plan__profile_table[i].desc);
	printf("%-14s measured with --measure-profile\n", THIS_MACHINE);
}

/*
 * --bench and --timeline live in their own tools (bench-plan,
 * hyper-timeline), installed next to this one; the options stay for
 * compatibility and run them.
 */
static int run_sibling(const struct cli *c, struct hp_err *e)
{
	char self[PATH_MAX], *slash, *argv[2 * RENDER_MAX + 8];
	const char *tool = c->action == ACT_BENCH ? "bench-plan" : "hyper-timeline";
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	unsigned int a = 1, i;

	if (n < 0)
		return hyper_plan__errf(e, "/proc/self/exe: %s", strerror(errno));
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash || (size_t)(slash + 1 - self) + strlen(tool) >= sizeof(self))
		return hyper_plan__errf(e, "cannot locate %s next to %s", tool, self);
	strcpy(slash + 1, tool);
	argv[0] = self;
	if (c->action == ACT_BENCH) {
		argv[a++] = (char *)c->bench_dir;
		if (c->quick)
			argv[a++] = (char *)"--quick";
	} else {
		if (c->plot) {
			argv[a++] = (char *)"--plot";
			argv[a++] = (char *)c->plot;
		}
		if (c->trace) {
			argv[a++] = (char *)"--trace";
			argv[a++] = (char *)c->trace;
		}
		for (i = 0; i < c->nr_timelines; i++)
			argv[a++] = (char *)c->timelines[i];
	}
	argv[a] = NULL;
	fflush(NULL);
	execv(self, argv);
	return hyper_plan__errf(e, "%s: %s (it is installed with hyper-plan)", self,
		       strerror(errno));
}

int main(int argc, char **argv)
{
	struct hp_err e = { "" };
	struct job j = { 0 };
	struct cli c;
	int ret;

	if (cli_parse(&c, argc, argv))
		return 2;
	/*
	 * Each probe of the search allocates and frees arrays of the graph's
	 * size; above glibc's mmap threshold each comes back from the kernel
	 * zeroed, page by page: a fifth of the CPU time on big graphs.  Kept
	 * in the heap instead (the process's own choice, not the library's).
	 */
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	switch (c.action) {
	case ACT_HELP:
		cli_usage(stdout);
		return 0;
	case ACT_LIST_MODELS:
		return list_models(&e) ? die(&e) : 0;
	case ACT_LIST_PROFILES:
		list_profiles();
		return 0;
	case ACT_PASSES:
		hyper_plan__pipeline_print(stdout);
		return 0;
	case ACT_MEASURE:
		return measure(&c, &e) ? die(&e) : 0;
	case ACT_BENCH:
	case ACT_RENDER:
		return run_sibling(&c, &e) ? die(&e) : 0;
	default:
		break;
	}
	j.verbose = c.verbose ? stderr : NULL;
	ret = hyper_plan__graph_init(&j.g, c.graph ? c.graph : c.model ? c.model : c.config);
	if (ret)
		ret = hyper_plan__nomem(&e);
	else
		ret = c.profile_file ? hyper_plan__profile_load(c.profile_file, &j.p, &e) :
		      hyper_plan__profile_get(c.profile, &j.p, &e);
	if (!ret)
		ret = load_graph(&c, &j, &e);
	if (!ret && c.feedback)
		ret = feedback(&c, &j, &e);
	if (!ret && c.emit_graph) {
		FILE *f = open_out(c.emit_graph, &e);

		ret = f ? 0 : -1;
		if (f) {
			hyper_plan__graph_write_json(&j.g, f);
			ret = close_out(f, c.emit_graph, &e);
		}
	}
	if (!ret)
		ret = plan(&c, &j, &e);
	hyper_plan__job_free(&j);
	return ret ? die(&e) : 0;
}
