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
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "job.h"
#include "policies/list.h"
#include "gen/gen_build.h"
#include "gen/model.h"
#include "out/output.h"
#include "graph/graph_json.h"
#include "profile/profile.h"
#include "plan_cases.h"
#include "gen/published.h"
#include "profile/retime.h"

#define CONFIGS	HP_SRCDIR "/tools/hyper-plan/configs/"

static const char *const shipped[] = {
	"llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "mixtral-8x7b",
	"mistral-7b", "gemma-7b", "falcon-40b", "qwen1.5-moe-a2.7b",
	"qwen2-72b",
	/* public config.json files, as their model cards publish them */
	"llama3.1-8b", "llama3.1-405b", "qwen2.5-7b", "qwen2.5-32b",
	"mixtral-8x22b", "mistral-nemo", "falcon-7b", "phi3-mini",
	"gemma2-9b", "deepseek-v2-lite", "gpt2", "olmoe-1b-7b",
};

/*
 * Tests that draw whole models or run the CLI many times: a loaded host
 * makes them slow, never wrong, so they get 600 s, not the harness's 30.
 */
/* -m NAME reads the sources' configs, when run by hand too. */
static void __attribute__((constructor)) configs_from_sources(void)
{
	plan_configs_from_sources();
}

FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

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
	hyper_plan__graph_init(g, config);
	return gen_model(g, &gp, &hyper_plan__profile_table[0], e);
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

TEST_F_TIMEOUT(slow, built_in_models_are_their_published_shapes, 600)
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
			hyper_plan__graph_init(&b, "loaded");
			ASSERT_EQ(0, gen_model(&b, &gp, &hyper_plan__profile_table[0], &e));
			small(&gp, want, train);
			hyper_plan__graph_init(&a, "published");
			ASSERT_EQ(0, gen_model(&a, &gp, &hyper_plan__profile_table[0], &e));
			ASSERT_EQ(a.nt, b.nt);
			ASSERT_EQ(a.nop, b.nop);
			for (size_t t = 0; t < a.nt; t++) {
				EXPECT_STREQ(a.t[t].id, b.t[t].id);
				EXPECT_EQ(a.t[t].bytes, b.t[t].bytes);
			}
			for (size_t o = 0; o < a.nop; o++)
				EXPECT_EQ(a.op[o].compute_ns, b.op[o].compute_ns);
			hyper_plan__graph_free(&a);
			hyper_plan__graph_free(&b);
		}
}

