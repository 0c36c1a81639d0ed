// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A small JSON file (a config.json, a profile) read whole, with errors in
 * words: json-c's own for a file that stops early is "continue".
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/util.h"
#include "util/json.h"

static int read_all(const char *path, size_t max, char **text, size_t *len,
		    struct hp_err *e)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);	/* a FIFO must not block */
	if (fd < 0)
		return hyper_plan__errf(e, "%s: %s", path, strerror(errno));
	/* a small file: not a directory, a pipe or /dev/zero */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		close(fd);
		return max >= (1 << 20) ?
		       hyper_plan__errf(e, "%s: not a regular file of at most %zu MiB",
			       path, max >> 20) :
		       hyper_plan__errf(e, "%s: not a regular file of at most %zu KiB",
			       path, max >> 10);
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		close(fd);
		return hyper_plan__nomem(e);
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, *text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = hyper_plan__errf(e, "%s: %s", path,
				      n ? strerror(errno) : "shrank while read");
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	(*text)[got] = 0;
	*len = got;
	if (ret) {
		free(*text);
		*text = NULL;
	}
	return ret;
}

/* The shared parser and its words (util/json.c), after @what; comments
 * allowed, as json-c allows them by default. */
int hyper_plan__json_parse(const char *what, const char *text, size_t len,
		  json_object **root, struct hp_err *e)
{
	char msg[300];
	int ret = hu_json_parse(text, len, 1, root, msg, sizeof(msg));

	if (ret == -ENOMEM)
		return hyper_plan__nomem(e);
	return ret ? hyper_plan__errf(e, "%s: %s", what, msg) : 0;
}

int hyper_plan__json_load(const char *path, size_t max, json_object **root,
		 struct hp_err *e)
{
	size_t len = 0;
	char *text;
	int ret;

	*root = NULL;
	if (read_all(path, max, &text, &len, e))
		return -EINVAL;
	ret = hyper_plan__json_parse(path, text, len, root, e);
	free(text);
	return ret;
}
