# SPDX-License-Identifier: MIT
# The CUDA and HIP backends (backends/cuda, backends/hip, and their shared
# part backends/vendor), the test doubles of the vendor libraries, and the
# build-time check of the backends' own driver declarations against the
# vendor headers where those are installed.
#
# Include before lib/lib.mk: lib.mk adds $(BACKEND_SRCS) to the library.
# Public headers: backends/include/gpuar/{cuda,hip,vendor}.h, installed
# next to <gpuar/gpuar.h>.

BACKEND_SRCS := backends/vendor/vendor_error.c backends/vendor/vendor_line.c \
	backends/vendor/vendor_await.c backends/vendor/vendor_source.c \
	backends/vendor/vendor_capture.c \
	backends/cuda/cuda_loader.c backends/cuda/cuda_backend.c \
	backends/hip/hip_loader.c backends/hip/hip_backend.c
BACKEND_SRCS += backends/vendor/vendor_queue.c backends/vendor/vendor_renamed.c
BACKEND_HEADERS := backends/include/gpuar/cuda.h backends/include/gpuar/hip.h \
	backends/include/gpuar/vendor.h

# Everything (library, tests, tools) sees the public backend headers.
CPPFLAGS_ALL += -Ibackends/include
BACKEND_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(BACKEND_SRCS))
$(BACKEND_OBJS): CPPFLAGS_ALL += -Ibackends/vendor

# ---------------------------------------------------------------- doubles
# Test doubles of libcuda.so.1 and libamdhip64.so.6 (selftests/doubles):
# loaded by the backend tests through GPUAR_CUDA_LIBRARY/GPUAR_HIP_LIBRARY,
# never installed.
DOUBLES_DIR := $(BUILD)/doubles
DOUBLE_CUDA := $(DOUBLES_DIR)/cuda/libcuda.so.1
DOUBLE_HIP := $(DOUBLES_DIR)/hip/libamdhip64.so.6
DOUBLE_HIP_NOWRITE := $(DOUBLES_DIR)/hip/libamdhip64-nowrite.so
DOUBLE_HIP7 := $(DOUBLES_DIR)/hip/libamdhip64.so.7
DOUBLE_HIP5 := $(DOUBLES_DIR)/hip/libamdhip64.so.5
BACKEND_DOUBLES := $(DOUBLE_CUDA) $(DOUBLE_HIP) $(DOUBLE_HIP_NOWRITE) \
	$(DOUBLE_HIP7) $(DOUBLE_HIP5)
DOUBLE_CORE := selftests/doubles/common/fake_queue.c \
	selftests/doubles/common/fake_memory.c
DOUBLE_CORE_H := selftests/doubles/common/fake_queue.h \
	selftests/doubles/common/fake_memory.h
DOUBLE_FLAGS = $(CPPFLAGS_ALL) $(CFLAGS_ALL) -fvisibility=hidden -shared

$(DOUBLE_CUDA): selftests/doubles/cuda/fake_cuda.c $(DOUBLE_CORE) \
		$(DOUBLE_CORE_H) backends/cuda/cuda_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_FLAGS) -Wl,-soname,libcuda.so.1 -o $@ $(filter %.c,$^) $(LDFLAGS_ALL)

$(DOUBLE_HIP): selftests/doubles/hip/fake_hip.c $(DOUBLE_CORE) \
		$(DOUBLE_CORE_H) backends/hip/hip_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_FLAGS) -Wl,-soname,libamdhip64.so.6 -o $@ $(filter %.c,$^) $(LDFLAGS_ALL)

$(DOUBLE_HIP_NOWRITE): selftests/doubles/hip/fake_hip.c $(DOUBLE_CORE) \
		$(DOUBLE_CORE_H) backends/hip/hip_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_FLAGS) -DFAKE_HIP_WITHOUT_WRITE_VALUE \
		-Wl,-soname,libamdhip64.so.6 -o $@ $(filter %.c,$^) $(LDFLAGS_ALL)

# ROCm 7's soname and version (HIP 7.1).
$(DOUBLE_HIP7): selftests/doubles/hip/fake_hip.c $(DOUBLE_CORE) \
		$(DOUBLE_CORE_H) backends/hip/hip_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_FLAGS) -DFAKE_HIP_VERSION=70151830 \
		-Wl,-soname,libamdhip64.so.7 -o $@ $(filter %.c,$^) $(LDFLAGS_ALL)

