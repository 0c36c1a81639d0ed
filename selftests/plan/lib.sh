# SPDX-License-Identifier: GPL-2.0
# What the planner's script tests share, sourced after `set -u`: the two
# binaries ($plan, $run), a scratch $dir, TAP (selftests/lib/tap.sh), and a small model
# really run.  Correctness only: no time is judged.
# usage: . lib.sh HYPER_PLAN HYPER_RUN
# shellcheck shell=sh disable=SC2034,SC2086
plan=$1 run=$2
# hyper-plan -m of the build tree reads the sources' configs (it has no
# path compiled in; installed, it reads share/hyper-plan/configs).
: "${HYPER_PLAN_CONFIGS:=$(cd "$(dirname "$0")/../../tools/hyper-plan/configs" && pwd)}"
export HYPER_PLAN_CONFIGS
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# py CODE [ARG...]: run CODE with json and sys imported (reading the
# planner's and hyper-run's JSON files).
py() {
	code=$1
	shift
	python3 -c "import json, sys; $code" "$@"
}

# Llama-2 7B cut down to seconds under the sanitizers; hyper-plan options.
small="-m llama2-7b --scale 32 --dtype fp32 --seq 8 --decode 2"

# plan_and_run [HYPER-RUN OPTION...]: two layers of $small planned under a
# budget of two thirds of their peak, which forces transfers into the run
# ($dir/s.json), run on shmem with real GEMMs: report $dir/r.json,
# timeline $dir/t.json.
plan_and_run() {
	"$plan" $small --layers 2 -p gh200 --budget 2MiB -o "$dir/s.json" \
		>/dev/null 2>&1
	"$run" -q -b shmem -c gemm --timeline "$dir/t.json" -o "$dir/r.json" \
		"$@" "$dir/s.json"
}
