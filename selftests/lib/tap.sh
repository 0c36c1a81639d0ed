# SPDX-License-Identifier: GPL-2.0
# TAP for the shell tests, sourced (packaging, examples, docs, planner).  Each check is `check NAME CMD...`
# (ok when CMD succeeds; its output goes to the log as comments), or
# `skip NAME WHY`.  `finish` prints a kselftest "# Totals:" line, which
# selftests/totals.awk counts (skips included), and sets the exit status.
tap_n=0 tap_pass=0 tap_fail=0 tap_skip=0

check() {
	name=$1
	shift
	tap_n=$((tap_n + 1))
	if out=$("$@" 2>&1); then
		tap_pass=$((tap_pass + 1))
		echo "ok $tap_n $name"
	else
		tap_fail=$((tap_fail + 1))
		printf '%s\n' "$out" | tail -n 25 | sed 's/^/# /'
		echo "not ok $tap_n $name"
	fi
}

skip() {
	tap_n=$((tap_n + 1))
	tap_skip=$((tap_skip + 1))
	echo "ok $tap_n $1 # SKIP $2"
}

finish() {
	echo "1..$tap_n"
	echo "# Totals: pass:$tap_pass fail:$tap_fail xfail:0 xpass:0 skip:$tap_skip error:0"
	[ "$tap_fail" -eq 0 ]
}
