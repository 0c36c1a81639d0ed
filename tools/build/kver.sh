#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the newest kernel version that has both a kbuild tree (Debian's
# linux-headers) and a bootable image (Debian's linux-image).  The host may
# run another kernel entirely, so `uname -r` is never the answer here.
for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V -r); do
	v=${d#/lib/modules/}
	v=${v%/build}
	if [ -f "$d/Makefile" ] && [ -f "/boot/vmlinuz-$v" ]; then
		echo "$v"
		exit 0
	fi
done
echo "hyperoffload: no kernel with both headers and image; install linux-image-amd64 linux-headers-amd64" >&2
exit 1
