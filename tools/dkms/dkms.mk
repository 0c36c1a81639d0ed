# SPDX-License-Identifier: GPL-2.0
# hyper.ko through dkms (tools/dkms/dkms.sh does the work).
#
#   make dkms-stage    the dkms source tree in $(DESTDIR)/usr/src/hyperoffload-VERSION,
#                      for a package to ship
#   make dkms-build    (root) stage in /usr/src, dkms add + build for $(KVER),
#                      check the built module
#   make dkms-install  (root) the same, then dkms install
#   make dkms-remove   (root) dkms remove --all, drop the staged source
#
# VERSION is $(HYPER_VERSION).

.PHONY: dkms-stage dkms-build dkms-install dkms-remove

dkms-stage:
	tools/dkms/dkms.sh stage $(CURDIR) $(DESTDIR)/usr/src $(HYPER_VERSION)

dkms-build dkms-install: dkms-%:
	tools/dkms/dkms.sh $* $(CURDIR) $(HYPER_VERSION) $(KVER)

dkms-remove:
	tools/dkms/dkms.sh remove $(HYPER_VERSION)
