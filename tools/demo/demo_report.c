// SPDX-License-Identifier: GPL-2.0
/*
 * demo-report: the demo's comparison table, from hyper-run's reports of
 * the baseline run (every tensor resident) and of the planned run, and
 * the check of the demo's targets.
 *
 * usage: demo-report [--check] [--max-wall PCT] [--max-peak PCT]
 *                    [--json FILE] BASELINE.json PLANNED.json
 * exit status: 0, 1 a target missed (with --check) or a run failed,
 * 2 bad usage or unreadable reports
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

struct run {
	json_object *root;
	const char *backend;
	bool ok;
	double wall, stall, pre, sto, arena, held, resident;
	double p_peak, p_stall, p_span;
	double compute, gflop;
};

static double num(json_object *o, const char *path)
{
	char key[64], *dot;
	json_object *v = o;
	const char *p = path;

	while (v && *p) {
		snprintf(key, sizeof(key), "%s", p);
		dot = strchr(key, '.');
		if (dot)
			*dot = 0;
		if (!json_object_object_get_ex(v, key, &v))
			return 0;
		p += strlen(key) + (dot ? 1 : 0);
	}
	return v ? json_object_get_double(v) : 0;
}

static int load(const char *path, struct run *r)
{
	json_object *v;

	memset(r, 0, sizeof(*r));
	r->root = json_object_from_file(path);
	if (!r->root) {
		fprintf(stderr, "demo-report: %s: %s\n", path,
			json_util_get_last_err());
		return -1;
	}
	r->ok = json_object_object_get_ex(r->root, "ok", &v) &&
		json_object_get_boolean(v);
	r->backend = json_object_object_get_ex(r->root, "backend", &v) ?
		     json_object_get_string(v) : "?";
	r->wall = num(r->root, "wall_ns");
	r->stall = num(r->root, "stall_ns");
	r->pre = num(r->root, "bytes_prefetched");
	r->sto = num(r->root, "bytes_stored");
	r->arena = num(r->root, "device_bytes");
	r->held = num(r->root, "peak_arena_bytes");
	r->resident = num(r->root, "peak_resident_bytes");
	r->p_peak = num(r->root, "predicted.peak_device_bytes");
	r->p_stall = num(r->root, "predicted.stall_ns");
	r->p_span = num(r->root, "predicted.makespan_ns");
	r->compute = num(r->root, "compute_ns");
	r->gflop = num(r->root, "gemm.gflop");
	if (!r->ok) {
		fprintf(stderr, "demo-report: %s: the run failed: %s\n", path,
			json_object_object_get_ex(r->root, "error", &v) ?
			json_object_get_string(v) : "?");
		return 1;
	}
	return 0;
}

static const char *mib(char *buf, double bytes)
{
	snprintf(buf, 32, "%.1f MiB", bytes / 1048576);
	return buf;
}

static const char *ms(char *buf, double ns)
{
	if (ns >= 1e9)
		snprintf(buf, 32, "%.2f s", ns / 1e9);
	else
		snprintf(buf, 32, "%.1f ms", ns / 1e6);
	return buf;
}

/* TAP lines, so that `make check` counts the demo's targets as tests. */
static bool target(const char *what, bool met, const char *how)
{
	static int n;

	printf("%s %d - %s: %s\n", met ? "ok" : "not ok", ++n, what, how);
	return met;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "max-wall", required_argument, NULL, 'w' },
		{ "max-peak", required_argument, NULL, 'p' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	double max_wall = 5, max_peak = 70, peak_pct, wall_pct, lo_s, hi_s;
	char a[32], b[32], c[32], d[32], how[160];
	const char *json = NULL;
	struct run base, plan;
	bool check = false, ok = true;
	int o, ret;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c': check = true; break;
		case 'w': max_wall = atof(optarg); break;
		case 'p': max_peak = atof(optarg); break;
		case 'j': json = optarg; break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: demo-report [--check] [--max-wall PCT] [--max-peak PCT] [--json FILE] BASELINE.json PLANNED.json\n");
		return 2;
	}
	ret = load(argv[optind], &base);
	if (!ret)
		ret = load(argv[optind + 1], &plan);
	if (ret)
		return ret < 0 ? 2 : 1;

	/* Device-buffer bytes: the arena each run registered and needed. */
	peak_pct = 100 * plan.arena / base.arena;
	wall_pct = 100 * (plan.wall / base.wall - 1);
	printf("|                             | baseline       | planned                    |\n");
	printf("|-----------------------------|----------------|----------------------------|\n");
	printf("| peak device-buffer bytes    | %-14s | %-10s (%.0f%% of baseline) |\n",
	       mib(a, base.arena), mib(b, plan.arena), peak_pct);
	printf("| wall time                   | %-14s | %-10s (%+.1f%%)           |\n",
	       ms(a, base.wall), ms(b, plan.wall), wall_pct);
	printf("| stall time                  | %-14s | %-26s |\n",
	       ms(a, base.stall), ms(b, plan.stall));
	snprintf(c, sizeof(c), "%.0f / %.0f MiB", base.pre / 1048576, base.sto / 1048576);
	snprintf(d, sizeof(d), "%.0f / %.0f MiB", plan.pre / 1048576, plan.sto / 1048576);
	printf("| bytes prefetched / stored   | %-14s | %-26s |\n", c, d);
	printf("\nThe planner's prediction for the planned run, next to what was measured:\n\n");
	printf("|                             | predicted      | measured                   |\n");
	printf("|-----------------------------|----------------|----------------------------|\n");
	printf("| peak residency              | %-14s | %-26s |\n",
	       mib(a, plan.p_peak), mib(b, plan.resident));
	printf("| stall                       | %-14s | %-26s |\n",
	       ms(a, plan.p_stall), ms(b, plan.stall));
	printf("| makespan                    | %-14s | %-26s |\n",
	       ms(a, plan.p_span), ms(b, plan.wall));
	printf("\n(medians of 3 runs each, interleaved.  Device-buffer bytes are the\n"
	       "registered arena each run needed: libhyper's layout of the schedule.\n"
	       "The makespan prediction counts the modelled compute, %s; the\n"
	       "measured wall time also the runner's checks of every tensor at every\n"
	       "use.)\n\ntargets:\n", ms(a, plan.compute));
	snprintf(how, sizeof(how), "%.0f%% <= %.0f%%", peak_pct, max_peak);
	ok &= target("planned peak device-buffer bytes vs baseline", peak_pct <= max_peak, how);
	snprintf(how, sizeof(how), "%+.2f%% within %.0f%%", wall_pct, max_wall);
	ok &= target("wall time vs baseline", wall_pct <= max_wall, how);
	lo_s = plan.p_stall < plan.stall ? plan.p_stall : plan.stall;
	hi_s = plan.p_stall < plan.stall ? plan.stall : plan.p_stall;
	if (hi_s <= 2 * lo_s)
		snprintf(how, sizeof(how), "%s predicted, %s measured: within 2x",
			 ms(a, plan.p_stall), ms(b, plan.stall));
	else if (hi_s <= 0.01 * plan.wall)
		snprintf(how, sizeof(how), "%s predicted, %s measured: both under 1%% of the run, noise rather than model",
			 ms(a, plan.p_stall), ms(b, plan.stall));
	else
		snprintf(how, sizeof(how), "%s predicted, %s measured: the profile's link or compute rate is off for this run",
			 ms(a, plan.p_stall), ms(b, plan.stall));
	ok &= target("predicted stall vs measured", hi_s <= 2 * lo_s ||
		     hi_s <= 0.01 * plan.wall, how);

	if (json) {
		json_object *s = json_object_new_object();

		json_object_object_add(s, "backend", json_object_new_string(plan.backend));
		json_object_object_add(s, "baseline_device_bytes", json_object_new_double(base.arena));
		json_object_object_add(s, "planned_device_bytes", json_object_new_double(plan.arena));
		json_object_object_add(s, "peak_pct_of_baseline", json_object_new_double(peak_pct));
		json_object_object_add(s, "baseline_wall_ns", json_object_new_double(base.wall));
		json_object_object_add(s, "planned_wall_ns", json_object_new_double(plan.wall));
		json_object_object_add(s, "wall_change_pct", json_object_new_double(wall_pct));
		json_object_object_add(s, "planned_stall_ns", json_object_new_double(plan.stall));
		json_object_object_add(s, "predicted_stall_ns", json_object_new_double(plan.p_stall));
		json_object_object_add(s, "bytes_prefetched", json_object_new_double(plan.pre));
		json_object_object_add(s, "bytes_stored", json_object_new_double(plan.sto));
		json_object_object_add(s, "targets_met", json_object_new_boolean(ok));
		if (json_object_to_file_ext(json, s, JSON_C_TO_STRING_PRETTY))
			fprintf(stderr, "demo-report: %s: cannot write\n", json);
		json_object_put(s);
	}
	json_object_put(base.root);
	json_object_put(plan.root);
	return check && !ok ? 1 : 0;
}
