// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Graph format v1 (Documentation/graph-format.md) with json-c.  Like the
 * schedule format, unknown keys are rejected and "x-" keys are ignored,
 * and every message names the operator or tensor it is about.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/graph_json.h"
#include "graph/json_split.h"
#include "util/json.h"

#define GRAPH_FORMAT	"hyper-graph"
#define GRAPH_VERSION	1

static bool is_ext(const char *key)
{
	return !strncmp(key, "x-", 2);
}

/* The shared rules and words (util/json.c), into @e. */
static int want_type(json_object *v, json_type type, const char *path,
		     struct hp_err *e)
{
	if (json_object_is_type(v, type))
		return 0;
	if (e)
		hu_json_type_error(e->msg, sizeof(e->msg), path, type, v);
	return -EINVAL;
}

/* Integers only: 1.5 or "12" are as wrong as a negative size. */
static int get_u64(json_object *v, uint64_t min, uint64_t max,
		   const char *path, const char *what, struct hp_err *e)
{
	uint64_t u;

	if (!hu_json_u64(v, min, max, &u))
		return 0;
	if (e)
		hu_json_int_error(e->msg, sizeof(e->msg), path, what, min, max,
				  v);
	return -EINVAL;
}

/*
 * A tensor's or an operator's "id": a string, whole ("\u0000" would cut
 * it short, and two ids could become one).
 */
static int get_id(json_object *v, const char *path, const char **id,
		  struct hp_err *e)
{
	if (want_type(v, json_type_string, path, e))
		return -EINVAL;
	if (strlen(json_object_get_string(v)) !=
	    (size_t)json_object_get_string_len(v))
		return hyper_plan__errf(e, "%s: id contains an escaped NUL (\\u0000)", path);
	*id = json_object_get_string(v);
	return 0;
}

static int get_flag(json_object *v, uint8_t bit, uint8_t *flags,
		    const char *path, struct hp_err *e)
{
	if (want_type(v, json_type_boolean, path, e))
		return -EINVAL;
	if (json_object_get_boolean(v))
		*flags |= bit;
	else
		*flags &= ~bit;
	return 0;
}

/*
 * Once its keys are read, an element is named by its id in the messages
 * that follow: "tensor 3 (\"x\")" where its keys said "tensors[3]".
 */
static int name_path(char *path, size_t len, const char *what, size_t i,
		     const char *id, struct hp_err *e)
{
	if (!id)
		return hyper_plan__errf(e, "%s: missing \"id\"", path);
	snprintf(path, len, "%s %zu (\"%.*s\")", what, i, HP_MAX_ID, id);
	return 0;
}

struct tensor_in {
	const char *id;
	int kind;
	json_object *bytes, *live_in, *live_out, *pin;
};

static int tensor_keys(json_object *o, const char *path,
		       struct tensor_in *ti, struct hp_err *e)
{
	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "id")) {
			if (get_id(v, path, &ti->id, e))
				return -EINVAL;
		} else if (!strcmp(key, "bytes")) {
			ti->bytes = v;
		} else if (!strcmp(key, "kind")) {
			if (want_type(v, json_type_string, path, e))
				return -EINVAL;
			ti->kind = hyper_plan__tkind_parse(json_object_get_string(v));
			if (ti->kind < 0)
				return hyper_plan__errf(e, "%s: unknown kind \"%s\" (weight, activation, kv, gradient, optimizer)",
					       path, json_object_get_string(v));
		} else if (!strcmp(key, "live_in")) {
			ti->live_in = v;
		} else if (!strcmp(key, "live_out")) {
			ti->live_out = v;
		} else if (!strcmp(key, "pin")) {
			ti->pin = v;
		} else if (!is_ext(key)) {
			return hyper_plan__errf(e, "%s: unknown key \"%s\"", path, key);
		}
	}
	return 0;
}

static int parse_tensor(struct graph *g, json_object *o, size_t i,
			struct hp_err *e)
{
	struct tensor_in ti = { .kind = -1 };
	char path[200];
	uint8_t flags;

