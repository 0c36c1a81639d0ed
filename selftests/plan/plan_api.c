// SPDX-License-Identifier: GPL-2.0
/*
 * The library's API (<hyper/plan.h>): a graph built in memory and one
 * read from JSON are planned, predicted, handed to libhyper as a struct
 * hyper_schedule and written as JSON that libhyper loads back; misuse
 * gets -errno and a message; and a plan libhyper's validator refuses is
 * caught in-process (the plan is corrupted on purpose).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include <hyper/plan.h>

#include "api/api.h"
#include "graph/graph_json.h"
#include "gen/model.h"
#include "out/output.h"
#include "plan_chain.h"

TEST(build_plan_hand_over)
{
	struct hyper_plan_opts o = { .profile = "h100-pcie",
				     .flags = HYPER_PLAN_BOUND };
	struct hyper_plan_graph *g = plan_chain(_metadata, 24, 0);
	struct hyper_schedule_info info;
	struct hyper_plan_prediction pr;
	struct hyper_schedule *s, *again;
	struct hyper_plan *p;
	char err[256], path[] = "/tmp/hyper-plan-api-XXXXXX";
	int fd;

	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	/* The plan holds the graph: the caller may drop it now. */
	hyper_plan_graph_free(g);
	ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
	/* All weights (live in and out) and two activations at a time. */
	EXPECT_EQ(24 * 16 * MIB + 2 * MIB, pr.baseline_peak_bytes);
	EXPECT_LT(pr.peak_device_bytes, pr.baseline_peak_bytes / 4);
	EXPECT_LE(pr.bound_bytes, pr.peak_device_bytes);
	EXPECT_GT(pr.bound_bytes, 0);
	EXPECT_LE(pr.slowdown, 0.01 + 1e-9);
	EXPECT_EQ(24 * 2000000ULL, pr.compute_ns);

	ASSERT_EQ(0, hyper_plan_schedule(p, &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_EQ(24, info.nr_steps);
	EXPECT_EQ(49, info.nr_tensors);
	EXPECT_EQ(pr.peak_device_bytes, info.pred_peak_device_bytes);
	/* libhyper's own replay agrees with the planner's simulator. */
	EXPECT_EQ(pr.peak_device_bytes, info.peak_device_bytes);
	EXPECT_STREQ("chain", info.name);
	/*
	 * Built once: the schedule handed out is the one validated when the
	 * plan was made, each call another reference to it.
	 */
	ASSERT_EQ(0, hyper_plan_schedule(p, &again, err, sizeof(err)));
	EXPECT_EQ(s, again);
	EXPECT_EQ(p->hs, again);
	hyper_schedule_free(again);
	hyper_schedule_free(s);

	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, hyper_plan_write_json(p, path, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_load(path, &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_EQ(24, info.nr_steps);
	EXPECT_EQ(pr.peak_device_bytes, info.peak_device_bytes);
	hyper_schedule_free(s);
	unlink(path);
	hyper_plan_free(p);
}

TEST(budget_and_baselines)
{
	struct hyper_plan_opts o = { .budget_bytes = 64 * MIB };
	struct hyper_plan_graph *g = plan_chain(_metadata, 12, 0);
	struct hyper_plan_prediction pr;
	struct hyper_plan *p;
	char err[256];
	uint32_t pol;

	for (pol = HYPER_PLAN_POLICY_PLAN; pol <= HYPER_PLAN_POLICY_GREEDY; pol++) {
		if (pol == HYPER_PLAN_POLICY_NONE)
			continue;
		o.policy = pol;
		ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err)))
			TH_LOG("policy %u: %s", pol, err);
		ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
		EXPECT_LE(pr.peak_device_bytes, 64 * MIB);
		hyper_plan_free(p);
	}
	/* Below the working set: refused with the operator's name. */
	o.policy = HYPER_PLAN_POLICY_PLAN;
	o.budget_bytes = 4 * MIB;
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, &o, &p, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is below the working set of op \"layer0\""))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, p);
	hyper_plan_graph_free(g);
}

