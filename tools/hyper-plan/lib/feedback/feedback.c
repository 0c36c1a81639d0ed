// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hyper-plan --feedback RUN.json: the times a real run measured replace
 * the model's.  Each operator's compute_ns becomes the mean of its
 * measured spans; the link's bandwidth in each direction becomes the
 * median rate of its measured transfers, its latency the median time they
 * took beyond that.  A transfer's time is from when it started or the one
 * before it ended, whichever is later: one copy path serves them in turn.  Nothing is changed unless the whole file is accepted.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include <hyper/graph_id.h>
#include <hyper/vocab.h>

#include "feedback/feedback.h"

/* The whole file, or why not: a cut-off file is told from a bad one. */
static json_object *read_json(const char *path, struct hp_err *e)
{
	enum json_tokener_error jerr = json_tokener_success;
	json_object *root = NULL;
	json_tokener *tok;
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		hyper_plan__errf(e, "%s: %s", path, strerror(errno));
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		fclose(f);
		hyper_plan__errf(e, "%s: out of memory", path);
		return NULL;
	}
	while (!root && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
		root = json_tokener_parse_ex(tok, buf, (int)n);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue && jerr != json_tokener_success)
			break;
	}
	if (!root && jerr == json_tokener_success)
		jerr = json_tokener_continue;	/* an empty file */
	if (!root && jerr == json_tokener_continue)
		hyper_plan__errf(e, "%s: truncated: the JSON ends early (a run cut short? run hyper-run --timeline again)",
			path);
	else if (!root)
		hyper_plan__errf(e, "%s: not JSON: %s", path,
			json_tokener_error_desc(jerr));
	json_tokener_free(tok);
	fclose(f);
	return root;
}

static const char *str_key(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : NULL;
}

/* A span's times and size; fails naming the entry if one is missing or < 0. */
static int span(json_object *o, const char *path, const char *arr, size_t i,
		const char *key, int64_t *start, int64_t *end, int64_t *bytes,
		struct hp_err *e)
{
	const char *keys[3] = { "start_ns", "end_ns", "bytes" };
	int64_t *v[3] = { start, end, bytes };
	const char *name = str_key(o, key);
	json_object *x;
	int k;

	if (!name)
		return hyper_plan__errf(e, "%s: %s[%zu] has no \"%s\": not a hyper-run timeline",
			       path, arr, i, key);
	for (k = 0; k < 3; k++) {
		if (!v[k])
			continue;
		if (!json_object_object_get_ex(o, keys[k], &x) ||
		    !json_object_is_type(x, json_type_int))
			return hyper_plan__errf(e, "%s: %s[%zu] (\"%s\") has no integer \"%s\"",
				       path, arr, i, name, keys[k]);
		*v[k] = json_object_get_int64(x);
		if (*v[k] < 0)
			return hyper_plan__errf(e, "%s: %s[%zu] (\"%s\"): negative %s %lld",
				       path, arr, i, name, keys[k],
				       (long long)*v[k]);
	}
	if (*end < *start)
		return hyper_plan__errf(e, "%s: %s[%zu] (\"%s\"): negative duration: end_ns %lld before start_ns %lld",
			       path, arr, i, name, (long long)*end,
			       (long long)*start);
	return 0;
}

static json_object *array_key(json_object *root, const char *key,
			      const char *path, struct hp_err *e)
{
	json_object *a;

	if (!json_object_object_get_ex(root, key, &a) ||
	    !json_object_is_type(a, json_type_array)) {
		hyper_plan__errf(e, "%s: no \"%s\" array: not a hyper-run timeline",
			path, key);
		return NULL;
	}
	return a;
}

/* The run must be of @g: by its graph hash, else by its operators' ids. */
static int check_graph(json_object *root, const struct graph *g,
		       const char *path, struct hp_err *e)
{
	char mine[HYPER_GRAPH_HASH_LEN];
	const char *theirs, *name;
	json_object *gr;

	if (!json_object_object_get_ex(root, "graph", &gr))
		return 0;
	theirs = str_key(gr, "hash");
	name = str_key(gr, "name");
	hyper_plan__graph_identity(g, mine);
	if (theirs && strcmp(theirs, mine))
		return hyper_plan__errf(e, "%s: a run of another graph: \"%s\" (%s), not \"%s\" (%s); feed back a run of a schedule planned for this graph",
			       path, name ? name : "", theirs,
			       g->name ? g->name : "", mine);
	return 0;
}

/* The measured transfers of one direction: bytes and the link's time. */
struct xfers {
	double *bytes, *ns;
	size_t n, cap;
};

static int xfers_add(struct xfers *x, double bytes, double ns,
		     struct hp_mem *mem)
{
	size_t c = x->cap;

	/* both grow to the same capacity; a failure leaves x->cap */
	if (hyper_plan__grow(mem, &x->bytes, &c, x->n, sizeof(double)))
		return -ENOMEM;
	c = x->cap;
	if (hyper_plan__grow(mem, &x->ns, &c, x->n, sizeof(double)))
		return -ENOMEM;
	x->cap = c;
	x->bytes[x->n] = bytes;
	x->ns[x->n++] = ns;
	return 0;
}

/*
 * A direction's bandwidth: the median of its transfers' rates, those of
 * 256 KiB and more if there are any (latency hides the rate of small
 * ones).  Medians, not a fitted line: the first transfers of a run also
 * pay for first touches of the pool, tens of ms that would bend a line.
 */
