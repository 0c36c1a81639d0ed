// SPDX-License-Identifier: GPL-2.0
/*
 * A schedule split at a step, run in two parts (--until STEP, --from
 * STEP), as a KV cache is handed from the node that ran the prompt to the
 * node that decodes.  Both parts keep the whole schedule's tensor table,
 * so that a tensor's index, and with it the seed of every generation of
 * its pattern, is the same in both.  The runner's model of the steps
 * before the split is replayed here without running them: the second
 * part knows which generation each copy holds at the split, and a KV
 * cache that is not the first part's fails its first check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "hyper-run.h"

/* A define writes the next generation into the device copy. */
void model_define(struct tensor_model *m)
{
	m->dev_gen = m->next_gen++;
}

/* Cache ops: a prefetch brings the pool's generation, a store takes the device's. */
void model_cops(struct tensor_model *model, const struct hyper_cop *ops,
		uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct tensor_model *m = &model[ops[i].tensor];

		if (ops[i].op == HYPER_OP_PREFETCH)
			m->dev_gen = m->pool_gen;
		else if (ops[i].op == HYPER_OP_STORE)
			m->pool_gen = m->dev_gen;
	}
}

static void state_cops(uint8_t *state, const struct hyper_cop *ops, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		state[ops[i].tensor] = hyper_residency_next(state[ops[i].tensor],
							    ops[i].op);
}

/* --until / --from: a step index, or the op of a step (its first). */
int part_step(const struct hyper_schedule *s, const char *opt, const char *arg,
	      uint32_t *step, char *err, size_t len)
{
	struct hyper_schedule_info info;
	struct hyper_step_info si;
	unsigned long v;
	char *end;

	hyper_schedule_info(s, &info);
	if (*arg >= '0' && *arg <= '9') {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end)
			v = 0;
	} else {
		for (v = 0; v < info.nr_steps; v++)
			if (!hyper_schedule_step(s, (unsigned int)v, &si) &&
			    !strcmp(si.op, arg))
				break;
		if (v == info.nr_steps) {
			snprintf(err, len, "%s %s: the schedule has no step of that op; give a step index or the op of a step (e.g. d1.embed)",
				 opt, arg);
			return -EINVAL;
		}
	}
	if (v < 1 || v >= info.nr_steps) {
		snprintf(err, len, "%s %s: not a step that splits the schedule; give a step in 1..%u or the op of one",
			 opt, arg, info.nr_steps - 1);
		return -EINVAL;
	}
	*step = (uint32_t)v;
	return 0;
}

/*
 * The runner's model and the residency after the steps before @split, as
 * running them from the start leaves them (hyper-run's fill_homes() and
 * run_step()), and the KV tensors handed over there.
 */
int part_init(struct part *p, const struct hyper_schedule *s, uint32_t split,
	      char *err, size_t len)
{
	struct hyper_schedule_info info;
	struct hyper_tensor_info ti;
	struct hyper_step_info si;
	bool *read_after;

	hyper_schedule_info(s, &info);
	memset(p, 0, sizeof(*p));
	p->model = calloc(info.nr_tensors ?: 1, sizeof(*p->model));
	p->state = calloc(info.nr_tensors ?: 1, sizeof(*p->state));
	p->handed = calloc(info.nr_tensors ?: 1, sizeof(*p->handed));
	read_after = calloc(info.nr_tensors ?: 1, sizeof(*read_after));
	if (!p->model || !p->state || !p->handed || !read_after) {
		free(read_after);
		part_fini(p);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < info.nr_tensors; t++) {
		hyper_schedule_tensor(s, t, &ti);
		p->model[t].next_gen = 1;
		p->state[t] = hyper_residency_start(ti.home);
		if (ti.home == HYPER_HOME_DEVICE)
			model_define(&p->model[t]);
	}
	for (uint32_t i = 0; i < info.nr_steps; i++) {
		hyper_schedule_step(s, i, &si);
		if (i >= split) {
			for (uint32_t j = 0; j < si.nr_uses; j++)
				read_after[si.uses[j]] = true;
			continue;
		}
		model_cops(p->model, si.before, si.nr_before);
		state_cops(p->state, si.before, si.nr_before);
		for (uint32_t j = 0; j < si.nr_defines; j++) {
			model_define(&p->model[si.defines[j]]);
			p->state[si.defines[j]] =
				hyper_residency_next(p->state[si.defines[j]],
						     HYPER_RES_DEFINE);
		}
		model_cops(p->model, si.after, si.nr_after);
		state_cops(p->state, si.after, si.nr_after);
	}
	for (uint32_t t = 0; t < info.nr_tensors; t++) {
		hyper_schedule_tensor(s, t, &ti);
		if (ti.kind == HYPER_KIND_KV && read_after[t] &&
		    p->state[t] & (HYPER_RES_DEVICE | HYPER_RES_POOL)) {
			p->handed[t] = true;
			p->nr_handed++;
		}
	}
	free(read_after);
	return 0;
}

