// SPDX-License-Identifier: GPL-2.0
/*
 * Out of memory is an error, never an exit: each allocation a graph's
 * building makes is failed in turn (the graph's hp_mem test hook), and
 * the call that hit it must return -ENOMEM with a message, leave the
 * graph as it was (the same call then succeeds), and leak nothing.  The
 * harness runs each test in a child that leaves by _exit(), past
 * LeakSanitizer's check at exit: each test asks for it itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define leaks()	__lsan_do_recoverable_leak_check()
#else
#define leaks()	0
#endif

#include <hyper/plan.h>

#include "api.h"
#include "plan_cases.h"
#include "profile.h"

#define MIB	(1024ULL * 1024)
/* 2 * LAYERS + 1 tensors: past the id map's first rehash at 512. */
#define LAYERS	300

struct build {
	struct hyper_plan_graph *g;
	unsigned int nomem;	/* -ENOMEM returns seen */
	int bad;		/* any other failure */
};

/* Adds, and once more if memory ran out: the graph must be unchanged. */
static int add_tensor(struct build *b, const char *id, uint64_t bytes,
		      uint32_t kind, uint32_t flags)
{
	struct hyper_plan_tensor t = { .id = id, .bytes = bytes, .kind = kind,
				       .flags = flags };
	int ret = hyper_plan_graph_add_tensor(b->g, &t);

	if (ret == -ENOMEM) {
		b->nomem++;
		if (!strstr(hyper_plan_graph_last_error(b->g), "out of memory"))
			b->bad = 1;
		ret = hyper_plan_graph_add_tensor(b->g, &t);
	}
	if (ret < 0)
		b->bad = 1;
	return ret;
}

static int add_op(struct build *b, const char *id, uint32_t *in,
		  uint32_t *out)
{
	struct hyper_plan_op o = { .id = id, .compute_ns = 2000000,
				   .inputs = in, .nr_inputs = 2,
				   .outputs = out, .nr_outputs = 1 };
	int ret = hyper_plan_graph_add_op(b->g, &o);

	if (ret == -ENOMEM) {
		b->nomem++;
		if (!strstr(hyper_plan_graph_last_error(b->g), "out of memory"))
			b->bad = 1;
		ret = hyper_plan_graph_add_op(b->g, &o);
	}
	if (ret < 0)
		b->bad = 1;
	return ret;
}

/*
 * The chain of plan_api.c, with its @fail_at-th allocation failing (0:
 * none); returns how many allocations it made.
 */
static uint64_t chain(struct build *b, uint64_t fail_at)
{
	uint64_t start = b->g->j.g.mem.nr;
	char id[32];
	int act, w, next;

	b->g->j.g.mem.fail_at = fail_at ? start + fail_at : 0;
	act = add_tensor(b, "x0", MIB, HYPER_KIND_ACTIVATION,
			 HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_IN);
	for (unsigned int i = 0; i < LAYERS && !b->bad; i++) {
		uint32_t in[2], out[1];

		snprintf(id, sizeof(id), "w%u", i);
		w = add_tensor(b, id, 16 * MIB, HYPER_KIND_WEIGHT, 0);
		snprintf(id, sizeof(id), "x%u", i + 1);
		next = add_tensor(b, id, MIB, HYPER_KIND_ACTIVATION, 0);
		in[0] = act;
		in[1] = w;
		out[0] = next;
		snprintf(id, sizeof(id), "layer%u", i);
		if (add_op(b, id, in, out) != (int)i)
			b->bad = 1;
		act = next;
	}
	return b->g->j.g.mem.nr - start;
}

static uint64_t plan_peak(struct __test_metadata *_metadata,
			  struct hyper_plan_graph *g)
{
	struct hyper_plan_opts o = { .profile = "h100-pcie" };
	struct hyper_plan_prediction pr;
	struct hyper_plan *p;
	char err[256];

	EXPECT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) {
		TH_LOG("%s", err);
		return 0;
	}
	EXPECT_EQ(0, hyper_plan_prediction(p, &pr));
	hyper_plan_free(p);
	return pr.peak_device_bytes;
}

TEST(graph_building_fails_cleanly)
{
	struct build ref = { 0 };
	uint64_t total, n, peak;

	ASSERT_EQ(0, hyper_plan_graph_new("chain", &ref.g));
	total = chain(&ref, 0);
	ASSERT_EQ(0, ref.bad);
	ASSERT_EQ(0, ref.nomem);
	/* ids, tensors, ops, refs and the id maps' tables all grew */
	ASSERT_GE(total, 20);
	peak = plan_peak(_metadata, ref.g);
	ASSERT_GT(peak, 0);
	hyper_plan_graph_free(ref.g);

	for (n = 1; n <= total; n++) {
		struct build b = { 0 };

		ASSERT_EQ(0, hyper_plan_graph_new("chain", &b.g));
		chain(&b, n);
		EXPECT_EQ(0, b.bad) TH_LOG("allocation %llu", (unsigned long long)n);
		/* exactly the one injected failure, reported as -ENOMEM */
		EXPECT_EQ(1, b.nomem) TH_LOG("allocation %llu", (unsigned long long)n);
		/* after it, the graph is whole: it plans as the reference does */
		EXPECT_EQ(peak, plan_peak(_metadata, b.g));
		hyper_plan_graph_free(b.g);
	}
	EXPECT_EQ(0, leaks());
	TH_LOG("%llu allocations failed in turn", (unsigned long long)total);
}

