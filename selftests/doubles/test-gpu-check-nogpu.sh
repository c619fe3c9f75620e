#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tools/gpu-check on a machine without a GPU: it must say "no GPU found",
# run nothing, print its table last and exit with its own status (3).
# On a machine that has a GPU this test does not apply and says so.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:?usage: $0 OUTDIR}

if [ -e /proc/driver/nvidia/version ] || { [ -e /dev/kfd ] &&
	grep -qv '^0$' /sys/class/kfd/kfd/topology/nodes/*/gpu_id 2>/dev/null; }; then
	echo "ok - gpu-check no-GPU path # SKIP this machine has a GPU"
	exit 0
fi
rm -rf "$OUT"
GPU_CHECK_OUT=$OUT "$ROOT/tools/gpu-check" >"$OUT.stdout" 2>&1
rc=$?
fail() { echo "not ok - gpu-check no-GPU path: $*"; cat "$OUT.stdout"; exit 1; }
[ $rc = 3 ] || fail "exit status $rc, expected 3"
grep -q 'no GPU found' "$OUT.stdout" || fail "does not say 'no GPU found'"
tail -n1 "$OUT.stdout" | grep -q '^gpu  *NONE  *no GPU found' ||
	fail "the table is not the last thing printed"
[ -f "$OUT/summary.txt" ] || fail "no $OUT/summary.txt"
[ ! -d "$OUT/build" ] || fail "it built something"
echo "ok - gpu-check no-GPU path (exit 3, table last, results in $OUT)"
