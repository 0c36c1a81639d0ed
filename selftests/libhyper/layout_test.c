// SPDX-License-Identifier: GPL-2.0
/*
 * The arena layout: random valid schedules, each run to the end in an
 * arena of exactly hyper_schedule_info.arena_bytes.  A layout that put
 * two tensors resident at the same time on the same bytes, or an
 * executor that strayed from it, fails the run; so does a layout taller
 * than twice the peak, which would make the arena pointless.
 *
 * usage: layout_test [--backend shmem|kmod]
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "libhyper/schedule.h"
#include "util/huge.h"
#include "util/residency.h"

#define NT	24
#define STEPS	40

struct gen {
	char *buf;
	size_t len, cap;
	unsigned int seed;
	bool resident[NT], pool[NT];
};

static void put(struct gen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
		va_end(ap);
		if ((size_t)n < g->cap - g->len)
			break;
		g->cap = 2 * g->cap + n;
		g->buf = realloc(g->buf, g->cap);
	}
	g->len += n;
}

static unsigned int rnd(struct gen *g, unsigned int n)
{
	return rand_r(&g->seed) % n;
}

/* One cache-op list, valid for the state machine as it stands. */
static void cops(struct gen *g, const char *key)
{
	bool first = true;

	put(g, ",\"%s\":[", key);
	for (int k = 0; k < 4; k++) {
		int t = rnd(g, NT);
		const char *op = NULL;

		if (!g->resident[t] && g->pool[t] && rnd(g, 2)) {
			op = "prefetch";
			g->resident[t] = true;
		} else if (g->resident[t] && !g->pool[t] && rnd(g, 2)) {
			op = "store";
			g->pool[t] = true;
		} else if (g->resident[t] && g->pool[t]) {
			op = "detach";
			g->resident[t] = false;
		}
		if (op) {
			put(g, "%s{\"op\":\"%s\",\"tensor\":\"t%d\"}",
			    first ? "" : ",", op, t);
			first = false;
		}
	}
	put(g, "]");
}

/* With @device, one tensor in five starts resident (home "device"). */
static char *random_schedule_homed(unsigned int seed, bool device)
{
	struct gen g = { .seed = seed };

	put(&g, "{\"format\":\"hyper-schedule\",\"version\":1,\"tensors\":[");
	for (int t = 0; t < NT; t++) {
		/* Sizes from 4 KiB to 1 MiB, so that holes matter. */
		unsigned int bytes = 4096u << rnd(&g, 9);
		const char *home;

		g.pool[t] = t % 3 != 2;
		home = g.pool[t] ? "pool" : "none";
		if (device && t % 5 == 1) {
			g.pool[t] = false;
			g.resident[t] = true;
			home = "device";
		}
		put(&g, "%s{\"id\":\"t%d\",\"bytes\":%u,\"kind\":\"weight\",\"home\":\"%s\"}",
		    t ? "," : "", t, bytes - rnd(&g, 64), home);
	}
	put(&g, "],\"steps\":[");
	for (int s = 0; s < STEPS; s++) {
		int d = rnd(&g, NT);

		put(&g, "%s{\"op\":\"s%d\"", s ? "," : "", s);
		cops(&g, "before");
		put(&g, ",\"uses\":[");
		for (int t = 0, n = 0; t < NT; t++)
			if (g.resident[t] && rnd(&g, 3) == 0)
				put(&g, "%s\"t%d\"", n++ ? "," : "", t);
		/* A define makes a tensor resident with no pool copy. */
		put(&g, "],\"defines\":[\"t%d\"]", d);
		g.resident[d] = true;
		g.pool[d] = false;
		cops(&g, "after");
		put(&g, "}");
	}
	put(&g, "]}");
	return g.buf;
}

static char *random_schedule(unsigned int seed)
{
	return random_schedule_homed(seed, false);
}

