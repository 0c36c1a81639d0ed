#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Make sure every Debian package in tools/build/packages.txt is installed.
# As root the missing ones are installed; otherwise the exact apt-get line
# is printed and the build stops.
set -eu
list="$(dirname "$0")/packages.txt"
missing=
for p in $(sed -e 's/#.*//' "$list"); do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "hyperoffload: missing Debian packages; install them with:" >&2
	echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "hyperoffload: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