void part_fini(struct part *p)
{
	free(p->model);
	free(p->state);
	free(p->handed);
	memset(p, 0, sizeof(*p));
}

/* The generation a home-"pool" tensor of the second part holds at the split. */
uint32_t part_pool_gen(const struct part *p, uint32_t t)
{
	return p->state[t] & HYPER_RES_DEVICE ? p->model[t].dev_gen :
						 p->model[t].pool_gen;
}

/*
 * The part [first, end) of @s as a schedule of its own.  The first part
 * ends by storing each handed-over KV tensor whose pool copy is stale.
 * The second starts with what the split left: a tensor with a current
 * pool copy, or handed over, at home in the pool (prefetched at once if
 * it was resident); one resident without a pool copy at home on the
 * device; any other with no data.  Neither keeps the arena layout nor the
 * predictions, which were the whole schedule's.
 */
int part_schedule(const struct part *p, const struct hyper_schedule *s,
		  struct hyper_schedule **partp, char *err, size_t len)
{
	uint32_t n = p->end - p->first, edge, nr_extra = 0, nr_old;
	struct hyper_schedule_info info, pi = { 0 };
	const struct hyper_cop *old;
	struct hyper_tensor_info *ti;
	struct hyper_step_info *si;
	struct hyper_cop *ops;
	char name[256], verr[512];
	int ret = -ENOMEM;

	hyper_schedule_info(s, &info);
	ti = calloc(info.nr_tensors ?: 1, sizeof(*ti));
	si = calloc(n, sizeof(*si));
	edge = p->first ? 0 : n - 1;
	if (!ti || !si)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		/*
		 * hyper_schedule_step() gives NULL for an empty list, which
		 * hyper_schedule_new() takes the address of a member of.
		 */
		static const struct hyper_cop no_cops[1];
		static const uint32_t no_ids[1];

		hyper_schedule_step(s, p->first + i, &si[i]);
		si[i].before = si[i].before ?: no_cops;
		si[i].after = si[i].after ?: no_cops;
		si[i].uses = si[i].uses ?: no_ids;
		si[i].defines = si[i].defines ?: no_ids;
	}
	old = p->first ? si[edge].before : si[edge].after;
	nr_old = p->first ? si[edge].nr_before : si[edge].nr_after;
	ops = calloc(nr_old + info.nr_tensors + 1, sizeof(*ops));
	if (!ops)
		goto out;
	if (!p->first && nr_old)
		memcpy(ops, old, nr_old * sizeof(*ops));
	for (uint32_t t = 0; t < info.nr_tensors; t++) {
		uint8_t st = p->state[t];
		struct hyper_cop *c = &ops[(p->first ? 0 : nr_old) + nr_extra];

		hyper_schedule_tensor(s, t, &ti[t]);
		ti[t].nr_arena_offsets = 0;
		ti[t].arena_offsets = NULL;
		if (!p->first) {
			if (p->handed[t] && (st & HYPER_RES_DEVICE) &&
			    !(st & HYPER_RES_POOL)) {
				c->op = HYPER_OP_STORE;
				c->tensor = t;
				nr_extra++;
			}
			continue;
		}
		if (p->handed[t] || st & HYPER_RES_POOL) {
			ti[t].home = HYPER_HOME_POOL;
			if (st & HYPER_RES_DEVICE) {
				c->op = HYPER_OP_PREFETCH;
				c->tensor = t;
				nr_extra++;
			}
		} else {
			ti[t].home = st & HYPER_RES_DEVICE ? HYPER_HOME_DEVICE :
							     HYPER_HOME_NONE;
		}
	}
	if (p->first) {
		if (nr_old)
			memcpy(ops + nr_extra, old, nr_old * sizeof(*ops));
		si[edge].before = ops;
		si[edge].nr_before = nr_old + nr_extra;
	} else {
		si[edge].after = ops;
		si[edge].nr_after = nr_old + nr_extra;
	}
	snprintf(name, sizeof(name), "%s, steps %u..%u", info.name, p->first,
		 p->end - 1);
	pi.name = name;
	pi.flags = info.flags & HYPER_SCHED_BUDGET;
	pi.budget_bytes = info.budget_bytes;
	pi.nr_tensors = info.nr_tensors;
	pi.nr_steps = n;
	ret = hyper_schedule_new(&pi, ti, si, partp, verr, sizeof(verr));
	if (ret)
		snprintf(err, len, "the steps %u..%u as a schedule of their own: %s",
			 p->first, p->end - 1, verr);
	free(ops);
out:
	if (ret == -ENOMEM)
		snprintf(err, len, "out of memory");
	free(ti);
	free(si);
	return ret;
}
