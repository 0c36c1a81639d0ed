#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Read a VM log from the debug kernel (tools/build/debug-kernel.sh) and
# append one test block per checker: that KASAN, lockdep and kmemleak were
# really running, and that none of them reported anything.  run-vm.sh's own
# dmesg check catches most splats by their "BUG:"/"WARNING:" prefix; these
# blocks name the checker, and add what that check cannot see: kmemleak's
# report, which the VM's init prints only on request, never in dmesg.
#
# usage: debug-kernel-scan.sh LOG SUITE
set -u
log=$1 suite=$2

block() {
	printf 'HYPER-TEST-BEGIN %s\n%s %s\nHYPER-TEST-END %s status=%s\n' \
		"$1" "$2" "$1" "$1" "$3" >> "$log"
}

# check NAME PATTERN: "not ok" with the matching lines when PATTERN is found.
check() {
	if grep -E -q "$2" "$log"; then
		grep -E "$2" "$log" | sed "s/^/# $1: /" | head -n 20 >> "$log"
		block "vm:$suite:$1" "not ok" 1
	else
		block "vm:$suite:$1" ok 0
	fi
}

# A checker that did not start, or switched itself off, sees nothing: that
# is a failure too, not a clean run.
on=0
grep -q 'KernelAddressSanitizer initialized' "$log" || { echo "# KASAN did not start" >> "$log"; on=1; }
grep -q 'Lock dependency validator' "$log" || { echo "# lockdep did not start" >> "$log"; on=1; }
grep -q '^HYPER-KMEMLEAK-BEGIN' "$log" || { echo "# no kmemleak scan in the log" >> "$log"; on=1; }
if grep -E -q 'turning off the locking correctness validator|kmemleak: .*disabl|Kernel memory leak detector disabled' "$log"; then
	grep -E 'turning off the locking correctness validator|kmemleak: .*disabl|Kernel memory leak detector disabled' "$log" |
		sed 's/^/# checker off: /' >> "$log"
	on=1
fi
block "vm:$suite:checkers-on" "$([ $on -eq 0 ] && echo ok || echo 'not ok')" $on

check kasan 'BUG: KASAN|KASAN: '
check lockdep 'possible circular locking|WARNING: possible|inconsistent lock state|possible recursive locking|suspicious RCU usage|held lock freed|lock held when returning|BUG: sleeping function called from invalid context|BUG: scheduling while atomic'
check kmemleak 'unreferenced object'
