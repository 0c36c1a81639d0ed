# SPDX-License-Identifier: GPL-2.0
# make check-gpu: tools/gpu/check.sh, for a machine with a CUDA GPU (the
# device tool's: no network, not Debian).  make gpu-bundle builds here what
# such a machine may lack: libhyper and libhyperplan, the liburing, json-c
# and libnuma they link, and cuda_test built without sanitizers, under
# $(O)/gpu-bundle (carry that path to the GPU machine).  See
# Documentation/bench-gpu.md.
#
# This file is read before selftests/ and python/: prerequisites name
# their files, not those fragments' variables.

GPU_BUNDLE	:= $(O)/gpu-bundle
GPU_FAKE	:= $(O)/lib/test/libfake_cudart.so

$(GPU_BUNDLE)/bin/cuda_test: selftests/libhyper/cuda_test.c selftests/libhyper/helpers.h \
		include/hyper/hyper.h libhyper/device-cuda.h $(LIBHYPER_A) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Ilibhyper -Itools/hyper-run -o $@ $< $(LIBHYPER_A) \
		$(LIBHYPER_LIBS) -lpthread

.PHONY: gpu-bundle check-gpu
# The system's shared libraries the bundle's programs and libraries need,
# as ldd resolves them here (glibc excepted: the GPU machine has one).
gpu-bundle: $(GPU_BUNDLE)/bin/cuda_test $(LIBHYPER_SO) $(HPL_SO) $(GPU_FAKE)
	@mkdir -p $(GPU_BUNDLE)/lib/test
	cp -f $(LIBHYPER_SO) $(HPL_SO) $(GPU_BUNDLE)/lib/
	cp -f $(GPU_FAKE) $(GPU_BUNDLE)/lib/test/
	for f in $(GPU_BUNDLE)/bin/cuda_test $(LIBHYPER_SO) $(HPL_SO); do ldd $$f; done | \
		awk '$$1 ~ /^lib(uring|json-c|numa)\.so/ && $$3 ~ /^\// { print $$3 }' | sort -u | \
		while read -r l; do cp -fL "$$l" $(GPU_BUNDLE)/lib/; done
	@ls $(GPU_BUNDLE)/lib

check-gpu:
	GPU_BUNDLE=$(GPU_BUNDLE) tools/gpu/check.sh

# make check: the bundle, checked here against the fake CUDA runtime.
$(O)/san/selftests/gpu/bundle_test: tools/gpu/check.sh gpu-bundle
	@mkdir -p $(@D)
	printf '#!/bin/sh\nGPU_BUNDLE=%s exec %s --self-test\n' $(abspath $(GPU_BUNDLE)) \
		$(abspath $<) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/gpu/bundle_test
# The Python tests load the fake runtime too (python/tests/test_cuda.py).
$(O)/python/python_tests: $(GPU_FAKE)
