// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "passes/life.h"
#include "lib/util.h"
#include "util/huge.h"

/* Whether @t is among the @n tensors of @r (an op's inputs or outputs). */
static inline bool op_lists(const uint32_t *r, uint32_t n, uint32_t t)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (r[i] == t)
			return true;
	return false;
}

/*
 * An op's distinct tensors, its inputs and outputs at most: a bound on
 * the accesses, and on the dead gaps (one at most after each access),
 * known before they are counted.
 */
static size_t acc_bound(const struct graph *g)
{
	size_t i, tot = 0;

	for (i = 0; i < g->nop; i++)
		tot += (size_t)g->op[i].n_in + g->op[i].n_out;
	return tot;
}

/*
 * Every array in one block: each is fresh memory of 0.1 to 2 MB at 100k
 * decode operators, on 4 KiB pages apart, and they all live as long as
 * the analysis.  The accesses and the dead gaps are bounded, not
 * counted, so that the block comes before them: what the bound holds
 * beyond them is never touched, so costs no page.  The residency's
 * differences are summed where the residency goes (base, one slot more,
 * for the end): a separate array of them was 8 MB of fresh memory at 1M
 * decode operators, the pinned tensors' as much again where none is
 * pinned.
 */
static int once_arrays(struct life *lf, struct hp_mem *mem)
{
	size_t n = lf->n, nt = lf->g->nt, tot = acc_bound(lf->g);
	struct hu_part part[] = {
		HU_PART(lf->acc_off, nt + 2, true),
		HU_PART(lf->t0, n + 1, false),
		HU_PART(lf->ws, n, false),
		HU_PART(lf->base, n + 1, true),
		HU_PART(lf->first_w, nt, false),
		HU_PART(lf->home0, nt, false),
		HU_PART(lf->dead_off, n + 2, true),
		HU_PART(lf->acc_step, tot, false),
		HU_PART(lf->acc_rw, tot, false),
		HU_PART(lf->dead_t, tot, false),
	};

	lf->blk = hyper_plan__block(mem, part, ARRAY_SIZE(part));
	return lf->blk ? 0 : -ENOMEM;
}

/*
 * Each step's accesses, for every tensor in step order, and the step's
 * start time and working set on the way.  A step's distinct tensors are
 * what for_each_op_tensor() lists (its inputs, then the outputs it does
 * not read), found here with the op's refs in locals: the macro's call
 * to hyper_plan__op_reads() per output and its reloads after each store
 * were most of this pass, and hyper_plan__op_working_set() walked them
 * once more.  The op's counts and the life's arrays and maxima are in
 * locals too: each byte of acc_rw stored may alias them, and so were
 * they reloaded after it.
 *
 * acc_off is filled as a counting sort without a cursor array: counts go
 * two slots up, so that after the prefix sum acc_off[t + 1] is where
 * tensor t starts, and it has moved on to where t ends once t's
 * accesses are in (one slot more than nt + 1, never read).
 */
static void accesses(struct life *lf)
{
	const struct graph *g = lf->g;
	const struct tensor *ten = g->t;
	const uint32_t *refs = g->refs;
	size_t *off = lf->acc_off, i;
	uint32_t *step = lf->acc_step;
	uint8_t *rw = lf->acc_rw;
	const uint32_t *order = lf->order;
	double t0 = 0, *t0s = lf->t0;
	uint64_t *wss = lf->ws, max_ws = lf->max_ws;
	uint32_t k, x, y, n = lf->n, max_k = lf->max_ws_step;

	for (i = 0; i < g->nop; i++) {
		const struct op *o = &g->op[i];
		const uint32_t *in = refs + o->ref, *out = in + o->n_in;
		uint32_t nin = o->n_in, nout = o->n_out;

		for (x = 0; x < nin; x++)
			off[in[x] + 2]++;
		for (y = 0; y < nout; y++)
			if (o->outs_unread || !op_lists(in, nin, out[y]))
				off[out[y] + 2]++;
	}
	for (i = 2; i <= g->nt; i++)
		off[i + 1] += off[i];
	for (k = 0; k < n; k++) {
		const struct op *o = &g->op[order[k]];
		const uint32_t *in = refs + o->ref, *out = in + o->n_in;
		uint32_t nin = o->n_in, nout = o->n_out;
		bool un = o->outs_unread;
		uint64_t ws = 0;

		for (x = 0; x < nin; x++) {
			uint32_t t = in[x];
			size_t at = off[t + 1]++;

			step[at] = k;
			/* no output is an input: no input is an output */
			rw[at] = !un && op_lists(out, nout, t) ?
				 ACC_R | ACC_W : ACC_R;
			ws += ten[t].bytes;
		}
		for (y = 0; y < nout; y++) {
			uint32_t t = out[y];
			size_t at;

			if (!un && op_lists(in, nin, t))
				continue;
			at = off[t + 1]++;
			step[at] = k;
			rw[at] = ACC_W;
			ws += ten[t].bytes;
		}
		t0s[k] = t0;
		t0 += o->compute_ns;
		wss[k] = ws;
		if (ws > max_ws) {
			max_ws = ws;
			max_k = k;
		}
	}
	t0s[n] = t0;
	lf->max_ws = max_ws;
	lf->max_ws_step = max_k;
}

