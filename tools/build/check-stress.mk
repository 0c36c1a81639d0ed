# SPDX-License-Identifier: GPL-2.0
# make check-stress [N=3]: `make check` N times on fresh clones of HEAD
# with a CPU hog on every core (tools/build/check-stress.sh).

.PHONY: check-stress
check-stress:
	@tools/build/check-stress.sh $(or $(N),3)
