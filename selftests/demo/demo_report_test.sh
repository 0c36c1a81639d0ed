#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# demo-report's verdict: what is judged decides the exit status, and the
# two always agree; timing is judged only with --timing-targets.  TAP.
# usage: demo_report_test.sh BUILD_DIR
set -u
rep=$1/bin/demo-report
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 fail=0

# report FILE WALL_NS STALL_NS DEVICE_BYTES USES_CHECKED
report() {
	cat > "$1" <<JSON
{ "ok": true, "backend": "shmem", "wall_ns": $2, "stall_ns": $3,
  "device_bytes": $4, "validated_peak_bytes": $4,
  "predicted": { "stall_ns": 1000000, "peak_device_bytes": $4 },
  "checks": { "uses_checked": $5, "uses_scheduled": 100, "stride_words": 1 } }
JSON
}

# expect NAME RC PATTERN [!PATTERN] -- ARGS: the exit status, a line that
# must be there and one that must not.
expect() {
	name=$1 want_rc=$2 want=$3 not=$4
	shift 5
	n=$((n + 1))
	"$rep" "$@" > "$dir/out" 2>&1
	rc=$?
	if [ $rc -eq "$want_rc" ] && grep -q -- "$want" "$dir/out" &&
	   { [ -z "$not" ] || ! grep -q -- "$not" "$dir/out"; }; then
		echo "ok $n $name"
	else
		echo "not ok $n $name (exit $rc)"
		sed 's/^/# /' "$dir/out"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..5"
report "$dir/base.json" 100000000 0 100000000 100
report "$dir/slow.json" 150000000 300000000 50000000 100
report "$dir/short.json" 100000000 1000000 50000000 99
report "$dir/big.json" 100000000 1000000 90000000 100
report "$dir/good.json" 101000000 1000000 50000000 100
expect "slow planned run, timing reported: exit 0, no 'not ok'" 0 \
	"^# wall time vs baseline: +50.00%" "^not ok" -- \
	"$dir/base.json" "$dir/slow.json"
expect "slow planned run, timing judged: 'not ok' and exit 1" 1 \
	"^not ok 5 - wall time vs baseline" "" -- --timing-targets \
	"$dir/base.json" "$dir/slow.json"
expect "a use left unchecked is a failure" 1 \
	"^not ok 2 - planned run: every tensor checked at every use: 99 of 100" "" -- \
	"$dir/base.json" "$dir/short.json"
expect "a planned peak above 70% is a failure" 1 \
	"^not ok 4 - planned peak device-buffer bytes vs baseline: 90% of the baseline.s (limit 70%)" "" -- \
	"$dir/base.json" "$dir/big.json"
expect "everything met: all judged lines ok, exit 0" 0 \
	"^ok 4 - planned peak" "^not ok" -- --timing-targets --max-wall 5 \
	"$dir/base.json" "$dir/good.json"
exit $fail
