// SPDX-License-Identifier: GPL-2.0
/*
 * Pictures of real runs: hyper-run --timeline files ("hyper-timeline"
 * JSON) drawn with the same SVG plot and Chrome trace writer as the
 * simulations, so a plan and its run can be looked at side by side.  Each
 * run is one line of the plot (device memory its arena really held) and
 * one process of the trace.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include <json-c/json.h>

#include "picture/picture.h"
#include "stalls.h"

#define RENDER_MAX	6

static int64_t get_i64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
	       json_object_get_string(v) : "";
}

static json_object *get_arr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

static json_object *load(const char *path, struct hp_err *e)
{
	json_object *root = json_object_from_file(path), *v;

	if (!root) {
		hyper_plan__errf(e, "%s: not readable JSON (%s)", path,
			json_util_get_last_err());
		return NULL;
	}
	if (!json_object_object_get_ex(root, "format", &v) ||
	    strcmp(json_object_get_string(v), "hyper-timeline") ||
	    get_i64(root, "version") != 1 || !get_arr(root, "memory") ||
	    !get_arr(root, "ops") || !get_arr(root, "transfers") ||
	    !get_arr(root, "stalls")) {
		hyper_plan__errf(e, "%s: not a hyper-timeline version 1 file (hyper-run --timeline writes them)",
			path);
		json_object_put(root);
		return NULL;
	}
	return root;
}

/* Arena bytes held over time: what the device buffers really hold. */
static int to_series(json_object *root, struct series *sr)
{
	json_object *mem = get_arr(root, "memory");
	size_t n = json_object_array_length(mem);

	*sr = (struct series){ .name = get_str(root, "name") };
	sr->t = calloc(n + 1, sizeof(*sr->t));
	sr->bytes = calloc(n + 1, sizeof(*sr->bytes));
	if (!sr->t || !sr->bytes)
		return -ENOMEM;
	sr->cap = n + 1;
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(mem, i);

		if (!json_object_is_type(row, json_type_array) ||
		    json_object_array_length(row) < 3)
			continue;
		sr->t[sr->n] = json_object_get_int64(json_object_array_get_idx(row, 0));
		sr->bytes[sr->n++] = json_object_get_int64(json_object_array_get_idx(row, 2));
	}
	return 0;
}

/* Transfers waiting for a copy worker: issued, not yet being copied. */
#define TID_QUEUE	5

static void spans(FILE *f, int pid, json_object *arr, int tid,
		  const char *key, bool transfers)
{
	size_t n = json_object_array_length(arr);

	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		bool store = transfers && !strcmp(get_str(o, "dir"), "store");
		int64_t start = get_i64(o, "start_ns");
		json_object *v;

		/* Issue to copy start on its own track, then the copy. */
		if (transfers && json_object_object_get_ex(o, "copy_ns", &v)) {
			trace_span(f, pid, TID_QUEUE,
				   store ? "queued store " : "queued prefetch ",
				   get_str(o, key), start, json_object_get_int64(v), 0);
			start = json_object_get_int64(v);
		}
		trace_span(f, pid, transfers ? (store ? 3 : 2) : tid,
			   transfers ? (store ? "store " : "prefetch ") :
			   (tid == 4 ? "wait for " : ""),
			   get_str(o, key), start,
			   get_i64(o, "end_ns"), transfers ? get_i64(o, "bytes") : 0);
	}
}

static void trace_run(FILE *f, int pid, json_object *root,
		      const struct series *sr)
{
	trace_process(f, pid, get_str(root, "name"));
	fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"copy queue\"}}",
		pid, TID_QUEUE);
	spans(f, pid, get_arr(root, "ops"), 1, "op", false);
	spans(f, pid, get_arr(root, "transfers"), 2, "tensor", true);
	spans(f, pid, get_arr(root, "stalls"), 4, "tensor", false);
	for (size_t i = 0; i < sr->n; i++)
		trace_memory(f, pid, sr->t[i], sr->bytes[i]);
}

/**
 * render_runs() - draw real runs
 * @timelines:	paths of hyper-run --timeline files, at most RENDER_MAX
 * @n:		how many
 * @plot:	SVG of device memory over time, one line per run, or NULL
 * @trace:	Chrome trace, one process per run, or NULL
 * @stalls:	print where each run's stall time went
 * @e:		error
 *
 * Return: 0, or -1 with @e set.
 */
static int render_runs(const char *const *timelines, unsigned int n,
		const char *plot, const char *trace, bool stalls,
		struct hp_err *e)
{
	json_object *root[RENDER_MAX] = { NULL };
	struct series sr[RENDER_MAX] = { 0 };
	unsigned int i;
	int ret = -1;
	FILE *f;

	if (!n || n > RENDER_MAX)
		return hyper_plan__errf(e, "give 1 to %d timelines", RENDER_MAX);
	for (i = 0; i < n; i++) {
		root[i] = load(timelines[i], e);
		if (!root[i])
			goto out;
		if (to_series(root[i], &sr[i])) {
			hyper_plan__errf(e, "out of memory");
			goto out;
		}
	}
	for (i = 0; stalls && i < n; i++)
		if (stall_report(stdout, root[i])) {
			hyper_plan__errf(e, "out of memory");
			goto out;
		}
	if (plot) {
		f = fopen(plot, "w");
		if (!f) {
			hyper_plan__errf(e, "%s: %s", plot, strerror(errno));
			goto out;
		}
		plot_svg(f, "device memory held over time, measured", sr, n, 0);
		if (fclose(f)) {
			hyper_plan__errf(e, "%s: write error", plot);
			goto out;
		}
	}
	if (trace) {
		f = fopen(trace, "w");
		if (!f) {
			hyper_plan__errf(e, "%s: %s", trace, strerror(errno));
			goto out;
		}
		trace_begin(f);
		for (i = 0; i < n; i++)
			trace_run(f, i + 1, root[i], &sr[i]);
		trace_end(f);
		if (fclose(f)) {
			hyper_plan__errf(e, "%s: write error", trace);
			goto out;
		}
	}
	ret = 0;
out:
	for (i = 0; i < n; i++) {
		series_free(&sr[i]);
		if (root[i])
			json_object_put(root[i]);
	}
	return ret;
}

static void usage(FILE *f)
{
	fputs("usage: hyper-timeline [--plot FILE.svg] [--trace FILE.json] [--stalls] RUN.json...\n"
	      "Draws hyper-run --timeline files (at most 6).  See hyper-timeline(1).\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "plot", required_argument, NULL, 'P' },
		{ "trace", required_argument, NULL, 'T' },
		{ "stalls", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *plot = NULL, *trace = NULL;
	bool stalls = false;
	struct hp_err e = { "" };
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'P': plot = optarg; break;
		case 'T': trace = optarg; break;
		case 'S': stalls = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind == argc || (!plot && !trace && !stalls)) {
		fprintf(stderr, "hyper-timeline: give --plot, --trace and/or --stalls, and 1 to %d runs\n",
			RENDER_MAX);
		return 2;
	}
	if (render_runs((const char *const *)argv + optind,
			(unsigned int)(argc - optind), plot, trace, stalls, &e)) {
		fprintf(stderr, "hyper-timeline: %s\n", e.msg);
		return 1;
	}
	return 0;
}
