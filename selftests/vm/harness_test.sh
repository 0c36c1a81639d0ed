#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The VM runners' verdicts on made-up consoles, with no VM: which deaths
# vm_emulator_death (vm-lib.sh) boots again, run-vm.sh's and run-2vm.sh's
# reruns under a stand-in QEMU that prints those consoles, and what
# totals.awk prints under a FAIL (a rerun's note too), with its counts
# (of reruns too).  A real emulator death comes once in hundreds of runs:
# only a test like this one sees these paths before CI needs them.  TAP
# output.  usage: harness_test.sh SRCDIR
set -u
src=$1
# shellcheck source-path=SCRIPTDIR source=../lib/tap.sh
. "$src/selftests/lib/tap.sh"
# shellcheck source-path=SCRIPTDIR source=vm-lib.sh
. "$src/selftests/vm/vm-lib.sh"
# Not "dir": vm-lib.sh's functions work in the caller's variables.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
suites=$src/selftests/vm/suites
k61=6.1.0-57-amd64
k612=6.12.118+deb12-amd64

# Console pieces as a guest prints them, CR taken out.  boot KVER SUITE.
boot() {
	cat <<EOF
[    0.000000] Linux version $1 (debian-kernel@lists.debian.org)
[    9.104122] Run /init as init process
HYPER-VM-BEGIN suite=$2 cpus=2 kernel=$1 boot=9s timeout_scale=1
EOF
}
passed() {
	printf 'HYPER-TEST-BEGIN %s\nok 1 %s\nHYPER-TEST-END %s status=0\n' \
		"$1" "$1" "$1"
}
ended() {
	printf 'HYPER-DMESG-BEGIN\n[    0.000000] Linux version %s\n' "$1"
	printf 'HYPER-DMESG-END\nHYPER-VM-END\n'
}
# A soft lockup in the kernel's own code, as CI saw before a first test;
# FRAME, when given, a frame of hyper.ko in its trace.  stall [FRAME]
stall() {
	cat <<EOF
[   71.402611] watchdog: BUG: soft lockup - CPU#1 stuck for 67s! [kmod_twonode_sy:85]
[   71.403020] Modules linked in: hyper(O) brd
[   71.404877] RIP: 0010:native_safe_halt+0xb/0x10
[   71.406301] Call Trace:
[   71.406502]  <TASK>
[   71.407113]  default_idle+0x9/0x20
EOF
	[ $# -gt 0 ] && echo "[   71.407200]  $1 [hyper]"
	cat <<EOF
[   71.407544]  do_idle+0x1f4/0x280
[   71.408020]  </TASK>
EOF
}
# die() for an int3 trap at RIP, inside a test, the module's tracepoint
# in its trace.  The header is "Oops: int3: ..." on 6.12, plain
# "int3: ..." on 6.1.  int3 PREFIX RIP
int3() {
	echo "HYPER-TEST-BEGIN kmod_xfer_basic"
	cat <<EOF
[   42.118034] ${1}int3: 0000 [#1] PREEMPT SMP NOPTI
[   42.118550] CPU: 1 PID: 212 Comm: kmod_xfer_basic Tainted: G           O       #1
[   42.118902] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[   42.119240] RIP: 0010:$2
[   42.119588] Code: cc cc cc cc cc cc cc cc cc cc cc cc cc cc cc cc 90 90
[   42.120102] RSP: 0018:ffffb3c1c04b7d30 EFLAGS: 00000246
[   42.120411] Call Trace:
[   42.120560]  <TASK>
[   42.120851]  hyper_xfer_submit+0x1a2/0x3d0 [hyper]
[   42.121200]  </TASK>
[   42.121520] Kernel panic - not syncing: Fatal exception in interrupt
EOF
}

# The consoles, each $scratch/NAME/log as a runner's boot leaves it.
console() {
	mkdir -p "$scratch/$1"
	cat > "$scratch/$1/log"
}
{ boot $k61 kmod-pmem; passed kmod_regions; ended $k61; } | console clean
{ boot $k612 kmod-pmem; passed kmod_regions; ended $k612; } | console clean612
{ boot $k61 kmod-pmem; echo "HYPER-VM-ERROR no suite 'kmod-pmem'"; ended $k61; } |
	console nosuite
{ boot $k61 twonode; stall; } | console stall
{ boot $k61 twonode; stall hyper_pool_join+0x1a/0x90; } | console stallhyper
{ boot $k612 kmod-pmem; int3 "Oops: " text_poke_bp_batch+0x9/0x2a0; } |
	console int3
{ boot $k61 kmod-pmem; int3 "" perf_trace_sched_switch+0x1/0x170; } |
	console int3old
{ boot $k612 kmod-pmem; int3 "Oops: " "hyper_xfer_chunk+0x1/0x90 [hyper]"; } |
	console int3mod
{ boot $k61 demo; stall; } | console demo
{ boot $k61 kmod-pmem; echo "HYPER-TEST-BEGIN kmod_regions"; stall; } |
	console intest

# rerun CONSOLE SUITEFILE WHY: to be booted again, the reason saying WHY.
rerun() {
	why=$(vm_emulator_death "$scratch/$1" "$2") ||
		{ echo "not booted again"; return 1; }
	echo "reason: $why"
	case $why in *"$3"*) ;; *) return 1 ;; esac
}
# no_rerun CONSOLE SUITEFILE: not booted again, and nothing said.
no_rerun() {
	if why=$(vm_emulator_death "$scratch/$1" "$2"); then
		echo "booted again: $why"
		return 1
	fi
	[ -z "$why" ]
}

