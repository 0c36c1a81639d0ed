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
# Package names of the wanted sections; "[name]" lines start a section.
wanted=$(sed -e 's/#.*//' "$list" | awk -v g="$group" '
	/^\[.*\]$/ { sec = substr($0, 2, length($0) - 2); next }
	NF && (g == "all" || sec == g) { print $1 }')
missing=
for p in $wanted; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' ||
		missing="$missing $p"
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
