#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo with bad input: one clear line, a non-zero exit, no VM left
# behind.  TAP output.  usage: demo_bad_input.sh BUILD_DIR
set -u
O=$1
# hyper-plan -m of the build tree reads the sources' configs (it has no
# path compiled in; installed, it reads share/hyper-plan/configs).
: "${HYPER_PLAN_CONFIGS:=$PWD/tools/hyper-plan/configs}"
export HYPER_PLAN_CONFIGS
export O VMLINUZ=/boot/vmlinuz-none VM_INITRD=$O/vm/initramfs.cpio.gz
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 fail=0

# Runs demo.sh with the rest of the arguments; $1 names the case, $2 is
# the text the one line must hold, after "$prefix: ".
prefix='make demo'
case_() {
	name=$1 want=$2
	shift 2
	n=$((n + 1))
	timeout 120 "$@" > "$dir/out" 2> "$dir/err"
	rc=$?
	lines=$(grep -c "^$prefix: " "$dir/err")
	if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "$want" "$dir/err"; then
		echo "ok $n $name"
	else
		echo "not ok $n $name (exit $rc)"
		sed 's/^/# /' "$dir/err"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..14"
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

# Schedules of another model, and of this one with no graph named.
bin=$O/bin
"$bin/hyper-plan" --model random --ops 12 --seed 3 -o "$dir/other.json" > /dev/null 2>&1
"$bin/hyper-plan" -m llama2-7b --scale 8 --layers 4 --dtype fp32 --seq 16 \
	--decode 4 --policy none -o "$dir/mine.json" > /dev/null 2>&1
sed '/^ "graph": /d' "$dir/mine.json" > "$dir/unnamed.json"
case_ "another model's schedule is refused before a VM boots" \
	"^make demo: SCHEDULE=other.json was planned for another graph (fnv1a64:[0-9a-f]*), not for the demo's model (fnv1a64:[0-9a-f]*); make one with: hyper-plan -m llama2-7b" \
	env SCHEDULE="$dir/other.json" tools/demo/demo.sh kmod smoke "$dir/d6"
case_ "BUDGET=64MB_ gets the planner's error, not its usage" \
	"^make demo: BUDGET=64MB_: --budget: \"64MB_\" is not a size (use e.g. 2GiB)\$" \
	env BUDGET=64MB_ tools/demo/demo.sh kmod smoke "$dir/d7"
case_ "BUDGET=1MiB is refused before a VM boots" \
	"^make demo: BUDGET=1MiB: budget 1.00 MiB (1048576 bytes) is below the working set" \
	env BUDGET=1MiB tools/demo/demo.sh kmod smoke "$dir/d8"
# It goes on, with a warning, to the next check: here the missing kernel.
case_ "a schedule that names no graph runs with a warning" \
	"no VM kernel" env SCHEDULE="$dir/unnamed.json" \
	tools/demo/demo.sh kmod smoke "$dir/d9"
n=$((n + 1))
if grep -q "^  warning: SCHEDULE=unnamed.json does not say which graph it was planned for; cannot check that it is for the demo's model (fnv1a64:[0-9a-f]*)$" "$dir/out"; then
	echo "ok $n ... and the warning says it cannot tell"
else
	echo "not ok $n ... and the warning says it cannot tell"
	sed 's/^/# /' "$dir/out"
	fail=1
fi

# make itself: a missing SCHEDULE stops it before it builds anything.
n=$((n + 1))
(unset MAKEFLAGS MFLAGS MAKELEVEL; make demo SCHEDULE=/missing.json) \
	> "$dir/out" 2> "$dir/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l < "$dir/err")" -eq 1 ] &&
   grep -q '^tools/demo/demo.mk:[0-9]*: \*\*\* SCHEDULE=/missing.json: no such file; give the path of a schedule that hyper-plan wrote.  Stop.$' "$dir/err"; then
	echo "ok $n make demo SCHEDULE=/missing.json: one line, before any build"
else
	echo "not ok $n make demo SCHEDULE=/missing.json: one line, before any build (exit $rc)"
	sed 's/^/# /' "$dir/out" "$dir/err"
	fail=1
fi

# make demo-supernode's script: the same, its lines "make demo-supernode: ".
prefix='make demo-supernode'
case_ "demo-supernode: an unknown SIZE is named" \
	"SIZE must be full or smoke, not 'huge'" \
	tools/demo/demo-supernode.sh huge "$dir/s1"
case_ "demo-supernode: a missing VM kernel is named" \
	"no VM kernel /boot/vmlinuz-none" \
	tools/demo/demo-supernode.sh smoke "$dir/s2"

n=$((n + 1))
# Every refusal above comes before the VM: none of them booted one (the
# VM's console log is the first thing run-vm.sh writes).  Other demos on
# the machine are none of this test's business.
if find "$dir" -name vm.log | grep -q .; then
	echo "not ok $n no refusal booted a VM"
	find "$dir" -name vm.log | sed 's/^/# booted: /'
	fail=1
else
	echo "ok $n no refusal booted a VM"
fi
exit $fail
