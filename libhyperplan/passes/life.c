// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "passes/life.h"

static int accesses(struct life *lf, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	size_t *fill = hyper_plan__calloc(mem, g->nt, sizeof(*fill)), tot;
	uint32_t k, t, x;
	int ret = -ENOMEM;

	lf->acc_off = hyper_plan__calloc(mem, g->nt + 1, sizeof(*lf->acc_off));
	if (!fill || !lf->acc_off)
		goto out;
	for (k = 0; k < lf->n; k++)
		for_each_op_tensor(g, &g->op[lf->order[k]], t, x)
			lf->acc_off[t + 1]++;
	for (t = 0; t < g->nt; t++)
		lf->acc_off[t + 1] += lf->acc_off[t];
	tot = lf->acc_off[g->nt];
	lf->acc_step = hyper_plan__array(mem, tot, sizeof(*lf->acc_step));
	lf->acc_rw = hyper_plan__malloc(mem, tot);
	if (!lf->acc_step || !lf->acc_rw)
		goto out;
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[lf->order[k]];

		for_each_op_tensor(g, o, t, x) {
			size_t at = lf->acc_off[t] + fill[t]++;
			uint8_t rw = x < o->n_in ? ACC_R : ACC_W;
			uint32_t y;

			for (y = 0; rw == ACC_R && y < o->n_out; y++)
				if (op_out(g, o)[y] == t)
					rw |= ACC_W;
			lf->acc_step[at] = k;
			lf->acc_rw[at] = rw;
		}
	}
	ret = 0;
out:
	free(fill);
	return ret;
}

/* O(1): accesses are in step order, so the first write is the earliest. */
bool hyper_plan__initial_value(const struct life *lf, uint32_t t, int64_t a)
{
	return (lf->g->t[t].flags & TF_LIVE_IN) && (int64_t)lf->first_w[t] > a;
}

static int first_writes(struct life *lf, struct hp_mem *mem)
{
	uint32_t t;
	size_t i;

	lf->first_w = hyper_plan__array(mem, lf->g->nt, sizeof(*lf->first_w));
	if (!lf->first_w)
		return -ENOMEM;
	for (t = 0; t < lf->g->nt; t++) {
		lf->first_w[t] = lf->n;
		for (i = lf->acc_off[t]; i < lf->acc_off[t + 1]; i++)
			if (lf->acc_rw[i] & ACC_W) {
				lf->first_w[t] = lf->acc_step[i];
				break;
			}
	}
	return 0;
}

/* Counting sort by step, tensors in ascending order within a step. */
static int dead_gaps(struct life *lf, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	size_t *fill, i, cnt;
	uint32_t t, pass;
	int64_t a, j;
	int ret = -ENOMEM;

	lf->dead_off = hyper_plan__calloc(mem, lf->n + 1, sizeof(*lf->dead_off));
	lf->dead_t = NULL;
	fill = hyper_plan__calloc(mem, lf->n + 1, sizeof(*fill));
	if (!lf->dead_off || !fill)
		goto out;
	for (pass = 0; pass < 2; pass++) {
		for (t = 0; t < g->nt; t++) {
			cnt = nr_accesses(lf, t);
			for (i = 1; i <= cnt; i++) {
				hyper_plan__gap_ends(lf, t, i, &a, &j);
				if (hyper_plan__gap_live(lf, t, i) || a < 0 || a >= lf->n)
					continue;
				if (pass)
					lf->dead_t[lf->dead_off[a] + fill[a]++] = t;
				else
					lf->dead_off[a + 1]++;
			}
		}
		if (pass)
			break;
		for (i = 0; i < lf->n; i++)
			lf->dead_off[i + 1] += lf->dead_off[i];
		lf->dead_t = hyper_plan__array(mem, lf->dead_off[lf->n],
				      sizeof(*lf->dead_t));
		if (!lf->dead_t)
			goto out;
	}
	ret = 0;
out:
	free(fill);
	return ret;
}

/* Without offload a tensor is resident at its accesses and its live gaps. */
static int residency(struct life *lf, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	int64_t *d = hyper_plan__calloc(mem, lf->n + 1, sizeof(*d)), run = 0, a, j;
	uint32_t t, k;
	size_t i, cnt;

	lf->base = hyper_plan__array(mem, lf->n, sizeof(*lf->base));
	if (!d || !lf->base) {
		free(d);
		return -ENOMEM;
	}
	for (t = 0; t < g->nt; t++) {
		uint64_t b = g->t[t].bytes;

		cnt = nr_accesses(lf, t);
		for (i = 0; i <= cnt; i++) {
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (i < cnt) {
				d[j] += b;
				d[j + 1] -= b;
			}
			if (hyper_plan__gap_live(lf, t, i) && a + 1 < j) {
				d[a + 1] += b;
				d[j] -= b;
			}
		}
	}
	lf->peak0 = 0;
	for (k = 0; k < lf->n; k++) {
		run += d[k];
		lf->base[k] = run;
		if ((uint64_t)run > lf->peak0)
			lf->peak0 = run;
	}
	free(d);
	return 0;
}

