#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make demo-supernode, on each node of the two-guest bed
# (tools/demo/demo-supernode.suite, selftests/vm/run-2vm.sh): node
# HYPER_NODE of two, hyper.ko loaded with node_id, the guests meeting at
# barriers of the ivshmem mailbox (kmod_twonode_sync).
#
#  1. Both plan the demo's model the same way (hyper-plan's default
#     profile: the same schedule on both, checked by its md5 through the
#     mailbox).  Node 0 formats the pool, both join.
#  2. Two private copies: both run the schedule at once, each with its
#     own pool copies of the weights, and read the pool's usage while
#     both still hold everything (hyper-run --at-end).  Both leave and
#     join again, which gives their chunks back (a node keeps its chunks
#     after its regions are freed, until it leaves).
#  3. One shared copy: node 0 publishes the weights' pool copies as the
#     object demo-weights (hyper-run --publish-weights, itself a checked
#     run from it) and gives its chunks back again; both run from it at
#     once, and read the usage again.
#  4. The KV handoff: node 0 runs the prompt (the steps before d1.embed)
#     and exports its KV cache as the object demo-kv; node 1 decodes (the
#     steps from d1.embed on) from it and from the shared weights.  Node
#     1 then shows that its checks would catch a KV cache that is not
#     node 0's: from d2.embed on, the same object must fail them.
# Every run checks every tensor at every use.  The figures are lines
# "demo-sn: KEY VALUE" on the console; the last line of the node is
# "demo-sn: status 0" or "demo-sn: status 1", after a "demo-sn: failed:
# WHY" line.
#
# usage: demo-supernode-run.sh OUTDIR smoke|full
set -u
out=$1 size=$2
node=${HYPER_NODE:?not a node of the two-guest bed}
other=$((1 - node))
dev=/sys/class/hyper/hyper0
weights=demo-weights kv=demo-kv split=d1.embed

fig() { echo "demo-sn: $*"; }
say() { echo "demo: node $node: $*"; }
die() {
	fig "failed: node $node: $*"
	fig "status 1"
	exit 1
}
meet() {
	kmod_twonode_sync barrier "$1" ||
		die "node $other did not reach \"$1\" (its console says why)"
}
# run NAME ARGS...: hyper-run on kmod with SGEMM compute; its report is
# OUTDIR/NAME.json, its stderr OUTDIR/NAME.err.
run() {
	name=$1
	shift
	hyper-run -q -b kmod -c gemm --name "$name" -o "$out/$name.json" "$@" \
		"$out/schedule.json" 2> "$out/$name.err"
}
# The pool's usage while both nodes hold what their runs took.
measure() {
	# shellcheck disable=SC2016 # expanded by hyper-run's sh -c, then
	printf 'kmod_twonode_sync barrier %s-held && echo "demo-sn: %s node_used $(cat %s/node_used)" && echo "demo-sn: %s used $(cat %s/used)" && kmod_twonode_sync barrier %s-read' \
		"$1" "$1" "$dev" "$1" "$dev" "$1"
}
# Leave and join again: the chunks this node keeps after its regions
# are freed go back to the pool.
rejoin() {
	hyperctl pool leave > "$out/leave.txt" 2>&1 ||
		die "hyperctl pool leave: $(tail -n 1 "$out/leave.txt")"
	hyperctl pool join > "$out/join.txt" 2>&1 ||
		die "hyperctl pool join: $(tail -n 1 "$out/join.txt")"
}
field() { sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" "$out/$1.json" | head -n 1; }

case $size in
smoke)	layers=4 ;;
*)	layers=8 ;;
esac
model="-m llama2-7b --scale 8 --layers $layers --dtype fp32 --seq 16 --decode 4"
mkdir -p "$out" || die "cannot create $out"

# 1. The same schedule on both nodes.
# shellcheck disable=SC2086
hyper-plan $model --policy none -o "$out/baseline.json" > "$out/plan.txt" 2>&1 ||
	die "planning the baseline failed: $(tail -n 1 "$out/plan.txt")"
