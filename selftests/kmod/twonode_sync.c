// SPDX-License-Identifier: GPL-2.0
/*
 * The multi-node suites' barriers and numbers from the shell (twonode,
 * threenode; the tests in C use selftests/lib/hyper_mailbox.h directly).
 *
 *   kmod_twonode_sync barrier NAME     meet every other node at NAME
 *   kmod_twonode_sync put IDX VALUE    publish a number of this node
 *   kmod_twonode_sync get NODE IDX     print a number NODE published
 *   kmod_twonode_sync wait-gone NODE   wait until NODE's QEMU has exited
 *   kmod_twonode_sync leave            no barrier waits for this node now
 *
 * Exit status 0, or 1 with the cause on stderr; 2 for a usage error.
 */
#include "twonode.h"

static int usage(void)
{
	fprintf(stderr, "usage: kmod_twonode_sync barrier NAME | put IDX VALUE | get NODE IDX | wait-gone NODE | leave\n");
	return 2;
}

static int number(const char *s, unsigned long long max,
		  unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *v > max ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	unsigned long long a, b;
	struct hyper_mbox m;
	int ret;

	if (argc < 2 || (argc < 3 && strcmp(argv[1], "leave")))
		return usage();
	if (hyper_mbox_open(&m))
		return 1;
	if (!strcmp(argv[1], "barrier") && argc == 3) {
		ret = hyper_mbox_barrier(&m, argv[2], tn_secs());
	} else if (!strcmp(argv[1], "put") && argc == 4 &&
		   !number(argv[2], HYPER_MBOX_VALS - 1, &a) &&
		   !number(argv[3], ~0ULL, &b)) {
		hyper_mbox_put(&m, (int)a, b);
		ret = 0;
	} else if (!strcmp(argv[1], "get") && argc == 4 &&
		   !number(argv[2], m.nodes - 1, &a) &&
		   !number(argv[3], HYPER_MBOX_VALS - 1, &b)) {
		printf("%llu\n", (unsigned long long)hyper_mbox_get(&m, (int)a, (int)b));
		ret = 0;
	} else if (!strcmp(argv[1], "leave") && argc == 2) {
		hyper_mbox_leave(&m);
		ret = 0;
	} else if (!strcmp(argv[1], "wait-gone") && argc == 3 &&
		   !number(argv[2], m.nodes - 1, &a)) {
		ret = hyper_mbox_wait_gone(&m, (int)a, tn_secs());
	} else {
		hyper_mbox_close(&m);
		return usage();
	}
	hyper_mbox_close(&m);
	return ret ? 1 : 0;
}
