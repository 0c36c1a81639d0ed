#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install an ELF file stripped, its debug info kept the way Debian keeps
# it (dh_strip): in DEBUGDIR/.build-id/NN/REST.debug, found by gdb through
# the build ID; or remove both again.
#
# usage: install-elf.sh install MODE SRC DEST DEBUGDIR
#        install-elf.sh uninstall DEST DEBUGDIR
# A file without a build ID is installed unstripped, and that is said:
# its debug info could not be found again.
set -eu

build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p'
}

case ${1:-} in
install)
	[ $# -eq 5 ] || { echo "usage: install-elf.sh install MODE SRC DEST DEBUGDIR" >&2; exit 2; }
	mode=$2 src=$3 dest=$4 dbg=$5
	install -D -m "$mode" "$src" "$dest"
	id=$(build_id "$dest")
	if [ -z "$id" ]; then
		echo "install-elf: $src has no build ID: installed with its debug info, unstripped" >&2
		exit 0
	fi
	debug=$dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	mkdir -p "$(dirname "$debug")"
	objcopy --only-keep-debug --compress-debug-sections "$dest" "$debug"
	chmod 0644 "$debug"
	# As dh_strip: shared libraries lose what no one links against too.
	case $dest in
	*.so|*.so.*) unneeded=--strip-unneeded ;;
	*) unneeded= ;;
	esac
	strip --remove-section=.comment --remove-section=.note $unneeded "$dest"
	;;
uninstall)
	[ $# -eq 3 ] || { echo "usage: install-elf.sh uninstall DEST DEBUGDIR" >&2; exit 2; }
	dest=$2 dbg=$3
	[ -e "$dest" ] || exit 0
	id=$(build_id "$dest")
	if [ -n "$id" ]; then
		debug=$dbg/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
		rm -f "$debug"
		rmdir "$(dirname "$debug")" 2>/dev/null || true
	fi
	rm -f "$dest"
	;;
*)
	echo "usage: install-elf.sh install|uninstall ..." >&2
	exit 2
	;;
esac
