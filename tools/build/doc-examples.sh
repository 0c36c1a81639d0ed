#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The docs show the programs under examples/ as they are: a marker names
# the file, and the block after it is the file's text.
#
#   Markdown:  <!-- example: examples/X.c -->   then a ```c ... ``` block
#   man page:  .\" example: examples/X.c        then a .nf ... .fi block
#              (backslashes as \e, a leading . or ' behind \&)
#
# usage: doc-examples.sh --check|--update DOC...
# --check exits 1 and names each doc whose blocks differ from the files;
# --update rewrites them.  Run from the top of the tree.
set -eu
mode=$1
shift
rc=0
for doc in "$@"; do
	new=$(mktemp)
	awk '
	function emit(file, roff,   line) {
		while ((getline line < file) > 0) {
			if (roff) {
				gsub(/\\/, "\\e", line)
				if (line ~ /^[.'\'']/)
					line = "\\&" line
			}
			print line
		}
		close(file)
	}
	skip && ((md && /^```$/) || (!md && /^\.fi$/)) { skip = 0; print; next }
	skip { next }
	want != "" && ((md && /^```c$/) || (!md && /^\.nf$/)) {
		print; emit(want, !md); skip = 1; want = ""; next
	}
	/^<!-- example: .* -->$/ { want = $3; md = 1 }
	/^\.\\" example: / { want = $3; md = 0 }
	{ print }
	' "$doc" > "$new"
	if ! cmp -s "$doc" "$new"; then
		if [ "$mode" = --update ]; then
			cat "$new" > "$doc"
			echo "doc-examples: updated $doc"
		else
			echo "doc-examples: $doc does not show examples/ as they are; run tools/build/doc-examples.sh --update $doc" >&2
			diff -u "$doc" "$new" | head -n 20 >&2 || true
			rc=1
		fi
	fi
	rm -f "$new"
done
exit $rc