peak=$(hyper-run --validate "$out/baseline.json" | sed -n 's/.* peak \([0-9]*\) bytes.*/\1/p')
[ -n "$peak" ] || die "the baseline schedule has no peak"
# shellcheck disable=SC2086
hyper-plan $model --budget $((peak / 2)) -o "$out/schedule.json" \
	> "$out/plan.txt" 2>&1 ||
	die "planning failed: $(tail -n 1 "$out/plan.txt")"
sum=$(md5sum < "$out/schedule.json" | cut -c 1-15)
kmod_twonode_sync put 0 "0x$sum" || die "cannot write the mailbox"
meet planned
[ "$(kmod_twonode_sync get "$other" 0)" = "$((0x$sum))" ] ||
	die "node $other planned another schedule than this node's"
fig "model $model"
fig "schedule $(hyper-run --validate "$out/schedule.json" | sed 's/^[^:]*: //')"
say "planned $model under half the unplanned peak ($peak bytes)"

if [ "$node" = 0 ]; then
	hyperctl pool format > "$out/format.txt" 2>&1 ||
		die "hyperctl pool format: $(tail -n 1 "$out/format.txt")"
fi
meet formatted
hyperctl pool join > "$out/join.txt" 2>&1 ||
	die "hyperctl pool join: $(tail -n 1 "$out/join.txt")"
meet joined

# 2. Two private copies of the weights.
run private --at-end "$(measure private)" ||
	die "the run with private weights failed: $(tail -n 1 "$out/private.err")"
say "ran with private weights: every use checked"
rejoin
meet rejoined

# 3. One shared copy.
if [ "$node" = 0 ]; then
	run publish --publish-weights "$weights" -c none ||
		die "publishing the weights failed: $(tail -n 1 "$out/publish.err")"
	fig "weights_object_bytes $(field publish bytes)"
	fig "weights_object_tensors $(field publish tensors)"
	fig "weights_tensor_bytes $(field publish tensor_bytes)"
	say "published the weights' pool copies as the object $weights, ran from it"
	# Its run took chunks for private copies first: give them back (the
	# object's chunks are the pool's, not this node's).
	rejoin
fi
meet published
run shared --weights-object "$weights" --at-end "$(measure shared)" ||
	die "the run from the shared weights failed: $(tail -n 1 "$out/shared.err")"
fig "shared_weights_tensors $(field shared tensors)"
say "ran from the shared weights: every use checked"

# 4. The KV cache handed from node 0 to node 1.
if [ "$node" = 0 ]; then
	run prompt --weights-object "$weights" --until "$split" --export-kv "$kv" ||
		die "the prompt failed: $(tail -n 1 "$out/prompt.err")"
	fig "prompt_steps $(field prompt end_step)"
	fig "kv_handed_over $(field prompt kv_handed_over)"
	fig "kv_object_bytes $(sed -n '/"kv_object"/,/}/p' "$out/prompt.json" | sed -n 's/.*"bytes": *\([0-9]*\).*/\1/p')"
	say "ran the prompt (the steps before $split), exported its KV cache as $kv"
fi
meet kv-exported
if [ "$node" = 1 ]; then
	run decode --weights-object "$weights" --from "$split" --kv-object "$kv" ||
		die "the decode from node 0's KV cache failed: $(tail -n 1 "$out/decode.err")"
	fig "decode_first_step $(field decode first_step)"
	fig "decode_steps $(field decode steps)"
	fig "decode_uses_checked $(field decode uses_checked)"
	fig "decode_uses_scheduled $(field decode uses_scheduled)"
	say "decoded from node 0's KV cache (the steps from $split on): every use checked"
	# The same object, at another split: the checks must catch it.
	if run wrong-split --weights-object "$weights" --from d2.embed \
		--kv-object "$kv"; then
		die "a KV cache of another split passed the checks"
	fi
	grep -q 'is not generation' "$out/wrong-split.err" ||
		die "a KV cache of another split failed for another reason: $(tail -n 1 "$out/wrong-split.err")"
	fig "wrong_kv_caught $(tail -n 1 "$out/wrong-split.err" | sed 's/^hyper-run: //')"
	say "a KV cache of another split fails the checks, as it must"
fi
meet finished
fig "status 0"