check "a console that reached HYPER-VM-END is not booted again" \
	no_rerun clean "$suites/kmod-pmem.suite"
check "one that reached its end with no test run (no suite): not again" \
	no_rerun nosuite "$suites/kmod-pmem.suite"
check "stalled before the first test, no [hyper] frame: booted again" \
	rerun stall "$suites/twonode.suite" "stopped before its first test began"
check "stalled before the first test with a [hyper] frame: not again" \
	no_rerun stallhyper "$suites/twonode.suite"
check "Oops: int3 at a RIP in the kernel's text (6.12): booted again" \
	rerun int3 "$suites/kmod-pmem.suite" "TCG int3 race"
check "int3 at a RIP in the kernel's text, 6.1's header: booted again" \
	rerun int3old "$suites/kmod-pmem.suite" "TCG int3 race"
check "Oops: int3 at a RIP in hyper.ko: not booted again" \
	no_rerun int3mod "$suites/kmod-pmem.suite"
check "the demo's suite has no tests: its stall is not booted again" \
	no_rerun demo "$src/tools/demo/demo.suite"
check "a stall inside a test is not booted again" \
	no_rerun intest "$suites/kmod-pmem.suite"

# The runners under a stand-in QEMU on PATH: boot N of a guest prints
# console N of $FAKE_CONSOLES and counts itself in $FAKE_CONSOLES/n; of
# run-2vm.sh's node K (HYPER_NODE=K on its kernel command line), those
# of $FAKE_CONSOLES/nodeK, as the nodes boot at the same time.
mkdir "$scratch/bin"
cat > "$scratch/bin/qemu-system-x86_64" <<'EOF'
#!/bin/sh
d=$FAKE_CONSOLES
while [ $# -gt 0 ]; do
	case $1 in
	-pidfile) echo $$ > "$2" ;;
	-append)
		case $2 in
		*" HYPER_NODE="*)
			k=${2#* HYPER_NODE=}
			d=$d/node${k%% *}
			;;
		esac
		;;
	esac
	shift
done
n=$(($(cat "$d/n" 2>/dev/null || echo 0) + 1))
echo "$n" > "$d/n"
cat "$d/$n" 2>/dev/null || echo "HYPER-VM-ERROR boot $n: no console"
EOF
chmod +x "$scratch/bin/qemu-system-x86_64"

# given DIR CONSOLE...: boot N of a guest given the Nth CONSOLE, in DIR.
given() {
	mkdir -p "$1"
	d=$1
	shift
	i=1
	for con in "$@"; do
		cp "$scratch/$con/log" "$d/$i"
		i=$((i + 1))
	done
}
# runner RUN SUITEFILE: run-vm.sh for the suite on 6.12 under the
# stand-in, the consoles in RUN/consoles; its LOG is RUN/vm.log, its
# output RUN/out, the totals RUN/totals.
runner() {
	PATH=$scratch/bin:$PATH FAKE_CONSOLES=$1/consoles HYPER_TIMEOUT_SCALE=1 \
		"$src/selftests/vm/run-vm.sh" "$scratch/vmlinuz-$k612" \
		"$scratch/initrd" "$2" "$1/vm.log" > "$1/out" 2>&1
	awk -f "$src/selftests/totals.awk" "$1/vm.log" > "$1/totals"
	cat "$1/out" "$1/totals"
}
# run_vm RUN CONSOLE...: runner for kmod-pmem in $scratch/RUN, boot N
# given the Nth CONSOLE; RUN/consoles/n is how many boots there were.
run_vm() {
	r=$scratch/$1
	shift
	given "$r/consoles" "$@"
	runner "$r" "$suites/kmod-pmem.suite"
}
# noted TOTALS: its "# rerun:" notes, each with the lines before and
# after it.
noted() {
	grep -B 1 -A 1 '^    # rerun: ' "$1"
}
# noted_once TOTALS BEFORE NOTE AFTER: one note, matching NOTE, the last
# line under the FAIL whose last reason matches BEFORE, AFTER next.
noted_once() {
	[ "$(grep -c '^    # rerun: ' "$1")" = 1 ] &&
	noted "$1" | sed -n 1p | grep -q "^    $2" &&
	noted "$1" | sed -n 2p | grep -q "^    # rerun: $3" &&
	noted "$1" | sed -n 3p | grep -q "^$4"
}
# reason TOTALS CHECK WHY: the first line under CHECK's FAIL matches WHY.
reason() {
	grep -A 1 "^FAIL $2 " "$1" | sed -n 2p | grep -q "^    $3"
}
# closing TOTALS LINE...: the last lines of TOTALS are LINEs.
closing() {
	t=$1
	shift
	tail -n $# "$t" > "$t.tail"
	printf '%s\n' "$@" | diff -u - "$t.tail"
}
rerun_once() {
	run_vm rerun_once int3 clean612
	[ "$(cat "$r/consoles/n")" = 2 ] &&
	cmp "$r/vm.log.first" "$scratch/int3/log" &&
	grep -q "^# rerun: the first boot died of a TCG int3 race .*; console in $r/vm.log.first\$" "$r/vm.log" &&
	[ -z "$(noted "$r/totals")" ] &&
	closing "$r/totals" "1 rerun" "3 passed, 0 failed"
}
check "run-vm.sh boots an int3 death again, keeps LOG.first, says # rerun:" \
	rerun_once
rerun_twice() {
	run_vm rerun_twice int3 int3
	[ "$(cat "$r/consoles/n")" = 2 ] &&
	grep -q '^# rerun: ' "$r/vm.log" &&
	grep -q '^FAIL vm:6.12:kmod-pmem:completed ' "$r/totals" &&
	noted_once "$r/totals" "# VM for suite kmod-pmem on .* stopped during this test" \
		"the first boot died of a TCG int3 race .*; console in $r/vm.log.first\$" \
		"FAIL vm:6.12:kmod-pmem:completed " &&
	reason "$r/totals" vm:6.12:kmod-pmem:completed \
		"# VM for suite kmod-pmem on .* did not finish (qemu rc 0 after [0-9]*s) while running vm:6.12:kmod-pmem:kmod_xfer_basic\$" &&
	closing "$r/totals" "1 rerun" "0 passed, 3 failed"
}
check "a second death fails, # rerun: under its first FAIL, completed says why" \
	rerun_twice
rerun_none() {
	run_vm rerun_none int3mod
	[ "$(cat "$r/consoles/n")" = 1 ] && [ ! -e "$r/vm.log.first" ] &&
	! grep -q '^# rerun:' "$r/vm.log" &&
	closing "$r/totals" "0 passed, 3 failed" &&
	! grep -q '^[0-9]* rerun' "$r/totals"
}
check "an int3 in hyper.ko is booted once and fails" rerun_none

# run-2vm.sh, handed the twonode suite by run-vm.sh: a node's death of
# the emulator's boots all nodes again, once.
{ boot $k612 twonode; passed kmod_twonode_sync; ended $k612; } |
	console node_ok
{ boot $k612 twonode; int3 "Oops: " text_poke_bp_batch+0x9/0x2a0; } |
	console node_int3
{ boot $k612 twonode; stall hyper_pool_join+0x1a/0x90; } |
	console node_stallhyper
# run_2vm RUN CONSOLES0 CONSOLES1: runner for twonode in $scratch/RUN,
# boot N of node K given the Nth of the list CONSOLESK.
run_2vm() {
	r=$scratch/$1
	# shellcheck disable=SC2086 # a list of consoles, split on purpose
	given "$r/consoles/node0" $2
	# shellcheck disable=SC2086
	given "$r/consoles/node1" $3
	runner "$r" "$suites/twonode.suite"
}
# boots N0 N1: node 0 was booted N0 times, node 1 N1 times.
boots() {
	[ "$(cat "$r/consoles/node0/n")" = "$1" ] &&
	[ "$(cat "$r/consoles/node1/n")" = "$2" ]
}
rerun2_once() {
	run_2vm rerun2_once "node_ok node_ok" "node_int3 node_ok"
	boots 2 2 &&
	cmp "$r/vm.log.node1.first" "$scratch/node_int3/log" &&
	[ ! -e "$r/vm.log.node0.first" ] &&
	note="node 1's first boot died of a TCG int3 race .* (console in"
	note="$note $r/vm.log.node1.first); all nodes were booted again"
	grep -q "^# rerun: $note\$" "$r/vm.log" &&
	[ -z "$(noted "$r/totals")" ] &&
	closing "$r/totals" "1 rerun" "7 passed, 0 failed"
}
check "run-2vm.sh: node 1's int3 death boots both again, LOG.node1.first" \
	rerun2_once
rerun2_twice() {
	run_2vm rerun2_twice "node_ok node_ok" "node_int3 node_int3"
	boots 2 2 &&
	grep -q '^FAIL vm:6.12:twonode:completed ' "$r/totals" &&
	noted_once "$r/totals" "# VM node 1 of suite twonode on .* stopped during this test" \
		"node 1's first boot died of a TCG int3 race " \
		"FAIL vm:6.12:twonode:node1:completed " &&
	reason "$r/totals" vm:6.12:twonode:node1:completed \
		"# VM node 1 of suite twonode on .* did not finish .* while running vm:6.12:twonode:node1:kmod_xfer_basic\$" &&
	closing "$r/totals" "1 rerun" "3 passed, 4 failed"
}
check "run-2vm.sh: a second death fails, # rerun: under the first FAIL" \
	rerun2_twice
rerun2_none() {
	run_2vm rerun2_none node_ok node_stallhyper
	boots 1 1 &&
	[ -z "$(find "$r" -name 'vm.log.node*.first')" ] &&
	! grep -q '^# rerun:' "$r/vm.log" &&
	grep -q '^FAIL vm:6.12:twonode:node1:completed ' "$r/totals" &&
	grep -q '^FAIL vm:6.12:twonode:completed ' "$r/totals" &&
	closing "$r/totals" "3 passed, 3 failed" &&
	! grep -q '^[0-9]* rerun' "$r/totals"
}
check "run-2vm.sh: a node's stall in hyper.ko boots no node again" \
	rerun2_none

# totals.awk: its output, the padding after the names squeezed.
totals() {
	awk -f "$src/selftests/totals.awk" "$@" | sed 's/  *pass:/ pass:/'
}
# same WANT GOT: the lines of both, diff -u if they differ.
same() {
	diff -u "$1" "$2"
}
# tap_only LOG: LOG without what totals.awk shows under a FAIL.
tap_only() {
	grep -E '^(HYPER-TEST-|ok |not ok |1\.\.|# Totals)' "$1"
}

# Native programs: a kselftest one passing (a line of its own, shown
# under no FAIL), one failing a case, a TAP script failing a check, and
# one that leaked (sanitizer lines, no TAP: nine lines, of which the last
# eight are shown).
cat > "$scratch/native.log" <<'EOF'
HYPER-TEST-BEGIN plan_units
TAP version 13
1..2
# seed 1234
# Starting 2 tests from 1 test cases.
#  RUN           units.one ...
#            OK  units.one
ok 1 units.one
#  RUN           units.two ...
#            OK  units.two
ok 2 units.two
# PASSED: 2 / 2 tests passed.
# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
HYPER-TEST-END plan_units status=0
HYPER-TEST-BEGIN plan_arena
TAP version 13
1..3
# Starting 3 tests from 1 test cases.
#  RUN           arena.grow ...
#            OK  arena.grow
ok 1 arena.grow
#  RUN           arena.reset ...
# plan_arena.c:88:reset:Expected 0 (0) == rc (-12)
# reset: Test terminated by assertion
#          FAIL  arena.reset
not ok 2 arena.reset
#  RUN           arena.free ...
#            OK  arena.free
ok 3 arena.free
# FAILED: 2 / 3 tests passed.
# Totals: pass:2 fail:1 xfail:0 xpass:0 skip:0 error:0
HYPER-TEST-END plan_arena status=1
HYPER-TEST-BEGIN render_test
ok 1 the timeline is drawn
# the renderer said:
# hyper-timeline: line 3: no such step
not ok 2 a missing step is named
ok 3 empty input is refused # SKIP no input
1..3
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
HYPER-TEST-END render_test status=1
HYPER-TEST-BEGIN plan_oom
==4242==ERROR: LeakSanitizer: detected memory leaks
Direct leak of 64 byte(s) in 1 object(s) allocated from:
    #0 0x7f00 in malloc
    #1 0x5500 in hyper_plan__arena_grow libhyperplan/arena.c:120
    #2 0x5501 in plan_init libhyperplan/plan.c:301
    #3 0x5502 in hyper_plan_create libhyperplan/plan.c:355
    #4 0x5503 in main selftests/plan/plan_oom.c:44
    #5 0x7f01 in __libc_start_main
SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).
HYPER-TEST-END plan_oom status=1
EOF
cat > "$scratch/native.want" <<'EOF'
PASS plan_units pass:2 fail:0
FAIL plan_arena pass:2 fail:1
    # plan_arena.c:88:reset:Expected 0 (0) == rc (-12)
    # reset: Test terminated by assertion
    #          FAIL  arena.reset
