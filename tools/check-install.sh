#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-install: a PREFIX install as a user without root makes it, and
# its undoing.
#   make install PREFIX=<tmp>   then, with no LD_LIBRARY_PATH:
#     - every installed tool answers --version (they carry libgpuar
#       statically, so they need nothing from the prefix's lib/);
#     - the README's quick start builds against the prefix with only
#       PKG_CONFIG_PATH and an rpath, as the README says, and runs;
#   make uninstall PREFIX=<tmp> leaves no file or link under the prefix.
#
# Usage: check-install.sh WORKDIR   (MAKE from the environment)
set -uo pipefail

work=$(realpath -m "$1")
prefix=$work/prefix
: "${MAKE:=make}"
fail() {
	echo "not ok - check-install: $*"
	exit 1
}

rm -rf "$work"
mkdir -p "$work" || fail "cannot make $work"
$MAKE --no-print-directory install PREFIX="$prefix" >"$work/install.log" 2>&1 ||
	{ tail -20 "$work/install.log"; fail "make install PREFIX=$prefix failed"; }

unset LD_LIBRARY_PATH
tools=0
for t in "$prefix"/bin/*; do
	"$t" --version >"$work/version.txt" 2>&1 ||
		{ cat "$work/version.txt"; fail "$t --version failed (without LD_LIBRARY_PATH)"; }
	grep -q "^$(basename "$t") [0-9]" "$work/version.txt" ||
		fail "$t --version said: $(cat "$work/version.txt")"
	tools=$((tools + 1))
done
((tools >= 2)) || fail "expected gpuar-bench and gpuar-stat in $prefix/bin, found $tools tools"

# What the README tells a user of a PREFIX install to do.
quickstart() {
	local flags
	flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs gpuar) || return 1
	cp examples/quickstart.c "$work/" && cd "$work" || return 1
	# shellcheck disable=SC2086 # pkg-config's output is several words
	cc quickstart.c $flags -Wl,-rpath,"$prefix/lib" -o quickstart && ./quickstart >run.txt 2>&1
}
(quickstart) || { cat "$work/run.txt" 2>/dev/null; fail "the quick start against PREFIX=$prefix"; }
grep -q 'record: user_data=42 status=0 value=1' "$work/run.txt" ||
	fail "the quick start said: $(cat "$work/run.txt")"

$MAKE --no-print-directory uninstall PREFIX="$prefix" >"$work/uninstall.log" 2>&1 ||
	{ tail -20 "$work/uninstall.log"; fail "make uninstall PREFIX=$prefix failed"; }
left=$(find "$prefix" ! -type d)
[[ -z $left ]] || fail "make uninstall left: $(echo "$left" | head -5 | tr '\n' ' ')"
echo "ok - check-install: make install PREFIX=<tmp>: $tools tools answer --version and" \
	"the quick start runs without LD_LIBRARY_PATH; make uninstall leaves no file"
