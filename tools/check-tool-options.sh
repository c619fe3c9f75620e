#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-tool-options: what the tools promise about their command lines,
# before any measurement:
#   - every tool answers --version with its name and version;
#   - gpuar-bench --json / --plot into a missing directory is refused as a
#     bad option (exit 2) at once, naming the file;
#   - gpuar-bench exits 1, naming each strategy and why, when nothing
#     selected can run (here: the kernel strategies on a missing device);
#   - --device cuda lists no strategy ready where the driver cannot load.
#
# Usage: check-tool-options.sh BENCH STAT VERSION
set -uo pipefail

bench=$1 stat=$2 version=$3
fail() {
	echo "not ok - check-tool-options: $*"
	exit 1
}
# expect_exit RC CMD...: CMD exits RC within 2 s; its stderr in $err.
expect_exit() {
	local want=$1 rc
	shift
	err=$(timeout 2 "$@" 2>&1 >/dev/null)
	rc=$?
	((rc == want)) || fail "$* exited $rc, not $want: $err"
}

for t in "$bench" "$stat"; do
	out=$("$t" --version) || fail "$t --version failed"
	[[ $out == "$(basename "$t") $version "* ]] || fail "$t --version said '$out'"
done
expect_exit 2 "$bench" --json /nonexistent/x.json
[[ $err == *"--json /nonexistent/x.json: its directory does not exist"* ]] ||
	fail "--json into a missing directory: $err"
expect_exit 2 "$bench" --plot /nonexistent/x.png
expect_exit 1 "$bench" --strategies kport-read,kport-epoll --device-path /nonexistent/gpuar
[[ $err == *"nothing to measure"*"kport-read"* ]] || fail "nothing to measure: $err"
ready=$(GPUAR_CUDA_LIBRARY=/nonexistent/libcuda.so.1 "$bench" --device cuda --list |
	grep -c ' ready ')
((ready == 0)) || fail "--device cuda without a driver lists $ready strategies ready"
echo "ok - check-tool-options: --version on both tools; output files checked before" \
	"measuring; exit 1 when nothing can run; --device cuda ready only with a driver"