	snprintf(path, sizeof(path), "tensors[%zu]", i);
	if (want_type(o, json_type_object, path, e) ||
	    tensor_keys(o, path, &ti, e))
		return -EINVAL;
	if (name_path(path, sizeof(path), "tensor", i, ti.id, e))
		return -EINVAL;
	if (ti.kind < 0)
		return hyper_plan__errf(e, "%s: missing \"kind\"", path);
	if (!ti.bytes)
		return hyper_plan__errf(e, "%s: missing \"bytes\"", path);
	if (get_u64(ti.bytes, 1, HP_MAX_BYTES, path, "bytes", e))
		return -EINVAL;
	flags = hyper_plan__tkind_default_flags(ti.kind);
	if ((ti.live_in && get_flag(ti.live_in, TF_LIVE_IN, &flags, path, e)) ||
	    (ti.live_out && get_flag(ti.live_out, TF_LIVE_OUT, &flags, path, e)) ||
	    (ti.pin && get_flag(ti.pin, TF_PIN, &flags, path, e)))
		return -EINVAL;
	return hyper_plan__graph_add_tensor(g, ti.id, json_object_get_int64(ti.bytes),
				ti.kind, flags, e) == NONE ?
	       -EINVAL : 0;
}

struct op_in {
	const char *id;
	json_object *compute, *inputs, *outputs, *gemm, *flops, *bytes;
};

static int op_keys(json_object *o, const char *path, struct op_in *oi,
		   struct hp_err *e)
{
	json_object_object_foreach(o, key, v) {
		if (!strcmp(key, "id")) {
			if (get_id(v, path, &oi->id, e))
				return -EINVAL;
		} else if (!strcmp(key, "compute_ns")) {
			oi->compute = v;
		} else if (!strcmp(key, "inputs")) {
			oi->inputs = v;
		} else if (!strcmp(key, "outputs")) {
			oi->outputs = v;
		} else if (!strcmp(key, "gemm")) {
			oi->gemm = v;
		} else if (!strcmp(key, "flops")) {
			oi->flops = v;
		} else if (!strcmp(key, "bytes")) {
			oi->bytes = v;
		} else if (!is_ext(key)) {
			return hyper_plan__errf(e, "%s: unknown key \"%s\"", path, key);
		}
	}
	return 0;
}

/* Resolves a list of tensor ids into indices; *n returns the count. */
static int tensor_list(struct graph *g, json_object *arr, const char *path,
		       const char *list, uint32_t **out, uint32_t *n,
		       struct hp_err *e)
{
	size_t i, len;

	*n = 0;
	if (!arr)
		return 0;
	if (want_type(arr, json_type_array, path, e))
		return -EINVAL;
	len = json_object_array_length(arr);
	if (len) {
		void *q = hyper_plan__array(&g->mem, len, sizeof(**out));

		if (!q)
			return hyper_plan__nomem(e);
		free(*out);
		*out = q;
	}
	for (i = 0; i < len; i++) {
		json_object *v = json_object_array_get_idx(arr, i);
		uint32_t t;

		if (!json_object_is_type(v, json_type_string))
			return hyper_plan__errf(e, "%s: %s[%zu] must be a tensor id string",
				       path, list, i);
		t = hyper_plan__graph_tensor(g, json_object_get_string(v));
		if (t == NONE)
			return hyper_plan__errf(e, "%s: unknown tensor \"%.*s\" in %s",
				       path, HP_MAX_ID, json_object_get_string(v),
				       list);
		(*out)[(*n)++] = t;
	}
	return 0;
}

static int parse_gemm(json_object *o, const char *path, struct gemm *gm,
		      struct hp_err *e)
{
	uint32_t *dim[] = { &gm->m, &gm->n, &gm->k };
	const char *name[] = { "m", "n", "k" };
	size_t i;

	if (want_type(o, json_type_object, path, e))
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		json_object *v;

		if (!json_object_object_get_ex(o, name[i], &v))
			return hyper_plan__errf(e, "%s: gemm needs \"%s\"", path, name[i]);
		if (get_u64(v, 0, UINT32_MAX, path, name[i], e))
			return -EINVAL;
		*dim[i] = json_object_get_int64(v);
	}
	return 0;
}

