# SPDX-License-Identifier: MIT
# Command-line tools: gpuar-bench (every wait strategy measured side by
# side), gpuar-stat (the module's ports and points), and `make demo`.

BENCH_DIR := tools/bench
# Pure statistics and accounting: also linked into the unit tests.
BENCH_STATS_SRCS := $(BENCH_DIR)/bench_stats.c $(BENCH_DIR)/bench_procstat.c \
	$(BENCH_DIR)/bench_cpu.c $(BENCH_DIR)/bench_rng.c \
	$(BENCH_DIR)/bench_workload.c $(BENCH_DIR)/bench_result.c \
	$(BENCH_DIR)/bench_targets.c $(BENCH_DIR)/bench_env.c \
	$(BENCH_DIR)/bench_clock_sync.c $(BENCH_DIR)/bench_counts.c \
	$(BENCH_DIR)/bench_service_report.c
BENCH_SRCS := $(BENCH_STATS_SRCS) \
	$(BENCH_DIR)/bench_device.c $(BENCH_DIR)/bench_futex.c \
	$(BENCH_DIR)/bench_vgem.c $(BENCH_DIR)/bench_kport.c \
	$(BENCH_DIR)/bench_strategies.c $(BENCH_DIR)/strat_spin.c \
	$(BENCH_DIR)/strat_sleep_poll.c $(BENCH_DIR)/strat_futex_wake.c \
	$(BENCH_DIR)/strat_oracle.c $(BENCH_DIR)/strat_user_predict.c \
	$(BENCH_DIR)/strat_kport_read.c $(BENCH_DIR)/strat_kport_epoll.c \
	$(BENCH_DIR)/strat_kport_uring.c $(BENCH_DIR)/strat_fence_vgem.c \
	$(BENCH_DIR)/bench_libport.c $(BENCH_DIR)/strat_lib_reap.c \
	$(BENCH_DIR)/strat_kport_epoll_imminent.c \
	$(BENCH_DIR)/strat_kport_uring_imminent.c \
	$(BENCH_DIR)/strat_user_imminent.c $(BENCH_DIR)/strat_reactor_spin.c \
	$(BENCH_DIR)/bench_cuda.c $(BENCH_DIR)/strat_cuda_event.c \
	$(BENCH_DIR)/strat_cuda_hostfunc.c \
	$(BENCH_DIR)/bench_select.c \
	$(BENCH_DIR)/bench_run.c $(BENCH_DIR)/bench_table.c \
	$(BENCH_DIR)/bench_json.c $(BENCH_DIR)/bench_plot.c \
	$(BENCH_DIR)/bench_options.c $(BENCH_DIR)/bench_scale.c \
	$(BENCH_DIR)/bench_service.c \
	$(BENCH_DIR)/bench_throughput.c $(BENCH_DIR)/bench_main.c \
	tools/common/tool_options.c
BENCH_STATS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(BENCH_STATS_SRCS))
BENCH_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(BENCH_SRCS))
BENCH_LDLIBS := -luring -lm
BENCH := $(BUILD)/tools/gpuar-bench

# --device cuda: the kernels are PTX text (bench_cuda_kernels.ptx) that the
# driver JIT-compiles; the build turns it into a C string for bench_cuda.c.
# Where the CUDA toolkit is installed, ptxas assembles it as a check (the
# benchmark never needs the toolkit; a typo is caught here, not on a GPU).
BENCH_PTX := $(BENCH_DIR)/bench_cuda_kernels.ptx
BENCH_PTX_H := $(BUILD)/$(BENCH_DIR)/bench_cuda_kernels_ptx.h
PTXAS ?= $(or $(wildcard $(CUDA_HOME)/bin/ptxas),$(shell command -v ptxas 2>/dev/null))

