# SPDX-License-Identifier: MIT
# The Rust crate (rust/gpuar): safe bindings over libgpuar with blocking
# and tokio hosts, built offline from Debian's packaged crates
# (rust/.cargo/config.toml) with Debian's toolchain: /usr/bin/cargo,
# /usr/bin/rustc and /usr/bin/rustdoc (the doc tests), never a rustup
# toolchain earlier in PATH. It links the in-tree static library
# (build.rs; GPUAR_LIB_DIR overrides), and its tests load the CUDA/HIP
# test doubles.
DEB_CARGO ?= /usr/bin/cargo
DEB_RUSTC ?= /usr/bin/rustc
DEB_RUSTDOC ?= /usr/bin/rustdoc
RUST_TARGET := $(abspath $(BUILD))/rust
RUST_ENV = RUSTC=$(DEB_RUSTC) RUSTDOC=$(DEB_RUSTDOC) CARGO_TARGET_DIR=$(RUST_TARGET) \
	GPUAR_LIB_DIR=$(abspath $(BUILD))/lib \
	GPUAR_TEST_DOUBLES=$(abspath $(DOUBLES_DIR))
RUST_CARGO = cd rust && $(RUST_ENV) $(DEB_CARGO)

.PHONY: check-rust rust-examples rust-vm-test
check-rust: $(LIB_A) $(BACKEND_DOUBLES)
	$(RUST_CARGO) test -j2 --offline --manifest-path gpuar/Cargo.toml

# Release builds of the examples (the latency figures of rust/README.md).
rust-examples: $(LIB_A)
	$(RUST_CARGO) build -j2 --offline --release --manifest-path gpuar/Cargo.toml --examples

# The tokio host's TAP check for the test VM (tools/vm/lib-tests.sh
# stages it as /tests/rust_tokio_test): the same debug build check-rust
# makes, so it costs nothing after it.
RUST_VM_TEST := $(RUST_TARGET)/debug/examples/kernel_tap
rust-vm-test: $(LIB_A)
	$(RUST_CARGO) build -j2 --offline --manifest-path gpuar/Cargo.toml --example kernel_tap

# The tokio example's latency beside C user-imminent's, in one run
# (rust/bench-compare.sh; rust/README.md quotes it).
.PHONY: rust-bench
rust-bench: $(BENCH) rust-examples
	rust/bench-compare.sh $(BUILD)
