#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build the debug test kernel (KASAN, lockdep, kmemleak, atomic-sleep
# checks) from Debian's linux-source tarball, once per machine.
#
# The source is extracted, configured from `make tinyconfig` plus
# tools/build/debug-kernel.config, and built in place (bzImage, then the
# modpost pass that writes Module.symvers), so that an out-of-tree module
# builds against it with `make -C TREE M=...`.  A stamp keyed on the
# linux-source version, the fragment and this script makes a second run
# free.  Prints the tree's path as its last line.
#
# usage: debug-kernel.sh [DIR]          (DIR defaults to build/debug-kernel)
# JOBS (default 2) and NICE (default 19) set the build's share of the host.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
frag=$top/tools/build/debug-kernel.config
dir=${1:-$top/build/debug-kernel}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "debug-kernel: no /usr/src/linux-source-*.tar.xz; install linux-source" >&2
	exit 1
fi
name=$(basename "$tarball" .tar.xz)		# linux-source-6.1
pkgver=$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || stat -c %Y "$tarball")
key=$( { echo "$name $pkgver"; cat "$frag" "$0"; } | sha256sum | cut -c1-16)
tree=$dir/$name
stamp=$dir/stamp-$key

if [ -f "$stamp" ] && [ -f "$tree/arch/x86/boot/bzImage" ]; then
	echo "$tree"
	exit 0
fi

# A new linux-source version gets a fresh tree; a new fragment reuses the
# extracted one (kbuild rebuilds what the config change touches).
if [ ! -f "$dir/extracted-$name-$pkgver" ]; then
	echo "debug-kernel: extracting $tarball" >&2
	rm -rf "$tree" "$dir"/extracted-* "$dir"/stamp-*
	tar -xJf "$tarball" -C "$dir"
	touch "$dir/extracted-$name-$pkgver"
fi
rm -f "$dir"/stamp-*

kmake() {
	nice -n "${NICE:-19}" make -C "$tree" ARCH=x86_64 "$@"
}

echo "debug-kernel: configuring (tinyconfig + $(basename "$frag"))" >&2
kmake -s tinyconfig >&2
(cd "$tree" && ARCH=x86_64 scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null)
kmake -s olddefconfig >&2

# Every option the fragment asks for must have survived the dependency
# resolution; a silently dropped one would make the run mean nothing.
missing=$(sed -n 's/^\(CONFIG_[A-Z0-9_]*=.*\)$/\1/p' "$frag" |
	while read -r want; do
		grep -qx "$want" "$tree/.config" || echo "$want"
	done)
missing=$missing$(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$frag" |
	while read -r opt; do
		if grep -q "^$opt=" "$tree/.config"; then
			echo "$opt (should be unset)"
		fi
	done)
if [ -n "$missing" ]; then
	echo "debug-kernel: options lost from $frag (missing dependency?):" >&2
	echo "$missing" | sed 's/^/  /' >&2
	exit 1
fi

echo "debug-kernel: building in $tree (make -j${JOBS:-2}, nice ${NICE:-19}; log in $dir/build.log)" >&2
start=$(date +%s)
if ! kmake -j"${JOBS:-2}" bzImage modules > "$dir/build.log" 2>&1; then
	tail -n 30 "$dir/build.log" >&2
	echo "debug-kernel: build failed; see $dir/build.log" >&2
	exit 1
fi
secs=$(($(date +%s) - start))
echo "debug-kernel: built in ${secs}s" >&2
echo "$secs" > "$dir/build-seconds"
touch "$stamp"
echo "$tree"
