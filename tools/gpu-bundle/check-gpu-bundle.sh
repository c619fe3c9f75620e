#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-gpu-bundle.sh BUNDLE CUDA_DOUBLE OUTDIR: what make check can prove
# of the GPU bundle without a GPU. One TAP line per claim:
#  - it is under 64 MiB and self-contained: every library its programs
#    load is in its lib/, except glibc's and the driver;
#  - with no GPU here, run exits 77 and says so (skipped on a GPU machine);
#  - with the CUDA test double's "no device" (cuInit fails), also 77;
#  - against the CUDA test double (GPUAR_CUDA_LIBRARY), run goes through
#    every step in its quick mode, exits 0, and leaves summary.txt (one
#    PASS or SKIP line per step), env.txt, log.txt and both benchmark
#    JSON files in OUTDIR, nothing else (the device tool brings back at
#    most eight files);
#  - a run whose budget is spent fails (exit 1) instead of passing.
set -u

BUNDLE=$(cd "${1:?usage: $0 BUNDLE CUDA_DOUBLE OUTDIR}" && pwd)
DOUBLE=${2:?usage: $0 BUNDLE CUDA_DOUBLE OUTDIR}
OUT=${3:?usage: $0 BUNDLE CUDA_DOUBLE OUTDIR}
STEPS="env cuda-probe module cuda-tests-user bench-1000us bench-100us
	stream-bench-user visibility-user fault-report-user hip-probe-user"
FAILED=0
rm -rf "$OUT"
mkdir -p "$OUT"

ok() { echo "ok - gpu-bundle: $*"; }
not_ok() {
	echo "not ok - gpu-bundle: $1"
	[ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/# /' "$2"
	FAILED=1
}

# expect_exit NAME STATUS PATTERN CLAIM ENV...: run under ENV (a command
# prefix) into OUTDIR/NAME; the claim holds when run exits STATUS and its
# summary has a line matching PATTERN.
expect_exit() {
	local name=$1 want=$2 pattern=$3 claim=$4 rc
	shift 4
	"$@" "$BUNDLE/run" "$OUT/$name" >"$OUT/$name.out" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -q "$pattern" "$OUT/$name/summary.txt"; then
		ok "$claim"
	else
		not_ok "$claim: exit $rc" "$OUT/$name.out"
	fi
}

# Never build or load the module on the machine running make check.
[ -d "/lib/modules/$(uname -r)/build" ] && export GPU_BUNDLE_NO_MODULE=1

# ------------------------------------------------------- size, contents
kib=$(du -sk "$BUNDLE" | cut -f1)
if [ "$kib" -lt $((64 * 1024)) ]; then
	ok "$BUNDLE is $((kib / 1024)) MiB, under the 64 MiB the device tool carries"
else
	not_ok "$BUNDLE is $kib KiB, over 64 MiB"
fi
outside=$(ldd "$BUNDLE"/bin/* "$BUNDLE"/tests/* 2>/dev/null |
	awk '$2 == "=>" { print $3 }' |
	grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv)\.so|/ld-linux' |
	grep -Ev "^$BUNDLE/(bin|tests)/\.\./lib/" | sort -u)
if [ -z "$outside" ]; then
	ok "every program finds its libraries in the bundle (glibc aside)"
else
	not_ok "libraries from outside the bundle: $(echo "$outside" | paste -sd' ' -)"
fi

# ---------------------------------------------------------------- no GPU
if [ -e /proc/driver/nvidia/version ] || [ -e /dev/nvidiactl ] || [ -e /dev/kfd ]; then
	ok "no-GPU exit status # SKIP this machine has a GPU"
else
	expect_exit nogpu 77 '^cuda-probe  *SKIP no CUDA driver' \
		"with no GPU here, run exits 77 and says why" env -u GPUAR_CUDA_LIBRARY
fi
expect_exit nodevice 77 'CUDA_ERROR_NO_DEVICE' "a driver that finds no device: run exits 77" \
	env GPUAR_CUDA_LIBRARY="$DOUBLE" GPUAR_FAKE_CUDA_NO_DEVICE=1

# ------------------------------------------------------ the test double
run=$OUT/double
GPUAR_CUDA_LIBRARY=$DOUBLE GPU_BUNDLE_QUICK=1 "$BUNDLE/run" "$run" >"$run.out" 2>&1
rc=$?
missing='' failed=''
for s in $STEPS; do
	line=$(grep "^$s " "$run/summary.txt" 2>/dev/null)
	case $line in
	"") missing="$missing $s" ;;
	*" PASS "*|*" SKIP "?*) ;;
	*) failed="$failed $s" ;;
	esac
done
files=$(cd "$run" 2>/dev/null && find . -mindepth 1 | sort | paste -sd' ' -)
want="./bench-cuda-1000us.json ./bench-cuda-100us.json ./env.txt ./log.txt ./summary.txt"
if [ $rc != 0 ] || [ -n "$missing$failed" ]; then
	not_ok "against the CUDA test double: exit $rc; steps missing:${missing:- none}; not passed:${failed:- none}" "$run.out"
elif [ "$files" != "$want" ]; then
	not_ok "against the CUDA test double: OUTDIR holds $files, not $want"
elif ! grep -q '^cuda-tests-user  *PASS [1-9][0-9]* cases, 0 failures, 0 errors against the test double' "$run/summary.txt"; then
	not_ok "against the CUDA test double: the backend tests did not run" "$run/summary.txt"
elif ! grep -q '"gpuar-bench/1"' "$run/bench-cuda-1000us.json" ||
	! grep -q '"gpuar-bench/1"' "$run/bench-cuda-100us.json"; then
	not_ok "against the CUDA test double: the benchmark JSON is not gpuar-bench/1"
else
	ok "against the CUDA test double: every step ran or said why not, exit 0 ($(grep -c ' PASS ' "$run/summary.txt") passed, $(grep -c ' SKIP ' "$run/summary.txt") skipped)"
fi

# ------------------------------------------------------ a spent budget
expect_exit nobudget 1 "^env  *FAIL not run: the run's 0 s budget was spent" \
	"steps the budget leaves no time for fail (exit 1)" \
	env GPUAR_CUDA_LIBRARY="$DOUBLE" GPU_BUNDLE_QUICK=1 GPU_BUNDLE_BUDGET_S=0
exit $FAILED
