// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: each case gets a clear error naming the operator or tensor,
 * and hyper-plan exits non-zero.  Graph cases run through the parser and
 * the ordering pass, then through the CLI (the sanitized binary).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "graph/graph_json.h"
#include "job.h"
#include "plan_cases.h"

/* hyper-plan -m reads $HYPER_PLAN_CONFIGS: make sets it; by hand, the sources'. */
static void __attribute__((constructor)) configs_from_sources(void)
{
	plan_configs_from_sources();
}

#define HEAD	"{ \"format\": \"hyper-graph\", \"version\": 1, "

/* Parses and orders @json; returns the error text ("" if it passed). */
static const char *graph_error(const char *json, struct hp_err *e)
{
	struct job j = { 0 };
	int ret;

	e->msg[0] = 0;
	hyper_plan__graph_init(&j.g, "test");
	ret = hyper_plan__graph_parse_json(&j.g, json, e);
	if (!ret)
		ret = hyper_plan__job_prepare(&j, false, e);
	hyper_plan__job_free(&j);
	return ret ? e->msg : "";
}

/* Runs hyper-plan with @args; returns its exit status, output in @out. */
static int cli(const char *args, char *out, size_t len)
{
	char cmd[1024];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", HP_PLAN_BIN, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, len - n, p))
		n += strlen(out + n);
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The graph through the CLI: non-zero exit and the same names. */
static int cli_graph(const char *json, char *out, size_t len)
{
	char path[] = "/tmp/hyper-plan-test-XXXXXX", args[256];
	int fd = mkstemp(path), st;

	if (fd < 0 || write(fd, json, strlen(json)) != (ssize_t)strlen(json))
		return -1;
	close(fd);
	snprintf(args, sizeof(args), "--graph %s", path);
	st = cli(args, out, len);
	unlink(path);
	return st;
}

struct bad {
	const char *name, *json;
	const char *words[3];	/* all must be in the message */
};

static const struct bad bad_graphs[] = {
	{ "cycle",
	  HEAD "\"tensors\": [ { \"id\": \"x\", \"bytes\": 8, \"kind\": \"activation\" },"
	  " { \"id\": \"y\", \"bytes\": 8, \"kind\": \"activation\" } ],"
	  " \"ops\": [ { \"id\": \"a\", \"inputs\": [\"x\"], \"outputs\": [\"y\"] },"
	  " { \"id\": \"b\", \"inputs\": [\"y\"], \"outputs\": [\"x\"] } ] }",
	  { "cycle", "\"a\"", "\"b\"" } },
	{ "unknown tensor",
	  HEAD "\"tensors\": [ { \"id\": \"x\", \"bytes\": 8, \"kind\": \"weight\" } ],"
	  " \"ops\": [ { \"id\": \"mm\", \"inputs\": [\"x\", \"w9\"] } ] }",
	  { "\"mm\"", "unknown tensor \"w9\"" } },
	{ "duplicate op",
	  HEAD "\"tensors\": [ { \"id\": \"x\", \"bytes\": 8, \"kind\": \"weight\" } ],"
	  " \"ops\": [ { \"id\": \"op1\", \"inputs\": [\"x\"] }, { \"id\": \"op1\" } ] }",
	  { "duplicate id \"op1\"" } },
	{ "duplicate tensor",
	  HEAD "\"tensors\": [ { \"id\": \"w3\", \"bytes\": 8, \"kind\": \"weight\" },"
	  " { \"id\": \"w3\", \"bytes\": 9, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "duplicate id \"w3\"" } },
	{ "negative size",
	  HEAD "\"tensors\": [ { \"id\": \"w5\", \"bytes\": -4, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "\"w5\"", "bytes" } },
	{ "absurd size",
	  HEAD "\"tensors\": [ { \"id\": \"huge\", \"bytes\": 1125899906842624, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "\"huge\"", "bytes" } },
	/* the integers' one rule and words, libhyper's (util/json.c) */
	{ "size past 64 bits",
	  HEAD "\"tensors\": [ { \"id\": \"big\", \"bytes\": 18446744073709551616, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "tensor 0 (\"big\"): bytes must be an integer in 1..2^48 (got a value beyond 64 bits)" } },
	{ "size as a string",
	  HEAD "\"tensors\": [ { \"id\": \"s\", \"bytes\": \"12\", \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "tensor 0 (\"s\"): bytes must be an integer in 1..2^48 (got a string)" } },
	/* graph_json.c's get_id() and name_path(), tensors' and ops' alike */
	{ "tensor without an id",
	  HEAD "\"tensors\": [ { \"bytes\": 8, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "tensors[0]: missing \"id\"" } },
	{ "op without an id",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"a\" }, { \"compute_ns\": 1 } ] }",
	  { "ops[1]: missing \"id\"" } },
	{ "op id not a string",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": 7 } ] }",
	  { "ops[0]", "expected a string" } },
	{ "op named in what follows",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"a\" }, { \"id\": \"late\", \"compute_ns\": \"1\" } ] }",
	  { "op 1 (\"late\"): compute_ns" } },
	{ "tensors not an array",
	  HEAD "\"tensors\": { }, \"ops\": [ { \"id\": \"a\" } ] }",
	  { "tensors: expected an array, got object" } },
	{ "zero size",
	  HEAD "\"tensors\": [ { \"id\": \"nil\", \"bytes\": 0, \"kind\": \"kv\" } ], \"ops\": [ { \"id\": \"a\" } ] }",
	  { "\"nil\"", "bytes" } },
	{ "negative time",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"slow\", \"compute_ns\": -1 } ] }",
	  { "\"slow\"", "compute_ns" } },
	{ "absurd time",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"slow\", \"compute_ns\": 3600000000001 } ] }",
	  { "\"slow\"", "compute_ns" } },
	{ "fractional time",
	  HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"half\", \"compute_ns\": 1.5 } ] }",
	  { "\"half\"", "compute_ns" } },
	{ "read before written",
	  HEAD "\"tensors\": [ { \"id\": \"act\", \"bytes\": 8, \"kind\": \"activation\" } ],"
	  " \"ops\": [ { \"id\": \"use\", \"inputs\": [\"act\"] } ] }",
	  { "\"use\"", "\"act\"" } },
	{ "unknown key",
	  HEAD "\"tensors\": [ { \"id\": \"w\", \"bytes\": 8, \"kind\": \"weight\", \"sise\": 4 } ], \"ops\": [] }",
	  { "unknown key \"sise\"" } },
	{ "unknown kind",
	  HEAD "\"tensors\": [ { \"id\": \"w\", \"bytes\": 8, \"kind\": \"wieght\" } ], \"ops\": [] }",
	  { "\"wieght\"" } },
	{ "bad version",
	  "{ \"format\": \"hyper-graph\", \"version\": 2, \"tensors\": [], \"ops\": [] }",
	  { "version 2" } },
	{ "truncated",
	  HEAD "\"tensors\": [ { \"id\": \"w\" ", { "truncated JSON", "inside a value" } },
	{ "malformed",
	  HEAD "\"tensors\": [ { \"id\": \"w\" } ], \"ops\": x }", { "malformed JSON" } },
	{ "no operators",
	  HEAD "\"tensors\": [], \"ops\": [] }", { "no operators" } },
};

