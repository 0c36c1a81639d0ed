#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# same-schedules.sh OLD-HYPER-PLAN NEW-HYPER-PLAN [DIR]
#
# Plans every shipped config (tools/hyper-plan/configs) in the four modes
# bench-plan uses, on supernode-npu and h100-pcie, with the plan, distance
# and greedy policies, with both binaries, and compares the schedules byte
# for byte: a change meant to make the planner faster must not change what
# it returns (Documentation/bench-plan.md, "Planning time").  Exits 1 and
# names each schedule that differs.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD-HYPER-PLAN NEW-HYPER-PLAN [DIR]" >&2; exit 2; }
old=$1 new=$2 dir=${3:-$(mktemp -d)}
cfgs=$(dirname "$0")/../hyper-plan/configs
mkdir -p "$dir" || exit 2
n=0 bad=0

for cfg in "$cfgs"/*.json; do
	m=$(basename "$cfg" .json)
	for mode in infer prefill train train-keep; do
		case $mode in
		infer) a="--mode infer --seq 2048 --decode 64" ;;
		prefill) a="--mode infer --seq 8192 --decode 0" ;;
		train) a="--mode train --seq 4096" ;;
		train-keep) a="--mode train --seq 4096 --keep-activations" ;;
		esac
		for prof in supernode-npu h100-pcie; do
			for pol in plan distance greedy; do
				f=$dir/$m.$mode.$prof.$pol
				# shellcheck disable=SC2086
				"$old" --config "$cfg" $a -p $prof --policy $pol \
					-o "$f.old.json" >/dev/null 2>&1
				r1=$?
				# shellcheck disable=SC2086
				"$new" --config "$cfg" $a -p $prof --policy $pol \
					-o "$f.new.json" >/dev/null 2>&1
				r2=$?
				n=$((n + 1))
				if [ $r1 -ne $r2 ] ||
				   ! cmp -s "$f.old.json" "$f.new.json"; then
					echo "differs: $m $mode $prof $pol (exit $r1, $r2)"
					bad=$((bad + 1))
				fi
			done
		done
	done
done
echo "$n schedules compared, $bad differ ($dir)"
[ $bad -eq 0 ]