TEST(misuse)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 2, 0);
	struct hyper_plan_opts o = { .reserved[2] = 1 };
	struct hyper_plan *p;
	char err[256];
	uint32_t bad = 99;

	EXPECT_EQ(-EINVAL, hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "k", .bytes = 1, .kind = 9 }));
	EXPECT_NE(NULL, strstr(hyper_plan_graph_last_error(g), "kind 9 unknown"));
	EXPECT_EQ(-EINVAL, hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "w0", .bytes = 1, .kind = HYPER_KIND_WEIGHT }));
	EXPECT_NE(NULL, strstr(hyper_plan_graph_last_error(g), "duplicate id \"w0\""));
	EXPECT_EQ(-EINVAL, hyper_plan_graph_add_op(g, &(struct hyper_plan_op){
		.id = "o", .inputs = &bad, .nr_inputs = 1 }));
	EXPECT_NE(NULL, strstr(hyper_plan_graph_last_error(g), "bad tensor index"));
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, &o, &p, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_opts: reserved fields must be zero", err);
	o = (struct hyper_plan_opts){ .profile = "no-such-profile" };
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, &o, &p, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "no-such-profile"));
	ASSERT_EQ(0, hyper_plan_run(g, NULL, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-EBUSY, hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "late", .bytes = 1, .kind = HYPER_KIND_WEIGHT }));
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
	/* no operators: refused, then planned once one is added */
	ASSERT_EQ(0, hyper_plan_graph_new("empty", &g));
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, NULL, &p, err, sizeof(err)));
	EXPECT_STREQ("graph: no operators", err);
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, NULL, &p, err, sizeof(err)));
	EXPECT_EQ(0, hyper_plan_graph_add_op(g, &(struct hyper_plan_op){ .id = "nop" }));
	ASSERT_EQ(0, hyper_plan_run(g, NULL, &p, err, sizeof(err))) TH_LOG("%s", err);
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
	EXPECT_EQ(-EINVAL, hyper_plan_graph_load("/nonexistent.json", &g, err,
						 sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "/nonexistent.json"));
}

/* hyper_plan_profile_measure(): what a caller can get wrong, word for word. */
TEST(profile_measure_misuse)
{
	struct hyper_plan_measure_opts o = { 0 };
	struct hyper_plan_profile prof;
	struct hyper_copy_opts copy = { .engine = HYPER_COPY_WORKER,
					.nr_workers = 1, .nr_cpus = 1 };
	char err[512];
	int cpu;

	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(NULL, NULL, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_profile_measure: prof is NULL: pass a struct hyper_plan_profile to fill", err);
	/* NULL err, or no room in it: still -EINVAL, nothing written. */
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(NULL, NULL, NULL, 0));
	err[0] = 'x';
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(NULL, NULL, err, 0));
	EXPECT_EQ('x', err[0]);

	o.reserved[5] = 1;
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: reserved fields must be zero", err);
	o = (struct hyper_plan_measure_opts){ .flags = 1U << 7 };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: unknown flags 0x80", err);

	/* Sizes: 0 is the default; others a multiple of 4 KiB in 4 KiB..1 GiB. */
	o = (struct hyper_plan_measure_opts){ .link_bytes = 100 };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: link_bytes 100: give a multiple of 4 KiB from 4 KiB to 1 GiB, or 0 for 16 MiB", err);
	o.link_bytes = (1ULL << 30) + 4096;
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: link_bytes 1073745920: give a multiple of 4 KiB from 4 KiB to 1 GiB, or 0 for 16 MiB", err);
	o = (struct hyper_plan_measure_opts){ .runs = 102 };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: runs 102: give 1 to 101, or 0 for 7", err);

	/* CPUs: a count without an array, an array without a count, bad ones. */
	o = (struct hyper_plan_measure_opts){ .nr_compute_cpus = 2 };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: 2 compute CPUs given, but no array of them", err);
	cpu = 0;
	o = (struct hyper_plan_measure_opts){ .compute_cpus = &cpu };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_measure_opts: compute_cpus given with nr_compute_cpus 0: set how many", err);
	cpu = -1;
	o.nr_compute_cpus = 1;
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "hyper_plan_measure_opts: compute CPU -1 is not one this process may run on (this machine has CPUs 0 to ")) TH_LOG("%s", err);
	cpu = 1 << 20;
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "compute CPU 1048576 is not one this process may run on")) TH_LOG("%s", err);
	/* The copy path's own checks are libhyper's, named as such. */
	cpu = 1 << 20;
	copy.cpus = &cpu;
	o = (struct hyper_plan_measure_opts){ .copy = &copy };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "measuring the link: the copy engine (hyper_copy_opts): copy CPU 1048576 is not one this process may run on")) TH_LOG("%s", err);
	copy = (struct hyper_copy_opts){ .engine = HYPER_COPY_WORKER };
	EXPECT_EQ(-EINVAL, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "0 copy workers: give 1 to ")) TH_LOG("%s", err);
}

