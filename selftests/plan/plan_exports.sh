#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What libhyperplan hands out, built or installed: one check, sourced by
# plan_abi_test.sh and packaging/install_test.sh.
#   plan_exports SO ARCHIVE SRCDIR
# The .so exports hyper_plan_* alone; every global of the archive is
# hyper_plan_* (public) or hyper_plan__* (internal); neither holds the
# tools' code (model generators, --feedback, pictures); the .so names no
# path of the source tree and does not read /proc/self/exe.  Prints what
# is wrong, fails then.

plan_exports() {
	so=$1 ar=$2 srcdir=$3 bad=0
	dyn=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWGSi]$/ { print $3 }')
	[ -n "$dyn" ] || { echo "$so: no symbols"; return 1; }
	out=$(echo "$dyn" | grep -v '^hyper_plan_') &&
		{ echo "$so exports other than hyper_plan_*: $out"; bad=1; }
	glob=$(nm --defined-only "$ar" | awk '$2 ~ /^[TDBRVWGSi]$/ { print $3 }')
	[ -n "$glob" ] || { echo "$ar: no symbols"; return 1; }
	out=$(echo "$glob" | grep -v '^hyper_plan_') &&
		{ echo "$ar defines globals other than hyper_plan_*:" $out; bad=1; }
	# The tools' archive's, not the library's.
	for s in model_from_config gen_model graph_feedback plot_svg trace_json; do
		if echo "$glob" | grep -q "$s\$"; then
			echo "$ar holds the tools' $s"
			bad=1
		fi
	done
	if strings -a "$so" | grep -F -e "$srcdir" -e /proc/self/exe; then
		echo "$so names the tree $srcdir or reads /proc/self/exe"
		bad=1
	fi
	return $bad
}
