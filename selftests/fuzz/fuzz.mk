# SPDX-License-Identifier: MIT
# libFuzzer targets for the plan and band grammars and for the user
# engine's entry points (clang, libfuzzer-14-dev). The core sources (and,
# for the port target, the library's) are compiled into each target with
# the fuzzer's coverage and ASan+UBSan. check-fuzz runs every target for FUZZ_SECONDS
# (selftests/fuzz/run-fuzz.sh); a crash, failed check, leak or hang fails
# it and leaves the input under $(BUILD)/fuzz/.
FUZZ_SECONDS ?= 20
FUZZ_TIMEOUT ?= 10
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_NAMES := plan bands port
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))
FUZZ_CORE_SRCS := $(CORE_SRCS) $(CORE_USER_SRCS)
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

$(FUZZ_DIR)/fuzz_%: selftests/fuzz/fuzz_%.c selftests/fuzz/fuzz_check.h \
		$(FUZZ_CORE_SRCS) $(wildcard core/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -Iinclude -Iinclude/uapi -Icore $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_CORE_SRCS)

# The port target drives the library proper (no CUDA/HIP backends),
# whose sources call the deprecated names they define the new ones with
# (lib/renamed.c), as lib/lib.mk builds them.
FUZZ_PORT_SRCS := $(FUZZ_CORE_SRCS) $(filter-out $(BACKEND_SRCS),$(LIB_SRCS))
$(FUZZ_DIR)/fuzz_port: selftests/fuzz/fuzz_port.c selftests/fuzz/fuzz_check.h \
		$(FUZZ_PORT_SRCS) $(wildcard core/*.h lib/*.h include/gpuar/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -D_GNU_SOURCE -Iinclude -Iinclude/uapi -Icore -Ilib \
		-Ibackends/include $(LIB_DRM_CFLAGS) -DGPUAR_VERSION='"$(VERSION)"' \
		-DGPUAR_DISABLE_DEPRECATION_WARNINGS \
		$(FUZZ_CFLAGS) -pthread -o $@ $< $(FUZZ_PORT_SRCS) $(LIB_LDLIBS)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)

check-fuzz: $(FUZZ_BINS)
	@selftests/fuzz/run-fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TIMEOUT) \
		$(FUZZ_NAMES)
