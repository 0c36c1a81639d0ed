# SPDX-License-Identifier: GPL-2.0
# Pieces shared by the VM runners, sourced by run-vm.sh (one guest) and
# run-2vm.sh (two guests on one pool): the suite's settings, the kernel's
# label, booting one guest under a watchdog, and the checks appended to a
# guest's log.  POSIX sh; every function works in the caller's variables.

# vm_settings SUITEFILE: the defaults, then the suite's "#@NAME=value"
# header lines (VM settings the host needs), then the timeout's scale.
vm_settings() {
	APPEND=
	TIMEOUT=900
	NODE0=2G
	NODE1=1G
	CPU=max
	NODE2=
	NODES=1
	eval "$(sed -n 's/^#@\([A-Z0-9_]*\)=\(.*\)$/\1=\2/p' "$1")"
	TIMEOUT=$((TIMEOUT * ${VM_TIMEOUT_SCALE:-1}))
}

to_mib() {
	case $1 in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	esac
}

# vm_label KERNEL: kver and klabel.  Debian's images are vmlinuz-VERSION,
# and the VM must boot that version; a kernel built here (make
# check-debug-kernel's bzImage) is named by file.
vm_label() {
	case $(basename "$1") in
	vmlinuz-*)
		kver=$(basename "$1")
		kver=${kver#vmlinuz-}
		klabel=$(echo "$kver" | cut -d. -f1,2)
		;;
	*)
		kver=
		klabel=$(basename "$1")
		;;
	esac
}

# vm_watchdog DIR: kills the QEMU of DIR/pid after the suite's limit times
# the scale the VM reported in DIR/log, and says so in DIR/timedout.
vm_watchdog() {
	limit=$TIMEOUT
	while sleep 2; do
		s=$(sed -n 's/.*HYPER-VM-BEGIN .*timeout_scale=\([0-9]*\).*/\1/p' "$1/log")
		[ -n "$s" ] && limit=$((TIMEOUT * s))
		[ $(($(date +%s) - start)) -ge "$limit" ] || continue
		echo "$limit ${s:-1}" > "$1/timedout"
		kill "$(cat "$1/pid")" 2>/dev/null
		sleep 10
		kill -9 "$(cat "$1/pid")" 2>/dev/null
		return
	done
}

# vm_boot DIR KERNEL INITRD SUITE [QEMU ARGS...]: boots one guest, its
# console in DIR/log (line by line, so that a runner can watch it), QEMU's
# exit status in DIR/qrc.  NODE1_MEM, when set, is node 1's memory backend
# (default: RAM of NODE1); NODE2, when set, adds a third node of that
# much RAM, after node 1; the QEMU ARGS come last.  watchdog_thresh=60:
# TCG vCPUs can stall for seconds when the shared host is busy, and the
# default 10 s soft-lockup threshold then fires on code that is fine; a
# real lockup still trips it, or the suite's timeout.
vm_boot() {
	dir=$1 kernel=$2 initrd=$3 vsuite=$4
	shift 4
	start=$(date +%s)
	: > "$dir/log"
	rm -f "$dir/timedout"
	vm_watchdog "$dir" &
	wpid=$!
	mib=$(($(to_mib "$NODE0") + $(to_mib "$NODE1")))
	if [ -n "$NODE2" ]; then
		mib=$((mib + $(to_mib "$NODE2")))
		set -- -object memory-backend-ram,id=m2,size="$NODE2" \
			-numa node,nodeid=2,memdev=m2 "$@"
	fi
	scale_arg=
	[ -n "${HYPER_TIMEOUT_SCALE:-}" ] && scale_arg="HYPER_TIMEOUT_SCALE=$HYPER_TIMEOUT_SCALE"
	qemu-system-x86_64 -pidfile "$dir/pid" \
		-accel tcg -cpu "$CPU" -smp 2 -m "${mib}M" \
		-object memory-backend-ram,id=m0,size="$NODE0" \
		-numa node,nodeid=0,cpus=0-1,memdev=m0 \
		-object "${NODE1_MEM:-memory-backend-ram,id=m1,size=$NODE1}" \
		-numa node,nodeid=1,memdev=m1 \
		-nographic -no-reboot -net none \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 oops=panic quiet watchdog_thresh=60 no_timer_check HYPER_SUITE=$vsuite $scale_arg $APPEND ${VM_APPEND:-}" \
		"$@" 2>&1 | stdbuf -oL tr -d '\r' > "$dir/log"
	qrc=$?
	echo "$qrc" > "$dir/qrc"
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
}

