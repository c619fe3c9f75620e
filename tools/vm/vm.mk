# SPDX-License-Identifier: MIT
#
# Kernel selftests in QEMU VMs (tools/vm/README.md):
#
#   make vm-check KERNEL=<6.1|6.12|7.x|debug>   one kernel, one boot
#   make check-vm                               every kernel in VM_KERNELS,
#                                               continuing past a failure
#
# Knobs (environment or make variables): GPUAR_CACHE, VM_ACCEL=kvm,
# VM_TIMEOUT (s, whole VM), VM_TEST_TIMEOUT (s, per test binary),
# VM_SUITE=full|smoke (smoke: only VM_SMOKE_SUITES), VM_SUITES (test
# binaries to run, overriding VM_SUITE).

VM_KERNELS ?= 6.1 6.12 7.x debug
KERNEL ?=
VM_SUITE ?= full
# The smoke subset: load, port, one wait of each kind, teardown, clean log.
VM_SMOKE_SUITES ?= smoke_test word_wait_test fence_wait_test
VM_ENV = BUILD=$(BUILD) VM_SUITE=$(VM_SUITE) VM_SMOKE_SUITES="$(VM_SMOKE_SUITES)"

vm-check:
	@case "$(KERNEL)" in 6.1|6.12|7.x|debug) ;; \
	*) echo "usage: make vm-check KERNEL=<6.1|6.12|7.x|debug>" >&2; exit 2 ;; esac
	@$(VM_ENV) tools/vm/vm-check $(KERNEL)

check-vm:
	@failed=; for k in $(VM_KERNELS); do \
		$(VM_ENV) tools/vm/vm-check $$k || failed="$$failed $$k"; \
	done; \
	if [ -n "$$failed" ]; then echo "check-vm: failed on:$$failed"; exit 1; fi; \
	echo "check-vm: passed on $(VM_KERNELS)"

# The fuzzer alone, for DURATION seconds (the suites run it for 100000
# calls): make fuzz-kmod KERNEL=debug DURATION=600
DURATION ?= 300
.PHONY: fuzz-kmod
fuzz-kmod:
	@case "$(KERNEL)" in 6.1|6.12|7.x|debug) ;; \
	*) echo "usage: make fuzz-kmod KERNEL=<6.1|6.12|7.x|debug> [DURATION=s]" >&2; exit 2 ;; esac
	@$(VM_ENV) VM_SUITES=kfuzz_test VM_KFUZZ_SECONDS=$(DURATION) \
		VM_TEST_TIMEOUT=$$(($(DURATION) + 120)) tools/vm/vm-check $(KERNEL)

# The soak: COMPLETIONS completions through several ports with an exact
# account (selftests/kmod/soak.c), alone in a VM: make soak [KERNEL=debug]
COMPLETIONS ?= 10000000
.PHONY: soak
soak:
	@case "$(or $(KERNEL),debug)" in 6.1|6.12|7.x|debug) ;; \
	*) echo "usage: make soak [KERNEL=<6.1|6.12|7.x|debug>] [COMPLETIONS=n]" >&2; exit 2 ;; esac
	@$(MAKE) -s -C selftests/kmod soak SOAK_OUT=$(abspath $(BUILD))/vm/soak
	@$(VM_ENV) VM_TESTS=$(abspath $(BUILD))/vm/soak \
		VM_SOAK_COMPLETIONS=$(COMPLETIONS) VM_TEST_TIMEOUT=86400 \
		VM_TIMEOUT=90000 tools/vm/vm-check $(or $(KERNEL),debug)

# The runner's own logic, tested on the host (no VM needed): its verdict on
# canned serial logs, and how it finds the archive in apt sources.
.PHONY: check-vm-tools
check-vm-tools:
	@tools/vm/test-vm-report.sh
	@tools/vm/test-apt-uri.sh
CHECK_UNIT_TARGETS += check-vm-tools