static void expect_words(struct __test_metadata *_metadata, const char *msg,
			 const struct bad *b)
{
	unsigned int w;

	for (w = 0; w < ARRAY_SIZE(b->words) && b->words[w]; w++)
		EXPECT_NE(NULL, strstr(msg, b->words[w]))
			TH_LOG("%s: \"%s\" not in: %s", b->name, b->words[w], msg);
}

TEST(bad_graphs_are_named)
{
	struct hp_err e;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_graphs); i++) {
		const char *msg = graph_error(bad_graphs[i].json, &e);

		EXPECT_NE(0, msg[0]) TH_LOG("%s was accepted", bad_graphs[i].name);
		expect_words(_metadata, msg, &bad_graphs[i]);
	}
}

/*
 * A graph the split parse refuses is parsed again whole to name the
 * fault; the graph's allocator (its count and the fail_at test hook that
 * plan_oom relies on) carries over that second parse.
 */
TEST(reparse_keeps_the_allocator)
{
	const uint64_t far = 1ULL << 40;
	struct hp_err e = { "" };
	struct graph g;
	uint64_t nr;

	ASSERT_EQ(0, hyper_plan__graph_init(&g, "test"));
	g.mem.fail_at = far;
	nr = g.mem.nr;
	ASSERT_NE(0, hyper_plan__graph_parse_json(&g, bad_graphs[1].json, &e));
	EXPECT_NE(NULL, strstr(e.msg, "unknown tensor")) TH_LOG("%s", e.msg);
	EXPECT_EQ(far, g.mem.fail_at);
	EXPECT_LT(nr, g.mem.nr);
	EXPECT_STREQ("test", g.name);
	hyper_plan__graph_free(&g);
}

