#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the VM: examples/kmod_xfer.c against the loaded module, as TAP, so
# that the suite counts it.
out=$(/tests/example_kmod_xfer 2>&1)
rc=$?
echo "# $out"
if [ $rc -eq 0 ]; then
	echo "ok 1 examples/kmod_xfer.c stores and prefetches a region"
else
	echo "not ok 1 examples/kmod_xfer.c stores and prefetches a region (exit $rc)"
fi
echo "1..1"
exit $rc
