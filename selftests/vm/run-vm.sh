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
CPU=max
# Suite headers are "#@NAME=value" lines: VM settings the host needs.
eval "$(sed -n 's/^#@\([A-Z0-9_]*\)=\(.*\)$/\1=\2/p' "$suitefile")"
TIMEOUT=$((TIMEOUT * ${VM_TIMEOUT_SCALE:-1}))

to_mib() {
	case $1 in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	esac
}

# Debian's images are vmlinuz-VERSION, and the VM must boot that version;
# a kernel built here (make check-debug-kernel's bzImage) is named by file.
case $(basename "$kernel") in
vmlinuz-*)
	kver=$(basename "$kernel")
	kver=${kver#vmlinuz-}
	klabel=$(echo "$kver" | cut -d. -f1,2)
	;;
*)
	kver=
	klabel=$(basename "$kernel")
	;;
esac
name=vm:$klabel:$suite
scale_arg=
[ -n "${HYPER_TIMEOUT_SCALE:-}" ] && scale_arg="HYPER_TIMEOUT_SCALE=$HYPER_TIMEOUT_SCALE"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Kills QEMU after the suite's limit times the scale the VM reported.
watchdog() {
	limit=$TIMEOUT
	while sleep 2; do
		s=$(sed -n 's/.*HYPER-VM-BEGIN .*timeout_scale=\([0-9]*\).*/\1/p' "$tmp/log")
		[ -n "$s" ] && limit=$((TIMEOUT * s))
		[ $(($(date +%s) - start)) -ge "$limit" ] || continue
		echo "$limit ${s:-1}" > "$tmp/timedout"
		kill "$(cat "$tmp/pid")" 2>/dev/null
		sleep 10
		kill -9 "$(cat "$tmp/pid")" 2>/dev/null
		return
	done
}

# watchdog_thresh=60: TCG vCPUs can stall for seconds when the shared host
# is busy, and the default 10 s soft-lockup threshold then fires on code
# that is fine; a real lockup still trips it, or the suite's timeout.
boot() {
	start=$(date +%s)
	: > "$tmp/log"
	rm -f "$tmp/timedout"
	watchdog &
	wpid=$!
	qemu-system-x86_64 -pidfile "$tmp/pid" \
		-accel tcg -cpu "$CPU" -smp 2 -m "$(($(to_mib "$NODE0") + $(to_mib "$NODE1")))M" \
		-object memory-backend-ram,id=m0,size="$NODE0" \
		-numa node,nodeid=0,cpus=0-1,memdev=m0 \
		-object memory-backend-ram,id=m1,size="$NODE1" \
		-numa node,nodeid=1,memdev=m1 \
		-nographic -no-reboot -net none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 oops=panic quiet watchdog_thresh=60 no_timer_check HYPER_SUITE=$suite $scale_arg $APPEND ${VM_APPEND:-}" \
		2>&1 | tr -d '\r' > "$tmp/log"
	qrc=$?
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
}

# QEMU's multi-threaded TCG can run a stale int3 that the guest kernel's
# live code patching (text_poke_bp(), when a static key or tracepoint
# flips) has already taken away on the other vCPU: the guest dies with
# "Oops: int3" at a patch site in the kernel's own text.  That is the
# emulator's, not the module's, so such a boot, and only such a boot (an
# int3 trap at a RIP outside any module, and the suite unfinished), is
# booted once more.  The first console log is kept next to LOG, and LOG
# says that the suite was run twice.
rerun_note=
boot
if ! grep -q '^HYPER-VM-END' "$tmp/log" && grep -q 'Oops: int3' "$tmp/log" &&
   ! grep -A6 'Oops: int3' "$tmp/log" | grep -q 'RIP: .*\]$'; then
	cp "$tmp/log" "$log.int3-first"
	rerun_note="# rerun: the first boot died of a TCG int3 race in kernel text patching (Oops: int3 outside any module; console in $log.int3-first)"
	boot
fi
secs=$(($(date +%s) - start))

# Each test's name gets the kernel and the suite in front.
sed "s/^\(HYPER-TEST-BEGIN\|HYPER-TEST-END\) /\1 $name:/" "$tmp/log" > "$log"
[ -n "$rerun_note" ] && echo "$rerun_note" >> "$log"

block() {
	printf 'HYPER-TEST-BEGIN %s\n%s %s\nHYPER-TEST-END %s status=%s\n' \
		"$1" "$2" "$1" "$1" "$3" >> "$log"
}

booted=$(sed -n 's/.*HYPER-VM-BEGIN .*kernel=\([^ ]*\).*/\1/p' "$tmp/log")
if [ -f "$tmp/timedout" ]; then
	read -r limit scale < "$tmp/timedout"
	running=$(awk '/^HYPER-TEST-BEGIN /{t=$2} /^HYPER-TEST-END /{t=""} END{print t}' "$log")
	echo "# timeout: VM for suite $suite on ${kver:-$klabel} killed after ${secs}s (limit ${TIMEOUT}s x scale $scale) while running ${running:-no test (booting, loading or between tests)}" >> "$log"
	block "$name:completed" "not ok" 1
elif [ -n "$kver" ] && [ -n "$booted" ] && [ "$booted" != "$kver" ]; then
	echo "# the VM booted kernel $booted, not $kver" >> "$log"
	block "$name:completed" "not ok" 1
elif grep -q '^HYPER-VM-ERROR' "$tmp/log"; then
	grep '^HYPER-VM-ERROR' "$tmp/log" | sed 's/^/# /' >> "$log"
	block "$name:completed" "not ok" 1
elif grep -q '^HYPER-VM-END' "$tmp/log"; then
	block "$name:completed" ok 0
else
	echo "# VM for suite $suite on ${kver:-$klabel} did not finish (qemu rc $qrc after ${secs}s)" >> "$log"
	block "$name:completed" "not ok" 1
fi

# Splats are looked for in the dmesg the VM printed at its end and on the
# console itself, so a panic before that point is still caught.
bad='(BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|Call Trace|kernel BUG|refcount_t:|list_(add|del) corruption|soft lockup|hung_task|Kernel panic)'
if grep -E -q "$bad" "$tmp/log"; then
	grep -E "$bad" "$tmp/log" | sed 's/^/# dmesg: /' | head -n 20 >> "$log"
	block "$name:dmesg-clean" "not ok" 1
else
	block "$name:dmesg-clean" ok 0
fi
echo "# vm suite $suite on ${kver:-$klabel}: ${secs}s" >> "$log"
