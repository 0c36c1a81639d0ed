/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mailbox of the multi-node test bed (selftests/vm/run-2vm.sh, two
 * to HYPER_MBOX_NODES guests): a small shared file on the host that every
 * guest maps as an ivshmem-plain PCI
 * device's BAR 2, so that the guests can meet at barriers and pass a few
 * numbers, without touching the pool under test.
 *
 * Layout: one slot of HYPER_MBOX_SLOT bytes per node at node * SLOT,
 * written only by that node; at HYPER_MBOX_GONE + node * 64 the host
 * writes "GONE" once that node's QEMU has exited (killed on the suite's
 * request, crashed or finished), so that a node never waits for a dead
 * one.  At HYPER_MBOX_DATA + node * HYPER_MBOX_DATA_LEN each node may
 * publish a table of numbers.  The file starts zeroed.  Guests on one host under TCG see one
 * coherent memory; the stores are ordered with release/acquire.
 *
 * A barrier is a sequence number: a node at barrier s writes the
 * barrier's name into names[s % 2], then its seq = s, and waits until
 * every other node's seq is at least s.  A node can be at most one barrier
 * ahead of another, so names[s % 2] of a node at s stays put until the
 * slower node has passed s: names that differ are a suite out of step.
 * A node that is about to be killed on purpose (HYPER-2VM-KILL) first
 * sets its "left" flag (hyper_mbox_leave()): the barriers of the others
 * no longer wait for it, so that the survivors can go on meeting.
 */
#ifndef HYPER_MAILBOX_H
#define HYPER_MAILBOX_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HYPER_MBOX_NODES	8
#define HYPER_MBOX_SLOT		512
#define HYPER_MBOX_GONE		4096
#define HYPER_MBOX_NAME		64
#define HYPER_MBOX_VALS		16
#define HYPER_MBOX_DATA		65536
#define HYPER_MBOX_DATA_LEN	65536
#define HYPER_MBOX_SIZE		(HYPER_MBOX_DATA + HYPER_MBOX_NODES * HYPER_MBOX_DATA_LEN)

struct hyper_mbox_slot {
	uint32_t seq;
	uint32_t left;	/* 1: left the bed, no barrier waits for it */
	char names[2][HYPER_MBOX_NAME];
	uint64_t vals[HYPER_MBOX_VALS];
};

struct hyper_mbox {
	uint8_t *base;
	size_t len;
	int node;	/* this node, from HYPER_NODE */
	int nodes;	/* nodes in the bed, from HYPER_NODES */
};

static inline struct hyper_mbox_slot *hyper_mbox_slot(struct hyper_mbox *m,
						      int node)
{
	return (struct hyper_mbox_slot *)(m->base + node * HYPER_MBOX_SLOT);
}

/* The table @node publishes: HYPER_MBOX_DATA_LEN / 8 numbers. */
static inline uint64_t *hyper_mbox_data(struct hyper_mbox *m, int node)
{
	return (uint64_t *)(m->base + HYPER_MBOX_DATA + node * HYPER_MBOX_DATA_LEN);
}

/* Whether the host has marked @node's QEMU as exited. */
static inline int hyper_mbox_gone(struct hyper_mbox *m, int node)
{
	volatile char *g = (volatile char *)m->base + HYPER_MBOX_GONE + 64 * node;

	return g[0] == 'G' && g[1] == 'O' && g[2] == 'N' && g[3] == 'E';
}

/* An integer 0..@max from the environment (the kernel command line). */
static inline int hyper_mbox_env(const char *name, int max, int *val)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -ENOENT;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > max)
		return -EINVAL;
	*val = (int)v;
	return 0;
}

