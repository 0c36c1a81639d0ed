# SPDX-License-Identifier: GPL-2.0
# Count test cases in logs framed by HYPER-TEST-BEGIN/END markers.  A
# kselftest program's "# Totals:" line is taken when present, plain TAP
# ok/not ok lines otherwise; a program that exits non-zero with no failed
# case, or whose block never ends, counts as one failure.  Prints one line
# per program, then "N skipped" and "N rerun(s)" where there are any, and
# the closing "N passed, N failed" last.
#
# Under a failing program's line come up to WHY lines (indented) that say
# why: the last lines of its block that are neither TAP nor a harness
# summary, or, for the runners' own blocks (a VM's completed and
# dmesg-clean checks, written after the console), the "# " lines just
# before the block.  A CI log then names the cause without the results
# directory.
#
# A runner's "# rerun:" line (the suite was booted again after a death
# of the emulator's, vm_emulator_death in selftests/vm/vm-lib.sh) comes
# after the blocks of the boot that counted, where no FAIL would show it:
# each log's lines are held until the log ends, and the note goes under
# its first FAIL, after that one's reasons.  A suite that passed the
# second time shows it only in the count of reruns.
function keep(line) {
	why[nwhy % WHY] = line
	nwhy++
}
function out(line) {
	held[nheld++] = line
}
function flush(status,   p, f, i) {
	if (tot) { p = tpass; f = tfail } else { p = okc; f = nokc }
	if (status != 0 && f == 0)
		f = 1
	out(sprintf("%s %-40s pass:%d fail:%d%s", (f ? "FAIL" : "PASS"), name, \
		p, f, (tskip ? " skip:" tskip : "")))
	if (f) {
		for (i = (nwhy > WHY ? nwhy - WHY : 0); i < nwhy; i++)
			out("    " why[i % WHY])
		if (firstfail < 0)
			firstfail = nheld - 1
	}
	P += p; F += f; S += tskip
	inblk = 0
	nwhy = 0
}
# Prints the log's held lines, its rerun note under its first FAIL.
function emit(   i) {
	for (i = 0; i < nheld; i++) {
		print held[i]
		if (i == firstfail && rerun != "")
			printf "    %s\n", rerun
	}
	nheld = 0
	firstfail = -1
	rerun = ""
}
BEGIN { WHY = 8; firstfail = -1 }
# A log's "# " lines after its last block (run-vm.sh's "# vm suite ...")
# are no reason for the first block of the next log.
FNR == 1 {
	if (inblk)
		flush(1)
	emit()
	nwhy = 0
	outside = 0
}
/^HYPER-TEST-BEGIN / {
	if (inblk)
		flush(1)
	name = $2; inblk = 1; tot = 0; okc = nokc = tpass = tfail = tskip = 0
	if (!outside)
		nwhy = 0
	outside = 0
	next
}
/^HYPER-TEST-END / {
	if (!inblk)
		next
	st = $3; sub(/^status=/, "", st)
	flush(st + 0)
	next
}
inblk && /^# Totals: / {
	tot = 1
	for (i = 3; i <= NF; i++) {
		split($i, kv, ":")
		if (kv[1] == "pass" || kv[1] == "xfail") tpass += kv[2]
		else if (kv[1] == "fail" || kv[1] == "error" || kv[1] == "xpass") tfail += kv[2]
		else if (kv[1] == "skip") tskip += kv[2]
	}
	next
}
inblk && /^ok / { okc++ }
inblk && /^not ok / { nokc++ }
# Context for a failure: inside a block, what is not TAP or a summary;
# outside one, the runner's "# " lines, kept for the block that follows.
inblk && !/^(ok |not ok |TAP version |1\.\.|# (Totals|PASSED|FAILED|Starting|  *OK|  *RUN)|$)/ { keep($0) }
!inblk && /^# rerun: / {
	rerun = $0
	R++
	next
}
!inblk && /^# / {
	if (!outside)
		nwhy = 0
	outside = 1
	keep($0)
}
END {
	if (inblk)
		flush(1)
	emit()
	if (S)
		printf "%d skipped\n", S
	if (R)
		printf "%d rerun%s\n", R, (R > 1 ? "s" : "")
	printf "%d passed, %d failed\n", P, F
}
