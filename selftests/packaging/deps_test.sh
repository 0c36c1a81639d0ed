#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Which targets install Debian packages: plain make and make install name
# what is missing with the exact apt-get line and install nothing; make
# deps, check and demo install.  A made-up package list
# (HYPER_PACKAGES) stands in for the real one, so nothing is installed.
# usage: deps_test.sh SRCDIR
set -u
src=$1
. "$(dirname "$0")/../lib/tap.sh"

dir=$(mktemp -d /tmp/hyper-deps.XXXXXX)
trap 'rm -rf "$dir"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL HYPER_DEPS_CHECKED
printf '[build]\ngcc\nhyper-no-such-build-pkg\n[test]\nhyper-no-such-test-pkg\n' \
	> "$dir/packages.txt"
export HYPER_PACKAGES="$dir/packages.txt"
[ "$(id -u)" -eq 0 ] && sudo= || sudo="sudo "

build_line() {
	out=$("$src/tools/build/deps.sh" --check build 2>&1) && return 1
	printf '%s\n' "$out"
	[ "$out" = "hyperoffload: missing Debian packages; install them with:
  ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends hyper-no-such-build-pkg
  (or run make deps, which does it)" ]
}

all_line() {
	"$src/tools/build/deps.sh" --check 2>&1 |
		grep -x "  ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends hyper-no-such-build-pkg hyper-no-such-test-pkg"
}

# $1: the make goal.  It stops before building, on the build list alone.
make_checks_only() {
	out=$(make -C "$src" -n "$@" 2>&1) && return 1
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "no-such-build-pkg" &&
	! printf '%s\n' "$out" | grep -q "no-such-test-pkg" &&
	! printf '%s\n' "$out" | grep -q "hyperoffload: installing" &&
	printf '%s\n' "$out" | grep -q "Debian packages are missing; see the line above"
}

# $1: the make goal.  A stand-in apt-get on PATH records what it was
# asked to install (as root, deps.sh runs apt-get).
installs_all() {
	rm -f "$dir/apt.log"
	out=$(PATH="$dir/bin:$PATH" make -C "$src" -n "$1" 2>&1)
	printf '%s\n' "$out"
	grep -qx "install -y -q --no-install-recommends hyper-no-such-build-pkg hyper-no-such-test-pkg" \
		"$dir/apt.log"
}

installs_nothing() {
	rm -f "$dir/apt.log"
	PATH="$dir/bin:$PATH" make -C "$src" -n "$1" > /dev/null 2>&1
	[ ! -e "$dir/apt.log" ]
}

mkdir -p "$dir/bin"
printf '#!/bin/sh\necho "$*" >> %s/apt.log\n' "$dir" > "$dir/bin/apt-get"
chmod +x "$dir/bin/apt-get"

check "deps.sh --check build: one apt-get line, build packages only" build_line
check "deps.sh --check: every section on the line" all_line
check "plain make installs nothing, names the package" make_checks_only all
check "make install installs nothing, names the package" make_checks_only install
if [ -z "$sudo" ]; then
	for g in deps check demo; do
		check "make $g installs every section" installs_all $g
	done
	for g in all install; do
		check "make $g runs no apt-get" installs_nothing $g
	done
else
	skip "installing goals" "deps.sh installs only as root"
fi
finish
