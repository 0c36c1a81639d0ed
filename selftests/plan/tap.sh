# SPDX-License-Identifier: GPL-2.0
# TAP for the planner's script tests, sourced after `set -u`: a scratch
# $dir removed on exit, and check (NAME, then a test string it evals;
# $n cases, $fail set by any).  lib.sh adds the planner's binaries.
# usage: . tap.sh
# shellcheck shell=sh disable=SC2034
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 fail=0

check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		fail=1
	fi
}
