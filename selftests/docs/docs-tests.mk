# SPDX-License-Identifier: GPL-2.0
# The docs' commands as a test runs them: the administrator's guide's
# QEMU walkthrough (section 8), verbatim, one VM boot (about 30 s).

$(O)/san/selftests/docs/admin_guide_qemu: selftests/docs/admin_guide_qemu.sh \
		Documentation/admin-guide.md
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/docs/admin_guide_qemu