/* "flops" and "bytes": non-negative numbers, below 10^30 (no op does more). */
static int get_cost(json_object *v, const char *path, const char *what,
		    double *out, struct hp_err *e)
{
	double d = json_object_get_double(v);

	if ((!json_object_is_type(v, json_type_int) &&
	     !json_object_is_type(v, json_type_double)) || !(d >= 0 && d < 1e30))
		return hyper_plan__errf(e, "%s: %s must be a number in 0..1e30", path, what);
	*out = d;
	return 0;
}

static int parse_op(struct graph *g, json_object *o, size_t i,
		    uint32_t **in, uint32_t **out, struct hp_err *e)
{
	struct op_in oi = { 0 };
	struct gemm gm = { 0 };
	uint32_t n_in, n_out;
	uint64_t ns = 0;
	double flops = 0, bytes = 0;
	char path[200];

	snprintf(path, sizeof(path), "ops[%zu]", i);
	if (want_type(o, json_type_object, path, e) || op_keys(o, path, &oi, e))
		return -EINVAL;
	if (name_path(path, sizeof(path), "op", i, oi.id, e))
		return -EINVAL;
	if (oi.compute) {
		if (get_u64(oi.compute, 0, HP_MAX_OP_NS, path,
			    "compute_ns (one hour at most)", e))
			return -EINVAL;
		ns = json_object_get_int64(oi.compute);
	}
	if (oi.gemm && parse_gemm(oi.gemm, path, &gm, e))
		return -EINVAL;
	if ((oi.flops && get_cost(oi.flops, path, "flops", &flops, e)) ||
	    (oi.bytes && get_cost(oi.bytes, path, "bytes", &bytes, e)))
		return -EINVAL;
	if (tensor_list(g, oi.inputs, path, "inputs", in, &n_in, e) ||
	    tensor_list(g, oi.outputs, path, "outputs", out, &n_out, e))
		return -EINVAL;
	if (hyper_plan__graph_add_op(g, oi.id, ns, *in, n_in, *out, n_out, &gm, e) == NONE)
		return -EINVAL;
	g->op[g->nop - 1].flops = flops;
	g->op[g->nop - 1].bytes = bytes;
	return 0;
}

/* One element's text, parsed alone; NULL if it is not exactly a value. */
static json_object *parse_span(struct json_tokener *tok, const char *text,
			       const struct json_span *sp)
{
	json_object *o;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, text + sp->at, sp->len);
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  json_tokener_get_parse_end(tok) != sp->len)) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/*
 * The elements come from @arr, or, when the text was split
 * (hyper_plan__graph_parse_json()), from @sp: then each is parsed, used and freed in
 * turn.  An element that does not parse alone makes the whole text parse
 * again in one piece, for json-c's own message.
 */
static int parse_array(struct graph *g, json_object *arr, const char *name,
		       const struct hyper_plan__json_split *sp, struct hp_err *e)
{
	int w = name[0] == 't' ? 0 : 1, ret = 0;
	uint32_t *in = NULL, *out = NULL;
	struct json_tokener *tok = NULL;
	size_t i, n;

	if (!arr)
		return hyper_plan__errf(e, "graph: missing \"%s\"", name);
	if (want_type(arr, json_type_array, name, e))
		return -EINVAL;
	n = sp ? sp->nel[w] : json_object_array_length(arr);
	if (sp) {
		tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
		if (!tok)
			return hyper_plan__errf(e, "graph: out of memory");
	}
	for (i = 0; i < n && !ret; i++) {
		json_object *o = sp ? parse_span(tok, sp->text, &sp->el[w][i]) :
				 json_object_array_get_idx(arr, i);

		if (!o) {
			ret = -EAGAIN;
			break;
		}
		ret = w ? parse_op(g, o, i, &in, &out, e) :
		      parse_tensor(g, o, i, e);
		if (sp)
			json_object_put(o);
	}
	if (tok)
		json_tokener_free(tok);
	free(in);
	free(out);
	return ret;
}

static int check_header(json_object *fmt, json_object *ver, struct hp_err *e)
{
	if (!fmt || !json_object_is_type(fmt, json_type_string) ||
	    strcmp(json_object_get_string(fmt), GRAPH_FORMAT))
		return hyper_plan__errf(e, "graph: \"format\" must be \"%s\"",
			       GRAPH_FORMAT);
	if (!ver || !json_object_is_type(ver, json_type_int))
		return hyper_plan__errf(e, "graph: \"version\" must be the integer %d",
			       GRAPH_VERSION);
	if (json_object_get_int64(ver) != GRAPH_VERSION)
		return hyper_plan__errf(e, "unsupported graph version %s (hyper-plan reads %d)",
			       json_object_to_json_string(ver), GRAPH_VERSION);
	return 0;
}

