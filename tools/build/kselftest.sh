#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Extract the kselftest harness and checkpatch from Debian's linux-source
# tarball into DEST.  Only these few files are taken, which costs seconds.
# usage: kselftest.sh DEST
set -eu
dest=$1
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "hyperoffload: /usr/src/linux-source-*.tar.xz missing; install linux-source" >&2
	exit 1
fi
top=$(basename "$tarball" .tar.xz)
tmp="$dest.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
tar -xJf "$tarball" -C "$tmp" --wildcards \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest_module.h" \
	"$top/scripts/checkpatch.pl" \
	"$top/scripts/spelling.txt" \
	"$top/scripts/const_structs.checkpatch"
rm -rf "$dest"
mkdir -p "$dest/scripts"
mv "$tmp/$top/tools/testing/selftests/"kselftest*.h "$dest/"
mv "$tmp/$top/scripts/"* "$dest/scripts/"
rm -rf "$tmp"
# tar keeps the tarball's old mtimes; make needs the extraction time.
touch "$dest"/kselftest*.h
