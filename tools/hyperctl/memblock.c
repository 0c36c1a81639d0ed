// SPDX-License-Identifier: GPL-2.0
/*
 * The memory blocks of a window in system-ram mode.  The module only adds
 * them; as with daxctl, onlining is userspace's policy, and hyperctl
 * onlines them movable (so that they can be taken back) unless told
 * otherwise.  Blocks are devices/system/memory/memoryN, N the physical
 * address divided by block_size_bytes (hexadecimal).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

static int block_size(uint64_t *bs)
{
	char path[512], buf[64], *end;
	int ret;

	ret = hc_path(path, sizeof(path), "devices/system/memory/block_size_bytes");
	if (!ret)
		ret = hc_read_file(path, buf, sizeof(buf));
	if (ret)
		return ret;
	*bs = strtoull(buf, &end, 16);
	return *end || !*bs ? -EINVAL : 0;
}

static int block_state_path(uint64_t nr, char *path, size_t len)
{
	return hc_path(path, len, "devices/system/memory/memory%" PRIu64 "/state",
		       nr);
}

/* The blocks [first, first + count) that [start, start + size) covers. */
static int block_range(uint64_t start, uint64_t size, uint64_t *first,
		       uint64_t *count)
{
	uint64_t bs;
	int ret = block_size(&bs);

	if (ret)
		return ret;
	if (!size || start % bs || size % bs)
		return -EINVAL;
	*first = start / bs;
	*count = size / bs;
	return 0;
}

/*
 * Walks the memory blocks of [start, start + size): counts them and those
 * online, and with how ("online_movable" or "online_kernel") onlines each
 * one that is not.  On failure b->at is the block that failed; the ones
 * before it keep what was done to them.
 */
int hc_blocks(uint64_t start, uint64_t size, const char *how,
	      struct hc_blocks *b)
{
	uint64_t first, count;
	char path[512], state[32];
	int ret = block_range(start, size, &first, &count);

	memset(b, 0, sizeof(*b));
	if (ret)
		return ret;
	for (b->at = first; b->at < first + count; b->at++) {
		ret = block_state_path(b->at, path, sizeof(path));
		if (!ret)
			ret = hc_read_file(path, state, sizeof(state));
		if (!ret && how && strcmp(state, "online")) {
			ret = hc_write_file(path, how);
			strcpy(state, "online");
		}
		if (ret)
			return ret;
		b->total++;
		b->online += !strcmp(state, "online");
	}
	return 0;
}
