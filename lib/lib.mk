# SPDX-License-Identifier: MIT
# libgpuar: shared (soname libgpuar.so.$(SOVERSION)) and static, both
# carrying the shared core, the soft and DRM backends.
LIB_SRCS := lib/error.c lib/sized.c lib/plan_api.c lib/port.c lib/fdwait.c \
	lib/port_kernel.c lib/engine_user.c lib/user_run.c lib/user_check.c \
	lib/user_lines.c lib/user_fence.c \
	lib/user_queue.c lib/user_timer.c lib/user_reap.c lib/user_watcher.c \
	lib/process.c lib/user_waits.c lib/interrupt.c \
	lib/user_imminent.c lib/imminent.c lib/backoff.c \
	lib/area_ring.c lib/port_area.c lib/port_reap.c lib/syscount.c \
	lib/clock.c lib/vclock.c lib/hwwait.c lib/hwwait_arm64.c lib/source.c \
	lib/wait.c lib/caps.c lib/exec.c lib/exec_uring.c \
	lib/uring_host.c lib/uring_read.c lib/uring_ops.c lib/uring_stash.c \
	backends/soft/soft.c backends/drm/sync_file.c backends/drm/syncobj.c
# The newcomer's calls: the default plan's one-call word wait, and the
# names that say blocking (*_blocking) or event loop (*port*).
LIB_SRCS += lib/port_await.c lib/renamed.c
# The CUDA and HIP backends (backends/backends.mk, included before us).
LIB_SRCS += $(BACKEND_SRCS)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRCS) $(CORE_USER_SRCS) $(LIB_SRCS))
LIB_A := $(BUILD)/lib/libgpuar.a
LIB_SO := $(BUILD)/lib/libgpuar.so.$(VERSION)
# What a program linking $(LIB_A) also needs (the shared library records it).
# -ldl: the CUDA/HIP backends dlopen the vendor driver (a separate
# library before glibc 2.34, which GPU machines may still run).
LIB_LDLIBS := -luring -ldrm -ldl
LIB_DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)

$(BUILD)/backends/drm/%.o: CPPFLAGS_ALL += $(LIB_DRM_CFLAGS)

