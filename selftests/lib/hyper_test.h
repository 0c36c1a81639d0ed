/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the selftests that drive /dev/hyperN in the VM.
 * Everything returns -errno on failure so that ASSERT_EQ() shows the error.
 */
#ifndef HYPER_TEST_H
#define HYPER_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/hyper.h>

#define HYPER_SYSFS	"/sys/class/hyper"
#define MiB		(1024ULL * 1024)

/* The init script exports HYPER_KO; HYPER_MODPARAMS is the suite's. */
static inline const char *hyper_ko(void)
{
	const char *ko = getenv("HYPER_KO");

	return ko ? ko : "/lib/modules/hyper.ko";
}

static inline const char *hyper_modparams(void)
{
	const char *p = getenv("HYPER_MODPARAMS");

	return p ? p : "";
}

static inline int hyper_module_load(const char *params)
{
	int fd = open(hyper_ko(), O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int hyper_module_unload(void)
{
	return syscall(SYS_delete_module, "hyper", O_NONBLOCK) ? -errno : 0;
}

static inline int hyper_module_loaded(void)
{
	return access("/sys/module/hyper", F_OK) == 0;
}

/* Load with the suite's parameters unless the module is already there. */
static inline int hyper_module_ensure(void)
{
	return hyper_module_loaded() ? 0 : hyper_module_load(hyper_modparams());
}

static inline int hyper_dev_open(int idx)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/hyper%d", idx);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static inline int hyper_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int hyper_alloc(int fd, uint64_t size, uint32_t flags,
			      uint32_t *handle, uint64_t *mmap_offset)
{
	struct hyper_alloc a = { .size = size, .flags = flags };
	int ret = hyper_ioctl(fd, HYPER_IOC_ALLOC, &a);

	if (!ret) {
		if (handle)
			*handle = a.handle;
		if (mmap_offset)
			*mmap_offset = a.mmap_offset;
	}
	return ret;
}

static inline int hyper_free(int fd, uint32_t handle)
{
	struct hyper_free f = { .handle = handle };

	return hyper_ioctl(fd, HYPER_IOC_FREE, &f);
}

static inline int hyper_info(int fd, struct hyper_pool_info *info)
{
	memset(info, 0, sizeof(*info));
	return hyper_ioctl(fd, HYPER_IOC_INFO, info);
}

/* Reads a small file as text into buf, the trailing newline dropped. */
static inline int hyper_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

/* Writes a value; returns -errno as the kernel's store() returned it. */
static inline int hyper_write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/* Reads /sys/class/hyper/hyperN/ATTR as text into buf, newline dropped. */
static inline int hyper_sysfs_read(int idx, const char *attr, char *buf,
				   size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), HYPER_SYSFS "/hyper%d/%s", idx, attr);
	return hyper_read_file(path, buf, len);
}

static inline long long hyper_sysfs_ll(int idx, const char *attr)
{
	char buf[64];
	int ret = hyper_sysfs_read(idx, attr, buf, sizeof(buf));

	return ret ? ret : strtoll(buf, NULL, 0);
}

static inline int hyper_sysfs_write(int idx, const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), HYPER_SYSFS "/hyper%d/%s", idx, attr);
	return hyper_write_file(path, val);
}

/* A byte pattern that differs per region, per offset and per round. */
static inline uint8_t hyper_pattern(uint64_t seed, uint64_t off)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + off;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (uint8_t)x;
}

/* Fills @len bytes with the pattern of @seed. */
static inline void hyper_fill(uint8_t *p, uint64_t len, uint64_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = hyper_pattern(seed, i);
}

/* Index of the first byte that differs from the pattern, or @len. */
static inline uint64_t hyper_check(const uint8_t *p, uint64_t len,
				   uint64_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != hyper_pattern(seed, i))
			return i;
	return len;
}

/* Index of the first byte that is not zero, or @len. */
static inline uint64_t hyper_first_nonzero(const uint8_t *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i])
			return i;
	return len;
}

/* Entries of /sys/class/hyper, that is devices; 0 if it is not there. */
static inline int hyper_class_entries(void)
{
	DIR *d = opendir(HYPER_SYSFS);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Counts lines of dmesg matching a fixed string, -errno on failure. */
static inline int hyper_dmesg_count(const char *needle)
{
	char line[512];
	int n = 0;
	FILE *f = popen("dmesg", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	pclose(f);
	return n;
}

/*
 * Finds a region in /sys/kernel/debug/hyper/hyperN/regions by owner and
 * handle and returns its pool offset and size; -ENOENT if it is not there.
 */
static inline int hyper_debugfs_region(int idx, int owner, uint32_t handle,
				       uint64_t *pool_off, uint64_t *size)
{
	char path[96], line[256];
	unsigned long long off, sz;
	unsigned int h, flags;
	int ret = -ENOENT, o;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/hyper/hyper%d/regions",
		 idx);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %u %llx %llu %x", &o, &h, &off, &sz,
			   &flags) == 5 && o == owner && h == handle) {
			*pool_off = off;
			*size = sz;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/* MemFree of a node in bytes, from its meminfo; -errno on failure. */
static inline long long hyper_node_free(int node)
{
	char path[96], line[256];
	long long kb = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		 node);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "MemFree:");

		if (p)
			kb = strtoll(p + 8, NULL, 10);
	}
	fclose(f);
	return kb < 0 ? kb : kb * 1024;
}

/* Lines of /proc/iomem that have name in them; -errno on failure. */
static inline int hyper_iomem_count(const char *name)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/iomem", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, name);
	fclose(f);
	return n;
}

/* Bytes in one memory block (the unit of hotplug), or -errno. */
static inline long long hyper_mem_block_size(void)
{
	char buf[32];
	int ret = hyper_read_file("/sys/devices/system/memory/block_size_bytes",
				  buf, sizeof(buf));

	return ret ? ret : strtoll(buf, NULL, 16);
}

/*
 * The NUMA node of the memory block that holds physical address @phys,
 * from the block's node link: where a page is, not how much is free.
 * -ENOENT when no node claims the block.
 */
static inline int hyper_phys_node(uint64_t phys)
{
	long long bs = hyper_mem_block_size();
	char path[96];

	if (bs <= 0)
		return bs ? (int)bs : -EINVAL;
	for (int node = 0; node < 64; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/memory/memory%llu/node%d",
			 (unsigned long long)(phys / bs), node);
		if (!access(path, F_OK))
			return node;
	}
	return -ENOENT;
}

/*
 * Poll @cond every 10 ms until it holds or @secs seconds have passed, and
 * say whether it held.  The bound is a safety net, far above what any
 * machine needs, so that a slow or busy machine only makes a test wait
 * longer, never fail: tests judge the state, not how soon it came.
 */
#define hyper_poll(cond, secs) ({					\
	struct timespec _t0, _t;					\
	bool _held;							\
									\
	clock_gettime(CLOCK_MONOTONIC, &_t0);				\
	while (!(_held = (cond))) {					\
		clock_gettime(CLOCK_MONOTONIC, &_t);			\
		if (_t.tv_sec - _t0.tv_sec >= (secs))			\
			break;						\
		usleep(10000);						\
	}								\
	_held;								\
})

#endif /* HYPER_TEST_H */
