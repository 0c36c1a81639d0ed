// SPDX-License-Identifier: GPL-2.0
/*
 * The best-fit allocator behind the device arena and the shmem pool,
 * tested directly (it is internal): placement, merging on free, alignment,
 * refusal of bad frees, and a randomized run against a byte map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "range.h"

TEST(best_fit_and_merge)
{
	struct hx_range r;
	uint64_t a, b, c, d;

	ASSERT_EQ(0, hx_range_init(&r, 1000 * 64, 64));
	ASSERT_EQ(0, hx_range_alloc(&r, 100 * 64, 0, &a));
	ASSERT_EQ(0, hx_range_alloc(&r, 10 * 64, 0, &b));
	ASSERT_EQ(0, hx_range_alloc(&r, 300 * 64, 0, &c));
	ASSERT_EQ(0, hx_range_alloc(&r, 20 * 64, 0, &d));
	EXPECT_EQ(0, a);
	EXPECT_EQ(100 * 64, b);
	/* Holes of 100 (at a) and 300 (at c): 90 goes in the smaller one. */
	ASSERT_EQ(0, hx_range_free(&r, a, 100 * 64));
	ASSERT_EQ(0, hx_range_free(&r, c, 300 * 64));
	ASSERT_EQ(0, hx_range_alloc(&r, 90 * 64, 0, &a));
	EXPECT_EQ(0, a);
	EXPECT_EQ(570 * 64, hx_range_largest(&r));
	/* Freeing everything merges back to one extent. */
	ASSERT_EQ(0, hx_range_free(&r, a, 90 * 64));
	ASSERT_EQ(0, hx_range_free(&r, d, 20 * 64));
	ASSERT_EQ(0, hx_range_free(&r, b, 10 * 64));
	EXPECT_EQ(1, r.n);
	EXPECT_EQ(0, r.used);
	EXPECT_EQ(1000 * 64, hx_range_largest(&r));
	hx_range_fini(&r);
}

TEST(rounding_and_alignment)
{
	struct hx_range r;
	uint64_t a, b;

	ASSERT_EQ(0, hx_range_init(&r, 8 << 20, 4096));
	ASSERT_EQ(0, hx_range_alloc(&r, 1, 0, &a));
	EXPECT_EQ(4096, r.used);
	ASSERT_EQ(0, hx_range_alloc(&r, 4096, 2 << 20, &b));
	EXPECT_EQ(2 << 20, b);
	/* The skipped space before the aligned start stays free. */
	EXPECT_EQ(0, hx_range_alloc(&r, (2 << 20) - 4096, 0, &b));
	EXPECT_EQ(4096, b);
	hx_range_fini(&r);
	EXPECT_EQ(-EINVAL, hx_range_init(&r, 1, 3));
}

TEST(refuses_bad_input)
{
	struct hx_range r;
	uint64_t a;

	ASSERT_EQ(0, hx_range_init(&r, 4096, 64));
	EXPECT_EQ(-ENOMEM, hx_range_alloc(&r, 0, 0, &a));
	EXPECT_EQ(-ENOMEM, hx_range_alloc(&r, 4097, 0, &a));
	ASSERT_EQ(0, hx_range_alloc(&r, 128, 0, &a));
	/* Double free and frees outside the range are refused, not merged. */
	EXPECT_EQ(0, hx_range_free(&r, a, 128));
	EXPECT_EQ(-EINVAL, hx_range_free(&r, a, 128));
	EXPECT_EQ(-EINVAL, hx_range_free(&r, 4096, 64));
	EXPECT_EQ(-EINVAL, hx_range_free(&r, UINT64_MAX - 63, 128));
	EXPECT_EQ(0, r.used);
	hx_range_fini(&r);
}

TEST(random_against_map)
{
	enum { UNITS = 512, SLOTS = 64 };
	struct hx_range r;
	uint64_t off[SLOTS], len[SLOTS];
	unsigned char map[UNITS];
	unsigned int seed = 1;

	ASSERT_EQ(0, hx_range_init(&r, UNITS * 64, 64));
	memset(map, 0, sizeof(map));
	memset(len, 0, sizeof(len));
	for (int it = 0; it < 20000; it++) {
		int s = rand_r(&seed) % SLOTS;

		if (len[s]) {
			ASSERT_EQ(0, hx_range_free(&r, off[s], len[s]));
			memset(map + off[s] / 64, 0, len[s] / 64);
			len[s] = 0;
			continue;
		}
		len[s] = (1 + rand_r(&seed) % 32) * 64;
		if (hx_range_alloc(&r, len[s], 0, &off[s])) {
			/* Refused only when no hole is large enough. */
			EXPECT_LT(hx_range_largest(&r), len[s]);
			len[s] = 0;
			continue;
		}
		ASSERT_LE(off[s] + len[s], UNITS * 64);
		for (uint64_t u = off[s] / 64; u < (off[s] + len[s]) / 64; u++) {
			ASSERT_EQ(0, map[u]);
			map[u] = 1;
		}
	}
	hx_range_fini(&r);
}

TEST_HARNESS_MAIN
