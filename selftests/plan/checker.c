// SPDX-License-Identifier: GPL-2.0
/*
 * Then libhyper's validator reads the same text and must agree.
 * Rules checked: the state machine (every use resident, a prefetch needs
 * a pool copy and a tensor not resident, store and detach need it
 * resident); a pinned tensor never leaves the device while it is needed; residency within the budget after every prefetch and every
 * operator's defines; every operator exactly once, with its own inputs
 * and outputs; every read sees the same write as in the graph's order and
 * every tensor's writes keep their order (so the reordering respects every
 * dependency); and no value the graph still needs is lost.
 */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/hyper.h>

#include "checker.h"

struct replay {
	const struct graph *g;
	json_object *root, *steps;
	uint32_t *tix;		/* schedule tensor index → graph tensor */
	uint8_t *res, *pool;
	uint64_t mem;
	uint32_t *ver;		/* writes seen so far, per tensor */
	struct check_result *r;
};

static int failf(struct replay *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->r->msg, sizeof(p->r->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static int64_t get_int(json_object *o, const char *key, int64_t def)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) :
	       def;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : NULL;
}

static int tensors(struct replay *p)
{
	json_object *arr, *o;
	size_t i, n;

	if (!json_object_object_get_ex(p->root, "tensors", &arr))
		return failf(p, "no tensors");
	n = json_object_array_length(arr);
	if (n != p->g->nt)
		return failf(p, "%zu tensors, the graph has %zu", n, p->g->nt);
	for (i = 0; i < n; i++) {
		const char *id, *home;
		uint32_t t;

		o = json_object_array_get_idx(arr, i);
		id = get_str(o, "id");
		home = get_str(o, "home");
		t = id ? hyper_plan__graph_tensor(p->g, id) : NONE;
		if (t == NONE || !home)
			return failf(p, "tensor %zu: bad id or home", i);
		if ((uint64_t)get_int(o, "bytes", 0) != p->g->t[t].bytes)
			return failf(p, "tensor %s: wrong size", id);
		p->tix[i] = t;
		p->res[t] = !strcmp(home, "device");
		p->pool[t] = !strcmp(home, "pool");
		p->mem += p->res[t] ? p->g->t[t].bytes : 0;
	}
	return 0;
}

static uint32_t tensor_at(struct replay *p, json_object *id)
{
	return id && json_object_is_type(id, json_type_string) ?
	       hyper_plan__graph_tensor(p->g, json_object_get_string(id)) : NONE;
}

static int over(struct replay *p, uint32_t k, const char *what)
{
	if (p->mem > p->r->peak)
		p->r->peak = p->mem;
	if (p->r->budget && p->mem > p->r->budget)
		return failf(p, "step %u: residency %llu over budget %llu after %s",
			     k, (unsigned long long)p->mem,
			     (unsigned long long)p->r->budget, what);
	return 0;
}

static int cache_ops(struct replay *p, json_object *step, const char *key,
		     uint32_t k)
{
	json_object *arr, *c, *v;
	size_t i;

	if (!json_object_object_get_ex(step, key, &arr))
		return 0;
	for (i = 0; i < json_object_array_length(arr); i++) {
		const char *op;
		uint32_t t;

		c = json_object_array_get_idx(arr, i);
		op = get_str(c, "op");
		t = json_object_object_get_ex(c, "tensor", &v) ?
		    tensor_at(p, v) : NONE;
		if (!op || t == NONE)
			return failf(p, "step %u: bad cache op", k);
		if (!strcmp(op, "prefetch")) {
			if (p->g->t[t].flags & TF_PIN)
				return failf(p, "step %u: pinned %s came back: it left the device",
					     k, p->g->t[t].id);
			if (p->res[t] || !p->pool[t])
				return failf(p, "step %u: prefetch of %s (resident %d, pool %d)",
					     k, p->g->t[t].id, p->res[t], p->pool[t]);
			p->res[t] = 1;
			p->mem += p->g->t[t].bytes;
			if (over(p, k, "a prefetch"))
				return -1;
		} else if (!p->res[t]) {
			return failf(p, "step %u: %s of %s while not resident", k,
				     op, p->g->t[t].id);
		} else if (!strcmp(op, "store")) {
			p->pool[t] = 1;
		} else if (!strcmp(op, "detach")) {
			p->res[t] = 0;
			p->mem -= p->g->t[t].bytes;
		} else {
			return failf(p, "step %u: unknown cache op %s", k, op);
		}
	}
	return 0;
}

