# SPDX-License-Identifier: MIT
# make gpu-bundle: everything a GPU machine needs to check gpuar, built
# here, in one directory ($(GPU_BUNDLE), under 64 MiB) that needs there
# only the NVIDIA driver, bash, coreutils, sed and grep: no compiler, no
# packages.
# `$(GPU_BUNDLE)/run OUTDIR` runs the check (tools/gpu-bundle/run says
# what it does). make check-gpu-bundle proves the run here, without a
# GPU, against the CUDA test double (tools/gpu-bundle/check-gpu-bundle.sh).
#
# Programs are linked here with DT_RPATH $ORIGIN/../lib (RPATH, not
# RUNPATH, so that libgpuar.so's own liburing and libdrm are found there
# too); tools/gpu-bundle/assemble.sh copies every library they need but
# glibc's into lib/. The CUDA programs of backends/cuda/gpucheck need
# nvcc here (CUDA_HOME); their runtime is linked statically, and they are
# left out, with a line in MANIFEST saying so, where there is no nvcc.

GPU_BUNDLE := $(BUILD)/gpu-bundle
GPU_BUNDLE_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../lib'
NVCC ?= $(or $(wildcard $(CUDA_HOME)/bin/nvcc),$(shell command -v nvcc 2>/dev/null))
# Hopper machine code, and PTX the driver compiles for any other GPU from
# Turing (compute 7.5, the oldest CUDA 13 builds for) on.
GPU_BUNDLE_CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_75,code=compute_75
GPUCHECK_DIR := backends/cuda/gpucheck

GPU_BUNDLE_PROGRAMS := $(GPU_BUNDLE)/bin/gpuar-bench $(GPU_BUNDLE)/bin/gpuar-stat \
	$(GPU_BUNDLE)/bin/cuda-probe $(GPU_BUNDLE)/bin/hip-probe \
	$(GPU_BUNDLE)/tests/test_cuda_backend
GPU_BUNDLE_CUDA_PROGRAMS := $(if $(NVCC),$(GPU_BUNDLE)/bin/cuda-stream-bench \
	$(GPU_BUNDLE)/bin/cuda-visibility $(GPU_BUNDLE)/bin/cuda-fault-report)

# $(call gpu_bundle_link,LINKER,INPUTS): link $@ to find its libraries in
# the bundle's lib/.
define gpu_bundle_link
@mkdir -p $(dir $@)
$(1) $(LDFLAGS_ALL) $(GPU_BUNDLE_RPATH) -o $@ $(2)
endef

$(GPU_BUNDLE)/bin/gpuar-bench: $(BENCH_OBJS) $(LIB_A)
	$(call gpu_bundle_link,$(CC),$(BENCH_OBJS) $(LIB_A) $(LIB_LDLIBS) $(BENCH_LDLIBS))
$(GPU_BUNDLE)/bin/gpuar-stat: $(STAT_OBJS) $(LIB_A)
	$(call gpu_bundle_link,$(CC),$(STAT_OBJS) $(LIB_A) $(LIB_LDLIBS))
$(GPU_BUNDLE)/bin/hip-probe: $(BUILD)/backends/hip/gpucheck/hip_probe.o $(LIB_A)
	$(call gpu_bundle_link,$(CC),$< $(LIB_A) $(LIB_LDLIBS))
$(GPU_BUNDLE)/tests/test_cuda_backend: $(BUILD)/selftests/unit/test_cuda_backend.o $(LIB_A)
	$(call gpu_bundle_link,$(CC),$< $(LIB_A) $(LIB_LDLIBS) $(CHECK_LIBS))

# The probe and the CUDA programs use the public API alone: they link the
# shared library, as an application would.
$(GPU_BUNDLE)/bin/cuda-probe: $(BUILD)/$(GPUCHECK_DIR)/cuda_probe.o $(LIB_SO)
	$(call gpu_bundle_link,$(CC),$< -L$(BUILD)/lib -lgpuar -ldl)

$(BUILD)/$(GPUCHECK_DIR)/%.cu.o: $(GPUCHECK_DIR)/%.cu $(GPUCHECK_DIR)/gpucheck.h \
		$(LIB_PUBLIC_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(GPU_BUNDLE_CUDA_ARCH) -Werror all-warnings \
		-Xcompiler -Wall,-Wextra -Iinclude -Iinclude/uapi -Ibackends/include \
		-c -o $@ $<

# C++ and the CUDA runtime linked in: the machine's versions do not matter.
GPU_BUNDLE_CUDA_LIBS = -L$(BUILD)/lib -lgpuar -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt
$(GPU_BUNDLE)/bin/cuda-stream-bench: $(BUILD)/$(GPUCHECK_DIR)/stream_bench.cu.o $(LIB_SO)
	$(call gpu_bundle_link,$(CXX) -static-libstdc++ -static-libgcc,$< $(GPU_BUNDLE_CUDA_LIBS))
$(GPU_BUNDLE)/bin/cuda-visibility: $(BUILD)/$(GPUCHECK_DIR)/visibility.cu.o $(LIB_SO)
	$(call gpu_bundle_link,$(CXX) -static-libstdc++ -static-libgcc,$< $(GPU_BUNDLE_CUDA_LIBS))
$(GPU_BUNDLE)/bin/cuda-fault-report: $(BUILD)/$(GPUCHECK_DIR)/fault_report.cu.o $(LIB_SO)
	$(call gpu_bundle_link,$(CXX) -static-libstdc++ -static-libgcc,$< $(GPU_BUNDLE_CUDA_LIBS))

gpu-bundle: $(GPU_BUNDLE_PROGRAMS) $(GPU_BUNDLE_CUDA_PROGRAMS) $(LIB_SO)
	@rm -rf $(GPU_BUNDLE)/kmod-src && $(call kmod_stage,$(GPU_BUNDLE)/kmod-src)
	@tools/gpu-bundle/assemble.sh $(GPU_BUNDLE) $(BUILD)/lib/libgpuar.so.$(SOVERSION) $(VERSION) \
		"$(NVCC)" "$(GPU_BUNDLE_CUDA_ARCH)" $(BENCH_PTX)

check-gpu-bundle: gpu-bundle $(DOUBLE_CUDA)
	@tools/gpu-bundle/check-gpu-bundle.sh $(GPU_BUNDLE) $(abspath $(DOUBLE_CUDA)) \
		$(BUILD)/gpu-bundle-check

# The check itself, on this machine's GPU (no packages needed there).
check-gpu: gpu-bundle
	@$(GPU_BUNDLE)/run $(BUILD)/gpu-check

.PHONY: gpu-bundle check-gpu-bundle check-gpu