# HIP 5.2 (Debian bookworm): no hipStreamGetDevice, no hipStreamGetId.
$(DOUBLE_HIP5): selftests/doubles/hip/fake_hip.c $(DOUBLE_CORE) \
		$(DOUBLE_CORE_H) backends/hip/hip_decls.h
	@mkdir -p $(dir $@)
	$(CC) $(DOUBLE_FLAGS) -DFAKE_HIP_5 \
		-Wl,-soname,libamdhip64.so.5 -o $@ $(filter %.c,$^) $(LDFLAGS_ALL)

doubles: $(BACKEND_DOUBLES)
.PHONY: doubles

# The backend unit tests find the doubles next to them
# ($(BUILD)/selftests/unit/../../doubles), or under $GPUAR_TEST_DOUBLES.
BACKEND_TESTS := $(patsubst %.c,$(BUILD)/%,$(sort $(wildcard \
	selftests/unit/test_cuda_*.c selftests/unit/test_hip_*.c)))
$(BACKEND_TESTS): $(BACKEND_DOUBLES)
$(patsubst %,%.o,$(BACKEND_TESTS)): CPPFLAGS_ALL += -Iselftests/doubles

# ------------------------------------------------------ declaration check
# Compile (never link) a unit that includes both the vendor header and the
# backend's own declarations and _Static_asserts that they agree. Skipped,
# with a line saying so, where the vendor header is absent.
CUDA_HOME ?= /usr/local/cuda
CUDA_H := $(wildcard $(CUDA_HOME)/include/cuda.h)
HIP_H := $(wildcard /usr/include/hip/hip_runtime_api.h)

$(BUILD)/backends/cuda/decl-check.stamp: backends/cuda/cuda_decl_check.c \
		backends/cuda/cuda_decls.h $(CUDA_H)
	@mkdir -p $(dir $@)
ifneq ($(CUDA_H),)
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CUDA_HOME)/include \
		-Ibackends/cuda -fsyntax-only $<
	@echo "cuda declarations match $(CUDA_H)" > $@
else
	@echo "cuda declaration check skipped: no $(CUDA_HOME)/include/cuda.h" | tee $@
endif

$(BUILD)/backends/hip/decl-check.stamp: backends/hip/hip_decl_check.c \
		backends/hip/hip_decls.h $(HIP_H)
	@mkdir -p $(dir $@)
ifneq ($(HIP_H),)
	$(CC) -std=c11 -Wall -Wextra -Werror -Ibackends/hip -fsyntax-only $<
	@echo "hip declarations match $(HIP_H)" > $@
else
	@echo "hip declaration check skipped: no hip/hip_runtime_api.h (libamdhip64-dev)" | tee $@
endif

BACKEND_DECL_CHECKS := $(BUILD)/backends/cuda/decl-check.stamp \
	$(BUILD)/backends/hip/decl-check.stamp
backends-decl-check: $(BACKEND_DECL_CHECKS)
.PHONY: backends-decl-check

ALL_TARGETS += backends-decl-check
CHECK_UNIT_TARGETS += backends-decl-check

# ------------------------------------------------------------- HIP probe
# The HIP probe the GPU bundle (tools/gpu-bundle) runs on AMD machines;
# make check runs it against the HIP double.
HIP_PROBE := $(BUILD)/backends/hip/gpucheck/hip_probe
# lib/lib.mk's $(LIB_A), named here because this file is read before it.
BACKEND_LIB_A := $(BUILD)/lib/libgpuar.a

$(HIP_PROBE): $(BUILD)/backends/hip/gpucheck/hip_probe.o $(BACKEND_LIB_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(BACKEND_LIB_A) $(LIB_LDLIBS)

check-hip-probe: $(HIP_PROBE) $(DOUBLE_HIP)
	@GPUAR_HIP_LIBRARY=$(abspath $(DOUBLE_HIP)) $(HIP_PROBE) --rounds 3 \
		>$(BUILD)/backends/hip/gpucheck/probe.txt 2>&1 && \
		echo "ok - hip_probe against the HIP test double" || \
		{ cat $(BUILD)/backends/hip/gpucheck/probe.txt; \
		  echo "not ok - hip_probe against the HIP test double"; exit 1; }

.PHONY: check-hip-probe
CHECK_UNIT_TARGETS += check-hip-probe

# ---------------------------------------------------------------- install
install-backend-headers: $(BACKEND_HEADERS)
	install -d $(DESTDIR)$(INCLUDEDIR)/gpuar
	install -m 644 $(BACKEND_HEADERS) $(DESTDIR)$(INCLUDEDIR)/gpuar/
.PHONY: install-backend-headers
INSTALL_TARGETS += install-backend-headers
