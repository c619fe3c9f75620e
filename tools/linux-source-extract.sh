#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Extract the few files gpuar takes from Debian's linux-source at build
# time (never committed): checkpatch.pl with the data files it reads, and
# the kselftest harness headers. Idempotent; prints the directory.
#
#   tools/linux-source-extract.sh        -> $GPUAR_CACHE/linux-source-6.1
#
# LINUX_SOURCE_TARBALL overrides the tarball (default: Debian's 6.1).
set -euo pipefail

tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
cache=${GPUAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuar}
top=$(basename "$tarball" .tar.xz)
dest=$cache/$top

files=(
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
)

have_all() {
	local f
	for f in "${files[@]}"; do
		[[ -s $dest/$f ]] || return 1
	done
}

if ! have_all; then
	if [[ ! -r $tarball ]]; then
		echo "linux-source-extract: $tarball missing (apt-get install linux-source)" >&2
		exit 1
	fi
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.extract.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	tar -xJf "$tarball" -C "$tmp" "${files[@]/#/$top/}"
	chmod +x "$tmp/$top/scripts/checkpatch.pl"
	# Replace atomically so a concurrent reader never sees half a tree.
	mkdir -p "$dest"
	for f in "${files[@]}"; do
		mkdir -p "$dest/$(dirname "$f")"
		mv -f "$tmp/$top/$f" "$dest/$f"
	done
fi
echo "$dest"
