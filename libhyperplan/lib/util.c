// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "util/clock.h"
#include "util/huge.h"
#include "util/units.h"

int hyper_plan__errf(struct hp_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int hyper_plan__nomem(struct hp_err *e)
{
	hyper_plan__errf(e, "out of memory");
	return -ENOMEM;
}

static bool mem_fails(struct hp_mem *m)
{
	if (++m->nr != m->fail_at)
		return false;
	m->failed = true;
	return true;
}

static size_t keep_min(const struct hp_mem *m)
{
	return m->keep_min ? m->keep_min : HP_KEEP_MIN;
}

/* A kept block this much bigger than asked for is cut to size. */
#define HP_KEEP_CUT	((size_t)16 << 20)

/**
 * kept_take() - a block of @n bytes or more from those @m keeps
 * @m: the allocations' hp_mem
 * @n: the bytes asked for
 *
 * The smallest kept block that holds @n, cut to @n by realloc() where
 * HP_KEEP_CUT or more is left over (an mmap'ed block shrinks in place,
 * its tail unmapped): a block kept for a long life (the life's arrays
 * in the heap's of the reorder) holds no pages past its own.  Its
 * contents are whatever the last user left.  Where none holds @n, the
 * largest is freed: kept, it would hold its pages beside the fresh ones
 * the caller now maps.  Growing it instead by realloc() (mremap())
 * kept its pages but moved them off their 2 MiB bounds, split into
 * 4 KiB pages: twice the minor faults at 1M decode operators.
 *
 * Return: the block, or NULL where @m keeps nothing for @n (the caller
 * allocates afresh).
 */

static void *kept_take(struct hp_mem *m, size_t n)
{
	int i, fit = -1, big = -1;
	void *q;

	if (!m->keep || n < keep_min(m))
		return NULL;
	for (i = 0; i < HP_KEEP_SLOTS; i++) {
		const struct hp_kept *k = &m->kept[i];

		if (!k->p)
			continue;
		if (k->n >= n && (fit < 0 || k->n < m->kept[fit].n))
			fit = i;
		if (big < 0 || k->n > m->kept[big].n)
			big = i;
	}
	if (fit >= 0) {
		q = m->kept[fit].p;
		/*
		 * cut to @n where much is left over, so that a block kept
		 * for a long life holds no more pages than its own
		 */
		if (m->kept[fit].n - n >= HP_KEEP_CUT) {
			void *c = realloc(q, n);

			if (c)
				q = c;
		}
		m->kept[fit].p = NULL;
		return q;
	}
	if (big >= 0) {
		free(m->kept[big].p);
		m->kept[big].p = NULL;
	}
	return NULL;
}

void hyper_plan__free(struct hp_mem *m, void *p)
{
	size_t n;

	if (!p)
		return;
	if (!m || !m->keep || (n = malloc_usable_size(p)) < keep_min(m)) {
		free(p);
		return;
	}
	for (;;) {
		int i, slot = -1, low = -1;
		size_t tot = 0;

		for (i = 0; i < HP_KEEP_SLOTS; i++) {
			const struct hp_kept *k = &m->kept[i];

			if (!k->p) {
				slot = i;
				continue;
			}
			tot += k->n;
			if (low < 0 || k->n < m->kept[low].n)
				low = i;
		}
		if (slot >= 0 && n <= HP_KEEP_MAX - tot) {
			m->kept[slot] = (struct hp_kept){ p, n };
			return;
		}
		/* the smallest make room for a bigger one */
		if (low < 0 || m->kept[low].n >= n) {
			free(p);
			return;
		}
		free(m->kept[low].p);
		m->kept[low].p = NULL;
	}
}

void hyper_plan__mem_release(struct hp_mem *m)
{
	int i;

	for (i = 0; i < HP_KEEP_SLOTS; i++) {
		free(m->kept[i].p);
		m->kept[i].p = NULL;
	}
}

void hyper_plan__mem_hand(struct hp_mem *from, struct hp_mem *to)
{
	int i;

	for (i = 0; i < HP_KEEP_SLOTS; i++) {
		void *p = from->kept[i].p;

		from->kept[i].p = NULL;
		hyper_plan__free(to, p);
	}
}

/*
 * hu_realloc_huge(), or where @p grows and @m keeps a block for @n, @p
 * copied into that block and kept in its place.
 */
static void *grow_block(struct hp_mem *m, void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q;

	if (old >= n || !(q = kept_take(m, n)))
		return hu_realloc_huge(p, n);
	if (p) {
		memcpy(q, p, old);
		hyper_plan__free(m, p);
	}
	return q;
}

void *hyper_plan__malloc(struct hp_mem *m, size_t n)
{
	void *p = NULL;

	if (!mem_fails(m)) {
		p = kept_take(m, n);
		if (!p)
			p = hu_malloc_huge(n ? n : 1);
	}

	if (!p)
		m->failed = true;
	return p;
}

void *hyper_plan__array(struct hp_mem *m, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		m->failed = true;
		return NULL;
	}
	return hyper_plan__malloc(m, n * size);
}

/*
 * calloc() itself: it need not clear what the kernel handed out zeroed,
 * so the advice given after it still comes before their first touch.
 */
