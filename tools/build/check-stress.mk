# SPDX-License-Identifier: GPL-2.0
# make check-stress [N=3]: `make check` N times on fresh clones of HEAD
# with a CPU hog on every core (tools/build/check-stress.sh).
# make demo-stress [N=3]: `make demo` the same way.

.PHONY: check-stress demo-stress
check-stress:
	@tools/build/check-stress.sh $(or $(N),3) check

demo-stress:
	@tools/build/check-stress.sh $(or $(N),3) demo
