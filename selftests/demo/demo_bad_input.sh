#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo with bad input: one clear line, a non-zero exit, no VM left
# behind.  TAP output.  usage: demo_bad_input.sh BUILD_DIR
set -u
O=$1
export O VMLINUZ=/boot/vmlinuz-none VM_INITRD=$O/vm/initramfs.cpio.gz
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 fail=0

# Runs demo.sh with the rest of the arguments; $1 names the case, $2 is
# the text the one line must hold.
case_() {
	name=$1 want=$2
	shift 2
	n=$((n + 1))
	timeout 120 "$@" > "$dir/out" 2> "$dir/err"
	rc=$?
	lines=$(grep -c '^make demo: ' "$dir/err")
	if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "$want" "$dir/err"; then
		echo "ok $n $name"
	else
		echo "not ok $n $name (exit $rc)"
		sed 's/^/# /' "$dir/err"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..6"
echo '{"format":"hyper-schedule","version":1,"tensors":[],"steps":[{"op":"x","uses":["w"]}]}' \
	> "$dir/bad.json"
case_ "a corrupted schedule is refused before anything runs" \
	"is not a valid schedule: .*unknown tensor" \
	env SCHEDULE="$dir/bad.json" tools/demo/demo.sh kmod smoke "$dir/d1"
case_ "a missing schedule file is named" "no such file" \
	env SCHEDULE="$dir/none.json" tools/demo/demo.sh kmod smoke "$dir/d2"
case_ "a missing VM kernel is named" "no VM kernel /boot/vmlinuz-none" \
	tools/demo/demo.sh kmod smoke "$dir/d3"
case_ "a budget below a working set stops the planning" \
	"below the working set" \
	env BUDGET=1M tools/demo/demo.sh shmem smoke "$dir/d4"
case_ "an unknown backend is named" "BACKEND must be kmod or shmem" \
	tools/demo/demo.sh dma smoke "$dir/d5"
n=$((n + 1))
if pgrep -f "qemu-system.*HYPER_SUITE=demo" > /dev/null; then
	echo "not ok $n no demo VM left behind"
	fail=1
else
	echo "ok $n no demo VM left behind"
fi
exit $fail
