// SPDX-License-Identifier: GPL-2.0
/*
 * Schedule loader and validator: the documented example and other good
 * schedules load with the right tables; every bad one is refused with the
 * error code and the message (step, tensor, rule or JSON path) it must have.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "libhyper/schedule.h"
#include "util/huge.h"

#define T(id, bytes, home) \
	"{'id':'" id "','bytes':" #bytes ",'kind':'weight','home':'" home "'}"

/* The JSON block of the format document, so that the example stays valid. */
static char *doc_example(void)
{
	FILE *f = fopen(HYPER_SRCDIR "/Documentation/schedule-format.md", "r");
	char line[512];
	size_t len = 0, cap = 1 << 16;
	char *buf = calloc(1, cap);
	int in = 0;

	if (!f || !buf)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!in && !strncmp(line, "```json", 7)) {
			in = 1;
			continue;
		}
		if (in && !strncmp(line, "```", 3))
			break;
		if (in && len + strlen(line) < cap) {
			memcpy(buf + len, line, strlen(line));
			len += strlen(line);
		}
	}
	fclose(f);
	return buf;
}

TEST(doc_example_loads)
{
	struct hyper_schedule_info info;
	struct hyper_tensor_info ti;
	struct hyper_step_info si;
	struct hyper_schedule *s;
	char err[256];
	char *json = doc_example();
	int w0, kv0, x1;

	ASSERT_NE(NULL, json);
	ASSERT_EQ(0, hyper_schedule_parse(json, strlen(json), &s, err, sizeof(err)))
		TH_LOG("%s", err);
	free(json);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_STREQ("toy: two layers, weights in the pool", info.name);
	EXPECT_EQ(5, info.nr_tensors);
	EXPECT_EQ(2, info.nr_steps);
	EXPECT_EQ(3145728, info.budget_bytes);
	EXPECT_TRUE(info.flags & HYPER_SCHED_BUDGET);
	/* The replayed peak must be what the planner predicted. */
	EXPECT_EQ(2752512, info.peak_device_bytes);
	EXPECT_EQ(info.pred_peak_device_bytes, info.peak_device_bytes);
	EXPECT_EQ(500000, info.pred_makespan_ns);
	EXPECT_EQ(500000, info.total_compute_ns);
	/* The graph it was planned for, its hash checked against the content. */
	EXPECT_STREQ("toy", info.graph_name);
	EXPECT_STREQ("fnv1a64:53539f36a02f04d9", info.graph_hash);

	w0 = hyper_schedule_find(s, "w0");
	kv0 = hyper_schedule_find(s, "kv0");
	x1 = hyper_schedule_find(s, "x1");
	EXPECT_EQ(0, w0);
	EXPECT_EQ(4, kv0);
	EXPECT_EQ(3, x1);
	EXPECT_EQ(-ENOENT, hyper_schedule_find(s, "w9"));

	ASSERT_EQ(0, hyper_schedule_tensor(s, kv0, &ti));
	EXPECT_STREQ("kv0", ti.id);
	EXPECT_EQ(524288, ti.bytes);
	EXPECT_EQ(HYPER_KIND_KV, ti.kind);
	EXPECT_EQ(HYPER_HOME_POOL, ti.home);
	EXPECT_EQ(HYPER_TENSOR_NEEDS_POOL | HYPER_TENSOR_NEEDS_DEVICE, ti.flags);
	ASSERT_EQ(0, hyper_schedule_tensor(s, x1, &ti));
	EXPECT_EQ(HYPER_TENSOR_NEEDS_DEVICE, ti.flags);

	ASSERT_EQ(0, hyper_schedule_step(s, 0, &si));
	EXPECT_STREQ("layer0", si.op);
	EXPECT_EQ(250000, si.compute_ns);
	ASSERT_EQ(3, si.nr_before);
	EXPECT_EQ(HYPER_OP_PREFETCH, si.before[1].op);
	EXPECT_EQ(kv0, si.before[1].tensor);
	ASSERT_EQ(3, si.nr_uses);
	EXPECT_EQ(w0, si.uses[0]);
	ASSERT_EQ(2, si.nr_defines);
	EXPECT_EQ(x1, si.defines[0]);
	ASSERT_EQ(2, si.nr_after);
	EXPECT_EQ(HYPER_OP_STORE, si.after[1].op);
	EXPECT_EQ(0, si.flags & HYPER_STEP_GEMM);

	EXPECT_EQ(-ERANGE, hyper_schedule_step(s, 2, &si));
	EXPECT_EQ(-ERANGE, hyper_schedule_tensor(s, 5, &ti));
	hyper_schedule_free(s);
}

TEST(empty)
{
	struct hyper_schedule_info info;
	struct hyper_schedule *s;

	ASSERT_EQ(0, parse_sq("{" HDR "'tensors':[],'steps':[]}", &s, NULL, 0));
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_EQ(0, info.nr_tensors);
	EXPECT_EQ(0, info.nr_steps);
	EXPECT_EQ(0, info.peak_device_bytes);
	EXPECT_STREQ("", info.name);
	EXPECT_EQ(0, info.flags);
	hyper_schedule_free(s);
}

/*
 * hyper_schedule_get() is another reference to the same schedule: it
 * stays readable after the first owner frees its own (ASan would see a
 * use after free), and the last free releases it (or LeakSanitizer
 * complains).
 */
TEST(get_another_reference)
{
	struct hyper_schedule_info info;
	struct hyper_schedule *s, *again;

	ASSERT_EQ(0, parse_sq("{" HDR "'tensors':[],'steps':[]}", &s, NULL, 0));
	again = hyper_schedule_get(s);
	EXPECT_EQ(s, again);
	hyper_schedule_free(s);
	ASSERT_EQ(0, hyper_schedule_info(again, &info));
	EXPECT_EQ(0, info.nr_steps);
	hyper_schedule_free(again);
	EXPECT_EQ(NULL, hyper_schedule_get(NULL));
}

TEST(extension_keys)
{
	struct hyper_step_info si;
	struct hyper_schedule *s;
	char err[256];

	ASSERT_EQ(0, parse_sq("{" HDR "'x-planner':{'pass':'refine','v':2},"
			      "'tensors':[{'id':'a','bytes':64,'kind':'activation','home':'none','x-origin':'L0'}],"
			      "'steps':[{'op':'mm','compute_ns':7,'defines':['a'],"
			      "'x-gemm':{'m':128,'n':64,'k':32,'dtype':'f32'},"
			      "'after':[{'op':'detach','tensor':'a','x-why':'dead'}]},"
			      "{'op':'bad-gemm','x-gemm':{'m':-1,'n':1,'k':1}}],"
			      "'predicted':{'stall_ns':0,'x-note':1}}",
			      &s, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("{\"pass\":\"refine\",\"v\":2}",
		     hyper_schedule_ext(s, HYPER_EXT_SCHEDULE, 0, "x-planner"));
	EXPECT_STREQ("\"L0\"", hyper_schedule_ext(s, HYPER_EXT_TENSOR, 0, "x-origin"));
	EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_TENSOR, 1, "x-origin"));
	EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_SCHEDULE, 0, "x-none"));
	EXPECT_NE(NULL, hyper_schedule_ext(s, HYPER_EXT_STEP, 0, "x-gemm"));

	ASSERT_EQ(0, hyper_schedule_step(s, 0, &si));
	EXPECT_EQ(7, si.compute_ns);
	ASSERT_TRUE(si.flags & HYPER_STEP_GEMM);
	EXPECT_EQ(128, si.gemm_m);
	EXPECT_EQ(64, si.gemm_n);
	EXPECT_EQ(32, si.gemm_k);
	/* x- keys are not validated: a bad shape only means "no GEMM". */
	ASSERT_EQ(0, hyper_schedule_step(s, 1, &si));
	EXPECT_EQ(0, si.flags & HYPER_STEP_GEMM);
	EXPECT_STREQ("{\"m\":-1,\"n\":1,\"k\":1}",
		     hyper_schedule_ext(s, HYPER_EXT_STEP, 1, "x-gemm"));
	hyper_schedule_free(s);

	/* Kept by index beside the tensors and steps: only the last has any. */
	ASSERT_EQ(0, parse_sq("{" HDR "'tensors':[" T("a", 64, "device") ","
			      "{'id':'b','bytes':64,'kind':'weight','home':'device','x-origin':'L1','x-n':2}],"
			      "'steps':[{'op':'u','uses':['a']},{'op':'v','uses':['b'],'x-k':[1]}]}",
			      &s, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_TENSOR, 0, "x-origin"));
	EXPECT_STREQ("\"L1\"", hyper_schedule_ext(s, HYPER_EXT_TENSOR, 1, "x-origin"));
	EXPECT_STREQ("2", hyper_schedule_ext(s, HYPER_EXT_TENSOR, 1, "x-n"));
	EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_STEP, 0, "x-k"));
	EXPECT_STREQ("[1]", hyper_schedule_ext(s, HYPER_EXT_STEP, 1, "x-k"));
	EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_STEP, 2, "x-k"));
	hyper_schedule_free(s);
}

