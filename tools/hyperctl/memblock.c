// SPDX-License-Identifier: GPL-2.0
/*
 * The memory blocks of a window in system-ram mode.  The module only adds
 * them; as with daxctl, onlining is userspace's policy, and hyperctl
 * onlines them movable (so that they can be taken back) unless told
 * otherwise.  Blocks are devices/system/memory/memoryN, N the physical
 * address divided by block_size_bytes (hexadecimal).
 *
 * The kernel may online hot-added blocks itself, as soon as they are
 * added: devices/system/memory/auto_online_blocks says how ("offline" on
 * Debian's 6.1, "online", into ZONE_NORMAL, on its 6.12).  hyperctl turns
 * that off for the moment of its own switch, and moves blocks it finds
 * online in the wrong zone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

#define AUTO_ONLINE	"devices/system/memory/auto_online_blocks"

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

static int block_attr(uint64_t nr, const char *attr, char *path, size_t len)
{
	return hc_path(path, len, "devices/system/memory/memory%" PRIu64 "/%s",
		       nr, attr);
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
 * The zone an online block is in: its valid_zones then names just that
 * one ("Movable", "Normal").  "" if unknown.
 */
static void block_zone(uint64_t nr, char *zone, size_t len)
{
	char path[512], buf[64];

	zone[0] = 0;
	if (block_attr(nr, "valid_zones", path, sizeof(path)) ||
	    hc_read_file(path, buf, sizeof(buf)))
		return;
	buf[strcspn(buf, " ")] = 0;
	if (strlen(buf) < len)
		strcpy(zone, buf);
}

/*
 * Whether a block in @zone is where @how would have put it; a zone the
 * kernel does not tell ("") is taken to be right.
 */
static bool zone_fits(const char *zone, const char *how)
{
	bool movable = !strcmp(zone, "Movable");

	if (!*zone)
		return true;
	return !strcmp(how, "online_movable") ? movable : !movable;
}

static int online_one(uint64_t nr, const char *state, const char *how,
		      struct hc_blocks *b)
{
	char path[512];
	int ret;

	ret = block_attr(nr, "state", path, sizeof(path));
	if (ret)
		return ret;
	if (!strcmp(state, "online")) {
		/* Online already, by the kernel or by hand, but elsewhere. */
		ret = hc_write_file(path, "offline");
		if (ret) {
			b->stuck = true;
			return ret;
		}
		b->moved++;
	}
	ret = hc_write_file(path, how);
	if (ret)
		return ret;
	block_zone(nr, b->zone, sizeof(b->zone));
	if (!zone_fits(b->zone, how)) {
		/* The kernel's zone policy overrode what was asked. */
		b->wrong_zone = true;
		return -EXDEV;
	}
	return 0;
}

/*
 * Walks the memory blocks of [start, start + size): counts them, those
 * online and those in ZONE_MOVABLE, and with @how ("online_movable" or
 * "online_kernel") onlines each one that is offline and moves each one
 * online in the other kind of zone.  On failure b->at is the block that
 * failed; the ones before it keep what was done to them.  -EXDEV means
 * the kernel put a block in another zone than @how asked (b->zone).
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
		ret = block_attr(b->at, "state", path, sizeof(path));
		if (!ret)
			ret = hc_read_file(path, state, sizeof(state));
		if (ret)
			return ret;
		if (!strcmp(state, "online"))
			block_zone(b->at, b->zone, sizeof(b->zone));
		if (how && (strcmp(state, "online") || !zone_fits(b->zone, how))) {
			ret = online_one(b->at, state, how, b);
			if (ret)
				return ret;
			strcpy(state, "online");
		}
		b->total++;
		if (!strcmp(state, "online")) {
			b->online++;
			b->movable += !strcmp(b->zone, "Movable");
		}
	}
	return 0;
}

/* The kernel's auto-online policy ("offline", "online", ...). */
int hc_auto_online_get(char *buf, size_t len)
{
	char path[512];
	int ret = hc_path(path, sizeof(path), AUTO_ONLINE);

	return ret ? ret : hc_read_file(path, buf, len);
}

int hc_auto_online_set(const char *policy)
{
	char path[512];
	int ret = hc_path(path, sizeof(path), AUTO_ONLINE);

	return ret ? ret : hc_write_file(path, policy);
}
