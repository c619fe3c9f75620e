# SPDX-License-Identifier: MIT
# Examples, built against the in-tree static library. libuv_loop only where
# libuv's development files are installed, ucx_pair where UCX's are.
# gpu_await.c is built twice: for CUDA (cuda_await) and, with
# -DGPUAR_EXAMPLE_HIP, for HIP (hip_await); neither needs the vendor's
# toolkit (the driver is loaded at run time).
EXAMPLE_SRCS := examples/quickstart.c examples/cuda_quickstart.c \
	examples/epoll_loop.c \
	examples/fill_executor.c examples/timerfd_port.c
UV_LIBS := $(shell pkg-config --libs libuv 2>/dev/null)
ifneq ($(UV_LIBS),)
EXAMPLE_SRCS += examples/libuv_loop.c
$(BUILD)/examples/libuv_loop.o: CPPFLAGS_ALL += $(shell pkg-config --cflags libuv)
$(BUILD)/examples/libuv_loop: EXAMPLE_EXTRA_LIBS := $(UV_LIBS)
endif
UCX_LIBS := $(shell pkg-config --libs ucx 2>/dev/null)
ifneq ($(UCX_LIBS),)
EXAMPLE_SRCS += examples/ucx_pair.c
$(BUILD)/examples/ucx_pair.o: CPPFLAGS_ALL += $(shell pkg-config --cflags ucx)
$(BUILD)/examples/ucx_pair: EXAMPLE_EXTRA_LIBS := $(UCX_LIBS)
endif
EXAMPLE_GPU := $(BUILD)/examples/cuda_await $(BUILD)/examples/hip_await
EXAMPLES := $(patsubst %.c,$(BUILD)/%,$(EXAMPLE_SRCS)) $(EXAMPLE_GPU)

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIB_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIB_LDLIBS) $(EXAMPLE_EXTRA_LIBS)

$(BUILD)/examples/cuda_await.o: examples/gpu_await.c $(WERROR_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<
$(BUILD)/examples/hip_await.o: examples/gpu_await.c $(WERROR_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -DGPUAR_EXAMPLE_HIP -MMD -MP -c -o $@ $<

.PHONY: examples
examples: $(EXAMPLES)
ALL_TARGETS += examples

# The UCX pair over TCP and over shared memory, loopback only; each run
# stops itself (60 s alarm) and fails when the receiver does.
UCX_PAIR := $(BUILD)/examples/ucx_pair
.PHONY: check-ucx
check-ucx: $(if $(UCX_LIBS),$(UCX_PAIR))
	@if [ -z "$(UCX_LIBS)" ]; then \
		echo "not ok 1 - ucx_pair: UCX's development files (libucx-dev) missing"; \
		exit 1; \
	fi; \
	n=0; rc=0; for t in tcp sm; do n=$$((n + 1)); \
		if timeout 90 $(UCX_PAIR) --messages 300 --transport $$t; then \
			echo "ok $$n - ucx_pair over $$t"; \
		else echo "not ok $$n - ucx_pair over $$t"; rc=1; fi; \
	done; exit $$rc
