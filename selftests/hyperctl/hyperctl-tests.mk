# SPDX-License-Identifier: GPL-2.0
# hyperctl tests.  Natively: units_test links hyperctl's objects (not
# main.c), cli_test runs the sanitized hyperctl against fake sysfs trees.
# In the VM: vm_test drives the real module through /bin/hyperctl, and
# pool_test its shared-pool commands (suite hyperctl); mode_test does the
# same for the mode switch (suite hyperctl-mode).
#
# Fragments under tools/ are read after this one, so the hyperctl paths
# are spelled out here rather than taken from tools/hyperctl/hyperctl.mk.

HCT_DIR		:= selftests/hyperctl
HCT_HDRS	:= $(wildcard $(HCT_DIR)/*.h) tools/hyperctl/hyperctl.h
HCT_SAN_BIN	:= $(O)/san/$(HCT_DIR)
HCT_HYPERCTL	:= $(O)/san/bin/hyperctl
HCT_UNIT_OBJS	:= $(patsubst %.c,$(O)/san/%.o, \
		     $(filter-out %/main.c,$(wildcard tools/hyperctl/*.c)))

$(HCT_SAN_BIN)/units_test: $(HCT_DIR)/units_test.c $(HCT_HDRS) $(HCT_UNIT_OBJS) \
		$(UTIL_SAN_OBJS) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) -Itools/hyperctl -o $@ $< \
		$(HCT_UNIT_OBJS) $(UTIL_SAN_OBJS) -ljson-c -lm

$(HCT_SAN_BIN)/cli_test: $(HCT_DIR)/cli_test.c $(HCT_HDRS) $(HCT_HYPERCTL) \
		$(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) \
		-DHYPERCTL='"$(abspath $(HCT_HYPERCTL))"' -o $@ $< -ljson-c

# Static, like every program in the VM's /tests.
$(O)/tests/hyperctl_%: $(HCT_DIR)/%.c $(HCT_HDRS) $(wildcard selftests/lib/*.h) \
		$(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< -static -ljson-c -luring -lpthread -lm

NATIVE_TESTS	+= $(HCT_SAN_BIN)/units_test $(HCT_SAN_BIN)/cli_test
VM_TESTS	+= $(O)/tests/hyperctl_vm_test $(O)/tests/hyperctl_mode_test \
		   $(O)/tests/hyperctl_pool_test
VM_SUITES	+= hyperctl hyperctl-mode
