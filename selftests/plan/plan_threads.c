// SPDX-License-Identifier: GPL-2.0
/*
 * Plans of one graph at once, from several threads: each plan runs in a
 * context of its own and only reads the graph, which the first of them
 * prepares.  Built with ThreadSanitizer (selftests/plan/plan.mk), which
 * fails the test on any data race; every concurrent plan must also equal
 * the same plan made alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include <hyper/plan.h>

#include "plan_random.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
/*
 * A race fails the test at once: the harness's test child leaves by
 * _exit(), which skips the exit status ThreadSanitizer sets at exit.
 */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1";
}
#endif
#endif

#define NR_THREADS	8
#define ROUNDS		2

struct task {
	struct hyper_plan_opts o;
	struct hyper_plan_graph *g;
	pthread_barrier_t *start;
	struct hyper_plan_prediction pr;
	int ret;
	char err[256];
};

/* A random graph, written as JSON and read back through the API. */
static struct hyper_plan_graph *load_random(struct __test_metadata *_metadata,
					    uint32_t ops, uint64_t seed)
{
	char path[64];
	struct hyper_plan_graph *g;

	snprintf(path, sizeof(path), "/tmp/hyper-plan-threads-%d.json",
		 (int)getpid());
	g = plan_random(_metadata, path, ops, seed);
	unlink(path);
	return g;
}

static void plan_one(struct task *t)
{
	struct hyper_plan *p;

	t->ret = hyper_plan_run(t->g, &t->o, &p, t->err, sizeof(t->err));
	if (!t->ret) {
		t->ret = hyper_plan_prediction(p, &t->pr);
		hyper_plan_free(p);
	}
}

static void *worker(void *arg)
{
	struct task *t = arg;

	pthread_barrier_wait(t->start);
	plan_one(t);
	return NULL;
}

FIXTURE(threads) {};
FIXTURE_SETUP(threads) {}
FIXTURE_TEARDOWN(threads) {}

/* ThreadSanitizer slows planning down tenfold: time, not a judgement. */
TEST_F_TIMEOUT(threads, plans_of_one_graph_run_at_once, 600)
{
	static const uint32_t pol[] = {
		HYPER_PLAN_POLICY_PLAN, HYPER_PLAN_POLICY_NONE,
		HYPER_PLAN_POLICY_DISTANCE, HYPER_PLAN_POLICY_GREEDY,
	};
	struct task ref[NR_THREADS], run[NR_THREADS];
	struct hyper_plan_graph *alone = load_random(_metadata, 120, 11);
	pthread_t tid[NR_THREADS];
	pthread_barrier_t start;
	uint64_t budget;
	int i, round;

	/* A budget between the planner's lowest peak and no offload. */
	ref[0] = (struct task){ .g = alone, .o = { .profile = "h100-pcie" } };
	plan_one(&ref[0]);
	ASSERT_EQ(0, ref[0].ret) TH_LOG("%s", ref[0].err);
	budget = (ref[0].pr.peak_device_bytes + ref[0].pr.baseline_peak_bytes) / 2;
	/* Each policy, for the lowest peak (with its bound) and at the budget
	 * (no offload: at its own peak). */
	for (i = 0; i < NR_THREADS; i++) {
		ref[i] = (struct task){ .g = alone, .o = {
			.profile = "h100-pcie", .policy = pol[i % 4],
			.budget_bytes = i < 4 ? 0 :
				pol[i % 4] == HYPER_PLAN_POLICY_NONE ?
				ref[0].pr.baseline_peak_bytes : budget,
			.flags = i < 4 ? HYPER_PLAN_BOUND : 0 } };
		plan_one(&ref[i]);
		ASSERT_EQ(0, ref[i].ret) TH_LOG("plan %d: %s", i, ref[i].err);
	}
	for (round = 0; round < ROUNDS; round++) {
		/* a fresh graph: the threads race to prepare it, too */
		struct hyper_plan_graph *g = load_random(_metadata, 120, 11);

		ASSERT_EQ(0, pthread_barrier_init(&start, NULL, NR_THREADS));
		for (i = 0; i < NR_THREADS; i++) {
			run[i] = ref[i];
			run[i].g = g;
			run[i].start = &start;
			memset(&run[i].pr, 0, sizeof(run[i].pr));
			ASSERT_EQ(0, pthread_create(&tid[i], NULL, worker, &run[i]));
		}
		for (i = 0; i < NR_THREADS; i++)
			ASSERT_EQ(0, pthread_join(tid[i], NULL));
		pthread_barrier_destroy(&start);
		/* the graph is released while no plan holds it */
		hyper_plan_graph_free(g);
		for (i = 0; i < NR_THREADS; i++) {
			EXPECT_EQ(0, run[i].ret) TH_LOG("plan %d: %s", i, run[i].err);
			EXPECT_TRUE(plan_same(&ref[i].pr, &run[i].pr))
				TH_LOG("round %d, plan %d differs from the same plan made alone",
				       round, i);
		}
	}
	hyper_plan_graph_free(alone);
}

/* Plans outlive their graph handle: the last one frees it. */
TEST(plans_hold_the_graph)
{
	struct hyper_plan_graph *g = load_random(_metadata, 80, 3);
	struct hyper_plan_opts o = { .profile = "h100-pcie" };
	struct hyper_plan *p[4];
	struct hyper_plan_prediction pr;
	char err[256];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, hyper_plan_run(g, &o, &p[i], err, sizeof(err)))
			TH_LOG("%s", err);
	hyper_plan_graph_free(g);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, hyper_plan_prediction(p[i], &pr));
		EXPECT_GT(pr.peak_device_bytes, 0);
		hyper_plan_free(p[i]);
	}
}

TEST_HARNESS_MAIN
