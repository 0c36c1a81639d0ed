#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# hyper.ko through dkms.
#
#   dkms.sh stage   SRCDIR DEST VERSION  copy what the module build needs
#                                        (Kbuild, kmod/, include/uapi/,
#                                        COPYING, dkms.conf) to
#                                        DEST/hyperoffload-VERSION/
#   dkms.sh build   SRCDIR VERSION KVER  stage into the dkms source tree,
#                                        dkms add (once), dkms build for
#                                        KVER, check the built module
#   dkms.sh install SRCDIR VERSION KVER  the same, then dkms install
#   dkms.sh remove  VERSION              dkms remove --all, drop the source
#
# By default dkms's own trees are used (/usr/src, /var/lib/dkms,
# /lib/modules), which needs root.  DKMS_SOURCETREE, DKMS_TREE and
# DKMS_INSTALLTREE name others (the selftest builds in a scratch
# directory that way); DKMS_NO_DEPMOD=1 skips depmod on install/remove.
set -eu

NAME=hyperoffload
MODULE=hyper

die() {
	echo "dkms.sh: $*" >&2
	exit 1
}

# The options that point dkms at the trees in use.
trees() {
	[ -n "${DKMS_SOURCETREE:-}" ] && printf ' --sourcetree %s' "$DKMS_SOURCETREE"
	[ -n "${DKMS_TREE:-}" ] && printf ' --dkmstree %s' "$DKMS_TREE"
	[ -n "${DKMS_INSTALLTREE:-}" ] && printf ' --installtree %s' "$DKMS_INSTALLTREE"
	[ "${DKMS_NO_DEPMOD:-0}" = 1 ] && printf ' --no-depmod'
	return 0
}

run_dkms() {
	# shellcheck disable=SC2046 # trees() prints separate words on purpose
	dkms "$@" $(trees)
}

stage() {
	src=$1 dest=$2/$NAME-$3 version=$3
	[ -f "$src/Kbuild" ] && [ -f "$src/kmod/Kbuild" ] ||
		die "$src is not a hyperoffload source tree"
	rm -rf "$dest"
	mkdir -p "$dest/kmod" "$dest/include/uapi/linux"
	cp "$src/Kbuild" "$src/COPYING" "$dest/"
	cp "$src/kmod/Kbuild" "$src"/kmod/*.c "$src"/kmod/*.h "$dest/kmod/"
	cp "$src/include/uapi/linux/hyper.h" "$dest/include/uapi/linux/"
	sed "s/@VERSION@/$version/" "$src/tools/dkms/dkms.conf" > "$dest/dkms.conf"
	echo "$dest"
}

# The module dkms built for KVER: right kernel, licence and description.
check_built() {
	version=$1 kver=$2
	tree=${DKMS_TREE:-/var/lib/dkms}
	ko=$(find "$tree/$NAME/$version/$kver" -name "$MODULE.ko*" 2>/dev/null | head -n 1)
	[ -n "$ko" ] || die "no $MODULE.ko under $tree/$NAME/$version/$kver"
	vermagic=$(modinfo -F vermagic "$ko")
	case $vermagic in
	"$kver "*) ;;
	*) die "$ko: vermagic '$vermagic' is not for $kver" ;;
	esac
	[ "$(modinfo -F license "$ko")" = GPL ] || die "$ko: licence is not GPL"
	[ -n "$(modinfo -F description "$ko")" ] || die "$ko: no description"
	echo "$ko: $vermagic"
}

add_build() {
	src=$1 version=$2 kver=$3
	stage "$src" "${DKMS_SOURCETREE:-/usr/src}" "$version" >/dev/null
	# A re-run rebuilds from the freshly staged source.
	if run_dkms status -m "$NAME" -v "$version" | grep -q .; then
		run_dkms remove -m "$NAME" -v "$version" --all >/dev/null
	fi
	run_dkms add -m "$NAME" -v "$version"
	run_dkms build -m "$NAME" -v "$version" -k "$kver"
	check_built "$version" "$kver"
}

case ${1:-} in
stage)
	[ $# -eq 4 ] || die "usage: dkms.sh stage SRCDIR DEST VERSION"
	stage "$2" "$3" "$4"
	;;
build)
	[ $# -eq 4 ] || die "usage: dkms.sh build SRCDIR VERSION KVER"
	add_build "$2" "$3" "$4"
	;;
install)
	[ $# -eq 4 ] || die "usage: dkms.sh install SRCDIR VERSION KVER"
	add_build "$2" "$3" "$4"
	run_dkms install -m "$NAME" -v "$3" -k "$4"
	;;
remove)
	[ $# -eq 2 ] || die "usage: dkms.sh remove VERSION"
	if run_dkms status -m "$NAME" -v "$2" | grep -q .; then
		run_dkms remove -m "$NAME" -v "$2" --all
	fi
	rm -rf "${DKMS_SOURCETREE:-/usr/src}/$NAME-$2"
	;;
*)
	sed -n '3,18s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
