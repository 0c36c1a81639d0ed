// SPDX-License-Identifier: GPL-2.0
/*
 * The timeline of a real run, for pictures: what each operator, transfer
 * and stall did when, and device memory over time.  It is fed by
 * libhyper's events (transfers, stalls, residency) and by the runner
 * (operators), and written as "hyper-timeline" JSON, which
 * `hyper-plan --timeline` turns into an SVG plot and a Chrome trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "hyper-run.h"

struct span {
	uint32_t what;		/* step, or tensor */
	uint32_t kind;		/* transfers: enum hyper_cache_op */
	uint64_t start, end, bytes;
	uint64_t copy;		/* transfers: when the copy began, 0: unknown */
};

struct sample {
	uint64_t t, resident, arena;
};

struct vec {
	void *v;
	size_t n, cap, size;
};

struct timeline {
	const struct hyper_schedule *s;
	struct vec ops, xfers, stalls, mem;
	uint32_t *open;		/* per tensor and direction: open transfer + 1 */
	uint32_t nr_tensors;
	int err;
};

static void *push(struct timeline *tl, struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 256;
		void *p = realloc(v->v, cap * v->size);

		if (!p) {
			tl->err = -ENOMEM;
			return NULL;
		}
		v->v = p;
		v->cap = cap;
	}
	return (char *)v->v + v->n++ * v->size;
}

struct timeline *timeline_new(const struct hyper_schedule *s)
{
	struct hyper_schedule_info info;
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl || hyper_schedule_info(s, &info))
		goto out_free;
	tl->s = s;
	tl->nr_tensors = info.nr_tensors;
	tl->open = calloc(2 * (size_t)info.nr_tensors + 1, sizeof(*tl->open));
	if (!tl->open)
		goto out_free;
	tl->ops.size = tl->xfers.size = tl->stalls.size = sizeof(struct span);
	tl->mem.size = sizeof(struct sample);
	return tl;

out_free:
	free(tl);
	return NULL;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->ops.v);
	free(tl->xfers.v);
	free(tl->stalls.v);
	free(tl->mem.v);
	free(tl->open);
	free(tl);
}

void timeline_op(struct timeline *tl, uint32_t step, uint64_t start,
		 uint64_t end)
{
	struct span *sp = push(tl, &tl->ops);

	if (sp)
		*sp = (struct span){ .what = step, .start = start, .end = end };
}

void timeline_event(const struct hyper_event *ev, void *arg)
{
	struct timeline *tl = arg;
	uint32_t *open;
	struct span *sp;
	struct sample *sm;

	switch (ev->type) {
	case HYPER_EV_XFER_START:
		if (ev->tensor >= tl->nr_tensors)
			return;
		sp = push(tl, &tl->xfers);
		if (!sp)
			return;
		*sp = (struct span){ .what = ev->tensor, .kind = ev->op,
				     .start = ev->time_ns, .bytes = ev->bytes };
		tl->open[2 * ev->tensor + (ev->op == HYPER_OP_STORE)] =
			tl->xfers.n;
		return;
	case HYPER_EV_XFER_COPY:
		if (ev->tensor >= tl->nr_tensors)
			return;
		open = &tl->open[2 * ev->tensor + (ev->op == HYPER_OP_STORE)];
		if (*open)
			((struct span *)tl->xfers.v + *open - 1)->copy = ev->time_ns;
		return;
	case HYPER_EV_XFER_DONE:
		if (ev->tensor >= tl->nr_tensors)
			return;
		open = &tl->open[2 * ev->tensor + (ev->op == HYPER_OP_STORE)];
		if (*open) {
			sp = (struct span *)tl->xfers.v + *open - 1;
			sp->end = ev->time_ns;
			sp->bytes = ev->bytes;
			*open = 0;
		}
		return;
	case HYPER_EV_STALL_BEGIN:
		sp = push(tl, &tl->stalls);
		if (sp)
			*sp = (struct span){ .what = ev->tensor,
					     .start = ev->time_ns };
		return;
	case HYPER_EV_STALL_END:
		if (tl->stalls.n)
			((struct span *)tl->stalls.v)[tl->stalls.n - 1].end =
				ev->time_ns;
		return;
	case HYPER_EV_RESIDENT:
		sm = push(tl, &tl->mem);
		if (sm)
			*sm = (struct sample){ ev->time_ns, ev->resident_bytes,
					       ev->arena_bytes };
		return;
	}
}

