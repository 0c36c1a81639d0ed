/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Schedule internals, shared by the loader, the validator and the
 * executor.  This part of libhyper depends on json-c only, so that the
 * fuzz target builds it alone.
 */
#ifndef LIBHYPER_SCHEDULE_H
#define LIBHYPER_SCHEDULE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <hyper/hyper.h>

#include "util/residency.h"

#define HS_ID_MAX	127
#define HS_BYTES_MAX	(1ULL << 48)

/* An "x-" key kept as compact JSON text for hyper_schedule_ext(). */
struct hs_ext {
	char *key;
	char *json;
};

struct hs_exts {
	struct hs_ext *v;
	uint32_t n;
};

struct hs_tensor {
	char *id;
	uint64_t bytes;
	uint32_t kind;
	uint32_t home;
	uint32_t flags;		/* HYPER_TENSOR_*, set by the validator */
	uint32_t res_first;	/* its first entry in res_off, by hs_layout() */
	uint32_t nr_res;	/* its residencies, by hs_layout() */
	uint32_t nr_plan_off;	/* "arena_offsets": the schedule's own */
	uint64_t *plan_off;
};

struct hs_step {
	char *op;
	uint64_t compute_ns;
	struct hyper_cop *before, *after;
	uint32_t *uses, *defines;
	uint32_t nr_before, nr_after, nr_uses, nr_defines;
	uint32_t flags;		/* HYPER_STEP_* */
	uint32_t gemm[3];	/* m, n, k: 1..2^32-1 with HYPER_STEP_GEMM */
};

/*
 * Memory handed out in order and freed at once: hyper_schedule_new()'s
 * ids, operator names and lists, a million steps' worth without a
 * malloc() each.
 */
struct hs_chunk {
	struct hs_chunk *next;
	size_t used, cap;	/* in bytes */
	uint64_t data[];
};

/* Device-arena granule, shared by the layout and the executor. */
#define HS_DEV_ALIGN	HYPER_ARENA_ALIGN

struct hyper_schedule {
	int refs;		/* atomic: contexts hold a reference */
	char *name;
	char *graph_name;	/* "graph": NULL when absent */
	char *graph_hash;	/* checked against the content when present */
	uint32_t version;
	uint32_t flags;		/* HYPER_SCHED_* */
	uint64_t budget;
	uint64_t pred_peak, pred_stall, pred_makespan;
	uint64_t peak;		/* validator's replay */
	/* hs_layout(), or the schedule's own with HYPER_SCHED_ARENA; 0: none */
	uint64_t arena_bytes;
	uint64_t *res_off;	/* arena offset of each residency, by tensor */
	uint64_t total_compute_ns;
	uint32_t nr_tensors, nr_steps;
	struct hs_tensor *tensors;
	struct hs_step *steps;
	/* open-addressing id -> its hash << 32 | index + 1; 0 is empty */
	uint64_t *hash;
	uint32_t hash_mask;
	struct hs_exts ext;
	/*
	 * Each tensor's and step's "x-" keys, by index; NULL while none has
	 * any (always, from hyper_schedule_new()): an hs_exts in every
	 * element was 16 of hs_tensor's 64 bytes and of hs_step's 96, 32 MB
	 * to allocate and fill at a million steps.
	 */
	struct hs_exts *tensor_ext, *step_ext;
	/*
	 * Not NULL: the tensors' ids and offsets and the steps' names and
	 * lists are in these chunks (hyper_schedule_new()), not malloc'ed
	 * one by one (parsed).
	 */
	struct hs_chunk *pool;
	/*
	 * Not NULL: the tensors, the steps and the id hash are parts of
	 * this one block (hyper_schedule_begin(), hu_block_huge()), freed
	 * with it, not each on its own.
	 */
	void *block;
};

/* Error text sink; a NULL or zero-sized buffer discards the message. */
struct hs_err {
	char *buf;
	size_t len;
};

__attribute__((format(printf, 2, 3)))
void hs_errf(struct hs_err *e, const char *fmt, ...);

int hs_find(const struct hyper_schedule *s, const char *id);
/* The id hash's slots less one for @nr_tensors: twice as many at least. */
static inline uint32_t hs_hash_mask(uint32_t nr_tensors)
{
	uint32_t mask = 7;

	while (mask < 2 * nr_tensors)
		mask = mask * 2 + 1;
	return mask;
}

