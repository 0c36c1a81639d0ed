#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot the test VM for one suite and leave its console log in LOG.
#
# The VM is Debian's own kernel under QEMU TCG (KVM does not work on these
# machines) with two NUMA nodes: node 0 has the CPUs, node 1 is CPU-less
# and is where a suite's "#@APPEND=memmap=..." line reserves the pool
# window.  "#@NODE0=" and "#@NODE1=" size the nodes (2G and 1G by
# default); guest RAM beyond 3 GiB lands above the 4 GiB PCI hole.  Besides the tests' own TAP, two checks are appended to LOG as
# test blocks of their own: that the VM reached the end of the suite
# (no panic, no timeout) and that dmesg holds no BUG/WARNING/Oops line.
#
# usage: run-vm.sh KERNEL INITRD SUITEFILE LOG
# VM_APPEND in the environment adds kernel parameters (KEY=VALUE ones reach
# the suite as environment variables).
set -u
kernel=$1 initrd=$2 suitefile=$3 log=$4
suite=$(basename "$suitefile" .suite)

APPEND=
TIMEOUT=900
NODE0=2G
NODE1=1G
# Suite headers are "#@NAME=value" lines: VM settings the host needs.
eval "$(sed -n 's/^#@\([A-Z0-9_]*\)=\(.*\)$/\1=\2/p' "$suitefile")"
TIMEOUT=$((TIMEOUT * ${VM_TIMEOUT_SCALE:-1}))

to_mib() {
	case $1 in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	esac
}

# watchdog_thresh=60: TCG vCPUs can stall for seconds when the shared host
# is busy, and the default 10 s soft-lockup threshold then fires on code
# that is fine; a real lockup still trips it, or the suite's timeout.
start=$(date +%s)
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
	-accel tcg -cpu max -smp 2 -m "$(($(to_mib "$NODE0") + $(to_mib "$NODE1")))M" \
	-object memory-backend-ram,id=m0,size="$NODE0" \
	-numa node,nodeid=0,cpus=0-1,memdev=m0 \
	-object memory-backend-ram,id=m1,size="$NODE1" \
	-numa node,nodeid=1,memdev=m1 \
	-nographic -no-reboot -net none \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic quiet watchdog_thresh=60 HYPER_SUITE=$suite $APPEND ${VM_APPEND:-}" \
	2>&1 | tr -d '\r' > "$log"
qrc=$?
secs=$(($(date +%s) - start))

block() {
	printf 'HYPER-TEST-BEGIN %s\n%s %s\nHYPER-TEST-END %s status=%s\n' \
		"$1" "$2" "$1" "$1" "$3" >> "$log"
}

if grep -q '^HYPER-VM-ERROR' "$log"; then
	grep '^HYPER-VM-ERROR' "$log" | sed 's/^/# /' >> "$log"
	block "vm:$suite:completed" "not ok" 1
elif grep -q '^HYPER-VM-END' "$log"; then
	block "vm:$suite:completed" ok 0
else
	echo "# VM for suite $suite did not finish (qemu rc $qrc after ${secs}s; timeout ${TIMEOUT}s)" >> "$log"
	block "vm:$suite:completed" "not ok" 1
fi

# Splats are looked for in the dmesg the VM printed at its end and on the
# console itself, so a panic before that point is still caught.
bad='(BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|Call Trace|kernel BUG|refcount_t:|list_(add|del) corruption|soft lockup|hung_task|Kernel panic)'
if grep -E -q "$bad" "$log"; then
	grep -E "$bad" "$log" | sed 's/^/# dmesg: /' | head -n 20 >> "$log"
	block "vm:$suite:dmesg-clean" "not ok" 1
else
	block "vm:$suite:dmesg-clean" ok 0
fi
echo "# vm suite $suite: ${secs}s" >> "$log"
