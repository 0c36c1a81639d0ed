#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The pieces of make demo-supernode, natively on the shmem backend: a
# schedule split at the first decode step and run in two parts (--until,
# --from), the KV cache handed over through a shared object, and the
# weights published once and run from.  Each check that must fail is
# shown to fail: a KV cache that is not the first part's, an object of
# another split or schedule, a published weight flipped before it was
# published.  TAP output.  usage: handoff_test.sh BUILD_DIR
set -u
O=$1
: "${HYPER_PLAN_CONFIGS:=$PWD/tools/hyper-plan/configs}"
export HYPER_PLAN_CONFIGS
run=$O/san/bin/hyper-run
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The objects of this test only (libhyper's shmem objects directory).
export HYPER_OBJECTS_DIR="$dir/objects"
mkdir -m 0700 "$HYPER_OBJECTS_DIR"
n=0 fail=0

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() {
	n=$((n + 1))
	echo "not ok $n $1"
	[ -f "$dir/err" ] && sed 's/^/# /' "$dir/err"
	fail=1
}
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
# hr NAME ARGS...: hyper-run on shmem, report in $dir/NAME.json, stderr in $dir/err
hr() {
	name=$1
	shift
	timeout 300 "$run" -b shmem -c none -q -o "$dir/$name.json" "$@" \
		2> "$dir/err"
}
# field NAME EXPR: a value of the report, by a jq-like path of json keys
field() {
	/usr/bin/python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    r = r.get(k, {}) if isinstance(r, dict) else {}
print(r if r != {} else "")' "$dir/$1.json" "$2"
}
# expect_fail NAME TEXT ARGS...: hyper-run fails with exit 1 or 2 and one line holding TEXT
expect_fail() {
	what=$1 text=$2
	shift 2
	hr x "$@"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$text" "$dir/err"; then
		ok "$what"
	else
		echo "# exit $rc, wanted a failure saying: $text"
		not_ok "$what"
	fi
}

echo "TAP version 13"
echo "1..17"
"$O/bin/hyper-plan" -m llama2-7b --scale 8 --layers 4 --dtype fp32 --seq 16 \
	--decode 4 --policy none -o "$dir/base.json" > "$dir/plan.txt" 2>&1 || {
	echo "Bail out! hyper-plan failed: $(tail -n 1 "$dir/plan.txt")"
	exit 1
}
peak=$("$run" --validate "$dir/base.json" | sed -n 's/.* peak \([0-9]*\) bytes.*/\1/p')
"$O/bin/hyper-plan" -m llama2-7b --scale 8 --layers 4 --dtype fp32 --seq 16 \
	--decode 4 --budget $((peak / 2)) -o "$dir/s.json" > "$dir/plan.txt" 2>&1 || {
	echo "Bail out! hyper-plan failed: $(tail -n 1 "$dir/plan.txt")"
	exit 1
}
s=$dir/s.json

# 1-3: the split alone, no objects: the second part writes the KV the
# first left (what --kv-object replaces), so its checks hold only if the
# model of the steps before the split is right.
if hr whole "$s" && hr a --until d1.embed "$s" && hr b --from d1.embed "$s" &&
   [ "$(field a checks.uses_checked)" -gt 0 ] &&
   [ $(($(field a checks.uses_checked) + $(field b checks.uses_checked))) -eq "$(field whole checks.uses_checked)" ] &&
   [ "$(field b part.kv_handed_over)" = 4 ]; then
	ok "the two parts of a split schedule check every use of the whole, 4 KV tensors handed over"
else
	not_ok "the two parts of a split schedule check every use of the whole, 4 KV tensors handed over"
fi
expect_fail "the second part fails on a KV cache that is not the first part's" \
	'tensor "L2.kv0" byte .* is not generation' \
	--from d1.embed --inject corrupt:L2.kv0 "$s"
expect_fail "--kv-object without --from is refused" "needs --from STEP" \
	--kv-object kv "$s"
if hr x --at-end "echo held > $dir/held" "$s" && [ -s "$dir/held" ]; then
	ok "--at-end runs its command after the run"
else
	not_ok "--at-end runs its command after the run"
fi
expect_fail "--at-end's failure fails the run" '--at-end: "exit 3" failed (exit status 3)' \
	--at-end "exit 3" "$s"

# 6-17: shared objects, when libhyper has them.
hr probe --weights-object none-such "$s"
if grep -q "without shared objects" "$dir/err"; then
	i=6
	while [ $i -le 17 ]; do
		skip "shared objects case $i" "libhyper has no shared objects"
		i=$((i + 1))
	done
	exit $fail
fi
if grep -q "opening object none-such" "$dir/err"; then
	ok "a missing object is refused by name"
else
	not_ok "a missing object is refused by name"
fi

if hr a --until d1.embed --export-kv kv "$s" &&
   [ "$(field a kv_object.tensors)" = 4 ]; then
	ok "the first part exports its 4 KV tensors"
else
	not_ok "the first part exports its 4 KV tensors"
fi
if hr b --from d1.embed --kv-object kv "$s" &&
   [ "$(field b kv_object.tensors)" = 4 ] &&
   [ "$(field b checks.uses_checked)" = "$(field b checks.uses_scheduled)" ]; then
	ok "the second part decodes from the KV handed over, every use checked"
else
	not_ok "the second part decodes from the KV handed over, every use checked"
fi
expect_fail "the KV handed over at d1.embed fails the checks of a part from d2.embed" \
	'is not generation' --from d2.embed --kv-object kv "$s"
expect_fail "a KV object flipped after the handover fails the checks" \
	'tensor "L1.kv0" byte .* is not generation' \
	--from d1.embed --kv-object kv --inject corrupt:L1.kv0 "$s"
expect_fail "an object of the wrong kind is refused by name" \
	"object kv holds .* kv tensor" --weights-object kv "$s"

npool=$(/usr/bin/python3 -c 'import json,sys
print(sum(1 for t in json.load(open(sys.argv[1]))["tensors"]
          if t["kind"] == "weight" and t["home"] == "pool"))' "$s")
if hr w --publish-weights w "$s" &&
   [ "$(field w weights_object.tensors)" = "$npool" ] && [ "$npool" -gt 0 ]; then
	ok "--publish-weights publishes the $npool weights with a pool copy and runs from them"
else
	not_ok "--publish-weights publishes the $npool weights with a pool copy and runs from them"
fi
if hr w2 --weights-object w "$s" && hr w3 --weights-object w --from d1.embed \
	--kv-object kv "$s"; then
	ok "other runs bind the published weights, the decode with the KV handed over too"
else
	not_ok "other runs bind the published weights, the decode with the KV handed over too"
fi
expect_fail "a published weight cannot be flipped by a run that binds it" \
	"is the object w, which is read-only" --weights-object w \
	--inject corrupt:"$(/usr/bin/python3 -c 'import json,sys
print([t["id"] for t in json.load(open(sys.argv[1]))["tensors"]
       if t["kind"] == "weight" and t["home"] == "pool"][0])' "$s")" "$s"
wbad=$(/usr/bin/python3 -c 'import json,sys
print([t["id"] for t in json.load(open(sys.argv[1]))["tensors"]
       if t["kind"] == "weight" and t["home"] == "pool"][-1])' "$s")
expect_fail "weights flipped before publishing fail the run from them" \
	"tensor \"$wbad\" byte .* is not generation 0" \
	--publish-weights wbad --inject corrupt:"$wbad" "$s"
expect_fail "and fail another run that binds them" \
	"tensor \"$wbad\" byte .* is not generation 0" --weights-object wbad "$s"
expect_fail "a name taken is refused" "publishing object w: .*exists" \
	--publish-weights w "$s"
exit $fail
