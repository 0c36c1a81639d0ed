#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot the test VM for one suite and leave its console log in LOG.
#
# The VM is Debian's own kernel under QEMU TCG (KVM does not work on these
# machines) with two NUMA nodes: node 0 has the CPUs, node 1 is CPU-less
# and is where a suite's "#@APPEND=memmap=..." line reserves the pool
# window.  "#@NODE0=" and "#@NODE1=" size the nodes (2G and 1G by
# default); "#@CPU=" is QEMU's -cpu (max; a window above 1 TiB needs
# more physical address bits, e.g. max,phys-bits=46); guest RAM beyond
# 3 GiB lands above the 4 GiB PCI hole.  no_timer_check: under TCG on a
# loaded host the kernel's check that the IO-APIC timer ticks can fail
# and panic the boot ("IO-APIC + timer doesn't work"); it tests the host's
# load, not the module.
#
# Besides the tests' own TAP, two checks are appended to LOG as test blocks
# of their own: that the VM reached the end of the suite (no panic, no
# timeout) and that dmesg holds no BUG/WARNING/Oops line.  Every block is
# named vm:KERNEL:SUITE:TEST, KERNEL the major.minor of the image booted
# (vm:6.12:kmod-numa:completed), so that results on two kernels differ.
#
# Timeouts scale with the machine: the VM's init measures its boot time
# and reports a scale (selftests/vm/init) that multiplies the suite's
# TIMEOUT here and every test's timeout inside; HYPER_TIMEOUT_SCALE in the
# environment sets it instead.  When one fires, LOG says which test ran.
#
# A suite with a "#@NODES=N" line runs on N guests sharing one pool
# (run-2vm.sh).  The pieces both runners use are in vm-lib.sh.
#
# usage: run-vm.sh KERNEL INITRD SUITEFILE LOG
# VM_APPEND in the environment adds kernel parameters (KEY=VALUE ones reach
# the suite as environment variables).
set -u
kernel=$1 initrd=$2 suitefile=$3 log=$4
suite=$(basename "$suitefile" .suite)
# shellcheck source-path=SCRIPTDIR source=vm-lib.sh
. "$(dirname "$0")/vm-lib.sh"

vm_settings "$suitefile"
# A suite of several nodes on one pool ("#@NODES=2") boots them all.
if [ "$NODES" -gt 1 ]; then
	exec "$(dirname "$0")/run-2vm.sh" "$@"
fi
vm_label "$kernel"
name=vm:$klabel:$suite
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A boot that stopped for the emulator's reason (vm_emulator_death), and
# only such a boot, is booted once more.  The first console log is kept
# next to LOG, and LOG says that the suite was run twice, and why.
rerun_note=
vm_boot "$tmp" "$kernel" "$initrd" "$suite"
if why=$(vm_emulator_death "$tmp" "$suitefile"); then
	cp "$tmp/log" "$log.first"
	rerun_note="# rerun: the first boot $why; console in $log.first"
	vm_boot "$tmp" "$kernel" "$initrd" "$suite"
fi
vm_finish "$tmp" "$log" "$name" "VM for suite $suite on ${kver:-$klabel}"
if [ -n "$rerun_note" ]; then
	echo "$rerun_note" >> "$log"
fi
echo "# vm suite $suite on ${kver:-$klabel}: ${secs}s" >> "$log"
