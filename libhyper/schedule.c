// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Schedule loader: JSON (json-c) into the flat tables the executor walks.
 * Shape and type errors are reported here with the JSON path; the state
 * machine rules are in validate.c, which runs before a schedule is handed
 * out.  Everything checked here is listed in
 * Documentation/schedule-format.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include <hyper/graph_id.h>

#include "schedule.h"
#include "util/huge.h"
#include "util/json.h"

/* Large enough for any schedule a planner writes, small enough to refuse junk. */
#define HS_FILE_MAX	(1ULL << 30)
#define HS_ITEMS_MAX	(1U << 24)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

void hs_errf(struct hs_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e || !e->buf || !e->len)
		return;
	va_start(ap, fmt);
	vsnprintf(e->buf, e->len, fmt, ap);
	va_end(ap);
}

/*
 * Names from the input go into messages: keep them printable and short,
 * since the text may end up on a terminal or in a JSON report (the one
 * escaper, util/json.c).
 */
#define QBUF	100
static const char *quote(char *out, const char *s)
{
	return hu_json_escape(out, QBUF, s, 1);
}

static int want(struct json_object *v, enum json_type t, const char *what,
		const char *path, struct hs_err *e)
{
	if (json_object_is_type(v, t))
		return 0;
	hs_errf(e, "%s: expected %s, got %s", path, what,
		hu_json_type_name(json_object_get_type(v)));
	return -EBADMSG;
}

/* The integers' one rule and words (util/json.c). */
static int get_int_field(struct json_object *v, uint64_t min, uint64_t max,
			 uint64_t *out, const char *path, struct hs_err *e)
{
	if (!hu_json_u64(v, min, max, out))
		return 0;
	if (e && e->buf && e->len)
		hu_json_int_error(e->buf, e->len, path, NULL, min, max, v);
	return -EBADMSG;
}

static bool is_ext_key(const char *key)
{
	return key[0] == 'x' && key[1] == '-';
}

