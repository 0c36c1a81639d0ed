#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# hyper.ko through dkms against the Debian headers for KVER: stage, add,
# build, install, remove.  Everything goes
# to scratch trees (dkms --sourcetree/--dkmstree/--installtree, signing
# key included), so nothing of the machine's dkms state is touched, runs
# can overlap, and the scratch directory goes at the end.
# usage: dkms_test.sh SRCDIR KVER VERSION
set -u
src=$1 kver=$2 version=$3
. "$(dirname "$0")/../lib/tap.sh"
dkms_sh=$src/tools/dkms/dkms.sh

scratch=$(mktemp -d /tmp/hyper-dkms.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
export DKMS_SOURCETREE=$scratch/src DKMS_TREE=$scratch/dkms \
	DKMS_INSTALLTREE=$scratch/root/lib/modules DKMS_NO_DEPMOD=1
# dkms signs with a key it makes when there is none; keep it here too.
export mok_signing_key=$scratch/mok.key mok_certificate=$scratch/mok.pub
mkdir -p "$DKMS_SOURCETREE" "$DKMS_TREE" "$DKMS_INSTALLTREE/$kver"
staged=$DKMS_SOURCETREE/hyperoffload-$version

staged_tree() {
	"$dkms_sh" stage "$src" "$DKMS_SOURCETREE" "$version" &&
	grep -qx "PACKAGE_VERSION=\"$version\"" "$staged/dkms.conf" &&
	for f in Kbuild kmod/Kbuild include/uapi/linux/hyper.h \
		$(cd "$src" && ls kmod/*.c kmod/*.h); do
		[ -f "$staged/$f" ] || { echo "missing $f"; exit 1; }
	done
}

installed_and_found() {
	dkms install -m hyperoffload -v "$version" -k "$kver" \
		--sourcetree "$DKMS_SOURCETREE" --dkmstree "$DKMS_TREE" \
		--installtree "$DKMS_INSTALLTREE" --no-depmod &&
	ko=$DKMS_INSTALLTREE/$kver/updates/dkms/hyper.ko &&
	[ -f "$ko" ] &&
	depmod -b "$scratch/root" "$kver" 2>/dev/null &&
	modprobe -d "$scratch/root" -S "$kver" --show-depends hyper |
		grep "insmod $ko"
}

removed() {
	"$dkms_sh" remove "$version" &&
	[ -z "$(dkms status -m hyperoffload -v "$version" --dkmstree "$DKMS_TREE" \
		--sourcetree "$DKMS_SOURCETREE")" ] &&
	[ ! -e "$DKMS_INSTALLTREE/$kver/updates/dkms/hyper.ko" ] &&
	[ ! -e "$staged" ]
}

if ! command -v dkms >/dev/null; then
	skip "dkms" "dkms is not installed (tools/build/packages.txt has it)"
	finish
	exit
fi
check "stage the dkms source tree" staged_tree
check "dkms add + build for $kver, module checked" "$dkms_sh" build "$src" "$version" "$kver"
if [ "$(id -u)" -eq 0 ]; then
	check "dkms install into updates/dkms, found by modprobe" installed_and_found
else
	skip "dkms install" "dkms install needs root"
fi
check "dkms remove --all leaves nothing" removed
finish