TEST(random_schedules_run_in_exactly_the_layout)
{
	struct hyper_schedule_info info;
	size_t dev_len = 64 << 20;
	char *dev = dev_mem(dev_len);
	int laid_out = 0;

	ASSERT_NE(NULL, dev);
	for (unsigned int seed = 1; seed <= 60; seed++) {
		char *json = random_schedule(seed), err[512];
		struct hyper_schedule *s;
		struct hyper_ctx *ctx;
		struct iovec iov = { dev, dev_len };
		int step;

		ASSERT_EQ(0, hyper_schedule_parse(json, strlen(json), &s, err,
						  sizeof(err))) {
			TH_LOG("seed %u: %s", seed, err);
		}
		free(json);
		ASSERT_EQ(0, hyper_schedule_info(s, &info));
		if (!info.peak_device_bytes) {
			hyper_schedule_free(s);
			continue;
		}
		laid_out++;
		EXPECT_LE(info.peak_device_bytes, info.arena_bytes);
		EXPECT_GE(2 * info.peak_device_bytes, info.arena_bytes) {
			TH_LOG("seed %u: layout %llu for peak %llu", seed,
			       (unsigned long long)info.arena_bytes,
			       (unsigned long long)info.peak_device_bytes);
		}
		ASSERT_EQ(0, open_test_ctx(&ctx));
		ASSERT_EQ(0, hyper_register_buffers(ctx, &iov, 1));
		ASSERT_EQ(0, hyper_set_arena(ctx, dev, info.arena_bytes));
		ASSERT_EQ(0, hyper_attach(ctx, s));
		ASSERT_EQ(0, hyper_prepare(ctx)) {
			TH_LOG("seed %u: %s", seed, hyper_last_error(ctx));
		}
		while ((step = hyper_step_begin(ctx)) >= 0)
			ASSERT_EQ(0, hyper_step_end(ctx));
		EXPECT_EQ(-ENODATA, step) {
			TH_LOG("seed %u: %s", seed, hyper_last_error(ctx));
		}
		EXPECT_EQ(0, hyper_drain(ctx));
		hyper_close(ctx);
		hyper_schedule_free(s);
	}
	EXPECT_LT(40, laid_out);
	munmap(dev, dev_len);
}

/*
 * The residency builder libhyper and the planner share (util/residency.c):
 * each event is one tick, a prefetch or define begins a residency unless
 * one is open, a detach ends it, a store does neither.
 */
TEST(residency_builder_counts_events)
{
	struct hu_res r;
	struct hu_resid *v;
	uint32_t n;

	ASSERT_EQ(0, hu_res_init(&r, 3, 64, NULL, NULL));
	hu_res_begin(&r, 0, 100);		/* home device, at 0 */
	hu_res_tick(&r);
	r.step = 0;
	hu_res_op(&r, HYPER_OP_PREFETCH, 1, 4096);	/* 1 */
	hu_res_begin(&r, 2, 1);				/* a define, 2 */
	hu_res_tick(&r);
	hu_res_op(&r, HYPER_OP_DETACH, 0, 100);		/* 3 */
	r.step = 1;
	hu_res_op(&r, HYPER_OP_DETACH, 1, 4096);	/* 4 */
	hu_res_op(&r, HYPER_OP_STORE, 2, 1);		/* 5: nothing */
	hu_res_begin(&r, 2, 1);				/* resident already */
	hu_res_op(&r, HYPER_OP_PREFETCH, 0, 100);	/* 6: a again */
	ASSERT_EQ(0, hu_res_finish(&r, &v, &n));
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, v[0].tensor);
	EXPECT_EQ(0, v[0].start);
	EXPECT_EQ(3, v[0].end);
	EXPECT_EQ(128, v[0].bytes);
	EXPECT_EQ(UINT32_MAX, v[0].step);
	EXPECT_EQ(1, v[1].tensor);
	EXPECT_EQ(1, v[1].start);
	EXPECT_EQ(4, v[1].end);
	EXPECT_EQ(0, v[1].step);
	EXPECT_EQ(2, v[2].tensor);
	EXPECT_EQ(2, v[2].start);
	EXPECT_EQ(UINT64_MAX, v[2].end);
	EXPECT_EQ(64, v[2].bytes);
	EXPECT_EQ(0, v[3].tensor);
	EXPECT_EQ(1, v[3].nth);
	EXPECT_EQ(6, v[3].start);
	EXPECT_EQ(1, v[3].step);
	free(v);
}

static void *fail_third(void *ctx, void *p, size_t n)
{
	int *calls = ctx;

	return ++*calls == 3 ? NULL : realloc(p, n);
}

