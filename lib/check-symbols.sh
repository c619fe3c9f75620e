#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-lib-symbols: the shared library exports exactly the functions its
# installed headers declare. A public function missing from the dynamic
# symbol table (defined without GPUAR_EXPORT) breaks every program that
# calls it through libgpuar.so; an internal one in it (the library is
# built with -fvisibility=hidden) becomes ABI by accident.
#
# The public functions are what the compiler itself lists as declared in
# the headers (gcc -aux-info), not a second hand-kept list. Every exported
# function must also carry the symbol version GPUAR_1.0 (the frozen 1.0 ABI)
# or GPUAR_1.1 (added since; lib/libgpuar.map): one left unversioned or at
# another node is in neither.
#
# usage: check-symbols.sh LIBRARY.so HEADER...
set -eu
so=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuar-symbols.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for h in "$@"; do
	readlink -f "$h"
done >"$tmp/headers"
sed 's/.*/#include "&"/' "$tmp/headers" >"$tmp/all.c"
# The headers include each other as <gpuar/...> and <linux/gpuar.h>.
# gcc, whatever built the library: clang has no -aux-info.
gcc -std=c11 -D_GNU_SOURCE -Iinclude -Iinclude/uapi -Ibackends/include \
	-aux-info "$tmp/aux.txt" -fsyntax-only "$tmp/all.c"
# Lines look like: /* include/gpuar/drm.h:36:NC */ extern int name (...);
# with the header's path as the compiler found it: keep those whose file
# is one of ours, and their function's name.
sed -nE 's|^/\* ([^:]+):[0-9]+:[^*]*\*/ *(.*[ *])?([a-z_0-9]+) \(.*|\1 \3|p' \
	"$tmp/aux.txt" >"$tmp/decls"
while read -r path name; do
	grep -qxF "$(readlink -f "$path")" "$tmp/headers" && echo "$name"
done <"$tmp/decls" | sort -u >"$tmp/public"
# Defined dynamic symbols as "name@@VERSION", without the version nodes
# themselves (type A) and the toolchain's own (leading _).
nm -D --defined-only --with-symbol-versions "$so" |
	awk '$2 != "A" { print $3 }' | grep -v '^_' | sort -u >"$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | sort -u >"$tmp/exported"
grep -vE '@@GPUAR_1\.[01]$' "$tmp/versioned" >"$tmp/unversioned" || true

n=$(wc -l <"$tmp/public")
[ "$n" -gt 0 ] || { echo "not ok - check-lib-symbols: no functions found in $*"; exit 1; }
missing=$(comm -23 "$tmp/public" "$tmp/exported")
extra=$(comm -13 "$tmp/public" "$tmp/exported")
if [ -n "$missing$extra" ]; then
	[ -z "$missing" ] || echo "# declared in the headers but not exported (GPUAR_EXPORT?):" $missing
	[ -z "$extra" ] || echo "# exported but not declared in an installed header:" $extra
	echo "not ok - check-lib-symbols: $(basename "$so") does not export exactly its $n public functions"
	exit 1
fi
if [ -s "$tmp/unversioned" ]; then
	echo "# exported but not at version GPUAR_1.0 or GPUAR_1.1 (lib/libgpuar.map):" $(cat "$tmp/unversioned")
	echo "not ok - check-lib-symbols: $(basename "$so") has functions outside GPUAR_1.0 and GPUAR_1.1"
	exit 1
fi
echo "ok - check-lib-symbols: $(basename "$so") exports exactly the $n functions its headers declare, each at GPUAR_1.0 or GPUAR_1.1"
