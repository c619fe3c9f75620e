#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the gpuar debug kernel (KASAN, lockdep, kmemleak, UBSAN, object
# debugging) from Debian's linux-source 6.1: tinyconfig plus
# tools/vm/debug.config, built in place under $GPUAR_CACHE/debug-kernel so
# the tree doubles as the KDIR out-of-tree modules build against.
# Idempotent: rebuilds only when the tarball or the fragment changed.
# Prints the kernel tree.
set -euo pipefail
. "$(dirname "$0")/common.sh"

tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
fragment=$VM_DIR/debug.config
dir=$GPUAR_CACHE/debug-kernel
top=$(basename "$tarball" .tar.xz)
tree=$dir/$top

[[ -r $tarball ]] || vm_die "$tarball missing (apt-get install linux-source)"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

want=$( { stat -c '%s %Y' "$tarball"; cat "$fragment"; gcc --version | head -1; } |
	sha256sum | cut -d' ' -f1)
if [[ -s $tree/arch/x86/boot/bzImage && $(cat "$dir/stamp" 2>/dev/null) == "$want" ]]; then
	echo "$tree"
	exit 0
fi
rm -f "$dir/stamp"

extract() {
	local tmp
	tmp=$(mktemp -d "$dir/.extract.XXXXXX")
	tar -xJf "$tarball" -C "$tmp"
	rm -rf "$tree"
	mv "$tmp/$top" "$tree"
	rmdir "$tmp"
}
if [[ ! -f $tree/Makefile ]]; then
	vm_step debug-kernel-extract extract >&2
fi

configure() {
	# ARCH=x86_64: plain tinyconfig on x86 is a 32-bit config, and int
	# options keep their 32-bit defaults even after 64BIT is merged in.
	make -C "$tree" -s ARCH=x86_64 tinyconfig
	(cd "$tree" && scripts/kconfig/merge_config.sh -m .config "$fragment" >/dev/null)
	make -C "$tree" -s olddefconfig
	# Kconfig silently drops options whose dependencies are unmet: refuse.
	local line missing=()
	while read -r line; do
		grep -qx "$line" "$tree/.config" || missing+=("$line")
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=y$' "$fragment")
	while read -r line; do
		! grep -q "^${line%%=*}=" "$tree/.config" || missing+=("$line")
	done < <(grep -E '^# CONFIG_[A-Z0-9_]+ is not set$' "$fragment" |
		sed -E 's/^# (CONFIG_[A-Z0-9_]+) is not set$/\1=n/')
	((${#missing[@]} == 0)) || vm_die "debug config lost: ${missing[*]}"
}
# Only the tree's path goes to stdout (callers capture it); make's chatter
# (tinyconfig runs merge_config itself) goes to stderr.
vm_step debug-kernel-config configure >&2

build() {
	make -C "$tree" -s -j"$VM_JOBS" bzImage modules
}
vm_step debug-kernel-build build >&2
echo "$want" >"$dir/stamp"
echo "$tree"
