// SPDX-License-Identifier: GPL-2.0
/*
 * demo-report: the demo's comparison table, from hyper-run's reports of
 * the baseline run (every tensor resident) and of the planned run, and
 * the verdict.
 *
 * What is judged always is what a correct system controls, on any
 * machine, busy or not: both runs checked every tensor at every use, the
 * schedule is one libhyper validated (within its budget when it carries
 * one), the planned peak is at most --max-peak percent of the baseline's,
 * and the planned run measured no more than its plan.  The timing (wall
 * time against the baseline, the stall against the prediction) depends on
 * the machine's load: it is printed next to its target, marked met or
 * missed, as a comment that decides nothing, and judged only with
 * --timing-targets, which the benchmarks (make bench-native, make
 * bench-demo) pass.
 *
 * The stall target compares stalls with the run's wall time, never a
 * ratio with zero: predicted and measured stall within 2 percentage
 * points of the wall time, or within 2x of each other when both exceed 1%
 * of it.
 *
 * usage: demo-report [--timing-targets] [--max-wall PCT] [--max-peak PCT]
 *                    [--json FILE] BASELINE.json PLANNED.json
 * exit status: 0 everything judged was met, 1 something judged was not
 * (or a run failed), 2 bad usage or unreadable reports
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
	double p_peak, p_stall, p_span, valid_peak, budget, layout;
	double compute, gflop;
	double uses_checked, uses_scheduled, stride;
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
	r->uses_checked = num(r->root, "checks.uses_checked");
	r->uses_scheduled = num(r->root, "checks.uses_scheduled");
	r->stride = num(r->root, "checks.stride_words");
	r->valid_peak = num(r->root, "validated_peak_bytes");
	r->budget = num(r->root, "budget_bytes");
	r->layout = num(r->root, "layout_arena_bytes");
	if (!r->ok) {
		fprintf(stderr, "demo-report: %s: the run failed: %s\n", path,
			json_object_object_get_ex(r->root, "error", &v) ?
			json_object_get_string(v) : "?");
		return 1;
	}
	if (r->wall <= 0 || r->arena <= 0) {
		fprintf(stderr, "demo-report: %s: no wall_ns or device_bytes; give the report of a finished run (hyper-run -o FILE)\n",
			path);
		return -1;
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

/*
 * A judged item as a TAP line, so that `make check` counts each as a test
 * case; what is only reported is a TAP comment, which counts as nothing.
 */
static bool judged(const char *what, bool met, const char *how)
{
	static int n;

	printf("%s %d - %s: %s\n", met ? "ok" : "not ok", ++n, what, how);
	return met;
}

/*
 * The stall target, on the run's wall time: predicted and measured stall
 * within 2 percentage points of it, or within 2x of each other when both
 * exceed 1% of it.  A ratio is taken only between two stalls both above
 * 1% of the run, so never against zero.  Says why in @how.
 */
static bool stall_met(double pred, double meas, double wall, char *how,
		      size_t len)
{
	double pp = 100 * pred / wall, mp = 100 * meas / wall;
	double lo = pred < meas ? pred : meas, hi = pred < meas ? meas : pred;
	char a[32], b[32];
	int n;

	n = snprintf(how, len, "%s predicted (%.2f%% of the wall time), %s measured (%.2f%%)",
		     ms(a, pred), pp, ms(b, meas), mp);
	if (n < 0 || (size_t)n >= len)
		return false;
	how += n;
	len -= n;
	if (pp - mp <= 2 && mp - pp <= 2) {
		snprintf(how, len, ": within 2 points of the wall time (target: 2 points, or 2x when both exceed 1%%)");
		return true;
	}
	if (pp > 1 && mp > 1 && hi <= 2 * lo) {
		snprintf(how, len, ": within 2x, both over 1%% of the wall time (target: 2 points, or 2x when both exceed 1%%)");
		return true;
	}
	snprintf(how, len, ": %.1f points apart%s (target: 2 points, or 2x when both exceed 1%%); the profile's link or compute rate is off for this run",
		 pp > mp ? pp - mp : mp - pp,
		 pp > 1 && mp > 1 ? " and over 2x" : "");
	return false;
}

/*
 * A timing item: judged (a TAP line) with --timing-targets, else a
 * comment that shows the target met or missed and decides nothing.
 */
static bool timing_item(bool judge, const char *what, bool met,
			const char *how)
{
	if (judge)
		return judged(what, met, how);
	printf("# timing (judged by the benchmarks, not here): %s: %s: target %s\n",
	       what, how, met ? "met" : "missed");
	return true;
}

