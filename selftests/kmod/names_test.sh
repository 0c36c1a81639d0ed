#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# hyper.ko and libhyper name things apart: no type, function, variable,
# enumerator or macro of the module (kmod/, tracepoints included) may share
# its name with one of libhyper (include/hyper/, libhyper/, util/).  The
# UAPI header's names (include/uapi/linux/hyper.h) are the contract both
# sides use and are left out.  The module's own names start with hyk_/HYK_
# (Documentation/uapi.md, "Names").  The first case plants a clash in a
# scratch tree, so that a check that sees nothing fails too.
# usage: names_test.sh SRCDIR
set -u
src=${1:?usage: names_test.sh SRCDIR}
ctags=$(command -v ctags-universal || command -v ctags) || {
	echo "names_test: universal-ctags is not installed (apt-get install universal-ctags)" >&2
	exit 1
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# names ROOT OUT PATH...: every file-scope name defined under ROOT/PATH...,
# one "name<TAB>file:line" per line, sorted.
names() {
	root=$1 out=$2
	shift 2
	(cd "$root" && {
		# shellcheck disable=SC2086
		files=$(ls $* 2>/dev/null)
		[ -n "$files" ] && "$ctags" -x --language-force=C --c-kinds=degfpstuvx \
			$files | awk '{ print $1 "\t" $4 ":" $3 }'
		for f in $files; do
			sed -n 's/^TRACE_EVENT(\([A-Za-z0-9_]*\),.*/\1/p' "$f" |
				sed "s|\$|	$f:trace|"
		done
	}) | sort -u -k1,1 > "$out"
}

# clashes ROOT: the shared names, one "name: kernel-place and user-place".
clashes() {
	root=$1
	names "$root" "$tmp/k" 'kmod/*.[ch]'
	names "$root" "$tmp/u" 'include/hyper/*.h' 'libhyper/*.[ch]' 'util/*.[ch]'
	names "$root" "$tmp/uapi" 'include/uapi/linux/hyper.h'
	join -t '	' "$tmp/k" "$tmp/u" | awk -F '\t' -v uapi="$tmp/uapi" '
		BEGIN { while ((getline l < uapi) > 0) { split(l, f, "\t"); skip[f[1]] = 1 } }
		!($1 in skip) { print $1 ": " $2 " and " $3 }'
}

echo "1..2"

plant=$tmp/plant
mkdir -p "$plant/kmod" "$plant/include/hyper" "$plant/include/uapi/linux"
printf 'static int hyper_open(void)\n{\n\treturn 0;\n}\nstruct hyper_xfer;\n' > "$plant/kmod/a.c"
printf 'int hyper_open(void);\nstruct hyper_xfer { int a; };\n' > "$plant/include/hyper/hyper.h"
printf 'struct hyper_xfer { int a; };\n' > "$plant/include/uapi/linux/hyper.h"
got=$(clashes "$plant")
want="hyper_open: kmod/a.c:1 and include/hyper/hyper.h:1"
if [ "$got" = "$want" ]; then
	echo "ok 1 a planted clash is found, a UAPI name is not"
else
	echo "# want: $want"
	echo "# got:  $got"
	echo "not ok 1 a planted clash is found, a UAPI name is not"
fi

got=$(clashes "$src")
if [ -z "$got" ]; then
	echo "ok 2 no name shared by hyper.ko and libhyper"
else
	echo "$got" | sed 's/^/# /'
	echo "not ok 2 no name shared by hyper.ko and libhyper"
fi
