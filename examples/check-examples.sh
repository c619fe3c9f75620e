#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-examples: every example runs to completion on this host (no GPU,
# no module needed) and says what it promises:
#   fill_executor   what FILL saved against waiting first, working after
#   timerfd_port    both jobs, the ticks between them
#   cuda_quickstart the stream's record through the CUDA double, or
#                   "skipped: ..." without a driver
#   cuda_await, hip_await
#                   without a driver: "skipped: ..." and exit 0; against
#                   the test doubles of libcuda.so.1 and libamdhip64.so:
#                   every await reached and reaped with status 0
#
# Usage: check-examples.sh OUTDIR CUDA_DOUBLE HIP_DOUBLE EXAMPLE...
set -uo pipefail

out=$1 cuda_double=$2 hip_double=$3
shift 3
fail() {
	echo "not ok - check-examples: $*"
	exit 1
}
# run NAME PROGRAM [ENV...]: PROGRAM's output in $out/NAME.out, or fail.
run() {
	local name=$1 prog=$2
	shift 2
	env "$@" "$prog" </dev/null >"$out/$name.out" 2>&1 ||
		{ cat "$out/$name.out"; fail "$prog (exit $?)"; }
}
expect() {
	grep -Eq "$2" "$out/$1.out" || { cat "$out/$1.out"; fail "$1: no line matching '$2'"; }
}

mkdir -p "$out"
for e in "$@"; do
	run "$(basename "$e")" "$e" GPUAR_CUDA_LIBRARY=/nonexistent/libcuda.so.1 \
		GPUAR_HIP_LIBRARY=/nonexistent/libamdhip64.so
done
for e in "$@"; do
	case $(basename "$e") in
	fill_executor) expect fill_executor '^FILL saved [0-9]+ us: the run took' ;;
	timerfd_port) expect timerfd_port '^2 jobs, ([5-9]|[1-9][0-9]+) ticks, [0-9]+ port wake-ups$' ;;
	cuda_await | hip_await) expect "$(basename "$e")" '^skipped: no (cuda|hip) device here: ' ;;
	cuda_quickstart) expect cuda_quickstart '^skipped: .*libcuda' ;;
	esac
done
dir=$(dirname "$1")
run cuda_await-double "$dir/cuda_await" GPUAR_CUDA_LIBRARY="$cuda_double"
expect cuda_await-double '^await 2: sequence 3 reached, outcome [a-z]+, status 0'
run cuda_quickstart-double "$dir/cuda_quickstart" GPUAR_CUDA_LIBRARY="$cuda_double"
expect cuda_quickstart-double '^stream done: user_data=1 \(await 1\) status=0$'
run hip_await-double "$dir/hip_await" GPUAR_HIP_LIBRARY="$hip_double"
expect hip_await-double '^await 2: sequence 3 reached, outcome [a-z]+, status 0'
echo "ok - check-examples: $# examples ran; fill_executor reports FILL's saving," \
	"timerfd_port ticks between completions, cuda_quickstart, cuda_await and" \
	"hip_await skip without a driver and await through the CUDA and HIP test doubles"
