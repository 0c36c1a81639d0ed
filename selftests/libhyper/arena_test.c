// SPDX-License-Identifier: GPL-2.0
/*
 * A schedule's own arena layout ("arena_bytes", "arena_offsets";
 * HYPER_SCHED_ARENA in process): a good one loads the same from JSON and
 * from structures and is run at exactly its offsets; every bad one is
 * refused with its one-line message; a schedule without offsets keeps
 * libhyper's own layout.
 *
 * usage: arena_test [--backend shmem|kmod]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "helpers.h"

/*
 * a is resident twice (steps 0 and 2), b once (step 1), c from its define
 * in step 0 to its detach in step 1: a's first residency and c live
 * together, so do c and b.
 */
#define TS(oa, ob, oc)							\
	"'tensors':["							\
	"{'id':'a','bytes':4096,'kind':'weight','home':'pool','arena_offsets':[" oa "]}," \
	"{'id':'b','bytes':4096,'kind':'weight','home':'pool','arena_offsets':[" ob "]}," \
	"{'id':'c','bytes':100,'kind':'activation','home':'none','arena_offsets':[" oc "]}],"
#define STEPS								\
	"'steps':["							\
	"{'op':'s0','before':[{'op':'prefetch','tensor':'a'}],'uses':['a'],"	\
	"'defines':['c'],'after':[{'op':'detach','tensor':'a'}]},"	\
	"{'op':'s1','before':[{'op':'prefetch','tensor':'b'}],'uses':['b','c'],"	\
	"'after':[{'op':'detach','tensor':'b'},{'op':'detach','tensor':'c'}]},"	\
	"{'op':'s2','before':[{'op':'prefetch','tensor':'a'}],'uses':['a'],"	\
	"'after':[{'op':'detach','tensor':'a'}]}]"
#define SCHED(top, oa, ob, oc)	"{" HDR top TS(oa, ob, oc) STEPS "}"
#define ARENA	"'arena_bytes':8192,"
#define GOOD	SCHED(ARENA, "0,4096", "0", "4096")

/* Where each tensor is at each step of GOOD: a, b, c; -1 not resident. */
static const int64_t where[3][3] = {
	{ 0, -1, 4096 }, { -1, 0, 4096 }, { 4096, -1, -1 },
};

static struct hyper_schedule *load(struct __test_metadata *_metadata,
				   const char *json)
{
	struct hyper_schedule *s = NULL;
	char err[512];

	EXPECT_EQ(0, parse_sq(json, &s, err, sizeof(err))) TH_LOG("%s", err);
	return s;
}

static void expect_offsets(struct __test_metadata *_metadata,
			   const struct hyper_schedule *s, unsigned int t,
			   uint32_t n, const uint64_t *off)
{
	struct hyper_tensor_info ti;

	ASSERT_EQ(0, hyper_schedule_tensor(s, t, &ti));
	ASSERT_EQ(n, ti.nr_arena_offsets);
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(off[i], ti.arena_offsets[i]);
}

static void expect_good(struct __test_metadata *_metadata,
			const struct hyper_schedule *s)
{
	struct hyper_schedule_info info;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_TRUE(info.flags & HYPER_SCHED_ARENA);
	EXPECT_EQ(8192, info.arena_bytes);
	expect_offsets(_metadata, s, 0, 2, (const uint64_t[]){ 0, 4096 });
	expect_offsets(_metadata, s, 1, 1, (const uint64_t[]){ 0 });
	expect_offsets(_metadata, s, 2, 1, (const uint64_t[]){ 4096 });
}

TEST(offsets_load_from_json)
{
	struct hyper_schedule *s = load(_metadata, GOOD);

	expect_good(_metadata, s);
	hyper_schedule_free(s);
}

/*
 * GOOD as plain structures, each tensor's offsets given (a's two
 * residencies, b's and c's one).
 */
static int build_offsets(const uint64_t *a, uint32_t na, const uint64_t *b,
			 uint32_t nb, const uint64_t *c, uint32_t nc,
			 struct hyper_schedule **s, char *err, size_t errlen)
{
	static const uint32_t u0[] = { 0 }, u1[] = { 1, 2 }, d0[] = { 2 };
	static const struct hyper_cop pa = { HYPER_OP_PREFETCH, 0 },
		pb = { HYPER_OP_PREFETCH, 1 }, da = { HYPER_OP_DETACH, 0 },
		dbc[] = { { HYPER_OP_DETACH, 1 }, { HYPER_OP_DETACH, 2 } };
	struct hyper_schedule_info info = {
		.flags = HYPER_SCHED_ARENA, .arena_bytes = 8192,
		.nr_tensors = 3, .nr_steps = 3,
	};
	struct hyper_tensor_info t[3] = {
		{ .id = "a", .bytes = 4096, .kind = HYPER_KIND_WEIGHT,
		  .home = HYPER_HOME_POOL, .nr_arena_offsets = na,
		  .arena_offsets = a },
		{ .id = "b", .bytes = 4096, .kind = HYPER_KIND_WEIGHT,
		  .home = HYPER_HOME_POOL, .nr_arena_offsets = nb,
		  .arena_offsets = b },
		{ .id = "c", .bytes = 100, .kind = HYPER_KIND_ACTIVATION,
		  .home = HYPER_HOME_NONE, .nr_arena_offsets = nc,
		  .arena_offsets = c },
	};
	struct hyper_step_info st[3] = {
		{ .op = "s0", .before = &pa, .nr_before = 1, .uses = u0,
		  .nr_uses = 1, .defines = d0, .nr_defines = 1, .after = &da,
		  .nr_after = 1 },
		{ .op = "s1", .before = &pb, .nr_before = 1, .uses = u1,
		  .nr_uses = 2, .after = dbc, .nr_after = 2 },
		{ .op = "s2", .before = &pa, .nr_before = 1, .uses = u0,
		  .nr_uses = 1, .after = &da, .nr_after = 1 },
	};

