# SPDX-License-Identifier: MIT
#
# gpuar top-level build. Userspace is one non-recursive make over the
# fragments each directory owns (*.mk); the kernel module is Kbuild in kmod/.
#
#   make                 library (shared + static), tools, module
#   make check           deps, unit tests (plain, ASan+UBSan), fuzzers,
#                        module lint, the Python binding's tests, the UCX
#                        pair, VM suites on the kernel matrix
#   make vm-check KERNEL=<6.1|6.12|7.x|debug>
#   make deps            install build and test dependencies (Debian)
#   make docs            the pictures of docs/*.dot into $(BUILD)/docs/
#   make install         PREFIX=/usr/local DESTDIR=
#   make uninstall       the same variables: removes what install put there
#   WERROR=1             warnings are errors (the check* goals set it)
#
# Build outputs go to $(BUILD) (default build/); downloads, kernels and
# files extracted from linux-source go to $(GPUAR_CACHE), outside the tree.

VERSION := 0.1.0
SOVERSION := 0

BUILD ?= build
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
GPUAR_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpuar
export GPUAR_CACHE

CC ?= cc
CLANG ?= clang
OPT ?= -O2
SANITIZE ?=
# Warnings are errors only when asked (WERROR=1): a newer compiler's new
# warning must not break a user's build. The checks ask: every check*
# goal, and make check's driver (tools/check.sh), build with WERROR=1.
ifneq ($(filter check%,$(MAKECMDGOALS)),)
WERROR ?= 1
endif
WERROR ?=
# Sub-makes (check-quickstart's and check-install's installs) build with
# the same setting, so they neither rebuild nor weaken the objects.
export WERROR

CPPFLAGS_ALL := -D_GNU_SOURCE -Iinclude -Iinclude/uapi -Icore -Ilib \
	-DGPUAR_VERSION='"$(VERSION)"'
CFLAGS_ALL := -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -fPIC -g $(OPT) -pthread
ifneq ($(WERROR),)
CFLAGS_ALL += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS_ALL += -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
LDFLAGS_ALL += -fsanitize=address,undefined
endif
CFLAGS_ALL += $(CFLAGS)
LDFLAGS_ALL += -pthread $(LDFLAGS)

# Whether warnings were errors, so that turning WERROR on rebuilds what
# was compiled without it (a warning would otherwise pass unseen).
WERROR_STAMP := $(BUILD)/werror.stamp
$(WERROR_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo 'WERROR=$(WERROR)' | cmp -s - $@ || echo 'WERROR=$(WERROR)' >$@

# Object rule shared by every fragment: build/<path>.o from <path>.c.
$(BUILD)/%.o: %.c $(WERROR_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

.DEFAULT_GOAL := all
.PHONY: all lib tools kmod check check-unit check-sanitize check-fuzz \
	check-kmod-lint check-vm check-all vm-check deps install uninstall \
	clean dkms-install dkms-uninstall demo format docs

# Fragments append to these.
ALL_TARGETS :=
CHECK_UNIT_TARGETS :=
INSTALL_TARGETS :=

include core/core.mk
# Backends define BACKEND_SRCS, which lib/lib.mk builds into the library.
include backends/backends.mk
include lib/lib.mk
include tools/tools.mk
include selftests/unit/unit.mk
include selftests/fuzz/fuzz.mk
include kmod/kmod.mk
include tools/vm/vm.mk
include tools/gpu-bundle/gpu-bundle.mk
include python/python.mk
include rust/rust.mk
include packaging/packaging.mk
include docs/docs.mk

all: $(ALL_TARGETS)

deps:
	@tools/deps.sh

check-unit: $(CHECK_UNIT_TARGETS)

# The same unit tests under ASan+UBSan, in their own build tree.
check-sanitize:
	$(MAKE) --no-print-directory BUILD=$(BUILD)/sanitize SANITIZE=1 OPT=-O1 \
		CC=$(CLANG) check-unit

# make check: everything CI runs. Each part prints its own TAP-like lines;
# tools/check-summary.sh reads them back and prints the closing line.
check: deps
	@tools/check.sh

check-all: deps
	@GPUAR_CHECK_ALL=1 tools/check.sh

install: $(INSTALL_TARGETS)

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C kmod clean

# Dependency files of this build; not those of the source trees that make
# deb and make check-rpm-spec build inside $(BUILD) (packaging/packaging.mk).
-include $(shell find $(BUILD) \( -path $(BUILD)/deb -o -path $(BUILD)/rpm \) -prune \
	-o -type f -name '*.d' -print 2>/dev/null)