FAIL render_test pass:1 fail:1 skip:1
    # the renderer said:
    # hyper-timeline: line 3: no such step
FAIL plan_oom pass:0 fail:1
    Direct leak of 64 byte(s) in 1 object(s) allocated from:
        #0 0x7f00 in malloc
        #1 0x5500 in hyper_plan__arena_grow libhyperplan/arena.c:120
        #2 0x5501 in plan_init libhyperplan/plan.c:301
        #3 0x5502 in hyper_plan_create libhyperplan/plan.c:355
        #4 0x5503 in main selftests/plan/plan_oom.c:44
        #5 0x7f01 in __libc_start_main
    SUMMARY: AddressSanitizer: 64 byte(s) leaked in 1 allocation(s).
1 skipped
5 passed, 3 failed
EOF
native_why() {
	totals "$scratch/native.log" > "$scratch/native.got"
	same "$scratch/native.want" "$scratch/native.got"
}
check "under a failing program, its last non-TAP lines, eight at most" \
	native_why
native_counts() {
	tap_only "$scratch/native.log" > "$scratch/native.tap"
	totals "$scratch/native.tap" > "$scratch/native.tap.got"
	grep -v '^    ' "$scratch/native.want" | same - "$scratch/native.tap.got"
}
check "the counts and closing lines are those of the TAP lines alone" \
	native_counts