/*
 * A small measurement through each shmem engine: every figure positive,
 * the engine named.  Correctness only: the values are the host's.
 */
TEST(profile_measure_runs)
{
	static const uint32_t engines[] = { HYPER_COPY_DEFAULT, HYPER_COPY_URING,
					    HYPER_COPY_WORKER };
	struct hyper_plan_profile prof;
	char err[512];
	int cpu = 0;

	for (unsigned int i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		struct hyper_copy_opts copy = { .engine = engines[i],
			.nr_workers = engines[i] == HYPER_COPY_WORKER };
		struct hyper_plan_measure_opts o = {
			.copy = engines[i] ? &copy : NULL, .link_bytes = 1 << 20,
			.runs = 3, .compute_cpus = &cpu, .nr_compute_cpus = 1,
			.flags = i == 1 ? HYPER_PLAN_MEASURE_ALONE : 0 };

		memset(&prof, 0xff, sizeof(prof));
		ASSERT_EQ(0, hyper_plan_profile_measure(&o, &prof, err, sizeof(err)))
			TH_LOG("%s", err);
		EXPECT_STREQ("this-machine", prof.name);
		EXPECT_NE(NULL, strstr(prof.desc, hyper_copy_engine_name(
			engines[i] ? engines[i] : HYPER_COPY_WORKER))) TH_LOG("%s", prof.desc);
		EXPECT_EQ(engines[i] ? engines[i] : HYPER_COPY_WORKER, prof.engine);
		EXPECT_LT(0, prof.device_bytes);
		EXPECT_LT(0, prof.mem_bytes_per_s);
		EXPECT_LT(0, prof.flops);
		EXPECT_LT(0, prof.h2d_bytes_per_s);
		EXPECT_LT(0, prof.d2h_bytes_per_s);
		EXPECT_LE(0, prof.latency_ns);
		EXPECT_LT(0, prof.h2d_alone_bytes_per_s);
		EXPECT_LT(0, prof.d2h_alone_bytes_per_s);
		EXPECT_EQ(0, prof.reserved0);
		if (o.flags & HYPER_PLAN_MEASURE_ALONE) {
			/* Alone, the two are one measurement. */
			EXPECT_EQ(prof.h2d_alone_bytes_per_s, prof.h2d_bytes_per_s);
			EXPECT_EQ(prof.d2h_alone_bytes_per_s, prof.d2h_bytes_per_s);
			EXPECT_NE(NULL, strstr(prof.desc, "alone"));
		} else {
			EXPECT_NE(NULL, strstr(prof.desc, "with SGEMM running"));
		}
	}
}

/* A generated model through graph JSON, as a framework would hand it. */
TEST(load_json)
{
	struct hyper_plan_opts o = { .flags = HYPER_PLAN_SLOWDOWN,
				     .max_slowdown = 0.05 };
	char path[] = "/tmp/hyper-plan-api-XXXXXX", err[256];
	struct hyper_plan_prediction pr;
	struct hyper_plan_graph *g;
	struct random_params rp = { 400, 7 };
	struct hp_err e;
	struct hyper_plan *p;
	struct graph gr;
	FILE *f;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	f = fdopen(fd, "w");
	hyper_plan__graph_init(&gr, "random");
	ASSERT_EQ(0, gen_random(&gr, &rp, &e));
	hyper_plan__graph_write_json(&gr, f);
	fclose(f);
	hyper_plan__graph_free(&gr);
	ASSERT_EQ(0, hyper_plan_graph_load(path, &g, err, sizeof(err))) TH_LOG("%s", err);
	unlink(path);
	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
	EXPECT_LE(pr.slowdown, 0.05 + 1e-9);
	EXPECT_LE(pr.peak_device_bytes, pr.baseline_peak_bytes);
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
}

/*
 * The planner's output goes through libhyper's validator in-process: a
 * plan whose first prefetch is lost is caught, naming libhyper's rule.
 */
