#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build hyper.ko with kbuild for one kernel, and when modpost refuses it
# because that kernel does not export a symbol the module uses, say so in
# one line that names the kernel and the symbols: a kernel without the
# needed exports is refused at build time, never at load time.
#
# usage: kbuild.sh KVER KDIR MODDIR [kbuild arguments...]
# MAKE in the environment is the make to run (the caller's $(MAKE)).
set -u
kver=$1 kdir=$2 dir=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2086
{ ${MAKE:-make} -C "$kdir" M="$dir" O= "$@" modules 2>&1; echo $? > "$tmp/rc"; } |
	tee "$tmp/log"
rc=$(cat "$tmp/rc")
[ "$rc" -eq 0 ] && exit 0
missing=$(sed -n 's/.*modpost: "\([^"]*\)" \[.*\] undefined!.*/\1/p' "$tmp/log" |
	sort -u | tr '\n' ' ')
[ -n "$missing" ] &&
	echo "hyperoffload: kernel $kver does not export ${missing% }, which hyper.ko needs; it cannot be built for this kernel (tools/build/kver.sh --all lists the usable ones)" >&2
exit "$rc"