/* An allocation that fails is -ENOMEM at the end, nothing handed over. */
TEST(residency_builder_out_of_memory)
{
	struct hu_res r;
	struct hu_resid *v;
	uint32_t n;
	int calls = 0;

	ASSERT_EQ(0, hu_res_init(&r, 2, 64, fail_third, &calls));
	hu_res_begin(&r, 0, 1);		/* the third allocation */
	hu_res_begin(&r, 1, 1);
	hu_res_end(&r, 0);
	EXPECT_EQ(-ENOMEM, hu_res_finish(&r, &v, &n));
	EXPECT_EQ(NULL, v);
	EXPECT_EQ(0, n);
	EXPECT_EQ(3, calls);
}

static void *count_calls(void *ctx, void *p, size_t n)
{
	int *calls = ctx;

	++*calls;
	return realloc(p, n);
}

/*
 * Room reserved for a bound is one allocation, and the builder grows its
 * array only past it; a reserve that fails is -ENOMEM at the end.
 */
TEST(residency_builder_reserves_its_bound)
{
	struct hu_res r;
	struct hu_resid *v;
	uint32_t n;
	int calls = 0;

	ASSERT_EQ(0, hu_res_init(&r, 200, 64, count_calls, &calls));
	ASSERT_EQ(2, calls);			/* open, count */
	ASSERT_EQ(0, hu_res_reserve(&r, 150));
	ASSERT_EQ(0, hu_res_reserve(&r, 100));	/* below the room: nothing */
	EXPECT_EQ(3, calls);
	for (uint32_t t = 0; t < 150; t++, hu_res_tick(&r))
		hu_res_begin(&r, t, 1);
	EXPECT_EQ(3, calls);
	hu_res_begin(&r, 150, 1);		/* past it: grown */
	EXPECT_EQ(4, calls);
	ASSERT_EQ(0, hu_res_finish(&r, &v, &n));
	EXPECT_EQ(151, n);
	EXPECT_EQ(149, v[149].tensor);
	EXPECT_EQ(149, v[149].start);
	free(v);

	calls = 0;
	ASSERT_EQ(0, hu_res_init(&r, 2, 64, fail_third, &calls));
	EXPECT_EQ(-ENOMEM, hu_res_reserve(&r, 10));
	hu_res_begin(&r, 0, 1);
	EXPECT_EQ(-ENOMEM, hu_res_finish(&r, &v, &n));
	EXPECT_EQ(NULL, v);
	EXPECT_EQ(0, n);
}

/* The intervals of @s's steps by the builder alone, event by event. */
static int builders_intervals(const struct hyper_schedule *s,
			      struct hu_resid **vp, uint32_t *np)
{
	struct hu_res r;

	if (hu_res_init(&r, s->nr_tensors, HS_DEV_ALIGN, NULL, NULL)) {
		hu_res_free(&r);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < s->nr_tensors; t++)
		if (s->tensors[t].home == HYPER_HOME_DEVICE)
			hu_res_begin(&r, t, s->tensors[t].bytes);
	hu_res_tick(&r);
	for (uint32_t i = 0; i < s->nr_steps; i++) {
		const struct hs_step *st = &s->steps[i];

		r.step = i;
		for (uint32_t j = 0; j < st->nr_before; j++)
			hu_res_op(&r, st->before[j].op, st->before[j].tensor,
				  s->tensors[st->before[j].tensor].bytes);
		for (uint32_t j = 0; j < st->nr_defines; j++, hu_res_tick(&r))
			hu_res_begin(&r, st->defines[j],
				     s->tensors[st->defines[j]].bytes);
		for (uint32_t j = 0; j < st->nr_after; j++)
			hu_res_op(&r, st->after[j].op, st->after[j].tensor,
				  s->tensors[st->after[j].tensor].bytes);
	}
	return hu_res_finish(&r, vp, np);
}

/*
 * The validator's replay drives the builder as it goes (hs_validate()),
 * telling it only where the state machine begins or ends a residency.
 * On random schedules, with tensors homed on the device, prefetches,
 * stores, detaches and defines of tensors resident or not, its
 * intervals must be those the builder makes of every event in turn: a
 * replay a tick off, or one that began a residency for a tensor already
 * resident, would check a planner's offsets against other intervals
 * than those it placed.
 */
