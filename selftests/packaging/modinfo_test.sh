#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What `modinfo hyper.ko` tells an operator: a description, the licence
# (GPL: the module uses GPL-only exports), and a description for every
# parameter; and every parameter is in the admin guide's table.
# usage: modinfo_test.sh SRCDIR
set -u
src=$1
ko=$src/kmod/hyper.ko
guide=$src/Documentation/admin-guide.md
. "$(dirname "$0")/../lib/tap.sh"

has_description() {
	d=$(modinfo -F description "$ko") && [ -n "$d" ] && echo "$d"
}

is_gpl() {
	l=$(modinfo -F license "$ko") && echo "$l" && [ "$l" = GPL ]
}

# parmtype comes from module_param(), parm from MODULE_PARM_DESC().
params() {
	modinfo -F parmtype "$ko" | cut -d: -f1 | sort
}

every_param_described() {
	[ -n "$(params)" ] || { echo "no parameters at all?"; return 1; }
	rc=0
	for p in $(params); do
		desc=$(modinfo -F parm "$ko" | sed -n "s/^$p:\(.*\)/\1/p")
		# modinfo appends " (type)"; a description is more than that.
		if [ -z "$(echo "$desc" | sed 's/ *([a-z]*)$//')" ]; then
			echo "parameter $p has no description"
			rc=1
		else
			echo "$p:$desc"
		fi
	done
	return $rc
}

every_param_documented() {
	rc=0
	for p in $(params); do
		grep -q "^| \`$p\`" "$guide" || { echo "$p is not in $guide"; rc=1; }
	done
	return $rc
}

check "modinfo: description" has_description
check "modinfo: license GPL" is_gpl
check "modinfo: every parameter has a description" every_param_described
check "admin-guide: every parameter is in the table" every_param_documented
finish
