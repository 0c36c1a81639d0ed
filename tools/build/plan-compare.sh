#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Checks that a refactoring (or a change meant only to make the planner
# faster) left its output unchanged: runs two hyper-plan binaries on every
# shipped config x mode x profile x policy x goal and compares the
# schedules, exit codes and messages byte for byte, and the reports
# without their wall-time "search ms" column.
# usage: tools/build/plan-compare.sh OLD-hyper-plan NEW-hyper-plan WORKDIR
set -u
old=$1 new=$2 dir=$3
configs=$(dirname "$0")/../hyper-plan/configs

run() {	# BINARY OUTDIR
	mkdir -p "$2"
	for c in "$configs"/*.json; do
		m=$(basename "$c" .json)
		for mode in "infer" "infer --decode 32" "infer --seq 4096 --decode 0" \
			"train --layers 6"; do
		for prof in supernode-npu h100-pcie; do
			for pol in plan none distance greedy; do
				for goal in "--slowdown 5" "--slowdown 30" "--budget 8GiB"; do
					tag=$(echo "$m $mode $prof $pol $goal" | tr ' -' '__')
					# shellcheck disable=SC2086
					"$1" --config "$c" --mode $mode -p $prof \
						--policy $pol $goal -o "$2/$tag.json" \
						> "$2/$tag.out" 2> "$2/$tag.err"
					echo $? > "$2/$tag.rc"
				done
			done
		done
		done
	done
}

norm() {	# drops field 9, search ms, from the policy lines
	awk '$1 ~ /^(plan|none|distance|greedy)$/ && NF >= 10 { $9 = "" } { print }' "$1"
}

run "$old" "$dir/old"
run "$new" "$dir/new"
n=0 bad=0
for f in "$dir"/old/*; do
	g=$dir/new/$(basename "$f")
	n=$((n + 1))
	case $f in
	*.out) norm "$f" > "$dir/a"; norm "$g" > "$dir/b"; set -- "$dir/a" "$dir/b" ;;
	*) set -- "$f" "$g" ;;
	esac
	cmp -s "$1" "$2" || { echo "differs: $(basename "$f")"; bad=$((bad + 1)); }
done
echo "$(ls "$dir"/old/*.rc | wc -l) runs, $n files compared, $bad differ"
[ "$bad" = 0 ]