/* O(1): accesses are in step order, so the first write is the earliest. */
bool hyper_plan__initial_value(const struct life *lf, uint32_t t, int64_t a)
{
	return (lf->g->t[t].flags & TF_LIVE_IN) && (int64_t)lf->first_w[t] > a;
}

/*
 * One walk over every tensor's gaps for what the rest needs of them: its
 * first write, its home with nothing offloaded, the no-offload residency
 * (a tensor is resident at its accesses and its live gaps) and the
 * pinned tensors' part of it for the floor, the number of dead gaps
 * each step ends, whether its residency breaks a rule (dirty_t), and
 * how many live gaps and values those not pinned have (nlive, nvals).
 * These were five walks, each asking hyper_plan__gap_ends() and
 * hyper_plan__gap_live() again; what those say is spelled out here per
 * gap: gap 0 is live when the tensor is live_in and first read, gap i in
 * 1..cnt-1 when access i reads, gap cnt when the tensor is live_out.  @d
 * and *@dpp are n + 1 zeroed differences, of the residency and of the
 * pinned tensors' residency, *@dpp allocated at the first pinned tensor
 * (most graphs have none); the dead gaps are counted two slots up in
 * dead_off, as accesses() counts, for dead_list() to fill without a
 * cursor array.  The residency's differences go in one pair per run of
 * steps that hold the tensor (@e: where the run so far ends), its
 * accesses and the live gaps between them: a pair per access and one
 * per live gap wrote the same sums, each inner pair cancelling out.
 *
 * The rules: passes/sched.c replays the order as it emits, step by step
 * (uses, then defines, then the dead gaps' detaches), and a tensor is
 * dirty when that replay without evictions, carried on past each
 * refusal, refuses it somewhere (a tensor a probe does not evict follows
 * the same transitions in every schedule of the order, so the emitter
 * tracks only the evicted ones when none of these is left out).  A
 * tensor's state is its own and a step touches it once (no op lists a
 * tensor twice), so its replay is this walk of its accesses, from its
 * home: a read is a use, a write a define, a dead gap after it a detach.
 * That was a walk of its own over every step's tensors and dead gaps,
 * with a state byte per tensor.
 */
