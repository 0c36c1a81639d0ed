#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libhyperplan's interface: every exported symbol is versioned and has a
# man page, <hyper/plan.h> compiles on its own (C and C++), and a program
# linked with the shared library (not the archive) and Python's ctypes
# (as the framework front end) plan a graph.  TAP.
# usage: plan_abi_test.sh SRCDIR LIBDIR
set -u
src=$1 lib=$2
. "$src/selftests/lib/tap.sh"
. "$src/selftests/plan/plan_exports.sh"

tmp=$(mktemp -d /tmp/hyper-plan-abi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

symbols_documented() {
	syms=$(nm -D --defined-only "$lib/libhyperplan.so.1" | awk '$2 == "T" { print $3 }')
	[ -n "$syms" ] || return 1
	for s in $syms; do
		case $s in *@@HYPERPLAN_1.[01]) ;; *) echo "unversioned: $s"; return 1;; esac
		f=$src/libhyperplan/man/${s%@@*}.3
		[ -f "$f" ] || { echo "no man page: $f"; return 1; }
		man -l --warnings "$f" 2>&1 >/dev/null | { ! grep .; } || return 1
	done
	# A 1.1 function sits in the 1.1 node, which programs built on 1.0 ignore.
	echo "$syms" | grep -qx 'hyper_plan_profile_measure@@HYPERPLAN_1.1' || return 1
	# And nothing of the planner's internals leaks.
	[ "$(echo "$syms" | grep -cv '^hyper_plan_')" = 0 ]
}

header_alone() {
	printf '#include <hyper/plan.h>\nint main(void) { return HYPER_PLAN_VERSION != 1; }\n' > "$tmp/h.c"
	gcc -std=c99 -Wall -Wextra -pedantic -Werror -I"$src/include" -c "$tmp/h.c" -o "$tmp/h.o" &&
	g++ -Wall -Wextra -Werror -I"$src/include" -x c++ -c "$tmp/h.c" -o "$tmp/hpp.o"
}

links_shared() {
	cat > "$tmp/p.c" <<'C'
#include <stdio.h>
#include <hyper/plan.h>
int main(void)
{
	struct hyper_plan_graph *g;
	struct hyper_plan *p;
	struct hyper_plan_prediction pr;
	struct hyper_schedule *s;
	uint32_t in[2] = { 0, 1 }, out[1] = { 2 };
	char err[256];

	if (hyper_plan_graph_new("tiny", &g) ||
	    hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "x", .bytes = 4096, .kind = HYPER_KIND_ACTIVATION,
		.flags = HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_IN }) != 0 ||
	    hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "w", .bytes = 1 << 20, .kind = HYPER_KIND_WEIGHT }) != 1 ||
	    hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "y", .bytes = 4096, .kind = HYPER_KIND_ACTIVATION }) != 2 ||
	    hyper_plan_graph_add_op(g, &(struct hyper_plan_op){
		.id = "mm", .compute_ns = 1000, .inputs = in, .nr_inputs = 2,
		.outputs = out, .nr_outputs = 1 }) != 0)
		return 1;
	if (hyper_plan_run(g, NULL, &p, err, sizeof(err)) ||
	    hyper_plan_prediction(p, &pr) ||
	    hyper_plan_schedule(p, &s, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("peak %llu of %llu\n", (unsigned long long)pr.peak_device_bytes,
	       (unsigned long long)pr.baseline_peak_bytes);
	hyper_schedule_free(s);
	hyper_plan_free(p);
	hyper_plan_graph_free(g);
	return 0;
}
C
	gcc -Wall -Wextra -Werror -I"$src/include" "$tmp/p.c" -o "$tmp/p" \
		-L"$lib" -lhyperplan -lhyper -Wl,-rpath,"$lib" &&
	"$tmp/p" | grep -x 'peak [0-9]* of [0-9]*'
}

# Its archive too, and nothing of the build tree (issue 24 section 3).
exports_prefixed() {
	plan_exports "$lib/libhyperplan.so.1" "$lib/libhyperplan.a" "$src"
}

# A library ends no process, and reads no configs (the tools do).
library_leaves_the_tools_theirs() {
	! grep -rn 'exit(' "$src/libhyperplan" &&
	! grep -rn 'HYPER_PLAN_CONFIGS\|proc/self' "$src/libhyperplan"
}

# Includes name the header's folder: only the library's root is on the
# include path, so that passes/sched.h cannot hide <sched.h>.
includes_qualified() {
	bad=$(grep -rn '^#[[:space:]]*include[[:space:]]*"[^"/]*"' "$src/libhyperplan" |
		while IFS= read -r l; do
			h=${l#*\"} h=${h%%\"*}
			[ -f "$src/libhyperplan/$h" ] || echo "$l"
		done)
	[ -z "$bad" ] || { echo "bare includes: $bad"; return 1; }
	grep -qx 'HPL_INC[[:space:]]*:= -iquote libhyperplan' "$src/libhyperplan/libhyperplan.mk" ||
		{ echo "HPL_INC: more than the library's root"; return 1; }
}

from_python() {
	/usr/bin/python3 "$src/selftests/plan/plan_ctypes.py" "$lib"
}

check "exported symbols: versioned, hyper_plan_* only, a man page each" symbols_documented
check "libhyperplan.so and .a: hyper_plan_* only, no tools' code, no tree path" exports_prefixed
check "no exit() and no config lookup in libhyperplan" library_leaves_the_tools_theirs
check "libhyperplan's includes name their folder, one root on the path" includes_qualified
check "<hyper/plan.h> compiles alone as C99 and C++" header_alone
check "a program linked with libhyperplan.so.1 plans a graph" links_shared
check "Python's ctypes plans a graph and hands it to libhyper" from_python
finish
