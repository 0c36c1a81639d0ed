// SPDX-License-Identifier: GPL-2.0
/*
 * Attribute access.  The sysfs mount is $HYPERCTL_SYSFS when set (the
 * tests point it at a fake tree), /sys otherwise; a device's attributes
 * are under class/hyper/hyperN/ there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hyperctl.h"

const char *hc_sysfs_root(void)
{
	const char *root = getenv("HYPERCTL_SYSFS");

	return root && *root ? root : "/sys";
}

/* Formats a path below the sysfs root; -ENAMETOOLONG if it does not fit. */
int hc_path(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = (size_t)snprintf(buf, len, "%s/", hc_sysfs_root());
	va_list ap;
	int m;

	if (n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return m < 0 || (size_t)m >= len - n ? -ENAMETOOLONG : 0;
}

static int attr_path(char *buf, size_t len, int id, const char *attr)
{
	return hc_path(buf, len, "class/hyper/hyper%d/%s", id, attr);
}

/* Reads a whole small file as text, one trailing newline dropped. */
int hc_read_file(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < len - 1) {
		r = read(fd, buf + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			close(fd);
			return (int)r;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

int hc_read_attr(int id, const char *attr, char *buf, size_t len)
{
	char path[512];
	int ret = attr_path(path, sizeof(path), id, attr);

	return ret ? ret : hc_read_file(path, buf, len);
}

/* A decimal (or 0x hexadecimal) attribute; -EINVAL if it is not one. */
int hc_read_attr_s64(int id, const char *attr, int64_t *val)
{
	char buf[64], *end;
	long long v;
	int ret;

	ret = hc_read_attr(id, attr, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
		v = (long long)strtoull(buf, &end, 16);
	else
		v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

/*
 * Writes a value as the shell's "echo -n VAL > FILE" would (O_TRUNC is
 * what `>` does, and sysfs accepts it); returns what the kernel's store
 * returned.
 */
int hc_write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, ret;

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, val, len);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

int hc_write_attr(int id, const char *attr, const char *val)
{
	char path[512];
	int ret = attr_path(path, sizeof(path), id, attr);

	return ret ? ret : hc_write_file(path, val);
}

bool hc_attr_exists(int id, const char *attr)
{
	char path[512];

	return !attr_path(path, sizeof(path), id, attr) &&
	       access(path, F_OK) == 0;
}