static int gaps(struct life *lf, int64_t *d, int64_t **dpp,
		struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	const size_t *off = lf->acc_off;
	const uint32_t *step = lf->acc_step;
	const uint8_t *rw = lf->acc_rw;
	size_t *dead = lf->dead_off, ndirty = 0, nlive = 0, nvals = 0;
	uint32_t t, n = lf->n, *first_w = lf->first_w;
	uint8_t *home0 = lf->home0, home;
	int64_t *dp = NULL;
	int ret = 0;

	for (t = 0; t < g->nt; t++) {
		size_t q = off[t], end = off[t + 1];
		uint8_t flags = g->t[t].flags;
		int64_t b = g->t[t].bytes;
		bool pin = flags & TF_PIN, bad = false;
		uint32_t a, j, e, fw = n;
		size_t live = 0, writes = 0;
		uint8_t st;

		if (pin && !dp) {
			*dpp = dp = hyper_plan__calloc(mem, (size_t)n + 1,
						       sizeof(*dp));
			if (!dp) {
				ret = -ENOMEM;
				break;
			}
		}

		if (q == end) {
			first_w[t] = n;
			home0[t] = flags & TF_LIVE_IN ? HYPER_HOME_POOL :
							HYPER_HOME_NONE;
			nvals += !pin;
			continue;
		}
		j = step[q];
		e = j;		/* a run from the first access, or the start */
		if ((rw[q] & ACC_R) && (flags & TF_LIVE_IN)) {
			home = HYPER_HOME_DEVICE;
			if (j > 0) {
				live++;
				e = 0;
				if (pin) {
					dp[0] += b;
					dp[j] -= b;
				}
			}
		} else {
			home = HYPER_HOME_NONE;
		}
		home0[t] = home;
		d[e] += b;
		e = j;
		st = hyper_residency_start(home);
		for (;;) {
			if (rw[q] & ACC_R)
				bad |= hyper_residency_check(st, HYPER_RES_USE);
			if (rw[q] & ACC_W) {
				writes++;
				hyper_residency_step(&st, HYPER_RES_DEFINE);
				if (fw == n)
					fw = j;
			}
			/* access q at step j, then the gap after it */
			if (j != e) {	/* a dead gap before: a new run */
				d[e] -= b;
				d[j] += b;
			}
			e = j + 1;
			a = j;
			if (++q == end) {
				j = n;
				if (!(flags & TF_LIVE_OUT)) {
					dead[a + 2]++;
					bad |= hyper_residency_step(&st,
							HYPER_RES_DETACH);
					break;
				}
			} else {
				j = step[q];
				if (!(rw[q] & ACC_R)) {
					dead[a + 2]++;
					bad |= hyper_residency_step(&st,
							HYPER_RES_DETACH);
					continue;
				}
			}
			if (a + 1 < j) {
				live++;
				e = j;
				if (pin) {
					dp[a + 1] += b;
					dp[j] -= b;
				}
			}
			if (q == end)
				break;
		}
		d[e] -= b;
		first_w[t] = fw;
		if (!pin) {
			nlive += live;
			nvals += writes + 1;
		}
		if (!bad)
			continue;
		if (hyper_plan__grow(mem, &lf->dirty_t, &ndirty, lf->ndirty,
				     sizeof(*lf->dirty_t))) {
			ret = -ENOMEM;
			break;
		}
		lf->dirty_t[lf->ndirty++] = t;
	}
	lf->nlive = nlive;
	lf->nvals = nvals;
	return ret;
}

uint64_t hyper_plan__life_floor(const struct life *lf, uint32_t *at)
{
	if (at && lf->floor)
		*at = lf->floor_step;
	return lf->floor;
}

/*
 * The dead gaps by the step that ends them, tensors ascending within a
 * step: gaps() counted them, this places them.
 */
static void dead_list(struct life *lf)
{
	const struct graph *g = lf->g;
	const size_t *off = lf->acc_off;
	const uint32_t *step = lf->acc_step;
	const uint8_t *rw = lf->acc_rw;
	size_t *dead = lf->dead_off, q;
	uint32_t t, *dt = lf->dead_t;

	for (q = 2; q <= lf->n; q++)
		dead[q + 1] += dead[q];
	for (t = 0; t < g->nt; t++) {
		bool out = g->t[t].flags & TF_LIVE_OUT;
		size_t end = off[t + 1];

		for (q = off[t]; q < end; q++)
			if (q + 1 < end ? !(rw[q + 1] & ACC_R) : !out)
				dt[dead[step[q] + 1]++] = t;
	}
}

/*
 * The residency without offload, summed in place over its differences,
 * its peak, and the floor (@dp NULL: nothing pinned).
 */
static void sums(struct life *lf, const int64_t *dp)
{
	int64_t run = 0, pin = 0, *d = (int64_t *)lf->base;
	uint32_t k;

	for (k = 0; k < lf->n; k++) {
		run += d[k];
		d[k] = run;
		if ((uint64_t)run > lf->peak0)
			lf->peak0 = run;
		if (dp)
			pin += dp[k];
		if (lf->ws[k] + pin > lf->floor) {
			lf->floor = lf->ws[k] + pin;
			lf->floor_step = k;
		}
	}
}

int hyper_plan__life_build(struct life *lf, const struct graph *g, const uint32_t *order,
	       struct hp_mem *mem)
{
	int64_t *dp = NULL;
	int ret;

	memset(lf, 0, sizeof(*lf));
	lf->g = g;
	lf->order = order;
	lf->n = g->nop;
	if (once_arrays(lf, mem))
		goto fail;
	accesses(lf);
	ret = gaps(lf, (int64_t *)lf->base, &dp, mem);
	if (!ret)
		sums(lf, dp);
	free(dp);
	if (ret)
		goto fail;
	dead_list(lf);
	return 0;
fail:
	hyper_plan__life_free(lf);
	return -ENOMEM;
}

void hyper_plan__life_free(struct life *lf)
{
	free(lf->blk);
	free(lf->dirty_t);
	memset(lf, 0, sizeof(*lf));
}
