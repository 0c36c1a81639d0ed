#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check-stress [N=3]: the test suite under load.  Clones the committed
# HEAD afresh for each of N runs of `make check` (as CI does), with a CPU
# hog (stress-ng) on every core for the whole time, and prints each run's
# totals line.  Exit status 0 only if every run ended "N passed, 0 failed".
# make demo-stress [N=3]: the same for `make demo` (GOAL demo), each run's
# line its verdict (its last "make demo:" line); every run must exit 0.
#
# usage: check-stress.sh [N [GOAL]]   GOAL: check (default) or demo
#
# It takes N times as long as the goal on a loaded machine: run it before
# a submission that touches tests or timing, not on every change.
set -u
n=${1:-3}
goal=${2:-check}
case $goal in check|demo) ;; *) echo "check-stress: GOAL must be check or demo, not '$goal'" >&2; exit 2 ;; esac
top=$(git rev-parse --show-toplevel) || exit 2
case $n in ''|*[!0-9]*|0) echo "check-stress: N must be a positive count, not '$n'" >&2; exit 2 ;; esac
command -v stress-ng > /dev/null ||
	{ echo "check-stress: stress-ng is missing; install it with: apt-get install -y stress-ng (or make deps)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/hyper-check-stress.XXXXXX") || exit 2
cpus=$(nproc)
stress-ng --cpu "$cpus" --cpu-method matrixprod --quiet &
hog=$!
# The hog and the clones go, whatever happens.
trap 'kill "$hog" 2> /dev/null; wait "$hog" 2> /dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
echo "$goal-stress: $n run(s) of make $goal on fresh clones of $(git -C "$top" rev-parse --short HEAD), stress-ng --cpu $cpus (pid $hog) running"
fail=0
i=1
while [ "$i" -le "$n" ]; do
	dir=$work/run$i
	git clone --quiet "$top" "$dir" || exit 2
	log=$work/run$i.log
	# As from a shell: nothing of the calling make's settings leaks in.
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u HYPER_DEPS_CHECKED \
		make -C "$dir" "$goal" > "$log" 2>&1
	rc=$?
	if [ "$goal" = check ]; then
		tot=$(tail -n 1 "$dir/build/results/totals" 2>/dev/null)
		[ -n "$tot" ] || tot="no totals (make check stopped early: exit $rc)"
	else
		# make -C prints its "Leaving directory" after the verdict.
		tot=$(grep '^make demo: ' "$log" | tail -n 1)
		[ -n "$tot" ] || tot="no verdict (make demo stopped early)"
		tot="$tot (exit $rc)"
	fi
	echo "run $i of $n: $tot"
	if [ $rc -ne 0 ]; then
		fail=1
		keep=$top/build/$goal-stress
		mkdir -p "$keep"
		cp "$log" "$keep/run$i.log"
		cp -r "$dir/build/results" "$keep/results$i" 2> /dev/null
		[ "$goal" = demo ] && cp -r "$dir/build/demo" "$keep/demo$i" 2> /dev/null
		echo "  (log: build/$goal-stress/run$i.log)"
	fi
	rm -rf "$dir"
	i=$((i + 1))
done
[ $fail -eq 0 ] && echo "$goal-stress: ok: $n of $n runs passed under load" ||
	echo "$goal-stress: not ok: a run failed under load"
exit $fail
