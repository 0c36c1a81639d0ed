#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make install DESTDIR=... PREFIX=/usr` puts everything where a package
# wants it, and leaves the machine's /lib/modules alone.
# usage: install_test.sh SRCDIR OBJDIR KVER
set -u
src=$1 obj=$2 kver=$3
. "$(dirname "$0")/tap.sh"

dest=$(mktemp -d /tmp/hyper-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
# Not the make that runs this test: its jobserver is not ours.  O goes in
# the environment: on the command line make would hand it on to kbuild,
# which takes O= as its own output directory.
unset MAKEFLAGS MFLAGS MAKELEVEL
export O="$obj"
real_ko=/lib/modules/$kver/updates/hyper.ko
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
	for f in usr/lib/libhyper.so.1 usr/lib/libhyper.so usr/lib/libhyper.a \
		usr/include/hyper/hyper.h usr/share/man/man7/libhyper.7 \
		usr/share/man/man3/hyper_open.3 usr/bin/hyper-run \
		usr/share/man/man1/hyper-run.1; do
		[ -e "$dest/$f" ] || { echo "missing $f"; return 1; }
	done
	grep -x 'prefix=/usr' "$dest/usr/lib/pkgconfig/libhyper.pc"
}

check "module in /lib/modules/$kver/updates, no depmod, host untouched" module_in_updates
check "hyperctl in sbin with its man page" hyperctl_runs
check "library, headers, pkg-config, man pages, hyper-run" library_and_headers
finish
