/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers shared by every part of hyper-plan: allocation, error
 * messages carried up to the CLI, byte and time units.
 */
#ifndef HP_UTIL_H
#define HP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/json.h"
#include "util/units.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define NONE		UINT32_MAX
#define GIB		(1024.0 * 1024.0 * 1024.0)

/* The largest tensor the schedule format accepts (2^48 bytes). */
#define HP_MAX_BYTES	(1ULL << 48)
/* All tensors together: 1 EiB, far past any machine, far below 2^64. */
#define HP_MAX_TOTAL	(1ULL << 60)
/* No operator of a real graph takes an hour. */
#define HP_MAX_OP_NS	3600000000000ULL
#define HP_MAX_ID	127

struct hp_err {
	char msg[512];
};

int hyper_plan__errf(struct hp_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A library must not exit: what can run out of memory allocates through
 * the job's hp_mem, which returns NULL (hyper_plan__grow(): -ENOMEM) and remembers
 * the failure, so that the API entry returns -ENOMEM.  @fail_at is the
 * tests' hook: the fail_at-th allocation through it fails (1-based).
 */
/*
 * Big blocks a run frees, kept for its later big requests (@keep set):
 * under glibc's default malloc settings a block past the dynamic mmap
 * threshold's top (32 MiB) is mmap'ed on each malloc() and unmapped on
 * each free(), so every phase's scratch came as fresh pages, each
 * cleared by the kernel on its first touch.  Kept here, the pages one
 * phase faulted serve the next.  HP_KEEP_MIN bytes and more are kept, at
 * most HP_KEEP_SLOTS blocks and HP_KEEP_MAX bytes in all (the smallest
 * go first), so that what is kept adds little to the run's peak.
 */
#define HP_KEEP_SLOTS	8
#define HP_KEEP_MIN	((size_t)32 << 20)
#define HP_KEEP_MAX	((size_t)256 << 20)

struct hp_kept {
	void *p;		/* NULL: a free slot */
	size_t n;		/* its malloc_usable_size() */
};

struct hp_mem {
	uint64_t nr;		/* allocations tried so far */
	uint64_t fail_at;	/* 0: none fails */
	bool failed;
	bool keep;		/* keeps big blocks freed (opt-in) */
	size_t keep_min;	/* 0: HP_KEEP_MIN; the tests' lower one */
	struct hp_kept kept[HP_KEEP_SLOTS];
};

/*
 * free() through @m: a block of HP_KEEP_MIN bytes or more is kept for a
 * later request through @m where @m->keep is set.  A NULL @p is ignored;
 * a NULL @m frees.
 */
void hyper_plan__free(struct hp_mem *m, void *p);
/* Frees every block @m keeps; @m can keep again after it. */
void hyper_plan__mem_release(struct hp_mem *m);
/* Moves the blocks @from keeps to @to (or frees those @to has no room for). */
void hyper_plan__mem_hand(struct hp_mem *from, struct hp_mem *to);

void *hyper_plan__malloc(struct hp_mem *m, size_t n);
/* @n elements of @size bytes: hyper_plan__array() leaves them uninitialised. */
void *hyper_plan__array(struct hp_mem *m, size_t n, size_t size);
void *hyper_plan__calloc(struct hp_mem *m, size_t n, size_t size);
/*
 * One allocation for a phase's arrays (util/huge.h): each part's pointer
 * set into the returned block, for one free(); NULL with every part's
 * pointer NULL, as any allocation through @m fails.
 */
struct hu_part;
void *hyper_plan__block(struct hp_mem *m, const struct hu_part *parts,
			size_t nparts);
int hyper_plan__parts(struct hp_mem *m, const struct hu_part *parts,
		      size_t nparts, void **blk);
/* hu_block_free() with the frees through hyper_plan__free(). */
void hyper_plan__block_free(struct hp_mem *m, void **blk,
			    const struct hu_part *parts, size_t nparts);
char *hyper_plan__strdup(struct hp_mem *m, const char *s);
/* Says "out of memory" in @e; returns -ENOMEM. */
int hyper_plan__nomem(struct hp_err *e);
/*
 * Grows *@pp (of *@cap elements of @sz bytes) so that index @need fits;
 * leaves *@pp and *@cap as they were when it fails.  Only the test is
 * inline: nearly every call (each heap push, each take's record) finds
 * room, and a call out for that cost its prologue and saved registers
 * (8 M instructions at 100k decode operators).  hyper_plan__grow_full()
 * grows an array that is full.
 */
int hyper_plan__grow_full(struct hp_mem *m, void *pp, size_t *cap,
			  size_t need, size_t sz);

static inline int hyper_plan__grow(struct hp_mem *m, void *pp, size_t *cap,
				   size_t need, size_t sz)
{
	return need < *cap ? 0 : hyper_plan__grow_full(m, pp, cap, need, sz);
}
/*
 * Room for @n elements of @sz bytes in *@pp (of *@cap): where it has
 * less, a new array of exactly @n, what it held not copied.  For scratch
 * arrays of a known size that each use rewrites (a graph's tensors, a
 * probe's items), which hyper_plan__grow() would copy and round up, and
 * advise huge pages for where a use touches only their start.  The old
 * array is freed first; when it fails, *@pp is NULL and *@cap 0.
 */
int hyper_plan__room(struct hp_mem *m, void *pp, size_t *cap, size_t n,
		     size_t sz);
/* realloc() through @ctx, a struct hp_mem: for util/'s builders. */
void *hyper_plan__mem_realloc(void *ctx, void *p, size_t n);

int hyper_plan__parse_u64(const char *s, uint64_t *out);
/* Sizes and the clock are the project's (util/units.h, util/clock.h). */
void hyper_plan__fmt_bytes(char *buf, size_t len, double bytes);
double hyper_plan__now_ns(void);
/* Sorts @v and returns its middle element. */
double hyper_plan__median(double *v, int n);

/*
 * Reads @path (a regular file of at most @max bytes) as one JSON value
 * into *@root, for json_object_put().  An empty file, a truncated one,
 * malformed JSON and trailing data each fail saying so in words.
 */
struct json_object;
int hyper_plan__json_load(const char *path, size_t max, struct json_object **root,
		 struct hp_err *e);
/*
 * The same checks and words for @text (@len bytes, NUL-terminated) held in
 * memory; @what (a path, or "graph") starts each message.
 */
int hyper_plan__json_parse(const char *what, const char *text, size_t len,
		  struct json_object **root, struct hp_err *e);

#endif
