// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/profile.h"

static const struct {
	const char *key;
	size_t off;
} profile_keys[] = {
	{ "device_bytes", offsetof(struct profile, device_bytes) },
	{ "mem_bytes_per_s", offsetof(struct profile, mem_bps) },
	{ "flops", offsetof(struct profile, flops) },
	{ "h2d_bytes_per_s", offsetof(struct profile, h2d_bps) },
	{ "d2h_bytes_per_s", offsetof(struct profile, d2h_bps) },
	{ "latency_ns", offsetof(struct profile, latency_ns) },
};

static double *field(struct profile *p, size_t i)
{
	return (double *)((char *)p + profile_keys[i].off);
}

const char *hyper_plan__profile_default_path(char *buf, size_t len)
{
	const char *env = getenv("HYPER_PLAN_PROFILE");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (xdg && *xdg)
		snprintf(buf, len, "%s/hyper-plan/%s.json", xdg, THIS_MACHINE);
	else
		snprintf(buf, len, "%s/.config/hyper-plan/%s.json",
			 home ? home : ".", THIS_MACHINE);
	return buf;
}

static int check_profile(const struct profile *p, const char *path,
			 struct hp_err *e)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(profile_keys); i++) {
		double v = *field((struct profile *)p, i);

		if (!(v >= 0 && v < 1e18) ||
		    (!v && strcmp(profile_keys[i].key, "latency_ns")))
			return hyper_plan__errf(e, "%s: profile \"%s\": %s must be a positive number",
				       path, p->name, profile_keys[i].key);
	}
	return 0;
}

static int profile_from_json(json_object *o, const char *path,
			     struct profile *p, struct hp_err *e)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	json_object_object_foreach(o, key, v) {
		for (i = 0; i < ARRAY_SIZE(profile_keys); i++)
			if (!strcmp(key, profile_keys[i].key))
				break;
		if (!strcmp(key, "name") || !strcmp(key, "desc")) {
			char *dst = key[0] == 'n' ? p->name : p->desc;
			size_t n = key[0] == 'n' ? sizeof(p->name) : sizeof(p->desc);

			if (!json_object_is_type(v, json_type_string))
				return hyper_plan__errf(e, "%s: \"%s\" must be a string", path, key);
			snprintf(dst, n, "%s", json_object_get_string(v));
		} else if (i < ARRAY_SIZE(profile_keys)) {
			if (!json_object_is_type(v, json_type_int) &&
			    !json_object_is_type(v, json_type_double))
				return hyper_plan__errf(e, "%s: \"%s\" must be a number", path, key);
			*field(p, i) = json_object_get_double(v);
		} else if (strncmp(key, "x-", 2)) {
			return hyper_plan__errf(e, "%s: unknown key \"%s\"", path, key);
		}
	}
	if (!p->name[0])
		return hyper_plan__errf(e, "%s: profile has no \"name\"", path);
	return check_profile(p, path, e);
}

int hyper_plan__profile_load(const char *path, struct profile *p, struct hp_err *e)
{
	json_object *o;
	int ret;

	if (hyper_plan__json_load(path, 1 << 20, &o, e))
		return -EINVAL;
	ret = json_object_is_type(o, json_type_object) ?
	      profile_from_json(o, path, p, e) :
	      hyper_plan__errf(e, "%s: a profile is a JSON object", path);
	json_object_put(o);
	return ret;
}

static int mkdir_parents(const char *path, struct hp_err *e)
{
	char dir[PATH_MAX], *s;

	if (strlen(path) >= sizeof(dir))
		return hyper_plan__errf(e, "%.64s...: path longer than PATH_MAX (%d)",
			       path, PATH_MAX);
	strcpy(dir, path);
	for (s = dir + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(dir, 0755);
		*s = '/';
	}
	return 0;
}

int hyper_plan__profile_save(const struct profile *p, const char *path, struct hp_err *e)
{
	FILE *f;
	size_t i;

	if (mkdir_parents(path, e))
		return -ENAMETOOLONG;
	f = fopen(path, "w");
	if (!f)
		return hyper_plan__errf(e, "%s: %s", path, strerror(errno));
	fprintf(f, "{\n  \"name\": ");
	hu_json_write_str(f, p->name);
	fprintf(f, ",\n  \"desc\": ");
	hu_json_write_str(f, p->desc);
	for (i = 0; i < ARRAY_SIZE(profile_keys); i++)
		fprintf(f, ",\n  \"%s\": %.6g", profile_keys[i].key,
			*field((struct profile *)p, i));
	/* A measured profile's link alone, beside the one the run sees. */
	if (p->h2d_alone_bps)
		fprintf(f, ",\n  \"x-h2d_alone_bytes_per_s\": %.6g,\n  \"x-d2h_alone_bytes_per_s\": %.6g,\n  \"x-latency_alone_ns\": %.6g",
			p->h2d_alone_bps, p->d2h_alone_bps, p->latency_alone_ns);
	fprintf(f, "\n}\n");
	if (fclose(f))
		return hyper_plan__errf(e, "%s: write error", path);
	return 0;
}

static int this_machine(struct profile *p, struct hp_err *e)
{
	char path[512];

	hyper_plan__profile_default_path(path, sizeof(path));
	if (!access(path, R_OK))
		return hyper_plan__profile_load(path, p, e);
	fprintf(stderr, "hyper-plan: no saved %s profile (%s); measuring now, save one with --measure-profile\n",
		THIS_MACHINE, path);
	return hyper_plan__profile_measure(NULL, p, NULL, e);
}

int hyper_plan__profile_get(const char *name, struct profile *p, struct hp_err *e)
{
	char known[256] = "";
	size_t len = 0;
	unsigned int i;

	if (!strcmp(name, THIS_MACHINE))
		return this_machine(p, e);
	for (i = 0; i < hyper_plan__profile_table_len; i++) {
		if (!strcmp(name, hyper_plan__profile_table[i].name)) {
			*p = hyper_plan__profile_table[i];
			return 0;
		}
		len += snprintf(known + len, sizeof(known) - len, "%s, ",
				hyper_plan__profile_table[i].name);
	}
	return hyper_plan__errf(e, "unknown profile \"%.64s\" (known: %s%s)", name,
		       known, THIS_MACHINE);
}