/* A percentage option: a number from 0 to 1000, or -1. */
static double pct_arg(const char *name, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v < 0 || v > 1000) {
		fprintf(stderr, "demo-report: --%s %s: give a percentage from 0 to 1000, e.g. --%s 5\n",
			name, arg, name);
		return -1;
	}
	return v;
}

static bool every_use(const char *name, const struct run *r)
{
	char how[160];

	snprintf(how, sizeof(how), "%.0f of %.0f uses, %s", r->uses_checked,
		 r->uses_scheduled, r->stride == 1 ? "every word" :
		 "sampled words only");
	return judged(name, r->uses_scheduled > 0 && r->stride == 1 &&
		      r->uses_checked == r->uses_scheduled, how);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "timing-targets", no_argument, NULL, 't' },
		{ "max-wall", required_argument, NULL, 'w' },
		{ "max-peak", required_argument, NULL, 'p' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	double max_wall = 5, max_peak = 70, peak_pct, wall_pct;
	char a[32], b[32], c[32], d[32], w[64], how[320];
	const char *json = NULL;
	struct run base = { 0 }, plan = { 0 };
	bool timing = false, ok = true, stall_ok, wall_ok, peak_ok;
	int o, ret;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 't': timing = true; break;
		case 'w':
			max_wall = pct_arg("max-wall", optarg);
			if (max_wall < 0)
				return 2;
			break;
		case 'p':
			max_peak = pct_arg("max-peak", optarg);
			if (max_peak < 0)
				return 2;
			break;
		case 'j': json = optarg; break;
		default:
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: demo-report [--timing-targets] [--max-wall PCT] [--max-peak PCT] [--json FILE] BASELINE.json PLANNED.json\n");
		return 2;
	}
	ret = load(argv[optind], &base);
	if (!ret)
		ret = load(argv[optind + 1], &plan);
	if (ret) {
		json_object_put(base.root);
		json_object_put(plan.root);
		return ret < 0 ? 2 : 1;
	}

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
	       "use.)\n\n", ms(a, plan.compute));

	printf("judged (decides the exit status):\n");
	ok &= every_use("baseline run: every tensor checked at every use", &base);
	ok &= every_use("planned run: every tensor checked at every use", &plan);
	if (plan.budget > 0)
		snprintf(how, sizeof(how), "libhyper replayed it, peak %s within its budget of %s",
			 mib(a, plan.valid_peak), mib(b, plan.budget));
	else
		snprintf(how, sizeof(how), "libhyper replayed it, peak %s (the schedule names no budget)",
			 mib(a, plan.valid_peak));
	ok &= judged("planned schedule is valid", plan.valid_peak > 0 &&
		     (plan.budget <= 0 || plan.valid_peak <= plan.budget), how);
	snprintf(how, sizeof(how), "%.0f%% of the baseline's (limit %.0f%%)",
		 peak_pct, max_peak);
	ok &= judged("planned peak device-buffer bytes vs baseline",
		     peak_pct <= max_peak, how);
	/* What the executor held never exceeds what the schedule replays to. */
	peak_ok = plan.resident <= plan.valid_peak &&
		  (plan.layout <= 0 || plan.held <= plan.layout);
	snprintf(how, sizeof(how), "resident %s of %s planned, arena %s used of %s laid out",
		 mib(a, plan.resident), mib(b, plan.valid_peak), mib(c, plan.held),
		 mib(d, plan.layout > 0 ? plan.layout : plan.arena));
	ok &= judged("planned run's measured peak within its plan", peak_ok, how);

	if (!timing)
		printf("timing, next to its targets (not judged here: a busy machine moves it; make bench-native and make bench-demo judge it):\n");
	wall_ok = wall_pct <= max_wall;
	snprintf(w, sizeof(w), "%+.2f%% (target: within %.0f%%)", wall_pct, max_wall);
	ok &= timing_item(timing, "wall time vs baseline", wall_ok, w);
	stall_ok = stall_met(plan.p_stall, plan.stall, plan.wall, how, sizeof(how));
	ok &= timing_item(timing, "predicted stall vs measured", stall_ok, how);

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
		json_object_object_add(s, "timing_judged", json_object_new_boolean(timing));
		json_object_object_add(s, "wall_target_met", json_object_new_boolean(wall_ok));
		json_object_object_add(s, "stall_target_met", json_object_new_boolean(stall_ok));
		json_object_object_add(s, "judged_met", json_object_new_boolean(ok));
		if (json_object_to_file_ext(json, s, JSON_C_TO_STRING_PRETTY))
			fprintf(stderr, "demo-report: %s: cannot write\n", json);
		json_object_put(s);
	}
	json_object_put(base.root);
	json_object_put(plan.root);
	return ok ? 0 : 1;
}
