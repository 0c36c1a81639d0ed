# SPDX-License-Identifier: GPL-2.0
# The two-node test bed's programs (selftests/vm/run-2vm.sh, suite
# twonode): they run in the two guests; kmod.mk's pattern rule builds the
# ones made once, the rules here the ones made per setup.

TWONODE_TESTS	:= twonode_sync twonode_pool twonode_fence twonode_objects
$(patsubst %,$(O)/tests/kmod_%,$(TWONODE_TESTS)): selftests/kmod/twonode.h \
		selftests/kmod/obj_test.h

# twonode_share.c and twonode_stress.c are built once per setup: both
# modules standalone on one window or joined to one pool, each module on
# its half of the window or joined.
$(O)/tests/kmod_twonode_standalone $(O)/tests/kmod_twonode_joined: \
		selftests/kmod/twonode_share.c selftests/kmod/twonode.h $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DJOINED=$(if $(filter %joined,$@),1,0) $< -o $@ $(KMOD_TEST_LIBS)

$(O)/tests/kmod_twonode_stress $(O)/tests/kmod_twonode_stress_split: \
		selftests/kmod/twonode_stress.c selftests/kmod/twonode.h $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DSPLIT=$(if $(filter %split,$@),1,0) $< -o $@ $(KMOD_TEST_LIBS)

VM_TESTS	+= $(patsubst %,$(O)/tests/kmod_%,$(TWONODE_TESTS)) \
		   $(patsubst %,$(O)/tests/kmod_twonode_%,standalone joined \
		     stress stress_split)
VM_SUITES	+= twonode
