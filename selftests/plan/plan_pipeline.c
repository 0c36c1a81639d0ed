// SPDX-License-Identifier: GPL-2.0
/*
 * The pipeline's one table (libhyperplan/passes/pipeline.c): every pass's
 * requires are ensured before it, a table out of order is refused, the
 * driver refuses a pass whose requires do not hold, preparing a graph
 * ensures what the table says, and Documentation/planner.md carries the
 * table as it is and follows it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"

#include "api/api.h"
#include "passes/pipeline.h"
#include "passes/sched.h"
#include "policies/list.h"
#include "plan_cases.h"
#include "plan_chain.h"

TEST(table_holds)
{
	struct hp_err e = { "" };

	EXPECT_EQ(0, hyper_plan__pipeline_check(hyper_plan__passes, HP_PASS_NR,
						HP_PIPELINE_INPUTS, &e))
		TH_LOG("%s", e.msg);
	/* without a profile nothing is timed, and life needs the times */
	EXPECT_EQ(-EINVAL, hyper_plan__pipeline_check(hyper_plan__passes,
						      HP_PASS_NR, HP_F_GRAPH, &e));
	EXPECT_NE(NULL, strstr(e.msg, "pass \"retime\" requires profile"))
		TH_LOG("%s", e.msg);
}

/*
 * The table checked with pass @at's entry in pass @from's place, and with
 * @swap @from's in @at's: 0, or -EINVAL said in @e.
 */
static int check_moved(int at, int from, bool swap, struct hp_err *e)
{
	struct hyper_plan__pass t[HP_PASS_NR];

	memcpy(t, hyper_plan__passes, sizeof(t));
	t[from] = hyper_plan__passes[at];
	if (swap)
		t[at] = hyper_plan__passes[from];
	return hyper_plan__pipeline_check(t, HP_PASS_NR, HP_PIPELINE_INPUTS,
					  e);
}

TEST(table_out_of_order_is_refused)
{
	struct hp_err e = { "" };

	EXPECT_EQ(-EINVAL, check_moved(HP_PASS_ORDER, HP_PASS_DEPS, true, &e));
	EXPECT_STREQ("internal error: pass \"order\" requires deps, which no pass before it ensures",
		     e.msg);

	/* validate before the search loop: nothing chosen yet */
	EXPECT_EQ(-EINVAL, check_moved(HP_PASS_VALIDATE, HP_PASS_GOAL, true,
				       &e));
	EXPECT_NE(NULL, strstr(e.msg, "pass \"validate\" requires arena, chosen"))
		TH_LOG("%s", e.msg);

	/* the loop left before layout: it would claim an arena */
	EXPECT_EQ(-EINVAL, check_moved(HP_PASS_VALIDATE, HP_PASS_LAYOUT, true,
				       &e));
	EXPECT_STREQ("internal error: the search loop ensures what none of its passes does",
		     e.msg);

	/* a probe pass after the loop has ended */
	EXPECT_EQ(-EINVAL, check_moved(HP_PASS_SIMULATE, HP_PASS_BOUND, false,
				       &e));
	EXPECT_NE(NULL, strstr(e.msg, "pass \"simulate\" is in the search loop, which ended"))
		TH_LOG("%s", e.msg);
	/* and the table as it is passes */
	EXPECT_EQ(0, check_moved(HP_PASS_BOUND, HP_PASS_BOUND, false, &e));
}

/* The driver checks each pass's requires as it reaches it. */
TEST(driver_refuses_a_pass_before_its_requires)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 4, 0);
	struct hyper_plan__pipe pp = {
		.j = &g->j, .have = HP_F_GRAPH | HP_F_PROFILE,
	};
	struct hp_err e = { "" };

	EXPECT_EQ(-EINVAL, hyper_plan__pipeline_run(&pp, HP_PASS_LIFE,
						    HP_PASS_LIFE, &e));
	EXPECT_STREQ("internal error: pass \"life\" requires timed, order, which no pass before it ensures",
		     e.msg);
	EXPECT_EQ(NULL, g->j.lf.order);
	hyper_plan_graph_free(g);
}

