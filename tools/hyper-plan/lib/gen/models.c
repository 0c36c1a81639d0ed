// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The built-in models are the configs shipped with hyper-plan
 * (tools/hyper-plan/configs/, installed to share/hyper-plan/configs): one
 * description of each model, read by --config and by -m NAME alike.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gen/model.h"

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int model_dir(char *buf, size_t len, struct hp_err *e)
{
	const char *env = getenv("HYPER_PLAN_CONFIGS");
	char exe[PATH_MAX], rel[PATH_MAX + 32] = "", real[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		if (!is_dir(env))
			return hyper_plan__errf(e, "HYPER_PLAN_CONFIGS=%s: not a directory",
				       env);
		snprintf(buf, len, "%s", env);
		return 0;
	}
	/* Installed: PREFIX/bin/hyper-plan reads PREFIX/share/hyper-plan/configs. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(rel, sizeof(rel), "%s/../share/hyper-plan/configs",
				 exe);
			if (realpath(rel, real) && is_dir(real) &&
			    (size_t)snprintf(buf, len, "%s", real) < len)
				return 0;
		}
	}
	/*
	 * No path of the build tree is compiled in: make tells the programs
	 * it runs from there where the sources' configs are.
	 */
	return hyper_plan__errf(e, "no model configs: %s is not a folder; set HYPER_PLAN_CONFIGS to a folder of NAME.json configs, such as the sources' tools/hyper-plan/configs",
		       *rel ? rel : "share/hyper-plan/configs beside the program");
}

/* A model's name is its config's file name: no path in it. */
static bool good_name(const char *name)
{
	if (!*name || *name == '.' || strlen(name) > 64)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       strlen(name);
}

static int is_config(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && d->d_name[0] != '.' &&
	       !strcmp(d->d_name + n - 5, ".json");
}

int model_list(char ***names, struct hp_err *e)
{
	struct dirent **ents;
	char dir[PATH_MAX];
	int n, i;

	if (model_dir(dir, sizeof(dir), e))
		return -1;
	n = scandir(dir, &ents, is_config, alphasort);
	if (n < 0)
		return hyper_plan__errf(e, "%s: %s", dir, strerror(errno));
	*names = calloc((size_t)n + 1, sizeof(**names));
	for (i = 0; i < n; i++) {
		ents[i]->d_name[strlen(ents[i]->d_name) - 5] = 0;
		if (*names && !((*names)[i] = strdup(ents[i]->d_name))) {
			model_list_free(*names);
			*names = NULL;
		}
		free(ents[i]);
	}
	free(ents);
	return *names ? n : hyper_plan__nomem(e);
}

void model_list_free(char **names)
{
	for (char **p = names; p && *p; p++)
		free(*p);
	free(names);
}

int model_load(const char *name, struct model *m, char *names, size_t len,
	       struct hp_err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + 80], known[512] = "";
	char **list;
	size_t k = 0;
	int n, i;

	if (model_dir(dir, sizeof(dir), e))
		return -1;
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	if (good_name(name) && !access(path, F_OK))
		return model_from_config(path, m, names, len, e);
	n = model_list(&list, e);
	if (n < 0)
		return -1;
	for (i = 0; i < n && k < sizeof(known); i++)
		k += snprintf(known + k, sizeof(known) - k, "%s, ", list[i]);
	model_list_free(list);
	return hyper_plan__errf(e, "unknown model \"%.64s\" (known: %srandom; configs in %s)",
		       name, known, dir);
}