/* The step's uses and defines are exactly its operator's tensors. */
static int same_set(struct replay *p, json_object *step, const char *key,
		    const uint32_t *want, uint32_t n, uint32_t k)
{
	json_object *arr;
	size_t i, len = 0;
	uint32_t j;

	if (json_object_object_get_ex(step, key, &arr))
		len = json_object_array_length(arr);
	if (len != n)
		return failf(p, "step %u: %s has %zu tensors, the op %u", k, key,
			     len, n);
	for (i = 0; i < len; i++) {
		uint32_t t = tensor_at(p, json_object_array_get_idx(arr, i));

		for (j = 0; j < n && want[j] != t; j++)
			;
		if (j == n)
			return failf(p, "step %u: %s lists a tensor the op does not", k, key);
	}
	return 0;
}

/* Version numbers each read and write saw in the graph's listed order. */
static void graph_versions(const struct graph *g, uint32_t **rv,
			   uint32_t **wv)
{
	uint32_t *cnt = calloc(g->nt, sizeof(*cnt));
	size_t o, nrefs = g->nrefs;
	uint32_t i;

	*rv = calloc(nrefs ? nrefs : 1, sizeof(**rv));
	*wv = calloc(nrefs ? nrefs : 1, sizeof(**wv));
	for (o = 0; o < g->nop; o++) {
		const struct op *op = &g->op[o];

		for (i = 0; i < op->n_in; i++)
			(*rv)[op->ref + i] = cnt[op_in(g, op)[i]];
		for (i = 0; i < op->n_out; i++)
			(*wv)[op->ref + op->n_in + i] = cnt[op_out(g, op)[i]]++;
	}
	free(cnt);
}

static int run_op(struct replay *p, uint32_t o, uint32_t k,
		  const uint32_t *rv, const uint32_t *wv)
{
	const struct op *op = &p->g->op[o];
	uint32_t i, t;

	for (i = 0; i < op->n_in; i++) {
		t = op_in(p->g, op)[i];
		if (!p->res[t])
			return failf(p, "step %u (%s): %s used while not resident",
				     k, op->id, p->g->t[t].id);
		if (p->ver[t] != rv[op->ref + i])
			return failf(p, "step %u (%s): reads version %u of %s, the graph's order gives %u",
				     k, op->id, p->ver[t], p->g->t[t].id,
				     rv[op->ref + i]);
	}
	for (i = 0; i < op->n_out; i++) {
		t = op_out(p->g, op)[i];
		if (p->ver[t] != wv[op->ref + op->n_in + i])
			return failf(p, "step %u (%s): write %u of %s out of order",
				     k, op->id, p->ver[t], p->g->t[t].id);
		p->ver[t]++;
		if (!p->res[t])
			p->mem += p->g->t[t].bytes;
		p->res[t] = 1;
		p->pool[t] = 0;
	}
	return over(p, k, "the defines");
}