# Only what is marked GPUAR_EXPORT (lib/export.h) leaves the shared
# library; the archive's objects link as before.
$(LIB_OBJS): CFLAGS_ALL += -fvisibility=hidden
# The library defines and calls the 1.0 names it keeps (GPUAR_DEPRECATED_FOR).
$(LIB_OBJS): CPPFLAGS_ALL += -DGPUAR_DISABLE_DEPRECATION_WARNINGS
# The headers a program compiles against (installed; check-lib-symbols).
LIB_PUBLIC_HEADERS := $(wildcard include/gpuar/*.h) $(BACKEND_HEADERS)

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# lib/libgpuar.map versions every exported function (stable GPUAR_1.<n>,
# experimental GPUAR_EXPERIMENTAL_<n>) and keeps the rest local, behind
# -fvisibility=hidden.
$(LIB_SO): $(LIB_OBJS) lib/libgpuar.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libgpuar.so.$(SOVERSION) \
		-Wl,--version-script=lib/libgpuar.map $(LDFLAGS_ALL) -o $@ \
		$(LIB_OBJS) $(LIB_LDLIBS)
	ln -sf libgpuar.so.$(VERSION) $(BUILD)/lib/libgpuar.so.$(SOVERSION)
	ln -sf libgpuar.so.$(SOVERSION) $(BUILD)/lib/libgpuar.so

lib: $(LIB_A) $(LIB_SO)
ALL_TARGETS += lib

include examples/examples.mk

# ------------------------------------------------------------ install
# gpuar.pc is written straight into the destination, filled in for this
# PREFIX: no shared file in $(BUILD) that two installs (check-quickstart's
# and check-install's, under make -j) could write at once.
GPUAR_PC_SED := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'

.PHONY: install-lib uninstall-lib FORCE
FORCE:

# Headers: include/gpuar/*.h, the CUDA/HIP backends' <gpuar/cuda.h>,
# <gpuar/hip.h> and <gpuar/vendor.h>, and the kernel ABI header as <linux/gpuar.h>
# (which <gpuar/gpuar.h> includes) in the same include directory.
install-lib: $(LIB_A) $(LIB_SO) lib/gpuar.pc.in
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/gpuar \
		$(DESTDIR)$(INCLUDEDIR)/linux
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libgpuar.a
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/libgpuar.so.$(VERSION)
	ln -sf libgpuar.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libgpuar.so.$(SOVERSION)
	ln -sf libgpuar.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libgpuar.so
	install -m 644 $(LIB_PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/gpuar/
	install -m 644 include/uapi/linux/gpuar.h $(DESTDIR)$(INCLUDEDIR)/linux/gpuar.h
	sed $(GPUAR_PC_SED) lib/gpuar.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/gpuar.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/gpuar.pc

uninstall-lib:
	rm -f $(DESTDIR)$(LIBDIR)/libgpuar.a $(DESTDIR)$(LIBDIR)/libgpuar.so* \
		$(DESTDIR)$(LIBDIR)/pkgconfig/gpuar.pc \
		$(DESTDIR)$(INCLUDEDIR)/linux/gpuar.h
	rm -rf $(DESTDIR)$(INCLUDEDIR)/gpuar

INSTALL_TARGETS += install-lib

# check-lib-symbols: libgpuar.so exports exactly the functions of its
# installed headers, each at a stable version node GPUAR_1.<n> or, the
# ones docs/stability.md lists as experimental, at GPUAR_EXPERIMENTAL_<n>
# (lib/check-symbols.sh).
.PHONY: check-lib-symbols
check-lib-symbols: $(LIB_SO)
	@lib/check-symbols.sh $(LIB_SO) docs/stability.md $(LIB_PUBLIC_HEADERS)
CHECK_UNIT_TARGETS += check-lib-symbols

# check-lib-symbols-file: the Debian symbols file lists exactly what
# libgpuar.so exports, at the same version nodes (lib/check-symbols-file.sh).
.PHONY: check-lib-symbols-file
check-lib-symbols-file: $(LIB_SO)
	@lib/check-symbols-file.sh $(LIB_SO) packaging/debian/libgpuar.symbols
CHECK_UNIT_TARGETS += check-lib-symbols-file

# check-arm64-hwwait: the arm64 hardware word wait (WFET/WFE) cannot run
# on the x86-64 test machines; prove at least that it compiles, warning
# free, with the aarch64 cross compiler (Debian's gcc-aarch64-linux-gnu),
# and say so when that compiler is missing.
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_HWWAIT_SRCS := lib/hwwait_arm64.c lib/hwwait.c
.PHONY: check-arm64-hwwait
check-arm64-hwwait:
	@if ! command -v $(ARM64_CC) >/dev/null 2>&1; then \
		echo "ok - check-arm64-hwwait # SKIP no $(ARM64_CC) (make deps installs gcc-aarch64-linux-gnu and its headers)"; \
	else \
		mkdir -p $(BUILD)/arm64 && \
		for f in $(ARM64_HWWAIT_SRCS); do \
			$(ARM64_CC) -D_GNU_SOURCE -Iinclude -Iinclude/uapi -Icore -Ilib \
				-std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
				-Wmissing-prototypes -fPIC -pthread -O2 -c \
				-o $(BUILD)/arm64/$$(basename $$f .c).o $$f || exit 1; \
		done && \
		{ nm $(BUILD)/arm64/hwwait_arm64.o | grep -q ' T gpuar_hw_word_wait$$' && \
		  ! nm $(BUILD)/arm64/hwwait.o | grep -q ' T gpuar_hw_word_wait'; } || \
		{ echo "not ok - check-arm64-hwwait: gpuar_hw_word_wait must come from hwwait_arm64.c alone"; exit 1; }; \
		echo "ok - check-arm64-hwwait: $(ARM64_HWWAIT_SRCS) compile for aarch64 (not run here)"; \
	fi
CHECK_UNIT_TARGETS += check-arm64-hwwait

# check-quickstart: what the README promises. Install into a temporary
# DESTDIR, then build the README's first ```c block (which must be
# examples/quickstart.c, word for word) with nothing but
# `cc quickstart.c $(pkg-config --cflags --libs gpuar)` against it (the
# shared library), and run it: no GPU, no module needed. The second
# ```c block (examples/cuda_quickstart.c, word for word) builds the same
# way and runs against the CUDA test double. A program that takes the
# CUDA and HIP backends' functions from <gpuar/cuda.h> and <gpuar/hip.h>
# builds and links the same way, and so does one that calls the 1.0
# names (gpuar_reap, gpuar_cuda_await...), which must still resolve.
QS_DIR := $(BUILD)/quickstart
.PHONY: check-quickstart
ifeq ($(SANITIZE),)
check-quickstart: $(LIB_A) $(LIB_SO) $(DOUBLE_CUDA)
	@rm -rf $(QS_DIR) && mkdir -p $(QS_DIR)
	@$(MAKE) --no-print-directory install-lib DESTDIR=$(abspath $(QS_DIR))/root \
		PREFIX=/usr/local LIBDIR=/usr/local/lib INCLUDEDIR=/usr/local/include >/dev/null
	@awk '/^```c$$/ { on = 1; next } on && /^```$$/ { exit } on' README.md \
		> $(QS_DIR)/quickstart.c
	@cmp -s $(QS_DIR)/quickstart.c examples/quickstart.c || \
		{ echo "not ok - README's first c block differs from examples/quickstart.c"; exit 1; }
	@awk '/^```c$$/ { n++; if (n == 2) { on = 1; next } } on && /^```$$/ { exit } on' README.md \
		> $(QS_DIR)/cuda_quickstart.c
	@cmp -s $(QS_DIR)/cuda_quickstart.c examples/cuda_quickstart.c || \
		{ echo "not ok - README's second c block differs from examples/cuda_quickstart.c"; exit 1; }
	@cd $(QS_DIR) && root=$$(pwd)/root && \
	  PKG_CONFIG_PATH=$$root/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$root \
	  sh -c 'cc quickstart.c $$(pkg-config --cflags --libs gpuar) -o quickstart' && \
	  readelf -d quickstart | grep -q 'NEEDED.*libgpuar.so.$(SOVERSION)' && \
	  LD_LIBRARY_PATH=$$root/usr/local/lib ./quickstart > out.txt && \
	  cat out.txt && grep -q 'record: user_data=42 status=0 value=1' out.txt && \
	  PKG_CONFIG_PATH=$$root/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$root \
	  sh -c 'cc cuda_quickstart.c $$(pkg-config --cflags --libs gpuar) -o cuda_quickstart' && \
	  LD_LIBRARY_PATH=$$root/usr/local/lib GPUAR_CUDA_LIBRARY=$(abspath $(DOUBLE_CUDA)) \
	  ./cuda_quickstart > cuda_out.txt && \
	  cat cuda_out.txt && grep -q '^stream done: user_data=1 (await 1) status=0$$' cuda_out.txt && \
	  cp $(abspath selftests/unit/old_names.c) old_names.c && \
	  PKG_CONFIG_PATH=$$root/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$root \
	  sh -c 'cc -Werror old_names.c $$(pkg-config --cflags --libs gpuar) -o old_names' && \
	  LD_LIBRARY_PATH=$$root/usr/local/lib ./old_names && \
	  nm -D old_names | grep -q ' gpuar_reap@GPUAR_1.0$$' && \
	  printf '#include <gpuar/cuda.h>\n#include <gpuar/hip.h>\nint main(void) { return gpuar_cuda_open == 0 || gpuar_hip_open == 0; }\n' >vendor.c && \
	  PKG_CONFIG_PATH=$$root/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$root \
	  sh -c 'cc vendor.c $$(pkg-config --cflags --libs gpuar) -o vendor' && \
	  LD_LIBRARY_PATH=$$root/usr/local/lib ./vendor && \
	  echo "ok - check-quickstart: README's C and CUDA quick starts build against the installed library and run (CUDA: on the test double); so do a program of <gpuar/cuda.h> and <gpuar/hip.h> and one of the 1.0 names"
else
# The README's plain `cc` line cannot link a sanitized library.
check-quickstart:
	@echo "ok - check-quickstart # SKIP under SANITIZE (plain cc cannot link an ASan library)"
endif
CHECK_UNIT_TARGETS += check-quickstart

# check-examples: the examples run to completion on this host (no GPU, no
# module needed) and print what they promise (examples/check-examples.sh).
.PHONY: check-examples
check-examples: $(EXAMPLES) $(DOUBLE_CUDA) $(DOUBLE_HIP)
	@examples/check-examples.sh $(BUILD)/examples $(DOUBLE_CUDA) $(DOUBLE_HIP) $(EXAMPLES)
CHECK_UNIT_TARGETS += check-examples
