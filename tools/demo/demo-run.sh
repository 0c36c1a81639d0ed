#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The demo's work, wherever it runs (in the VM on the kmod backend, or on
# the host on shmem): measure the machine, plan a scaled Llama inference
# with hyper-plan under half the unplanned peak, and run it through
# libhyper with real SGEMM compute, every tensor resident (baseline) and as
# planned, three times each, interleaved.  The median run of each is kept
# as baseline-run.json / planned-run.json with its timeline.
#
# usage: demo-run.sh OUTDIR full|smoke|long kmod|shmem|preflight
# preflight: only plan (on the planner's default profile) and check the
# budget and the schedule against the model, where the run is not: what
# demo.sh does on the host before it boots the VM.
# env:   HYPER_PLAN, HYPER_RUN  the binaries (default: found on PATH)
#        HYPER_DEMO_BUDGET      plan under this device budget (hyper-plan
#                               --budget syntax) instead of half the peak
#        HYPER_DEMO_SCHEDULE    run this schedule instead of the plan
#        HYPER_DEMO_MEASURE     options for hyper-plan --measure-profile,
#                               so that it measures the copy path the run
#                               uses (e.g. "--copy-cpu 1 --compute-cpu 0")
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

# The planner's own error line, not the usage it may print after it.
plan_err() { grep -m 1 '^hyper-plan: ' "$1" | sed 's/^hyper-plan: //' || tail -n 1 "$1"; }

if [ "$backend" = preflight ]; then
	profile=
else
	say "measuring this machine for the planner"
	# shellcheck disable=SC2086
	"$plan" --measure-profile ${HYPER_DEMO_MEASURE:-} -o "$out/profile.json" \
		> "$out/profile.txt" 2>&1 ||
		die "measuring the machine failed: $(tail -n 1 "$out/profile.txt")"
	cat "$out/profile.txt" >&2
	profile="--profile-file $out/profile.json"
fi
# shellcheck disable=SC2086
"$plan" $model $profile --policy none \
	-o "$out/baseline.json" > "$out/plan-baseline.txt" 2>&1 ||
	die "planning the baseline failed: $(plan_err "$out/plan-baseline.txt")"
peak=$("$run" --validate "$out/baseline.json" | sed -n 's/.* peak \([0-9]*\) bytes.*/\1/p')
[ -n "$peak" ] || die "the baseline schedule has no peak"
budget=${HYPER_DEMO_BUDGET:-$((peak / 2))}
say "planning: $model, unplanned peak $peak bytes, budget $budget"
# shellcheck disable=SC2086
"$plan" $model $profile --budget "$budget" \
	--compare -o "$out/planned.json" > "$out/plan.txt" 2>&1 ||
	die "${HYPER_DEMO_BUDGET:+BUDGET=$HYPER_DEMO_BUDGET: }$(plan_err "$out/plan.txt")"
[ "$backend" = preflight ] || cat "$out/plan.txt" >&2
if [ -n "${HYPER_DEMO_SCHEDULE:-}" ]; then
	# It must be a schedule of this model's graph, which hyper-plan names
	# ("graph": {"hash": ...}, Documentation/schedule-format.md).
	graph() { "$run" --validate "$1" 2> /dev/null | sed -n 's/.*, graph \(.*\)$/\1/p'; }
	sched=$(basename "$HYPER_DEMO_SCHEDULE")
	mine=$(graph "$out/baseline.json") theirs=$(graph "$HYPER_DEMO_SCHEDULE")
	[ -n "$theirs" ] || die "SCHEDULE=$sched: $("$run" --validate "$HYPER_DEMO_SCHEDULE" 2>&1 | tail -n 1 | sed 's/^hyper-run: //')"
	if [ "$theirs" = "not named" ]; then
		say "warning: SCHEDULE=$sched does not say which graph it was planned for; cannot check that it is for the demo's model ($mine)"
	elif [ "$theirs" != "$mine" ]; then
		die "SCHEDULE=$sched was planned for another graph ($theirs), not for the demo's model ($mine); make one with: hyper-plan $model -o FILE"
	fi
	[ "$backend" = preflight ] && exit 0
	say "running $HYPER_DEMO_SCHEDULE instead of the plan"
	cp "$HYPER_DEMO_SCHEDULE" "$out/planned.json" ||
		die "cannot read $HYPER_DEMO_SCHEDULE"
fi
[ "$backend" = preflight ] && exit 0

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
