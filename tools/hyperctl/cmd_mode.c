// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl mode DEV device|system-ram: switch how a firmware window is
 * used, in the manner of `daxctl reconfigure-device`, then print the
 * resulting status.  The module hot-adds the window's memory blocks;
 * hyperctl onlines them (movable unless --no-movable; not at all with
 * --no-online), whatever the kernel's auto-online policy, and if that
 * fails switches back, so that a switch is all or nothing.  Asking for
 * the mode a device is in already onlines what is offline and moves what
 * is online in the other kind of zone.
 */
#include <errno.h>
#include <string.h>

#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl mode [-H] [--no-online|--no-movable] DEV device|system-ram\n"
	"\n"
	"Switch DEV (hyperN, N or all) to a mode, then print its status as\n"
	"`hyperctl status` does.\n"
	"\n"
	"  device       /dev/hyperN hands out regions and moves data\n"
	"  system-ram   the window is hot-added as System RAM on its NUMA node,\n"
	"               in a memory tier below DRAM, for numactl and libnuma;\n"
	"               hyperctl onlines its memory blocks as movable memory\n"
	"\n"
	"The switch is refused (exit status 1, nothing changed) while regions\n"
	"exist or transfers are in flight, when pages of the window cannot be\n"
	"taken offline, and for an emulated pool, which is RAM already.\n"
	"\n"
	"  --no-online   leave the hot-added memory blocks offline\n"
	"  --no-movable  online them for the kernel (ZONE_NORMAL): usable for\n"
	"                kernel allocations, but then likely impossible to take back\n"
	"  -H, --human   the status as text\n"
	"  -h, --help    this text\n",
	.opts = HC_OPT_HUMAN | HC_OPT_ONLINE,
	.min_args = 2,
	.max_args = 2,
	.need_one = true,
};

/* Why the module refused, in words an operator can act on. */
static void explain(int id, const char *want, int err)
{
	char name[HC_NAME_LEN];
	int64_t regions = -1, inflight = -1;

	hc_devname(id, name);
	switch (err) {
	case -EBUSY:
		if (strcmp(want, "system-ram")) {
			hc_err(name, "cannot go back to device mode: pages of the window are in use and could not be offlined; nothing changed (%s)",
			       strerror(-err));
			break;
		}
		hc_read_attr_s64(id, "nr_regions", &regions);
		hc_read_attr_s64(id, "stats/inflight", &inflight);
		hc_err(name, "cannot switch to system-ram while the pool is in use (%lld regions, %lld transfers in flight); free them first (%s)",
		       (long long)regions, (long long)inflight, strerror(-err));
		break;
	case -EOPNOTSUPP:
		hc_err(name, "only a firmware window can become System RAM; an emulated pool is RAM already (%s)",
		       strerror(-err));
		break;
	case -EINVAL:
		/* hyperctl only writes the two valid names. */
		hc_err(name, "the window cannot become System RAM: it has no NUMA node or is not aligned to the memory block size; the kernel log says which (%s)",
		       strerror(-err));
		break;
	default:
		hc_err(name, "mode %s: %s", want, strerror(-err));
	}
}

/* Says what went wrong with block b->at, in words an operator can act on. */
static void online_error(const char *name, const char *how,
			 const struct hc_blocks *b, int err, const char *then)
{
	const char *want = strcmp(how, "online_movable") ? "a kernel zone" : "Movable";

	if (b->wrong_zone)
		hc_err(name, "memory block %llu: the kernel onlined it in zone %s, not %s; its memory hotplug policy (memory_hotplug.online_policy, movable_node, kernelcore=) does not allow that zone here%s",
		       (unsigned long long)b->at, b->zone, want, then);
	else if (b->stuck)
		hc_err(name, "memory block %llu is online in zone %s, not %s, and cannot be offlined to move it (%s)%s",
		       (unsigned long long)b->at, b->zone, want, strerror(-err), then);
	else
		hc_err(name, "memory block %llu: %s: %s%s", (unsigned long long)b->at,
		       how, strerror(-err), then);
}

/*
 * Onlines the window's memory blocks where asked, moving blocks found
 * online in the other zone; on failure, a switch this command made is
 * undone.  Returns 0 or HC_EXIT_FAIL.
 */