void *hyper_plan__calloc(struct hp_mem *m, size_t n, size_t size)
{
	bool none = !n || !size;
	void *p = NULL;

	if (size && n > SIZE_MAX / size) {
		m->failed = true;
		return NULL;
	}
	if (!mem_fails(m)) {
		p = none ? NULL : kept_take(m, n * size);
		if (p)
			memset(p, 0, n * size);
		else
			p = hu_calloc_huge(none ? 1 : n, none ? 1 : size);
	}
	if (!p)
		m->failed = true;
	return p;
}

void *hyper_plan__block(struct hp_mem *m, const struct hu_part *parts,
			size_t nparts)
{
	void *b = NULL;
	size_t len;

	if (mem_fails(m))
		hu_block_none(parts, nparts);
	else if (hu_block_len(parts, nparts, &len) &&
		 (b = kept_take(m, len)))
		hu_block_lay(b, parts, nparts);
	else
		b = hu_block_huge(parts, nparts);
	if (!b)
		m->failed = true;
	return b;
}

/**
 * hyper_plan__parts() - a phase's arrays, in one block where they reach
 *	a huge page
 * @m: the allocations' hp_mem
 * @parts: the arrays (HU_PART()), each pointer set
 * @nparts: how many
 * @blk: set to the block, or NULL where each part is an array of its own
 *
 * From HU_HUGE_PAGE bytes (or where the sizes overflow, which then
 * fails) the parts are one hyper_plan__block(): apart, arrays of 0.4 to
 * 4 MiB on no 2 MiB bound are faulted 4 KiB at a time, in the block they
 * lie on whole huge pages.  Below that each is a hyper_plan__array() of
 * its own: a block of a few hundred KB misses the holes that earlier
 * phases freed in the heap, or past glibc's mmap threshold comes fresh
 * each time, and costs faults that the arrays apart do not.  Those
 * marked zeroed are cleared either way.
 *
 * Return: 0, or -ENOMEM with *@blk NULL, the parts that failed NULL and
 * those allocated set; hu_block_free() frees either way.
 */
int hyper_plan__parts(struct hp_mem *m, const struct hu_part *parts,
		      size_t nparts, void **blk)
{
	bool ok = true;
	size_t i, len;

	if (!hu_block_len(parts, nparts, &len) || len >= HU_HUGE_PAGE) {
		*blk = hyper_plan__block(m, parts, nparts);
		return *blk ? 0 : -ENOMEM;
	}
	*blk = NULL;
	for (i = 0; i < nparts; i++) {
		const struct hu_part *t = &parts[i];
		void *p = t->zero ? hyper_plan__calloc(m, t->n, t->size) :
			  hyper_plan__array(m, t->n, t->size);

		hu_part_set(parts[i].pp, p);
		ok = ok && p;
	}
	return ok ? 0 : -ENOMEM;
}

static void mem_free_ctx(void *ctx, void *p)
{
	hyper_plan__free(ctx, p);
}

void hyper_plan__block_free(struct hp_mem *m, void **blk,
			    const struct hu_part *parts, size_t nparts)
{
	hu_block_release(blk, parts, nparts, mem_free_ctx, m);
}

char *hyper_plan__strdup(struct hp_mem *m, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = hyper_plan__malloc(m, n);

	return p ? memcpy(p, s, n) : NULL;
}

void *hyper_plan__mem_realloc(void *ctx, void *p, size_t n)
{
	struct hp_mem *m = ctx;
	void *q = mem_fails(m) ? NULL : grow_block(m, p, n ? n : 1);

	if (!q)
		m->failed = true;
	return q;
}

/*
 * *@pp is the caller's int *, struct x *, ...: read and set with
 * hu_part_get() and hu_part_set(), not through void ** (util/huge.h).
 */
int hyper_plan__grow_full(struct hp_mem *m, void *pp, size_t *cap,
			  size_t need, size_t sz)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	while (c <= need)
		c *= 2;
	if (mem_fails(m) || (sz && c > SIZE_MAX / sz))
		q = NULL;
	else
		q = grow_block(m, hu_part_get(pp), c * sz);
	if (!q) {
		m->failed = true;
		return -ENOMEM;
	}
	hu_part_set(pp, q);
	*cap = c;
	return 0;
}

int hyper_plan__room(struct hp_mem *m, void *pp, size_t *cap, size_t n,
		     size_t sz)
{
	void *p;

	if (n <= *cap)
		return 0;
	/* freed first: the old array's pages are not held beside the new */
	hyper_plan__free(m, hu_part_get(pp));
	*cap = 0;
	p = hyper_plan__array(m, n, sz);
	hu_part_set(pp, p);
	if (!p)
		return -ENOMEM;
	*cap = n;
	return 0;
}

int hyper_plan__parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

void hyper_plan__fmt_bytes(char *buf, size_t len, double bytes)
{
	hu_fmt_bytes(buf, len, bytes > 0 ? (uint64_t)(bytes + 0.5) : 0, 2);
}

double hyper_plan__now_ns(void)
{
	return (double)hu_now_ns();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double hyper_plan__median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}