TEST(bad_plan_is_caught)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 8, 0);
	struct hyper_plan_opts o = { .budget_bytes = 40 * MIB };
	struct hyper_plan *p;
	struct hp_err e = { "" };
	char err[256];
	size_t i;

	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_plan__sched_check(&p->res.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
	for (i = 0; i < p->res.s.ncops; i++)
		if (p->res.s.cops[i].kind == HYPER_OP_PREFETCH)
			break;
	ASSERT_LT(i, p->res.s.ncops);
	p->res.s.cops[i].kind = HYPER_OP_DETACH;
	EXPECT_EQ(-EINVAL, hyper_plan__sched_check(&p->res.s, &(struct hp_mem){ 0 }, &e));
	EXPECT_NE(NULL, strstr(e.msg, "internal error: libhyper's validator refuses the plan"))
		TH_LOG("%s", e.msg);
	TH_LOG("caught: %s", e.msg);
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
}

/*
 * A flag the caller does not set comes from the kind, one at a time, as
 * for a graph file's tensor that has one of live_in/live_out.
 */
TEST(live_flags_per_key)
{
	static const struct {
		uint32_t kind, flags;
		uint8_t want;
	} c[] = {
		{ HYPER_KIND_KV, 0, TF_LIVE_OUT },
		{ HYPER_KIND_KV, HYPER_PLAN_LIVE_IN_SET | HYPER_PLAN_LIVE_IN,
		  TF_LIVE_IN | TF_LIVE_OUT },
		{ HYPER_KIND_WEIGHT, HYPER_PLAN_LIVE_OUT_SET, TF_LIVE_IN },
		{ HYPER_KIND_WEIGHT, HYPER_PLAN_LIVE_IN_SET | HYPER_PLAN_PIN,
		  TF_LIVE_OUT | TF_PIN },
		{ HYPER_KIND_ACTIVATION, HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_OUT,
		  TF_LIVE_OUT },
		{ HYPER_KIND_WEIGHT, HYPER_PLAN_EXPLICIT, 0 },
	};
	struct hyper_plan_graph *g;
	char id[16];
	int idx;

	ASSERT_EQ(0, hyper_plan_graph_new("flags", &g));
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(id, sizeof(id), "t%u", i);
		idx = hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
			.id = id, .bytes = MIB, .kind = c[i].kind,
			.flags = c[i].flags });
		ASSERT_EQ((int)i, idx) TH_LOG("%s", hyper_plan_graph_last_error(g));
		EXPECT_EQ(c[i].want, g->j.g.t[i].flags) TH_LOG("case %u", i);
	}
	hyper_plan_graph_free(g);
}

/* A NULL argument: -EINVAL, and the message names it and what to pass. */
TEST(null_arguments_are_named)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 2, 0);
	struct hyper_plan_graph *lg = (void *)1;
	struct hyper_schedule *hs;
	struct hyper_plan *p = (void *)1;
	char err[256];

	EXPECT_EQ(-EINVAL, hyper_plan_run(NULL, NULL, &p, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_run: graph is NULL: pass a graph from hyper_plan_graph_new() or hyper_plan_graph_load()", err);
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(-EINVAL, hyper_plan_run(g, NULL, NULL, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_run: planp is NULL: pass a struct hyper_plan * to fill", err);
	EXPECT_EQ(-EINVAL, hyper_plan_graph_load(NULL, &lg, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_graph_load: path is NULL: pass the graph's JSON file", err);
	EXPECT_EQ(NULL, lg);
	EXPECT_EQ(-EINVAL, hyper_plan_graph_load("x.json", NULL, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_graph_load: graphp is NULL: pass a struct hyper_plan_graph * to fill", err);
	ASSERT_EQ(0, hyper_plan_run(g, NULL, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, hyper_plan_schedule(NULL, &hs, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_schedule: plan is NULL: pass a plan from hyper_plan_run()", err);
	EXPECT_EQ(-EINVAL, hyper_plan_schedule(p, NULL, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_schedule: schedp is NULL: pass a struct hyper_schedule * to fill", err);
	EXPECT_EQ(-EINVAL, hyper_plan_write_json(NULL, "x.json", err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_write_json: plan is NULL: pass a plan from hyper_plan_run()", err);
	EXPECT_EQ(-EINVAL, hyper_plan_write_json(p, NULL, err, sizeof(err)));
	EXPECT_STREQ("hyper_plan_write_json: path is NULL: pass the file to write", err);
	/* no room for the message: still -EINVAL, nothing written */
	err[0] = 'x';
	EXPECT_EQ(-EINVAL, hyper_plan_write_json(p, NULL, err, 0));
	EXPECT_EQ('x', err[0]);
	EXPECT_EQ(-EINVAL, hyper_plan_write_json(p, NULL, NULL, 0));
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
}

TEST_HARNESS_MAIN