# A guest's console made a LOG by vm_finish: a test killed by its
# timeout, an rmmod that failed, and ten splat lines; the runner's
# checks show the "# " lines written before them, the last eight.
{
	boot $k61 kmod-pmem
	passed kmod_regions
	echo "HYPER-TEST-BEGIN kmod_lifecycle"
	echo "ok 1 load_unload"
	echo "# timeout: test kmod_lifecycle of suite kmod-pmem killed after 600s (limit 600s x scale 1)"
	echo "HYPER-TEST-END kmod_lifecycle status=137"
	for n in 1 2 3 4 5; do
		echo "[  3$n.100000] WARNING: CPU: 0 PID: 8$n at kmod/pool.c:12$n hyper_pool_scan+0x40/0x90 [hyper]"
		echo "[  3$n.100100] Call Trace:"
	done
	echo "HYPER-VM-ERROR rmmod failed"
	ended $k61
} | console splat
cat > "$scratch/vm.want" <<EOF
PASS vm:6.1:kmod-pmem:kmod_regions pass:1 fail:0
FAIL vm:6.1:kmod-pmem:kmod_lifecycle pass:1 fail:1
    # timeout: test kmod_lifecycle of suite kmod-pmem killed after 600s (limit 600s x scale 1)
FAIL vm:6.1:kmod-pmem:completed pass:0 fail:1
    # HYPER-VM-ERROR rmmod failed
