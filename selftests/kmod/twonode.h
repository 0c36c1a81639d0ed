/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the multi-node tests (selftests/vm/suites/twonode.suite and
 * threenode.suite, run by selftests/vm/run-2vm.sh): guests whose pool
 * window is one host file, each running the same program as node
 * HYPER_NODE, meeting at the mailbox's barriers.
 *
 * The tests of the pool's node protocol run exactly when the module has
 * the node_id parameter, and say why they skip otherwise.
 */
#ifndef TWONODE_H
#define TWONODE_H

#include <stdarg.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "hyper_mailbox.h"
#include "hyper_test.h"

#define TN_NODE_ID_PARAM	"/sys/module/hyper/parameters/node_id"
#define TN_NO_NODE_ID		"module lacks node_id (" TN_NODE_ID_PARAM "): this hyper.ko has no pool format, so the node protocol cannot run"
#define TN_HYPERCTL		"/bin/hyperctl"

/*
 * Each test's limit (the harness scales it): below the suite's 600 s per
 * program, so that the harness names the test; barriers wait less.
 */
#define TN_TEST_SECS		500

/* Barriers wait at most this long, times the VM's timeout scale. */
static inline int tn_secs(void)
{
	const char *s = getenv("HYPER_TIMEOUT_SCALE");
	long scale = s ? strtol(s, NULL, 10) : 1;

	return 300 * (int)(scale < 1 ? 1 : scale > 100 ? 100 : scale);
}

static inline bool tn_has_node_id(void)
{
	return access(TN_NODE_ID_PARAM, F_OK) == 0;
}

/*
 * Runs hyperctl with the arguments (NULL-terminated); its stderr goes to
 * @err (at most @len bytes, NUL-terminated) and to our stderr, its stdout
 * to ours.  Returns its exit status, 128 + signal, or -errno.
 */
static inline int tn_hyperctl(char *err, size_t len, ...)
{
	const char *argv[16] = { TN_HYPERCTL };
	int pfd[2], st, argc = 1;
	size_t got = 0;
	ssize_t n;
	va_list ap;
	pid_t pid;

	va_start(ap, len);
	while (argc < 15 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	if (pipe(pfd))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (!pid) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], err + got, len - 1 - got)) > 0)
		got += n;
	err[got] = 0;
	close(pfd[0]);
	if (got) {
		fprintf(stderr, "#");
		for (int i = 0; i < argc; i++)
			fprintf(stderr, " %s", i ? argv[i] : "hyperctl");
		fprintf(stderr, ": %s", err);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * A node's line of the pool's node table (sysfs pool/nodes: "ID STATE
 * LEASE_AGE_MS BYTES GEN"): its state and the bytes of the chunks it
 * holds.  -ENOENT when the table has no line for @id.
 */
static inline int tn_pool_node(int id, char *state, size_t len,
			       long long *bytes)
{
	char line[256], st[32];
	long long age, b, gen;
	int ret = -ENOENT, n;
	FILE *f;

	f = fopen(HYPER_SYSFS "/hyper0/pool/nodes", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %31s %lld %lld %lld", &n, st, &age, &b,
			   &gen) == 5 && n == id) {
			snprintf(state, len, "%s", st);
			*bytes = b;
			ret = 0;
		}
	fclose(f);
	return ret;
}

/* Lines in @s: a refusal is one line, with its newline. */
static inline int tn_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Whether @s holds @word, case-insensitively. */
static inline bool tn_says(const char *s, const char *word)
{
	return strcasestr(s, word) != NULL;
}

/*
 * Stamps every 8-byte word of a region: the node, the region's sequence
 * number and the word's index, so that a byte another node wrote, or
 * another region's, or a zero of a later ALLOC, shows.
 */
static inline uint64_t tn_stamp(int node, uint64_t seq, uint64_t i)
{
	return (uint64_t)(node + 1) << 56 | (seq & 0xffffffffULL) << 24 |
	       (i & 0xffffff);
}

static inline void tn_fill(uint64_t *p, uint64_t size, int node, uint64_t seq)
{
	for (uint64_t i = 0; i < size / 8; i++)
		p[i] = tn_stamp(node, seq, i);
}

/* Index of the first word that is not the stamp, or size / 8. */
static inline uint64_t tn_check(const uint64_t *p, uint64_t size, int node,
				uint64_t seq)
{
	for (uint64_t i = 0; i < size / 8; i++)
		if (p[i] != tn_stamp(node, seq, i))
			return i;
	return size / 8;
}

/* Says what the word found is: whose stamp, or something else. */
static inline void tn_report(const uint64_t *p, uint64_t size, int node,
			     uint64_t seq)
{
	uint64_t i = tn_check(p, size, node, seq);
	uint64_t w;

	if (i == size / 8)
		return;
	w = p[i];
	fprintf(stderr, "# node %d region %llu: word %llu is %#llx (%s), not its stamp %#llx\n",
		node, (unsigned long long)seq, (unsigned long long)i,
		(unsigned long long)w,
		!w ? "zero" : (int)(w >> 56) - 1 != node ?
		"another node's stamp" : "another region's stamp",
		(unsigned long long)tn_stamp(node, seq, i));
}

/*
 * Takes @nr regions of @size bytes and stamps them with @node and
 * sequence numbers @seq0 on (tn_fill); 0 or -errno.
 */
static inline int tn_hold(int fd, int node, uint64_t seq0, uint64_t **p,
			  int nr, uint64_t size)
{
	uint64_t off;
	int ret;

	for (int i = 0; i < nr; i++) {
		ret = hyper_alloc(fd, size, 0, NULL, &off);
		if (ret)
			return ret;
		p[i] = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, off);
		if (p[i] == MAP_FAILED)
			return -errno;
		tn_fill(p[i], size, node, seq0 + i);
	}
	return 0;
}

/*
 * Fences node @victim once its lease has expired: every refusal before
 * that must be one line naming the lease.  Returns the refusals, or -1
 * when a refusal names something else or the lease never expired (the
 * cause printed).
 */
static inline int tn_fence_after_lease(int victim, char *err, size_t len)
{
	struct timespec t0, t;
	char id[16];
	int refusals = 0;

	snprintf(id, sizeof(id), "%d", victim);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (!tn_hyperctl(err, len, "pool", "fence", id, NULL))
			return refusals;
		refusals++;
		if (tn_lines(err) != 1 || !tn_says(err, "lease")) {
			fprintf(stderr, "# fence %d refused, not for the lease: %s",
				victim, err);
			return -1;
		}
		sleep(1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < tn_secs());
	fprintf(stderr, "# node %d's lease never expired\n", victim);
	return -1;
}

/* Meet the other nodes at barrier @name (in a fixture holding mailbox @m). */
#define TN_MEET(name) \
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, name, tn_secs()))

#ifdef TH_LOG	/* in a kselftest_harness.h test */
/*
 * The node table's bytes of node @id, its state into @state; -1, logged
 * as a failed expectation, when pool/nodes has no line for it.
 */
static inline long long tn_node_bytes(struct __test_metadata *_metadata,
				      int id, char *state, size_t len)
{
	long long bytes = -1;
	int ret = tn_pool_node(id, state, len, &bytes);

	EXPECT_EQ(0, ret) TH_LOG("pool/nodes has no line for node %d", id);
	return ret ? -1 : bytes;
}
#endif

#endif /* TWONODE_H */
