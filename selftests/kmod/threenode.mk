# SPDX-License-Identifier: GPL-2.0
# The three-node suite's programs (selftests/vm/suites/threenode.suite,
# three guests of selftests/vm/run-2vm.sh on one pool); it also runs the
# two-node programs kmod_twonode_sync and kmod_twonode_stress.  These read
# hyperctl's JSON with json-c.

THREENODE_TESTS	:= threenode_pool threenode_objects
$(patsubst %,$(O)/tests/kmod_%,$(THREENODE_TESTS)): $(O)/tests/kmod_%: \
		selftests/kmod/%.c selftests/kmod/threenode.h \
		selftests/kmod/twonode.h selftests/kmod/obj_test.h $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $< -o $@ -ljson-c $(KMOD_TEST_LIBS)

VM_TESTS	+= $(patsubst %,$(O)/tests/kmod_%,$(THREENODE_TESTS))
VM_SUITES	+= threenode