static inline int hyper_mbox_read_id(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Bytes of BAR 2 of a PCI device, from its "resource" file; 0 if unknown. */
static inline size_t hyper_mbox_bar2_len(const char *pci, const char *dev)
{
	unsigned long long start, end, flags;
	char path[300];
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/resource", pci, dev);
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (int bar = 0; bar <= 2; bar++)
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			break;
		else if (bar == 2 && end > start)
			len = (size_t)(end - start + 1);
	fclose(f);
	return len;
}

/*
 * Maps the mailbox: the BAR 2 of the ivshmem-plain device (vendor 0x1af4,
 * device 0x1110).  0, or -errno with the cause printed.
 */
static inline int hyper_mbox_open(struct hyper_mbox *m)
{
	const char *pci = "/sys/bus/pci/devices";
	char path[300], id[16];
	struct dirent *e;
	int ret = -ENODEV, fd;
	DIR *d;

	memset(m, 0, sizeof(*m));
	if (hyper_mbox_env("HYPER_NODE", HYPER_MBOX_NODES - 1, &m->node) ||
	    hyper_mbox_env("HYPER_NODES", HYPER_MBOX_NODES, &m->nodes) || m->nodes < 2 ||
	    m->node >= m->nodes) {
		fprintf(stderr, "mailbox: HYPER_NODE and HYPER_NODES are not set (run the suite with selftests/vm/run-2vm.sh)\n");
		return -EINVAL;
	}
	d = opendir(pci);
	if (!d)
		return -errno;
	while (ret == -ENODEV && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/vendor", pci, e->d_name);
		if (hyper_mbox_read_id(path, id, sizeof(id)) || strcmp(id, "0x1af4"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/device", pci, e->d_name);
		if (hyper_mbox_read_id(path, id, sizeof(id)) || strcmp(id, "0x1110"))
			continue;
		/*
		 * The BAR must decode: the BIOS usually enabled it already,
		 * and a failed enable shows as a failed mmap below.
		 */
		snprintf(path, sizeof(path), "%s/%s/enable", pci, e->d_name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "1", 1) != 1)
				errno = 0;
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/%s/resource2", pci, e->d_name);
		fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		m->len = hyper_mbox_bar2_len(pci, e->d_name);
		if (m->len < HYPER_MBOX_SIZE) {
			fprintf(stderr, "mailbox: %s has %zu bytes, not %d\n",
				path, m->len, HYPER_MBOX_SIZE);
			ret = -EINVAL;
		} else {
			m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE,
				       MAP_SHARED, fd, 0);
			ret = m->base == MAP_FAILED ? -errno : 0;
			if (ret)
				fprintf(stderr, "mailbox: mmap %s: %s\n", path,
					strerror(-ret));
		}
		close(fd);
	}
	closedir(d);
	if (ret) {
		m->base = NULL;
		fprintf(stderr, "mailbox: no ivshmem-plain device with a %d-byte BAR 2 (%s): run the suite with selftests/vm/run-2vm.sh\n",
			HYPER_MBOX_SIZE, strerror(-ret));
	}
	return ret;
}

static inline void hyper_mbox_close(struct hyper_mbox *m)
{
	if (m->base)
		munmap(m->base, m->len);
	m->base = NULL;
}

/* Publishes value @idx of this node. */
static inline void hyper_mbox_put(struct hyper_mbox *m, int idx, uint64_t v)
{
	__atomic_store_n(&hyper_mbox_slot(m, m->node)->vals[idx], v,
			 __ATOMIC_RELEASE);
}

/* Value @idx that @node published. */
static inline uint64_t hyper_mbox_get(struct hyper_mbox *m, int node, int idx)
{
	return __atomic_load_n(&hyper_mbox_slot(m, node)->vals[idx],
			       __ATOMIC_ACQUIRE);
}

/*
 * Leaves the bed: the other nodes' barriers stop waiting for this one.
 * For a node about to be killed (HYPER-2VM-KILL); it meets no one after.
 */
static inline void hyper_mbox_leave(struct hyper_mbox *m)
{
	__atomic_store_n(&hyper_mbox_slot(m, m->node)->left, 1, __ATOMIC_RELEASE);
}

/* Whether @node has left the bed (hyper_mbox_leave()). */
static inline int hyper_mbox_left(struct hyper_mbox *m, int node)
{
	return __atomic_load_n(&hyper_mbox_slot(m, node)->left, __ATOMIC_ACQUIRE);
}

/*
 * Meets every other node that has not left the bed at the barrier @name.  Waits at most @secs
 * seconds (a safety net, far above what a slow machine needs).  0, or
 * -EPIPE when a node's QEMU exited before it got there, -EPROTO when a
 * node waits at a barrier of another name, -ETIMEDOUT; the cause printed.
 */
static inline int hyper_mbox_barrier(struct hyper_mbox *m, const char *name,
				     int secs)
{
	struct hyper_mbox_slot *me = hyper_mbox_slot(m, m->node);
	uint32_t s = __atomic_load_n(&me->seq, __ATOMIC_ACQUIRE) + 1;
	struct timespec t0, t;

	snprintf(me->names[s % 2], HYPER_MBOX_NAME, "%s", name);
	__atomic_store_n(&me->seq, s, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int n = 0; n < m->nodes; n++) {
		struct hyper_mbox_slot *o = hyper_mbox_slot(m, n);
		uint32_t os;

		if (n != m->node && hyper_mbox_left(m, n))
			continue;
		while ((os = __atomic_load_n(&o->seq, __ATOMIC_ACQUIRE)) < s) {
			if (hyper_mbox_left(m, n))
				break;
			if (hyper_mbox_gone(m, n) &&
			    __atomic_load_n(&o->seq, __ATOMIC_ACQUIRE) < s) {
				fprintf(stderr, "mailbox: node %d is gone before barrier %u '%s'\n",
					n, s, name);
				return -EPIPE;
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= secs) {
				fprintf(stderr, "mailbox: node %d did not reach barrier %u '%s' in %d s\n",
					n, s, name, secs);
				return -ETIMEDOUT;
			}
			usleep(2000);
		}
		if (os == s && !hyper_mbox_left(m, n) && strncmp(o->names[s % 2], name, HYPER_MBOX_NAME)) {
			fprintf(stderr, "mailbox: barrier %u: node %d is at '%.*s', node %d at '%s'\n",
				s, n, HYPER_MBOX_NAME, o->names[s % 2], m->node,
				name);
			return -EPROTO;
		}
	}
	return 0;
}

/* Waits until the host has marked @node gone; 0 or -ETIMEDOUT. */
static inline int hyper_mbox_wait_gone(struct hyper_mbox *m, int node, int secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!hyper_mbox_gone(m, node)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= secs) {
			fprintf(stderr, "mailbox: node %d still runs after %d s\n",
				node, secs);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
	return 0;
}

#endif /* HYPER_MAILBOX_H */
