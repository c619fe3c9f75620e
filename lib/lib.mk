# SPDX-License-Identifier: MIT
# libgpuar: shared (soname libgpuar.so.$(SOVERSION)) and static, both
# carrying the shared core.
LIB_SRCS :=
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRCS) $(CORE_USER_SRCS) $(LIB_SRCS))
LIB_A := $(BUILD)/lib/libgpuar.a
LIB_SO := $(BUILD)/lib/libgpuar.so.$(VERSION)

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libgpuar.so.$(SOVERSION) $(LDFLAGS_ALL) -o $@ $^
	ln -sf libgpuar.so.$(VERSION) $(BUILD)/lib/libgpuar.so.$(SOVERSION)
	ln -sf libgpuar.so.$(SOVERSION) $(BUILD)/lib/libgpuar.so

lib: $(LIB_A) $(LIB_SO)
ALL_TARGETS += lib
