// SPDX-License-Identifier: GPL-2.0
/*
 * Out of memory is an error, never an exit: each allocation a graph's
 * building makes is failed in turn (the graph's hp_mem test hook), and
 * the call that hit it must return -ENOMEM with a message, leave the
 * graph as it was (the same call then succeeds), and leak nothing.  The
 * same for each plan, through its own hp_mem (hyper_plan__plan_run()): the search,
 * every policy, the simulator, the arena, the bound and the hand-over to
 * libhyper; and for the JSON reader (hyper_plan__graph_load_json()).  The harness
 * runs each test in a child that leaves by _exit(), past LeakSanitizer's
 * check at exit: each test asks for it itself.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define leaks()	__lsan_do_recoverable_leak_check()
#else
#define leaks()	0
#endif

#include <hyper/plan.h>

#include "api/api.h"
#include "graph/graph_json.h"
#include "plan_cases.h"
#include "plan_random.h"
#include "profile/profile.h"
#include "util/huge.h"

#define MIB	(1024ULL * 1024)
/* 2 * LAYERS + 1 tensors: past the id map's first rehash at 512. */
#define LAYERS	300

struct build {
	struct hyper_plan_graph *g;
	unsigned int nomem;	/* -ENOMEM returns seen */
	int bad;		/* any other failure */
};

/*
 * Counts an -ENOMEM, whose message must say so: true when the call is to
 * be made once more (the graph must be unchanged by the failed one).
 */
static bool ran_out(struct build *b, int ret)
{
	if (ret != -ENOMEM)
		return false;
	b->nomem++;
	if (!strstr(hyper_plan_graph_last_error(b->g), "out of memory"))
		b->bad = 1;
	return true;
}

