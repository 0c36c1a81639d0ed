#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The programs under examples/, which the docs show: they build (make),
# run on the shmem backend on the format document's example and on a
# hyper-plan schedule, and the docs show them as they are.  TAP.
# usage: examples_test.sh SRCDIR OBJDIR "DOC..."
set -u
src=$1 obj=$2 docs=$3
# hyper-plan -m of the build tree reads the sources' configs (it has no
# path compiled in; installed, it reads share/hyper-plan/configs).
: "${HYPER_PLAN_CONFIGS:=$src/tools/hyper-plan/configs}"
export HYPER_PLAN_CONFIGS
. "$src/selftests/lib/tap.sh"
dir=$(mktemp -d /tmp/hyper-examples.XXXXXX)
trap 'rm -rf "$dir"' EXIT
ex=$obj/examples/one_screen

sed -n '/^```json$/,/^```$/p' "$src/Documentation/schedule-format.md" |
	sed '1d;$d' > "$dir/doc.json"
"$obj/bin/hyper-plan" -m llama2-7b --scale 8 --layers 4 --dtype fp32 \
	--seq 16 --decode 4 --budget 30MiB -o "$dir/llama.json" > /dev/null

# $1: the schedule; $2: the line it must print.
runs() {
	out=$("$ex" "$1" shmem 2>&1) || { printf '%s\n' "$out"; return 1; }
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -qx "$2"
}

# The message for a file that is not there, once, and exit status 2.
bad_path() {
	out=$("$ex" /nonexistent/s.json 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ $rc -eq 2 ] && [ "$out" = "one_screen: /nonexistent/s.json: No such file or directory" ]
}

check "one_screen runs the format document's example" runs "$dir/doc.json" \
	"2 steps, 2621440 bytes prefetched, 524288 stored, stall [0-9]* ns, peak 2752512 of 2752512 bytes"
check "one_screen runs a hyper-plan schedule of Llama (weights homed on device and in the pool)" \
	runs "$dir/llama.json" "220 steps, [0-9]* bytes prefetched, [0-9]* stored, stall [0-9]* ns, peak [0-9]* of [0-9]* bytes"
check "one_screen names a missing schedule once" bad_path
# kmod_xfer runs in the VM; here, without the module, it says so.
no_module() {
	out=$("$obj/examples/kmod_xfer" /nonexistent/hyper0 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ $rc -eq 1 ] &&
	[ "$out" = "kmod_xfer: /nonexistent/hyper0: No such file or directory (is hyper.ko loaded?)" ]
}
check "kmod_xfer without the module says so" no_module
# shellcheck disable=SC2086
check "the docs show examples/ as they are ($docs)" \
	sh -c "cd '$src' && tools/build/doc-examples.sh --check $docs"
finish
