#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The demo's work, wherever it runs (in the VM on the kmod backend, or on
# the host on shmem): measure the machine, plan a scaled Llama inference
# with hyper-plan under half the unplanned peak, and run it through
# libhyper with real SGEMM compute, every tensor resident (baseline) and as
# planned, three times each, interleaved.  The median run of each is kept
# as baseline-run.json / planned-run.json with its timeline.
#
# usage: demo-run.sh OUTDIR full|smoke|long kmod|shmem
# env:   HYPER_PLAN, HYPER_RUN  the binaries (default: found on PATH)
#        HYPER_DEMO_BUDGET      plan under this device budget (hyper-plan
#                               --budget syntax) instead of half the peak
#        HYPER_DEMO_SCHEDULE    run this schedule instead of the plan
# The last line on stderr says what failed, if anything; exit status 1.
set -u
out=$1 size=$2 backend=$3
plan=${HYPER_PLAN:-hyper-plan}
run=${HYPER_RUN:-hyper-run}

say() { echo "demo: $*" >&2; }
die() { say "$*"; exit 1; }

# Llama-2 7B's layer structure at 1/8 of its width: hidden 512, 4 heads of
# 128, feed-forward 1376, vocabulary 4000; fp32 for CPU SGEMM.
case $size in
smoke)	layers=4 seq=16 decode=4 ;;
# bench-native: a long prompt, so that compute per step is >= 1 ms natively
long)	layers=8 seq=1024 decode=1 ;;
*)	layers=8 seq=16 decode=8 ;;
esac
model="-m llama2-7b --scale 8 --layers $layers --dtype fp32 --seq $seq --decode $decode"
mkdir -p "$out" || die "cannot create $out"

say "measuring this machine for the planner"
"$plan" --measure-profile -o "$out/profile.json" > "$out/profile.txt" 2>&1 ||
	die "measuring the machine failed: $(tail -n 1 "$out/profile.txt")"
cat "$out/profile.txt" >&2
# shellcheck disable=SC2086
"$plan" $model --profile-file "$out/profile.json" --policy none \
	-o "$out/baseline.json" > "$out/plan-baseline.txt" 2>&1 ||
	die "planning the baseline failed: $(tail -n 1 "$out/plan-baseline.txt")"
peak=$("$run" --validate "$out/baseline.json" | sed -n 's/.* peak \([0-9]*\) bytes.*/\1/p')
[ -n "$peak" ] || die "the baseline schedule has no peak"
budget=${HYPER_DEMO_BUDGET:-$((peak / 2))}
say "planning: $model, unplanned peak $peak bytes, budget $budget"
# shellcheck disable=SC2086
"$plan" $model --profile-file "$out/profile.json" --budget "$budget" \
	--compare -o "$out/planned.json" > "$out/plan.txt" 2>&1 ||
	die "planning failed: $(tail -n 1 "$out/plan.txt")"
cat "$out/plan.txt" >&2
if [ -n "${HYPER_DEMO_SCHEDULE:-}" ]; then
	say "running $HYPER_DEMO_SCHEDULE instead of the plan"
	cp "$HYPER_DEMO_SCHEDULE" "$out/planned.json" ||
		die "cannot read $HYPER_DEMO_SCHEDULE"
fi

wall() { sed -n 's/.*"wall_ns": *\([0-9]*\).*/\1/p' "$1"; }

# The machine is shared and noisy: pairs, interleaved, medians kept.
for i in 1 2 3; do
	for r in baseline planned; do
		say "run $i of 3: the $r schedule on the $backend backend"
		"$run" -q -b "$backend" -c gemm --name "$r" \
			--timeline "$out/$r-timeline-$i.json" \
			-o "$out/$r-run-$i.json" "$out/$r.json" \
			2> "$out/$r-run.err" ||
			die "the $r run failed: $(tail -n 1 "$out/$r-run.err")"
	done
done
for r in baseline planned; do
	med=$(for i in 1 2 3; do echo "$(wall "$out/$r-run-$i.json") $i"; done |
	      sort -n | sed -n 2p | cut -d' ' -f2)
	cp "$out/$r-run-$med.json" "$out/$r-run.json"
	cp "$out/$r-timeline-$med.json" "$out/$r-timeline.json"
	rm -f "$out/$r-timeline-"?.json
	say "$r: median of 3 is run $med: $(wall "$out/$r-run.json") ns"
done
say "done"
