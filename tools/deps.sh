#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Install what building and testing gpuar need, from Debian's packages.
# Idempotent: installs only what is missing, runs `apt-get update` at most
# once (only when something is missing). Not root: prints the exact
# apt-get line and fails.
#
# The kernels the VMs boot are not installed here: tools/vm/ downloads and
# unpacks them into the cache (backports through a private apt list).
set -euo pipefail

pkgs=(
	# build
	build-essential pkg-config clang llvm lld libfuzzer-14-dev libclang-rt-14-dev
	# compile check of the arm64 hardware word wait: the compiler and
	# its libc and kernel headers (only recommended by the compiler,
	# and recommends are not installed here)
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross linux-libc-dev-arm64-cross
	# the 32-bit (compat_ioctl) caller in the VM selftests: the compiler's
	# i386 half and libc, not the gcc-multilib metapackage, which
	# conflicts with every cross compiler (the aarch64 one above)
	gcc-12-multilib libc6-dev-i386
	bc bison flex libelf-dev libssl-dev dwarves pahole cpio xz-utils zstd kmod rsync
	util-linux binutils
	# userspace dependencies
	check liburing-dev libdrm-dev libuv1-dev
	# the Python binding's tests, and its offline install (pip builds
	# with Debian's setuptools in a virtual environment)
	python3 python3-pytest python3-setuptools python3-pip python3-venv
	# the asyncio tests run on uvloop too (libuv's loop) beside the default loop
	python3-uvloop
	# the token server example (ZeroMQ) and its test
	python3-zmq
	# the Rust crate (rust/gpuar): Debian's toolchain and the crates it
	# builds with offline (tokio's features are all in its one package)
	rustc cargo librust-tokio-dev librust-tokio-macros-dev librust-libc-dev
	librust-futures-core-dev
	# the UCX example beside a port (TCP and shared memory on loopback)
	libucx-dev
	# HIP declarations are checked against these headers (ROCm 5.2)
	libamdhip64-dev
	# kernel module build, lint and packaging
	linux-headers-amd64 linux-source sparse dkms
	# Debian packages (make deb, lintian), the RPM spec's check, the
	# manual pages' lint
	debhelper dh-dkms lintian rpm mandoc
	# VM test runner (the kernels themselves: tools/vm/fetch-kernel.sh)
	qemu-system-x86 busybox-static debootstrap
	# benchmark plots; the documentation's pictures (make docs)
	gnuplot-nox graphviz
	# make check-structure reads the sources' definitions with it
	universal-ctags
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	# Virtual packages (pahole is provided by dwarves) have no status.
	if [[ $st != ii* ]]; then
		if [[ $p == pahole ]] && command -v pahole >/dev/null; then
			continue
		fi
		missing+=("$p")
	fi
done

if ((${#missing[@]} == 0)); then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi

line="apt-get install -y --no-install-recommends ${missing[*]}"
if ((EUID != 0)); then
	echo "deps: missing: ${missing[*]}" >&2
	echo "deps: as root, run: apt-get update && $line" >&2
	exit 1
fi

echo "deps: installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends "${missing[@]}"
