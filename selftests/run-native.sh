#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run native test programs, each framed by the markers totals.awk reads.
# usage: run-native.sh LOG TEST...
set -u
log=$1
shift
: > "$log"
for t in "$@"; do
	name=$(basename "$t")
	{
		echo "HYPER-TEST-BEGIN $name"
		timeout -k 5 "${TEST_TIMEOUT:-600}" "$t" 2>&1
		echo "HYPER-TEST-END $name status=$?"
	} >> "$log"
done