$(BENCH_PTX_H): $(BENCH_PTX)
	@mkdir -p $(dir $@)
	{ echo '/* Generated from $< by tools/tools.mk: do not edit. */'; \
	  echo 'static const char bench_cuda_kernels_ptx[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } >$@.tmp && mv $@.tmp $@

$(BUILD)/$(BENCH_DIR)/bench_cuda.o: $(BENCH_PTX_H)
$(BUILD)/$(BENCH_DIR)/bench_cuda.o: CPPFLAGS_ALL += -I$(BUILD)/$(BENCH_DIR) \
	-Ibackends/cuda -Ibackends/vendor

$(BUILD)/$(BENCH_DIR)/ptx-check.stamp: $(BENCH_PTX) $(PTXAS)
	@mkdir -p $(dir $@)
ifneq ($(PTXAS),)
	$(PTXAS) $(BENCH_PTX) -o /dev/null
	@echo "bench PTX assembles with $(PTXAS)" >$@
else
	@echo "bench PTX check skipped: no ptxas (CUDA_HOME=$(CUDA_HOME))" | tee $@
endif
bench-ptx-check: $(BUILD)/$(BENCH_DIR)/ptx-check.stamp
.PHONY: bench-ptx-check

$(BENCH): $(BENCH_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BENCH_OBJS) $(LIB_A) $(LIB_LDLIBS) $(BENCH_LDLIBS)

# A static gpuar-bench for the test VM's busybox initramfs (make demo).
BENCH_STATIC := $(BUILD)/tools/gpuar-bench-static
$(BENCH_STATIC): $(BENCH_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -static $(LDFLAGS_ALL) -o $@ $(BENCH_OBJS) $(LIB_A) $(LIB_LDLIBS) $(BENCH_LDLIBS)

STAT_DIR := tools/stat
# The parsers of the module's text statistics: also linked into the tests.
STAT_PARSE_SRCS := $(STAT_DIR)/stat_model.c $(STAT_DIR)/stat_parse.c
STAT_SRCS := $(STAT_PARSE_SRCS) $(STAT_DIR)/stat_collect.c \
	$(STAT_DIR)/stat_exercise.c $(STAT_DIR)/stat_output.c $(STAT_DIR)/stat_main.c \
	tools/common/tool_options.c
STAT_PARSE_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(STAT_PARSE_SRCS))
STAT_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(STAT_SRCS))
STAT := $(BUILD)/tools/gpuar-stat

$(STAT): $(STAT_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(STAT_OBJS) $(LIB_A) $(LIB_LDLIBS)

STAT_STATIC := $(BUILD)/tools/gpuar-stat-static
$(STAT_STATIC): $(STAT_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -static $(LDFLAGS_ALL) -o $@ $(STAT_OBJS) $(LIB_A) $(LIB_LDLIBS)

# check-tool-options: the tools' command-line promises, checked before any
# measurement (tools/check-tool-options.sh).
.PHONY: check-tool-options
check-tool-options: $(BENCH) $(STAT)
	@tools/check-tool-options.sh $(BENCH) $(STAT) $(VERSION)
CHECK_UNIT_TARGETS += check-tool-options

# check-structure: the library's and the module's files call downward only
# (no circle between files), none is over 600 lines, and docs/design.md
# draws their layers as they are (tools/check-structure.py, which reads
# the sources with universal-ctags).
.PHONY: check-structure
check-structure:
	@command -v ctags >/dev/null || { echo "not ok - check-structure: no ctags (make deps installs universal-ctags)"; exit 1; }
	@/usr/bin/python3 tools/check-structure.py --max-lines 600 --doc docs/design.md lib kmod
CHECK_UNIT_TARGETS += check-structure

.PHONY: tools-bench tools-stat tools-static install-tools
# What make demo puts into the VM.
tools-static: $(BENCH_STATIC) $(STAT_STATIC)
tools-bench: $(BENCH)
tools-stat: $(STAT)
tools: tools-bench tools-stat
ALL_TARGETS += tools-bench tools-stat bench-ptx-check
CHECK_UNIT_TARGETS += bench-ptx-check

install-tools: $(BENCH) $(STAT)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(BENCH) $(STAT) $(DESTDIR)$(BINDIR)/
INSTALL_TARGETS += install-tools

# The unit tests of the tools (selftests/unit/test_bench_*.c) link the
# benchmark's objects (all but main) and the stat parsers; unit.mk's link
# line carries LIB_LDLIBS, so they ride on it for exactly these targets
# (before the library again: the strategies call into it).
BENCH_UNIT_TESTS := $(patsubst %.c,$(BUILD)/%,$(wildcard selftests/unit/test_bench_*.c))
BENCH_UNIT_OBJS := $(filter-out %/bench_main.o,$(BENCH_OBJS)) $(STAT_PARSE_OBJS)
$(BENCH_UNIT_TESTS): $(BENCH_UNIT_OBJS)
$(BENCH_UNIT_TESTS): LIB_LDLIBS := $(BENCH_UNIT_OBJS) $(LIB_A) $(LIB_LDLIBS) $(BENCH_LDLIBS)
$(patsubst %,%.o,$(BENCH_UNIT_TESTS)): CPPFLAGS_ALL += -I$(BENCH_DIR) -I$(STAT_DIR)
# The --device cuda tests run against the CUDA test double, and call some
# of its entry points directly (with the backend's declarations).
$(BUILD)/selftests/unit/test_bench_cuda: $(DOUBLE_CUDA)
$(BUILD)/selftests/unit/test_bench_cuda.o: CPPFLAGS_ALL += -Ibackends/cuda

# make demo: deps, build, the benchmark on the default workload (on the
# host when /dev/gpuar is there, else inside the 6.1 VM); table last,
# build/demo/bench.json and build/demo/bench.png.
demo:
	@BUILD=$(BUILD) MAKE="$(MAKE)" tools/demo.sh