/*
 * An empty, cut, malformed or over-long graph file says so in words,
 * exactly as a config or a profile does (hyper_plan__json_parse()), naming the
 * file; the same text in memory names "graph".  Never json-c's bare
 * "continue".
 */
TEST(truncated_or_empty_graph_says_so)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "", "empty: no JSON in it" },
		{ " \n\t", "empty: no JSON in it" },
		{ HEAD "\"tensors\": [ { \"id\": \"w\" ",
		  "truncated JSON: it ends (after 66 bytes) inside a value" },
		{ HEAD "\"tensors\": [], \"ops\": [ { \"id\": \"a\" } ] } }",
		  "trailing data after the JSON value, at line 1, column 84" },
		{ HEAD "\"tensors\": 4x }", "malformed JSON at line 1, column 54: number expected" },
	};
	char path[] = "/tmp/hyper-plan-test-XXXXXX", want[600];
	struct hp_err e;
	struct graph g;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t len = strlen(cases[i].text);
		int fd;

		strcpy(path, "/tmp/hyper-plan-test-XXXXXX");
		fd = mkstemp(path);
		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)len, write(fd, cases[i].text, len));
		close(fd);
		ASSERT_EQ(0, hyper_plan__graph_init(&g, "test"));
		snprintf(want, sizeof(want), "%s: %s", path, cases[i].msg);
		EXPECT_NE(0, hyper_plan__graph_load_json(&g, path, &e));
		EXPECT_STREQ(want, e.msg);
		hyper_plan__graph_free(&g);
		unlink(path);

		ASSERT_EQ(0, hyper_plan__graph_init(&g, "test"));
		snprintf(want, sizeof(want), "graph: %s", cases[i].msg);
		EXPECT_NE(0, hyper_plan__graph_parse_json(&g, cases[i].text, &e));
		EXPECT_STREQ(want, e.msg);
		hyper_plan__graph_free(&g);
	}
}

TEST(bad_graphs_fail_the_cli)
{
	char out[4096];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad_graphs); i++) {
		EXPECT_EQ(1, cli_graph(bad_graphs[i].json, out, sizeof(out)))
			TH_LOG("%s: %s", bad_graphs[i].name, out);
		expect_words(_metadata, out, &bad_graphs[i]);
	}
}

/* A forward reference without a cycle is fine: the order is resolved. */
TEST(forward_reference_is_ordered)
{
	struct hp_err e;

	EXPECT_STREQ("", graph_error(HEAD "\"tensors\": ["
		" { \"id\": \"x\", \"bytes\": 8, \"kind\": \"activation\" } ],"
		" \"ops\": [ { \"id\": \"use\", \"inputs\": [\"x\"] },"
		" { \"id\": \"make\", \"outputs\": [\"x\"] } ] }", &e));
}

