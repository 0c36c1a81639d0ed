#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kernels hyper.ko is built for and the VM boots.  The host may run
# another kernel entirely, so `uname -r` is never the answer here.
#
#   kver.sh           the default kernel (KVER): the one Debian's
#                     linux-image-amd64 stands for, 6.1 on Debian 12,
#                     whatever else is installed; else the oldest kernel
#                     that has both headers and an image
#   kver.sh --all     every installed kernel with headers and an image
#                     (KVERS), the default one first
#   kver.sh --check V one clear line and exit 1 if kernel V lacks its
#                     headers (or, with --image, its image)
#
# A kernel counts when it has a kbuild tree (/lib/modules/V/build, from
# linux-headers-V) and a bootable image (/boot/vmlinuz-V, linux-image-V).
set -u
BOOT=/boot

usable() {
	[ -f "/lib/modules/$1/build/Makefile" ] && [ -f "$BOOT/vmlinuz-$1" ]
}

# Every complete kernel, oldest first.
all() {
	for d in /lib/modules/*/build; do
		v=${d#/lib/modules/}
		v=${v%/build}
		usable "$v" && echo "$v"
	done | sort -V
}

# What linux-image-amd64 depends on: "linux-image-6.1.0-57-amd64 (= ...)".
meta() {
	dpkg-query -W -f='${Depends}\n' linux-image-amd64 2>/dev/null |
		tr ',|' '\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' | head -n 1
}

default() {
	v=$(meta)
	if [ -n "$v" ] && usable "$v"; then
		echo "$v"
		return 0
	fi
	v=$(all | head -n 1)
	if [ -z "$v" ]; then
		echo "hyperoffload: no kernel with both headers and image; install linux-image-amd64 linux-headers-amd64" >&2
		return 1
	fi
	echo "$v"
}

case ${1:-} in
'')
	default
	;;
--all)
	d=$(default) || exit 1
	echo "$d"
	all | grep -vxF "$d"
	;;
--check)
	v=${2:?usage: kver.sh --check KVER [--image]}
	if [ ! -f "/lib/modules/$v/build/Makefile" ]; then
		echo "hyperoffload: no headers for kernel $v; install them with: apt-get install linux-headers-$v" >&2
		exit 1
	fi
	if [ "${3:-}" = --image ] && [ ! -f "$BOOT/vmlinuz-$v" ]; then
		echo "hyperoffload: no image for kernel $v ($BOOT/vmlinuz-$v); install it with: apt-get install linux-image-$v" >&2
		exit 1
	fi
	;;
*)
	echo "usage: kver.sh [--all | --check KVER [--image]]" >&2
	exit 2
	;;
esac