FAIL vm:6.1:kmod-pmem:dmesg-clean pass:0 fail:1
    # dmesg: [  32.100000] WARNING: CPU: 0 PID: 82 at kmod/pool.c:122 hyper_pool_scan+0x40/0x90 [hyper]
    # dmesg: [  32.100100] Call Trace:
    # dmesg: [  33.100000] WARNING: CPU: 0 PID: 83 at kmod/pool.c:123 hyper_pool_scan+0x40/0x90 [hyper]
    # dmesg: [  33.100100] Call Trace:
    # dmesg: [  34.100000] WARNING: CPU: 0 PID: 84 at kmod/pool.c:124 hyper_pool_scan+0x40/0x90 [hyper]
    # dmesg: [  34.100100] Call Trace:
    # dmesg: [  35.100000] WARNING: CPU: 0 PID: 85 at kmod/pool.c:125 hyper_pool_scan+0x40/0x90 [hyper]
    # dmesg: [  35.100100] Call Trace:
2 passed, 3 failed
EOF
vm_why() {
	(
		start=$(date +%s) kver=$k61 TIMEOUT=900
		echo 0 > "$scratch/splat/qrc"
		vm_finish "$scratch/splat" "$scratch/splat/vm.log" \
			vm:6.1:kmod-pmem "VM for suite kmod-pmem on $k61"
	)
	cat "$scratch/splat/vm.log"
	totals "$scratch/splat/vm.log" > "$scratch/vm.got"
	same "$scratch/vm.want" "$scratch/vm.got"
}
check "under a runner's failed check, its # lines (dmesg: eight at most)" \
	vm_why