TEST(budget_below_a_working_set)
{
	char out[4096];

	EXPECT_EQ(1, cli("--model llama2-7b --layers 1 --seq 16 --decode 1 --budget 1MiB",
			 out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "below the working set of op \"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "lm_head")) TH_LOG("%s", out);
}

TEST(unknown_model_and_profile)
{
	char out[4096];

	EXPECT_EQ(1, cli("--model llama9-1t", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "unknown model \"llama9-1t\"")) TH_LOG("%s", out);
	EXPECT_EQ(1, cli("--model llama2-7b --profile tpu-v9", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "unknown profile \"tpu-v9\"")) TH_LOG("%s", out);
}

TEST(absurd_generator_parameters)
{
	char out[4096];

	EXPECT_EQ(1, cli("--model llama2-7b --batch 0", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "batch")) TH_LOG("%s", out);
	EXPECT_EQ(1, cli("--model llama2-70b --seq 1048576 --batch 65536",
			 out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "bytes")) TH_LOG("%s", out);
}

TEST(bad_usage_exits_2)
{
	char out[4096];

	EXPECT_EQ(2, cli("--model llama2-7b --budget lots", out, sizeof(out)));
	EXPECT_EQ(2, cli("--model llama2-7b --graph x.json", out, sizeof(out)));
	EXPECT_EQ(2, cli("--slowdown -3 --model llama2-7b", out, sizeof(out)));
}

/*
 * A bad option value: one line naming the option, the value and what is
 * accepted, the pointer to --help, exit 2; never the whole usage.
 */
TEST(bad_option_values_exact_messages)
{
	static const struct {
		const char *args, *line;
	} cases[] = {
		{ "-m llama2-7b --budget 12XB",
		  "--budget: \"12XB\" is not a size (use e.g. 2GiB)" },
		{ "-m llama2-7b -b 0",
		  "--budget: \"0\" is not a size above 0 (use e.g. 2GiB)" },
		{ "-m llama2-7b --slowdown -3",
		  "--slowdown: \"-3\" is not a percentage in 0..1000 (use e.g. 5 for 5%)" },
		{ "-m llama2-7b --layers 0",
		  "--layers: \"0\" is not an integer in 1..1024 (leave --layers out for all the model's layers)" },
		{ "-m llama2-7b --batch 1e3",
		  "--batch: \"1e3\" is not an integer in 0..4294967295" },
		{ "-m llama2-7b --seed x",
		  "--seed: \"x\" is not an integer in 0..18446744073709551615" },
		{ "-m llama2-7b --dtype fp8",
		  "--dtype: \"fp8\" is not a dtype (use bf16 or fp32)" },
		{ "-m llama2-7b --mode pretrain",
		  "--mode: \"pretrain\" is not a mode (use infer or train)" },
		{ "-m llama2-7b --policy best",
		  "--policy: \"best\" is not a policy (use plan, none, distance or greedy)" },
	};
	char out[4096], want[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(want, sizeof(want),
			 "hyper-plan: %s\nTry 'hyper-plan --help'.\n",
			 cases[i].line);
		EXPECT_EQ(2, cli(cases[i].args, out, sizeof(out)))
			TH_LOG("%s", cases[i].args);
		EXPECT_STREQ(want, out);
	}
	EXPECT_EQ(2, cli("-m llama2-7b extra", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: unexpected argument \"extra\"\nTry 'hyper-plan --help'.\n", out);
	EXPECT_EQ(2, cli("-m llama2-7b -g x.json", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: give exactly one of --graph, --model and --config\nTry 'hyper-plan --help'.\n", out);
}

/* Writes @len bytes of @text to a temporary file named in @path. */
static int temp_file(char *path, const char *text, size_t len)
{
	int fd;

	strcpy(path, "/tmp/hyper-plan-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* Each bad input: its exact one-line message and exit status 1 (or 2). */
TEST(bad_input_exact_messages)
{
	char out[4096], args[512], path[64];

	EXPECT_EQ(1, cli("-g /dev/zero", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: /dev/zero: NUL byte at offset 0: not a JSON text\n", out);
	EXPECT_EQ(1, cli("-g /tmp", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: /tmp: is a directory, not a graph JSON file\n", out);
	EXPECT_EQ(2, cli("-m llama2-7b --layers 0", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: --layers: \"0\" is not an integer in 1..1024 (leave --layers out for all the model's layers)\nTry 'hyper-plan --help'.\n", out);

	static const char bad_utf8[] = HEAD "\"tensors\": [ { \"id\": \"w\xff\", \"bytes\": 8, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }";
	ASSERT_EQ(0, temp_file(path, bad_utf8, strlen(bad_utf8)));
	snprintf(args, sizeof(args), "-g %s", path);
	EXPECT_EQ(1, cli(args, out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: tensor 0: id is not valid UTF-8 (byte 1)\n", out);
	unlink(path);

	static const char nul_id[] = HEAD "\"tensors\": [ { \"id\": \"w\\u0000x\", \"bytes\": 8, \"kind\": \"weight\" } ], \"ops\": [ { \"id\": \"a\" } ] }";
	ASSERT_EQ(0, temp_file(path, nul_id, strlen(nul_id)));
	snprintf(args, sizeof(args), "-g %s", path);
	EXPECT_EQ(1, cli(args, out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: tensors[0]: id contains an escaped NUL (\\u0000)\n", out);
	unlink(path);
}

/* 65536 tensors of 2^48 bytes: their sum is 2^64, which wrapped to 0. */
TEST(sizes_that_overflow)
{
	size_t cap = 65536 * 80 + 256, n = 0, i;
	char *json = malloc(cap), out[4096], args[512], path[64];

	ASSERT_NE(NULL, json);
	n += snprintf(json + n, cap - n, HEAD "\"tensors\": [");
	for (i = 0; i < 65536; i++)
		n += snprintf(json + n, cap - n,
			      "%s{ \"id\": \"w%zu\", \"bytes\": 281474976710656, \"kind\": \"weight\" }",
			      i ? ", " : "", i);
	n += snprintf(json + n, cap - n, " ], \"ops\": [ { \"id\": \"a\", \"inputs\": [\"w0\"] } ] }");
	ASSERT_EQ(0, temp_file(path, json, n));
	snprintf(args, sizeof(args), "-g %s", path);
	EXPECT_EQ(1, cli(args, out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: tensor 4096 (\"w4096\"): the tensors' sizes add up to more than 2^60 bytes\n", out);
	unlink(path);
	free(json);
}

/* The default profile path is built in the buffer it is printed from. */
TEST(measure_profile_without_output)
{
	char out[4096], cmd[600], path[] = "/tmp/hyper-plan-prof-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	unlink(path);
	snprintf(cmd, sizeof(cmd), "HYPER_PLAN_PROFILE=%s %s --measure-profile 2>&1",
		 path, HP_PLAN_BIN);
	FILE *p = popen(cmd, "r");
	size_t n = p ? fread(out, 1, sizeof(out) - 1, p) : 0;

	ASSERT_NE(NULL, p);
	out[n] = 0;
	EXPECT_EQ(0, pclose(p)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, path)) TH_LOG("%s", out);
	EXPECT_EQ(0, access(path, R_OK));
	unlink(path);
}

/* --measure-profile's own options: refused with the fix, as libhyper says it. */
TEST(measure_profile_options)
{
	char out[4096];

	EXPECT_EQ(2, cli("--measure-profile --copy dma", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "hyper-plan: --copy wants default, uring, sqpoll or worker, not \"dma\"\n")) TH_LOG("%s", out);
	EXPECT_EQ(2, cli("--model llama2-7b --copy-cpu 1", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: --copy, --copy-cpu, --compute-cpu and --alone go with --measure-profile\n"
		     "Try 'hyper-plan --help'.\n", out);
	EXPECT_EQ(1, cli("--measure-profile -o - --compute-cpu 4096", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "hyper-plan: hyper_plan_measure_opts: compute CPU 4096 is not one this process may run on (this machine has CPUs 0 to ")) TH_LOG("%s", out);
	EXPECT_EQ(1, cli("--measure-profile -o - --copy uring --copy-cpu 0", out, sizeof(out)));
	EXPECT_STREQ("hyper-plan: measuring the link: the copy engine (hyper_copy_opts): workers, CPUs, nt_bytes and spin_ns are for the worker and sqpoll engines\n", out);
}

TEST(a_good_run_exits_0)
{
	char out[8192];

	EXPECT_EQ(0, cli("--model llama2-7b --layers 2 --seq 64 --decode 2 --compare -p gh200",
			 out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "bound")) TH_LOG("%s", out);
}

/* A row with no schedule under the budget still says whose row it is. */
TEST(a_row_without_a_schedule_keeps_its_name)
{
	char out[8192];
	const char *row;

	EXPECT_EQ(0, cli("--model llama2-7b --layers 2 --seq 64 --decode 2 --compare -p gh200 --budget 1GiB",
			 out, sizeof(out))) TH_LOG("%s", out);
	row = strstr(out, "   (no schedule meets the goal)");
	ASSERT_NE(NULL, row) TH_LOG("%s", out);
	while (row > out && row[-1] != '\n')
		row--;
	EXPECT_EQ(0, strncmp(row, "none ", 5)) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