TEST(replay_drives_the_builder_event_by_event)
{
	unsigned int checked = 0, from_device = 0;

	for (unsigned int seed = 1; seed <= 80; seed++) {
		char *json = random_schedule_homed(seed, seed % 2), err[512];
		struct hs_err e = { err, sizeof(err) };
		struct hu_resid *v, *w;
		struct hyper_schedule *s;
		uint32_t n, m;

		ASSERT_EQ(0, hyper_schedule_parse(json, strlen(json), &s, err,
						  sizeof(err))) {
			TH_LOG("seed %u: %s", seed, err);
		}
		free(json);
		ASSERT_EQ(0, hs_validate(s, &v, &n, &e)) {
			TH_LOG("seed %u: %s", seed, err);
		}
		ASSERT_EQ(0, builders_intervals(s, &w, &m));
		ASSERT_EQ(m, n) TH_LOG("seed %u", seed);
		for (uint32_t i = 0; i < n; i++) {
			EXPECT_EQ(w[i].start, v[i].start) TH_LOG("seed %u: %u", seed, i);
			EXPECT_EQ(w[i].end, v[i].end) TH_LOG("seed %u: %u", seed, i);
			EXPECT_EQ(w[i].bytes, v[i].bytes) TH_LOG("seed %u: %u", seed, i);
			EXPECT_EQ(w[i].tensor, v[i].tensor) TH_LOG("seed %u: %u", seed, i);
			EXPECT_EQ(w[i].nth, v[i].nth) TH_LOG("seed %u: %u", seed, i);
			EXPECT_EQ(w[i].step, v[i].step) TH_LOG("seed %u: %u", seed, i);
			from_device += v[i].step == UINT32_MAX;
		}
		checked += n;
		free(v);
		free(w);
		hyper_schedule_free(s);
	}
	EXPECT_LT(2000, checked);
	EXPECT_LT(100, from_device);
}

TEST(no_layout_for_an_empty_schedule)
{
	struct hyper_schedule_info info;
	struct hyper_schedule *s;

	ASSERT_EQ(0, parse_sq("{" HDR "'tensors':[],'steps':[]}", &s, NULL, 0));
	ASSERT_EQ(0, hyper_schedule_info(s, &info));
	EXPECT_EQ(0, info.arena_bytes);
	hyper_schedule_free(s);
}

/*
 * libhyper's own builder takes a first room of a huge page or more as a
 * block of whole huge pages on a 2 MiB bound (from malloc() it was
 * mapped on no bound, its ends in 4 KiB faults); a smaller one, and a
 * caller's allocator, as before.  The block grows past its room and is
 * freed as any other.
 */
TEST(residency_builder_first_room_on_huge_pages)
{
	uint32_t big = (uint32_t)(HU_HUGE_PAGE / sizeof(struct hu_resid)) + 5;
	struct hu_res r;
	struct hu_resid *v;
	uint32_t n;
	int calls = 0;

	ASSERT_EQ(0, hu_res_init(&r, big + 1, 64, NULL, NULL));
	ASSERT_EQ(0, hu_res_reserve(&r, big));
	EXPECT_EQ(0, (uintptr_t)r.v % HU_HUGE_PAGE);
	for (uint32_t t = 0; t <= big; t++, hu_res_tick(&r))
		hu_res_begin(&r, t, 1);		/* one past the room */
	ASSERT_EQ(0, hu_res_finish(&r, &v, &n));
	ASSERT_EQ(big + 1, n);
	EXPECT_EQ(big, v[big].tensor);
	EXPECT_EQ(big - 1, v[big - 1].start);
	free(v);

	ASSERT_EQ(0, hu_res_init(&r, 10, 64, NULL, NULL));
	ASSERT_EQ(0, hu_res_reserve(&r, 10));
	hu_res_free(&r);

	ASSERT_EQ(0, hu_res_init(&r, 2, 64, count_calls, &calls));
	ASSERT_EQ(0, hu_res_reserve(&r, big));	/* the caller's, as asked */
	EXPECT_EQ(3, calls);
	hu_res_free(&r);
}

HYPER_TEST_MAIN