/* A GEMM shape is kept whole up to 2^32-1, parsed or handed over. */
TEST(gemm_shape_kept_whole)
{
	struct hyper_step_info si, in = {
		.op = "mm", .flags = HYPER_STEP_GEMM,
		.gemm_m = UINT32_MAX, .gemm_n = 65537, .gemm_k = 3,
	};
	struct hyper_schedule_info info = { .nr_steps = 1 };
	struct hyper_schedule *s;
	char err[256];

	ASSERT_EQ(0, parse_sq("{" HDR "'tensors':[],'steps':["
			      "{'op':'a','x-gemm':{'m':4294967295,'n':65537,'k':3}},"
			      "{'op':'b','x-gemm':{'m':4294967296,'n':1,'k':1}}]}",
			      &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_step(s, 0, &si));
	ASSERT_TRUE(si.flags & HYPER_STEP_GEMM);
	EXPECT_EQ(UINT32_MAX, si.gemm_m);
	EXPECT_EQ(65537, si.gemm_n);
	EXPECT_EQ(3, si.gemm_k);
	ASSERT_EQ(0, hyper_schedule_step(s, 1, &si));
	EXPECT_EQ(0, si.flags & HYPER_STEP_GEMM);
	hyper_schedule_free(s);

	ASSERT_EQ(0, hyper_schedule_new(&info, NULL, &in, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_step(s, 0, &si));
	ASSERT_TRUE(si.flags & HYPER_STEP_GEMM);
	EXPECT_EQ(UINT32_MAX, si.gemm_m);
	EXPECT_EQ(65537, si.gemm_n);
	EXPECT_EQ(3, si.gemm_k);
	hyper_schedule_free(s);

	in.gemm_m = (uint64_t)UINT32_MAX + 1;
	EXPECT_EQ(-EINVAL, hyper_schedule_new(&info, NULL, &in, &s, err,
					      sizeof(err)));
	EXPECT_STREQ("steps[0]: a GEMM shape wants m, n, k in 1..2^32-1", err);
}

/*
 * @nt tensor ids in @ids, each @len characters ("t<t>." then @fill) and
 * its NUL, @len + 1 bytes apart: tens of MB of them for the pool to
 * copy.  @ti[t] names the t-th, a weight of 4 KiB on the device.
 */
static void long_ids(char *ids, struct hyper_tensor_info *ti,
		     unsigned int nt, unsigned int len, char fill)
{
	for (unsigned int t = 0; t < nt; t++) {
		char *id = ids + (size_t)t * (len + 1);

		memset(id, fill, len);
		id[snprintf(id, len, "t%u.", t)] = fill;
		id[len] = '\0';
		ti[t] = (struct hyper_tensor_info){
			.id = id, .bytes = 4096, .kind = HYPER_KIND_WEIGHT,
			.home = HYPER_HOME_DEVICE,
		};
	}
}

/*
 * hyper_schedule_new() copies ids, names and lists into its pool.  A
 * schedule with tens of MB of them keeps every one, and nearly all of
 * the pool is in chunks large enough for huge pages: in chunks of 1 MiB
 * a million-step schedule faulted it in 4 KiB at a time.
 */
TEST(schedule_new_pool_on_huge_chunks)
{
	enum { NT = 200000, NS = 100000, ID = 100 };
	struct hyper_schedule_info info = {
		.name = "big", .nr_tensors = NT, .nr_steps = NS,
	};
	struct hyper_tensor_info *ti = calloc(NT, sizeof(*ti));
	struct hyper_step_info *si = calloc(NS, sizeof(*si)), got;
	uint32_t *uses = malloc(2 * NS * sizeof(*uses));
	char *ids = malloc((size_t)NT * (ID + 1)), (*ops)[24], err[256];
	size_t small = 0, nr_chunks = 0;
	const struct hs_chunk *c;
	struct hyper_schedule *s;

	ops = malloc(NS * sizeof(*ops));
	ASSERT_TRUE(ti && si && uses && ids && ops);
	long_ids(ids, ti, NT, ID, 'x');
	for (uint32_t i = 0; i < NS; i++) {
		snprintf(ops[i], sizeof(ops[i]), "op.%u", i);
		uses[2 * i] = i;
		uses[2 * i + 1] = NT - 1 - i;
		si[i] = (struct hyper_step_info){
			.op = ops[i], .compute_ns = 1000,
			.uses = uses + 2 * i, .nr_uses = 2,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (uint32_t t = 0; t < NT; t++)
		ASSERT_EQ((int)t, hyper_schedule_find(s, ti[t].id));
	for (uint32_t i = 0; i < NS; i++) {
		ASSERT_EQ(0, hyper_schedule_step(s, i, &got));
		ASSERT_STREQ(ops[i], got.op);
		ASSERT_EQ(2, got.nr_uses);
		ASSERT_EQ(i, got.uses[0]);
		ASSERT_EQ(NT - 1 - i, got.uses[1]);
	}
	for (c = s->pool; c; c = c->next) {
		nr_chunks++;
		if (c->cap < HU_HUGE_MIN)
			small += c->cap;
	}
	/* about 30 MB: chunks doubling from 4 KiB, then 16 MiB each */
	EXPECT_GE(16, nr_chunks);
	EXPECT_GT(HU_HUGE_MIN, small);
	hyper_schedule_free(s);
	free(ti);
	free(si);
	free(uses);
	free(ids);
	free(ops);
}

/*
 * A schedule from hyper_schedule_new() holds its tensors, steps and id
 * hash as parts of one block on a 2 MiB bound, and its pool in one
 * chunk of whole huge pages, sized from the counts: apart, or in chunks
 * doubling from 4 KiB, each was faulted 4 KiB at a time.  The parts do
 * not overlap: every tensor and step reads back, every id is found.
 */
TEST(schedule_new_arrays_in_one_block)
{
	enum { NT = 60000, NS = 30000 };
	struct hyper_schedule_info info = {
		.name = "block", .nr_tensors = NT, .nr_steps = NS,
	};
	struct hyper_tensor_info *ti = calloc(NT, sizeof(*ti));
	struct hyper_step_info *si = calloc(NS, sizeof(*si)), got;
	uint32_t *uses = malloc(NS * sizeof(*uses));
	char (*ids)[16] = malloc(NT * sizeof(*ids)), err[256];
	struct hyper_schedule *s;
	const char *b;

	ASSERT_TRUE(ti && si && uses && ids);
	for (uint32_t t = 0; t < NT; t++) {
		snprintf(ids[t], sizeof(ids[t]), "t%u", t);
		ti[t] = (struct hyper_tensor_info){
			.id = ids[t], .bytes = 4096 + t, .kind = HYPER_KIND_WEIGHT,
			.home = HYPER_HOME_DEVICE,
		};
	}
	for (uint32_t i = 0; i < NS; i++) {
		uses[i] = 2 * i;
		si[i] = (struct hyper_step_info){
			.op = ids[i], .compute_ns = i, .uses = uses + i,
			.nr_uses = 1,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	b = s->block;
	ASSERT_TRUE(b != NULL);
	EXPECT_EQ(0, (uintptr_t)b % HU_HUGE_PAGE);
	EXPECT_TRUE((const char *)s->tensors >= b);
	EXPECT_TRUE((const char *)(s->tensors + NT) <= (const char *)s->steps);
	EXPECT_TRUE((const char *)(s->steps + NS) <= (const char *)s->hash);
	/* about 1.2 MB of ids, names and lists: the first chunk holds them */
	ASSERT_TRUE(s->pool != NULL);
	EXPECT_TRUE(s->pool->next == NULL);
	EXPECT_EQ(0, (uintptr_t)s->pool % HU_HUGE_PAGE);
	EXPECT_EQ(hu_block_size(sizeof(*s->pool) + s->pool->cap),
		  sizeof(*s->pool) + s->pool->cap);
	for (uint32_t t = 0; t < NT; t++) {
		ASSERT_EQ((int)t, hyper_schedule_find(s, ids[t]));
		ASSERT_EQ(4096 + t, s->tensors[t].bytes);
	}
	for (uint32_t i = 0; i < NS; i++) {
		ASSERT_EQ(0, hyper_schedule_step(s, i, &got));
		ASSERT_STREQ(ids[i], got.op);
		ASSERT_EQ(i, got.compute_ns);
		ASSERT_EQ(1, got.nr_uses);
		ASSERT_EQ(2 * i, got.uses[0]);
	}
	hyper_schedule_free(s);
	free(ti);
	free(si);
	free(uses);
	free(ids);
}

/*
 * hyper_schedule_new() takes its tensor and step arrays uncleared and
 * sets each element whole.  Over memory left dirty (a freed block of
 * the same size, or the sanitizer's fill), a field it did not set shows:
 * offsets counted where none were given fail the layout, and a list
 * left empty, a flag or an extension key reads back as garbage.
 */
TEST(schedule_new_sets_every_field)
{
	enum { NT = 3, NS = 3 };
	struct hyper_schedule_info info = { .nr_tensors = NT, .nr_steps = NS };
	struct hyper_tensor_info ti[NT], got_t;
	struct hyper_step_info si[NS], got;
	static const uint32_t x[] = { 0 }, w[] = { 1 }, y[] = { 2 };
	const struct hyper_cop pre[] = { { HYPER_OP_PREFETCH, 1 } };
	const char *ids[NT] = { "x", "w", "y" };
	struct hyper_schedule *s;
	size_t sizes[] = { NT * sizeof(struct hs_tensor),
			   NS * sizeof(struct hs_step) };
	char err[256];

	for (int i = 0; i < NT; i++)
		ti[i] = (struct hyper_tensor_info){
			.id = ids[i], .bytes = 4096, .kind = HYPER_KIND_WEIGHT,
			.home = i == 1 ? HYPER_HOME_POOL : HYPER_HOME_NONE,
		};
	si[0] = (struct hyper_step_info){ .op = "a", .defines = x, .nr_defines = 1 };
	si[1] = (struct hyper_step_info){ .op = "b", .before = pre, .nr_before = 1,
					  .uses = w, .nr_uses = 1 };
	si[2] = (struct hyper_step_info){ .op = "c", .uses = x, .nr_uses = 1,
					  .defines = y, .nr_defines = 1 };
	for (unsigned int i = 0; i < ARRAY_SIZE(sizes); i++) {
		void *dirty = malloc(sizes[i]);

		ASSERT_TRUE(dirty != NULL);
		memset(dirty, 0xa5, sizes[i]);
		free(dirty);
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (int i = 0; i < NT; i++) {
		ASSERT_EQ(0, hyper_schedule_tensor(s, i, &got_t));
		EXPECT_EQ(i == 1 ? HYPER_TENSOR_NEEDS_POOL | HYPER_TENSOR_NEEDS_DEVICE :
			  HYPER_TENSOR_NEEDS_DEVICE, got_t.flags);
		EXPECT_EQ(1, got_t.nr_arena_offsets);
		EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_TENSOR, i, "x-a"));
	}
	for (int i = 0; i < NS; i++) {
		ASSERT_EQ(0, hyper_schedule_step(s, i, &got));
		EXPECT_EQ(0, got.flags);
		EXPECT_EQ(0, got.gemm_m | got.gemm_n | got.gemm_k);
		EXPECT_EQ(NULL, got.after);
		EXPECT_EQ(0, got.nr_after);
		EXPECT_EQ(i == 1, got.before != NULL);
		EXPECT_EQ(i != 1, got.defines != NULL);
		EXPECT_EQ(NULL, hyper_schedule_ext(s, HYPER_EXT_STEP, i, "x-a"));
	}
	hyper_schedule_free(s);
}

/*
 * @n tensors (or with @steps steps) of @size bytes from @src, through
 * @buf, which is left dirty for the next piece.
 */
static int add_piece(struct hyper_schedule_builder *b, void *buf,
		     const void *src, size_t size, uint32_t n, bool steps,
		     char *err, size_t len)
{
	int ret;

	memcpy(buf, src, n * size);
	ret = steps ? hyper_schedule_add_steps(b, buf, n, err, len) :
		      hyper_schedule_add_tensors(b, buf, n, err, len);
	memset(buf, 0xa5, n * size);
	return ret;
}

/*
 * hyper_schedule_begin() and the adds after it make what
 * hyper_schedule_new() makes from the same structures, in pieces of
 * any size through one buffer the caller fills again after each call:
 * every piece is copied and numbered on from the pieces before it, and
 * a step may name a tensor of a piece still to come.  A
 * duplicate id across pieces names its first tensor by that number;
 * more tensors or steps than the info gave, or fewer at the end, are
 * refused, and a failed builder stays failed.
 */
TEST(schedule_built_in_pieces)
{
	enum { NT = 37, NS = 36 };
	struct hyper_schedule_info info = {
		.name = "pieces", .nr_tensors = NT, .nr_steps = NS,
		.flags = HYPER_SCHED_ARENA, .arena_bytes = 4 * 4096,
	};
	struct hyper_tensor_info ti[NT], buf_t[NT], a, b;
	struct hyper_step_info si[NS], buf_s[NS], x, y;
	struct hyper_cop cops[NS][2];
	uint32_t uses[NS], defs[NS];
	uint64_t off[NT];
	char ids[NT][16], ops[NS][16], err[256];
	struct hyper_schedule *whole, *s;
	struct hyper_schedule_builder *bl;
	uint32_t piece, at, n;

	for (uint32_t t = 0; t < NT; t++) {
		snprintf(ids[t], sizeof(ids[t]), "t%u", t);
		off[t] = (t % 2) * 4096;
		ti[t] = (struct hyper_tensor_info){
			.id = ids[t], .bytes = 100 + t,
			.kind = t ? HYPER_KIND_ACTIVATION : HYPER_KIND_WEIGHT,
			.home = t ? HYPER_HOME_NONE : HYPER_HOME_POOL,
			.arena_offsets = &off[t], .nr_arena_offsets = 1,
		};
	}
	/* step i defines tensor i + 1 from tensor i, then detaches tensor i */
	for (uint32_t i = 0; i < NS; i++) {
		snprintf(ops[i], sizeof(ops[i]), "op%u", i);
		uses[i] = i;
		defs[i] = i + 1;
		cops[i][0] = (struct hyper_cop){ HYPER_OP_PREFETCH, 0 };
		cops[i][1] = (struct hyper_cop){ HYPER_OP_DETACH, i };
		si[i] = (struct hyper_step_info){
			.op = ops[i], .compute_ns = 10 + i,
			.before = cops[i], .nr_before = !i,
			.after = cops[i] + 1, .nr_after = 1,
			.uses = &uses[i], .nr_uses = 1,
			.defines = &defs[i], .nr_defines = 1,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &whole, err, sizeof(err)))
		TH_LOG("%s", err);
	for (piece = 1; piece <= NT; piece++) {
		ASSERT_EQ(0, hyper_schedule_begin(&info, &bl, err, sizeof(err)));
		/* a piece of tensors, then one of steps, while either is left */
		for (at = 0; at < NT; at += piece) {
			n = NT - at < piece ? NT - at : piece;
			ASSERT_EQ(0, add_piece(bl, buf_t, ti + at, sizeof(*ti), n,
					       false, err, sizeof(err)))
				TH_LOG("%s", err);
			n = at >= NS ? 0 : NS - at < piece ? NS - at : piece;
			ASSERT_EQ(0, add_piece(bl, buf_s, si + at, sizeof(*si), n,
					       true, err, sizeof(err)))
				TH_LOG("%s", err);
		}
		ASSERT_EQ(0, hyper_schedule_end(bl, &s, err, sizeof(err)))
			TH_LOG("pieces of %u: %s", piece, err);
		for (uint32_t t = 0; t < NT; t++) {
			ASSERT_EQ((int)t, hyper_schedule_find(s, ids[t]));
			ASSERT_EQ(0, hyper_schedule_tensor(whole, t, &a));
			ASSERT_EQ(0, hyper_schedule_tensor(s, t, &b));
			EXPECT_STREQ(a.id, b.id);
			EXPECT_EQ(a.bytes, b.bytes);
			EXPECT_EQ(a.kind, b.kind);
			EXPECT_EQ(a.home, b.home);
			ASSERT_EQ(1, b.nr_arena_offsets);
			EXPECT_EQ(off[t], b.arena_offsets[0]);
		}
		for (uint32_t i = 0; i < NS; i++) {
			ASSERT_EQ(0, hyper_schedule_step(whole, i, &x));
			ASSERT_EQ(0, hyper_schedule_step(s, i, &y));
			EXPECT_STREQ(x.op, y.op);
			EXPECT_EQ(x.compute_ns, y.compute_ns);
			ASSERT_EQ(x.nr_before, y.nr_before);
			ASSERT_EQ(1, y.nr_after);
			ASSERT_EQ(1, y.nr_uses);
			ASSERT_EQ(1, y.nr_defines);
			EXPECT_EQ(i, y.after[0].tensor);
			EXPECT_EQ(HYPER_OP_DETACH, y.after[0].op);
			EXPECT_EQ(i, y.uses[0]);
			EXPECT_EQ(i + 1, y.defines[0]);
		}
		hyper_schedule_free(s);
	}
	hyper_schedule_free(whole);

	/* tensor 30 repeats tensor 3's id, in another piece */
	ti[30].id = ids[3];
	ASSERT_EQ(0, hyper_schedule_begin(&info, &bl, err, sizeof(err)));
	ASSERT_EQ(0, hyper_schedule_add_tensors(bl, ti, 20, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, hyper_schedule_add_tensors(bl, ti + 20, NT - 20, err,
						      sizeof(err)));
	EXPECT_STREQ("tensor 30: duplicate id \"t3\" (first is tensor 3)", err);
	EXPECT_EQ(-EINVAL, hyper_schedule_add_steps(bl, si, NS, err,
						    sizeof(err)));
	EXPECT_EQ(-EINVAL, hyper_schedule_end(bl, &s, err, sizeof(err)));
	EXPECT_EQ(NULL, s);
	ti[30].id = ids[30];

	/* one tensor too many, then the steps short */
	ASSERT_EQ(0, hyper_schedule_begin(&info, &bl, err, sizeof(err)));
	ASSERT_EQ(0, hyper_schedule_add_tensors(bl, ti, 30, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, hyper_schedule_add_tensors(bl, ti, 8, err,
						      sizeof(err)));
	EXPECT_STREQ("tensors: 30 given and 8 more, but the schedule has 37",
		     err);
	EXPECT_EQ(0, hyper_schedule_end(bl, NULL, NULL, 0));
	ASSERT_EQ(0, hyper_schedule_begin(&info, &bl, err, sizeof(err)));
	ASSERT_EQ(0, hyper_schedule_add_tensors(bl, ti, NT, err, sizeof(err)));
	ASSERT_EQ(0, hyper_schedule_add_steps(bl, si, NS - 1, err,
					      sizeof(err)));
	EXPECT_EQ(-EINVAL, hyper_schedule_end(bl, &s, err, sizeof(err)));
	EXPECT_STREQ("schedule: 37 of 37 tensors and 35 of 36 steps given", err);
	EXPECT_EQ(NULL, s);
}

/* ASan's count of the bytes the program holds; absent without ASan. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

/*
 * A tensor refused for any field takes nothing from the pool, however
 * many arena offsets it says it has: each case names 2^20 offsets (8
 * MiB of room, a chunk of its own) beside a bad id, bytes, kind or home,
 * and is refused with its own message while the bytes the program holds
 * stay as they were.  A good one with as many offsets gets its room, as
 * the count sees.
 */
TEST(bad_tensor_takes_nothing)
{
	enum { MANY = 1U << 20 };
	static const struct {
		const char *id;
		uint64_t bytes;
		uint32_t kind, home;
		const char *msg;
	} bad[] = {
		{ "a", 64, HYPER_KIND_WEIGHT, HYPER_HOME_POOL,
		  "tensor 1: duplicate id \"a\" (first is tensor 0)" },
		{ "b", 0, HYPER_KIND_WEIGHT, HYPER_HOME_POOL,
		  "tensor 1: bytes must be in 1..2^48 (got 0)" },
		{ "b", 64, 99, HYPER_HOME_POOL,
		  "tensor 1: kind 99 or home 1 out of range" },
		{ "b", 64, HYPER_KIND_WEIGHT, 99,
		  "tensor 1: kind 1 or home 99 out of range" },
		{ "b", 64, HYPER_KIND_WEIGHT, HYPER_HOME_POOL, NULL },
	};
	struct hyper_schedule_info info = {
		.name = "bad", .nr_tensors = 2,
		.flags = HYPER_SCHED_ARENA, .arena_bytes = 4096,
	};
	uint64_t *off;
	char err[256];

	if (!__sanitizer_get_current_allocated_bytes)
		SKIP(return, "needs ASan's allocation count");
	off = calloc(MANY, sizeof(*off));
	ASSERT_NE(NULL, off);
	for (size_t c = 0; c < ARRAY_SIZE(bad); c++) {
		struct hyper_tensor_info ti[2] = {
			{ .id = "a", .bytes = 64, .kind = HYPER_KIND_WEIGHT,
			  .home = HYPER_HOME_POOL },
			{ .id = bad[c].id, .bytes = bad[c].bytes,
			  .kind = bad[c].kind, .home = bad[c].home,
			  .arena_offsets = off, .nr_arena_offsets = MANY },
		};
		struct hyper_schedule_builder *b;
		size_t held;
		int ret;

		ASSERT_EQ(0, hyper_schedule_begin(&info, &b, err, sizeof(err)));
		ASSERT_EQ(0, hyper_schedule_add_tensors(b, ti, 1, err,
							sizeof(err)));
		held = __sanitizer_get_current_allocated_bytes();
		ret = hyper_schedule_add_tensors(b, ti + 1, 1, err,
						 sizeof(err));
		if (bad[c].msg) {
			EXPECT_EQ(-EINVAL, ret);
			EXPECT_STREQ(bad[c].msg, err);
			EXPECT_GE(held + (1U << 16),
				  __sanitizer_get_current_allocated_bytes())
				TH_LOG("case %zu", c);
		} else {
			EXPECT_EQ(0, ret);
			EXPECT_LE(held + MANY * sizeof(*off),
				  __sanitizer_get_current_allocated_bytes());
		}
		hyper_schedule_end(b, NULL, NULL, 0);
	}
	free(off);
}

/*
 * The id hash reads ids of every length whole and no further: each of
 * 1..HS_ID_MAX bytes, in its own allocation (AddressSanitizer stops a
 * read past it), is found again through hyper_schedule_find(), whose
 * hash of the id is hs_hash_str()'s where the copy's insert came from
 * hs_hash_mem() with the length; one byte changed anywhere in the first
 * 40 (a bit at a time) changes the hash, so no byte is left out.  A
 * second tensor with each id is named as its duplicate.
 */
TEST(id_hash_reads_every_byte)
{
	static struct hyper_tensor_info ti[HS_ID_MAX + 1];
	struct hyper_schedule_info info = { .nr_tensors = HS_ID_MAX };
	struct hyper_schedule *s = NULL;
	char *ids[HS_ID_MAX + 1], err[400], want[400];
	uint32_t n;

	for (n = 1; n <= HS_ID_MAX; n++) {
		ids[n] = malloc(n + 1);
		ASSERT_NE(NULL, ids[n]);
		for (uint32_t k = 0; k < n; k++)
			ids[n][k] = (char)('a' + (n * 7 + k * 3) % 26);
		ids[n][n] = '\0';
		ti[n - 1] = (struct hyper_tensor_info){
			.id = ids[n], .bytes = n, .kind = HYPER_KIND_WEIGHT,
			.home = HYPER_HOME_POOL,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, NULL, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (n = 1; n <= HS_ID_MAX; n++)
		EXPECT_EQ((int)n - 1, hyper_schedule_find(s, ids[n]));
	hyper_schedule_free(s);
	for (n = 1; n <= 40; n++) {
		uint32_t h = hs_hash_mem(ids[n], n);

		EXPECT_EQ(h, hs_hash_str(ids[n]));
		for (uint32_t k = 0; k < n; k++)
			for (int bit = 0; bit < 8; bit++) {
				ids[n][k] ^= (char)(1 << bit);
				EXPECT_NE(h, hs_hash_mem(ids[n], n))
					TH_LOG("length %u, byte %u, bit %d", n, k, bit);
				ids[n][k] ^= (char)(1 << bit);
			}
	}
	/* the last tensor again with each id, at the end of the schedule */
	info.nr_tensors = HS_ID_MAX + 1;
	for (n = 1; n <= HS_ID_MAX; n += 9) {
		ti[HS_ID_MAX] = ti[n - 1];
		EXPECT_EQ(-EINVAL, hyper_schedule_new(&info, ti, NULL, &s, err,
						      sizeof(err)));
		snprintf(want, sizeof(want),
			 "tensor %d: duplicate id \"%s\" (first is tensor %u)",
			 HS_ID_MAX, ids[n], n - 1);
		EXPECT_STREQ(want, err);
	}
	for (n = 1; n <= HS_ID_MAX; n++)
		free(ids[n]);
}

TEST(stale_detach_allowed)
{
	struct hyper_schedule_info info;
	struct hyper_schedule *s;
	char err[256];

	/* A dead activation is dropped without a store; its bytes free at once. */
	ASSERT_EQ(0, parse_sq("{" HDR "'device_budget_bytes':1024,'tensors':["
			      T("x", 1024, "none") "," T("y", 1024, "none") "],"
			      "'steps':[{'op':'a','defines':['x'],'after':[{'op':'detach','tensor':'x'}]},"
			      "{'op':'b','defines':['y'],'after':[{'op':'store','tensor':'y'},"
			      "{'op':'detach','tensor':'y'}]},"
			      "{'op':'c','before':[{'op':'prefetch','tensor':'y'}],'uses':['y']}]}",
			      &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_EQ(1024, info.peak_device_bytes);
	hyper_schedule_free(s);
}

TEST(load_file)
{
	char path[] = "/tmp/hyper-sched-XXXXXX", err[256];
	struct hyper_schedule *s;
	char *j = sq("{" HDR "'tensors':[" T("w", 8, "pool") "],'steps':[]}");
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(j), write(fd, j, strlen(j)));
	close(fd);
	free(j);
	ASSERT_EQ(0, hyper_schedule_load(path, &s, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, hyper_schedule_find(s, "w"));
	hyper_schedule_free(s);
	unlink(path);

	EXPECT_EQ(-ENOENT, hyper_schedule_load(path, &s, err, sizeof(err)));
	EXPECT_EQ(NULL, s);
	EXPECT_NE(NULL, strstr(err, path));
}

TEST(nul_byte)
{
	static const char j[] = "{\"format\":\"hyper-schedule\",\0\"version\":1}";
	struct hyper_schedule *s;
	char err[256];

	EXPECT_EQ(-EBADMSG, hyper_schedule_parse(j, sizeof(j) - 1, &s, err, sizeof(err)));
	EXPECT_STREQ("malformed JSON at line 1, column 28: NUL byte", err);
}

TEST(total_size_overflow)
{
	/* 65536 tensors of 2^48 bytes add up to exactly 2^64. */
	size_t cap = 65537 * 100, len;
	char *j = malloc(cap), err[256];
	struct hyper_schedule *s;

	ASSERT_NE(NULL, j);
	len = snprintf(j, cap, "{\"format\":\"hyper-schedule\",\"version\":1,\"steps\":[],\"tensors\":[");
	for (int i = 0; i < 65536; i++)
		len += snprintf(j + len, cap - len,
				"%s{\"id\":\"t%d\",\"bytes\":281474976710656,\"kind\":\"kv\",\"home\":\"pool\"}",
				i ? "," : "", i);
	len += snprintf(j + len, cap - len, "]}");
	EXPECT_EQ(-EBADMSG, hyper_schedule_parse(j, len, &s, err, sizeof(err)));
	EXPECT_STREQ("tensor 65535: total of tensor sizes overflows 64 bits", err);
	free(j);
}

TEST(error_buffer_optional)
{
	struct hyper_schedule *s = (void *)1;
	char tiny[8];

	EXPECT_EQ(-EBADMSG, hyper_schedule_parse("[", 1, &s, NULL, 0));
	EXPECT_EQ(NULL, s);
	/* Truncated, still terminated. */
	EXPECT_EQ(-EBADMSG, hyper_schedule_parse("[", 1, &s, tiny, sizeof(tiny)));
	EXPECT_EQ(7, strlen(tiny));
	EXPECT_EQ(-EINVAL, hyper_schedule_parse(NULL, 3, &s, NULL, 0));
}

TEST(strerror_text)
{
	EXPECT_STREQ("invalid schedule", hyper_strerror(-EBADMSG));
	EXPECT_STREQ("unsupported schedule version", hyper_strerror(-EPROTONOSUPPORT));
	EXPECT_STREQ("no more steps in the schedule", hyper_strerror(-ENODATA));
	EXPECT_STREQ("No such file or directory", hyper_strerror(-ENOENT));
	EXPECT_STREQ("No such file or directory", hyper_strerror(ENOENT));
	EXPECT_STREQ("unknown error", hyper_strerror(-100000));
}

FIXTURE(bad) {};
FIXTURE_SETUP(bad) {}
FIXTURE_TEARDOWN(bad) {}

FIXTURE_VARIANT(bad) {
	const char *json;
	int err;
	const char *msg;	/* the whole message, or its start with "*" */
};

#define BAD(name, j, e, m)						\
	FIXTURE_VARIANT_ADD(bad, name) { .json = j, .err = e, .msg = m }

#define ONE_W	"'tensors':[" T("w", 1024, "pool") "],"

BAD(graph_not_object, "{" HDR "'graph':'toy'," ONE_W "'steps':[]}", -EBADMSG,
    "graph: expected an object, got string");
BAD(graph_unknown_key, "{" HDR "'graph':{'hsah':'x'}," ONE_W "'steps':[]}", -EBADMSG,
    "graph: unknown key \"hsah\"");
BAD(graph_hash_format, "{" HDR "'graph':{'hash':'md5:abc'}," ONE_W "'steps':[]}", -EBADMSG,
    "graph.hash: expected \"fnv1a64:\" and 16 lower-case hex digits, got \"md5:abc\"");
BAD(graph_hash_mismatch,
    "{" HDR "'graph':{'name':'g','hash':'fnv1a64:0123456789abcdef'}," ONE_W "'steps':[]}",
    -EBADMSG, "graph.hash: fnv1a64:0123456789abcdef, but the tensors and steps hash to fnv1a64:2e2b216aeb7fe542: the schedule was changed after planning");
BAD(empty_input, "", -EBADMSG, "empty: no JSON in it");
BAD(truncated, "{" HDR "'tensors':[", -EBADMSG,
    "truncated JSON: it ends (after 50 bytes) inside a value");
BAD(syntax, "{" HDR "'tensors':[,]}", -EBADMSG,
    "malformed JSON at line 1, column 51: *");
BAD(trailing_data, "{" HDR "'tensors':[],'steps':[]} {}", -EBADMSG,
    "trailing data after the JSON value, at line 1, column 65");
BAD(root_not_object, "[1,2]", -EBADMSG,
    "schedule: expected an object, got array");
BAD(missing_format, "{'version':1,'tensors':[],'steps':[]}", -EBADMSG,
    "schedule: missing key \"format\"");
BAD(wrong_format, "{'format':'onnx','version':1,'tensors':[],'steps':[]}", -EBADMSG,
    "format: expected \"hyper-schedule\", got \"onnx\"");
BAD(format_not_string, "{'format':7,'version':1,'tensors':[],'steps':[]}", -EBADMSG,
    "format: expected \"hyper-schedule\", got an integer");
BAD(missing_version, "{'format':'hyper-schedule','tensors':[],'steps':[]}", -EBADMSG,
    "schedule: missing key \"version\"");
BAD(version_2, "{'format':'hyper-schedule','version':2,'tensors':[],'steps':[],'new':1}",
    -EPROTONOSUPPORT, "unsupported schedule version 2 (this libhyper reads 1)");
BAD(version_0, "{'format':'hyper-schedule','version':0,'tensors':[],'steps':[]}",
    -EPROTONOSUPPORT, "unsupported schedule version 0 (this libhyper reads 1)");
BAD(version_string, "{'format':'hyper-schedule','version':'1','tensors':[],'steps':[]}",
    -EBADMSG, "version: expected an integer, got string");
BAD(unknown_top_key, "{" HDR "'tensor':[],'tensors':[],'steps':[]}", -EBADMSG,
    "schedule: unknown key \"tensor\"");
BAD(missing_tensors, "{" HDR "'steps':[]}", -EBADMSG,
    "schedule: missing key \"tensors\"");
BAD(missing_steps, "{" HDR "'tensors':[]}", -EBADMSG,
    "schedule: missing key \"steps\"");
BAD(tensors_not_array, "{" HDR "'tensors':{},'steps':[]}", -EBADMSG,
    "tensors: expected an array, got object");
BAD(name_not_string, "{" HDR "'name':3,'tensors':[],'steps':[]}", -EBADMSG,
    "name: expected a string, got integer");
BAD(budget_zero, "{" HDR "'device_budget_bytes':0,'tensors':[],'steps':[]}", -EBADMSG,
    "device_budget_bytes: must be an integer in 1..2^63-1 (got 0)");
BAD(predicted_unknown_key, "{" HDR "'tensors':[],'steps':[],'predicted':{'peak':1}}",
    -EBADMSG, "predicted: unknown key \"peak\"");
BAD(predicted_negative, "{" HDR "'tensors':[],'steps':[],'predicted':{'stall_ns':-1}}",
    -EBADMSG, "predicted.stall_ns: must be an integer in 0..2^63-1 (got -1)");
BAD(tensor_not_object, "{" HDR "'tensors':['w'],'steps':[]}", -EBADMSG,
    "tensors[0]: expected an object, got string");
BAD(tensor_missing_bytes, "{" HDR "'tensors':[{'id':'w','kind':'kv','home':'pool'}],'steps':[]}",
    -EBADMSG, "tensors[0]: missing key \"bytes\"");
BAD(tensor_missing_home, "{" HDR "'tensors':[{'id':'w','bytes':1,'kind':'kv'}],'steps':[]}",
    -EBADMSG, "tensors[0]: missing key \"home\"");
BAD(tensor_unknown_key, "{" HDR "'tensors':[{'id':'w','size':1,'bytes':1,'kind':'kv','home':'pool'}],'steps':[]}",
    -EBADMSG, "tensors[0]: unknown key \"size\"");
BAD(bytes_negative, "{" HDR "'tensors':[" T("w5", -4, "pool") "],'steps':[]}", -EBADMSG,
    "tensor 0 (\"w5\"): bytes must be an integer in 1..2^48 (got -4)");
BAD(bytes_zero, "{" HDR "'tensors':[" T("w", 0, "pool") "],'steps':[]}", -EBADMSG,
    "tensor 0 (\"w\"): bytes must be an integer in 1..2^48 (got 0)");
BAD(bytes_over_2_48, "{" HDR "'tensors':[" T("w", 281474976710657, "pool") "],'steps':[]}",
    -EBADMSG, "tensor 0 (\"w\"): bytes must be an integer in 1..2^48 (got 281474976710657)");
BAD(bytes_over_64_bits, "{" HDR "'tensors':[" T("w", 99999999999999999999999, "pool") "],'steps':[]}",
    -EBADMSG, "tensor 0 (\"w\"): bytes must be an integer in 1..2^48 (got a value beyond 64 bits)");
BAD(bytes_string, "{" HDR "'tensors':[" T("w", '1024', "pool") "],'steps':[]}", -EBADMSG,
    "tensor 0 (\"w\"): bytes must be an integer in 1..2^48 (got a string)");
BAD(bytes_fraction, "{" HDR "'tensors':[" T("w", 1.5, "pool") "],'steps':[]}", -EBADMSG,
    "tensor 0 (\"w\"): bytes must be an integer in 1..2^48 (got a non-integer number)");
BAD(id_empty, "{" HDR "'tensors':[" T("", 1, "pool") "],'steps':[]}", -EBADMSG,
    "tensors[0].id: must be a string of 1..127 bytes without NUL");
BAD(id_too_long, "{" HDR "'tensors':[" T("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
					 1, "pool") "],'steps':[]}",
    -EBADMSG, "tensors[0].id: must be a string of 1..127 bytes without NUL");
BAD(id_with_nul, "{" HDR "'tensors':[" T("a\\u0000b", 1, "pool") "],'steps':[]}", -EBADMSG,
    "tensors[0].id: must be a string of 1..127 bytes without NUL");
BAD(duplicate_id, "{" HDR "'tensors':[" T("w3", 1, "pool") "," T("x", 1, "pool") ","
		  T("w3", 2, "none") "],'steps':[]}",
    -EBADMSG, "tensor 2: duplicate id \"w3\" (first is tensor 0)");
BAD(unknown_kind, "{" HDR "'tensors':[{'id':'w','bytes':1,'kind':'bias','home':'pool'}],'steps':[]}",
    -EBADMSG, "tensors[0].kind: unknown kind \"bias\" (weight, activation, kv, gradient or optimizer)");
BAD(unknown_home, "{" HDR "'tensors':[" T("w", 1, "disk") "],'steps':[]}", -EBADMSG,
    "tensors[0].home: unknown home \"disk\" (pool, device or none)");
BAD(steps_not_array, "{" HDR ONE_W "'steps':'none'}", -EBADMSG,
    "steps: expected an array, got string");
BAD(step_missing_op, "{" HDR ONE_W "'steps':[{'uses':[]}]}", -EBADMSG,
    "steps[0]: missing key \"op\"");
BAD(step_unknown_key, "{" HDR ONE_W "'steps':[{'op':'s0','use':['w']}]}", -EBADMSG,
    "steps[0]: unknown key \"use\"");
BAD(compute_negative, "{" HDR ONE_W "'steps':[{'op':'s0','compute_ns':-5}]}", -EBADMSG,
    "steps[0].compute_ns: must be an integer in 0..2^63-1 (got -5)");
BAD(uses_not_array, "{" HDR ONE_W "'steps':[{'op':'s0','uses':'w'}]}", -EBADMSG,
    "steps[0].uses: expected an array, got string");
BAD(uses_not_string, "{" HDR ONE_W "'steps':[{'op':'s0','uses':[3]}]}", -EBADMSG,
    "steps[0].uses[0]: expected a tensor id (string), got integer");
BAD(unknown_tensor_uses, "{" HDR ONE_W "'steps':[{'op':'L0.mlp','uses':['w9']}]}", -EBADMSG,
    "step 0 (L0.mlp): unknown tensor \"w9\" (uses[0])");
BAD(unknown_tensor_cop, "{" HDR ONE_W "'steps':[{'op':'s0','after':[{'op':'store','tensor':'w'},"
			 "{'op':'store','tensor':'zz'}]}]}",
    -EBADMSG, "step 0 (s0): unknown tensor \"zz\" (after[1].tensor)");
BAD(unknown_cache_op, "{" HDR ONE_W "'steps':[{'op':'s0','before':[{'op':'prefetch','tensor':'w'},"
		      "{'op':'evict','tensor':'w'}]}]}",
    -EBADMSG, "steps[0].before[1].op: unknown cache op \"evict\" (prefetch, store or detach)");
BAD(cache_op_not_object, "{" HDR ONE_W "'steps':[{'op':'s0','before':['w']}]}", -EBADMSG,
    "steps[0].before[0]: expected a cache op object, got string");
BAD(cache_op_missing_tensor, "{" HDR ONE_W "'steps':[{'op':'s0','before':[{'op':'prefetch'}]}]}",
    -EBADMSG, "steps[0].before[0]: missing key \"tensor\"");
BAD(cache_op_unknown_key, "{" HDR ONE_W "'steps':[{'op':'s0','before':[{'op':'prefetch','tensor':'w','when':1}]}]}",
    -EBADMSG, "steps[0].before[0]: unknown key \"when\"");
BAD(used_not_resident, "{" HDR ONE_W "'steps':[{'op':'L3.attn','uses':['w']}]}", -EBADMSG,
    "step 0 (L3.attn): tensor \"w\" used while not resident");
BAD(used_after_detach, "{" HDR ONE_W "'steps':[{'op':'a','before':[{'op':'prefetch','tensor':'w'}],"
		       "'uses':['w'],'after':[{'op':'detach','tensor':'w'}]},{'op':'b','uses':['w']}]}",
    -EBADMSG, "step 1 (b): tensor \"w\" used while not resident");
BAD(prefetch_no_pool_copy, "{" HDR "'tensors':[" T("x2", 8, "none") "],"
			   "'steps':[{'op':'L1.mlp','before':[{'op':'prefetch','tensor':'x2'}]}]}",
    -EBADMSG, "step 0 (L1.mlp): prefetch of tensor \"x2\" which has no pool copy");
BAD(prefetch_after_stale_detach, "{" HDR "'tensors':[" T("w", 8, "pool") "],"
				 "'steps':[{'op':'a','before':[{'op':'prefetch','tensor':'w'}],'defines':['w'],"
				 "'after':[{'op':'detach','tensor':'w'}]},"
				 "{'op':'b','before':[{'op':'prefetch','tensor':'w'}]}]}",
    -EBADMSG, "step 1 (b): prefetch of tensor \"w\" which has no pool copy");
BAD(prefetch_resident, "{" HDR "'tensors':[" T("w1", 8, "pool") "],"
		       "'steps':[{'op':'a','before':[{'op':'prefetch','tensor':'w1'}]},"
		       "{'op':'L1.mlp','before':[{'op':'prefetch','tensor':'w1'}]}]}",
    -EBADMSG, "step 1 (L1.mlp): prefetch of tensor \"w1\" which is already resident");
BAD(store_after_detach, "{" HDR "'tensors':[" T("kv2", 8, "device") "],"
			"'steps':[{'op':'a','after':[{'op':'detach','tensor':'kv2'}]},"
			"{'op':'L2.out','after':[{'op':'store','tensor':'kv2'}]}]}",
    -EBADMSG, "step 1 (L2.out): store of tensor \"kv2\" after its detach (not resident)");
BAD(store_not_resident, "{" HDR ONE_W "'steps':[{'op':'a','after':[{'op':'store','tensor':'w'}]}]}",
    -EBADMSG, "step 0 (a): store of tensor \"w\" which is not resident");
BAD(detach_not_resident, "{" HDR ONE_W "'steps':[{'op':'a','before':[{'op':'detach','tensor':'w'}]}]}",
    -EBADMSG, "step 0 (a): detach of tensor \"w\" which is not resident");
BAD(budget_after_prefetch, "{" HDR "'device_budget_bytes':1536,'tensors':[" T("a", 1024, "pool") ","
			   T("b", 1024, "pool") "],'steps':[{'op':'L2.attn','before':["
			   "{'op':'prefetch','tensor':'a'},{'op':'prefetch','tensor':'b'}]}]}",
    -EBADMSG, "step 0 (L2.attn): device residency 2.0 KiB (2048 bytes) exceeds budget 1.5 KiB (1536 bytes) (after prefetch of \"b\")");
BAD(budget_after_defines, "{" HDR "'device_budget_bytes':3221225472,'tensors':["
			  T("a", 3221225472, "device") "," T("b", 107374182, "none") "],"
			  "'steps':[{'op':'s0','defines':['b']}]}",
    -EBADMSG, "step 0 (s0): device residency 3.1 GiB (3328599654 bytes) exceeds budget 3.0 GiB (3221225472 bytes) (after the operator's defines)");
BAD(budget_at_start, "{" HDR "'device_budget_bytes':100,'tensors':[" T("a", 101, "device") "],'steps':[]}",
    -EBADMSG, "schedule start: device residency 101 B (101 bytes) exceeds budget 100 B (100 bytes) (tensors whose home is \"device\")");

TEST_F(bad, rejected)
{
	struct hyper_schedule *s = (void *)1;
	char err[512];
	size_t n = strlen(variant->msg);
	int ret;

	memset(err, 'X', sizeof(err));
	ret = parse_sq(variant->json, &s, err, sizeof(err));
	EXPECT_EQ(variant->err, ret) TH_LOG("%s", err);
	EXPECT_EQ(NULL, s);
	if (n && variant->msg[n - 1] == '*') {
		EXPECT_EQ(0, strncmp(variant->msg, err, n - 1)) TH_LOG("got: %s", err);
	} else {
		EXPECT_STREQ(variant->msg, err);
	}
}

/*
 * Every byte of a pool chunk's block is the chunk's: the bytes
 * hu_block_huge() allocates are those of hu_block_size() (util/huge.h),
 * the one rounding rule, and pool_grow() sizes the chunk by it.  The
 * first chunk here (about 14 MB from the counts) has an end past its
 * last whole huge page that rounds up to one more, which the chunk must
 * hold; the later ones, 16 MiB each, stay 16 MiB (a short end is not
 * rounded), below glibc's largest mmap threshold.
 */
TEST(schedule_new_pool_chunks_use_their_whole_block)
{
	enum { NT = 200000, NS = 100000, ID = 100 };
	struct hyper_schedule_info info = {
		.name = "chunks", .nr_tensors = NT, .nr_steps = NS,
	};
	struct hyper_tensor_info *ti = calloc(NT, sizeof(*ti));
	struct hyper_step_info *si = calloc(NS, sizeof(*si));
	char *ids = malloc((size_t)NT * (ID + 1)), (*ops)[24], err[256];
	size_t nr_chunks = 0, rounded = 0;
	const struct hs_chunk *c;
	struct hyper_schedule *s;

	ops = malloc(NS * sizeof(*ops));
	ASSERT_TRUE(ti && si && ids && ops);
	long_ids(ids, ti, NT, ID, 'y');
	for (unsigned int i = 0; i < NS; i++) {
		snprintf(ops[i], sizeof(ops[i]), "op.%u", i);
		si[i] = (struct hyper_step_info){
			.op = ops[i], .compute_ns = 1000,
		};
	}
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (c = s->pool; c; c = c->next) {
		size_t len = sizeof(*c) + c->cap;

		nr_chunks++;
		EXPECT_LE(c->used, c->cap);
		EXPECT_LE(c->cap, (size_t)16 << 20) TH_LOG("chunk %zu", nr_chunks);
		EXPECT_EQ(hu_block_size(len), len) TH_LOG("chunk %zu", nr_chunks);
		/* nothing past the chunk's end (ASan: exactly its end) */
		EXPECT_LE(len, malloc_usable_size((void *)c));
		EXPECT_GT(len + 4096, malloc_usable_size((void *)c))
			TH_LOG("chunk %zu: %zu bytes for %zu", nr_chunks,
			       malloc_usable_size((void *)c), len);
		if (len >= HU_HUGE_PAGE)
			EXPECT_EQ(0, (uintptr_t)c % HU_HUGE_PAGE);
		rounded += len % HU_HUGE_PAGE == 0;
	}
	EXPECT_LE(2, nr_chunks);
	EXPECT_LE(1, rounded);
	for (unsigned int t = 0; t < NT; t += 997)
		ASSERT_EQ((int)t, hyper_schedule_find(s, ti[t].id));
	hyper_schedule_free(s);
	free(ti);
	free(si);
	free(ids);
	free(ops);
}

/*
 * A step's lists are checked in one pass each, and the first rule broken
 * is named in the order of the messages: uses, defines, before, after,
 * and in a cache-op list every op before any tensor.  Each flaw alone,
 * and each beside one named later; ops 0 and 4 refused, 1 to 3 taken.
 */
TEST(step_lists_first_broken_named)
{
	static const uint32_t u_ok[] = { 0, 1 }, u_far[] = { 0, 2 },
		d_far[] = { 2 };
	static const struct hyper_cop c_ok[] = {
		{ HYPER_OP_PREFETCH, 0 }, { HYPER_OP_STORE, 1 },
		{ HYPER_OP_DETACH, 1 },
	}, c_far[] = { { HYPER_OP_PREFETCH, 0 }, { HYPER_OP_DETACH, 5 } },
	   c_op0[] = { { 0, 0 } }, c_op4[] = { { HYPER_OP_DETACH + 1, 0 } },
	   c_both[] = { { HYPER_OP_PREFETCH, 7 }, { 9, 0 } };
	static const struct {
		const uint32_t *uses, *defines;
		const struct hyper_cop *before, *after;
		uint32_t nu, nd, nb, na;
		const char *msg;
	} k[] = {
		{ u_ok, NULL, c_ok, c_ok, 2, 0, 3, 3, NULL },
		{ u_far, NULL, NULL, NULL, 2, 0, 0, 0,
		  "steps[0].uses[1]: tensor index 2 out of range (2 tensors)" },
		{ NULL, d_far, NULL, NULL, 0, 1, 0, 0,
		  "steps[0].defines[0]: tensor index 2 out of range (2 tensors)" },
		{ NULL, NULL, c_far, NULL, 0, 0, 2, 0,
		  "steps[0].before[1]: tensor index 5 out of range (2 tensors)" },
		{ NULL, NULL, NULL, c_far, 0, 0, 0, 2,
		  "steps[0].after[1]: tensor index 5 out of range (2 tensors)" },
		{ NULL, NULL, c_op0, NULL, 0, 0, 1, 0,
		  "steps[0].before[0]: unknown cache op 0 (enum hyper_cache_op)" },
		{ NULL, NULL, NULL, c_op4, 0, 0, 0, 1,
		  "steps[0].after[0]: unknown cache op 4 (enum hyper_cache_op)" },
		{ NULL, NULL, c_both, NULL, 0, 0, 2, 0,
		  "steps[0].before[1]: unknown cache op 9 (enum hyper_cache_op)" },
		{ u_far, NULL, NULL, c_op0, 2, 0, 0, 1,
		  "steps[0].uses[1]: tensor index 2 out of range (2 tensors)" },
		{ u_ok, d_far, c_far, NULL, 2, 1, 2, 0,
		  "steps[0].defines[0]: tensor index 2 out of range (2 tensors)" },
		{ NULL, NULL, c_far, c_op4, 0, 0, 2, 1,
		  "steps[0].before[1]: tensor index 5 out of range (2 tensors)" },
	};
	static const struct hyper_tensor_info ti[2] = {
		{ .id = "a", .bytes = 64, .kind = HYPER_KIND_WEIGHT,
		  .home = HYPER_HOME_POOL },
		{ .id = "b", .bytes = 64, .kind = HYPER_KIND_WEIGHT,
		  .home = HYPER_HOME_POOL },
	};
	struct hyper_schedule_info info = {
		.name = "lists", .nr_tensors = 2, .nr_steps = 1,
	};
	char err[256];

	for (size_t c = 0; c < ARRAY_SIZE(k); c++) {
		struct hyper_step_info si = {
			.op = "s0", .uses = k[c].uses, .nr_uses = k[c].nu,
			.defines = k[c].defines, .nr_defines = k[c].nd,
			.before = k[c].before, .nr_before = k[c].nb,
			.after = k[c].after, .nr_after = k[c].na,
		};
		struct hyper_schedule_builder *b;
		int ret;

		ASSERT_EQ(0, hyper_schedule_begin(&info, &b, err, sizeof(err)));
		ASSERT_EQ(0, hyper_schedule_add_tensors(b, ti, 2, err,
							sizeof(err)));
		ret = hyper_schedule_add_steps(b, &si, 1, err, sizeof(err));
		EXPECT_EQ(k[c].msg ? -EINVAL : 0, ret) TH_LOG("case %zu: %s", c, err);
		EXPECT_STREQ(k[c].msg ? k[c].msg : "", err) TH_LOG("case %zu", c);
		hyper_schedule_end(b, NULL, NULL, 0);
	}
}

HYPER_TEST_MAIN
