# SPDX-License-Identifier: MIT
# Check unit tests: every selftests/unit/test_*.c is one binary, linked
# against the static library (core + library objects). check-unit-tests
# runs them all, each printing Check's summary line, and fails if any
# fails. check-sanitize runs the same targets under ASan+UBSan.
UNIT_TEST_SRCS := $(sort $(wildcard selftests/unit/test_*.c))
UNIT_TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(UNIT_TEST_SRCS))
UNIT_TESTS := $(patsubst %.c,$(BUILD)/%,$(UNIT_TEST_SRCS))
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(or $(shell pkg-config --libs check 2>/dev/null),-lcheck)

$(UNIT_TEST_OBJS): CPPFLAGS_ALL += -Iselftests/unit $(CHECK_CFLAGS)

$(BUILD)/selftests/unit/test_%: $(BUILD)/selftests/unit/test_%.o $(LIB_A)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIB_LDLIBS) $(CHECK_LIBS)

.PHONY: check-unit-tests
check-unit-tests: $(UNIT_TESTS)
	@fail=0; for t in $(UNIT_TESTS); do \
		echo "== $$t"; \
		$$t || { echo "FAIL: $$t"; fail=1; }; \
	done; exit $$fail

CHECK_UNIT_TARGETS += check-unit-tests
