#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run native test programs, each framed by the markers totals.awk reads.
# usage: run-native.sh LOG TEST...
#
# Timeouts scale with how busy this machine is, as the VM's do with how
# slow it booted (selftests/vm/init): HYPER_TIMEOUT_SCALE from the
# environment, else the load average per CPU when each test starts,
# rounded up, at least 1.  It multiplies the whole program's limit here
# (TEST_TIMEOUT, 600 s) and each kselftest case's own
# (selftests/lib/hyper_timeout.h): a test must not fail because other
# work shares the machine.
set -u
log=$1
shift
: > "$log"
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
for t in "$@"; do
	name=$(basename "$t")
	scale=${HYPER_TIMEOUT_SCALE:-$(awk -v n="$ncpu" \
		'{ s = int($1 / n) + 1; print (s > 100 ? 100 : s) }' /proc/loadavg)}
	{
		echo "HYPER-TEST-BEGIN $name"
		HYPER_TIMEOUT_SCALE=$scale \
			timeout -k 5 "$((${TEST_TIMEOUT:-600} * scale))" "$t" 2>&1
		echo "HYPER-TEST-END $name status=$?"
	} >> "$log"
done