static int parse_root(struct graph *g, json_object *root,
		      const struct hyper_plan__json_split *sp, struct hp_err *e)
{
	json_object *fmt = NULL, *ver = NULL, *tensors = NULL, *ops = NULL;
	int ret;

	if (want_type(root, json_type_object, "graph", e))
		return -EINVAL;
	json_object_object_foreach(root, key, v) {
		if (!strcmp(key, "format")) {
			fmt = v;
		} else if (!strcmp(key, "version")) {
			ver = v;
		} else if (!strcmp(key, "name")) {
			if (want_type(v, json_type_string, "name", e))
				return -EINVAL;
			char *name = hyper_plan__strdup(&g->mem,
					       json_object_get_string(v));

			if (!name)
				return hyper_plan__nomem(e);
			free(g->name);
			g->name = name;
		} else if (!strcmp(key, "profile")) {
			if (want_type(v, json_type_string, "profile", e))
				return -EINVAL;
			snprintf(g->timed_on, sizeof(g->timed_on), "%s",
				 json_object_get_string(v));
		} else if (!strcmp(key, "tensors")) {
			tensors = v;
		} else if (!strcmp(key, "ops")) {
			ops = v;
		} else if (!is_ext(key)) {
			return hyper_plan__errf(e, "graph: unknown key \"%s\"", key);
		}
	}
	if (check_header(fmt, ver, e))
		return -EINVAL;
	ret = parse_array(g, tensors, "tensors", sp, e);
	if (!ret)
		ret = parse_array(g, ops, "ops", sp, e);
	if (ret)
		return ret == -EAGAIN ? ret : -EINVAL;
	if (!g->nop)
		return hyper_plan__errf(e, "graph: no operators");
	return 0;
}

/*
 * One text, checked by the shared reader (hyper_plan__json_parse()): empty,
 * truncated, malformed and trailing data are refused in its words, each
 * starting with @what.  On the split path a failure only asks for the
 * whole text again (-EAGAIN), which gives the message.
 */
static int parse_text(struct graph *g, const char *text, const char *what,
		      const struct hyper_plan__json_split *sp, struct hp_err *e)
{
	json_object *root;
	int ret;

	ret = hyper_plan__json_parse(what, text, strlen(text), &root, e);
	if (ret)
		return sp && ret != -ENOMEM ? -EAGAIN : ret;
	ret = parse_root(g, root, sp, e);
	json_object_put(root);
	return ret;
}

/*
 * Split first (json_split.h), so that the big arrays are parsed one
 * element at a time.  Any failure on that path, a malformed text or a
 * bad field alike, parses the whole text again in one piece into a fresh
 * graph: the messages, and which of several faults is reported, are the
 * same as without the split.
 */
static int parse_named(struct graph *g, const char *text, const char *what,
		       struct hp_err *e)
{
	struct hyper_plan__json_split sp;
	int ret = hyper_plan__json_split(text, &sp, &g->mem);

	if (ret == -ENOMEM)
		return hyper_plan__nomem(e);
	if (!ret) {
		sp.text = text;
		ret = parse_text(g, sp.skeleton, what, &sp, e);
		hyper_plan__json_split_free(&sp);
		if (!ret)
			return 0;
		if (g->mem.failed) {
			hyper_plan__graph_reset(g);
			return hyper_plan__nomem(e);
		}
		hyper_plan__graph_reset(g);	/* keeps g->mem's count and test hook */
		e->msg[0] = 0;
	}
	return parse_text(g, text, what, NULL, e);
}

int hyper_plan__graph_parse_json(struct graph *g, const char *text, struct hp_err *e)
{
	return parse_named(g, text, "graph", e);
}

/*
 * Reads the whole file, refusing early what is not a graph: a directory,
 * a NUL byte (JSON text has none: /dev/zero stops at byte 0), or more than
 * GRAPH_MAX_FILE bytes (/dev/urandom and other endless inputs).
 */
