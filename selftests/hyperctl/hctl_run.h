/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running hyperctl from a test and reading back what it said: exit status,
 * standard output (parsed as JSON when asked) and standard error.
 *
 * HYPERCTL is the binary: natively the sanitized build (an absolute path
 * the makefile passes), in the VM "hyperctl" from PATH.
 */
#ifndef HCTL_RUN_H
#define HCTL_RUN_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#ifndef HYPERCTL
#define HYPERCTL "hyperctl"
#endif

struct hctl {
	int status;		/* exit status; 128 + signal if killed */
	char *out;		/* standard output */
	char *err;		/* standard error */
	struct json_object *json;	/* out parsed, or NULL */
};

static inline char *hctl_slurp(FILE *f)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t n;

	if (!buf)
		return NULL;
	rewind(f);
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
	}
	buf[len] = 0;
	return buf;
}

/* Runs hyperctl with a NULL-terminated argument vector (argv[0] excluded). */
static inline int hctl_runv(struct hctl *r, char *const *args)
{
	FILE *out = tmpfile(), *err = tmpfile();
	char *argv[64];
	int n = 0, st;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!out || !err)
		return -errno;
	argv[n++] = (char *)HYPERCTL;
	while (args[n - 1] && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fileno(out), 1);
		dup2(fileno(err), 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = hctl_slurp(out);
	r->err = hctl_slurp(err);
	fclose(out);
	fclose(err);
	r->json = r->out ? json_tokener_parse(r->out) : NULL;
	return r->out && r->err ? 0 : -ENOMEM;
}

/* hctl_run(&r, "set", "hyper0", "workers=2", NULL) */
static inline int hctl_run(struct hctl *r, ...)
{
	char *args[64];
	int n = 0;
	va_list ap;

	va_start(ap, r);
	while (n < 63 && (args[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	args[n] = NULL;
	return hctl_runv(r, args);
}

static inline void hctl_free(struct hctl *r)
{
	free(r->out);
	free(r->err);
	if (r->json)
		json_object_put(r->json);
	memset(r, 0, sizeof(*r));
}

/* The object of a JSON array whose "dev" is name, or NULL. */
static inline struct json_object *hctl_dev(struct json_object *arr,
					   const char *name)
{
	size_t n;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return NULL;
	n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *d;

		if (json_object_object_get_ex(o, "dev", &d) &&
		    !strcmp(json_object_get_string(d), name))
			return o;
	}
	return NULL;
}

/* A member of an object; integer or string; missing: -1 or NULL. */
static inline long long hctl_int(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return -1;
	return (long long)json_object_get_int64(v);
}

static inline const char *hctl_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return json_object_get_string(v);
}

static inline bool hctl_has(struct json_object *o, const char *key)
{
	return o && json_object_object_get_ex(o, key, NULL);
}

#endif /* HCTL_RUN_H */