static double rate(const struct xfers *x, double *tmp)
{
	int n = 0;
	size_t i;

	for (i = 0; i < x->n; i++)
		if (x->bytes[i] >= 262144 && x->ns[i] > 0)
			tmp[n++] = x->bytes[i] / x->ns[i] * 1e9;
	if (!n)
		for (i = 0; i < x->n; i++)
			if (x->ns[i] > 0)
				tmp[n++] = x->bytes[i] / x->ns[i] * 1e9;
	return n ? hyper_plan__median(tmp, n) : 0;
}

/*
 * Applies the link measured by @x[0] (prefetches) and @x[1] (stores);
 * @tmp has room for the larger of the two.
 */
static void fit_link(struct profile *p, const struct xfers *x, double *tmp)
{
	double bw[2];
	const struct xfers *l;
	size_t i;
	int d;

	for (d = 0; d < 2; d++)
		bw[d] = rate(&x[d], tmp);
	if (bw[0] > 0)
		p->h2d_bps = bw[0];
	if (bw[1] > 0)
		p->d2h_bps = bw[1];
	/* Latency: what the transfers took beyond their bytes' time. */
	l = x[0].n ? &x[0] : &x[1];
	if (l->n) {
		double b = l == &x[0] ? p->h2d_bps : p->d2h_bps;

		for (i = 0; i < l->n; i++) {
			tmp[i] = l->ns[i] - l->bytes[i] / b * 1e9;
			if (tmp[i] < 0)
				tmp[i] = 0;
		}
		p->latency_ns = hyper_plan__median(tmp, (int)l->n);
	}
}

int graph_feedback(struct graph *g, struct profile *p, const char *path,
		   struct feedback_stats *st, struct hp_err *e)
{
	json_object *root = read_json(path, e), *ops, *xf, *o;
	struct xfers l[2] = { 0 };
	double *sum = NULL, *tmp = NULL;
	uint32_t *cnt = NULL;
	int64_t s, t, b, busy = 0;
	size_t i, n;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	if (!root)
		return -1;
	if (!json_object_is_type(root, json_type_object) ||
	    !str_key(root, "format") ||
	    strcmp(str_key(root, "format"), "hyper-timeline")) {
		hyper_plan__errf(e, "%s: not a hyper-timeline (write one with hyper-run --timeline)",
			path);
		goto out;
	}
	if (check_graph(root, g, path, e))
		goto out;
	ops = array_key(root, "ops", path, e);
	xf = ops ? array_key(root, "transfers", path, e) : NULL;
	if (!xf)
		goto out;
	sum = hyper_plan__calloc(&g->mem, (size_t)g->nop + 1, sizeof(*sum));
	cnt = hyper_plan__calloc(&g->mem, (size_t)g->nop + 1, sizeof(*cnt));
	if (!sum || !cnt) {
		ret = hyper_plan__nomem(e);
		goto out;
	}
	n = json_object_array_length(ops);
	for (i = 0; i < n; i++) {
		uint32_t k;

		o = json_object_array_get_idx(ops, i);
		if (span(o, path, "ops", i, "op", &s, &t, NULL, e))
			goto out;
		k = hyper_plan__idmap_find(&g->omap, str_key(o, "op"));
		if (k >= g->nop) {
			hyper_plan__errf(e, "%s: ops[%zu]: operator \"%s\" is not in graph \"%s\": a run of another graph",
				path, i, str_key(o, "op"), g->name ? g->name : "");
			goto out;
		}
		sum[k] += (double)(t - s);
		cnt[k]++;
	}
	for (i = 0; i < g->nop; i++)
		if (!cnt[i]) {
			hyper_plan__errf(e, "%s: no time for operator \"%s\": a run cut short, or of another graph",
				path, g->op[i].id);
			goto out;
		}
	n = json_object_array_length(xf);
	for (i = 0; i < n; i++) {
		const char *dir;

		o = json_object_array_get_idx(xf, i);
		if (span(o, path, "transfers", i, "tensor", &s, &t, &b, e))
			goto out;
		dir = str_key(o, "dir");
		if (!dir || (strcmp(dir, "prefetch") && strcmp(dir, "store"))) {
			hyper_plan__errf(e, "%s: transfers[%zu]: \"dir\" is not \"prefetch\" or \"store\"",
				path, i);
			goto out;
		}
		/*
		 * The link's time for it, not its wait behind the ones
		 * before it: the simulator queues transfers itself.
		 */
		if (b && xfers_add(&l[!strcmp(dir, "store")], (double)b,
				   (double)(t - (s > busy ? s : busy)),
				   &g->mem)) {
			ret = hyper_plan__nomem(e);
			goto out;
		}
		if (t > busy)
			busy = t;
	}
	tmp = hyper_plan__calloc(&g->mem, (l[0].n > l[1].n ? l[0].n : l[1].n) + 1,
			sizeof(*tmp));
	if (!tmp) {
		ret = hyper_plan__nomem(e);
		goto out;
	}
	/* Accepted: apply. */
	for (i = 0; i < g->nop; i++) {
		g->op[i].compute_ns = (uint64_t)llround(sum[i] / cnt[i]);
		st->ops_timed++;
	}
	fit_link(p, l, tmp);
	st->xfers[0] = l[0].n;
	st->xfers[1] = l[1].n;
	snprintf(g->timed_on, sizeof(g->timed_on), "%s", p->name);
	ret = 0;
out:
	free(tmp);
	free(sum);
	free(cnt);
	for (i = 0; i < 2; i++) {
		free(l[i].bytes);
		free(l[i].ns);
	}
	json_object_put(root);
	return ret;
}
