#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-lib-symbols-file: the Debian symbols file lists exactly what the
# shared library exports, each function at the version node the library
# gives it, and each version node itself. dpkg-gensymbols checks the same
# when the package is built (make deb, DPKG_GENSYMBOLS_CHECK_LEVEL=4), but
# that build is rare; this runs with the unit tests, so the map and the
# symbols file change in the same commit or the check fails.
#
# The minimal versions (the third column) are not compared: they say
# which release a function appeared or last changed in, which the
# library itself does not record.
#
# usage: check-symbols-file.sh LIBRARY.so SYMBOLS-FILE
set -eu
so=$1
symbols=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuar-symbols-file.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# "name@@NODE" (the default version) and the nodes themselves as "NODE"
# (type A), without the toolchain's own symbols (leading _); the symbols
# file writes them as name@NODE and NODE@NODE.
nm -D --defined-only --with-symbol-versions "$so" |
	awk '$2 == "A" { print $3 "@" $3; next } { print $3 }' |
	grep -v '^_' | sed 's/@@*/@/' | sort -u >"$tmp/exported"
# Symbol lines begin with a space: " name@NODE minver"; the header line
# and "* Field: value" lines do not.
sed -n 's/^ \([^ ]*\) .*/\1/p' "$symbols" | sort >"$tmp/listed"
dups=$(uniq -d "$tmp/listed")
sort -u -o "$tmp/listed" "$tmp/listed"

n=$(wc -l <"$tmp/exported")
missing=$(comm -23 "$tmp/exported" "$tmp/listed")
extra=$(comm -13 "$tmp/exported" "$tmp/listed")
if [ -n "$missing$extra$dups" ]; then
	[ -z "$missing" ] || echo "# exported but not in $symbols:" $missing
	[ -z "$extra" ] || echo "# in $symbols but not exported:" $extra
	[ -z "$dups" ] || echo "# listed twice in $symbols:" $dups
	echo "not ok - check-lib-symbols-file: $(basename "$symbols") does not list exactly the $n symbols $(basename "$so") exports"
	exit 1
fi
echo "ok - check-lib-symbols-file: $(basename "$symbols") lists exactly the $n symbols $(basename "$so") exports, at their version nodes"