static int online(int id, const struct hc_opts *o, bool switched)
{
	const char *how = o->no_movable ? "online_kernel" : "online_movable";
	char name[HC_NAME_LEN];
	struct hc_blocks b = { 0 };
	int64_t base, size;
	int ret, undo;

	if (o->no_online)
		return 0;
	hc_devname(id, name);
	ret = hc_read_attr_s64(id, "phys_base", &base) ?:
	      hc_read_attr_s64(id, "size", &size);
	if (!ret)
		ret = hc_blocks((uint64_t)base, (uint64_t)size, how, &b);
	if (!ret) {
		if (b.moved)
			hc_err(name, "%lld memory blocks were online in the other kind of zone; moved them (%s)",
				(long long)b.moved, how);
		return 0;
	}
	if (!switched) {
		online_error(name, how, &b, ret, "; left as it is");
		return HC_EXIT_FAIL;
	}
	undo = hc_write_attr(id, "mode", "device");
	if (undo) {
		char then[128];

		snprintf(then, sizeof(then), "; switching back to device failed too (%s): the window stays System RAM",
			 strerror(-undo));
		online_error(name, how, &b, ret, then);
	} else {
		online_error(name, how, &b, ret, "; switched back to device mode");
	}
	return HC_EXIT_FAIL;
}

/*
 * Whether blocks the kernel onlines by @policy land where @o wants them:
 * then its auto-online may stay on.
 */
static bool policy_fits(const char *policy, const struct hc_opts *o)
{
	if (o->no_online)
		return false;
	return !strcmp(policy, o->no_movable ? "online_kernel" : "online_movable");
}

/*
 * The switch to system-ram.  The kernel may online hot-added blocks by
 * itself (auto_online_blocks; "online", into ZONE_NORMAL, on Debian's
 * 6.12): hyperctl turns that off for the moment of the write, so that the
 * blocks go where it then puts them, and restores it.  If it cannot, and
 * the kernel's zone is not the one asked for, nothing is done.
 */
static int to_system_ram(int id, const struct hc_opts *o)
{
	char name[HC_NAME_LEN], policy[32];
	bool restore = false;
	int ret;

	hc_devname(id, name);
	if (!hc_auto_online_get(policy, sizeof(policy)) &&
	    strcmp(policy, "offline")) {
		ret = hc_auto_online_set("offline");
		if (ret && !policy_fits(policy, o)) {
			hc_err(name, "the kernel onlines hot-added memory itself (auto_online_blocks is '%s'), which is not what was asked, and hyperctl cannot turn that off (%s); nothing changed. Write offline to /sys/devices/system/memory/auto_online_blocks or boot with memhp_default_state=offline",
			       policy, strerror(-ret));
			return HC_EXIT_FAIL;
		}
		restore = !ret;
	}
	ret = hc_write_attr(id, "mode", "system-ram");
	if (restore) {
		int r = hc_auto_online_set(policy);

		if (r)
			hc_err(name, "could not set auto_online_blocks back to '%s' (%s); it is 'offline' now",
			       policy, strerror(-r));
	}
	if (ret) {
		explain(id, "system-ram", ret);
		return HC_EXIT_FAIL;
	}
	return online(id, o, true);
}

static int switch_one(int id, const char *want, const struct hc_opts *o)
{
	char name[HC_NAME_LEN], cur[32];
	bool to_ram = !strcmp(want, "system-ram");
	int ret;

	hc_devname(id, name);
	ret = hc_read_attr(id, "mode", cur, sizeof(cur));
	if (ret == -ENOENT) {
		hc_err(name, "the loaded hyper module has no mode switch (no sysfs attribute 'mode')");
		return HC_EXIT_FAIL;
	}
	if (ret) {
		hc_err(name, "mode: %s", strerror(-ret));
		return HC_EXIT_FAIL;
	}
	if (!strcmp(cur, want))
		return to_ram ? online(id, o, false) : 0;
	if (to_ram)
		return to_system_ram(id, o);
	ret = hc_write_attr(id, "mode", want);
	if (ret) {
		explain(id, want, ret);
		return HC_EXIT_FAIL;
	}
	return 0;
}

int cmd_mode(int argc, char **argv)
{
	const char *want;
	struct hc_devlist list;
	struct hc_opts o;
	int ret, failed = 0;

	ret = hc_parse_opts(argc, argv, &spec, &o);
	if (ret >= 0)
		return ret;
	want = argv[o.optind + 1];
	if (strcmp(want, "device") && strcmp(want, "system-ram"))
		return hc_usage(&spec, "unknown mode '%s': want device or system-ram",
				want);
	if (o.no_online && o.no_movable)
		return hc_usage(&spec, "--no-online and --no-movable exclude each other");
	ret = hc_select_or_fail(argv[o.optind], &list, spec.need_one);
	if (ret)
		return ret;
	for (int i = 0; i < list.nr; i++)
		failed |= switch_one(list.ids[i], want, &o);
	ret = hc_print_status(&list, o.human);
	hc_devs_free(&list);
	return failed ? HC_EXIT_FAIL : ret;
}
