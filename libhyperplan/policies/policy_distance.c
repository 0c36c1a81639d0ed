// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Selection is by gap length counted in operators, as MindSpore's
 * select_distance does.  It knows nothing of bytes or time: that is the
 * difference with the planner it is compared to.  Ties are spread out:
 * tensors with equal gaps are taken in bit-reversed order of first use,
 * so that any number of them covers the period evenly.  In graph order a
 * prefix of them would all come back at the same time (all the first
 * layers' weights), and in a periodic graph such as decode the heuristic
 * could then reduce nothing without stalling: a generous baseline is the
 * more useful one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

struct ranked {
	uint32_t t;
	int64_t gap;
	uint32_t first;		/* first access */
};

/*
 * @r (@n tensors, in tensor order) sorted longest gap first, then by first
 * access, then by tensor: a stable counting sort by first access, then
 * one by gap.  A live gap is at most @steps + 1 long (from the start to
 * the end) and ranked ones are at least 2, first accesses are below
 * @steps: both keys count in @steps + 2 slots.  The ids are dense, so
 * this is two walks where qsort() was 60% of hyper_plan__distance_init().
 */
static int rank_sort(struct ranked *r, uint32_t n, uint32_t steps,
		     struct hp_mem *mem)
{
	struct ranked *tmp = hyper_plan__array(mem, n, sizeof(*tmp));
	uint32_t *cnt = hyper_plan__array(mem, (size_t)steps + 2, sizeof(*cnt));
	uint32_t i, k, top = steps + 1;

	if (!tmp || !cnt) {
		free(tmp);
		free(cnt);
		return -ENOMEM;
	}
	memset(cnt, 0, ((size_t)steps + 2) * sizeof(*cnt));
	for (i = 0; i < n; i++)
		cnt[r[i].first + 1]++;
	for (k = 1; k <= top; k++)
		cnt[k] += cnt[k - 1];
	for (i = 0; i < n; i++)
		tmp[cnt[r[i].first]++] = r[i];
	memset(cnt, 0, ((size_t)steps + 2) * sizeof(*cnt));
	for (i = 0; i < n; i++)
		cnt[top - tmp[i].gap + 1]++;
	for (k = 1; k <= top; k++)
		cnt[k] += cnt[k - 1];
	for (i = 0; i < n; i++)
		r[cnt[top - tmp[i].gap]++] = tmp[i];
	free(tmp);
	free(cnt);
	return 0;
}

/*
 * Appends the tensors of one equal-gap group, evenly spread: x counts up
 * and i is x bit-reversed, kept by adding one at its top bit with the
 * carry running down (two steps on average where reversing each x took
 * one per bit: 86 M instructions at 1M decode operators).
 */
static void spread(const struct ranked *r, uint32_t m, uint32_t *out,
		   uint32_t *n)
{
	unsigned int bits = 0;
	uint32_t x, i = 0, h;

	while ((1ULL << bits) < m)
		bits++;
	if (!bits) {
		out[(*n)++] = r[0].t;
		return;
	}
	for (x = 0; x < (1U << bits); x++) {
		if (i < m)
			out[(*n)++] = r[i].t;
		for (h = 1U << (bits - 1); i & h; h >>= 1)
			i ^= h;
		i |= h;
	}
}

/*
 * The longest live gap of @t (life.h's gap_ends() and gap_live() over
 * each gap), its accesses walked once: the gap before the first access
 * live if the tensor is live in and read there, one between accesses if
 * the later reads, the last if it is live out.  The same lengths,
 * compared in the same order.
 */
static int64_t longest_gap(const struct life *lf, uint32_t t)
{
	size_t i, base = lf->acc_off[t], cnt = lf->acc_off[t + 1] - base;
	const uint32_t *step = lf->acc_step + base;
	const uint8_t *rw = lf->acc_rw + base;
	uint8_t flags = lf->g->t[t].flags;
	int64_t best = 0;

	if (!cnt)
		return 0;	/* never touched: it stays in the pool */
	if ((flags & TF_LIVE_IN) && (rw[0] & ACC_R))
		best = (int64_t)step[0] + 1;
	for (i = 1; i < cnt; i++)
		if ((rw[i] & ACC_R) && (int64_t)step[i] - step[i - 1] > best)
			best = (int64_t)step[i] - step[i - 1];
	if ((flags & TF_LIVE_OUT) && (int64_t)lf->n - step[cnt - 1] > best)
		best = (int64_t)lf->n - step[cnt - 1];
	return best;
}

int hyper_plan__distance_init(struct distance_ctx *d, const struct life *lf,
		  struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	struct ranked *r = hyper_plan__array(mem, g->nt, sizeof(*r));
	uint32_t t, n = 0, i, end;

	*d = (struct distance_ctx){ .lf = lf, .mem = mem };
	if (!r)
		return -ENOMEM;
	for (t = 0; t < g->nt; t++) {
		int64_t gap = g->t[t].flags & TF_PIN ? 0 : longest_gap(lf, t);

		if (gap > 1)
			r[n++] = (struct ranked){ t, gap,
						  lf->acc_step[lf->acc_off[t]] };
	}
	d->rank = hyper_plan__array(mem, n, sizeof(*d->rank));
	if (!d->rank || rank_sort(r, n, lf->n, mem)) {
		free(d->rank);
		d->rank = NULL;
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < n; i = end) {
		for (end = i + 1; end < n && r[end].gap == r[i].gap; end++)
			;
		spread(r + i, end - i, d->rank, &d->nrank);
	}
	hyper_plan__free(mem, r);
	return 0;
}

void hyper_plan__distance_free(struct distance_ctx *d)
{
	free(d->rank);
	free(d->ev);
	free(d->off);
	*d = (struct distance_ctx){ 0 };
}

static void gap_evict(struct distance_ctx *d, uint32_t t, int64_t a,
		      int64_t j, const struct distance_params *dp)
{
	int64_t n = d->lf->n, rel = a + dp->release;
	int64_t fetch = j - dp->prefetch;

	if (a >= 0 && (rel >= j || rel >= n))
		return;			/* released no earlier than used */
	if (fetch <= (a >= 0 ? rel : -1))
		fetch = (a >= 0 ? rel : -1) + 1;
	if (j < n && fetch >= j)
		return;
	/* out of memory: d->mem says so, hyper_plan__distance_evicts() fails */
	if (hyper_plan__grow(d->mem, &d->ev, &d->cap_ev, d->nev, sizeof(*d->ev)))
		return;
	d->ev[d->nev++] = (struct evict){
		.t = t, .a = a, .j = j,
		.store_slot = a >= 0 && hyper_plan__initial_value(d->lf, t, a) ? 0 : -1,
		.detach_slot = a >= 0 ? 2 * rel + 1 : -1, .fetch_step = fetch,
	};
}

int hyper_plan__distance_evicts(struct distance_ctx *d, const struct distance_params *dp)
{
	const struct life *lf = d->lf;
	uint32_t count = dp->count < d->nrank ? dp->count : d->nrank;
	uint32_t r, t;
	int64_t a, j;
	size_t i;

	d->nev = 0;
	if (!d->off) {
		d->off = hyper_plan__calloc(d->mem, (size_t)d->nrank + 1,
					    sizeof(*d->off));
		if (!d->off)
			return -ENOMEM;
	}
	if (dp->prefetch != d->prefetch || dp->release != d->release) {
		d->done = 0;	/* other distances: other evictions */
		d->prefetch = dp->prefetch;
		d->release = dp->release;
	}
	d->nev = d->off[d->done];
	for (r = d->done; r < count && !d->mem->failed; r++) {
		t = d->rank[r];
		for (i = 0; i <= nr_accesses(lf, t); i++) {
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (hyper_plan__gap_live(lf, t, i) && a + 1 < j)
				gap_evict(d, t, a, j, dp);
		}
		/* more evictions than @off counts: more than memory holds */
		if (d->mem->failed || d->nev > UINT32_MAX)
			break;
		d->off[r + 1] = (uint32_t)d->nev;
		d->done = r + 1;
	}
	if (r < count) {
		d->nev = 0;
		d->done = 0;
		return -ENOMEM;
	}
	d->nev = d->off[count];
	return 0;
}
