# SPDX-License-Identifier: MIT
# Examples, built against the in-tree static library. libuv_loop only where
# libuv's development files are installed.
EXAMPLE_SRCS := examples/quickstart.c examples/epoll_loop.c \
	examples/fill_executor.c
UV_LIBS := $(shell pkg-config --libs libuv 2>/dev/null)
ifneq ($(UV_LIBS),)
EXAMPLE_SRCS += examples/libuv_loop.c
$(BUILD)/examples/libuv_loop.o: CPPFLAGS_ALL += $(shell pkg-config --cflags libuv)
$(BUILD)/examples/libuv_loop: EXAMPLE_EXTRA_LIBS := $(UV_LIBS)
endif
EXAMPLES := $(patsubst %.c,$(BUILD)/%,$(EXAMPLE_SRCS))

$(BUILD)/examples/%: $(BUILD)/examples/%.o $(LIB_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIB_LDLIBS) $(EXAMPLE_EXTRA_LIBS)

.PHONY: examples
examples: $(EXAMPLES)
ALL_TARGETS += examples