/* The floor of hyper_plan__life_floor(), once per order: a plan's check allocates nothing. */
static int floor_build(struct life *lf, struct hp_mem *mem)
{
	int64_t *d = hyper_plan__calloc(mem, (size_t)lf->n + 1, sizeof(*d)), run = 0, a, j;
	uint32_t t, k;
	size_t i;

	if (!d)
		return -ENOMEM;
	for (t = 0; t < lf->g->nt; t++)
		for (i = 0; (lf->g->t[t].flags & TF_PIN) &&
		     i <= nr_accesses(lf, t); i++) {
			hyper_plan__gap_ends(lf, t, i, &a, &j);
			if (hyper_plan__gap_live(lf, t, i) && a + 1 < j) {
				d[a + 1] += lf->g->t[t].bytes;
				d[j] -= lf->g->t[t].bytes;
			}
		}
	for (k = 0; k < lf->n; k++) {
		run += d[k];
		if (lf->ws[k] + run > lf->floor) {
			lf->floor = lf->ws[k] + run;
			lf->floor_step = k;
		}
	}
	free(d);
	return 0;
}

uint64_t hyper_plan__life_floor(const struct life *lf, uint32_t *at)
{
	if (at && lf->floor)
		*at = lf->floor_step;
	return lf->floor;
}

/* Device if the value at the start is needed, pool if only the pool
 * needs it, none otherwise. */
static int homes(struct life *lf, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	uint32_t t;

	lf->home0 = hyper_plan__array(mem, g->nt, sizeof(*lf->home0));
	if (!lf->home0)
		return -ENOMEM;
	for (t = 0; t < g->nt; t++) {
		if (!nr_accesses(lf, t))
			lf->home0[t] = g->t[t].flags & TF_LIVE_IN ?
				       HYPER_HOME_POOL : HYPER_HOME_NONE;
		else
			lf->home0[t] = hyper_plan__gap_live(lf, t, 0) ?
				       HYPER_HOME_DEVICE : HYPER_HOME_NONE;
	}
	return 0;
}

/*
 * The tensors whose residency breaks a rule in a schedule of this order
 * with nothing offloaded: passes/sched.c replays the order as it emits,
 * step by step (uses, then defines, then the dead gaps' detaches), and
 * this is that replay without evictions, carried on past each refusal.
 * A tensor a probe does not evict follows the same transitions in every
 * schedule of the order, so the emitter tracks only the evicted ones
 * when none of these is left out.
 */
static int emit_dirty(struct life *lf, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	uint8_t *st = hyper_plan__array(mem, g->nt, 1);
	uint8_t *bad = hyper_plan__calloc(mem, g->nt, 1);
	uint32_t k, t, x;
	size_t i, n = 0;
	int ret = -ENOMEM;

	if (!st || !bad)
		goto out;
	for (t = 0; t < g->nt; t++)
		st[t] = hyper_residency_start(lf->home0[t]);
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[lf->order[k]];

		for (x = 0; x < o->n_in; x++) {
			t = op_in(g, o)[x];
			if (hyper_residency_check(st[t], HYPER_RES_USE))
				bad[t] = 1;
		}
		for (x = 0; x < o->n_out; x++)
			hyper_residency_step(&st[op_out(g, o)[x]],
					     HYPER_RES_DEFINE);
		for (i = lf->dead_off[k]; i < lf->dead_off[k + 1]; i++)
			if (hyper_residency_step(&st[lf->dead_t[i]],
						 HYPER_RES_DETACH))
				bad[lf->dead_t[i]] = 1;
	}
	for (t = 0; t < g->nt; t++)
		n += bad[t];
	lf->dirty_t = hyper_plan__array(mem, n, sizeof(*lf->dirty_t));
	if (!lf->dirty_t)
		goto out;
	for (t = 0; t < g->nt; t++)
		if (bad[t])
			lf->dirty_t[lf->ndirty++] = t;
	ret = 0;
out:
	free(st);
	free(bad);
	return ret;
}

int hyper_plan__life_build(struct life *lf, const struct graph *g, const uint32_t *order,
	       struct hp_mem *mem)
{
	uint32_t k;

	memset(lf, 0, sizeof(*lf));
	lf->g = g;
	lf->order = order;
	lf->n = g->nop;
	lf->t0 = hyper_plan__array(mem, lf->n + 1, sizeof(*lf->t0));
	lf->ws = hyper_plan__array(mem, lf->n, sizeof(*lf->ws));
	if (!lf->t0 || !lf->ws || accesses(lf, mem))
		goto fail;
	lf->t0[0] = 0;
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[order[k]];

		lf->t0[k + 1] = lf->t0[k] + o->compute_ns;
		lf->ws[k] = hyper_plan__op_working_set(g, o);
		if (lf->ws[k] > lf->max_ws) {
			lf->max_ws = lf->ws[k];
			lf->max_ws_step = k;
		}
	}
	if (residency(lf, mem) || first_writes(lf, mem) || dead_gaps(lf, mem) ||
	    homes(lf, mem) || floor_build(lf, mem) || emit_dirty(lf, mem))
		goto fail;
	return 0;
fail:
	hyper_plan__life_free(lf);
	return -ENOMEM;
}

void hyper_plan__life_free(struct life *lf)
{
	free(lf->acc_off);
	free(lf->acc_step);
	free(lf->acc_rw);
	free(lf->t0);
	free(lf->ws);
	free(lf->base);
	free(lf->first_w);
	free(lf->dead_off);
	free(lf->dead_t);
	free(lf->home0);
	free(lf->dirty_t);
	memset(lf, 0, sizeof(*lf));
}