/* Ordering and analysing the graph, on its first plan. */
TEST(preparing_fails_cleanly)
{
	struct hyper_plan_opts o = { .profile = "h100-pcie" };
	struct hyper_plan_prediction pr;
	struct build ref = { 0 };
	struct hyper_plan *p;
	uint64_t start, total, n, peak;
	char err[256];

	ASSERT_EQ(0, hyper_plan_graph_new("chain", &ref.g));
	chain(&ref, 0);
	start = ref.g->j.g.mem.nr;
	ASSERT_EQ(0, hyper_plan_run(ref.g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	total = ref.g->j.g.mem.nr - start;
	ASSERT_GE(total, 15);	/* deps, orders, both lifetime analyses */
	ASSERT_EQ(0, hyper_plan_prediction(p, &pr));
	peak = pr.peak_device_bytes;
	hyper_plan_free(p);
	hyper_plan_graph_free(ref.g);

	for (n = 1; n <= total; n++) {
		struct build b = { 0 };

		ASSERT_EQ(0, hyper_plan_graph_new("chain", &b.g));
		chain(&b, 0);
		b.g->j.g.mem.fail_at = b.g->j.g.mem.nr + n;
		p = (void *)1;
		EXPECT_EQ(-ENOMEM, hyper_plan_run(b.g, &o, &p, err, sizeof(err)))
			TH_LOG("allocation %llu: %s", (unsigned long long)n, err);
		EXPECT_EQ(NULL, p);
		EXPECT_NE(NULL, strstr(err, "out of memory"));
		/* the graph is as it was: planning it again works */
		EXPECT_EQ(peak, plan_peak(_metadata, b.g));
		hyper_plan_graph_free(b.g);
	}
	EXPECT_EQ(0, leaks());
	TH_LOG("%llu allocations failed in turn", (unsigned long long)total);
}

static void unprepare(struct job *j)
{
	life_free(&j->lf);
	if (j->has_ref)
		life_free(&j->lf_ref);
	free(j->order);
	free(j->refined);
	j->order = j->refined = NULL;
	j->has_ref = false;
}

/* A training step, whose order the memory-aware refinement changes. */
TEST(preparing_a_refined_order_fails_cleanly)
{
	const struct plan_case c = { .model = "llama2-7b", .mode = "train" };
	uint32_t *order, *refined;
	uint64_t start, total, n, peak0;
	struct hp_err e;
	struct job j;

	ASSERT_EQ(0, case_job(&j, &c, &profile_table[0], &e)) TH_LOG("%s", e.msg);
	ASSERT_TRUE(j.has_ref);
	order = j.order;
	refined = j.refined;
	peak0 = j.lf_ref.peak0;
	j.order = j.refined = NULL;
	life_free(&j.lf);
	life_free(&j.lf_ref);
	j.has_ref = false;
	start = j.g.mem.nr;
	ASSERT_EQ(0, job_prepare(&j, false, &e));
	total = j.g.mem.nr - start;
	unprepare(&j);
	for (n = 1; n <= total; n++) {
		j.g.mem.fail_at = j.g.mem.nr + n;
		EXPECT_EQ(-ENOMEM, job_prepare(&j, false, &e))
			TH_LOG("allocation %llu", (unsigned long long)n);
		EXPECT_STREQ("out of memory", e.msg);
		EXPECT_EQ(NULL, j.order);
		EXPECT_EQ(NULL, j.refined);
		EXPECT_FALSE(j.has_ref);
		/* as it was: the same orders and analysis come out again */
		ASSERT_EQ(0, job_prepare(&j, false, &e));
		ASSERT_TRUE(j.has_ref);
		EXPECT_EQ(0, memcmp(order, j.order, j.g.nop * sizeof(*order)));
		EXPECT_EQ(0, memcmp(refined, j.refined, j.g.nop * sizeof(*order)));
		EXPECT_EQ(peak0, j.lf_ref.peak0);
		unprepare(&j);
	}
	free(order);
	free(refined);
	job_free(&j);
	EXPECT_EQ(0, leaks());
	TH_LOG("%llu allocations failed in turn", (unsigned long long)total);
}

TEST(a_later_error_is_not_reported_as_nomem)
{
	struct hyper_plan_tensor t = { .id = "w", .bytes = MIB,
				       .kind = HYPER_KIND_WEIGHT };
	struct hyper_plan_graph *g;

	ASSERT_EQ(0, hyper_plan_graph_new("g", &g));
	g->j.g.mem.fail_at = g->j.g.mem.nr + 1;	/* the next one */
	EXPECT_EQ(-ENOMEM, hyper_plan_graph_add_tensor(g, &t));
	EXPECT_NE(NULL, strstr(hyper_plan_graph_last_error(g), "out of memory"));
	EXPECT_EQ(0, hyper_plan_graph_add_tensor(g, &t));
	/* a duplicate id is the caller's error, not memory's */
	EXPECT_EQ(-EINVAL, hyper_plan_graph_add_tensor(g, &t));
	EXPECT_NE(NULL, strstr(hyper_plan_graph_last_error(g), "duplicate id"));
	hyper_plan_graph_free(g);
	EXPECT_EQ(0, leaks());
}

TEST_HARNESS_MAIN
