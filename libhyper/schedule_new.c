// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hyper_schedule_new(): a schedule built from plain structures, for a
 * planner in the same process (libhyperplan).  It ends in the same
 * validator and layout as a parsed schedule, so a plan handed over this
 * way is held to exactly the rules a schedule file is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "util/huge.h"
#include "util/json.h"

/*
 * The arena offsets took reserved fields of struct hyper_tensor_info:
 * its size, and so LIBHYPER_1.0's ABI, must not change (LP64).
 */
_Static_assert(sizeof(void *) != 8 || sizeof(struct hyper_tensor_info) == 64,
	       "struct hyper_tensor_info changed size");

#define ZERO(a)	zero((a), sizeof(a) / sizeof((a)[0]))

/*
 * Every word or'ed, no early exit: a loop that stopped at the first
 * word set was a compare and branch a word for fields that are zero.
 */
static bool zero(const uint64_t *v, size_t n)
{
	uint64_t any = 0;

	for (size_t i = 0; i < n; i++)
		any |= v[i];
	return !any;
}

/*
 * The chunks of s->pool double up to CHUNK_BYTES from the first, which
 * is sized from the counts (hyper_schedule_begin()): the planner's
 * schedules take 35 to 41 bytes of pool a tensor or step (ids, names,
 * lists and offsets), so POOL_GUESS each makes one chunk of most, and a
 * small schedule still takes a few KiB.  A chunk of a huge page or more
 * is a block on a 2 MiB bound (hu_block_huge()), of the bytes
 * hu_block_size() gives, every one of them the chunk's: whole huge pages
 * but an end shorter than HU_HUGE_TAIL, the blocks' one rule.  Chunks
 * doubling from 4 KiB were 10 at DeepSeek-V2-Lite's 60k tensors
 * and steps, 4 MiB for 2 MiB used, all faulted 4 KiB at a time, and
 * hu_malloc_huge() advised only the huge pages inside a block, none of
 * a 2 MiB chunk off the bound.  At a million steps the pool is 81 MB,
 * mostly memory new to the process (in chunks of 1 MiB, 8,500 to 14,000
 * faults per schedule).  16 MiB stays below glibc's largest mmap
 * threshold (32 MiB), so a chunk can still come from free heap.
 */
#define CHUNK_FIRST	4096U
#define CHUNK_BYTES	(16U << 20)
#define POOL_GUESS	48U

/* @len rounded up to the pool's alignment. */
static size_t pool_round(size_t len)
{
	return (len + 7) & ~(size_t)7;
}

/*
 * A new chunk of s->pool with @need bytes (a multiple of 8) taken from
 * it, of at least @want bytes; NULL when out of memory.  Out of line:
 * pool_alloc()'s every call saved and restored the registers its call
 * of the allocator needs, a third of its instructions, for the one
 * call in thousands that takes a chunk.
 */
static __attribute__((noinline)) void *pool_grow(struct hyper_schedule *s,
						 size_t need, size_t want)
{
	struct hs_chunk *c = s->pool;
	size_t grow = c ? c->cap * 2 : want, cap;
	char *raw;
	struct hu_part part = HU_PART(raw, 0, false);

	if (grow > CHUNK_BYTES)
		grow = CHUNK_BYTES;
	cap = need > grow ? need : grow;
	if (cap > SIZE_MAX - sizeof(*c))
		return NULL;
	/* every byte of the block hu_block_huge() allocates */
	part.n = hu_block_size(sizeof(*c) + cap);
	c = hu_block_huge(&part, 1);
	if (!c)
		return NULL;
	c->next = s->pool;
	c->used = need;
	c->cap = part.n - sizeof(*c);
	s->pool = c;
	return c->data;
}

/*
 * @need bytes (a multiple of 8) of s->pool; NULL when out of memory.  A
 * step takes its name and lists in one piece (pool_put() places each),
 * where a piece each was two thirds of the calls at 100k steps; a
 * tensor its id and offsets.
 */
static inline void *pool_alloc(struct hyper_schedule *s, size_t need)
{
	struct hs_chunk *c = s->pool;
	void *p;

	if (!c || c->cap - c->used < need)
		return pool_grow(s, need, CHUNK_FIRST);
	p = (char *)c->data + c->used;
	c->used += need;
	return p;
}

