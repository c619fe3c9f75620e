# SPDX-License-Identifier: MIT
# Examples, built against the in-tree static library. libuv_loop only where
# libuv's development files are installed. gpu_await.c is built twice: for
# CUDA (cuda_await) and, with -DGPUAR_EXAMPLE_HIP, for HIP (hip_await);
# neither needs the vendor's toolkit (the driver is loaded at run time).
EXAMPLE_SRCS := examples/quickstart.c examples/epoll_loop.c \
	examples/fill_executor.c examples/timerfd_port.c
UV_LIBS := $(shell pkg-config --libs libuv 2>/dev/null)
ifneq ($(UV_LIBS),)
EXAMPLE_SRCS += examples/libuv_loop.c
$(BUILD)/examples/libuv_loop.o: CPPFLAGS_ALL += $(shell pkg-config --cflags libuv)
$(BUILD)/examples/libuv_loop: EXAMPLE_EXTRA_LIBS := $(UV_LIBS)
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