int hyper_plan__graph_load_json(struct graph *g, const char *path, struct hp_err *e)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *nul;
	size_t len = 0, cap = 0, n;
	struct stat st;
	int ret = 0;

	if (!f)
		return hyper_plan__errf(e, "%s: %s", path, strerror(errno));
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		fclose(f);
		return hyper_plan__errf(e, "%s: is a directory, not a graph JSON file", path);
	}
	do {
		if (hyper_plan__grow(&g->mem, &buf, &cap, len + 65536, 1)) {
			ret = hyper_plan__nomem(e);
			break;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		nul = memchr(buf + len, 0, n);
		if (nul) {
			ret = hyper_plan__errf(e, "%s: NUL byte at offset %zu: not a JSON text",
				      path, (size_t)(nul - buf));
			break;
		}
		len += n;
		if (len > GRAPH_MAX_FILE) {
			ret = hyper_plan__errf(e, "%s: larger than %llu MiB, the limit for a graph file",
				      path, GRAPH_MAX_FILE >> 20);
			break;
		}
	} while (n);
	if (!ret && ferror(f))
		ret = hyper_plan__errf(e, "%s: read error: %s", path, strerror(errno));
	fclose(f);
	if (!ret) {
		buf[len] = 0;
		ret = parse_named(g, buf, path, e);
	}
	free(buf);
	return ret;
}

static void write_refs(const struct graph *g, FILE *f, const char *key,
		       const uint32_t *r, uint32_t n)
{
	uint32_t i;

	fprintf(f, ", \"%s\": [", key);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		hu_json_write_str(f, g->t[r[i]].id);
	}
	fputc(']', f);
}

static void write_tensor(const struct tensor *t, FILE *f)
{
	uint8_t def = hyper_plan__tkind_default_flags(t->kind);

	fputs("  { \"id\": ", f);
	hu_json_write_str(f, t->id);
	fprintf(f, ", \"bytes\": %llu, \"kind\": \"%s\"",
		(unsigned long long)t->bytes, hyper_kind_name(t->kind));
	if ((t->flags ^ def) & TF_LIVE_IN)
		fprintf(f, ", \"live_in\": %s",
			t->flags & TF_LIVE_IN ? "true" : "false");
	if ((t->flags ^ def) & TF_LIVE_OUT)
		fprintf(f, ", \"live_out\": %s",
			t->flags & TF_LIVE_OUT ? "true" : "false");
	if (t->flags & TF_PIN)
		fputs(", \"pin\": true", f);
	fputs(" }", f);
}

void hyper_plan__graph_write_json(const struct graph *g, FILE *f)
{
	size_t i;

	fprintf(f, "{ \"format\": \"%s\", \"version\": %d, \"name\": ",
		GRAPH_FORMAT, GRAPH_VERSION);
	hu_json_write_str(f, g->name);
	if (g->timed_on[0]) {
		fputs(", \"profile\": ", f);
		hu_json_write_str(f, g->timed_on);
	}
	fputs(",\n \"tensors\": [\n", f);
	for (i = 0; i < g->nt; i++) {
		write_tensor(&g->t[i], f);
		fputs(i + 1 < g->nt ? ",\n" : "\n", f);
	}
	fputs(" ],\n \"ops\": [\n", f);
	for (i = 0; i < g->nop; i++) {
		const struct op *o = &g->op[i];

		fputs("  { \"id\": ", f);
		hu_json_write_str(f, o->id);
		fprintf(f, ", \"compute_ns\": %llu",
			(unsigned long long)o->compute_ns);
		write_refs(g, f, "inputs", op_in(g, o), o->n_in);
		write_refs(g, f, "outputs", op_out(g, o), o->n_out);
		if (o->gemm.m)
			fprintf(f, ", \"gemm\": { \"m\": %u, \"n\": %u, \"k\": %u }",
				o->gemm.m, o->gemm.n, o->gemm.k);
		if (o->flops || o->bytes)
			fprintf(f, ", \"flops\": %.0f, \"bytes\": %.0f", o->flops,
				o->bytes);
		fputs(i + 1 < g->nop ? " },\n" : " }\n", f);
	}
	fputs(" ]\n}\n", f);
}
