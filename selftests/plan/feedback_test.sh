#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# hyper-plan --feedback: a real run's timeline (hyper-run --timeline on the
# shmem backend) replaces the model's operator times, and a timeline of
# another graph, a truncated one and negative timings are refused with one
# line naming the cause.  Correctness only: no time is judged.  TAP output.
# usage: feedback_test.sh HYPER_PLAN HYPER_RUN
# $small splits on purpose; check and refused eval their quoted tests.
# shellcheck disable=SC2086,SC2016,SC2034,SC2317
set -u
. "$(dirname "$0")/lib.sh"

# The one line hyper-plan prints, and its exit status, must be exactly these.
said() {
	[ "$rc" -eq 1 ] && [ "$(cat "$dir/err")" = "hyper-plan: $1" ] && return
	echo "exit $rc, wanted 1; got: $(cat "$dir/err")"
	echo "wanted: hyper-plan: $1"
	return 1
}

refused() {
	check "$1" said "$2"
}

plan_and_run
check "a real run's timeline" eval '[ -s "$dir/t.json" ]'
hash=$(py 'print(json.load(open(sys.argv[2]))["graph"]["hash"])' x "$dir/s.json")
check "the timeline names the schedule's graph" \
	eval '[ -n "$hash" ] && [ "$(py "print(json.load(open(sys.argv[2]))[\"graph\"][\"hash\"])" x "$dir/t.json")" = "$hash" ]'

# With no transfers, the predicted makespan is the sum of the operators'
# times: after --feedback, the mean of each one's measured spans.
"$plan" $small --layers 2 -p gh200 --policy none -q -o "$dir/model.json"
"$plan" $small --layers 2 -p gh200 --policy none -q --feedback "$dir/t.json" \
	-o "$dir/fb.json" 2> "$dir/err"
want=$(py '
t = json.load(open(sys.argv[2])); s = {}; c = {}
for o in t["ops"]:
    s[o["op"]] = s.get(o["op"], 0) + o["end_ns"] - o["start_ns"]
    c[o["op"]] = c.get(o["op"], 0) + 1
print(sum((2 * s[k] + c[k]) // (2 * c[k]) for k in s))' x "$dir/t.json")
mk() { py 'print(json.load(open(sys.argv[2]))["predicted"]["makespan_ns"])' x "$1"; }
check "the prediction's makespan is the measured compute ($want ns)" \
	eval '[ -n "$want" ] && [ "$(mk "$dir/fb.json")" = "$want" ]'
check "and no longer the model's" eval '[ "$(mk "$dir/model.json")" != "$want" ]'

# A run of another graph: by its hash, and without one, by its operators.
"$plan" $small --layers 3 -p gh200 --policy none -q -o "$dir/other.json"
other=$(py 'g = json.load(open(sys.argv[2]))["graph"]; print("\"%s\" (%s)" % (g["name"], g["hash"]))' x "$dir/other.json")
mine=$(py 'g = json.load(open(sys.argv[2]))["graph"]; print("\"%s\" (%s)" % (g["name"], g["hash"]))' x "$dir/s.json")
"$plan" $small --layers 3 -p gh200 -q --feedback "$dir/t.json" -o /dev/null 2> "$dir/err"
rc=$?
refused "a run of another graph is refused" \
	"$dir/t.json: a run of another graph: $mine, not $other; feed back a run of a schedule planned for this graph"
py '
t = json.load(open(sys.argv[2])); del t["graph"]
json.dump(t, open(sys.argv[3], "w"))' x "$dir/t.json" "$dir/anon.json"
"$plan" $small --layers 1 -p gh200 -q --feedback "$dir/anon.json" -o /dev/null 2> "$dir/err"
rc=$?
"$plan" $small --layers 1 -p gh200 --policy none -q -o "$dir/one.json"
name1=$(py 'print(json.load(open(sys.argv[2]))["graph"]["name"])' x "$dir/one.json")
py '
t = json.load(open(sys.argv[2])); o = json.load(open(sys.argv[3]))
ids = set(s["op"] for s in o["steps"])
print([i for i, s in enumerate(t["ops"]) if s["op"] not in ids][0],
      [s["op"] for s in t["ops"] if s["op"] not in ids][0])' \
	x "$dir/t.json" "$dir/one.json" > "$dir/miss"
read -r idx op < "$dir/miss"
refused "a run without a graph hash is matched by operator ids" \
	"$dir/anon.json: ops[$idx]: operator \"$op\" is not in graph \"$name1\": a run of another graph"

size=$(wc -c < "$dir/t.json")
head -c $((size / 2)) "$dir/t.json" > "$dir/cut.json"
"$plan" $small --layers 2 -p gh200 -q --feedback "$dir/cut.json" -o /dev/null 2> "$dir/err"
rc=$?
refused "a truncated timeline is refused" \
	"$dir/cut.json: truncated: the JSON ends early (a run cut short? run hyper-run --timeline again)"

py '
t = json.load(open(sys.argv[2])); t["ops"][1]["end_ns"] = -5
json.dump(t, open(sys.argv[3], "w"))' x "$dir/t.json" "$dir/neg.json"
second=$(py 'print(json.load(open(sys.argv[2]))["ops"][1]["op"])' x "$dir/t.json")
"$plan" $small --layers 2 -p gh200 -q --feedback "$dir/neg.json" -o /dev/null 2> "$dir/err"
rc=$?
refused "a negative time is refused" "$dir/neg.json: ops[1] (\"$second\"): negative end_ns -5"

py '
t = json.load(open(sys.argv[2])); x = t["transfers"][0]; x["end_ns"] = x["start_ns"] - 1
json.dump(t, open(sys.argv[3], "w"))' x "$dir/t.json" "$dir/back.json"
x=$(py 'x = json.load(open(sys.argv[2]))["transfers"][0]; print("(\"%s\"): negative duration: end_ns %d before start_ns %d" % (x["tensor"], x["start_ns"] - 1, x["start_ns"]))' x "$dir/t.json")
"$plan" $small --layers 2 -p gh200 -q --feedback "$dir/back.json" -o /dev/null 2> "$dir/err"
rc=$?
refused "a transfer that ends before it starts is refused" "$dir/back.json: transfers[0] $x"
finish
