#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The administrator's guide's QEMU walkthrough (section 8), run as written:
# its first sh block from the top of the tree (in a private /tmp, which it
# writes to), its second typed at the VM's shell, and the output checked
# against the lines the guide says it prints.  TAP.
# usage: admin_guide_qemu.sh SRCDIR
set -u
src=$1
cd "$src" || exit 1
. selftests/lib/tap.sh
guide=Documentation/admin-guide.md
dir=$(mktemp -d /var/tmp/hyper-admin-guide.XXXXXX)
trap 'exec 3>&-; [ -n "${pid:-}" ] && kill "$pid" 2> /dev/null; rm -rf "$dir"' EXIT

# Block N (1-based) of section 8 fenced as ```LANG ("" for a plain ```).
block() {
	awk -v want="$1" -v lang="$2" '
		/^## 8\. / { in8 = 1; next }
		/^## / && !fence { in8 = 0 }
		!in8 { next }
		fence && /^```$/ { if (mine) exit; fence = 0; next }
		fence { if (mine) print; next }
		/^```/ { fence = 1; mine = $0 == "```" lang && ++n == want }' "$guide"
}
if [ "$(id -u)" -ne 0 ]; then
	skip "admin guide section 8" "needs root for a private /tmp (unshare -m)"
	finish
	exit
fi
block 1 sh > "$dir/setup.sh"
block 2 sh > "$dir/shell.txt"
block 1 "" > "$dir/expect.txt"

extracted() {
	grep -q 'mkinitramfs.sh' "$dir/setup.sh" &&
	grep -q 'qemu-system-x86_64' "$dir/setup.sh" &&
	grep -q '^exit' "$dir/shell.txt" && grep -q 'hyper0' "$dir/expect.txt"
}
check "section 8 has the setup, shell and output blocks" extracted

mkfifo "$dir/console-in"
(
	unset MAKEFLAGS MFLAGS MAKELEVEL
	# Verbatim; only /tmp is this run's own, and a bound on the whole.
	# A tree that is itself under /tmp (a CI clone may be) is bound back
	# in, since kbuild reaches it by its absolute path.
	exec timeout -k 10 600 unshare -m sh -c '
		here=$(pwd -P)
		mkdir "$1" && mount --bind "$here" "$1" &&
		mount -t tmpfs tmpfs /tmp || exit 1
		case $here/ in
		/tmp/*) mkdir -p "$here" && mount --bind "$1" "$here" && cd "$here" || exit 1 ;;
		esac
		exec sh -e "$0"' "$dir/setup.sh" "$dir/tree"
) < "$dir/console-in" > "$dir/console.log" 2>&1 &
pid=$!
exec 3> "$dir/console-in"

# Type the second block once the VM's shell prompts ("/ # ").
prompted() {
	while kill -0 "$pid" 2> /dev/null; do
		grep -q '^/ # ' "$dir/console.log" && return 0
		sleep 1
	done
	return 1
}
if prompted; then
	cat "$dir/shell.txt" >&3
fi
wait "$pid"
rc=$?
pid=
exec 3>&-
# The serial console ends its lines with CR LF.
tr -d '\r' < "$dir/console.log" > "$dir/console.txt"

ran() {
	[ "$rc" -eq 0 ] || { tail -n 20 "$dir/console.txt"; echo "exit $rc"; return 1; }
}
# Every line the guide shows, but the sizes of node 0 (what the kernel
# keeps varies) and the elision.
prints_what_it_says() {
	miss=0
	while IFS= read -r line; do
		case $line in
		'...'|'node 0 size: '*|'node 0 free: '*) continue ;;
		esac
		# A whole line, or the end of one: the first follows the
		# firmware's screen-clearing escapes.
		awk -v l="$line" 'substr($0, length($0) - length(l) + 1) == l { f = 1 }
			END { exit !f }' "$dir/console.txt" ||
			{ echo "missing: $line"; miss=1; }
	done < "$dir/expect.txt"
	[ $miss -eq 0 ]
}
shell_commands() {
	# chunk_size=3M refused with exit status 1, and the mode round trip.
	grep -qx '1' "$dir/console.txt" &&
	grep -q 'chunk_size: 3145728 refused' "$dir/console.txt" &&
	grep -q ': System RAM (hyper)$' "$dir/console.txt" &&
	grep -qx '  chunk_size:    2M (2097152)' "$dir/console.txt"
}
check "the setup block runs to the end (make, initramfs, QEMU)" ran
check "the VM prints what the guide says" prints_what_it_says
check "the shell block's commands do what the guide says" shell_commands
finish