/* Preparing a graph runs passes 1 to 5 and ensures what they say. */
TEST(prepare_ensures_the_graph_facts)
{
	static const uint32_t want = HP_F_GRAPH | HP_F_PROFILE | HP_F_TIMED |
				     HP_F_ORDER | HP_F_LIFE;
	struct hyper_plan_graph *g = plan_chain(_metadata, 6, 0);
	struct hp_err e = { "" };
	struct profile p;
	char out[4096] = "";
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, hyper_plan__profile_get("h100-pcie", &p, &e)) TH_LOG("%s", e.msg);
	g->j.verbose = f;
	ASSERT_EQ(0, hyper_plan__prepare(&g->j, &p, true, &e)) TH_LOG("%s", e.msg);
	fclose(f);
	/* no reorder asked: no refined order, and the deps freed */
	EXPECT_EQ(want, g->j.have);
	EXPECT_STREQ("h100-pcie", g->j.g.timed_on);
	EXPECT_NE(NULL, g->j.lf.order);
	EXPECT_EQ(NULL, g->j.refined);
	EXPECT_NE(NULL, strstr(out, "pass retime"));
	EXPECT_NE(NULL, strstr(out, "pass life"));
	EXPECT_EQ(NULL, strstr(out, "pass reorder")) TH_LOG("%s", out);
	hyper_plan_graph_free(g);

	g = plan_chain(_metadata, 6, 0);
	ASSERT_EQ(0, hyper_plan__job_prepare(&g->j, false, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(want | HP_F_REFINED, g->j.have);
	EXPECT_NE(NULL, g->j.refined);
	hyper_plan_graph_free(g);
}

/* A plan goes through goal, the search loop and validate, in order. */
TEST(plan_runs_the_plan_passes)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 8, 0);
	struct hyper_plan_opts o = { .flags = HYPER_PLAN_BOUND };
	struct hyper_plan *p;
	char err[256];

	ASSERT_EQ(0, hyper_plan_run(g, &o, &p, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_NE(NULL, p->hs);
	EXPECT_GT(p->bound, 0);
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
}

/*
 * The search loop's passes go through the driver: a probe emits and
 * simulates, a kept plan is laid out; select is the loop's own call and
 * the driver refuses to run it.
 */
TEST(search_loop_runs_its_passes_through_the_driver)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 6, 0);
	struct hyper_plan__pipe pp;
	struct hp_err e = { "" };
	struct hp_mem mem = { 0 };
	struct problem pb;
	struct result r;
	struct profile p;
	struct goal gl = { .max_slow = 0.01 };

	ASSERT_EQ(0, hyper_plan__profile_get("h100-pcie", &p, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__prepare(&g->j, &p, false, &e)) TH_LOG("%s", e.msg);
	hyper_plan__job_problem(&g->j, &pb, &gl, &mem);
	pb.p = &p;
	/* no offload: nothing selected, every tensor resident */
	ASSERT_EQ(0, hyper_plan__probe(&pb, pb.lf, NULL, 0, 0, false, &r, &e)) TH_LOG("%s", e.msg);
	EXPECT_TRUE(r.ok);
	EXPECT_EQ(g->j.lf.peak0, r.sim.peak);
	EXPECT_EQ(r.sim.peak, r.s.pred.peak);
	EXPECT_EQ(0, r.s.arena);
	/* the probe ran in the memo's buffers; the layout hands them back */
	EXPECT_NE(NULL, pb.memo->sim.end);
	ASSERT_EQ(0, hyper_plan__layout(&pb, &r, 0, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(NULL, pb.memo->sim.end);
	EXPECT_EQ(NULL, pb.memo->sim.busy);
	EXPECT_GE(r.s.arena, r.s.res_peak);
	EXPECT_EQ(g->j.lf.peak0, r.s.res_peak);
	/* a budget below the peak breaks the simulation: a failed probe */
	hyper_plan__result_free(&r);
	ASSERT_EQ(0, hyper_plan__probe(&pb, pb.lf, NULL, 0, g->j.lf.peak0 / 2,
				       false, &r, &e));
	EXPECT_FALSE(r.ok);
	EXPECT_NE(NULL, pb.memo->sim.end);
	hyper_plan__result_free(&r);

	pp = (struct hyper_plan__pipe){
		.j = &g->j, .pb = &pb, .r = &r, .in_loop = true,
		.have = g->j.have | HP_F_GOAL,
	};
	EXPECT_EQ(-EINVAL, hyper_plan__pipeline_run(&pp, HP_PASS_SELECT,
						    HP_PASS_SELECT, &e));
	EXPECT_STREQ("internal error: pass \"select\" is the search loop's own call",
		     e.msg);
	EXPECT_FALSE(mem.failed);
	hyper_plan_graph_free(g);
}

/* Whether @s's layout is the one the placer makes afresh. */
static bool placed_afresh(const struct sched *s, struct hp_mem *mem)
{
	struct sched t = *s;
	size_t nt = s->g->nt;
	struct hp_err e;
	bool same;

	t.res_off = NULL;
	t.res_first = NULL;
	if (hyper_plan__sched_layout(&t, 0, mem, &e))
		return false;
	same = t.arena == s->arena && t.res_peak == s->res_peak &&
	       !t.arena_over && !s->arena_over && t.res_off && s->res_off &&
	       !memcmp(t.res_first, s->res_first,
		       (nt + 1) * sizeof(*t.res_first)) &&
	       !memcmp(t.res_off, s->res_off,
		       t.res_first[nt] * sizeof(*t.res_off));
	free(t.res_off);
	free(t.res_first);
	return same;
}

/*
 * --compare's rows, as hyper-plan runs them: a row whose schedule is one
 * planned already takes its layout, the placer's own, and is not
 * validated again; one that differs in a field the validator reads is.
 */
TEST(rows_take_a_twins_layout_and_check)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 12, MIB / 3);
	struct result res[POL_NR + 1] = { 0 }, y;
	struct goal gl = { .max_slow = 0.01 };
	struct hp_err e = { "" };
	struct problem pb;
	struct profile p;
	struct job *j;
	unsigned int lays, checks;

	ASSERT_EQ(0, hyper_plan__profile_get("h100-pcie", &p, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__prepare(&g->j, &p, false, &e)) TH_LOG("%s", e.msg);
	j = &g->j;
	j->p = p;
	hyper_plan__job_problem(j, &pb, &gl, &j->g.mem);
	j->memo.rows = true;
	/* each row, then the greedy one again: the same schedule */
	for (int i = 0; i <= POL_NR; i++) {
		struct hyper_plan__pipe one = {
			.j = j, .pb = &pb, .pol = i < POL_NR ? i : POL_GREEDY,
			.r = &res[i], .have = j->have | HP_F_GOAL,
		};

		lays = j->memo.row_layouts;
		checks = j->memo.row_checks;
		ASSERT_EQ(0, hyper_plan__pipeline_run(&one, HP_PASS_SELECT,
						      HP_PASS_VALIDATE, &e))
			TH_LOG("%s", e.msg);
		EXPECT_TRUE(placed_afresh(&res[i].s, &j->g.mem))
			TH_LOG("row %d: not the placer's layout", i);
		if (i < POL_NR)
			j->memo.row[i] = &res[i];
	}
	EXPECT_EQ(lays + 1, j->memo.row_layouts);
	EXPECT_EQ(checks + 1, j->memo.row_checks);
	/* a budget of its own: validated */
	y = res[POL_NR];
	y.s.budget++;
	checks = j->memo.row_checks;
	{
		struct hyper_plan__pipe v = {
			.j = j, .pb = &pb, .r = &y, .have = ~0u,
		};

		EXPECT_EQ(0, hyper_plan__pipeline_run(&v, HP_PASS_VALIDATE,
						      HP_PASS_VALIDATE, &e))
			TH_LOG("%s", e.msg);
	}
	EXPECT_EQ(checks, j->memo.row_checks);
	memset(j->memo.row, 0, sizeof(j->memo.row));
	for (int i = 0; i <= POL_NR; i++)
		hyper_plan__result_free(&res[i]);
	EXPECT_FALSE(j->g.mem.failed);
	hyper_plan_graph_free(g);
}

/* Whether @a and @b carry the same layout (none counts as one). */
static bool same_layout(const struct sched *a, const struct sched *b)
{
	size_t nt = a->g ? a->g->nt : 0;

	if (a->arena != b->arena || a->arena_over != b->arena_over ||
	    a->res_peak != b->res_peak || !a->res_off != !b->res_off)
		return false;
	return !a->res_off ||
	       (!memcmp(a->res_first, b->res_first,
			(nt + 1) * sizeof(*a->res_first)) &&
		!memcmp(a->res_off, b->res_off,
			a->res_first[nt] * sizeof(*a->res_off)));
}

/* Whether @a and @b print the same row (all but its search ms). */
static bool same_row(const struct result *a, const struct result *b)
{
	return a->ok == b->ok && !strcmp(a->policy, b->policy) &&
	       !strcmp(a->params, b->params) &&
	       !memcmp(&a->sim, &b->sim, sizeof(a->sim)) &&
	       !memcmp(&a->s.pred, &b->s.pred, sizeof(a->s.pred));
}

/*
 * hyper-plan's rows, as plan() in tools/hyper-plan/main.c runs them with
 * --compare: @chosen written, @plotted or not, at @gl; each printed only
 * as hyper_plan__row_printed_only() says, or with @whole none of them
 * (every row laid out by the planner's placement), a row laid out and
 * validated kept for a later plan to take.  What each returned, in @ret.
 */
static void compare_rows(struct __test_metadata *_metadata, struct job *j,
			 const struct goal *gl, int chosen, bool plotted,
			 bool whole, struct result *res, int *ret)
{
	struct problem pb;
	struct hp_err e;

	hyper_plan__job_problem(j, &pb, gl, &j->g.mem);
	j->memo.rows = true;
	for (int p = 0; p < POL_NR; p++) {
		struct hyper_plan__pipe one = {
			.j = j, .pb = &pb, .pol = p, .r = &res[p],
			.have = j->have | HP_F_GOAL,
			.printed_only = !whole &&
				hyper_plan__row_printed_only(p, chosen, plotted,
							     gl->budget),
		};

		ret[p] = hyper_plan__pipeline_run(&one, HP_PASS_SELECT,
						  HP_PASS_VALIDATE, &e);
		EXPECT_NE(-ENOMEM, ret[p]);
		if (!ret[p] && !one.printed_only)
			j->memo.row[p] = &res[p];
	}
	memset(j->memo.row, 0, sizeof(j->memo.row));
	EXPECT_FALSE(j->g.mem.failed);
}

/* --compare as hyper-plan runs it: the policy written, plotted or not. */
struct compare_run {
	int chosen;
	bool plotted, budget;
};

/*
 * The rows of random graph @seed, laid out whole and as the rule says,
 * each against the other; how many were printed only, in *@printed, and
 * how many of those came out in other offsets, in *@placed_once.
 */
static void rows_against_whole(struct __test_metadata *_metadata,
			       uint64_t seed, const struct compare_run *cr,
			       unsigned int *printed, unsigned int *placed_once)
{
	const struct plan_case c = { NULL, NULL, 60, seed };
	struct result ref[POL_NR] = { 0 }, res[POL_NR] = { 0 };
	struct goal gl = { .max_slow = 0.01 };
	struct job jref = { 0 }, jres = { 0 };
	int rref[POL_NR], rres[POL_NR];
	struct hp_err e;

	ASSERT_EQ(0, case_job(&jref, &c, &hyper_plan__profile_table[0], &e))
		TH_LOG("%s", e.msg);
	ASSERT_EQ(0, case_job(&jres, &c, &hyper_plan__profile_table[0], &e))
		TH_LOG("%s", e.msg);
	if (cr->budget)
		gl.budget = hyper_plan__life_floor(&jref.lf, NULL) / 2 +
			    jref.lf.peak0 / 2;
	compare_rows(_metadata, &jref, &gl, cr->chosen, cr->plotted, true,
		     ref, rref);
	compare_rows(_metadata, &jres, &gl, cr->chosen, cr->plotted, false,
		     res, rres);
	for (int p = 0; p < POL_NR; p++) {
		/* the rule, said again */
		bool only = p != cr->chosen && !cr->plotted && !cr->budget;
		bool laid = !rres[p] && res[p].ok;

		EXPECT_EQ(rref[p], rres[p]);
		EXPECT_TRUE(same_row(&ref[p], &res[p]))
			TH_LOG("seed %llu, %s written: row %d prints otherwise",
			       (unsigned long long)seed,
			       hyper_plan__policy_name[cr->chosen], p);
		if (!only)
			EXPECT_TRUE(same_layout(&ref[p].s, &res[p].s))
				TH_LOG("seed %llu, %s written: row %d lost the planner's layout",
				       (unsigned long long)seed,
				       hyper_plan__policy_name[cr->chosen], p);
		/* by each size's blocks reused: no lower than the peak */
		if (only && laid)
			EXPECT_LE(res[p].s.res_peak, res[p].s.arena);
		*printed += only && laid;
		*placed_once += only && laid &&
				!same_layout(&ref[p].s, &res[p].s);
	}
	for (int p = 0; p < POL_NR; p++) {
		hyper_plan__result_free(&ref[p]);
		hyper_plan__result_free(&res[p]);
	}
	hyper_plan__job_free(&jref);
	hyper_plan__job_free(&jres);
}

/*
 * A row printed only (not the policy written, not plotted, no budget) is
 * laid out in one pass in start order, which libhyper's validator takes
 * (every row here went through it), and prints what it printed when
 * laid out whole; a row written, plotted or under a budget keeps the
 * planner's layout, the one it had before, twin or not.  Some printed
 * rows come out in other offsets: else this tests nothing.
 */
TEST(printed_rows_are_laid_out_once_and_print_the_same)
{
	static const struct compare_run runs[] = {
		{ POL_PLAN, false, false }, { POL_NONE, false, false },
		{ POL_DISTANCE, false, false }, { POL_GREEDY, false, false },
		{ POL_PLAN, true, false }, { POL_PLAN, false, true },
	};
	unsigned int printed = 0, placed_once = 0;

	for (uint64_t seed = 1; seed <= 2; seed++)
		for (size_t k = 0; k < ARRAY_SIZE(runs); k++)
			rows_against_whole(_metadata, seed, &runs[k], &printed,
					   &placed_once);
	EXPECT_LT(0u, placed_once)
		TH_LOG("%u rows printed only, none laid out otherwise", printed);
	/* the rule itself */
	EXPECT_TRUE(hyper_plan__row_printed_only(POL_NONE, POL_PLAN, false, 0));
	EXPECT_FALSE(hyper_plan__row_printed_only(POL_PLAN, POL_PLAN, false, 0));
	EXPECT_FALSE(hyper_plan__row_printed_only(POL_NONE, POL_PLAN, true, 0));
	EXPECT_FALSE(hyper_plan__row_printed_only(POL_NONE, POL_PLAN, false, 1));
}

/*
 * Under a budget no offload does not meet, none is searched once: its
 * one schedule meets no lower budget either (policies/fit_arena.c), so
 * the fit makes what one search makes, and says what it says.
 */
TEST(none_is_not_searched_again_lower)
{
	struct hyper_plan_graph *g = plan_chain(_metadata, 12, MIB / 3);
	struct hp_mem one = { 0 }, fit = { 0 };
	struct hp_err e = { "" }, fe = { "" };
	struct result r, f;
	struct problem pb;
	struct profile p;
	struct goal gl = { .max_slow = 0.01 };
	uint64_t floor;

	ASSERT_EQ(0, hyper_plan__profile_get("h100-pcie", &p, &e)) TH_LOG("%s", e.msg);
	ASSERT_EQ(0, hyper_plan__prepare(&g->j, &p, false, &e)) TH_LOG("%s", e.msg);
	g->j.p = p;
	floor = hyper_plan__life_floor(&g->j.lf, NULL);
	gl.budget = floor + (g->j.lf.peak0 - floor) / 2;
	hyper_plan__job_problem(&g->j, &pb, &gl, &one);
	EXPECT_NE(0, hyper_plan__run_policy(POL_NONE, &pb, &r, &e));
	EXPECT_FALSE(r.ok);
	hyper_plan__result_free(&r);
	/*
	 * The fit's probe is the same zero-tensor probe, which the job's
	 * memo would hand out unsimulated (passes/pipeline.c), in the
	 * simulation buffers the memo keeps (sim/sim.h): both forgotten,
	 * so the fit makes the allocations one search makes.
	 */
	EXPECT_EQ(&g->j.memo, pb.memo);
	memset(g->j.memo.zero, 0, sizeof(g->j.memo.zero));
	hyper_plan__simbuf_free(&g->j.memo.sim);
	pb.mem = &fit;
	EXPECT_NE(0, hyper_plan__run_policy_fit(POL_NONE, &pb, &f, &fe));
	EXPECT_FALSE(f.ok);
	EXPECT_STREQ(e.msg, fe.msg);
	EXPECT_EQ(one.nr, fit.nr);
	hyper_plan__result_free(&f);
	hyper_plan_graph_free(g);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			char *nb = realloc(buf, cap = 2 * cap + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/*
 * planner.md carries the table as hyper-plan --passes prints it, and its
 * sections follow it: "### N. `name`", the search loop before pass 7.
 */
TEST(planner_md_follows_the_table)
{
	char *doc, *table = NULL, *at;
	size_t len, tlen = 0;
	FILE *f;

	doc = slurp(HP_SRCDIR "/Documentation/planner.md", &len);
	ASSERT_NE(NULL, doc);
	f = open_memstream(&table, &tlen);
	ASSERT_NE(NULL, f);
	hyper_plan__pipeline_print(f);
	fclose(f);
	EXPECT_NE(NULL, strstr(doc, table))
		TH_LOG("Documentation/planner.md lacks the table as hyper-plan --passes prints it:\n%s",
		       table);
	at = strstr(doc, "\n## The passes\n");
	ASSERT_NE(NULL, at);
	for (int i = 0; i < HP_PASS_NR; i++) {
		char head[64];
		char *next;

		if (i == HP_PASS_SELECT) {
			next = strstr(at, "\n### The search loop (");
			EXPECT_NE(NULL, next) TH_LOG("no search loop section before pass 7");
			at = next ? next : at;
		}
		snprintf(head, sizeof(head), "%d. `%s`", i + 1,
			 hyper_plan__passes[i].name);
		next = strstr(at, head);
		EXPECT_NE(NULL, next) TH_LOG("no section \"%s\" after the one before it", head);
		at = next ? next : at;
	}
	free(table);
	free(doc);
}


/*
 * The run's kept blocks (lib/util.c, struct hp_mem's keep): every
 * policy's plan, laid out and validated through a job that keeps the
 * blocks its phases free, is the schedule planned keeping none.  At
 * these sizes no block reaches HP_KEEP_MIN, so the keeping job's is
 * lowered to a page: each phase's scratch is then some other phase's,
 * left as that one wrote it, and a phase that read its memory as fresh,
 * or a block freed twice or still in use, shows here.
 */
static char *plan_text(struct job *j, int pol, struct hp_err *e)
{
	struct goal gl = { .max_slow = 0.01 };
	struct result r = { 0 };
	struct problem pb;
	struct hyper_plan__pipe pp = {
		.j = j, .pb = &pb, .pol = pol, .r = &r,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	hyper_plan__job_problem(j, &pb, &gl, &j->g.mem);
	pp.have = j->have;
	ret = hyper_plan__pipeline_run(&pp, HP_PASS_GOAL, HP_PASS_LAYOUT, e);
	if (!ret)
		ret = hyper_plan__pipeline_run(&pp, HP_PASS_VALIDATE,
					       HP_PASS_VALIDATE, e);
	f = ret ? NULL : open_memstream(&text, &len);
	if (f) {
		hyper_plan__sched_write_json(&r.s, f, "test", NULL);
		fclose(f);
	}
	hyper_plan__result_free(&r);
	return text;
}

TEST(kept_blocks_plan_the_same)
{
	static const struct plan_case cases[] = {
		{ NULL, NULL, 3000, 7 }, { "olmoe-1b-7b", "train", 0, 1 },
		{ "llama2-7b", "infer", 0, 2 },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct job keep = { 0 }, bare = { 0 };
		struct hp_err e = { "" };

		ASSERT_EQ(0, case_job(&keep, &cases[c],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		ASSERT_EQ(0, case_job(&bare, &cases[c],
				      &hyper_plan__profile_table[0], &e))
			TH_LOG("%s", e.msg);
		EXPECT_TRUE(keep.g.mem.keep);	/* prepared: keeping */
		keep.g.mem.keep_min = 4096;
		bare.g.mem.keep = false;
		for (int pol = 0; pol < POL_NR; pol++) {
			char *a = plan_text(&keep, pol, &e);
			char *b;

			ASSERT_NE(NULL, a) TH_LOG("case %zu policy %d: %s",
						  c, pol, e.msg);
			b = plan_text(&bare, pol, &e);
			ASSERT_NE(NULL, b) TH_LOG("%s", e.msg);
			EXPECT_STREQ(b, a) TH_LOG("case %zu policy %d", c, pol);
			free(a);
			free(b);
		}
		EXPECT_FALSE(keep.g.mem.failed);
		hyper_plan__job_free(&keep);
		hyper_plan__job_free(&bare);
	}
}

TEST_HARNESS_MAIN