/* -m NAME and --config of the shipped file: one model, one graph. */
TEST_F_TIMEOUT(slow, model_by_name_is_the_shipped_config, 600)
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
 * Without $HYPER_PLAN_CONFIGS a program outside an installed tree (this
 * test's, in the build tree) finds no configs: no path of the sources is
 * compiled in.  The message says what to set.
 */
TEST(no_configs_outside_an_install_says_what_to_set)
{
	char got[600], names[600];
	struct model m;
	struct hp_err e;

	unsetenv("HYPER_PLAN_CONFIGS");
	ASSERT_NE(0, model_dir(got, sizeof(got), &e));
	EXPECT_NE(NULL, strstr(e.msg, "share/hyper-plan/configs is not a folder; set HYPER_PLAN_CONFIGS"))
		TH_LOG("%s", e.msg);
	EXPECT_NE(0, model_load("llama2-7b", &m, names, sizeof(names), &e));
	EXPECT_NE(NULL, strstr(e.msg, "set HYPER_PLAN_CONFIGS")) TH_LOG("%s", e.msg);
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

TEST_F_TIMEOUT(slow, every_family_plans_valid_schedules, 600)
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

			j.p = hyper_plan__profile_table[i % hyper_plan__profile_table_len];
			ASSERT_EQ(0, build(&j.g, shipped[i], train, &m, names,
					   sizeof(names), &e)) TH_LOG("%s", e.msg);
			ASSERT_EQ(0, hyper_plan__job_prepare(&j, false, &e)) TH_LOG("%s", e.msg);
			hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
			ASSERT_EQ(0, hyper_plan__run_policy(POL_PLAN, &pb, &r, &e))
				TH_LOG("%s %s: %s", shipped[i], train ? "train" : "infer", e.msg);
			EXPECT_EQ(0, hyper_plan__sched_check(&r.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
			EXPECT_LE(r.sim.peak, j.lf.peak0);
			hyper_plan__result_free(&r);
			hyper_plan__job_free(&j);
		}
}

static uint64_t bytes_of(const struct graph *g, const char *id)
{
	uint32_t t = hyper_plan__graph_tensor(g, id);

	return t == NONE ? 0 : g->t[t].bytes;
}

static bool op_reads_id(const struct graph *g, const char *op, const char *t)
{
	uint32_t o = hyper_plan__idmap_find(&g->omap, op), k;

	if (o == NONE)
		return false;
	for (k = 0; k < g->op[o].n_in; k++)
		if (!strcmp(g->t[op_in(g, &g->op[o])[k]].id, t))
			return true;
	return false;
}

TEST_F_TIMEOUT(slow, each_variant_shows_in_the_graph, 600)
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
	hyper_plan__graph_free(&g);
	/*
	 * falcon-7b: no gate, no second norm, the MLP reads the attention's
	 * norm (a LayerNorm: scale and bias); one KV head (multi_query)
	 */
	ASSERT_EQ(0, build(&g, "falcon-7b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(0, bytes_of(&g, "L0.w3"));
	EXPECT_EQ(0, bytes_of(&g, "L0.ffn_norm.w"));
	EXPECT_EQ(2ULL * 4544 * 2, bytes_of(&g, "L0.attn_norm.w"));
	EXPECT_EQ(4544ULL * 64 * 2, bytes_of(&g, "L0.wk"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.g_proj", "f.L0.xn"));
	EXPECT_NE(0, bytes_of(&g, "embed.w.grad"));
	hyper_plan__graph_free(&g);
	/* falcon-40b (new_decoder_architecture): the MLP's norm of its own */
	ASSERT_EQ(0, build(&g, "falcon-40b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(2ULL * 8192 * 2, bytes_of(&g, "L0.ffn_norm.w"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.g_proj", "f.L0.xn2"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.ffn_norm", "f.embed"));
	EXPECT_NE(0, bytes_of(&g, "L0.ffn_norm.w.grad"));
	hyper_plan__graph_free(&g);
	/* qwen2: biases of q, k and v; none of the output projection */
	ASSERT_EQ(0, build(&g, "qwen2.5-7b", false, &m, names, sizeof(names), &e));
	EXPECT_EQ(3585ULL * 3584 * 2, bytes_of(&g, "L0.wq"));
	EXPECT_EQ(3585ULL * 512 * 2, bytes_of(&g, "L0.wv"));
	EXPECT_EQ(3584ULL * 3584 * 2, bytes_of(&g, "L0.wo"));
	hyper_plan__graph_free(&g);
	/* gpt2: learned positions, biases everywhere, LayerNorms, tied */
	ASSERT_EQ(0, build(&g, "gpt2", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(1024ULL * 768 * 2, bytes_of(&g, "pos_embed.w"));
	EXPECT_TRUE(op_reads_id(&g, "f.embed", "pos_embed.w"));
	EXPECT_NE(0, bytes_of(&g, "pos_embed.w.grad"));
	EXPECT_EQ(769ULL * 3072 * 2, bytes_of(&g, "L0.w1"));
	EXPECT_EQ(3073ULL * 768 * 2, bytes_of(&g, "L0.w2"));
	EXPECT_EQ(2ULL * 768 * 2, bytes_of(&g, "final_norm.w"));
	EXPECT_EQ(0, bytes_of(&g, "lm_head.w"));
	/* a gradient and the optimizer's state cover the bias too */
	EXPECT_EQ(769ULL * 768 * 2, bytes_of(&g, "L0.wq.grad"));
	EXPECT_EQ(769ULL * 768 * 4, bytes_of(&g, "L0.wq.m"));
	hyper_plan__graph_free(&g);
	/* gemma2: a norm before and after each block (one tensor each) */
	ASSERT_EQ(0, build(&g, "gemma2-9b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(2ULL * 3584 * 2, bytes_of(&g, "L0.attn_norm.w"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.post_attn_norm", "f.L0.ay"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.post_ffn_norm", "f.L0.y"));
	EXPECT_TRUE(op_reads_id(&g, "b.L0.day", "f.L0.ay"));
	EXPECT_EQ(2ULL * 3584 * 2, bytes_of(&g, "L0.ffn_norm.w.grad"));
	EXPECT_EQ(3584ULL * 4096 * 2, bytes_of(&g, "L0.wq"));
	EXPECT_EQ(0, m.window);
	hyper_plan__graph_free(&g);
	/* olmoe: 64 experts, top 8, norms of q and of k */
	ASSERT_EQ(0, build(&g, "olmoe-1b-7b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(2048ULL * 2, bytes_of(&g, "L0.q_norm.w"));
	EXPECT_TRUE(op_reads_id(&g, "f.L0.attn", "L0.k_norm.w"));
	EXPECT_NE(0, bytes_of(&g, "L0.k_norm.w.grad"));
	EXPECT_EQ(2048ULL * 1024 * 2, bytes_of(&g, "L1.e63.w2"));
	EXPECT_EQ(64U, m.experts);
	EXPECT_EQ(8U, m.top_k);
	hyper_plan__graph_free(&g);
	/* qwen MoE: 1408-wide experts and a 5632-wide shared expert */
	ASSERT_EQ(0, build(&g, "qwen1.5-moe-a2.7b", true, &m, names, sizeof(names), &e));
	EXPECT_EQ(2048ULL * 1408 * 2, bytes_of(&g, "L0.e0.w1"));
	EXPECT_EQ(2048ULL * 5632 * 2, bytes_of(&g, "L0.shared.w3"));
	EXPECT_NE(0, bytes_of(&g, "L0.shared.w3.grad"));
	hyper_plan__graph_free(&g);
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
	hyper_plan__graph_init(&g, "w");
	ASSERT_EQ(0, gen_model(&g, &gp, &hyper_plan__profile_table[0], &e)) TH_LOG("%s", e.msg);
	/* d1 is position 200: it reaches back to 137, block 4 */
	EXPECT_FALSE(op_reads_id(&g, "d1.L0.attn", "L0.kv3"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.kv4"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.kv6"));
	hyper_plan__graph_free(&g);
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

TEST_F_TIMEOUT(slow, bad_configs_exact_messages, 600)
{
	static const struct {
		const char *json, *msg;	/* msg after "hyper-plan: PATH: " */
	} cases[] = {
		{ "{ \"hidden_size\": 4096, \"num_hiden_layers\": 2 }",
		  "unknown key \"num_hiden_layers\" for model_type llama: it may change the graph (Documentation/planner.md lists the keys read and those ignored)" },
		{ "{ \"hidden_size\": 4100, \"num_attention_heads\": 32 }",
		  "num_attention_heads (32) does not divide hidden_size (4100); give head_dim" },
		{ "{ \"num_attention_heads\": 32, \"num_key_value_heads\": 5 }",
		  "num_key_value_heads (5) does not divide num_attention_heads (32)" },
		{ "{ \"num_local_experts\": 8, \"num_experts_per_tok\": 65 }",
		  "num_experts_per_tok must be an integer in 0..64 (got 65)" },
		{ "{ \"num_local_experts\": 65537, \"num_experts_per_tok\": 6 }",
		  "num_local_experts must be an integer in 0..65536 (got 65537)" },
		{ "{ \"num_local_experts\": 4, \"num_experts_per_tok\": 5 }",
		  "num_experts_per_tok (5) must be in 1..num_local_experts (4), and experts at least 2" },
		{ "{ \"hidden_size\": -1 }",
		  "hidden_size must be an integer in 0..65536 (got -1)" },
		{ "{ \"vocab_size\": 0 }",
		  "hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, intermediate_size and vocab_size must be above 0" },
		{ "{ \"model_type\": \"gpt9\" }",
		  "unknown model_type \"gpt9\" (known: llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gemma2, falcon, phi3, gpt2, olmoe, deepseek_v2)" },
		/* keys that would change the graph, in what it would */
		{ "{ \"model_type\": \"falcon\", \"apply_residual_connection_post_layernorm\": true }",
		  "apply_residual_connection_post_layernorm = true is not modelled: it would change the residual: each block would add its norm's output, not its input (only false plans)" },
		{ "{ \"model_type\": \"deepseek_v2\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"moe_layer_freq\": 2 }",
		  "moe_layer_freq = 2 is not modelled: it would change which layers are MoE (every Nth) (only 1 plans)" },
		{ "{ \"quantization_config\": { \"bits\": 4 } }",
		  "quantization_config = { \"bits\": 4 } is not modelled: it would change every weight's bytes (quantized) (only null or 0 plans)" },
		{ "{ \"model_type\": \"qwen2_moe\", \"mlp_only_layers\": [ 3 ] }",
		  "mlp_only_layers = [ 3 ] is not modelled: it would change which layers are MoE (only [] plans)" },
		{ "{ \"model_type\": \"qwen2\", \"num_hidden_layers\": 4, \"use_sliding_window\": true, \"sliding_window\": 64, \"max_window_layers\": 2 }",
		  "max_window_layers = 2 with use_sliding_window is not modelled: it would change attention, windowed on layers 2.. only (0 windows every layer)" },
		/* a family's own key is unknown to the others */
		{ "{ \"model_type\": \"qwen2\", \"attention_bias\": false }",
		  "unknown key \"attention_bias\" for model_type qwen2: it may change the graph (Documentation/planner.md lists the keys read and those ignored)" },
		{ "{ \"n_embd\": 768 }",
		  "unknown key \"n_embd\" for model_type llama: it may change the graph (Documentation/planner.md lists the keys read and those ignored)" },
		{ "{ \"model_type\": \"deepseek_v2\", \"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"first_k_dense_replace\": 30 }",
		  "first_k_dense_replace (30) leaves no MoE layer of 30" },
		{ "{ \"hidden_act\": \"relu\" }",
		  "hidden_act must be \"silu\" or \"gelu\" (or a gelu variant)" },
		{ "{ \"tie_word_embeddings\": 1 }",
		  "tie_word_embeddings must be true or false" },
	};
	char out[2048], want[600], path[64];

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
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
	const struct profile *p0 = &hyper_plan__profile_table[0], *p1 = &hyper_plan__profile_table[1];
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
	hyper_plan__graph_write_json(&a, f);
	fclose(f);
	hyper_plan__graph_init(&b, "read");
	ASSERT_EQ(0, hyper_plan__graph_parse_json(&b, text, &e)) TH_LOG("%s", e.msg);
	EXPECT_STREQ(p0->name, b.timed_on);
	ASSERT_EQ(0, hyper_plan__graph_retime(&b, p1, &e)) TH_LOG("%s", e.msg);
	small(&gp, &m, false);
	hyper_plan__graph_init(&c, "direct");
	ASSERT_EQ(0, gen_model(&c, &gp, p1, &e));
	ASSERT_EQ(c.nop, b.nop);
	for (i = 0; i < c.nop; i++)
		EXPECT_EQ(c.op[i].compute_ns, b.op[i].compute_ns);
	EXPECT_STREQ(p1->name, b.timed_on);
	hyper_plan__graph_free(&b);
	hyper_plan__graph_free(&c);

	/* only compute_ns: kept on its own profile, refused on another */
	for (i = 0; i < a.nop; i++)
		a.op[i].flops = a.op[i].bytes = 0;
	EXPECT_EQ(0, hyper_plan__graph_retime(&a, p0, &e));
	EXPECT_NE(0, hyper_plan__graph_retime(&a, p1, &e));
	snprintf(want, sizeof(want), "graph \"mistral-7b\": %zu of its %zu operators carry only compute_ns, measured on %s: plan it with -p %s, or give them flops and bytes (graph-format.md)",
		 a.nop, a.nop, p0->name, p0->name);
	EXPECT_STREQ(want, e.msg);
	hyper_plan__graph_free(&a);
	free(text);
}

/* The parameters of @name's shipped config, drawn whole (bf16 weights). */
static int params_of(const char *name, uint64_t *params, struct model *m,
		     struct hp_err *e)
{
	char path[512], names[MODEL_NAMES_LEN];
	struct gen_params gp;
	struct graph g;
	size_t t;

	snprintf(path, sizeof(path), CONFIGS "%s.json", name);
	if (model_from_config(path, m, names, sizeof(names), e))
		return -1;
	gen_defaults(&gp, m);
	gp.seq = 16;
	gp.decode = 0;
	gp.kv_block = 16;
	hyper_plan__graph_init(&g, name);
	if (gen_model(&g, &gp, &hyper_plan__profile_table[0], e)) {
		hyper_plan__graph_free(&g);
		return -1;
	}
	*params = 0;
	for (t = 0; t < g.nt; t++)
		if (g.t[t].kind == HYPER_KIND_WEIGHT)
			*params += g.t[t].bytes / 2;
	hyper_plan__graph_free(&g);
	return 0;
}

/*
 * Each public config.json, drawn whole, holds exactly the parameters
 * worked out from it by hand below (V vocabulary, h hidden, L layers),
 * and its model card's published count within 1%.
 */
TEST_F_TIMEOUT(slow, public_configs_hold_their_published_parameter_counts, 600)
{
	static const struct {
		const char *config;
		uint64_t params;
	} exact[] = {
		/* 2·V·h + L·(h·(h + 2·1024 + h) + 3·h·14336 + 2h) + h */
		{ "llama3.1-8b", 8030261248ULL },
		/* the same sum at h 16384, L 126, ffn 53248 */
		{ "llama3.1-405b", 405853388800ULL },
		/* q, k, v biases: L·(h+1)·(3584 + 2·512) and so on */
		{ "qwen2.5-7b", 7615616512ULL },
		{ "qwen2.5-32b", 32763876352ULL },
		/* 8 experts of 3·6144·16384 and a router of 8 a layer */
		{ "mixtral-8x22b", 140620634112ULL },
		/* head_dim 128: q of 4096, not 5120 */
		{ "mistral-nemo", 12247782400ULL },
		/*
		 * L·((h+1)... no bias: h·(h + 2·64) + h² + 2·h·4h + 2h) +
		 * V·h + 2h: 6,921,720,704; the card's 7.22B counts the tied
		 * head (V·h = 295,469,056) again, as the checkpoint stores it
		 */
		{ "falcon-7b", 6921720704ULL },
		{ "phi3-mini", 3821079552ULL },
		/* four norms a layer, tied embeddings */
		{ "gemma2-9b", 9241705984ULL },
		/*
		 * MLA: h·16·192 + h·576 + 512 + 512·16·256 + 2048·h a layer;
		 * layer 0 dense (3·h·10944); 26 of 64 experts of 1408 and
		 * two shared (2816 wide), top-6
		 */
		{ "deepseek-v2-lite", 15706484224ULL },
		/* the card's exact figure */
		{ "gpt2", 124439808ULL },
		/* 64 experts of 3·2048·1024, q and k norms */
		{ "olmoe-1b-7b", 6919161856ULL },
		/*
		 * L·(4·h·4096 + 3·h·24576 + 2h) + V·h + h: 16 heads of 256,
		 * GeGLU, tied embeddings
		 */
		{ "gemma-7b", 8537680896ULL },
		/*
		 * L·(4h² + 3h + 60·3·h·1408 + 3·h·5632 + h + 60h + 2h) +
		 * 2·V·h + h: q, k, v biases; 60 experts, a shared expert and
		 * its gate, the router; untied head
		 */
		{ "qwen1.5-moe-a2.7b", 14315784192ULL },
	};
	unsigned int i, k;

	ASSERT_EQ(ARRAY_SIZE(exact), ARRAY_SIZE(published_models));
	for (i = 0; i < ARRAY_SIZE(exact); i++) {
		const struct published *p = NULL;
		uint64_t got;
		struct model m;
		struct hp_err e;

		for (k = 0; k < ARRAY_SIZE(published_models); k++)
			if (!strcmp(published_models[k].config, exact[i].config))
				p = &published_models[k];
		ASSERT_NE(NULL, p) TH_LOG("%s", exact[i].config);
		ASSERT_EQ(0, params_of(exact[i].config, &got, &m, &e))
			TH_LOG("%s: %s", exact[i].config, e.msg);
		EXPECT_EQ(exact[i].params, got) TH_LOG("%s", exact[i].config);
		EXPECT_LE(fabs((double)(got + p->twice) - p->params),
			  0.01 * p->params) TH_LOG("%s: %llu against %.4g",
						   exact[i].config,
						   (unsigned long long)got,
						   p->params);
	}
}

/* MLA: the cache keeps the latent; layer 0 dense; two shared experts. */
TEST_F_TIMEOUT(slow, deepseek_v2_latent_attention_is_drawn, 600)
{
	struct graph g;
	struct model m;
	struct hp_err e;
	char names[MODEL_NAMES_LEN];

	ASSERT_EQ(0, build(&g, "deepseek-v2-lite", false, &m, names,
			   sizeof(names), &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(512U, m.kv_lora);
	EXPECT_EQ(0U, m.q_lora);
	EXPECT_EQ(2U * 1408, m.shared_ffn);
	/* 32 tokens × (kv_lora 512 + rope 64), bf16: not 2 × 16 heads × 192 */
	EXPECT_EQ(32ULL * 576 * 2, bytes_of(&g, "L0.kv0"));
	EXPECT_EQ(2048ULL * 576 * 2, bytes_of(&g, "L0.wkv_a"));
	EXPECT_EQ(512ULL * 16 * 256 * 2, bytes_of(&g, "L0.wkv_b"));
	EXPECT_EQ(16ULL * 128 * 2048 * 2, bytes_of(&g, "L0.wo"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.wkv_b"));
	EXPECT_TRUE(op_reads_id(&g, "d1.L0.attn", "L0.kv2"));
	/* first_k_dense_replace 1: layer 0 dense, layer 1 MoE */
	EXPECT_EQ(2048ULL * 10944 * 2, bytes_of(&g, "L0.w1"));
	EXPECT_EQ(0, bytes_of(&g, "L0.router.w"));
	EXPECT_EQ(2048ULL * 64 * 2, bytes_of(&g, "L1.router.w"));
	EXPECT_EQ(2048ULL * 2816 * 2, bytes_of(&g, "L1.shared.w1"));
	hyper_plan__graph_free(&g);
	ASSERT_EQ(0, build(&g, "deepseek-v2-lite", true, &m, names,
			   sizeof(names), &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(512ULL * 16 * 256 * 4, bytes_of(&g, "L1.wkv_b.v"));
	EXPECT_EQ(512ULL * 2, bytes_of(&g, "L0.kv_a_norm.w.grad"));
	EXPECT_TRUE(op_reads_id(&g, "b.L1.dxn.kv.dx", "b.L1.dckv"));
	hyper_plan__graph_free(&g);
}

/* Writes @text to a temporary file named in @path (64 bytes). */
static void write_tmp(char *path, const char *text)
{
	int fd;

	strcpy(path, "/tmp/hyper-plan-json-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			path[0] = 0;
		close(fd);
	}
}

/* qwen2 windows only with use_sliding_window, from max_window_layers on. */
TEST(qwen2_windows_follow_use_sliding_window)
{
	static const struct {
		const char *keys;
		uint32_t window;
	} cases[] = {
		{ "\"sliding_window\": 64", 0 },
		{ "\"sliding_window\": 64, \"use_sliding_window\": true, \"max_window_layers\": 0", 64 },
		{ "\"sliding_window\": 64, \"use_sliding_window\": true, \"max_window_layers\": 4", 0 },
		/* Qwen2Config's default max_window_layers is 28 */
		{ "\"sliding_window\": 64, \"use_sliding_window\": true", 0 },
	};
	char path[64], cfg[512], names[MODEL_NAMES_LEN];
	struct model m;
	struct hp_err e;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(cfg, sizeof(cfg), "{ \"model_type\": \"qwen2\", \"num_hidden_layers\": 4, %s }",
			 cases[i].keys);
		write_tmp(path, cfg);
		ASSERT_EQ(0, model_from_config(path, &m, names, sizeof(names), &e))
			TH_LOG("%s", e.msg);
		unlink(path);
		EXPECT_EQ(cases[i].window, m.window) TH_LOG("%s", cases[i].keys);
	}
}

/* An empty or cut JSON file says so in words: configs and profiles. */
TEST(truncated_or_empty_json_says_so)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "empty: no JSON in it" },
		{ " \n\t", "empty: no JSON in it" },
		{ "{ \"hidden_size\": 4096, \"num_hid",
		  "truncated JSON: it ends (after 31 bytes) inside a value" },
		{ "{ \"hidden_size\": 4096 } }",
		  "trailing data after the JSON value, at line 1, column 25" },
		{ "{ \"hidden_size\": 40x6 }", "malformed JSON at line 1, column 20: number expected" },
	};
	char path[64], want[600], names[MODEL_NAMES_LEN];
	struct profile p;
	struct model m;
	struct hp_err e;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		write_tmp(path, cases[i].text);
		ASSERT_NE(0, path[0]);
		snprintf(want, sizeof(want), "%s: %s", path, cases[i].msg);
		EXPECT_NE(0, model_from_config(path, &m, names, sizeof(names), &e));
		EXPECT_STREQ(want, e.msg);
		EXPECT_NE(0, hyper_plan__profile_load(path, &p, &e));
		EXPECT_STREQ(want, e.msg);
		unlink(path);
	}
	/* a FIFO with no writer is refused, not waited on */
	strcpy(path, "/tmp/hyper-plan-fifo-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(path));
	strcat(path, "/f");
	ASSERT_EQ(0, mkfifo(path, 0600));
	snprintf(want, sizeof(want), "%s: not a regular file of at most 1 MiB", path);
	EXPECT_NE(0, hyper_plan__profile_load(path, &p, &e));
	EXPECT_STREQ(want, e.msg);
	unlink(path);
	*strrchr(path, '/') = 0;
	rmdir(path);
}

/* 128 and 256 experts (Qwen3, DeepSeek-V3 sizes) plan, top-8. */
TEST_F_TIMEOUT(slow, many_experts_plan, 600)
{
	static const unsigned int experts[] = { 128, 256 };
	char path[64], cfg[512], names[MODEL_NAMES_LEN];

	for (unsigned int i = 0; i < ARRAY_SIZE(experts); i++) {
		struct goal gl = { 0.01, 0 };
		struct gen_params gp;
		struct job j = { 0 };
		struct problem pb;
		struct result r;
		struct hp_err e;
		struct model m;

		snprintf(cfg, sizeof(cfg), "{ \"model_type\": \"qwen2_moe\", \"hidden_size\": 256, "
			 "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
			 "\"num_key_value_heads\": 2, \"intermediate_size\": 512, "
			 "\"moe_intermediate_size\": 64, \"shared_expert_intermediate_size\": 128, "
			 "\"vocab_size\": 1000, \"num_experts\": %u, \"num_experts_per_tok\": 8 }",
			 experts[i]);
		write_tmp(path, cfg);
		ASSERT_EQ(0, model_from_config(path, &m, names, sizeof(names), &e))
			TH_LOG("%s", e.msg);
		unlink(path);
		EXPECT_EQ(experts[i], m.experts);
		gen_defaults(&gp, &m);
		gp.mode = GEN_TRAIN;
		gp.seq = 256;
		j.p = hyper_plan__profile_table[0];
		hyper_plan__graph_init(&j.g, "many");
		ASSERT_EQ(0, gen_model(&j.g, &gp, &j.p, &e)) TH_LOG("%s", e.msg);
		/* every expert has weights; the last one too */
		snprintf(cfg, sizeof(cfg), "L1.e%u.w2", experts[i] - 1);
		EXPECT_EQ(64ULL * 256 * 2, bytes_of(&j.g, cfg));
		ASSERT_EQ(0, hyper_plan__job_prepare(&j, false, &e)) TH_LOG("%s", e.msg);
		hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
		ASSERT_EQ(0, hyper_plan__run_policy(POL_PLAN, &pb, &r, &e)) TH_LOG("%s", e.msg);
		EXPECT_EQ(0, hyper_plan__sched_check(&r.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
		hyper_plan__result_free(&r);
		hyper_plan__job_free(&j);
	}
}

/* DeepSeek-V2 (not Lite): the query through a latent of q_lora_rank. */
TEST_F_TIMEOUT(slow, deepseek_v2_query_latent_trains, 600)
{
	static const char cfg[] = "{ \"model_type\": \"deepseek_v2\", \"hidden_size\": 256, "
		"\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
		"\"intermediate_size\": 512, \"vocab_size\": 1000, "
		"\"kv_lora_rank\": 64, \"q_lora_rank\": 96, \"qk_nope_head_dim\": 32, "
		"\"qk_rope_head_dim\": 16, \"v_head_dim\": 32, \"n_routed_experts\": 8, "
		"\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "
		"\"n_shared_experts\": 1, \"first_k_dense_replace\": 1 }";
	char path[64], names[MODEL_NAMES_LEN];
	struct goal gl = { 0.01, 0 };
	struct gen_params gp;
	struct job j = { 0 };
	struct problem pb;
	struct result r;
	struct hp_err e;
	struct model m;

	write_tmp(path, cfg);
	ASSERT_EQ(0, model_from_config(path, &m, names, sizeof(names), &e))
		TH_LOG("%s", e.msg);
	unlink(path);
	gen_defaults(&gp, &m);
	gp.mode = GEN_TRAIN;
	gp.seq = 128;
	j.p = hyper_plan__profile_table[0];
	hyper_plan__graph_init(&j.g, "q-latent");
	ASSERT_EQ(0, gen_model(&j.g, &gp, &j.p, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(256ULL * 96 * 2, bytes_of(&j.g, "L0.wq_a"));
	EXPECT_EQ(96ULL * 4 * 48 * 2, bytes_of(&j.g, "L0.wq_b"));
	EXPECT_EQ(96ULL * 2, bytes_of(&j.g, "L1.q_a_norm.w.grad"));
	EXPECT_EQ(0, bytes_of(&j.g, "L0.wq"));
	EXPECT_TRUE(op_reads_id(&j.g, "b.L1.dxn.q.dx", "b.L1.dqa"));
	EXPECT_EQ(256ULL * 64 * 2, bytes_of(&j.g, "L1.shared.w1"));
	ASSERT_EQ(0, hyper_plan__job_prepare(&j, false, &e)) TH_LOG("%s", e.msg);
	hyper_plan__job_problem(&j, &pb, &gl, &j.g.mem);
	ASSERT_EQ(0, hyper_plan__run_policy(POL_PLAN, &pb, &r, &e)) TH_LOG("%s", e.msg);
	EXPECT_EQ(0, hyper_plan__sched_check(&r.s, &(struct hp_mem){ 0 }, &e)) TH_LOG("%s", e.msg);
	hyper_plan__result_free(&r);
	hyper_plan__job_free(&j);
}

/* Runs @cmd through sh; its stdout and stderr in @out. */
static int run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	return pclose(p);
}

/*
 * -v lists what the reader ignored, and why where it matters; gpt2's
 * learned table of 1024 positions refuses a longer context.
 */
TEST_F_TIMEOUT(slow, verbose_lists_ignored_keys, 600)
{
	char cmd[1024], out[4096];

	snprintf(cmd, sizeof(cmd), "%s -v -m gpt2 --layers 1 --seq 64 --decode 2 -q 2>&1",
		 HP_PLAN_BIN);
	EXPECT_EQ(0, run_cmd(cmd, out, sizeof(out))) TH_LOG("%s", out);
	/* the ignored keys, then each pass timed (passes/pipeline.c) */
	{
		static const char keys[] = "hyper-plan: gpt2: ignored, no effect on memory or compute: architectures, attn_pdrop, bos_token_id, embd_pdrop, eos_token_id, initializer_range, layer_norm_epsilon, n_ctx, resid_pdrop, summary_activation, summary_first_dropout, summary_proj_to_labels, summary_type, summary_use_proj, task_specific_params\nhyper-plan: pass deps ";

		EXPECT_EQ(0, strncmp(out, keys, sizeof(keys) - 1)) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "\nhyper-plan: search loop ")) TH_LOG("%s", out);
	}
	snprintf(cmd, sizeof(cmd), "%s -m gpt2 --layers 1 --seq 64 --decode 2 -q 2>&1",
		 HP_PLAN_BIN);
	EXPECT_EQ(0, run_cmd(cmd, out, sizeof(out)));
	EXPECT_STREQ("", out);
	snprintf(cmd, sizeof(cmd), "%s -v --config " CONFIGS "gemma2-9b.json --layers 1 --seq 64 --decode 2 -q 2>&1",
		 HP_PLAN_BIN);
	EXPECT_EQ(0, run_cmd(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "sliding_window (gemma2's every other layer: planned as global attention, an upper bound on the KV cache)"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "torch_dtype (the element size is --dtype)"));
	snprintf(cmd, sizeof(cmd), "%s -m gpt2 --layers 1 -q 2>&1", HP_PLAN_BIN);
	EXPECT_NE(0, run_cmd(cmd, out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: model gpt2 learned 1024 positions (n_positions): a context of 2080 tokens does not fit; shorten --seq or --decode\n",
		     out);
}

/*
 * The generators' names built from parts are the names their formats made
 * (the graph's identity, the schedules and every look-up depend on them),
 * truncated where snprintf() truncates: at HP_MAX_ID, within a number too.
 */
TEST(generator_names_are_their_formats)
{
	char lng[HP_MAX_ID + 8], id[HP_MAX_ID + 1], ref[2 * HP_MAX_ID];
	const char *pfx[] = { NULL, "", "p", "d3102", "f", lng + 2, lng + 60 };
	const char *name[] = { "attn", "q_norm.w", "", "e12.", lng + 110 };
	const char *tail[] = { NULL, "_proj", ".w", "w3" };
	const uint32_t l[] = { 0, 7, 31, 100, 4294967295u };
	unsigned int a, b, c, d;
	size_t n, m;

	memset(lng, 'x', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = 0;
	for (a = 0; a < ARRAY_SIZE(pfx); a++)
	for (b = 0; b < ARRAY_SIZE(l); b++)
	for (c = 0; c < ARRAY_SIZE(name); c++)
	for (d = 0; d < ARRAY_SIZE(tail); d++) {
		/* what snprintf() into HP_MAX_ID + 1 bytes keeps */
		if (pfx[a])
			snprintf(ref, sizeof(ref), "%s.L%u.%s%s", pfx[a], l[b],
				 name[c], tail[d] ? tail[d] : "");
		else
			snprintf(ref, sizeof(ref), "L%u.%s%s", l[b], name[c],
				 tail[d] ? tail[d] : "");
		ref[HP_MAX_ID] = 0;
		ASSERT_STREQ(ref, gb_lname(id, pfx[a], l[b], name[c], tail[d]));
	}
	/* "L<l>.kv<k>" as kv_blocks() makes it: a stem, then each number */
	for (m = 0; m <= HP_MAX_ID; m++) {
		lng[m] = 0;
		n = gb_cat(id, gb_cat(id, 0, lng), ".kv");
		for (b = 0; b < ARRAY_SIZE(l); b++) {
			snprintf(ref, sizeof(ref), "%s.kv%u", lng, l[b]);
			ref[HP_MAX_ID] = 0;
			ASSERT_EQ(strlen(ref), gb_cat_u(id, n, l[b]));
			ASSERT_STREQ(ref, id);
		}
		lng[m] = 'x';
	}
}

TEST_HARNESS_MAIN