static int steps(struct replay *p)
{
	uint8_t *seen = calloc(p->g->nop ? p->g->nop : 1, 1);
	uint32_t *rv, *wv, k, o;
	size_t n = json_object_array_length(p->steps);
	int ret = n == p->g->nop ? 0 : failf(p, "%zu steps for %zu ops", n,
					     p->g->nop);

	graph_versions(p->g, &rv, &wv);
	for (k = 0; k < n && !ret; k++) {
		json_object *st = json_object_array_get_idx(p->steps, k);
		const char *id = get_str(st, "op");
		const struct op *op;

		o = id ? hyper_plan__idmap_find(&p->g->omap, id) : NONE;
		if (o == NONE || seen[o]) {
			ret = failf(p, "step %u: unknown or repeated op", k);
			break;
		}
		seen[o] = 1;
		op = &p->g->op[o];
		if ((uint64_t)get_int(st, "compute_ns", -1) != op->compute_ns)
			ret = failf(p, "step %u: wrong compute_ns", k);
		if (!ret)
			ret = same_set(p, st, "uses", op_in(p->g, op), op->n_in, k) ||
			      same_set(p, st, "defines", op_out(p->g, op),
				       op->n_out, k) ||
			      cache_ops(p, st, "before", k) ||
			      run_op(p, o, k, rv, wv) ||
			      cache_ops(p, st, "after", k);
	}
	free(rv);
	free(wv);
	free(seen);
	return ret ? -1 : 0;
}

/* Whatever the graph keeps past its end is on the device or in the pool. */
static int kept(struct replay *p)
{
	uint32_t t;

	for (t = 0; t < p->g->nt; t++)
		if ((p->g->t[t].flags & TF_LIVE_OUT) && p->ver[t] &&
		    !p->res[t] && !p->pool[t])
			return failf(p, "live_out tensor %s lost at the end",
				     p->g->t[t].id);
	return 0;
}

/*
 * The same text through libhyper's parser and validator: it must accept
 * what this replay accepts, with the same peak.  Two readings of the
 * format that disagree are a bug in one of them.
 */
static int agrees_with_libhyper(const char *json, struct check_result *r)
{
	struct hyper_schedule_info info;
	struct hyper_schedule *s;
	char err[256];
	int ret = hyper_schedule_parse(json, strlen(json), &s, err, sizeof(err));

	if (ret) {
		snprintf(r->msg, sizeof(r->msg), "libhyper refuses it: %s", err);
		return -1;
	}
	hyper_schedule_info(s, &info);
	hyper_schedule_free(s);
	if (info.peak_device_bytes != r->peak) {
		snprintf(r->msg, sizeof(r->msg), "libhyper's peak %llu, the replay's %llu",
			 (unsigned long long)info.peak_device_bytes,
			 (unsigned long long)r->peak);
		return -1;
	}
	return 0;
}

int check_schedule(const struct graph *g, const char *json,
		   struct check_result *r)
{
	struct replay p = { .g = g, .r = r };
	const char *fmt;
	int ret;

	memset(r, 0, sizeof(*r));
	p.root = json_tokener_parse(json);
	if (!p.root)
		return failf(&p, "not JSON");
	fmt = get_str(p.root, "format");
	r->budget = get_int(p.root, "device_budget_bytes", 0);
	p.tix = calloc(g->nt + 1, sizeof(*p.tix));
	p.res = calloc(g->nt + 1, 1);
	p.pool = calloc(g->nt + 1, 1);
	p.ver = calloc(g->nt + 1, sizeof(*p.ver));
	if (!fmt || strcmp(fmt, "hyper-schedule") ||
	    get_int(p.root, "version", 0) != 1 ||
	    !json_object_object_get_ex(p.root, "steps", &p.steps))
		ret = failf(&p, "bad header");
	else
		ret = tensors(&p) || over(&p, 0, "the start") || steps(&p) ||
		      kept(&p);
	free(p.tix);
	free(p.res);
	free(p.pool);
	free(p.ver);
	json_object_put(p.root);
	return ret || agrees_with_libhyper(json, r) ? -1 : 0;
}

char *schedule_text(const struct sched *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hyper_plan__sched_write_json(s, f, "test", NULL);
	fclose(f);
	return buf;
}