/* Adds, and once more if memory ran out. */
static int add_tensor(struct build *b, const char *id, uint64_t bytes,
		      uint32_t kind, uint32_t flags)
{
	struct hyper_plan_tensor t = { .id = id, .bytes = bytes, .kind = kind,
				       .flags = flags };
	int ret = hyper_plan_graph_add_tensor(b->g, &t);

	if (ran_out(b, ret))
		ret = hyper_plan_graph_add_tensor(b->g, &t);
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

	if (ran_out(b, ret))
		ret = hyper_plan_graph_add_op(b->g, &o);
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
	hyper_plan__life_free(&j->lf);
	if (j->has_ref)
		hyper_plan__life_free(&j->lf_ref);
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
	struct job j = { 0 };

	ASSERT_EQ(0, case_job(&j, &c, &hyper_plan__profile_table[0], &e)) TH_LOG("%s", e.msg);
	ASSERT_TRUE(j.has_ref);
	order = j.order;
	refined = j.refined;
	peak0 = j.lf_ref.peak0;
	j.order = j.refined = NULL;
	hyper_plan__life_free(&j.lf);
	hyper_plan__life_free(&j.lf_ref);
	j.has_ref = false;
	start = j.g.mem.nr;
	ASSERT_EQ(0, hyper_plan__job_prepare(&j, false, &e));
	total = j.g.mem.nr - start;
	unprepare(&j);
	for (n = 1; n <= total; n++) {
		j.g.mem.fail_at = j.g.mem.nr + n;
		EXPECT_EQ(-ENOMEM, hyper_plan__job_prepare(&j, false, &e))
			TH_LOG("allocation %llu", (unsigned long long)n);
		EXPECT_STREQ("out of memory", e.msg);
		EXPECT_EQ(NULL, j.order);
		EXPECT_EQ(NULL, j.refined);
		EXPECT_FALSE(j.has_ref);
		/* as it was: the same orders and analysis come out again */
		ASSERT_EQ(0, hyper_plan__job_prepare(&j, false, &e));
		ASSERT_TRUE(j.has_ref);
		EXPECT_EQ(0, memcmp(order, j.order, j.g.nop * sizeof(*order)));
		EXPECT_EQ(0, memcmp(refined, j.refined, j.g.nop * sizeof(*order)));
		EXPECT_EQ(peak0, j.lf_ref.peak0);
		unprepare(&j);
	}
	free(order);
	free(refined);
	hyper_plan__job_free(&j);
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

/*
 * The allocations of a run that made @total, failed in turn: all of them
 * up to ALL_UP_TO, else the first and last SAMPLE_ENDS and SAMPLE_MID
 * spread evenly between (each run repeats the work before its failure).
 */
#define ALL_UP_TO	300
#define SAMPLE_ENDS	100
#define SAMPLE_MID	120

static uint64_t next_index(uint64_t n, uint64_t total)
{
	uint64_t stride;

	if (total <= ALL_UP_TO || n < SAMPLE_ENDS || n >= total - SAMPLE_ENDS)
		return n + 1;
	stride = (total - 2 * SAMPLE_ENDS) / SAMPLE_MID + 1;
	n += stride;
	return n < total - SAMPLE_ENDS ? n : total - SAMPLE_ENDS;
}

/* A random graph with a refined order, read back through the API. */
static struct hyper_plan_graph *random_graph(struct __test_metadata *_metadata,
					     const char *path)
{
	return plan_random(_metadata, path, 48, 5);
}

static int plan_with(struct hyper_plan_graph *g,
		     const struct hyper_plan_opts *o, uint64_t fail_at,
		     struct hyper_plan_prediction *pr, uint64_t *nr,
		     char *err, size_t errlen)
{
	struct hp_mem mem = { .fail_at = fail_at };
	struct hyper_plan *p = (void *)1;
	int ret = hyper_plan__plan_run(g, o, &p, &mem, err, errlen);

	if (nr)
		*nr = mem.nr;
	if (ret)
		return p ? -EFAULT : ret;	/* a failed run hands out nothing */
	ret = hyper_plan_prediction(p, pr);
	hyper_plan_free(p);
	return ret;
}

FIXTURE(plan) {
	struct hyper_plan_graph *g;
	struct hyper_plan_prediction lowest;
	char path[64];
};

FIXTURE_SETUP(plan)
{
	struct hyper_plan_opts o = { .profile = "h100-pcie" };
	char err[256];

	snprintf(self->path, sizeof(self->path), "/tmp/hyper-plan-oom-%d.json",
		 (int)getpid());
	self->g = random_graph(_metadata, self->path);
	ASSERT_EQ(0, plan_with(self->g, &o, 0, &self->lowest, NULL, err,
			       sizeof(err))) TH_LOG("%s", err);
	ASSERT_TRUE(self->g->j.has_ref);	/* both orders are searched */
}

FIXTURE_TEARDOWN(plan)
{
	hyper_plan_graph_free(self->g);
	unlink(self->path);
}

FIXTURE_VARIANT(plan) {
	const char *path;	/* what the run goes through */
	uint32_t policy, flags;
	int budget;		/* 0: lowest peak; 1: halfway to no offload;
				 * 2: just above the floor */
};

FIXTURE_VARIANT_ADD(plan, search_and_bound) {
	"the planner's search, both baselines, the bound",
	HYPER_PLAN_POLICY_PLAN, HYPER_PLAN_BOUND, 0,
};
FIXTURE_VARIANT_ADD(plan, search_at_budget) {
	"the search at a budget, its arena fitted, the baselines fitted",
	HYPER_PLAN_POLICY_PLAN, 0, 1,
};
FIXTURE_VARIANT_ADD(plan, search_near_the_floor) {
	"the search where no arena fits, and at the lower budgets after",
	HYPER_PLAN_POLICY_PLAN, 0, 2,
};
FIXTURE_VARIANT_ADD(plan, none) {
	"no offload", HYPER_PLAN_POLICY_NONE, 0, 0,
};
FIXTURE_VARIANT_ADD(plan, distance_at_budget) {
	"the distance policy at a budget", HYPER_PLAN_POLICY_DISTANCE, 0, 1,
};
FIXTURE_VARIANT_ADD(plan, greedy_at_budget) {
	"the greedy policy at a budget", HYPER_PLAN_POLICY_GREEDY, 0, 1,
};

/*
 * Each allocation of a plan fails in turn: -ENOMEM, "out of memory", no
 * plan handed out, nothing leaked, and the graph as it was: the same plan
 * comes out again.
 */
TEST_F_TIMEOUT(plan, every_allocation_fails_cleanly, 600)
{
	uint64_t floor = hyper_plan__life_floor(&self->g->j.lf, NULL);
	struct hyper_plan_opts o = {
		.profile = "h100-pcie", .policy = variant->policy,
		.flags = variant->flags,
		.budget_bytes = variant->budget == 1 ?
			(self->lowest.peak_device_bytes +
			 self->lowest.baseline_peak_bytes) / 2 :
			variant->budget == 2 ?
			floor + (self->g->j.lf.peak0 - floor) / 50 : 0,
	};
	struct hyper_plan_prediction ref, pr;
	uint64_t total, n, tried = 0;
	char err[256];

	ASSERT_EQ(0, plan_with(self->g, &o, 0, &ref, &total, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_GE(total, 10);
	for (n = 1; n <= total; n = next_index(n, total), tried++) {
		EXPECT_EQ(-ENOMEM, plan_with(self->g, &o, n, &pr, NULL, err,
					     sizeof(err)))
			TH_LOG("%s: allocation %llu of %llu: %s", variant->path,
			       (unsigned long long)n, (unsigned long long)total,
			       err);
		EXPECT_NE(NULL, strstr(err, "out of memory"))
			TH_LOG("allocation %llu: \"%s\"", (unsigned long long)n,
			       err);
		if (tried % 32 && n < total)
			continue;
		ASSERT_EQ(0, plan_with(self->g, &o, 0, &pr, NULL, err,
				       sizeof(err))) TH_LOG("%s", err);
		EXPECT_TRUE(plan_same(&ref, &pr))
			TH_LOG("after allocation %llu failed, the plan differs",
			       (unsigned long long)n);
	}
	EXPECT_EQ(0, leaks());
	TH_LOG("%s: %llu of %llu allocations failed in turn", variant->path,
	       (unsigned long long)tried, (unsigned long long)total);
}

/* The JSON reader: each of its allocations fails in turn. */
TEST(reading_json_fails_cleanly)
{
	uint64_t start, total, n, tried = 0;
	struct hyper_plan_graph *g;
	struct hp_err e;
	struct graph ref, gr;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/hyper-plan-oom-json-%d.json",
		 (int)getpid());
	g = random_graph(_metadata, path);
	hyper_plan_graph_free(g);
	ASSERT_EQ(0, hyper_plan__graph_init(&ref, "ref"));
	start = ref.mem.nr;
	ASSERT_EQ(0, hyper_plan__graph_load_json(&ref, path, &e)) TH_LOG("%s", e.msg);
	total = ref.mem.nr - start;
	ASSERT_GE(total, 10);
	for (n = 1; n <= total; n = next_index(n, total), tried++) {
		int ret;

		ASSERT_EQ(0, hyper_plan__graph_init(&gr, "g"));
		gr.mem.fail_at = gr.mem.nr + n;
		ret = hyper_plan__graph_load_json(&gr, path, &e);
		EXPECT_NE(0, ret) TH_LOG("allocation %llu", (unsigned long long)n);
		EXPECT_TRUE(gr.mem.failed);
		EXPECT_NE(NULL, strstr(e.msg, "out of memory"))
			TH_LOG("allocation %llu: \"%s\"", (unsigned long long)n,
			       e.msg);
		hyper_plan__graph_free(&gr);
	}
	/* read again whole, it is the same graph */
	ASSERT_EQ(0, hyper_plan__graph_init(&gr, "g"));
	ASSERT_EQ(0, hyper_plan__graph_load_json(&gr, path, &e)) TH_LOG("%s", e.msg);
	unlink(path);
	EXPECT_EQ(ref.nt, gr.nt);
	EXPECT_EQ(ref.nop, gr.nop);
	EXPECT_EQ(ref.nrefs, gr.nrefs);
	hyper_plan__graph_free(&gr);
	hyper_plan__graph_free(&ref);
	EXPECT_EQ(0, leaks());
	TH_LOG("%llu of %llu allocations failed in turn",
	       (unsigned long long)tried, (unsigned long long)total);
}

/*
 * Whether the VMA holding @p is advised for huge pages ("hg" in its
 * VmFlags); -1 where /proc/self/smaps cannot tell.
 */
static int advised(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	unsigned long lo, hi;
	char line[512];
	int in = 0, ret = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* a VMA's first line; no field's name has a '-' */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = a >= lo && a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			ret = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Whether this kernel takes MADV_HUGEPAGE at all (THP built in). */
static bool thp_advice(void)
{
	size_t n = 2 * HU_HUGE_PAGE;
	void *m = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	if (m == MAP_FAILED)
		return false;
#ifdef MADV_HUGEPAGE
	ok = !madvise(m, n, MADV_HUGEPAGE) && advised(m) == 1;
#else
	ok = false;
#endif
	munmap(m, n);
	return ok;
}

/* The first byte of @p's 2 MiB aligned inside. */
static const void *inside(const void *p)
{
	uintptr_t a = (uintptr_t)p + HU_HUGE_PAGE - 1;

	return (const void *)(a & ~(uintptr_t)(HU_HUGE_PAGE - 1));
}

/*
 * Blocks big enough for huge pages (util/huge.h) take the allocator's
 * other paths: advice after calloc(), an array grown by hand into a new,
 * advised block.  They must hold what realloc() and calloc() would, fail
 * as the small ones do (the block untouched, nothing leaked) and carry
 * the advice where the kernel takes it.
 */
TEST(big_blocks_keep_contents_fail_cleanly_and_are_advised)
{
	const size_t big = HU_HUGE_MIN + HU_HUGE_PAGE + 4096 + 3;
	bool thp = thp_advice();
	struct hp_mem m = { 0 };
	uint32_t *a = NULL, *was;
	size_t cap = 0, i, n = 0, bad;
	unsigned char *p, *q;

	if (!thp)
		TH_LOG("no MADV_HUGEPAGE here: contents and failures only");
	/* zeroed, also when the heap hands the same memory out again */
	for (int round = 0; round < 2; round++) {
		p = hyper_plan__calloc(&m, big, 1);
		ASSERT_NE(NULL, p);
		for (i = 0, bad = 0; i < big; i++)
			bad += p[i] != 0;
		EXPECT_EQ(0, bad);
		if (thp)
			EXPECT_EQ(1, advised(inside(p)));
		memset(p, 0xa5, big);
		free(p);
	}
	p = hyper_plan__malloc(&m, big);
	ASSERT_NE(NULL, p);
	if (thp)
		EXPECT_EQ(1, advised(inside(p)));
	free(p);

	/* a doubling array past HU_HUGE_MIN keeps every element */
	while (n * sizeof(*a) < 4 * HU_HUGE_MIN) {
		ASSERT_EQ(0, hyper_plan__grow(&m, &a, &cap, n, sizeof(*a)));
		a[n] = (uint32_t)(n * 2654435761u);
		n++;
	}
	for (i = 0, bad = 0; i < n; i++)
		bad += a[i] != (uint32_t)(i * 2654435761u);
	EXPECT_EQ(0, bad);
	if (thp)
		EXPECT_EQ(1, advised(inside(a)));
	/* its next growth fails: the array as it was, still whole */
	was = a;
	i = cap;
	m.fail_at = m.nr + 1;
	EXPECT_EQ(-ENOMEM, hyper_plan__grow(&m, &a, &cap, cap, sizeof(*a)));
	EXPECT_TRUE(m.failed);
	EXPECT_EQ(was, a);
	EXPECT_EQ(i, cap);
	for (i = 0, bad = 0; i < n; i++)
		bad += a[i] != (uint32_t)(i * 2654435761u);
	EXPECT_EQ(0, bad);
	m = (struct hp_mem){ 0 };
	ASSERT_EQ(0, hyper_plan__grow(&m, &a, &cap, cap, sizeof(*a)));
	for (i = 0, bad = 0; i < n; i++)
		bad += a[i] != (uint32_t)(i * 2654435761u);
	EXPECT_EQ(0, bad);
	free(a);

	/* util's builders' realloc(): contents kept, failure leaves it */
	p = hyper_plan__mem_realloc(&m, NULL, big);
	ASSERT_NE(NULL, p);
	for (i = 0; i < big; i++)
		p[i] = (unsigned char)(i % 251);
	m.fail_at = m.nr + 1;
	EXPECT_EQ(NULL, hyper_plan__mem_realloc(&m, p, 2 * big));
	m = (struct hp_mem){ 0 };
	q = hyper_plan__mem_realloc(&m, p, 2 * big);
	ASSERT_NE(NULL, q);
	for (i = 0, bad = 0; i < big; i++)
		bad += q[i] != (unsigned char)(i % 251);
	EXPECT_EQ(0, bad);
	if (thp)
		EXPECT_EQ(1, advised(inside(q)));
	free(q);

	m.fail_at = m.nr + 1;
	EXPECT_EQ(NULL, hyper_plan__malloc(&m, big));
	m.fail_at = m.nr + 1;
	EXPECT_EQ(NULL, hyper_plan__calloc(&m, big, 1));
	EXPECT_TRUE(m.failed);
	EXPECT_EQ(0, leaks());
}

/*
 * hyper_plan__grow() calls out only when index @need does not fit: with
 * room, no allocation is tried (one injected to fail does not), and the
 * array and its capacity stay.  When full it grows once, to 16 or the
 * doubling past @need, keeping the elements; when that fails, the array
 * and capacity are as they were.  hyper_plan__room() allocates only when
 * @n is past the capacity, exactly @n, and leaves NULL and 0 on failure.
 */
TEST(grow_and_room_allocate_only_when_full)
{
	struct hp_mem m = { 0 };
	size_t *a = NULL, *was, cap = 0, c, i, bad;
	unsigned long long nr;

	for (size_t n = 0; n < 5000; n++) {
		was = a;
		c = cap;
		nr = m.nr;
		if (n < cap)	/* room: an allocation tried would fail */
			m.fail_at = m.nr + 1;
		ASSERT_EQ(0, hyper_plan__grow(&m, &a, &cap, n, sizeof(*a)))
			TH_LOG("n %zu cap %zu", n, c);
		ASSERT_FALSE(m.failed);
		m.fail_at = 0;
		ASSERT_LT(n, cap);
		if (n < c) {
			ASSERT_EQ(nr, m.nr) TH_LOG("n %zu cap %zu", n, c);
			ASSERT_EQ(was, a);
			ASSERT_EQ(c, cap);
		} else {
			ASSERT_EQ(nr + 1, m.nr) TH_LOG("n %zu cap %zu", n, c);
			ASSERT_EQ(c ? 2 * c : 16, cap);
		}
		a[n] = n * (size_t)0x9e3779b97f4a7c15ULL;
	}
	for (i = 0, bad = 0; i < 5000; i++)
		bad += a[i] != i * (size_t)0x9e3779b97f4a7c15ULL;
	EXPECT_EQ(0, bad);
	/* far past the end: the first doubling of the capacity past it */
	c = cap;
	ASSERT_EQ(0, hyper_plan__grow(&m, &a, &cap, 9 * c, sizeof(*a)));
	EXPECT_EQ(16 * c, cap);
	for (i = 0, bad = 0; i < 5000; i++)
		bad += a[i] != i * (size_t)0x9e3779b97f4a7c15ULL;
	EXPECT_EQ(0, bad);
	/* full and failing: as it was */
	was = a;
	c = cap;
	m.fail_at = m.nr + 1;
	EXPECT_EQ(-ENOMEM, hyper_plan__grow(&m, &a, &cap, c, sizeof(*a)));
	EXPECT_TRUE(m.failed);
	EXPECT_EQ(was, a);
	EXPECT_EQ(c, cap);
	free(a);

	m = (struct hp_mem){ 0 };
	a = NULL;
	cap = 0;
	ASSERT_EQ(0, hyper_plan__room(&m, &a, &cap, 1000, sizeof(*a)));
	ASSERT_NE(NULL, a);
	EXPECT_EQ(1000, cap);
	EXPECT_EQ(1, m.nr);
	memset(a, 0x5a, 1000 * sizeof(*a));
	was = a;
	m.fail_at = m.nr + 1;
	for (size_t n = 0; n <= 1000; n += 250) {
		ASSERT_EQ(0, hyper_plan__room(&m, &a, &cap, n, sizeof(*a)));
		EXPECT_EQ(was, a);
		EXPECT_EQ(1000, cap);
	}
	EXPECT_EQ(1, m.nr);
	EXPECT_FALSE(m.failed);
	m.fail_at = 0;
	ASSERT_EQ(0, hyper_plan__room(&m, &a, &cap, 3001, sizeof(*a)));
	ASSERT_NE(NULL, a);
	EXPECT_EQ(3001, cap);
	EXPECT_EQ(2, m.nr);
	memset(a, 0x5a, 3001 * sizeof(*a));
	m.fail_at = m.nr + 1;
	EXPECT_EQ(-ENOMEM, hyper_plan__room(&m, &a, &cap, 3002, sizeof(*a)));
	EXPECT_TRUE(m.failed);
	EXPECT_EQ(NULL, a);
	EXPECT_EQ(0, cap);
	EXPECT_EQ(0, leaks());
}

/*
 * hyper_plan__parts(): from HU_HUGE_PAGE bytes the parts are one block
 * (each after the one before, on HU_PART_ALIGN), one allocation; one
 * byte less and each is an array of its own.  Those marked zeroed are
 * cleared either way, also where the heap hands out dirty memory again.
 * When an allocation fails: -ENOMEM, no block, the part that failed
 * NULL (every part, for the block), those allocated set; and
 * hu_block_free() frees what was given, leaving every pointer NULL.
 */
TEST(parts_are_one_block_from_a_huge_page_and_fail_cleanly)
{
	size_t *z;
	unsigned char *b, *a;
	struct hp_mem m;
	void *blk, *dirty;
	size_t i, bad;

	for (int big = 0; big < 2; big++) {
		/* 128 bytes, then a's: HU_HUGE_PAGE in all, or one less */
		size_t n = HU_HUGE_PAGE - 128 - !big;
		struct hu_part parts[] = {
			HU_PART(z, 8, true),
			HU_PART(b, 64, false),
			HU_PART(a, n, false),
		};
		unsigned int nr = big ? 1 : 3;

		dirty = malloc(8 * sizeof(*z));
		ASSERT_NE(NULL, dirty);
		memset(dirty, 0xa5, 8 * sizeof(*z));
		free(dirty);
		m = (struct hp_mem){ 0 };
		blk = &m;
		ASSERT_EQ(0, hyper_plan__parts(&m, parts, 3, &blk));
		EXPECT_EQ(nr, m.nr);
		EXPECT_FALSE(m.failed);
		ASSERT_NE(NULL, z);
		ASSERT_NE(NULL, b);
		ASSERT_NE(NULL, a);
		if (big) {
			EXPECT_EQ(blk, (void *)z);
			EXPECT_EQ((unsigned char *)blk + 64, b);
			EXPECT_EQ((unsigned char *)blk + 128, a);
		} else {
			EXPECT_EQ(NULL, blk);
		}
		for (i = 0, bad = 0; i < 8; i++)
			bad += z[i] != 0;
		EXPECT_EQ(0, bad);
		memset(b, 1, 64);
		memset(a, 2, n);
		hu_block_free(&blk, parts, 3);
		EXPECT_EQ(NULL, blk);
		EXPECT_EQ(NULL, z);
		EXPECT_EQ(NULL, b);
		EXPECT_EQ(NULL, a);

		for (unsigned int f = 1; f <= nr; f++) {
			m = (struct hp_mem){ .fail_at = f };
			blk = &m;
			EXPECT_EQ(-ENOMEM, hyper_plan__parts(&m, parts, 3, &blk));
			EXPECT_TRUE(m.failed);
			EXPECT_EQ(NULL, blk);
			for (i = 0; i < 3; i++) {
				bool gone = big || i == f - 1;

				EXPECT_EQ(gone, !hu_part_get(parts[i].pp))
					TH_LOG("part %zu", i);
			}
			hu_block_free(&blk, parts, 3);
			EXPECT_EQ(NULL, z);
			EXPECT_EQ(NULL, b);
			EXPECT_EQ(NULL, a);
		}
	}
	EXPECT_EQ(0, leaks());
}

TEST_HARNESS_MAIN