# vm_emulator_death DIR SUITEFILE: whether the guest of DIR stopped for the
# emulator's reason, not the module's, before its suite ended; if so, prints
# why (for the runner's "# rerun:" line).  Two such deaths are known:
# - QEMU's multi-threaded TCG ran a stale int3 that the guest kernel's live
#   code patching (text_poke_bp(), when a static key or tracepoint flips)
#   had already taken away on the other vCPU: an int3 trap at a RIP outside
#   any module ("Oops: int3: 0000 [#1] ..." on 6.12, plain "int3: 0000
#   [#1] ..." on 6.1, whose die() messages have no "Oops: ");
# - the guest hung or died before the first test of a suite that has
#   tests ("t PROGRAM" lines) began, with no frame of hyper.ko ("[hyper]")
#   anywhere on its console: seen once on a busy CI machine, one guest of
#   three stalling before its first test while the other two waited for it
#   until the suite's limit.  A suite without tests (the demo's) works
#   the module from its start, so this does not apply to it.
# A crash or hang in a test, or anything naming hyper.ko, is the module's
# and fails the suite.
vm_emulator_death() {
	grep -q '^HYPER-VM-END' "$1/log" && return 1
	int3_die='int3: [0-9a-f]\{4\} \[#'
	if grep -q "$int3_die" "$1/log" &&
	   ! grep -A6 "$int3_die" "$1/log" | grep -q 'RIP: .*\]$'; then
		echo "died of a TCG int3 race in kernel text patching (an int3 trap outside any module)"
		return 0
	fi
	if grep -q '^[[:space:]]*t ' "$2" &&
	   ! grep -q '^HYPER-TEST-BEGIN ' "$1/log" &&
	   ! grep -q '\[hyper\]' "$1/log"; then
		echo "stopped before its first test began, with no hyper.ko frame on its console"
		return 0
	fi
	return 1
}

# vm_block LOG NAME RESULT STATUS: one test block of the runner's own.
vm_block() {
	printf 'HYPER-TEST-BEGIN %s\n%s %s\nHYPER-TEST-END %s status=%s\n' \
		"$2" "$3" "$2" "$2" "$4" >> "$1"
}

# vm_finish DIR LOG NAME WHAT [KILLED]: LOG from the console of DIR, each
# test's name with NAME (vm:KERNEL:SUITE[:NODE]) in front, and two checks
# of the runner's own as test blocks: that the VM reached the end of the
# suite (no panic, no timeout) on the kernel asked for, and that dmesg
# holds no BUG/WARNING/Oops line.  WHAT names the VM in messages.  KILLED,
# when set, is why the runner killed this guest on the suite's request:
# such a guest has completed when its console got that far.
vm_finish() {
	dir=$1 flog=$2 bname=$3 what=$4 killed=${5:-}
	secs=$(($(date +%s) - start))
	qrc=$(cat "$dir/qrc" 2>/dev/null)
	sed "s/^\(HYPER-TEST-BEGIN\|HYPER-TEST-END\) /\1 $bname:/" "$dir/log" > "$flog"
	booted=$(sed -n 's/.*HYPER-VM-BEGIN .*kernel=\([^ ]*\).*/\1/p' "$dir/log")
	# A test the guest never ended (it died, or was killed, inside it)
	# fails here, its own block closed: what the runner says next is the
	# reason of the completed check, not one more line of that test's.
	running=$(awk '/^HYPER-TEST-BEGIN /{t=$2} /^HYPER-TEST-END /{t=""} END{print t}' "$flog")
	if [ -n "$running" ]; then
		echo "# $what stopped during this test: see the completed check" >> "$flog"
		echo "HYPER-TEST-END $running status=1" >> "$flog"
	fi
	if [ -f "$dir/timedout" ]; then
		read -r limit scale < "$dir/timedout"
		echo "# timeout: $what killed after ${secs}s (limit ${TIMEOUT}s x scale $scale) while running ${running:-no test (booting, loading or between tests)}" >> "$flog"
		vm_block "$flog" "$bname:completed" "not ok" 1
	elif [ -n "$kver" ] && [ -n "$booted" ] && [ "$booted" != "$kver" ]; then
		echo "# the VM booted kernel $booted, not $kver" >> "$flog"
		vm_block "$flog" "$bname:completed" "not ok" 1
	elif grep -q '^HYPER-VM-ERROR' "$dir/log"; then
		grep '^HYPER-VM-ERROR' "$dir/log" | sed 's/^/# /' >> "$flog"
		vm_block "$flog" "$bname:completed" "not ok" 1
	elif grep -q '^HYPER-VM-END' "$dir/log"; then
		vm_block "$flog" "$bname:completed" ok 0
	elif [ -n "$killed" ]; then
		echo "# $what: $killed" >> "$flog"
		vm_block "$flog" "$bname:completed" ok 0
	else
		echo "# $what did not finish (qemu rc $qrc after ${secs}s)${running:+ while running $running}" >> "$flog"
		vm_block "$flog" "$bname:completed" "not ok" 1
	fi

	# Splats are looked for in the dmesg the VM printed at its end and on
	# the console itself, so a panic before that point is still caught.
	bad='(BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|Call Trace|kernel BUG|refcount_t:|list_(add|del) corruption|soft lockup|hung_task|Kernel panic)'
	if grep -E -q "$bad" "$dir/log"; then
		grep -E "$bad" "$dir/log" | sed 's/^/# dmesg: /' | head -n 20 >> "$flog"
		vm_block "$flog" "$bname:dmesg-clean" "not ok" 1
	else
		vm_block "$flog" "$bname:dmesg-clean" ok 0
	fi
}
