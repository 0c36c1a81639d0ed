#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot several test VMs for one suite at the same time, on one pool: the
# bed of the supernode's tests (Documentation/supernode.md).  run-vm.sh
# hands a suite with a "#@NODES=N" header line (N >= 2) to this script.
#
# Each guest is run-vm.sh's VM (selftests/vm/vm-lib.sh) but for two
# things.  Its NUMA node 1 is not RAM but one host file, shared
# (memory-backend-file,share=on), the same file and so the same bytes at
# the same guest-physical address in every guest: the suite's "#@APPEND="
# line makes all of node 1 (its "#@NODE1=" size) the pool window, so that
# no guest's kernel uses any of it as RAM.  And each guest has an
# ivshmem-plain PCI device over a second shared file, the mailbox where
# the guests meet at barriers (selftests/lib/hyper_mailbox.h).  Guest n
# gets HYPER_NODE=n and HYPER_NODES=N on its kernel command line, which
# reach the suite as environment variables.  Both files start zeroed.
#
# The host marks a guest "gone" in the mailbox as soon as its QEMU exits,
# so that no guest waits at a barrier for a dead one.  A guest whose
# console prints the line HYPER-2VM-KILL is killed (SIGKILL to its QEMU:
# a crash, no shutdown) at the suite's request; that guest has completed
# when it got that far.  When the others go on meeting after the kill, it
# leaves the bed first (hyper_mbox_leave(), kmod_twonode_sync leave).
#
# Each guest's console and test blocks, named vm:KERNEL:SUITE:nodeN:TEST,
# with its completed and dmesg-clean checks, are LOG.nodeN; LOG is all of
# them, one after the other (so that a scan of LOG, like the debug
# kernel's, sees every guest's dmesg), then the bed's own block
# vm:KERNEL:SUITE:completed: every guest completed.  A guest
# that stopped for the emulator's reason (vm_emulator_death in vm-lib.sh)
# has all guests booted once more, on fresh files.
#
# usage: run-2vm.sh KERNEL INITRD SUITEFILE LOG
set -u
kernel=$1 initrd=$2 suitefile=$3 log=$4
suite=$(basename "$suitefile" .suite)
# shellcheck source-path=SCRIPTDIR source=vm-lib.sh
. "$(dirname "$0")/vm-lib.sh"

vm_settings "$suitefile"
vm_label "$kernel"
name=vm:$klabel:$suite
nodes=${NODES:-2}
# The mailbox has a slot for 8 (HYPER_MBOX_NODES in hyper_mailbox.h).
case $nodes in
[2-8]) ;;
*)
	echo "run-2vm.sh: $suitefile says #@NODES=$nodes: the bed takes 2 to 8 guests" >&2
	exit 2
	;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mbox=$tmp/mbox
pool=$tmp/pool
# ivshmem wants a power of two; hyper_mailbox.h needs 576 KiB of it.
MBOX_SIZE=1M
# Where the host marks node n gone (HYPER_MBOX_GONE in hyper_mailbox.h).
MBOX_GONE=4096

mark_gone() {
	printf GONE | dd of="$mbox" bs=1 seek=$((MBOX_GONE + 64 * $1)) \
		conv=notrunc status=none
}

# Kills a guest that asks for it; returns when every QEMU has exited.  The
# stderr of a guest's runner (the shell's "Killed") is in nN/runner.err.
killer() {
	while sleep 0.5; do
		left=0
		n=0
		while [ "$n" -lt "$nodes" ]; do
			d=$tmp/n$n
			if [ ! -f "$d/qrc" ]; then
				left=$((left + 1))
				if [ ! -f "$d/killed" ] && [ -f "$d/pid" ] &&
				   grep -q '^HYPER-2VM-KILL$' "$d/log"; then
					echo "killed by the runner when the suite asked (HYPER-2VM-KILL)" > "$d/killed"
					kill -9 "$(cat "$d/pid")" 2>/dev/null
				fi
			fi
			n=$((n + 1))
		done
		[ "$left" -gt 0 ] || return
	done
}

boot_all() {
	rm -f "$pool" "$mbox"
	truncate -s "$(to_mib "$NODE1")M" "$pool"
	truncate -s "$MBOX_SIZE" "$mbox"
	n=0
	while [ "$n" -lt "$nodes" ]; do
		rm -rf "$tmp/n$n"
		mkdir "$tmp/n$n"
		(
			NODE1_MEM="memory-backend-file,id=m1,size=$NODE1,mem-path=$pool,share=on"
			VM_APPEND="${VM_APPEND:-} HYPER_NODE=$n HYPER_NODES=$nodes"
			vm_boot "$tmp/n$n" "$kernel" "$initrd" "$suite" \
				-object "memory-backend-file,id=mbox,size=$MBOX_SIZE,mem-path=$mbox,share=on" \
				-device ivshmem-plain,memdev=mbox
			mark_gone "$n"
		) 2> "$tmp/n$n/runner.err" &
		n=$((n + 1))
	done
	killer
	wait
}

start=$(date +%s)
rerun_note=
boot_all
n=0
while [ "$n" -lt "$nodes" ]; do
	if why=$(vm_emulator_death "$tmp/n$n" "$suitefile"); then
		cp "$tmp/n$n/log" "$log.node$n.first"
		rerun_note="# rerun: node $n's first boot $why (console in $log.node$n.first); all nodes were booted again"
		start=$(date +%s)
		boot_all
		break
	fi
	n=$((n + 1))
done

: > "$log"
failed=
n=0
while [ "$n" -lt "$nodes" ]; do
	killed=
	[ -f "$tmp/n$n/killed" ] && killed=$(cat "$tmp/n$n/killed")
	vm_finish "$tmp/n$n" "$log.node$n" "$name:node$n" \
		"VM node $n of suite $suite on ${kver:-$klabel}" "$killed"
	grep -q "^not ok $name:node$n:completed\$" "$log.node$n" && failed="$failed $n"
	sed "s/^/# node $n runner: /" "$tmp/n$n/runner.err" >> "$log.node$n"
	cat "$log.node$n" >> "$log"
	n=$((n + 1))
done
[ -n "$rerun_note" ] && echo "$rerun_note" >> "$log"
if [ -n "$failed" ]; then
	echo "# node(s)$failed did not complete: see $log.nodeN" >> "$log"
	vm_block "$log" "$name:completed" "not ok" 1
else
	vm_block "$log" "$name:completed" ok 0
fi
echo "# vm suite $suite on ${kver:-$klabel}, $nodes nodes: ${secs}s" >> "$log"
