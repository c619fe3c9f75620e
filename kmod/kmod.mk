# SPDX-License-Identifier: GPL-2.0-only OR MIT
#
# Top-level targets for the kernel module (included by the Makefile).
#
#   make kmod             build gpuar.ko in $(BUILD)/kmod-tree when kernel
#                         headers are found (KDIR=...), else say so
#   make check-kmod-lint  W=1 and sparse (C=1) builds warning-free,
#                         checkpatch --strict clean
#   make check-dkms       `dkms build` of the DKMS tree against KDIR's
#                         kernel, in a private DKMS tree
#   make dkms-install     install the source under /usr/src, register and
#                         build it, load it now and at boot (modules-load.d)
#   make dkms-uninstall
#
# The module is built from a staged copy of kmod/, core/ and the uapi header
# with the layout the DKMS tree has, so the tree's own directories never
# hold build outputs of the top-level build.

KDIR ?= $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d "$$d" ]; then echo "$$d"; else \
	ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1; fi)
KMOD_KVER = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)

KMOD_SOURCES := $(filter-out %.mod.c,$(wildcard kmod/*.c)) \
	$(filter-out kmod/conftest.h,$(wildcard kmod/*.h))
KMOD_TREE_FILES := $(KMOD_SOURCES) kmod/Kbuild kmod/Makefile \
	kmod/conftest.sh kmod/compat_fence.kbuild $(wildcard kmod/conftest/*) \
	$(CORE_SRCS) $(wildcard core/*.h) \
	include/uapi/linux/gpuar.h
KMOD_LINT_FILES := $(KMOD_SOURCES) $(wildcard kmod/conftest/*.c)
DKMS_SRC := $(DESTDIR)/usr/src/gpuar-$(VERSION)

# $(call kmod_stage,DIR): copy the module's sources into DIR, keeping
# modification times so Kbuild rebuilds only what changed.
kmod_stage = mkdir -p $(1) && tar -cf - $(KMOD_TREE_FILES) | tar -xf - -C $(1)

ALL_TARGETS += kmod

kmod:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "kmod: no kernel build directory (KDIR=$(KDIR)): gpuar.ko not built"; \
	else \
		$(call kmod_stage,$(BUILD)/kmod-tree) && \
		$(MAKE) --no-print-directory -C $(BUILD)/kmod-tree/kmod \
			KDIR=$(KDIR) GPUAR_VERSION=$(VERSION) >$(BUILD)/kmod-tree/build.log 2>&1 || \
			{ cat $(BUILD)/kmod-tree/build.log; exit 1; }; \
		echo "kmod: $(BUILD)/kmod-tree/kmod/gpuar.ko ($(KMOD_KVER))"; \
	fi

# Lint: a clean W=1 C=1 build (every file compiled and checked), then
# checkpatch on every source. Any compiler or sparse diagnostic fails.
check-kmod-lint:
	@test -d "$(KDIR)" || { echo "check-kmod-lint: no KDIR"; exit 1; }
	@rm -rf $(BUILD)/kmod-lint
	@$(call kmod_stage,$(BUILD)/kmod-lint)
	@$(MAKE) --no-print-directory -C $(BUILD)/kmod-lint/kmod KDIR=$(KDIR) \
		W=1 C=1 >$(BUILD)/kmod-lint/build.log 2>&1 || \
		{ cat $(BUILD)/kmod-lint/build.log; exit 1; }
	@if grep -E '(warning|error|note):' $(BUILD)/kmod-lint/build.log \
		| grep -v 'Skipping BTF'; then \
		echo "check-kmod-lint: W=1/sparse diagnostics (above)"; exit 1; fi
	@echo "check-kmod-lint: W=1 and sparse clean against $(KMOD_KVER)"
	@cp=$$(tools/linux-source-extract.sh)/scripts/checkpatch.pl && \
		$$cp --no-tree --strict --terse --show-types -f \
		$(KMOD_LINT_FILES) >$(BUILD)/kmod-lint/checkpatch.log 2>&1; \
		if grep -E ': (ERROR|WARNING|CHECK):' $(BUILD)/kmod-lint/checkpatch.log; then \
		echo "check-kmod-lint: checkpatch findings (above)"; exit 1; fi
	@echo "check-kmod-lint: checkpatch --strict clean ($(words $(KMOD_LINT_FILES)) files)"

# $(call dkms_tree,DIR): the DKMS source tree: dkms.conf at the top, the
# module's sources below it, the version filled in.
dkms_tree = rm -rf $(1) && $(call kmod_stage,$(1)) && \
	sed 's/@VERSION@/$(VERSION)/' kmod/dkms.conf >$(1)/dkms.conf

# dkms build in a private tree (--dkmstree, --sourcetree): the system's
# DKMS state is not touched. Needs only the headers of KDIR's kernel.
check-dkms:
	@test -d "$(KDIR)" || { echo "check-dkms: no KDIR"; exit 1; }
	@command -v dkms >/dev/null || { echo "check-dkms: dkms not installed"; exit 1; }
	@rm -rf $(BUILD)/dkms && mkdir -p $(BUILD)/dkms/tree $(BUILD)/dkms/src
	@$(call dkms_tree,$(BUILD)/dkms/src/gpuar-$(VERSION))
	@dkms build gpuar/$(VERSION) -k $(KMOD_KVER) \
		--dkmstree $(abspath $(BUILD)/dkms/tree) \
		--sourcetree $(abspath $(BUILD)/dkms/src) \
		--kernelsourcedir $(KDIR) >$(BUILD)/dkms/dkms.log 2>&1 || \
		{ cat $(BUILD)/dkms/dkms.log; \
		  cat $(BUILD)/dkms/tree/gpuar/$(VERSION)/build/make.log 2>/dev/null; \
		  exit 1; }
	@ko=$$(find $(BUILD)/dkms/tree/gpuar/$(VERSION) -name gpuar.ko | head -1); \
		test -n "$$ko" || { echo "check-dkms: no gpuar.ko"; exit 1; }; \
		echo "check-dkms: dkms build gpuar/$(VERSION) for $(KMOD_KVER): $$ko"

dkms-install:
	@test -z "$(DESTDIR)" || mkdir -p $(DESTDIR)/usr/src
	$(call dkms_tree,$(DKMS_SRC))
	install -D -m 0644 kmod/60-gpuar.rules \
		$(DESTDIR)/etc/udev/rules.d/60-gpuar.rules
	install -D -m 0644 packaging/modules-load/gpuar.conf \
		$(DESTDIR)/etc/modules-load.d/gpuar.conf
	@if [ -z "$(DESTDIR)" ]; then \
		if dkms status gpuar/$(VERSION) | grep -q .; then \
			dkms remove gpuar/$(VERSION) --all; fi && \
		dkms add gpuar/$(VERSION) && \
		dkms build gpuar/$(VERSION) && \
		dkms install gpuar/$(VERSION) && \
		{ udevadm control --reload-rules 2>/dev/null || true; } && \
		{ modprobe gpuar && echo "gpuar: module loaded (and at every boot:" \
			"/etc/modules-load.d/gpuar.conf); /dev/gpuar belongs to group" \
			"render: sudo usermod -aG render \$$USER, then log in again" || \
		  echo "gpuar: modprobe gpuar failed: see the README's Troubleshooting"; }; \
	fi

dkms-uninstall:
	@if [ -z "$(DESTDIR)" ] && dkms status gpuar/$(VERSION) | grep -q .; then \
		dkms remove gpuar/$(VERSION) --all; fi
	rm -rf $(DKMS_SRC)
	rm -f $(DESTDIR)/etc/udev/rules.d/60-gpuar.rules \
		$(DESTDIR)/etc/modules-load.d/gpuar.conf