/*
 * Below this many bytes a piece is copied in place (hu_copy_short()), a
 * word at a time: a step's name and lists and a tensor's id and offsets
 * are a few dozen bytes each, and a call of memcpy() for each was a
 * quarter of the copy of a step.
 */
#define COPY_SHORT	64

/*
 * @len bytes of @src at *@at, which moves past them, 8-aligned: where a
 * piece of their own would have put them.
 */
static inline __attribute__((always_inline)) void *
pool_put(char **at, const void *src, size_t len)
{
	char *p = *at;

	if (len <= COPY_SHORT)
		hu_copy_short(p, src, len);
	else
		memcpy(p, src, len);
	*at += pool_round(len);
	return p;
}

static int check_refs(const struct hyper_schedule *s, uint32_t si,
		      const char *what, const uint32_t *t, uint32_t n,
		      size_t stride, struct hs_err *e)
{
	for (uint32_t j = 0; j < n; j++) {
		uint32_t v = *(const uint32_t *)((const char *)t + j * stride);

		if (v >= s->nr_tensors) {
			hs_errf(e, "steps[%u].%s[%u]: tensor index %u out of range (%u tensors)",
				si, what, j, v, s->nr_tensors);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_cops(struct hyper_schedule *s, uint32_t si,
		      const char *what, const struct hyper_cop *src, uint32_t n,
		      struct hs_err *e)
{
	for (uint32_t j = 0; j < n; j++)
		if (src[j].op < HYPER_OP_PREFETCH || src[j].op > HYPER_OP_DETACH) {
			hs_errf(e, "steps[%u].%s[%u]: unknown cache op %u (enum hyper_cache_op)",
				si, what, j, src[j].op);
			return -EINVAL;
		}
	/* An empty list may be NULL: &src->tensor of it would be undefined. */
	if (!n)
		return 0;
	if (check_refs(s, si, what, &src->tensor, n, sizeof(*src), e))
		return -EINVAL;
	return 0;
}

/*
 * Whether any of @n tensor indices @t is @nt or more; any of @n cache
 * ops @c unknown or of such a tensor.  One pass of each list, no branch
 * an element: the lists checked one rule at a time, first each cop's op
 * and then its tensor, were a loop and a branch an element each, 13% of
 * the copy of a step.  lists_msg() finds the first one broken.
 */
static bool refs_bad(const uint32_t *t, uint32_t n, uint32_t nt)
{
	bool bad = false;

	for (uint32_t j = 0; j < n; j++)
		bad |= t[j] >= nt;
	return bad;
}

static bool cops_bad(const struct hyper_cop *c, uint32_t n, uint32_t nt)
{
	bool bad = false;

	for (uint32_t j = 0; j < n; j++)
		bad |= (c[j].op - HYPER_OP_PREFETCH >
			HYPER_OP_DETACH - HYPER_OP_PREFETCH) |
		       (c[j].tensor >= nt);
	return bad;
}

/*
 * Step @i's lists, one of which refs_bad() or cops_bad() found broken,
 * checked in the order of the messages: the first one broken is named.
 */
static __attribute__((noinline, cold)) int
lists_msg(struct hyper_schedule *s, uint32_t i,
	  const struct hyper_step_info *si, struct hs_err *e)
{
	if (check_refs(s, i, "uses", si->uses, si->nr_uses, sizeof(uint32_t), e) ||
	    check_refs(s, i, "defines", si->defines, si->nr_defines,
		       sizeof(uint32_t), e) ||
	    check_cops(s, i, "before", si->before, si->nr_before, e) ||
	    check_cops(s, i, "after", si->after, si->nr_after, e))
		return -EINVAL;
	return 0;
}

/* A tensor's id hash and length (HS_ID_MAX + 1 for any longer). */
struct id_ahead {
	uint32_t h, len;
};

static int add_tensor(struct hyper_schedule *s, uint32_t i,
		      const struct hyper_tensor_info *ti, struct id_ahead a,
		      bool arena, uint64_t *total, struct hs_err *e)
{
	struct hs_tensor *t = &s->tensors[i];
	size_t len = a.len, offs = 0;
	uint32_t slot;
	char *at;
	int dup;

	*t = (struct hs_tensor){ 0 };	/* fill() does not clear the array */
	if (!ZERO(ti->reserved)) {
		hs_errf(e, "tensors[%u]: reserved fields must be zero", i);
		return -EINVAL;
	}
	if (len < 1 || len > HS_ID_MAX) {
		hs_errf(e, "tensors[%u].id: must be a string of 1..%d bytes", i,
			HS_ID_MAX);
		return -EINVAL;
	}
	/*
	 * Every field is checked, in the order of the messages, before the
	 * copy is sized or taken: a bad one with a huge offset count asked
	 * the pool for room first (refused as out of memory, or taken for a
	 * tensor refused).  The id goes into the table once copied.
	 */
	slot = a.h & s->hash_mask;
	/* where the first slot is empty, as for most ids, no call to look on */
	dup = s->hash[slot] ? hs_hash_lookup(s, ti->id, a.h, &slot) : -1;
	if (dup >= 0) {
		hs_errf(e, "tensor %u: duplicate id \"%.*s\" (first is tensor %d)",
			i, HS_ID_MAX, ti->id, dup);
		return -EINVAL;
	}
	if (ti->bytes < 1 || ti->bytes > HS_BYTES_MAX ||
	    __builtin_add_overflow(*total, ti->bytes, total)) {
		hs_errf(e, "tensor %u: bytes must be in 1..2^48 (got %llu)", i,
			(unsigned long long)ti->bytes);
		return -EINVAL;
	}
	if (ti->kind < HYPER_KIND_WEIGHT || ti->kind > HYPER_KIND_OPTIMIZER ||
	    ti->home < HYPER_HOME_POOL || ti->home > HYPER_HOME_NONE) {
		hs_errf(e, "tensor %u: kind %u or home %u out of range", i,
			ti->kind, ti->home);
		return -EINVAL;
	}
	/*
	 * hyper_schedule_tensor() also gives libhyper's own layout: passed
	 * back without HYPER_SCHED_ARENA, those offsets are output only.
	 */
	if (arena && ti->nr_arena_offsets) {
		if (!ti->arena_offsets) {
			hs_errf(e, "tensors[%u]: %u arena offsets but no array",
				i, ti->nr_arena_offsets);
			return -EINVAL;
		}
		offs = ti->nr_arena_offsets * sizeof(*t->plan_off);
	}
	/* the id and the offsets, each where a piece of its own would be */
	at = pool_alloc(s, pool_round(len + 1) + offs);
	if (!at)
		return -ENOMEM;
	t->id = pool_put(&at, ti->id, len + 1);
	hs_hash_put(s, slot, i, a.h);
	t->bytes = ti->bytes;
	t->kind = ti->kind;
	t->home = ti->home;
	if (offs) {
		t->plan_off = pool_put(&at, ti->arena_offsets, offs);
		t->nr_plan_off = ti->nr_arena_offsets;
	}
	return 0;
}

static int add_step(struct hyper_schedule *s, uint32_t i,
		    const struct hyper_step_info *si, struct hs_err *e)
{
	struct hs_step *st = &s->steps[i];
	const char *op;
	size_t op_len;
	char *at;

	*st = (struct hs_step){ 0 };	/* fill() does not clear the array */
	if ((si->flags & ~HYPER_STEP_GEMM) || si->reserved0 ||
	    !ZERO(si->reserved)) {
		hs_errf(e, "steps[%u]: unknown flags or non-zero reserved fields", i);
		return -EINVAL;
	}
	if ((si->nr_before && !si->before) || (si->nr_after && !si->after) ||
	    (si->nr_uses && !si->uses) || (si->nr_defines && !si->defines)) {
		hs_errf(e, "steps[%u]: a list with a count but no array", i);
		return -EINVAL;
	}
	st->compute_ns = si->compute_ns;
	if (si->compute_ns > INT64_MAX ||
	    __builtin_add_overflow(s->total_compute_ns, si->compute_ns,
				   &s->total_compute_ns)) {
		hs_errf(e, "steps[%u].compute_ns: total compute time overflows", i);
		return -EINVAL;
	}
	if (si->flags & HYPER_STEP_GEMM) {
		if (!si->gemm_m || !si->gemm_n || !si->gemm_k ||
		    si->gemm_m > UINT32_MAX || si->gemm_n > UINT32_MAX ||
		    si->gemm_k > UINT32_MAX) {
			hs_errf(e, "steps[%u]: a GEMM shape wants m, n, k in 1..2^32-1", i);
			return -EINVAL;
		}
		st->flags = HYPER_STEP_GEMM;
		st->gemm[0] = (uint32_t)si->gemm_m;
		st->gemm[1] = (uint32_t)si->gemm_n;
		st->gemm[2] = (uint32_t)si->gemm_k;
	}
	if ((refs_bad(si->uses, si->nr_uses, s->nr_tensors) |
	     refs_bad(si->defines, si->nr_defines, s->nr_tensors) |
	     cops_bad(si->before, si->nr_before, s->nr_tensors) |
	     cops_bad(si->after, si->nr_after, s->nr_tensors)) &&
	    lists_msg(s, i, si, e))
		return -EINVAL;
	/* the name and the lists, each where a piece of its own would be */
	op = si->op ? si->op : "";
	op_len = strlen(op) + 1;
	at = pool_alloc(s, pool_round(op_len) +
			pool_round(si->nr_before * sizeof(*st->before)) +
			pool_round(si->nr_after * sizeof(*st->after)) +
			pool_round(si->nr_uses * sizeof(*st->uses)) +
			pool_round(si->nr_defines * sizeof(*st->defines)));
	if (!at)
		return -ENOMEM;
	st->op = pool_put(&at, op, op_len);
	/* an empty list stays NULL; it may come as NULL, no memcpy() from it */
	if (si->nr_before)
		st->before = pool_put(&at, si->before,
				      si->nr_before * sizeof(*st->before));
	if (si->nr_after)
		st->after = pool_put(&at, si->after,
				     si->nr_after * sizeof(*st->after));
	if (si->nr_uses)
		st->uses = pool_put(&at, si->uses,
				    si->nr_uses * sizeof(*st->uses));
	if (si->nr_defines)
		st->defines = pool_put(&at, si->defines,
				       si->nr_defines * sizeof(*st->defines));
	st->nr_before = si->nr_before;
	st->nr_after = si->nr_after;
	st->nr_uses = si->nr_uses;
	st->nr_defines = si->nr_defines;
	return 0;
}

/*
 * The tensors' id hashes are made AHEAD tensors before their inserts, from
 * the caller's ids (the same bytes as the copies), and their slots
 * fetched meanwhile: the inserts probe a table too large for the cache
 * in no order, and waited for memory at each one.
 */
#define AHEAD	16

/*
 * Tensor @ti's id hash, its slot prefetched, and the id's length, which
 * the hash needs first; an id refused for its length (none is 0) is not
 * hashed.
 */
static struct id_ahead hash_ahead(const struct hyper_schedule *s,
				  const struct hyper_tensor_info *ti)
{
	size_t len = ti->id ? strlen(ti->id) : 0;
	struct id_ahead a = { 0, HS_ID_MAX + 1 };

	if (len > HS_ID_MAX)
		return a;
	a.len = (uint32_t)len;
	if (len) {
		a.h = hs_hash_mem(ti->id, len);
		hs_hash_prefetch(s, a.h);
	}
	return a;
}

#define INFO_FLAGS	(HYPER_SCHED_BUDGET | HYPER_SCHED_PRED_PEAK | \
			 HYPER_SCHED_PRED_STALL | HYPER_SCHED_PRED_MAKESPAN | \
			 HYPER_SCHED_ARENA)

/*
 * A schedule being built (hyper_schedule_begin()): the tensors and steps
 * come in pieces, each copied as it comes, so a caller can hand a plan
 * over through one small buffer instead of whole arrays beside the copy.
 */
struct hyper_schedule_builder {
	struct hyper_schedule *s;
	char *graph_hash;	/* checked at the end, after every step */
	uint64_t total;		/* the tensors' bytes so far */
	uint32_t nr_tensors, nr_steps;	/* given so far */
	int ret;		/* the first failure, returned from then on */
};

/*
 * The arrays, not cleared.  The pool first: with it, hs_destroy() frees
 * nothing tensor by tensor or step by step, so the arrays need no
 * clearing.  add_tensor() and add_step() set each element whole as they
 * copy it; calloc() wrote the arrays once more before (at 100k steps 16
 * MB of the heap cleared, 7% of the instructions of the hand-over).
 */
static int alloc_arrays(struct hyper_schedule *s,
			const struct hyper_schedule_info *info)
{
	size_t guess = POOL_GUESS * ((size_t)s->nr_tensors + s->nr_steps);
	struct hu_part parts[] = {
		HU_PART(s->tensors, s->nr_tensors ?: 1, false),
		HU_PART(s->steps, s->nr_steps ?: 1, false),
		HU_PART(s->hash, (size_t)hs_hash_mask(s->nr_tensors) + 1, true),
	};

	if (!pool_grow(s, 0, guess > CHUNK_FIRST ? guess : CHUNK_FIRST))
		return -ENOMEM;
	s->name = strdup(info->name ? info->name : "");
	/*
	 * One block: apart, each array of 0.5 to 3 MB (DeepSeek-V2-Lite)
	 * was faulted 4 KiB at a time but for the huge pages inside it.
	 */
	s->block = hu_block_huge(parts, sizeof(parts) / sizeof(parts[0]));
	if (!s->name || !s->block)
		return -ENOMEM;
	s->hash_mask = hs_hash_mask(s->nr_tensors);
	/* The graph's identity, held to the rules a schedule file's is. */
	if (info->graph_name) {
		s->graph_name = strdup(info->graph_name);
		if (!s->graph_name)
			return -ENOMEM;
	}
	return 0;
}

/* @ret for this call and every later one; its words when out of memory. */
static int builder_fail(struct hyper_schedule_builder *b, int ret,
			struct hs_err *e)
{
	if (ret == -ENOMEM)
		hs_errf(e, "out of memory while building the schedule");
	b->ret = ret;
	return ret;
}

int hyper_schedule_begin(const struct hyper_schedule_info *info,
			 struct hyper_schedule_builder **bp,
			 char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	struct hyper_schedule_builder *b;
	struct hyper_schedule *s;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!bp || !info)
		return -EINVAL;
	*bp = NULL;
	if ((info->version && info->version != HYPER_SCHEDULE_VERSION) ||
	    (info->flags & ~INFO_FLAGS) || !ZERO(info->reserved) ||
	    ((info->flags & HYPER_SCHED_BUDGET) &&
	     (!info->budget_bytes || info->budget_bytes > INT64_MAX)) ||
	    ((info->flags & HYPER_SCHED_ARENA) &&
	     (!info->arena_bytes || info->arena_bytes > HS_BYTES_MAX))) {
		hs_errf(&e, "schedule: unknown version or flags, a budget or arena of 0 or beyond range, or non-zero reserved fields");
		return -EINVAL;
	}
	b = calloc(1, sizeof(*b));
	s = calloc(1, sizeof(*s));
	if (!b || !s) {
		free(b);
		free(s);
		return -ENOMEM;
	}
	b->s = s;
	s->refs = 1;
	s->version = HYPER_SCHEDULE_VERSION;
	s->flags = info->flags;
	s->budget = info->budget_bytes;
	if (info->flags & HYPER_SCHED_ARENA)
		s->arena_bytes = info->arena_bytes;
	s->pred_peak = info->pred_peak_device_bytes;
	s->pred_stall = info->pred_stall_ns;
	s->pred_makespan = info->pred_makespan_ns;
	s->nr_tensors = info->nr_tensors;
	s->nr_steps = info->nr_steps;
	ret = alloc_arrays(s, info);
	if (!ret && info->graph_hash) {
		b->graph_hash = strdup(info->graph_hash);
		if (!b->graph_hash)
			ret = -ENOMEM;
	}
	if (ret) {
		builder_fail(b, ret, &e);
		hyper_schedule_end(b, NULL, NULL, 0);
		return ret;
	}
	*bp = b;
	return 0;
}

/*
 * What every add checks first, for @n of its @items (steps with @steps,
 * else tensors): 0 to go on, else what the call returns.
 */
static int add_check(struct hyper_schedule_builder *b, const void *items,
		     uint32_t n, bool steps, struct hs_err *e)
{
	uint32_t given, has;

	if (e->buf && e->len)
		e->buf[0] = '\0';
	if (!b || (n && !items))
		return -EINVAL;
	if (b->ret)
		return b->ret;
	given = steps ? b->nr_steps : b->nr_tensors;
	has = steps ? b->s->nr_steps : b->s->nr_tensors;
	if (n > has - given) {
		hs_errf(e, "%s: %u given and %u more, but the schedule has %u",
			steps ? "steps" : "tensors", given, n, has);
		return builder_fail(b, -EINVAL, e);
	}
	return 0;
}

int hyper_schedule_add_tensors(struct hyper_schedule_builder *b,
			       const struct hyper_tensor_info *tensors,
			       uint32_t n, char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	struct id_ahead ahead[AHEAD], a;
	uint32_t i, at;
	struct hyper_schedule *s;
	bool arena;
	int ret = add_check(b, tensors, n, false, &e);

	if (ret)
		return ret;
	s = b->s;
	at = b->nr_tensors;
	arena = s->flags & HYPER_SCHED_ARENA;
	for (i = 0; i < n && i < AHEAD; i++)
		ahead[i] = hash_ahead(s, &tensors[i]);
	for (i = 0; i < n; i++) {
		a = ahead[i % AHEAD];
		if (i + AHEAD < n)
			ahead[i % AHEAD] = hash_ahead(s, &tensors[i + AHEAD]);
		ret = add_tensor(s, at + i, &tensors[i], a, arena, &b->total,
				 &e);
		if (ret)
			return builder_fail(b, ret, &e);
	}
	b->nr_tensors += n;
	return 0;
}

int hyper_schedule_add_steps(struct hyper_schedule_builder *b,
			     const struct hyper_step_info *steps, uint32_t n,
			     char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	int ret = add_check(b, steps, n, true, &e);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < n; i++) {
		ret = add_step(b->s, b->nr_steps + i, &steps[i], &e);
		if (ret)
			return builder_fail(b, ret, &e);
	}
	b->nr_steps += n;
	return 0;
}

