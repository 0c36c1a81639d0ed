#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Debian packages of tools/build/packages.txt.
#
# usage: deps.sh [--check] [build|all]
#   build   the [build] section: what `make` and `make install` need
#   all     every section (the default): tests, VM, demo, packaging too
#   --check install nothing: print the exact apt-get line for what is
#           missing and exit 1.  Without it, missing packages are installed
#           as root; as another user the line is printed and it exits 1.
# `make` and `make install` check; `make deps`, `make check` and `make
# demo` (the README's commands on a fresh machine) install.
#
# A line "kernel:SERIES FLAVOUR" (kernel:6.12 amd64) stands for the image
# and headers of one kernel of that series, linux-image-6.12.N+deb12-amd64
# and linux-headers-6.12.N+deb12-amd64: any installed pair will do, else
# the newest N the archive has for both, found with apt-cache when
# installing, so that the list keeps working when Debian bumps N.
set -eu
# HYPER_PACKAGES: another list, for the tests of this script.
list=${HYPER_PACKAGES:-$(dirname "$0")/packages.txt}
install=1 group=all
for a in "$@"; do
	case $a in
	--check) install= ;;
	build|all) group=$a ;;
	*) echo "usage: deps.sh [--check] [build|all]" >&2; exit 2 ;;
	esac
done

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q ' installed$'
}

# The versions V (6.12.118+deb12-amd64) of SERIES and FLAVOUR that exist
# as installed packages (with $1 = dpkg) or in the archive (apt), newest
# first, with both image and headers.
kernel_versions() {
	how=$1 series=$2 flavour=$3
	if [ "$how" = dpkg ]; then
		dpkg-query -W -f='${Status} ${Package}\n' "linux-image-$series.*" 2>/dev/null |
			sed -n 's/.* installed linux-image-//p'
	else
		apt-cache pkgnames "linux-image-$series." 2>/dev/null |
			sed 's/^linux-image-//'
	fi | grep -E "^$(echo "$series" | sed 's/\./\\./g')\.[0-9]+\+deb[0-9]+-$flavour\$" |
	sort -V -r | while read -r v; do
		if [ "$how" = dpkg ]; then
			installed "linux-headers-$v" && echo "$v"
		else
			apt-cache show "linux-headers-$v" >/dev/null 2>&1 && echo "$v"
		fi
	done
}

# Entries of the wanted sections; "[name]" lines start a section, and a
# kernel line becomes one word, kernel:SERIES:FLAVOUR.
wanted=$(sed -e 's/#.*//' "$list" | awk -v g="$group" '
	/^\[.*\]$/ { sec = substr($0, 2, length($0) - 2); next }
	NF && (g == "all" || sec == g) {
		if ($1 ~ /^kernel:/) print $1 ":" $2; else print $1
	}')
missing=
for p in $wanted; do
	case $p in
	kernel:*)
		series=$(echo "$p" | cut -d: -f2)
		flavour=$(echo "$p" | cut -d: -f3)
		[ -n "$(kernel_versions dpkg "$series" "$flavour" | head -n 1)" ] &&
			continue
		v=$(kernel_versions apt "$series" "$flavour" | head -n 1)
		if [ -z "$v" ]; then
			echo "hyperoffload: no linux-image-$series.*-$flavour with headers in the apt archive; run apt-get update, or check /etc/apt/sources.list" >&2
			exit 1
		fi
		missing="$missing linux-image-$v linux-headers-$v"
		;;
	*)
		installed "$p" || missing="$missing $p"
		;;
	esac
done
[ -z "$missing" ] && exit 0
sudo=
[ "$(id -u)" -eq 0 ] || sudo="sudo "
if [ -z "$install" ] || [ -n "$sudo" ]; then
	echo "hyperoffload: missing Debian packages; install them with:" >&2
	echo "  ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends$missing" >&2
	[ -n "$install" ] || echo "  (or run make deps, which does it)" >&2
	exit 1
fi
echo "hyperoffload: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