static int ext_add(struct hs_exts *x, const char *key, struct json_object *v)
{
	struct hs_ext *n;
	const char *txt;

	n = realloc(x->v, (x->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	x->v = n;
	txt = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	n[x->n].key = strdup(key);
	n[x->n].json = strdup(txt ? txt : "null");
	if (!n[x->n].key || !n[x->n].json) {
		free(n[x->n].key);
		free(n[x->n].json);
		return -ENOMEM;
	}
	x->n++;
	return 0;
}

static void ext_free(struct hs_exts *x)
{
	for (uint32_t i = 0; i < x->n; i++) {
		free(x->v[i].key);
		free(x->v[i].json);
	}
	free(x->v);
}

/*
 * Keeps element @i's "x-" keys @x (moved: @x is spent either way) in
 * *@arr, an array of @n allocated at the first element that has any.
 */
static int ext_keep(struct hs_exts **arr, uint32_t n, uint32_t i,
		    struct hs_exts *x)
{
	if (!x->n)
		return 0;
	if (!*arr)
		*arr = calloc(n, sizeof(**arr));
	if (!*arr) {
		ext_free(x);
		return -ENOMEM;
	}
	(*arr)[i] = *x;
	return 0;
}

/* Unknown keys are errors (a typo must not change a schedule); x- keys are kept. */
static int check_keys(struct json_object *obj, const char *const *allowed,
		      const char *path, struct hs_exts *ext, struct hs_err *e)
{
	char q[QBUF];

	json_object_object_foreach(obj, key, val) {
		const char *const *a;

		if (is_ext_key(key)) {
			if (ext && ext_add(ext, key, val))
				return -ENOMEM;
			continue;
		}
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			hs_errf(e, "%s: unknown key \"%s\"", path, quote(q, key));
			return -EBADMSG;
		}
	}
	return 0;
}

static struct json_object *need(struct json_object *obj, const char *key,
				const char *path, struct hs_err *e)
{
	struct json_object *v;

	if (json_object_object_get_ex(obj, key, &v))
		return v;
	hs_errf(e, "%s: missing key \"%s\"", path, key);
	return NULL;
}

/* The names are the shared vocabulary's (<hyper/vocab.h>); -1: unknown. */
static int lookup_name(const char *(*name_fn)(uint32_t), const char *s)
{
	uint32_t v = hyper_vocab_parse(name_fn, s);

	return v ? (int)v : -1;
}

const char *hs_op_name(uint32_t op)
{
	const char *n = hyper_cache_op_name(op);

	return n ? n : "?";
}

/*
 * A slot holds the id's hash above and its tensor's index + 1 below, so
 * a probe compares ids (a cache miss or two each, on a big schedule)
 * only where the whole hash matches.
 */
#define SLOT_IDX(x)	((uint32_t)(x) - 1)
#define SLOT_HASH(x)	((uint32_t)((x) >> 32))

int hs_find(const struct hyper_schedule *s, const char *id)
{
	uint32_t h = hs_hash_str(id), i;
	uint64_t slot;

	if (!s->hash)
		return -ENOENT;
	for (i = h & s->hash_mask;; i = (i + 1) & s->hash_mask) {
		slot = s->hash[i];
		if (!slot)
			return -ENOENT;
		if (SLOT_HASH(slot) == h &&
		    !strcmp(s->tensors[SLOT_IDX(slot)].id, id))
			return (int)SLOT_IDX(slot);
	}
}

int hs_hash_alloc(struct hyper_schedule *s)
{
	s->hash_mask = hs_hash_mask(s->nr_tensors);
	/*
	 * Probed in no order: on 4 KiB pages, 16 MiB of it at a million
	 * tensors missed the TLB at nearly every insert.
	 */
	s->hash = hu_calloc_huge(s->hash_mask + 1, sizeof(*s->hash));
	return s->hash ? 0 : -ENOMEM;
}

/* Returns the index of an earlier tensor with the same id, or -1 after adding it. */
int hs_hash_insert(struct hyper_schedule *s, uint32_t idx)
{
	const char *id = s->tensors[idx].id;
	uint32_t h = hs_hash_str(id), slot;
	int dup = hs_hash_lookup(s, id, h, &slot);

	if (dup < 0)
		hs_hash_put(s, slot, idx, h);
	return dup;
}

/**
 * hs_hash_lookup() - an id in the table, or where it goes
 * @s:	the schedule, its table allocated (hs_hash_alloc())
 * @id:	the id
 * @h:	its hs_hash_str()
 * @slot:	set, when no tensor has @id, to the slot it goes in
 *
 * Return: the index of the earlier tensor with @id, or -1.
 */
int hs_hash_lookup(const struct hyper_schedule *s, const char *id, uint32_t h,
		   uint32_t *slot)
{
	uint32_t i;

	for (i = h & s->hash_mask; s->hash[i]; i = (i + 1) & s->hash_mask)
		if (SLOT_HASH(s->hash[i]) == h &&
		    !strcmp(s->tensors[SLOT_IDX(s->hash[i])].id, id))
			return (int)SLOT_IDX(s->hash[i]);
	*slot = i;
	return -1;
}

static int parse_array_len(struct json_object *v, const char *path,
			   uint32_t *n, struct hs_err *e);

/* "arena_offsets": where the schedule places each residency. */
static int parse_offsets(struct hs_tensor *t, uint32_t i, struct json_object *v,
			 struct hs_err *e)
{
	char path[64];
	uint32_t n;
	int ret;

	snprintf(path, sizeof(path), "tensors[%u].arena_offsets", i);
	ret = parse_array_len(v, path, &n, e);
	if (ret || !n)
		return ret;
	t->plan_off = calloc(n, sizeof(*t->plan_off));
	if (!t->plan_off)
		return -ENOMEM;
	t->nr_plan_off = n;
	for (uint32_t k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "tensors[%u].arena_offsets[%u]", i, k);
		ret = get_int_field(json_object_array_get_idx(v, k), 0,
				    HS_BYTES_MAX, &t->plan_off[k],
				    path, e);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_tensor(struct hyper_schedule *s, uint32_t i,
			struct json_object *o, struct hs_err *e)
{
	static const char *const keys[] = {
		"id", "bytes", "kind", "home", "arena_offsets", NULL
	};
	struct hs_tensor *t = &s->tensors[i];
	struct hs_exts x = { 0 };
	struct json_object *v;
	char path[48], q[QBUF];
	const char *str;
	int ret, k, dup;

	snprintf(path, sizeof(path), "tensors[%u]", i);
	ret = want(o, json_type_object, "an object", path, e);
	if (ret)
		return ret;
	ret = check_keys(o, keys, path, &x, e);
	if (!ret)
		ret = ext_keep(&s->tensor_ext, s->nr_tensors, i, &x);
	else
		ext_free(&x);
	if (ret)
		return ret;

	if (!(v = need(o, "id", path, e)))
		return -EBADMSG;
	if (!json_object_is_type(v, json_type_string) ||
	    json_object_get_string_len(v) < 1 ||
	    json_object_get_string_len(v) > HS_ID_MAX ||
	    strlen(json_object_get_string(v)) !=
	    (size_t)json_object_get_string_len(v)) {
		hs_errf(e, "%s.id: must be a string of 1..%d bytes without NUL",
			path, HS_ID_MAX);
		return -EBADMSG;
	}
	t->id = strdup(json_object_get_string(v));
	if (!t->id)
		return -ENOMEM;
	dup = hs_hash_insert(s, i);
	if (dup >= 0) {
		hs_errf(e, "tensor %u: duplicate id \"%s\" (first is tensor %d)",
			i, quote(q, t->id), dup);
		return -EBADMSG;
	}

	if (!(v = need(o, "bytes", path, e)))
		return -EBADMSG;
	if (hu_json_u64(v, 1, HS_BYTES_MAX, &t->bytes)) {
		char who[160];

		snprintf(who, sizeof(who), "tensor %u (\"%s\")", i, quote(q, t->id));
		if (e && e->buf && e->len)
			hu_json_int_error(e->buf, e->len, who, "bytes", 1,
					  HS_BYTES_MAX, v);
		return -EBADMSG;
	}

	if (!(v = need(o, "kind", path, e)))
		return -EBADMSG;
	snprintf(path, sizeof(path), "tensors[%u].kind", i);
	ret = want(v, json_type_string, "a string", path, e);
	if (ret)
		return ret;
	str = json_object_get_string(v);
	k = lookup_name(hyper_kind_name, str);
	if (k < 0) {
		hs_errf(e, "%s: unknown kind \"%s\" (weight, activation, kv, gradient or optimizer)",
			path, quote(q, str));
		return -EBADMSG;
	}
	t->kind = k;

	snprintf(path, sizeof(path), "tensors[%u]", i);
	if (!(v = need(o, "home", path, e)))
		return -EBADMSG;
	snprintf(path, sizeof(path), "tensors[%u].home", i);
	ret = want(v, json_type_string, "a string", path, e);
	if (ret)
		return ret;
	str = json_object_get_string(v);
	k = lookup_name(hyper_home_name, str);
	if (k < 0) {
		hs_errf(e, "%s: unknown home \"%s\" (pool, device or none)",
			path, quote(q, str));
		return -EBADMSG;
	}
	t->home = k;
	if (json_object_object_get_ex(o, "arena_offsets", &v))
		return parse_offsets(t, i, v, e);
	return 0;
}

static int parse_array_len(struct json_object *v, const char *path,
			   uint32_t *n, struct hs_err *e)
{
	size_t len;
	int ret;

	ret = want(v, json_type_array, "an array", path, e);
	if (ret)
		return ret;
	len = json_object_array_length(v);
	if (len > HS_ITEMS_MAX) {
		hs_errf(e, "%s: more than %u entries", path, HS_ITEMS_MAX);
		return -EBADMSG;
	}
	*n = (uint32_t)len;
	return 0;
}

static int resolve(const struct hyper_schedule *s, uint32_t si,
		   struct json_object *v, const char *path, uint32_t *out,
		   struct hs_err *e)
{
	char q[QBUF];
	int ret, idx;

	ret = want(v, json_type_string, "a tensor id (string)", path, e);
	if (ret)
		return ret;
	idx = hs_find(s, json_object_get_string(v));
	if (idx < 0) {
		hs_errf(e, "step %u (%s): unknown tensor \"%s\" (%s)", si,
			s->steps[si].op, quote(q, json_object_get_string(v)),
			strchr(path, '.') + 1);
		return -EBADMSG;
	}
	*out = idx;
	return 0;
}

static int parse_cops(struct hyper_schedule *s, uint32_t si,
		      struct json_object *arr, const char *name,
		      struct hyper_cop **out, uint32_t *nr, struct hs_err *e)
{
	static const char *const keys[] = { "op", "tensor", NULL };
	char path[64], q[QBUF];
	uint32_t n, j;
	int ret;

	snprintf(path, sizeof(path), "steps[%u].%s", si, name);
	ret = parse_array_len(arr, path, &n, e);
	if (ret || !n)
		return ret;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*nr = n;
	for (j = 0; j < n; j++) {
		struct json_object *o = json_object_array_get_idx(arr, j), *v;
		int op;

		snprintf(path, sizeof(path), "steps[%u].%s[%u]", si, name, j);
		ret = want(o, json_type_object, "a cache op object", path, e);
		if (!ret)
			ret = check_keys(o, keys, path, NULL, e);
		if (ret)
			return ret;
		if (!(v = need(o, "op", path, e)))
			return -EBADMSG;
		snprintf(path, sizeof(path), "steps[%u].%s[%u].op", si, name, j);
		ret = want(v, json_type_string, "a string", path, e);
		if (ret)
			return ret;
		op = lookup_name(hyper_cache_op_name,
				 json_object_get_string(v));
		if (op < 0) {
			hs_errf(e, "%s: unknown cache op \"%s\" (prefetch, store or detach)",
				path, quote(q, json_object_get_string(v)));
			return -EBADMSG;
		}
		(*out)[j].op = op;
		snprintf(path, sizeof(path), "steps[%u].%s[%u]", si, name, j);
		if (!(v = need(o, "tensor", path, e)))
			return -EBADMSG;
		snprintf(path, sizeof(path), "steps[%u].%s[%u].tensor", si, name, j);
		ret = resolve(s, si, v, path, &(*out)[j].tensor, e);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_ids(struct hyper_schedule *s, uint32_t si,
		     struct json_object *arr, const char *name,
		     uint32_t **out, uint32_t *nr, struct hs_err *e)
{
	char path[64];
	uint32_t n, j;
	int ret;

	snprintf(path, sizeof(path), "steps[%u].%s", si, name);
	ret = parse_array_len(arr, path, &n, e);
	if (ret || !n)
		return ret;
	*out = calloc(n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	*nr = n;
	for (j = 0; j < n; j++) {
		snprintf(path, sizeof(path), "steps[%u].%s[%u]", si, name, j);
		ret = resolve(s, si, json_object_array_get_idx(arr, j), path,
			      &(*out)[j], e);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * "x-gemm" is the planner's note of the operator's GEMM shape.  Like every
 * x- key it is not validated: a malformed one just leaves the step without
 * HYPER_STEP_GEMM.
 */
static void parse_gemm(struct hs_step *st, struct json_object *o)
{
	static const char *const dims[] = { "m", "n", "k" };
	struct json_object *g, *v;
	uint64_t x;

	if (!json_object_object_get_ex(o, "x-gemm", &g) ||
	    !json_object_is_type(g, json_type_object))
		return;
	for (int d = 0; d < 3; d++) {
		if (!json_object_object_get_ex(g, dims[d], &v) ||
		    hu_json_u64(v, 1, UINT32_MAX, &x))
			return;
		st->gemm[d] = (uint32_t)x;
	}
	st->flags |= HYPER_STEP_GEMM;
}

static int parse_step(struct hyper_schedule *s, uint32_t i,
		      struct json_object *o, struct hs_err *e)
{
	static const char *const keys[] = {
		"op", "compute_ns", "before", "uses", "defines", "after", NULL
	};
	struct hs_step *st = &s->steps[i];
	struct hs_exts x = { 0 };
	struct json_object *v;
	char path[48];
	int ret;

	snprintf(path, sizeof(path), "steps[%u]", i);
	ret = want(o, json_type_object, "an object", path, e);
	if (ret)
		return ret;
	ret = check_keys(o, keys, path, &x, e);
	if (!ret)
		ret = ext_keep(&s->step_ext, s->nr_steps, i, &x);
	else
		ext_free(&x);
	if (ret)
		return ret;
	if (!(v = need(o, "op", path, e)))
		return -EBADMSG;
	snprintf(path, sizeof(path), "steps[%u].op", i);
	ret = want(v, json_type_string, "a string", path, e);
	if (ret)
		return ret;
	st->op = strdup(json_object_get_string(v));
	if (!st->op)
		return -ENOMEM;

	if (json_object_object_get_ex(o, "compute_ns", &v)) {
		snprintf(path, sizeof(path), "steps[%u].compute_ns", i);
		ret = get_int_field(v, 0, INT64_MAX, &st->compute_ns, path, e);
		if (ret)
			return ret;
		if (__builtin_add_overflow(s->total_compute_ns, st->compute_ns,
					   &s->total_compute_ns)) {
			hs_errf(e, "%s: total compute time overflows 64 bits", path);
			return -EBADMSG;
		}
	}
	if (json_object_object_get_ex(o, "before", &v) &&
	    (ret = parse_cops(s, i, v, "before", &st->before, &st->nr_before, e)))
		return ret;
	if (json_object_object_get_ex(o, "uses", &v) &&
	    (ret = parse_ids(s, i, v, "uses", &st->uses, &st->nr_uses, e)))
		return ret;
	if (json_object_object_get_ex(o, "defines", &v) &&
	    (ret = parse_ids(s, i, v, "defines", &st->defines, &st->nr_defines, e)))
		return ret;
	if (json_object_object_get_ex(o, "after", &v) &&
	    (ret = parse_cops(s, i, v, "after", &st->after, &st->nr_after, e)))
		return ret;
	parse_gemm(st, o);
	return 0;
}

static int parse_predicted(struct hyper_schedule *s, struct json_object *o,
			   struct hs_err *e)
{
	static const char *const keys[] = {
		"peak_device_bytes", "stall_ns", "makespan_ns", NULL
	};
	static const uint32_t flags[] = {
		HYPER_SCHED_PRED_PEAK, HYPER_SCHED_PRED_STALL,
		HYPER_SCHED_PRED_MAKESPAN,
	};
	uint64_t *dst[] = { &s->pred_peak, &s->pred_stall, &s->pred_makespan };
	struct json_object *v;
	char path[48];
	int ret;

	ret = want(o, json_type_object, "an object", "predicted", e);
	if (!ret)
		ret = check_keys(o, keys, "predicted", NULL, e);
	if (ret)
		return ret;
	for (int k = 0; k < 3; k++) {
		if (!json_object_object_get_ex(o, keys[k], &v))
			continue;
		snprintf(path, sizeof(path), "predicted.%s", keys[k]);
		ret = get_int_field(v, 0, INT64_MAX, dst[k], path, e);
		if (ret)
			return ret;
		s->flags |= flags[k];
	}
	return 0;
}

/* Take @h as the schedule's graph hash, if it has the form of one. */
int hs_set_graph_hash(struct hyper_schedule *s, const char *h, struct hs_err *e)
{
	size_t n = strlen(HYPER_GRAPH_HASH_PREFIX);
	char q[QBUF];

	if (strlen(h) != HYPER_GRAPH_HASH_LEN - 1 ||
	    strncmp(h, HYPER_GRAPH_HASH_PREFIX, n) ||
	    strspn(h + n, "0123456789abcdef") != 16) {
		hs_errf(e, "graph.hash: expected \"%s\" and 16 lower-case hex digits, got \"%s\"",
			HYPER_GRAPH_HASH_PREFIX, quote(q, h));
		return -EBADMSG;
	}
	s->graph_hash = strdup(h);
	return s->graph_hash ? 0 : -ENOMEM;
}

/* "graph": which graph the schedule was planned for (name, hash). */
static int parse_graph(struct hyper_schedule *s, struct json_object *o,
		       struct hs_err *e)
{
	static const char *const keys[] = { "name", "hash", NULL };
	struct json_object *v;
	int ret;

	ret = want(o, json_type_object, "an object", "graph", e);
	if (!ret)
		ret = check_keys(o, keys, "graph", NULL, e);
	if (ret)
		return ret;
	if (json_object_object_get_ex(o, "name", &v)) {
		ret = want(v, json_type_string, "a string", "graph.name", e);
		if (ret)
			return ret;
		s->graph_name = strdup(json_object_get_string(v));
		if (!s->graph_name)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(o, "hash", &v)) {
		ret = want(v, json_type_string, "a string", "graph.hash", e);
		if (ret)
			return ret;
		ret = hs_set_graph_hash(s, json_object_get_string(v), e);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The end of every way a schedule is made: a filled @s (@ret its filling's
 * result) is validated and laid out, and handed out only if all went well.
 */
int hs_finish(struct hyper_schedule *s, int ret, const char *doing,
	      struct hs_err *e, struct hyper_schedule **schedp)
{
	struct hu_resid *v;
	uint32_t n;

	if (!ret)
		ret = hs_validate(s, &v, &n, e);
	if (!ret)
		ret = hs_layout(s, v, n, e);
	if (ret) {
		if (ret == -ENOMEM)
			hs_errf(e, "out of memory while %s the schedule", doing);
		hs_destroy(s);
		return ret;
	}
	*schedp = s;
	return 0;
}

/*
 * The graph hash of the tensors and steps as parsed: a "graph.hash" that
 * differs names another graph, or a schedule edited after planning.
 */
int hs_check_graph_hash(const struct hyper_schedule *s, struct hs_err *e)
{
	char have[HYPER_GRAPH_HASH_LEN];
	uint64_t ts = 0, ss = 0;

	if (!s->graph_hash)
		return 0;
	for (uint32_t i = 0; i < s->nr_tensors; i++)
		ts += hyper_graph_tensor_hash(s->tensors[i].id,
					      s->tensors[i].bytes,
					      hyper_kind_name(s->tensors[i].kind));
	for (uint32_t i = 0; i < s->nr_steps; i++) {
		const struct hs_step *st = &s->steps[i];
		uint64_t h = hyper_graph_step_begin(st->op);

		for (uint32_t j = 0; j < st->nr_uses; j++)
			h = hyper_graph_step_add(h, 'U', s->tensors[st->uses[j]].id);
		for (uint32_t j = 0; j < st->nr_defines; j++)
			h = hyper_graph_step_add(h, 'D', s->tensors[st->defines[j]].id);
		ss += h;
	}
	hyper_graph_hash(have, ts, s->nr_tensors, ss, s->nr_steps);
	if (strcmp(have, s->graph_hash)) {
		hs_errf(e, "graph.hash: %s, but the tensors and steps hash to %s: the schedule was changed after planning",
			s->graph_hash, have);
		return -EBADMSG;
	}
	return 0;
}

static int parse_header(struct hyper_schedule *s, struct json_object *root,
			struct hs_err *e)
{
	struct json_object *v;
	char q[QBUF];
	int ret;

	ret = want(root, json_type_object, "an object", "schedule", e);
	if (ret)
		return ret;
	if (!(v = need(root, "format", "schedule", e)))
		return -EBADMSG;
	if (!json_object_is_type(v, json_type_string) ||
	    strcmp(json_object_get_string(v), "hyper-schedule")) {
		if (json_object_is_type(v, json_type_string))
			hs_errf(e, "format: expected \"hyper-schedule\", got \"%s\"",
				quote(q, json_object_get_string(v)));
		else
			hs_errf(e, "format: expected \"hyper-schedule\", got %s",
				hu_json_a_type(v));
		return -EBADMSG;
	}
	/* Before any other key: a newer version may have keys we do not know. */
	if (!(v = need(root, "version", "schedule", e)))
		return -EBADMSG;
	ret = want(v, json_type_int, "an integer", "version", e);
	if (ret)
		return ret;
	if (json_object_get_int64(v) != HYPER_SCHEDULE_VERSION) {
		char got[40];

		hs_errf(e, "unsupported schedule version %s (this libhyper reads %d)",
			hu_json_got(got, sizeof(got), v), HYPER_SCHEDULE_VERSION);
		return -EPROTONOSUPPORT;
	}
	s->version = HYPER_SCHEDULE_VERSION;
	return 0;
}

static int parse_root(struct hyper_schedule *s, struct json_object *root,
		      struct hs_err *e)
{
	static const char *const keys[] = {
		"format", "version", "name", "graph", "device_budget_bytes",
		"arena_bytes", "tensors", "steps", "predicted", NULL
	};
	struct json_object *tensors, *steps, *v;
	uint64_t total = 0;
	uint32_t i;
	int ret;

	ret = parse_header(s, root, e);
	if (!ret)
		ret = check_keys(root, keys, "schedule", &s->ext, e);
	if (ret)
		return ret;

	if (json_object_object_get_ex(root, "name", &v)) {
		ret = want(v, json_type_string, "a string", "name", e);
		if (ret)
			return ret;
		s->name = strdup(json_object_get_string(v));
	} else {
		s->name = strdup("");
	}
	if (!s->name)
		return -ENOMEM;
	if (json_object_object_get_ex(root, "device_budget_bytes", &v)) {
		ret = get_int_field(v, 1, INT64_MAX, &s->budget,
				    "device_budget_bytes", e);
		if (ret)
			return ret;
		s->flags |= HYPER_SCHED_BUDGET;
	}
	if (json_object_object_get_ex(root, "arena_bytes", &v)) {
		ret = get_int_field(v, 1, HS_BYTES_MAX, &s->arena_bytes, "arena_bytes", e);
		if (ret)
			return ret;
		s->flags |= HYPER_SCHED_ARENA;
	}
	if (json_object_object_get_ex(root, "predicted", &v)) {
		ret = parse_predicted(s, v, e);
		if (ret)
			return ret;
	}
	if (json_object_object_get_ex(root, "graph", &v)) {
		ret = parse_graph(s, v, e);
		if (ret)
			return ret;
	}

	if (!(tensors = need(root, "tensors", "schedule", e)) ||
	    !(steps = need(root, "steps", "schedule", e)))
		return -EBADMSG;
	ret = parse_array_len(tensors, "tensors", &s->nr_tensors, e);
	if (!ret)
		ret = parse_array_len(steps, "steps", &s->nr_steps, e);
	if (ret)
		return ret;

	s->tensors = calloc(s->nr_tensors ?: 1, sizeof(*s->tensors));
	s->steps = calloc(s->nr_steps ?: 1, sizeof(*s->steps));
	if (!s->tensors || !s->steps || hs_hash_alloc(s))
		return -ENOMEM;

	for (i = 0; i < s->nr_tensors; i++) {
		ret = parse_tensor(s, i, json_object_array_get_idx(tensors, i), e);
		if (ret)
			return ret;
		/* Residency sums can then never overflow. */
		if (__builtin_add_overflow(total, s->tensors[i].bytes, &total)) {
			hs_errf(e, "tensor %u: total of tensor sizes overflows 64 bits", i);
			return -EBADMSG;
		}
	}
	for (i = 0; i < s->nr_steps; i++) {
		ret = parse_step(s, i, json_object_array_get_idx(steps, i), e);
		if (ret)
			return ret;
	}
	return hs_check_graph_hash(s, e);
}

static int parse_json(const char *buf, size_t len, struct json_object **rootp,
		      struct hs_err *e)
{
	char msg[200];
	int ret = hu_json_parse(buf, len, 0, rootp, msg, sizeof(msg));

	if (ret)
		hs_errf(e, "%s", msg);
	return ret;
}

/* The tensors, the steps and the id hash: s->block's parts, or apart. */
static void arrays_free(struct hyper_schedule *s)
{
	struct hu_part parts[] = {
		HU_PART(s->tensors, 0, false),
		HU_PART(s->steps, 0, false),
		HU_PART(s->hash, 0, false),
	};

	hu_block_free(&s->block, parts, ARRAY_SIZE(parts));
}

void hs_destroy(struct hyper_schedule *s)
{
	uint32_t i;

	if (!s)
		return;
	free(s->res_off);
	if (s->tensors && !s->pool)
		for (i = 0; i < s->nr_tensors; i++) {
			free(s->tensors[i].id);
			free(s->tensors[i].plan_off);
		}
	if (s->steps && !s->pool)
		for (i = 0; i < s->nr_steps; i++) {
			struct hs_step *st = &s->steps[i];

			free(st->op);
			free(st->before);
			free(st->after);
			free(st->uses);
			free(st->defines);
		}
	for (i = 0; s->tensor_ext && i < s->nr_tensors; i++)
		ext_free(&s->tensor_ext[i]);
	for (i = 0; s->step_ext && i < s->nr_steps; i++)
		ext_free(&s->step_ext[i]);
	free(s->tensor_ext);
	free(s->step_ext);
	while (s->pool) {
		struct hs_chunk *c = s->pool;

		s->pool = c->next;
		free(c);
	}
	arrays_free(s);
	free(s->name);
	free(s->graph_name);
	free(s->graph_hash);
	ext_free(&s->ext);
	free(s);
}

int hyper_schedule_parse(const char *buf, size_t len,
			 struct hyper_schedule **schedp, char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	struct json_object *root = NULL;
	struct hyper_schedule *s;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!schedp || (!buf && len))
		return -EINVAL;
	*schedp = NULL;
	ret = parse_json(buf ? buf : "", len, &root, &e);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		json_object_put(root);
		return -ENOMEM;
	}
	s->refs = 1;
	ret = parse_root(s, root, &e);
	json_object_put(root);
	return hs_finish(s, ret, "loading", &e, schedp);
}

int hyper_schedule_load(const char *path, struct hyper_schedule **schedp,
			char *err, size_t errlen)
{
	struct hs_err e = { err, errlen };
	size_t got = 0;
	struct stat st;
	char *buf;
	int fd, ret;

	if (err && errlen)
		err[0] = '\0';
	if (!path || !schedp)
		return -EINVAL;
	*schedp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		hs_errf(&e, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		hs_errf(&e, "%s: %s", path, strerror(-ret));
		goto out_close;
	}
	if ((uint64_t)st.st_size > HS_FILE_MAX) {
		ret = -EFBIG;
		hs_errf(&e, "%s: larger than %llu bytes", path, HS_FILE_MAX);
		goto out_close;
	}
	buf = malloc(st.st_size ?: 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	if (got != (size_t)st.st_size) {
		ret = -EIO;
		hs_errf(&e, "%s: short read", path);
	} else {
		ret = hyper_schedule_parse(buf, got, schedp, err, errlen);
		/* Every message of a load names the file, once. */
		if (ret && err && errlen) {
			char *msg = strdup(err);

			if (msg)
				hs_errf(&e, "%s: %s", path, msg);
			free(msg);
		}
	}
	free(buf);
out_close:
	close(fd);
	return ret;
}

struct hyper_schedule *hyper_schedule_get(struct hyper_schedule *sched)
{
	if (sched)
		__atomic_add_fetch(&sched->refs, 1, __ATOMIC_RELAXED);
	return sched;
}

void hyper_schedule_free(struct hyper_schedule *sched)
{
	if (sched && __atomic_sub_fetch(&sched->refs, 1, __ATOMIC_ACQ_REL) == 0)
		hs_destroy(sched);
}

int hyper_schedule_info(const struct hyper_schedule *s,
			struct hyper_schedule_info *info)
{
	if (!s || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->name = s->name;
	info->version = s->version;
	info->flags = s->flags;
	info->nr_tensors = s->nr_tensors;
	info->nr_steps = s->nr_steps;
	info->budget_bytes = s->budget;
	info->peak_device_bytes = s->peak;
	info->total_compute_ns = s->total_compute_ns;
	info->pred_peak_device_bytes = s->pred_peak;
	info->pred_stall_ns = s->pred_stall;
	info->pred_makespan_ns = s->pred_makespan;
	info->arena_bytes = s->arena_bytes;
	info->graph_name = s->graph_name;
	info->graph_hash = s->graph_hash;
	return 0;
}

int hyper_schedule_tensor(const struct hyper_schedule *s, unsigned int idx,
			  struct hyper_tensor_info *info)
{
	const struct hs_tensor *t;

	if (!s || !info)
		return -EINVAL;
	if (idx >= s->nr_tensors)
		return -ERANGE;
	t = &s->tensors[idx];
	memset(info, 0, sizeof(*info));
	info->id = t->id;
	info->bytes = t->bytes;
	info->kind = t->kind;
	info->home = t->home;
	info->flags = t->flags;
	if (s->res_off && t->nr_res) {
		info->nr_arena_offsets = t->nr_res;
		info->arena_offsets = s->res_off + t->res_first;
	}
	return 0;
}

int hyper_schedule_step(const struct hyper_schedule *s, unsigned int idx,
			struct hyper_step_info *info)
{
	const struct hs_step *st;

	if (!s || !info)
		return -EINVAL;
	if (idx >= s->nr_steps)
		return -ERANGE;
	st = &s->steps[idx];
	memset(info, 0, sizeof(*info));
	info->op = st->op;
	info->compute_ns = st->compute_ns;
	info->before = st->before;
	info->after = st->after;
	info->uses = st->uses;
	info->defines = st->defines;
	info->nr_before = st->nr_before;
	info->nr_after = st->nr_after;
	info->nr_uses = st->nr_uses;
	info->nr_defines = st->nr_defines;
	info->flags = st->flags;
	info->gemm_m = st->gemm[0];
	info->gemm_n = st->gemm[1];
	info->gemm_k = st->gemm[2];
	return 0;
}

int hyper_schedule_find(const struct hyper_schedule *s, const char *id)
{
	if (!s || !id)
		return -EINVAL;
	return hs_find(s, id);
}

const char *hyper_schedule_ext(const struct hyper_schedule *s,
			       enum hyper_ext_scope scope, unsigned int idx,
			       const char *key)
{
	const struct hs_exts *x;

	if (!s || !key)
		return NULL;
	switch (scope) {
	case HYPER_EXT_SCHEDULE:
		x = &s->ext;
		break;
	case HYPER_EXT_TENSOR:
		if (idx >= s->nr_tensors || !s->tensor_ext)
			return NULL;
		x = &s->tensor_ext[idx];
		break;
	case HYPER_EXT_STEP:
		if (idx >= s->nr_steps || !s->step_ext)
			return NULL;
		x = &s->step_ext[idx];
		break;
	default:
		return NULL;
	}
	for (uint32_t i = 0; i < x->n; i++)
		if (!strcmp(x->v[i].key, key))
			return x->v[i].json;
	return NULL;
}
