#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A kernel hyper.ko cannot be built for is refused at build time with one
# line naming what is missing: headers that are not installed, and a
# kernel that does not export a symbol the module uses (the Debian
# headers for KVER, with that export taken out of a copy of their
# Module.symvers).
# usage: kexports_test.sh SRCDIR OBJDIR KVER
set -u
src=$1 obj=$2 kver=$3
. "$(dirname "$0")/../lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

missing_headers() {
	out=$(make -s -C "$src" O="$obj" module KVER=6.0.0-99-amd64 2>&1) && return 1
	echo "$out"
	[ "$(echo "$out" | grep -c "^hyperoffload:")" -eq 1 ] &&
		echo "$out" | grep -qx 'hyperoffload: no headers for kernel 6.0.0-99-amd64; install them with: apt-get install linux-headers-6.0.0-99-amd64'
}

# The headers of KVER, but without the add_memory_driver_managed export.
fake_kdir() {
	real=$(readlink -f "/lib/modules/$kver/build")
	mkdir -p "$tmp/kdir" "$tmp/mod"
	for f in "$real"/* "$real"/.config "$real"/.kernelvariables; do
		[ -e "$f" ] || continue
		case $(basename "$f") in
		Module.symvers) ;;
		*) ln -s "$(readlink -f "$f")" "$tmp/kdir/$(basename "$f")" ;;
		esac
	done
	grep -v '	add_memory_driver_managed	' "$real/Module.symvers" > "$tmp/kdir/Module.symvers"
	cp -r "$src/Kbuild" "$src/kmod" "$src/include" "$tmp/mod/"
	rm -f "$tmp/mod/kmod/"*.o "$tmp/mod/kmod/"*.ko "$tmp/mod/kmod/".*.cmd
}

missing_export() {
	fake_kdir || return 1
	out=$("$src/tools/build/kbuild.sh" "$kver" "$tmp/kdir" "$tmp/mod" 2>&1) && return 1
	echo "$out" | tail -n 3
	[ ! -e "$tmp/mod/kmod/hyper.ko" ] &&
		echo "$out" | grep -qx "hyperoffload: kernel $kver does not export add_memory_driver_managed, which hyper.ko needs; it cannot be built for this kernel (tools/build/kver.sh --all lists the usable ones)"
}

check missing_headers_named_in_one_line missing_headers
check kernel_without_an_export_refused_at_build_time missing_export
finish