/* The id hash, sized for s->nr_tensors; then each tensor in turn. */
int hs_hash_alloc(struct hyper_schedule *s);
/* Returns the index of an earlier tensor with the same id, or -1. */
int hs_hash_insert(struct hyper_schedule *s, uint32_t idx);
/*
 * The index of an earlier tensor with id @id (its hs_hash_str() @h), or
 * -1 with *@slot set to where it goes, for hs_hash_put() once its tensor
 * holds the id: nothing is added before the tensor passes its checks.
 */
int hs_hash_lookup(const struct hyper_schedule *s, const char *id, uint32_t h,
		   uint32_t *slot);
/* Tensor @idx, of id hash @h, at the *@slot hs_hash_lookup() gave. */
static inline void hs_hash_put(struct hyper_schedule *s, uint32_t slot,
			       uint32_t idx, uint32_t h)
{
	s->hash[slot] = (uint64_t)h << 32 | (idx + 1);
}

/* 8 bytes of an id as one number, for hs_hash_mem(). */
static inline uint64_t hs_hash_word(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/*
 * The id hash (32 bits) of the table and hs_find(), of @len bytes: 8 a
 * step, the last 8 read whole where they overlap the step before, or
 * for a shorter id two overlapping 4-byte reads or three single bytes;
 * then mixed so that the top 32 bits depend on every byte.  FNV-1a, a
 * multiplication a byte, was a quarter of the instructions copying a
 * tensor (ids of 12 bytes on average, DeepSeek-V2-Lite).
 */
static inline uint32_t hs_hash_mem(const char *id, size_t len)
{
	const uint64_t k = 0xbf58476d1ce4e5b9ULL;
	uint64_t h = len * 0x9e3779b97f4a7c15ULL, w;

	if (len >= 8) {
		for (size_t i = 0; i + 8 < len; i += 8)
			h = (h ^ hs_hash_word(id + i)) * k;
		w = hs_hash_word(id + len - 8);
	} else if (len >= 4) {
		uint32_t a, b;

		memcpy(&a, id, sizeof(a));
		memcpy(&b, id + len - 4, sizeof(b));
		w = (uint64_t)a << 32 | b;
	} else if (len) {
		w = (uint64_t)(unsigned char)id[0] << 16 |
		    (uint64_t)(unsigned char)id[len / 2] << 8 |
		    (unsigned char)id[len - 1];
	} else {
		w = 0;
	}
	h = (h ^ w) * k;
	h ^= h >> 31;
	return (uint32_t)(h * 0x94d049bb133111ebULL >> 32);
}

static inline uint32_t hs_hash_str(const char *id)
{
	return hs_hash_mem(id, strlen(id));
}

/*
 * The slot where id hash @h starts its probe, into the cache ahead of
 * hs_hash_insert_hashed(): at a million tensors the table is 16 MiB, and
 * a miss per insert was 2-3% of a 1M decode plan (perf).
 */
static inline void hs_hash_prefetch(const struct hyper_schedule *s,
				    uint32_t h)
{
	__builtin_prefetch(&s->hash[h & s->hash_mask], 1);
}
void hs_destroy(struct hyper_schedule *s);
/* The replay, which also builds the residency intervals hs_layout() takes. */
int hs_validate(struct hyper_schedule *s, struct hu_resid **vp, uint32_t *np,
		struct hs_err *e);
/* The schedule's own offsets (HYPER_SCHED_ARENA) against its residencies. */
int hs_check_offsets(const struct hyper_schedule *s, const struct hu_resid *v,
		     uint32_t n, struct hs_err *e);
int hs_layout(struct hyper_schedule *s, struct hu_resid *v, uint32_t n,
	      struct hs_err *e);
int hs_set_graph_hash(struct hyper_schedule *s, const char *h, struct hs_err *e);
int hs_check_graph_hash(const struct hyper_schedule *s, struct hs_err *e);
int hs_finish(struct hyper_schedule *s, int ret, const char *doing,
	      struct hs_err *e, struct hyper_schedule **schedp);

const char *hs_op_name(uint32_t op);

#endif /* LIBHYPER_SCHEDULE_H */