	return hyper_schedule_new(&info, t, st, s, err, errlen);
}

/* GOOD as plain structures, with a's offsets in @a_off. */
static int build(const uint64_t *a_off, struct hyper_schedule **s,
		 char *err, size_t errlen)
{
	static const uint64_t b_off[] = { 0 }, c_off[] = { 4096 };

	return build_offsets(a_off, 2, b_off, 1, c_off, 1, s, err, errlen);
}

TEST(offsets_load_in_process)
{
	struct hyper_schedule *s = NULL;
	char err[512];

	ASSERT_EQ(0, build((const uint64_t[]){ 0, 4096 }, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	expect_good(_metadata, s);
	hyper_schedule_free(s);
}

TEST(bad_offsets_in_process_same_message)
{
	struct hyper_schedule *s = (void *)1;
	char err[512];

	/* a's second residency on c, which is not live then: fine ... */
	ASSERT_EQ(0, build((const uint64_t[]){ 0, 4096 }, &s, err, sizeof(err)));
	hyper_schedule_free(s);
	/* ... its first on c, which is: refused as the JSON form is. */
	EXPECT_EQ(-EBADMSG, build((const uint64_t[]){ 4096, 0 }, &s, err,
				  sizeof(err)));
	EXPECT_EQ(NULL, s);
	EXPECT_STREQ("arena: tensor \"a\" (arena_offsets[0] = 4096, 4096 bytes) and tensor \"c\" (arena_offsets[0] = 4096, 100 bytes) are resident together from step 0 (s0) on and overlap",
		     err);
}

/* Runs GOOD in an arena of exactly its arena_bytes: tensors at its offsets. */
TEST(executor_places_at_the_offsets)
{
	struct hyper_schedule *s = load(_metadata, GOOD);
	size_t len = 1 << 16;
	char *dev = dev_mem(len);
	struct iovec iov = { dev, len };
	struct hyper_ctx *ctx;
	int step;

	ASSERT_NE(NULL, s);
	ASSERT_NE(NULL, dev);
	ASSERT_EQ(0, open_test_ctx(&ctx));
	ASSERT_EQ(0, hyper_register_buffers(ctx, &iov, 1));
	ASSERT_EQ(0, hyper_set_arena(ctx, dev, 8192));
	ASSERT_EQ(0, hyper_attach(ctx, s));
	ASSERT_EQ(0, hyper_prepare(ctx)) TH_LOG("%s", hyper_last_error(ctx));
	/* Pool copies of a and b, checked where the layout puts them. */
	memset(hyper_tensor_pool_ptr(ctx, 0), 0xa1, 4096);
	memset(hyper_tensor_pool_ptr(ctx, 1), 0xb2, 4096);
	while ((step = hyper_step_begin(ctx)) >= 0) {
		for (int t = 0; t < 3; t++) {
			if (where[step][t] < 0)
				continue;
			EXPECT_EQ((void *)(dev + where[step][t]),
				  hyper_tensor_ptr(ctx, t)) {
				TH_LOG("step %d tensor %d", step, t);
			}
		}
		if (step == 1) {
			EXPECT_EQ(0xb2, (unsigned char)dev[4095]);
		} else {
			EXPECT_EQ(0xa1, (unsigned char)dev[where[step][0] + 4095]);
		}
		ASSERT_EQ(0, hyper_step_end(ctx));
	}
	EXPECT_EQ(-ENODATA, step) TH_LOG("%s", hyper_last_error(ctx));
	hyper_close(ctx);
	hyper_schedule_free(s);
	munmap(dev, len);
}

TEST(arena_smaller_than_the_schedules_is_refused)
{
	struct hyper_schedule *s = load(_metadata, GOOD);
	size_t len = 1 << 16;
	char *dev = dev_mem(len);
	struct iovec iov = { dev, len };
	struct hyper_ctx *ctx;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, open_test_ctx(&ctx));
	ASSERT_EQ(0, hyper_register_buffers(ctx, &iov, 1));
	ASSERT_EQ(0, hyper_set_arena(ctx, dev, 4096));
	ASSERT_EQ(0, hyper_attach(ctx, s));
	EXPECT_EQ(-ENOSPC, hyper_prepare(ctx));
	EXPECT_STREQ("the schedule places its tensors in an arena of 8192 bytes (arena_bytes), the arena set is 4096: give hyper_set_arena() at least that",
		     hyper_last_error(ctx));
	hyper_close(ctx);
	hyper_schedule_free(s);
	munmap(dev, len);
}

/* Without offsets libhyper lays the schedule out itself, and says where. */
TEST(no_offsets_keeps_libhypers_layout)
{
	struct hyper_schedule *s = load(_metadata, SCHED("", "", "", ""));
	struct hyper_schedule_info info;
	struct hyper_tensor_info ti;

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_FALSE(info.flags & HYPER_SCHED_ARENA);
	/* a and c together, b and c together: 4096 + 128 is the floor */
	EXPECT_EQ(4096 + 128, info.arena_bytes);
	ASSERT_EQ(0, hyper_schedule_tensor(s, 0, &ti));
	EXPECT_EQ(2, ti.nr_arena_offsets);
	hyper_schedule_free(s);
}

/* A step with no cache ops may leave its lists NULL (UBSan, -fno-sanitize-recover). */
TEST(steps_without_cache_ops)
{
	static const uint32_t u0[] = { 0 };
	struct hyper_schedule_info info = { .nr_tensors = 1, .nr_steps = 2 };
	struct hyper_tensor_info t = { .id = "a", .bytes = 4096,
				       .kind = HYPER_KIND_ACTIVATION,
				       .home = HYPER_HOME_NONE };
	struct hyper_step_info st[2] = {
		{ .op = "s0", .defines = u0, .nr_defines = 1 },
		{ .op = "s1", .uses = u0, .nr_uses = 1 },
	};
	struct hyper_schedule *s = NULL;
	char err[512];

	ASSERT_EQ(0, hyper_schedule_new(&info, &t, st, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	hyper_schedule_free(s);
}

/*
 * What hyper_schedule_info/_tensor/_step give back goes into
 * hyper_schedule_new() as it is: libhyper's own layout's offsets come
 * without HYPER_SCHED_ARENA, are output only and ignored there.
 */
/*
 * An arena with nothing resident in it: a weight kept in the pool and
 * used by no step.  Nothing to check, and accepted as it is.
 */
TEST(own_arena_with_no_residency)
{
	struct hyper_schedule_info info = {
		.flags = HYPER_SCHED_ARENA, .nr_tensors = 1, .arena_bytes = 4096,
	};
	struct hyper_tensor_info t = { .id = "w", .bytes = 4096,
				       .kind = HYPER_KIND_WEIGHT,
				       .home = HYPER_HOME_POOL };
	struct hyper_schedule *s = NULL;
	char err[512];

	ASSERT_EQ(0, hyper_schedule_new(&info, &t, NULL, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	hyper_schedule_free(s);
}

TEST(own_layout_round_trips)
{
	struct hyper_schedule *s = load(_metadata, SCHED("", "", "", ""));
	struct hyper_schedule_info info, again;
	struct hyper_tensor_info ti[3];
	struct hyper_step_info si[3];
	struct hyper_schedule *n = NULL;
	char err[512];

	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	ASSERT_EQ(3, info.nr_tensors);
	ASSERT_EQ(3, info.nr_steps);
	for (unsigned int i = 0; i < 3; i++) {
		ASSERT_EQ(0, hyper_schedule_tensor(s, i, &ti[i]));
		ASSERT_EQ(0, hyper_schedule_step(s, i, &si[i]));
	}
	EXPECT_EQ(2, ti[0].nr_arena_offsets);
	ASSERT_EQ(0, hyper_schedule_new(&info, ti, si, &n, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, hyper_schedule_info(n, &again));
	EXPECT_FALSE(again.flags & HYPER_SCHED_ARENA);
	EXPECT_EQ(info.arena_bytes, again.arena_bytes);
	hyper_schedule_free(n);
	hyper_schedule_free(s);
}

FIXTURE(bad) {};
FIXTURE_SETUP(bad) {}
FIXTURE_TEARDOWN(bad) {}

FIXTURE_VARIANT(bad) {
	const char *json;
	const char *msg;
};

#define BAD(name, j, m)	FIXTURE_VARIANT_ADD(bad, name) { .json = j, .msg = m }

BAD(overlap, SCHED(ARENA, "0,4096", "4096", "4096"),
    "arena: tensor \"c\" (arena_offsets[0] = 4096, 100 bytes) and tensor \"b\" (arena_offsets[0] = 4096, 4096 bytes) are resident together from step 1 (s1) on and overlap");
/* The same two beyond 2^32 granules (256 GiB): offsets are not packed. */
BAD(overlap_beyond_256g, SCHED("'arena_bytes':1099511635968,",
			       "1099511627776,1099511631872", "1099511631872",
			       "1099511631872"),
    "arena: tensor \"c\" (arena_offsets[0] = 1099511631872, 100 bytes) and tensor \"b\" (arena_offsets[0] = 1099511631872, 4096 bytes) are resident together from step 1 (s1) on and overlap");
BAD(overlap_partly, SCHED(ARENA, "0,4096", "0", "4032"),
    "arena: tensor \"a\" (arena_offsets[0] = 0, 4096 bytes) and tensor \"c\" (arena_offsets[0] = 4032, 100 bytes) are resident together from step 0 (s0) on and overlap");
BAD(out_of_range, SCHED(ARENA, "0,8192", "0", "4096"),
    "tensors[0].arena_offsets[1]: tensor \"a\" at offset 8192 (4096 bytes, 4096 aligned) ends past arena_bytes 8192");
BAD(aligned_size_out_of_range, SCHED("'arena_bytes':4160,", "0,0", "0", "4096"),
    "tensors[2].arena_offsets[0]: tensor \"c\" at offset 4096 (100 bytes, 128 aligned) ends past arena_bytes 4160");
BAD(arena_bytes_unaligned, SCHED("'arena_bytes':8200,", "0,4096", "0", "4096"),
    "arena_bytes: 8200 is not a multiple of 64 (HYPER_ARENA_ALIGN): round it up");
BAD(misaligned, SCHED(ARENA, "0,4096", "0", "4100"),
    "tensors[2].arena_offsets[0]: offset 4100 of tensor \"c\" is not a multiple of 64");
BAD(too_few, SCHED(ARENA, "0", "0", "4096"),
    "tensors[0].arena_offsets: tensor \"a\" becomes resident 2 times but has 1 offsets (one per residency, in the order they begin)");
BAD(too_many, SCHED(ARENA, "0,4096", "0,0", "4096"),
    "tensors[1].arena_offsets: tensor \"b\" becomes resident 1 times but has 2 offsets (one per residency, in the order they begin)");
BAD(only_some_tensors, SCHED(ARENA, "0,4096", "", "4096"),
    "tensors[1].arena_offsets: tensor \"b\" becomes resident 1 times but has 0 offsets (one per residency, in the order they begin)");
BAD(without_arena_bytes, SCHED("", "0,4096", "0", "4096"),
    "tensors[0].arena_offsets: given without the schedule's \"arena_bytes\"");
BAD(arena_zero, SCHED("'arena_bytes':0,", "0,4096", "0", "4096"),
    "arena_bytes: must be an integer in 1..2^48 (got 0)");
BAD(offset_negative, SCHED(ARENA, "-64,4096", "0", "4096"),
    "tensors[0].arena_offsets[0]: must be an integer in 0..2^48 (got -64)");
BAD(offset_not_integer, SCHED(ARENA, "'0',4096", "0", "4096"),
    "tensors[0].arena_offsets[0]: must be an integer in 0..2^48 (got a string)");

/*
 * The overlap check against every pair: random tensors, each defined in
 * step a and detached after step b (so two share time when each begins
 * no later than the other ends), at random offsets.  Accepted exactly
 * when no two that share time share a byte; when refused, the pair named
 * does both.
 */
#define RND_MAX	200

struct rnd {
	uint32_t a[RND_MAX], b[RND_MAX];
	uint64_t off[RND_MAX], bytes[RND_MAX];
	char id[RND_MAX][8];
};

static bool rnd_clash(const struct rnd *r, uint32_t i, uint32_t j)
{
	return (r->a[i] > r->a[j] ? r->a[i] : r->a[j]) <=
	       (r->b[i] < r->b[j] ? r->b[i] : r->b[j]) &&
	       r->off[i] < r->off[j] + r->bytes[j] &&
	       r->off[j] < r->off[i] + r->bytes[i];
}

TEST(overlap_check_agrees_with_every_pair)
{
	static struct rnd r;
	static struct hyper_tensor_info t[RND_MAX];
	static struct hyper_step_info st[RND_MAX];
	static uint32_t defs[RND_MAX];
	static struct hyper_cop dets[RND_MAX];
	unsigned int seed = 1, refused = 0, cases = 300;

	for (unsigned int c = 0; c < cases; c++) {
		uint32_t n = 2 + (uint32_t)rand_r(&seed) % (c % 3 ? 30 : RND_MAX - 1);
		uint32_t slots = n * (1 + (uint32_t)rand_r(&seed) % 4);
		/* one case in five above 256 GiB: the offsets are not packed */
		uint64_t base = c % 5 == 2 ? 1ULL << 40 : 0;
		struct hyper_schedule_info info = {
			.flags = HYPER_SCHED_ARENA, .nr_tensors = n, .nr_steps = n,
			.arena_bytes = base + 512ULL * n + 64ULL * (slots + 8),
		};
		struct hyper_schedule *s = NULL;
		uint32_t nd = 0, nx = 0, i, j;
		bool clash = false;
		char err[512];
		int ret;

		for (i = 0; i < n; i++) {
			r.a[i] = (uint32_t)rand_r(&seed) % n;
			r.b[i] = r.a[i] + (uint32_t)rand_r(&seed) %
				 (n - r.a[i] < 4 ? n - r.a[i] : 4);
			r.bytes[i] = 64ULL * (1 + (uint32_t)rand_r(&seed) % 8);
			/* one case in four apart, but for one tensor moved */
			r.off[i] = base +
				   (c % 4 ? 64ULL * ((uint32_t)rand_r(&seed) % slots) :
				    512ULL * i);
			snprintf(r.id[i], sizeof(r.id[i]), "t%u", i);
			t[i] = (struct hyper_tensor_info){
				.id = r.id[i], .bytes = r.bytes[i],
				.kind = HYPER_KIND_ACTIVATION,
				.home = HYPER_HOME_NONE, .nr_arena_offsets = 1,
				.arena_offsets = &r.off[i],
			};
		}
		if (c % 4 == 0)
			r.off[rand_r(&seed) % n] = r.off[rand_r(&seed) % n];
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				clash |= rnd_clash(&r, i, j);
		/* step k defines those begun at k and detaches those ended */
		for (uint32_t k = 0; k < n; k++) {
			st[k] = (struct hyper_step_info){
				.op = "s", .defines = defs + nd, .after = dets + nx,
			};
			for (i = 0; i < n; i++) {
				if (r.a[i] == k)
					defs[nd++] = i;
				if (r.b[i] == k)
					dets[nx++] = (struct hyper_cop){ HYPER_OP_DETACH, i };
			}
			st[k].nr_defines = (uint32_t)(defs + nd - st[k].defines);
			st[k].nr_after = (uint32_t)(dets + nx - st[k].after);
		}
		ret = hyper_schedule_new(&info, t, st, &s, err, sizeof(err));
		hyper_schedule_free(s);
		if (!clash) {
			EXPECT_EQ(0, ret) TH_LOG("case %u: %s", c, err);
			continue;
		}
		refused++;
		ASSERT_EQ(-EBADMSG, ret) TH_LOG("case %u accepted", c);
		ASSERT_EQ(2, sscanf(err, "arena: tensor \"t%u\" (arena_offsets[0] = %*u, %*u bytes) and tensor \"t%u\"",
				    &i, &j)) TH_LOG("case %u: %s", c, err);
		EXPECT_TRUE(i < n && j < n && rnd_clash(&r, i, j))
			TH_LOG("case %u: %s", c, err);
	}
	/* both ways are taken often */
	EXPECT_GT(refused, cases / 4);
	EXPECT_LT(refused, cases - cases / 4);
}

/*
 * Long sweeps, past the size where the overlap check sorts its keys by
 * radix: one tensor defined per step, so interval i is tensor i, at
 * offsets that take one, two or three of the sort's 11-bit digits, many
 * of them equal.  The pair named must be the one the sweep finds, worked
 * out here the slow way: for the first interval that overlaps one still
 * live, the live one nearest below it in (offset, index) order if that
 * reaches it, else the nearest above.  A sort that misorders any digit
 * names another pair or misses the overlap.
 */
#define LONGRUN_N	3000
/* room for overlap_shared_offsets_name_the_sweeps_pair() */
#define LONGCASE_MAX	12000

struct long_case {
	uint32_t end[LONGCASE_MAX];	/* the last step it is resident in */
	uint64_t off[LONGCASE_MAX], bytes[LONGCASE_MAX];
	char id[LONGCASE_MAX][8];
	/* long_verdict()'s schedule */
	struct hyper_tensor_info t[LONGCASE_MAX];
	struct hyper_step_info st[LONGCASE_MAX];
	uint32_t defs[LONGCASE_MAX];
	struct hyper_cop dets[LONGCASE_MAX];
};

static bool key_lt(const struct long_case *r, uint32_t a, uint32_t b)
{
	return r->off[a] < r->off[b] || (r->off[a] == r->off[b] && a < b);
}

/* The pair the sweep names, as "j i"; false when none overlap. */
static bool long_expect(const struct long_case *r, uint32_t n, uint32_t *pj,
			uint32_t *pi)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t lo = UINT32_MAX, hi = UINT32_MAX;

		for (uint32_t j = 0; j < i; j++) {
			if (r->end[j] < i)
				continue;	/* ended before i began */
			if (key_lt(r, j, i)) {
				if (lo == UINT32_MAX || key_lt(r, lo, j))
					lo = j;
			} else if (hi == UINT32_MAX || key_lt(r, j, hi)) {
				hi = j;
			}
		}
		if (lo != UINT32_MAX && r->off[lo] + r->bytes[lo] > r->off[i]) {
			*pj = lo;
			*pi = i;
			return true;
		}
		if (hi != UINT32_MAX && r->off[i] + r->bytes[i] > r->off[hi]) {
			*pj = hi;
			*pi = i;
			return true;
		}
	}
	return false;
}

/*
 * @r's @n tensors as a schedule (step i defines tensor i and detaches
 * those whose end it is, at most @back steps before it), handed to
 * hyper_schedule_new(): refused where long_expect() finds a pair, with
 * that pair in the message, else accepted.  Whether it was refused.
 */
static bool long_verdict(struct __test_metadata *_metadata,
			 struct long_case *r, uint32_t n, uint32_t back,
			 uint64_t arena_bytes, unsigned int c)
{
	struct hyper_schedule_info info = {
		.flags = HYPER_SCHED_ARENA, .nr_tensors = n, .nr_steps = n,
		.arena_bytes = arena_bytes,
	};
	struct hyper_schedule *s = NULL;
	uint32_t nx = 0, i, j, ei = 0, ej = 0;
	char err[512], want[512];
	bool clash;
	int ret;

	for (i = 0; i < n; i++)
		r->t[i] = (struct hyper_tensor_info){
			.id = r->id[i], .bytes = r->bytes[i],
			.kind = HYPER_KIND_ACTIVATION,
			.home = HYPER_HOME_NONE, .nr_arena_offsets = 1,
			.arena_offsets = &r->off[i],
		};
	for (i = 0; i < n; i++) {
		r->defs[i] = i;
		r->st[i] = (struct hyper_step_info){
			.op = "s", .defines = &r->defs[i], .nr_defines = 1,
			.after = r->dets + nx,
		};
		for (j = i >= back ? i - back : 0; j <= i; j++)
			if (r->end[j] == i)
				r->dets[nx++] = (struct hyper_cop){ HYPER_OP_DETACH,
								    j };
		r->st[i].nr_after = (uint32_t)(r->dets + nx - r->st[i].after);
	}
	clash = long_expect(r, n, &ej, &ei);
	ret = hyper_schedule_new(&info, r->t, r->st, &s, err, sizeof(err));
	hyper_schedule_free(s);
	if (!clash) {
		EXPECT_EQ(0, ret) TH_LOG("case %u: %s", c, err);
		return false;
	}
	ASSERT_EQ(-EBADMSG, ret) TH_LOG("case %u accepted", c);
	snprintf(want, sizeof(want), "arena: tensor \"t%u\" (arena_offsets[0] = %" PRIu64 ", %" PRIu64 " bytes) and tensor \"t%u\" (arena_offsets[0] = %" PRIu64 ", %" PRIu64 " bytes) are resident together from step %u (s) on and overlap",
		 ej, r->off[ej], r->bytes[ej], ei, r->off[ei], r->bytes[ei], ei);
	EXPECT_STREQ(want, err) TH_LOG("case %u", c);
	return true;
}

TEST(overlap_long_sweeps_name_the_sweeps_pair)
{
	static struct long_case r;
	unsigned int seed = 7, refused = 0, cases = 48;

	for (unsigned int c = 0; c < cases; c++) {
		uint32_t n = 256 + (uint32_t)rand_r(&seed) % (LONGRUN_N - 256);
		/* spacing of the slots in granules: 1, 2 or 3 radix digits */
		uint64_t k = c % 3 == 0 ? 1 : c % 3 == 1 ? 64 : 1024;
		uint64_t slots = (uint64_t)n * (c % 2 ? 40 : 2);

		for (uint32_t i = 0; i < n; i++) {
			r.end[i] = i + (uint32_t)rand_r(&seed) % 4;
			if (r.end[i] >= n)
				r.end[i] = n - 1;
			r.off[i] = 64 * (k * ((uint64_t)rand_r(&seed) % slots) +
					 (c % 4 < 2 ? 0 : (uint64_t)rand_r(&seed) % k));
			r.bytes[i] = 64 * (1 + (uint64_t)rand_r(&seed) % (2 * k));
			snprintf(r.id[i], sizeof(r.id[i]), "t%u", i);
		}
		refused += long_verdict(_metadata, &r, n, 3,
					64 * (slots * k + 4 * k), c);
	}
	/* both verdicts are reached */
	EXPECT_GT(refused, cases / 4);
	EXPECT_LT(refused, cases - cases / 4);
}

/*
 * Two that ended side by side just above a new one, which reaches over
 * both: the check steps past every ended neighbour, not only the first,
 * so nothing overlaps.  Interval by interval the same with one still
 * live: refused, naming it.
 */
TEST(overlap_steps_past_every_ended_neighbour)
{
	for (int live = 0; live < 2; live++) {
		uint64_t off[3] = { 64, 128, 0 };
		struct hyper_tensor_info t[3];
		const char *id[3] = { "a", "b", "c" };
		uint32_t d0[2] = { 0, 1 }, d1 = 2;
		struct hyper_cop det[2] = {
			{ HYPER_OP_DETACH, 0 }, { HYPER_OP_DETACH, 1 },
		};
		struct hyper_step_info st[2] = {
			{ .op = "s0", .defines = d0, .nr_defines = 2,
			  .after = det, .nr_after = 2 - live },
			{ .op = "s1", .defines = &d1, .nr_defines = 1 },
		};
		struct hyper_schedule_info info = {
			.flags = HYPER_SCHED_ARENA, .nr_tensors = 3, .nr_steps = 2,
			.arena_bytes = 4096,
		};
		struct hyper_schedule *s = NULL;
		char err[512];
		int ret;

		for (int i = 0; i < 3; i++)
			t[i] = (struct hyper_tensor_info){
				.id = id[i], .bytes = i == 2 ? 256 : 64,
				.kind = HYPER_KIND_ACTIVATION,
				.home = HYPER_HOME_NONE, .nr_arena_offsets = 1,
				.arena_offsets = &off[i],
			};
		ret = hyper_schedule_new(&info, t, st, &s, err, sizeof(err));
		hyper_schedule_free(s);
		if (!live) {
			EXPECT_EQ(0, ret) TH_LOG("%s", err);
			continue;
		}
		EXPECT_EQ(-EBADMSG, ret);
		EXPECT_STREQ("arena: tensor \"b\" (arena_offsets[0] = 128, 64 bytes) and tensor \"c\" (arena_offsets[0] = 0, 256 bytes) are resident together from step 1 (s1) on and overlap",
			     err);
	}
}

/*
 * Sweeps where many are live at once: lives of up to LONGLIFE steps, at
 * slots of their own (a shuffle), so none overlap but where one interval
 * is moved next to an earlier one.  The check meets many that ended on
 * both sides of a new interval and steps past them; the pair named must
 * be the one long_expect() works out.  A sweep that kept an ended one as
 * a neighbour, or lost a live one while stepping past the ended, names
 * another pair, refuses a clean case or misses the moved one.
 */
#define LONGLIFE	400

TEST(overlap_many_live_name_the_sweeps_pair)
{
	static struct long_case r;
	static uint32_t slot[LONGRUN_N];
	unsigned int seed = 11, refused = 0, cases = 40;

	for (unsigned int c = 0; c < cases; c++) {
		uint32_t n = 256 + (uint32_t)rand_r(&seed) % (LONGRUN_N - 256);
		uint32_t life = c % 2 ? LONGLIFE : 40, k = 1 + c % 3;
		uint32_t i, j;

		for (i = 0; i < n; i++)
			slot[i] = i;
		for (i = n - 1; i > 0; i--) {
			j = (uint32_t)rand_r(&seed) % (i + 1);
			uint32_t x = slot[i];

			slot[i] = slot[j];
			slot[j] = x;
		}
		for (i = 0; i < n; i++) {
			r.end[i] = i + (uint32_t)rand_r(&seed) % life;
			if (r.end[i] >= n)
				r.end[i] = n - 1;
			r.off[i] = 64ULL * k * slot[i];
			r.bytes[i] = 64ULL * (1 + (uint32_t)rand_r(&seed) % k);
			snprintf(r.id[i], sizeof(r.id[i]), "t%u", i);
		}
		/* three cases in four: one moved next to an earlier one */
		if (c % 4) {
			i = n / 2 + (uint32_t)rand_r(&seed) % (n / 2);
			j = i - 1 - (uint32_t)rand_r(&seed) % (life < i ? life : i);
			r.off[i] = r.off[j] + 64ULL * ((uint32_t)rand_r(&seed) % 3);
			if (r.off[i] >= 64)
				r.off[i] -= 64;
		}
		refused += long_verdict(_metadata, &r, n, life,
					64ULL * k * (n + 4), c);
	}
	/* both verdicts are reached */
	EXPECT_GT(refused, cases / 4);
	EXPECT_LT(refused, cases - cases / 8);
}

/*
 * Many intervals on few offsets, as a decode plan's are (980 offsets for
 * 146,271 intervals at 100k operators), past the first 4096 intervals
 * by which the overlap check chooses to look each offset up rather than
 * sort every interval: slot i % slots, so an offset comes back once
 * every "slots" steps, after the one before there ended or while it
 * still lives (lives longer than that in one case in three), and sizes
 * up to the slots' spacing or over the next slot (one case in four).
 * Some cases move one interval beyond the first 4096 next to an earlier
 * one; some place the arena above 256 GiB.  The pair named must be the
 * one long_expect() works out: a check that took an ended interval at a
 * new one's offset for live, or a live one for ended, or lost one on
 * the way, names another pair, refuses a clean case or misses one.
 */
TEST(overlap_shared_offsets_name_the_sweeps_pair)
{
	static struct long_case r;
	unsigned int seed = 13, refused = 0, cases = 16;

	for (unsigned int c = 0; c < cases; c++) {
		uint32_t n = 4200 + (uint32_t)rand_r(&seed) % (LONGCASE_MAX - 4200);
		uint32_t slots = 8 + (uint32_t)rand_r(&seed) % 600, i, j;
		uint32_t life = c % 3 ? slots : slots + 2, k = 1 + c % 4;
		uint64_t base = c % 5 == 4 ? 1ULL << 40 : 0;

		for (i = 0; i < n; i++) {
			r.end[i] = i + (uint32_t)rand_r(&seed) % life;
			if (r.end[i] >= n)
				r.end[i] = n - 1;
			r.off[i] = base + 64ULL * k * (i % slots);
			r.bytes[i] = 64ULL * (1 + (uint32_t)rand_r(&seed) %
					      (c % 4 == 3 ? k + 1 : k));
			snprintf(r.id[i], sizeof(r.id[i]), "t%u", i);
		}
		/* one case in two: one moved next to an earlier one */
		if (c % 2) {
			i = 4100 + (uint32_t)rand_r(&seed) % (n - 4100);
			j = i - 1 - (uint32_t)rand_r(&seed) % (life - 1);
			r.off[i] = r.off[j] + 64ULL * ((uint32_t)rand_r(&seed) % 2);
		}
		refused += long_verdict(_metadata, &r, n, life,
					base + 64ULL * k * (slots + 4), c);
	}
	/* both verdicts are reached */
	EXPECT_GT(refused, cases / 4);
	EXPECT_LT(refused, cases - cases / 4);
}

/*
 * An offset whose last interval ended, taken by a new one: the overlap
 * check keeps the position in its set for the new interval (a decode
 * plan's intervals mostly come this way) instead of dropping it and
 * joining again.  Tensor i is defined in step from[i] and detached after
 * step to[i] (-1: never); the new one must be a neighbour to every later
 * interval as if it had joined, and its own neighbour above is past the
 * ended one.  Each case: the message, or "" for accepted.
 */
struct takeover {
	uint64_t off[4], bytes[4];
	int from[4], to[4];
	uint32_t nt, ns;
	const char *msg;
};

static const struct takeover takeovers[] = {
	/* b takes a's offset; c comes to the same while b lives */
	{ { 0, 0, 0 }, { 64, 64, 64 }, { 0, 1, 2 }, { 0, -1, -1 }, 3, 3,
	  "arena: tensor \"t1\" (arena_offsets[0] = 0, 64 bytes) and tensor \"t2\" (arena_offsets[0] = 0, 64 bytes) are resident together from step 2 (s) on and overlap" },
	/* b (128 bytes) takes a's; c at 64 meets b below it */
	{ { 0, 0, 64 }, { 64, 128, 64 }, { 0, 1, 2 }, { 0, -1, -1 }, 3, 3,
	  "arena: tensor \"t1\" (arena_offsets[0] = 0, 128 bytes) and tensor \"t2\" (arena_offsets[0] = 64, 64 bytes) are resident together from step 2 (s) on and overlap" },
	/* c below reaches b, which took a's offset */
	{ { 128, 128, 0 }, { 64, 64, 192 }, { 0, 1, 2 }, { 0, -1, -1 }, 3, 3,
	  "arena: tensor \"t1\" (arena_offsets[0] = 128, 64 bytes) and tensor \"t2\" (arena_offsets[0] = 0, 192 bytes) are resident together from step 2 (s) on and overlap" },
	/* b takes a's offset and reaches x above, live from the start */
	{ { 192, 0, 0 }, { 64, 64, 256 }, { 0, 0, 1 }, { -1, 0, -1 }, 3, 2,
	  "arena: tensor \"t0\" (arena_offsets[0] = 192, 64 bytes) and tensor \"t2\" (arena_offsets[0] = 0, 256 bytes) are resident together from step 1 (s) on and overlap" },
	/* b takes a's offset, ends; c takes it in turn, d beside it */
	{ { 0, 0, 0, 64 }, { 64, 64, 64, 64 }, { 0, 1, 2, 3 },
	  { 0, 1, -1, -1 }, 4, 4, "" },
	/* the same, c then d at its offset */
	{ { 0, 0, 0, 0 }, { 64, 64, 64, 64 }, { 0, 1, 2, 3 },
	  { 0, 1, -1, -1 }, 4, 4,
	  "arena: tensor \"t2\" (arena_offsets[0] = 0, 64 bytes) and tensor \"t3\" (arena_offsets[0] = 0, 64 bytes) are resident together from step 3 (s) on and overlap" },
};

TEST(overlap_at_an_ended_ones_offset_is_refused)
{
	for (size_t c = 0; c < ARRAY_SIZE(takeovers); c++) {
		const struct takeover *k = &takeovers[c];
		struct hyper_schedule_info info = {
			.flags = HYPER_SCHED_ARENA, .nr_tensors = k->nt,
			.nr_steps = k->ns, .arena_bytes = 4096,
		};
		static const char *const id[4] = { "t0", "t1", "t2", "t3" };
		struct hyper_tensor_info t[4];
		struct hyper_step_info st[4];
		uint32_t defs[4][4], nd[4] = { 0 }, nx[4] = { 0 };
		struct hyper_cop dets[4][4];
		struct hyper_schedule *s = NULL;
		char err[512];
		int ret;

		for (uint32_t i = 0; i < k->nt; i++) {
			t[i] = (struct hyper_tensor_info){
				.id = id[i], .bytes = k->bytes[i],
				.kind = HYPER_KIND_ACTIVATION,
				.home = HYPER_HOME_NONE, .nr_arena_offsets = 1,
				.arena_offsets = &k->off[i],
			};
			defs[k->from[i]][nd[k->from[i]]++] = i;
			if (k->to[i] >= 0)
				dets[k->to[i]][nx[k->to[i]]++] =
					(struct hyper_cop){ HYPER_OP_DETACH, i };
		}
		for (uint32_t j = 0; j < k->ns; j++)
			st[j] = (struct hyper_step_info){
				.op = "s", .defines = defs[j], .nr_defines = nd[j],
				.after = dets[j], .nr_after = nx[j],
			};
		ret = hyper_schedule_new(&info, t, st, &s, err, sizeof(err));
		hyper_schedule_free(s);
		EXPECT_EQ(*k->msg ? -EBADMSG : 0, ret) TH_LOG("case %zu: %s", c, err);
		EXPECT_STREQ(k->msg, err) TH_LOG("case %zu", c);
	}
}

TEST_F(bad, rejected)
{
	struct hyper_schedule *s = (void *)1;
	char err[512];

	EXPECT_EQ(-EBADMSG, parse_sq(variant->json, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, s);
	EXPECT_STREQ(variant->msg, err);
}

/*
 * The offsets' counts are checked with no count of each tensor's
 * residencies: each residency's number against its tensor's offsets,
 * and their sum against the residencies.  What is wrong is still named
 * in the order of the messages: a count (the first tensor's whose is
 * wrong) before any offset's alignment or range, whichever residency
 * comes first; counts that add up but are each wrong; one too many; an
 * offset past the arena by far (2^62: its room below the arena's end
 * wraps).
 */
TEST(offset_counts_in_message_order)
{
	static const uint64_t a_ok[] = { 0, 4096 }, a3[] = { 0, 4096, 0 },
		a_odd[] = { 1, 4096 }, b_ok[] = { 0 }, b_end[] = { 8128 },
		c_ok[] = { 4096 }, c2[] = { 4096, 0 }, c_end[] = { 8192 },
		c_far[] = { 1ULL << 62 };
	static const struct {
		const uint64_t *a, *b, *c;
		uint32_t na, nb, nc;
		const char *msg;
	} k[] = {
		{ a_ok, b_ok, c_ok, 2, 1, 1, NULL },
		{ a3, NULL, c_ok, 3, 0, 1,
		  "tensors[0].arena_offsets: tensor \"a\" becomes resident 2 times but has 3 offsets (one per residency, in the order they begin)" },
		{ a_ok, b_ok, c2, 2, 1, 2,
		  "tensors[2].arena_offsets: tensor \"c\" becomes resident 1 times but has 2 offsets (one per residency, in the order they begin)" },
		{ a_odd, b_ok, c2, 2, 1, 2,
		  "tensors[2].arena_offsets: tensor \"c\" becomes resident 1 times but has 2 offsets (one per residency, in the order they begin)" },
		{ a_odd, b_end, c_ok, 2, 1, 1,
		  "tensors[0].arena_offsets[0]: offset 1 of tensor \"a\" is not a multiple of 64" },
		{ a_ok, b_end, c_ok, 2, 1, 1,
		  "tensors[1].arena_offsets[0]: tensor \"b\" at offset 8128 (4096 bytes, 4096 aligned) ends past arena_bytes 8192" },
		{ a_ok, b_ok, c_end, 2, 1, 1,
		  "tensors[2].arena_offsets[0]: tensor \"c\" at offset 8192 (100 bytes, 128 aligned) ends past arena_bytes 8192" },
		{ a_ok, b_ok, c_far, 2, 1, 1,
		  "tensors[2].arena_offsets[0]: tensor \"c\" at offset 4611686018427387904 (100 bytes, 128 aligned) ends past arena_bytes 8192" },
	};
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		struct hyper_schedule *s;
		int ret = build_offsets(k[i].a, k[i].na, k[i].b, k[i].nb,
					k[i].c, k[i].nc, &s, err, sizeof(err));

		if (!ret)
			hyper_schedule_free(s);
		EXPECT_EQ(k[i].msg ? -EBADMSG : 0, ret) TH_LOG("case %zu: %s", i, err);
		EXPECT_STREQ(k[i].msg ? k[i].msg : "", err) TH_LOG("case %zu", i);
	}
}

HYPER_TEST_MAIN
