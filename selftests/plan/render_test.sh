#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A real run drawn like a plan: hyper-run --timeline on the shmem backend,
# then hyper-plan --timeline to an SVG and a Chrome trace.  TAP output.
# usage: render_test.sh HYPER_PLAN HYPER_RUN
set -u
. "$(dirname "$0")/lib.sh"

plan_and_run --name planned
check "planned a small schedule" eval '[ -s "$dir/s.json" ]'
check "hyper-run wrote a timeline" \
	eval 'grep -q "\"format\":\"hyper-timeline\"" "$dir/t.json"'
"$plan" --timeline "$dir/t.json" --timeline "$dir/t.json" \
	--plot "$dir/m.svg" --trace "$dir/tr.json"
check "one line per run in the SVG" \
	eval '[ "$(grep -c "<polyline" "$dir/m.svg")" -eq 2 ]'
check "compute, transfers and memory in the trace" \
	eval 'grep -q "\"tid\":1" "$dir/tr.json" && grep -q "prefetch " "$dir/tr.json" &&
	 grep -q "\"ph\":\"C\"" "$dir/tr.json"'
check "the trace is JSON" \
	eval 'python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$dir/tr.json" 2>/dev/null ||
	 "$plan" --timeline "$dir/t.json" --trace /dev/null'
# Each transfer's issue, copy start (the copy worker says) and end, in order.
check "every transfer has issue <= copy_ns <= end" \
	eval 'python3 -c "
import json, sys
x = json.load(open(sys.argv[1]))[\"transfers\"]
sys.exit(not x or not all(t[\"start_ns\"] <= t[\"copy_ns\"] <= t[\"end_ns\"] for t in x))
" "$dir/t.json"'
"$(dirname "$plan")/hyper-timeline" --stalls "$dir/t.json" > "$dir/stalls" 2>&1
check "hyper-timeline --stalls splits the stall" \
	eval 'grep -q "^  queued" "$dir/stalls" && grep -q "^  copying" "$dir/stalls" &&
	 grep -q "queue wait:" "$dir/stalls"'
echo '{"format":"hyper-schedule"}' > "$dir/bad.json"
"$plan" --timeline "$dir/bad.json" --plot "$dir/x.svg" 2> "$dir/err"
rc=$?
check "a file that is no timeline is refused (exit 1)" eval '[ $rc -eq 1 ] &&
	grep -q "not a hyper-timeline" "$dir/err"'
"$plan" --timeline "$dir/t.json" 2> "$dir/err"
rc=$?
check "a timeline with nothing to draw is a usage error (exit 2)" \
	eval '[ $rc -eq 2 ]'
finish