int hyper_schedule_end(struct hyper_schedule_builder *b,
		       struct hyper_schedule **schedp, char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	struct hyper_schedule *s;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (schedp)
		*schedp = NULL;
	if (!b)
		return -EINVAL;
	s = b->s;
	ret = b->ret;
	if (!schedp || ret) {
		/* given up, or failed in a call that said why */
		hs_destroy(s);
		free(b->graph_hash);
		free(b);
		return schedp ? ret : 0;
	}
	if (b->nr_tensors != s->nr_tensors || b->nr_steps != s->nr_steps) {
		hs_errf(&e, "schedule: %u of %u tensors and %u of %u steps given",
			b->nr_tensors, s->nr_tensors, b->nr_steps, s->nr_steps);
		ret = -EINVAL;
	}
	if (!ret && b->graph_hash)
		ret = hs_set_graph_hash(s, b->graph_hash, &e);
	if (!ret)
		ret = hs_check_graph_hash(s, &e);
	free(b->graph_hash);
	free(b);
	return hs_finish(s, ret, "building", &e, schedp);
}

int hyper_schedule_new(const struct hyper_schedule_info *info,
		       const struct hyper_tensor_info *tensors,
		       const struct hyper_step_info *steps,
		       struct hyper_schedule **schedp, char *err, size_t errlen)
{
	struct hyper_schedule_builder *b;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!schedp || !info || (info->nr_tensors && !tensors) ||
	    (info->nr_steps && !steps))
		return -EINVAL;
	*schedp = NULL;
	ret = hyper_schedule_begin(info, &b, err, errlen);
	if (ret)
		return ret;
	ret = hyper_schedule_add_tensors(b, tensors, info->nr_tensors, err,
					 errlen);
	if (!ret)
		ret = hyper_schedule_add_steps(b, steps, info->nr_steps, err,
					       errlen);
	if (ret) {
		hyper_schedule_end(b, NULL, NULL, 0);
		return ret;
	}
	return hyper_schedule_end(b, schedp, err, errlen);
}
