#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# demo-report's verdict on synthetic reports: what a correct system
# controls (every tensor checked, a valid schedule within its budget, the
# planned peak, the measured peak within the plan) decides the exit
# status; timing is printed next to its targets and judged only with
# --timing-targets (the benchmarks).  A "not ok" line never comes with
# exit 0.  The stall target compares stalls with the wall time, never a
# ratio with zero.  TAP.
# usage: demo_report_test.sh BUILD_DIR
set -u
rep=$1/bin/demo-report
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 fail=0

# report FILE WALL_NS STALL_NS DEVICE_BYTES USES_CHECKED [PRED_STALL_NS
#        [RESIDENT_BYTES [BUDGET_BYTES]]]
report() {
	cat > "$1" <<JSON
{ "ok": true, "backend": "shmem", "wall_ns": $2, "stall_ns": $3,
  "device_bytes": $4, "validated_peak_bytes": $4, "layout_arena_bytes": $4,
  "budget_bytes": ${8:-$4},
  "peak_resident_bytes": ${7:-$4}, "peak_arena_bytes": $4,
  "predicted": { "stall_ns": ${6:-1000000}, "peak_device_bytes": $4 },
  "checks": { "uses_checked": $5, "uses_scheduled": 100, "stride_words": 1 } }
JSON
}

# expect NAME RC PATTERN [!PATTERN] -- ARGS: the exit status, a line that
# must be there and one that must not.  Whatever the case, a "not ok"
# line must never come with exit status 0.
expect() {
	name=$1 want_rc=$2 want=$3 not=$4
	shift 5
	n=$((n + 1))
	"$rep" "$@" > "$dir/out" 2>&1
	rc=$?
	if [ $rc -eq "$want_rc" ] && grep -q -- "$want" "$dir/out" &&
	   { [ -z "$not" ] || ! grep -q -- "$not" "$dir/out"; } &&
	   { [ $rc -ne 0 ] || ! grep -q '^not ok' "$dir/out"; }; then
		echo "ok $n $name"
	else
		echo "not ok $n $name (exit $rc)"
		sed 's/^/# /' "$dir/out"
		fail=1
	fi
}

# stall NAME MET|MISSED PRED_NS MEAS_NS WALL_NS: the stall target's rule,
# judged (--timing-targets) on a run whose wall time is otherwise met.
stall() {
	report "$dir/st.json" "$5" "$4" 50000000 100 "$3"
	report "$dir/stb.json" "$5" 0 100000000 100
	if [ "$2" = met ]; then
		expect "stall rule: $1" 0 "^ok 7 - predicted stall vs measured" "" -- \
			--timing-targets "$dir/stb.json" "$dir/st.json"
	else
		expect "stall rule: $1" 1 "^not ok 7 - predicted stall vs measured" "" -- \
			--timing-targets "$dir/stb.json" "$dir/st.json"
	fi
}

echo "TAP version 13"
echo "1..21"
report "$dir/base.json" 100000000 0 100000000 100
report "$dir/slow.json" 150000000 300000000 50000000 100
report "$dir/short.json" 100000000 1000000 50000000 99
report "$dir/big.json" 100000000 1000000 90000000 100
report "$dir/good.json" 101000000 1000000 50000000 100
report "$dir/over.json" 101000000 1000000 50000000 100 1000000 50004096
report "$dir/overbudget.json" 101000000 1000000 50000000 100 1000000 50000000 40000000
report "$dir/nowall.json" 0 0 50000000 100
expect "slow but correct run: timing marked missed, exit 0, no 'not ok'" 0 \
	"^# timing (judged by the benchmarks, not here): wall time vs baseline: +50.00% (target: within 5%): target missed" \
	"^not ok" -- "$dir/base.json" "$dir/slow.json"
expect "slow but correct run: the stall is marked missed, not judged" 0 \
	"^# timing .*predicted stall vs measured: .*: target missed" "^not ok" -- \
	"$dir/base.json" "$dir/slow.json"
expect "slow but correct run: five judged items, all ok" 0 \
	"^ok 5 - planned run's measured peak within its plan" "^ok 6" -- \
	"$dir/base.json" "$dir/slow.json"
expect "slow run, timing judged (benchmarks): 'not ok' and exit 1" 1 \
	"^not ok 6 - wall time vs baseline" "" -- --timing-targets \
	"$dir/base.json" "$dir/slow.json"
expect "a use left unchecked is a failure" 1 \
	"^not ok 2 - planned run: every tensor checked at every use: 99 of 100" "" -- \
	"$dir/base.json" "$dir/short.json"
expect "a planned peak above 70% is a failure" 1 \
	"^not ok 4 - planned peak device-buffer bytes vs baseline: 90% of the baseline.s (limit 70%)" "" -- \
	"$dir/base.json" "$dir/big.json"
expect "a measured peak over the plan is a failure" 1 \
	"^not ok 5 - planned run's measured peak within its plan" "" -- \
	"$dir/base.json" "$dir/over.json"
expect "a planned peak over the schedule's budget is a failure" 1 \
	"^not ok 3 - planned schedule is valid: .* within its budget of 38.1 MiB" "" -- \
	"$dir/base.json" "$dir/overbudget.json"
expect "timing met: marked met, exit 0" 0 \
	"^# timing .*wall time vs baseline: +1.00% (target: within 5%): target met" \
	"^not ok" -- --max-wall 5 "$dir/base.json" "$dir/good.json"
expect "everything met, timing judged: all ok, exit 0" 0 \
	"^ok 7 - predicted stall" "^not ok" -- --timing-targets --max-wall 5 \
	"$dir/base.json" "$dir/good.json"
expect "a report with no wall time is refused" 2 \
	"no wall_ns or device_bytes" "^ok" -- "$dir/base.json" "$dir/nowall.json"
expect "a bad percentage is refused" 2 \
	"--max-wall 5x: give a percentage" "^ok" -- --max-wall 5x \
	"$dir/base.json" "$dir/good.json"
# The issue's case: 0 predicted, 112 ms measured of a 9.76 s run.
stall "0 predicted, 112 ms measured in 9.76 s: within 2 points" met 0 112000000 9760000000
stall "both zero" met 0 0 100000000
stall "0 predicted, 5% measured: 5 points, no ratio against zero" missed 0 5000000 100000000
stall "5% predicted, 0 measured" missed 5000000 0 100000000
stall "10% and 19%: over 2 points, within 2x, both over 1%" met 10000000 19000000 100000000
stall "10% and 21%: over 2 points and over 2x" missed 10000000 21000000 100000000
stall "1.5% and 3.4%: within 2 points, though 2.3x" met 1500000 3400000 100000000
stall "0.5% and 2.6%: 2.1 points, one under 1%: no ratio taken" missed 500000 2600000 100000000
stall "exactly 2 points apart" met 1000000 3000000 100000000
exit $fail