vm_counts() {
	tap_only "$scratch/splat/vm.log" > "$scratch/vm.tap"
	totals "$scratch/vm.tap" > "$scratch/vm.tap.got"
	grep -v '^    ' "$scratch/vm.want" | same - "$scratch/vm.tap.got"
}
check "a VM log's counts and closing lines are those of its TAP alone" \
	vm_counts

# Several logs at once (make check's totals, or by hand): the lines
# after one log's last block are no reason for the next log's first.
cat > "$scratch/killed.log" <<'EOF'
HYPER-TEST-BEGIN plan_bound
HYPER-TEST-END plan_bound status=139
EOF
printf 'FAIL plan_bound pass:0 fail:1\n0 passed, 1 failed\n' \
	> "$scratch/killed.want"
two_logs() {
	totals "$scratch/killed.log" > "$scratch/killed.got" &&
	same "$scratch/killed.want" "$scratch/killed.got" &&
	totals "$scratch/rerun_once/vm.log" "$scratch/killed.log" |
		tail -n 3 > "$scratch/two.got" &&
	printf 'FAIL plan_bound pass:0 fail:1\n1 rerun\n3 passed, 1 failed\n' |
		same - "$scratch/two.got" &&
	totals "$scratch/rerun_once/vm.log" "$scratch/rerun_twice/vm.log" |
		tail -n 2 > "$scratch/reruns.got" &&
	printf '2 reruns\n3 passed, 3 failed\n' | same - "$scratch/reruns.got" &&
	{
		totals "$scratch/killed.log" | grep -v '^[0-9]'
		totals "$scratch/rerun_twice/vm.log" | grep -v '^[0-9]'
		printf '1 rerun\n0 passed, 4 failed\n'
	} > "$scratch/each.want" &&
	totals "$scratch/killed.log" "$scratch/rerun_twice/vm.log" \
		> "$scratch/each.got" &&
	same "$scratch/each.want" "$scratch/each.got"
}
check "a log's closing # lines, # rerun: too, are no reason for the next's" \
	two_logs
finish
