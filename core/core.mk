# SPDX-License-Identifier: MIT
# The shared core. CORE_SRCS compile into the module and the library;
# CORE_USER_SRCS (text parsers, code formatting) into the library only.
# kmod/core.c includes each CORE_SRCS file; kmod/kmod.mk stages them.
CORE_SRCS := core/plan.c core/estimator.c core/outcome.c core/word_state.c
CORE_USER_SRCS := core/plan_text.c core/codes.c core/textbuf.c

# check-core-freestanding (core/check-freestanding.sh): every core file
# compiled -ffreestanding with the kernel's restrictions a compiler can
# enforce (no VLAs, no mixed declarations, no FPU/SIMD registers, a small
# stack frame); includes and undefined symbols checked.
CORE_FREESTANDING_CFLAGS := -std=gnu11 -ffreestanding -fno-common -O2 \
	-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wdeclaration-after-statement \
	-Wframe-larger-than=1024
ifeq ($(shell uname -m),x86_64)
CORE_FREESTANDING_CFLAGS += -mno-sse -mno-mmx -mno-80387
endif
.PHONY: check-core-freestanding
check-core-freestanding:
	@core/check-freestanding.sh $(BUILD)/core-freestanding '$(CC)' \
		'$(CORE_FREESTANDING_CFLAGS)' '$(CORE_SRCS)' '$(CORE_USER_SRCS)'

CHECK_UNIT_TARGETS += check-core-freestanding