static const char *tensor_name(const struct timeline *tl, uint32_t t)
{
	struct hyper_tensor_info ti;

	return hyper_schedule_tensor(tl->s, t, &ti) ? "" : ti.id;
}

/* Relative to the run's start; what happened while preparing is at 0. */
static int64_t rel(uint64_t t, uint64_t t0)
{
	return t > t0 ? (int64_t)(t - t0) : 0;
}

static json_object *span_obj(const struct span *sp, const char *key,
			     const char *name, uint64_t t0)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, key, json_object_new_string(name));
	json_object_object_add(o, "start_ns",
			       json_object_new_int64(rel(sp->start, t0)));
	json_object_object_add(o, "end_ns",
			       json_object_new_int64(rel(sp->end ? sp->end : sp->start, t0)));
	return o;
}

/* Times in the file are relative to @t0, the start of the run. */
int timeline_write(struct timeline *tl, const char *path, const char *name,
		   uint64_t t0)
{
	json_object *root = json_object_new_object();
	json_object *ops = json_object_new_array();
	json_object *xf = json_object_new_array();
	json_object *st = json_object_new_array();
	json_object *mem = json_object_new_array();
	struct hyper_schedule_info info;
	struct hyper_step_info si;
	size_t i;
	int ret;

	if (tl->err)
		return tl->err;
	json_object_object_add(root, "format", json_object_new_string("hyper-timeline"));
	json_object_object_add(root, "version", json_object_new_int(1));
	json_object_object_add(root, "name", json_object_new_string(name));
	/* Whose run this is, for hyper-plan --feedback to check. */
	if (!hyper_schedule_info(tl->s, &info) && info.graph_hash) {
		json_object *g = json_object_new_object();

		json_object_object_add(g, "name", json_object_new_string(
			info.graph_name ? info.graph_name : ""));
		json_object_object_add(g, "hash",
				       json_object_new_string(info.graph_hash));
		json_object_object_add(root, "graph", g);
	}
	for (i = 0; i < tl->ops.n; i++) {
		const struct span *sp = (struct span *)tl->ops.v + i;

		hyper_schedule_step(tl->s, sp->what, &si);
		json_object_array_add(ops, span_obj(sp, "op", si.op, t0));
	}
	for (i = 0; i < tl->xfers.n; i++) {
		const struct span *sp = (struct span *)tl->xfers.v + i;
		json_object *o = span_obj(sp, "tensor", tensor_name(tl, sp->what), t0);

		json_object_object_add(o, "dir", json_object_new_string(
			sp->kind == HYPER_OP_STORE ? "store" : "prefetch"));
		json_object_object_add(o, "bytes", json_object_new_int64(sp->bytes));
		/* start_ns is the issue; the copy began here (copy worker only). */
		if (sp->copy)
			json_object_object_add(o, "copy_ns",
					       json_object_new_int64(rel(sp->copy, t0)));
		json_object_array_add(xf, o);
	}
	for (i = 0; i < tl->stalls.n; i++) {
		const struct span *sp = (struct span *)tl->stalls.v + i;

		json_object_array_add(st, span_obj(sp, "tensor",
						   tensor_name(tl, sp->what), t0));
	}
	for (i = 0; i < tl->mem.n; i++) {
		const struct sample *sm = (struct sample *)tl->mem.v + i;
		json_object *row = json_object_new_array();

		json_object_array_add(row, json_object_new_int64(rel(sm->t, t0)));
		json_object_array_add(row, json_object_new_int64(sm->resident));
		json_object_array_add(row, json_object_new_int64(sm->arena));
		json_object_array_add(mem, row);
	}
	json_object_object_add(root, "ops", ops);
	json_object_object_add(root, "transfers", xf);
	json_object_object_add(root, "stalls", st);
	/* [time_ns, resident_bytes, arena_bytes] */
	json_object_object_add(root, "memory", mem);
	ret = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PLAIN) ?
	      -EIO : 0;
	json_object_put(root);
	return ret;
}
