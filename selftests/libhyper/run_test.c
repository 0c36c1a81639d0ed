// SPDX-License-Identifier: GPL-2.0
/*
 * hyper-run end to end (the sanitized build): its report is right, and its
 * content checks fail loudly on a corrupted pool copy and on a transfer
 * that is used before it landed, and pass without the fault.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(run) {
	char dir[64];
	char out[96], err[96];
	struct json_object *report;
	char *stderr_text;
};

FIXTURE_SETUP(run)
{
	strcpy(self->dir, "/tmp/hyper-run-test-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->out, sizeof(self->out), "%s/out.json", self->dir);
	snprintf(self->err, sizeof(self->err), "%s/stderr", self->dir);
	self->report = NULL;
	self->stderr_text = NULL;
}

FIXTURE_TEARDOWN(run)
{
	char cmd[160];

	json_object_put(self->report);
	free(self->stderr_text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", self->dir);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Write @json (single quotes) to DIR/@name; returns the path in @path. */
static void write_sched(FIXTURE_DATA(run) *self, const char *name,
			const char *json, char *path, size_t len)
{
	char *j = sq(json);
	FILE *f;

	snprintf(path, len, "%s/%s", self->dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(j, f);
		fclose(f);
	}
	free(j);
}

/* Run hyper-run ARGS; returns its exit status, keeps report and stderr. */
static int run_tool(FIXTURE_DATA(run) *self, const char *args)
{
	char cmd[1024];
	int st;

	snprintf(cmd, sizeof(cmd), "%s -b shmem %s -o %s 2> %s", HYPER_RUN, args,
		 self->out, self->err);
	st = system(cmd);
	json_object_put(self->report);
	free(self->stderr_text);
	self->report = json_object_from_file(self->out);
	self->stderr_text = slurp(self->err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int64_t field(FIXTURE_DATA(run) *self, const char *k)
{
	struct json_object *v;

	if (!self->report || !json_object_object_get_ex(self->report, k, &v))
		return -1;
	return json_object_get_int64(v);
}

static int64_t check_field(FIXTURE_DATA(run) *self, const char *k)
{
	struct json_object *c, *v;

	if (!self->report || !json_object_object_get_ex(self->report, "checks", &c) ||
	    !json_object_object_get_ex(c, k, &v))
		return -1;
	return json_object_get_int64(v);
}

static int ok_field(FIXTURE_DATA(run) *self)
{
	struct json_object *v;

	return self->report && json_object_object_get_ex(self->report, "ok", &v) &&
	       json_object_get_boolean(v);
}

#define DOC	HYPER_SRCDIR "/Documentation/schedule-format.md"

/* The format document's example, pulled out with sed. */
static void doc_schedule(FIXTURE_DATA(run) *self, char *path, size_t len)
{
	char cmd[512];

	snprintf(path, len, "%s/doc.json", self->dir);
	snprintf(cmd, sizeof(cmd), "sed -n '/^```json$/,/^```$/p' %s | sed '1d;$d' > %s",
		 DOC, path);
	if (system(cmd))
		path[0] = '\0';
}

TEST_F(run, doc_example_report)
{
	char path[128], args[256];

	doc_schedule(self, path, sizeof(path));
	snprintf(args, sizeof(args), "-n 3 %s", path);
	ASSERT_EQ(0, run_tool(self, args)) TH_LOG("%s", self->stderr_text);
	ASSERT_TRUE(ok_field(self));
	EXPECT_EQ(6, field(self, "steps"));
	EXPECT_EQ(2752512, field(self, "validated_peak_bytes"));
	EXPECT_EQ(2752512, field(self, "peak_resident_bytes"));
	/* w0 + kv0 + w1 per iteration in, kv0 out. */
	EXPECT_EQ(3 * (1048576 + 524288 + 1048576), field(self, "bytes_prefetched"));
	EXPECT_EQ(3 * 524288, field(self, "bytes_stored"));
	EXPECT_EQ(3 * 5, check_field(self, "uses_checked"));
	EXPECT_EQ(3 * 500000, field(self, "compute_ns"));
	EXPECT_GE(field(self, "wall_ns"), 3 * 500000);
}

TEST_F(run, catches_corrupted_pool_copy)
{
	char path[128], args[256];

	doc_schedule(self, path, sizeof(path));
	snprintf(args, sizeof(args), "--inject corrupt:w1 %s", path);
	EXPECT_EQ(1, run_tool(self, args));
	EXPECT_FALSE(ok_field(self));
	ASSERT_NE(NULL, self->stderr_text);
	EXPECT_NE(NULL, strstr(self->stderr_text,
			       "step 1 (layer1): tensor \"w1\" byte 524288 is not generation 0: late or wrong transfer"))
		TH_LOG("%s", self->stderr_text);
}

/* 64 MiB prefetched in the step that uses it, nothing else to wait for. */
#define LATE "{" HDR "'tensors':[{'id':'big','bytes':67108864,'kind':'weight','home':'pool'}]," \
	"'steps':[{'op':'L0','before':[{'op':'prefetch','tensor':'big'}],'uses':['big']}]}"

TEST_F(run, catches_late_transfer)
{
	char path[128], args[256];

	write_sched(self, "late.json", LATE, path, sizeof(path));
	snprintf(args, sizeof(args), "-c none %s", path);
	ASSERT_EQ(0, run_tool(self, args)) TH_LOG("%s", self->stderr_text);
	EXPECT_EQ(67108864, check_field(self, "bytes_checked"));
	snprintf(args, sizeof(args), "-c none --inject nowait %s", path);
	EXPECT_EQ(1, run_tool(self, args));
	ASSERT_NE(NULL, self->stderr_text);
	EXPECT_NE(NULL, strstr(self->stderr_text, "step 0 (L0): tensor \"big\" byte "))
		TH_LOG("%s", self->stderr_text);
	EXPECT_NE(NULL, strstr(self->stderr_text, "late or wrong transfer"));
}

TEST_F(run, stores_carry_across_iterations)
{
	char path[128], args[256];

	/* kv is updated and written back each iteration; the next one must read that. */
	write_sched(self, "kv.json", "{" HDR "'tensors':["
		    "{'id':'kv','bytes':1000003,'kind':'kv','home':'pool'},"
		    "{'id':'x','bytes':4096,'kind':'activation','home':'device'}],'steps':["
		    "{'op':'a','compute_ns':100000,'before':[{'op':'prefetch','tensor':'kv'}],"
		    "'uses':['kv','x'],'defines':['kv'],'after':[{'op':'store','tensor':'kv'},"
		    "{'op':'detach','tensor':'kv'}]},"
		    "{'op':'b','before':[{'op':'prefetch','tensor':'kv'}],'uses':['kv'],"
		    "'after':[{'op':'detach','tensor':'kv'}]}]}", path, sizeof(path));
	snprintf(args, sizeof(args), "-n 4 -c touch %s", path);
	ASSERT_EQ(0, run_tool(self, args)) TH_LOG("%s", self->stderr_text);
	EXPECT_EQ(4 * 3, check_field(self, "uses_checked"));
	EXPECT_EQ(4 * 1000003, field(self, "bytes_stored"));
}

TEST_F(run, refuses_invalid_schedule)
{
	char path[128], args[256];

	write_sched(self, "bad.json", "{" HDR "'tensors':[{'id':'w','bytes':8,'kind':'kv','home':'pool'}],"
		    "'steps':[{'op':'L0','uses':['w']}]}", path, sizeof(path));
	snprintf(args, sizeof(args), "%s", path);
	EXPECT_EQ(2, run_tool(self, args));
	ASSERT_NE(NULL, self->stderr_text);
	EXPECT_NE(NULL, strstr(self->stderr_text,
			       "step 0 (L0): tensor \"w\" used while not resident"));
	EXPECT_EQ(2, run_tool(self, "--compute warp x.json"));
}

/*
 * A bad option value: one line naming the option, the value and what is
 * accepted, the pointer to --help, exit 2; never the whole usage.
 */
TEST_F(run, bad_option_values_exact_messages)
{
	static const struct {
		const char *args, *line;
	} cases[] = {
		{ "-d 12XB x.json",
		  "--device-bytes: \"12XB\" is not a size (use e.g. 2GiB)" },
		{ "--compute warp x.json",
		  "--compute: \"warp\" is not a compute mode (use spin, touch, gemm or none)" },
		{ "-n 0 x.json",
		  "--iterations: \"0\" is not an integer in 1..4294967295" },
		{ "-s -1 x.json",
		  "--compute-scale: \"-1\" is not a number of at least 0 (use e.g. 0.5)" },
		{ "--verify most x.json",
		  "--verify: \"most\" is not a check (use full or sample)" },
		{ "--copy-cpus 0,,1 x.json",
		  "--copy-cpus: \"0,,1\" is not a list of CPUs (use e.g. 1 or 0,1; at most 64)" },
		{ "--chunk-bytes 1.5M x.json",
		  "--chunk-bytes: \"1.5M\" is not a size (use e.g. 1MiB)" },
		{ "x.json y.json", "unexpected argument \"y.json\"" },
	};
	char want[512];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(want, sizeof(want),
			 "hyper-run: %s\nTry 'hyper-run --help'.\n",
			 cases[i].line);
		EXPECT_EQ(2, run_tool(self, cases[i].args))
			TH_LOG("%s", cases[i].args);
		ASSERT_NE(NULL, self->stderr_text);
		EXPECT_STREQ(want, self->stderr_text);
	}
}

TEST_F(run, kmod_without_the_module_says_how_to_load_it)
{
	char path[128], args[256];

	doc_schedule(self, path, sizeof(path));
	snprintf(args, sizeof(args), "-b kmod --device /nonexistent/hyper0 %s", path);
	EXPECT_EQ(1, run_tool(self, args));
	ASSERT_NE(NULL, self->stderr_text);
	EXPECT_STREQ("hyper-run: hyper_open: /nonexistent/hyper0: No such file or directory: "
		     "the hyper.ko module is not loaded; load it with \"modprobe hyper\" "
		     "(after make install) or \"insmod kmod/hyper.ko\" "
		     "(see Documentation/admin-guide.md), or run with -b shmem\n",
		     self->stderr_text);
}

TEST_F(run, missing_schedule_is_named_once)
{
	EXPECT_EQ(2, run_tool(self, "/nonexistent/s.json"));
	ASSERT_NE(NULL, self->stderr_text);
	EXPECT_STREQ("hyper-run: /nonexistent/s.json: No such file or directory\n",
		     self->stderr_text);
}

TEST_F(run, graph_of_refuses_another_graph_and_warns_when_unnamed)
{
	char doc[128], other[128], unnamed[128], args[512], want[1024];

	doc_schedule(self, doc, sizeof(doc));
	write_sched(self, "other.json", "{" HDR
		    "'graph':{'name':'g','hash':'fnv1a64:2e2b216aeb7fe542'},"
		    "'tensors':[{'id':'w','bytes':1024,'kind':'weight','home':'pool'}],"
		    "'steps':[]}", other, sizeof(other));
	write_sched(self, "unnamed.json", "{" HDR
		    "'tensors':[{'id':'w','bytes':1024,'kind':'weight','home':'pool'}],"
		    "'steps':[]}", unnamed, sizeof(unnamed));

	snprintf(args, sizeof(args), "--validate --graph-of %s %s", doc, doc);
	EXPECT_EQ(0, run_tool(self, args)) TH_LOG("%s", self->stderr_text);

	snprintf(args, sizeof(args), "--validate --graph-of %s %s", doc, other);
	EXPECT_EQ(2, run_tool(self, args));
	snprintf(want, sizeof(want),
		 "hyper-run: %s was planned for another graph: \"g\" (fnv1a64:2e2b216aeb7fe542), "
		 "not \"toy\" (fnv1a64:53539f36a02f04d9) of %s\n", other, doc);
	EXPECT_STREQ(want, self->stderr_text);

	snprintf(args, sizeof(args), "--validate --graph-of %s %s", doc, unnamed);
	EXPECT_EQ(0, run_tool(self, args));
	snprintf(want, sizeof(want),
		 "hyper-run: warning: %s does not say which graph it was planned for "
		 "(no \"graph\": {\"hash\": ...}); cannot check that it is for the graph of %s\n",
		 unnamed, doc);
	EXPECT_STREQ(want, self->stderr_text);
}

HYPER_TEST_MAIN
