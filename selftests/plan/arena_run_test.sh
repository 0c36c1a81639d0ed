#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The planner's arena layout end to end: hyper-plan writes its offsets,
# hyper-run (libhyper, shmem backend) runs the schedule at exactly those
# offsets in an arena of exactly its arena_bytes with every tensor checked
# at every use, and a schedule whose offsets were tampered with is refused
# with one line.  Correctness only: no time is judged.  TAP output.
# usage: arena_run_test.sh HYPER_PLAN HYPER_RUN
# $model splits on purpose; check evals its quoted tests.
# shellcheck disable=SC2086,SC2016,SC2034
set -u
. "$(dirname "$0")/lib.sh"

model="-m llama2-7b --scale 16 --dtype fp32 --seq 8 --decode 2 --layers 2 -p gh200"
"$plan" $model --policy none -q -o "$dir/base.json"
peak=$(py 'print(json.load(open(sys.argv[1]))["predicted"]["peak_device_bytes"])' "$dir/base.json")
budget=$((peak * 6 / 10))
"$plan" $model --budget "$budget" -o "$dir/s.json" > "$dir/summary" 2>&1
check "hyper-plan's summary gives arena ÷ peak" eval 'grep -q "arena ÷ peak [0-9.]* (offsets in the schedule)" "$dir/summary"'
check "hyper-plan's summary says what each peak counts, the timed one being the schedule's prediction" \
	eval 'grep -q "^peaks     timed [0-9.]* [KMG]*i*B (the policy rows and the schedule.s predicted peak: a detached tensor counts until its store ends); residency [0-9.]* [KMG]*i*B (prefetch or define to detach); arena [0-9.]* [KMG]*i*B (what the device holds" "$dir/summary"'
"$plan" --passes > "$dir/passes"
check "hyper-plan --passes lists twelve passes and the search loop, which is not one" \
	eval '[ "$(grep -c "^| [0-9][0-9]* | " "$dir/passes")" -eq 12 ] && grep -q "^|  | \*\*search loop\*\* | .* | not a pass" "$dir/passes"'
"$plan" $model --budget "$budget" -q -v -o "$dir/v.json" 2> "$dir/verbose"
check "hyper-plan -v times each pass it runs, in the table's order" \
	eval '[ "$(sed -n "s/^hyper-plan: \(pass \)*\([a-z ]*[a-z]\) *[0-9.]* ms$/\2/p" "$dir/verbose" | tr "\n" ,)" = "deps,order,reorder,life,goal,search loop,validate," ]'
arena=$(py 'print(json.load(open(sys.argv[1])).get("arena_bytes", 0))' "$dir/s.json")
check "the schedule carries its arena ($arena bytes), within the budget ($budget)" \
	eval '[ "$arena" -gt 0 ] && [ "$arena" -le "$budget" ]'
check "and an offset for every residency" \
	eval 'py "
s = json.load(open(sys.argv[1]))
assert all(\"arena_offsets\" in t for t in s[\"tensors\"] if t[\"home\"] == \"device\")
assert sum(len(t.get(\"arena_offsets\", [])) for t in s[\"tensors\"]) > len(s[\"tensors\"]) // 2
" "$dir/s.json"'

"$run" -q -b shmem -c touch -n 2 -o "$dir/r.json" "$dir/s.json"
rc=$?
check "hyper-run runs it" eval '[ "$rc" -eq 0 ]'
check "in an arena of exactly arena_bytes, every use checked" eval 'py "
r = json.load(open(sys.argv[1])); c = r[\"checks\"]
assert r[\"ok\"] and r[\"layout_arena_bytes\"] == int(sys.argv[2])
assert r[\"peak_arena_bytes\"] <= int(sys.argv[2])
assert c[\"uses_checked\"] == c[\"uses_scheduled\"] > 0
" "$dir/r.json" "$arena"'

# Tampered with: one offset off the 64-byte grid.
py '
s = json.load(open(sys.argv[1]))
t = [t for t in s["tensors"] if t.get("arena_offsets")]
t[0]["arena_offsets"][0] += 1
json.dump(s, open(sys.argv[2], "w"))' "$dir/s.json" "$dir/bad.json"
"$run" --validate "$dir/bad.json" > /dev/null 2> "$dir/err"
rc=$?
check "a misaligned offset is refused (exit 2)" \
	eval '[ "$rc" -eq 2 ] && grep -q "arena_offsets\[0\]: offset [0-9]* of tensor \".*\" is not a multiple of 64" "$dir/err"'
py '
s = json.load(open(sys.argv[1]))
t = [t for t in s["tensors"] if t.get("arena_offsets")]
del t[-1]["arena_offsets"]
json.dump(s, open(sys.argv[2], "w"))' "$dir/s.json" "$dir/some.json"
"$run" --validate "$dir/some.json" > /dev/null 2> "$dir/err"
rc=$?
check "offsets on some residencies only are refused (exit 2)" \
	eval '[ "$rc" -eq 2 ] && grep -q "becomes resident [0-9]* times but has 0 offsets" "$dir/err"'
py '
s = json.load(open(sys.argv[1]))
for t in s["tensors"]:
    t["arena_offsets"] = [0] * len(t.get("arena_offsets", []))
json.dump(s, open(sys.argv[2], "w"))' "$dir/s.json" "$dir/overlap.json"
"$run" --validate "$dir/overlap.json" > /dev/null 2> "$dir/err"
rc=$?
check "offsets that overlap are refused, naming both tensors (exit 2)" \
	eval '[ "$rc" -eq 2 ] && grep -q "arena: tensor \".*\" (arena_offsets\[[0-9]*\] = 0, [0-9]* bytes) and tensor \".*\" (arena_offsets\[[0-9]*\] = 0, [0-9]* bytes) are resident together" "$dir/err"'
# hyper-run rounds the arena up to pages: a page less than the schedule's.
"$run" -q -b shmem -c none -d $((arena / 4096 * 4096 - 4096)) -o "$dir/r2.json" "$dir/s.json" 2> "$dir/err"
rc=$?
check "an arena smaller than the schedule's is refused" \
	eval '[ "$rc" -ne 0 ] && grep -q "the schedule places its tensors in an arena of $arena bytes" "$dir/err"'
finish
