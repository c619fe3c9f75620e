#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-freestanding.sh OUTDIR CC "CFLAGS" "KERNEL_SRCS" "USER_SRCS"
#
# The shared core must compile with no libc and no headers but its own, the
# ABI's and the library's dependency-free <gpuar/codes.h> (the coded error
# numbers, defined once), because the module compiles the same files. Each
# file is compiled -ffreestanding (flags from core.mk); its objects may reference
# only memset/memcpy/memmove (emitted by compilers for struct copies) and
# symbols the core itself defines, and the files compiled into the module
# only what those files define.
set -u
out=$1 cc=$2 cflags=$3 kernel_srcs=$4 user_srcs=$5
fail=0
mkdir -p "$out"

for f in core/*.c core/*.h; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$f" |
	while read -r inc; do
		case $inc in
		'<linux/gpuar.h>' | '<linux/types.h>' | '<gpuar/codes.h>') ;;
		\"*\")
			h=${inc#\"}; h=${h%\"}
			[ -f "core/$h" ] || { echo "$f: includes $inc, not a core header"; exit 1; } ;;
		*) echo "$f: includes $inc (only core headers, <linux/gpuar.h>, <linux/types.h>, <gpuar/codes.h>)"; exit 1 ;;
		esac
	done || fail=1
done

objs() { for s in $1; do echo "$out/$(basename "$s" .c).o"; done; }
defined() { nm --defined-only $(objs "$1") | awk 'NF == 3 { print $3 }' | sort -u; }

for src in $kernel_srcs $user_srcs; do
	# shellcheck disable=SC2086
	$cc $cflags -Iinclude/uapi -Iinclude -Icore -c -o "$out/$(basename "$src" .c).o" "$src" || fail=1
done
[ $fail -eq 0 ] || { echo "check-core-freestanding: FAIL"; exit 1; }

kdefs=$(defined "$kernel_srcs")
udefs=$(defined "$kernel_srcs $user_srcs")
for src in $kernel_srcs $user_srcs; do
	case " $kernel_srcs " in *" $src "*) defs=$kdefs ;; *) defs=$udefs ;; esac
	for sym in $(nm -u "$out/$(basename "$src" .c).o" | awk '{ print $NF }'); do
		case $sym in memset | memcpy | memmove) continue ;; esac
		if ! printf '%s\n' "$defs" | grep -qx "$sym"; then
			echo "$src: references undefined symbol $sym"
			fail=1
		fi
	done
done
[ $fail -eq 0 ] || { echo "check-core-freestanding: FAIL"; exit 1; }
echo "check-core-freestanding: ok ($(echo $kernel_srcs $user_srcs | wc -w) files)"
