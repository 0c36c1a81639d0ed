// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
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

void *hyper_plan__malloc(struct hp_mem *m, size_t n)
{
	void *p = mem_fails(m) ? NULL : hu_malloc_huge(n ? n : 1);

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
	if (!mem_fails(m))
		p = hu_calloc_huge(none ? 1 : n, none ? 1 : size);
	if (!p)
		m->failed = true;
	return p;
}

void *hyper_plan__block(struct hp_mem *m, const struct hu_part *parts,
			size_t nparts)
{
	void *b = NULL;

	if (mem_fails(m))
		hu_block_none(parts, nparts);
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

char *hyper_plan__strdup(struct hp_mem *m, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = hyper_plan__malloc(m, n);

	return p ? memcpy(p, s, n) : NULL;
}

void *hyper_plan__mem_realloc(void *ctx, void *p, size_t n)
{
	struct hp_mem *m = ctx;
	void *q = mem_fails(m) ? NULL : hu_realloc_huge(p, n ? n : 1);

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
		q = hu_realloc_huge(hu_part_get(pp), c * sz);
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
	free(hu_part_get(pp));
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
