#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build the test VM's initramfs: busybox, /init, the module, the suites,
# test programs under /tests and tools under /bin, each with the shared
# libraries ldd finds for it.  -r DIR copies DIR's tree over the root as it
# is (an interpreter and its library files), with the libraries of its
# executables and shared objects.  -m puts kernel modules of the VM's
# kernel in /lib/modules/NAME.ko, uncompressed (busybox insmod and the
# tests' finit_module() take no .ko.xz).
# usage: mkinitramfs.sh OUT.cpio.gz INIT KO [-s SUITE...] [-t TEST...] [-b BIN...] [-r DIR...] [-m MOD.ko[.xz]...]
set -eu
out=$1 init=$2 ko=$3
shift 3
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/sbin" "$root/tests" "$root/suites" \
	"$root/lib/modules" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	"$root/etc"
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done
install -m 0755 "$init" "$root/init"
cp "$ko" "$root/lib/modules/hyper.ko"

copy_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

dir=tests
for f in "$@"; do
	case $f in
	-s) dir=suites; continue ;;
	-t) dir=tests; continue ;;
	-b) dir=bin; continue ;;
	-r) dir=root; continue ;;
	-m) dir=kmods; continue ;;
	esac
	if [ "$dir" = kmods ]; then
		name=$(basename "$f")
		case $name in
		*.xz) xz -dc "$f" > "$root/lib/modules/${name%.xz}" ;;
		*) cp -L "$f" "$root/lib/modules/$name" ;;
		esac
		continue
	fi
	if [ "$dir" = root ]; then
		cp -a "$f/." "$root/"
		find "$f" -type f \( -perm -u+x -o -name '*.so*' \) | while read -r x; do
			copy_libs "$x"
		done
		continue
	fi
	cp -L "$f" "$root/$dir/$(basename "$f")"
	[ "$dir" = suites ] || copy_libs "$f"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
