#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make install DESTDIR=... PREFIX=/usr` puts everything where a package
# wants it, and leaves the machine's /lib/modules alone.
# usage: install_test.sh SRCDIR OBJDIR KVER
set -u
src=$1 obj=$2 kver=$3
. "$(dirname "$0")/../lib/tap.sh"
. "$src/selftests/plan/plan_exports.sh"

dest=$(mktemp -d /tmp/hyper-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
# Not the make that runs this test: its jobserver is not ours.  O goes in
# the environment: on the command line make would hand it on to kbuild,
# which takes O= as its own output directory.
unset MAKEFLAGS MFLAGS MAKELEVEL
export O="$obj"
real_ko=/lib/modules/$kver/updates/hyper.ko
libver=$(sed -n 's/^LIBHYPER_\([0-9.]*\) {.*/\1/p' "$src/libhyper/libhyper.map" | tail -n 1).0
before=$(ls -l --time-style=full-iso "$real_ko" 2>&1)

check "make install DESTDIR PREFIX=/usr" \
	make -C "$src" install DESTDIR="$dest" PREFIX=/usr

module_in_updates() {
	ko=$dest/lib/modules/$kver/updates/hyper.ko
	[ -f "$ko" ] && modinfo -F vermagic "$ko" | grep "^$kver " &&
	# depmod is the package's business with DESTDIR.
	[ ! -e "$dest/lib/modules/$kver/modules.dep" ] &&
	[ "$(ls -l --time-style=full-iso "$real_ko" 2>&1)" = "$before" ]
}

hyperctl_runs() {
	[ -x "$dest/usr/sbin/hyperctl" ] &&
	"$dest/usr/sbin/hyperctl" --version &&
	[ -f "$dest/usr/share/man/man8/hyperctl.8" ] &&
	man -l --warnings "$dest/usr/share/man/man8/hyperctl.8" 2>&1 >/dev/null |
		{ ! grep .; }
}

library_and_headers() {
	for f in usr/lib/libhyper.so.$libver usr/lib/libhyper.so.1 \
		usr/lib/libhyper.so usr/lib/libhyper.a \
		usr/include/hyper/hyper.h usr/share/man/man7/libhyper.7 \
		usr/share/man/man3/hyper_open.3 usr/bin/hyper-run \
		usr/share/man/man1/hyper-run.1; do
		[ -e "$dest/$f" ] || { echo "missing $f"; return 1; }
	done
	grep -x 'prefix=/usr' "$dest/usr/lib/pkgconfig/libhyper.pc" &&
	grep -x "Version: $libver" "$dest/usr/lib/pkgconfig/libhyper.pc"
}

# -m NAME reads the configs installed beside the program, not the sources
# (make names those to the programs of the build tree: not to this one).
installed_models() {
	env -u HYPER_PLAN_CONFIGS "$dest/usr/bin/hyper-plan" --list-models |
		grep -x "llama2-7b  *llama-family model from $dest/usr/share/hyper-plan/configs/llama2-7b.json"
}

# The planner's library as installed: hyper_plan_* alone, no tree path.
planner_exports() {
	plan_exports "$dest/usr/lib/libhyperplan.so.1" "$dest/usr/lib/libhyperplan.a" "$src"
}

# Stripped, and its debug info where gdb finds it by build ID.
stripped_with_debug() {
	f=$dest/$1
	id=$(readelf -n "$f" | sed -n 's/^ *Build ID: *//p')
	dbg=$dest/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	[ -n "$id" ] || { echo "$1: no build ID"; return 1; }
	! readelf -S "$f" | grep -q '\.debug_info' || { echo "$1: not stripped"; return 1; }
	! readelf -S "$f" | grep -q '\.symtab' || { echo "$1: has a symbol table"; return 1; }
	readelf -S "$dbg" | grep -q '\.debug_info' || { echo "no debug info in $dbg"; return 1; }
	[ "$(readelf -n "$dbg" | sed -n 's/^ *Build ID: *//p')" = "$id" ]
}

# The library's version is its symbol map's newest node; the release's is
# VERSION's, and hyperctl says it.
versions() {
	node=$(sed -n 's/^LIBHYPER_\([0-9.]*\) {.*/\1/p' "$src/libhyper/libhyper.map" | tail -n 1)
	[ "$libver" = "$node.0" ] || { echo "library $libver, map $node"; return 1; }
	"$dest/usr/sbin/hyperctl" --version | grep -F "$(cat "$src/VERSION")"
}

# Staged: no ldconfig, no depmod; to the machine: both.
ldconfig_unless_staged() {
	! make -C "$src" -n install DESTDIR="$dest" PREFIX=/usr | grep -q '^ldconfig' &&
	make -C "$src" -n install PREFIX=/usr | grep -q '^ldconfig' &&
	make -C "$src" -n uninstall PREFIX=/usr | grep -q '^ldconfig'
}

# make uninstall takes back every file and link make install made.
nothing_left() {
	make -C "$src" uninstall DESTDIR="$dest" PREFIX=/usr > /dev/null || return 1
	left=$(find "$dest" ! -type d)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

check "module in /lib/modules/$kver/updates, no depmod, host untouched" module_in_updates
check "hyperctl in sbin with its man page" hyperctl_runs
check "library, headers, pkg-config, man pages, hyper-run" library_and_headers
for f in usr/lib/libhyper.so.$libver usr/bin/hyper-run usr/bin/hyper-plan \
	 usr/sbin/hyperctl; do
	check "$f stripped, debug info by build ID" stripped_with_debug "$f"
done
check "hyper-plan -m reads share/hyper-plan/configs" installed_models
check "installed libhyperplan: hyper_plan_* only, no tree path" planner_exports
check "library version from the symbol map, release version from VERSION" versions
check "ldconfig after install and uninstall, unless DESTDIR" ldconfig_unless_staged
check "make uninstall leaves nothing" nothing_left
finish
