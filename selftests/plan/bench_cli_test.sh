#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# bench-plan's command line: --help, and an option where DIR goes, which
# must be refused (exit 2) before anything is written under its name; a
# missing DIR is made, and one that cannot be is refused at once, named;
# --quick's timed graph follows an untimed first run, shown apart (exit
# 1, a target missed on a slow machine, is not this test's business).
# TAP output.  usage: bench_cli_test.sh BENCH_PLAN (HYPER_PLAN_CONFIGS set)
set -u
bench=$1
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cd "$dir" || exit 1
check "--help prints the usage on stdout and exits 0" \
	eval '"$bench" --help >out 2>err && grep -q "^usage: bench-plan DIR" out && [ ! -s err ]'
check "no DIR is bad usage (2)" \
	eval '"$bench" >out 2>err; [ $? -eq 2 ] && grep -q "^usage:" err'
check "an option in DIR's place is bad usage (2)" \
	eval '"$bench" --scaling >out 2>err; [ $? -eq 2 ] && grep -q "^usage:" err'
check "nothing was made under an option's name" \
	eval '[ -z "$(ls -A)" ] || [ "$(ls -A)" = "out
err" ] || [ "$(ls -A)" = "err
out" ]'
check "a missing DIR is made, and the results written there" \
	eval '"$bench" made --params >out 2>err && [ -s made/plan.json ] &&
	 [ -s made/plan-table.md ]'
check "--quick times its graph after a first run, shown apart" \
	eval '"$bench" quick --quick >out 2>err; [ $? -le 1 ] &&
	 grep -q "\"cpu_ms\": [0-9.]*, \"first_cpu_ms\": [0-9.]*," quick/plan.json &&
	 grep -q "| CPU s | first run CPU s |" quick/plan-table.md &&
	 grep -q "CPU s (median; first run [0-9.]*)" err'
check "a DIR that cannot be made is named, before anything is measured" \
	eval '"$bench" no/such --params >out 2>err; [ $? -eq 1 ] &&
	 grep -q "^bench-plan: no/such: cannot make the output folder" err &&
	 ! grep -q "parameter counts" out && [ ! -e no ]'
finish
