#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The tokio example's wait latency beside gpuar-bench's C user-imminent
# strategy, measured in one run on this machine: ROUNDS rounds, each
# running the C strategy (one repetition of WAITS waits) and then the
# tokio example (WAITS waits) with the same plan, job length (1 ms) and
# CPU placement (waiter on the first CPU, the device on the last), so a
# change in the machine's load hits both alike. Prints each round's p50
# and the medians over the rounds.
#
#   bench-compare.sh BUILD [ROUNDS] [WAITS]      (make rust-bench)
set -euo pipefail

build=${1:?usage: bench-compare.sh BUILD [ROUNDS] [WAITS]}
rounds=${2:-7}
waits=${3:-500}
bench=$build/tools/gpuar-bench
tokio=$build/rust/release/examples/tokio_server
for f in "$bench" "$tokio"; do
	[[ -x $f ]] || { echo "bench-compare: $f missing (make rust-bench builds it)" >&2; exit 1; }
done
cpus=$(nproc)
waiter=0 device=$((cpus - 1))
plan="flag:park_us=50,backstop_us=100000+predict:margin_us=100,min_sleep_us=20,max_sleep_us=50000,window=8"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

c_all=() r_all=()
echo "round  C user-imminent p50 us  tokio example p50 us"
for ((i = 1; i <= rounds; i++)); do
	c=$("$bench" --strategies user-imminent --waits "$waits" --reps 1 --background-ms 0 \
		--work-us 1000 --plan "$plan" --waiter-cpu "$waiter" --device-cpu "$device" 2>&1 |
		awk '$1 == "user-imminent" && $2 ~ /^[0-9.]+$/ { print $2; exit }')
	r=$("$tokio" --engine user --waits "$waits" --work-us 1000 --plan "$plan" \
		--waiter-cpu "$waiter" --device-cpu "$device" |
		sed -n 's/.*latency p50 \([0-9.]*\) us.*/\1/p')
	[[ -n $c && -n $r ]] || { echo "bench-compare: round $i gave no p50" >&2; exit 1; }
	printf '%5d  %22s  %20s\n' "$i" "$c" "$r"
	c_all+=("$c") r_all+=("$r")
done
cm=$(printf '%s\n' "${c_all[@]}" | median)
rm=$(printf '%s\n' "${r_all[@]}" | median)
echo "median of $rounds rounds ($waits waits each): C user-imminent $cm us, tokio example $rm us," \
	"difference $(awk -v a="$rm" -v b="$cm" 'BEGIN { printf "%.2f", a - b }') us"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
