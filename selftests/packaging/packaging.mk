# SPDX-License-Identifier: GPL-2.0
# Packaging tests, run natively by `make check`: modinfo of the built
# module, `make install` (and uninstall) into a scratch DESTDIR, which
# targets install Debian packages, and a dkms build and
# install against the Debian headers for $(KVER) in scratch dkms trees.
# Each is a shell script printing TAP; the wrappers made here give it
# this build's source, object directory, kernel and version.

PKGT_DIR	:= selftests/packaging
PKGT_BIN	:= $(O)/packaging-tests

$(PKGT_BIN)/modinfo_test: ARGS = $(CURDIR)
$(PKGT_BIN)/install_test: ARGS = $(CURDIR) $(abspath $(O)) $(KVER)
$(PKGT_BIN)/deps_test: ARGS = $(CURDIR)
$(PKGT_BIN)/dkms_test: ARGS = $(CURDIR) $(KVER) $(HYPER_VERSION)
$(PKGT_BIN)/kexports_test: ARGS = $(CURDIR) $(abspath $(O)) $(KVER)

$(PKGT_BIN)/%: $(PKGT_DIR)/%.sh selftests/lib/tap.sh $(PKGT_DIR)/packaging.mk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' "$(abspath $<)" "$(ARGS)" > $@
	chmod +x $@

NATIVE_TESTS	+= $(PKGT_BIN)/modinfo_test $(PKGT_BIN)/install_test \
		   $(PKGT_BIN)/dkms_test $(PKGT_BIN)/deps_test \
		   $(PKGT_BIN)/kexports_test
