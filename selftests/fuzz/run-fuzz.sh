#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-fuzz.sh DIR SECONDS TIMEOUT NAME...
#
# Runs DIR/fuzz_NAME for SECONDS from selftests/fuzz/seeds/NAME plus a
# working corpus DIR/corpus/NAME that grows from run to run. A crash, a
# failed check, a leak or one input running past TIMEOUT s fails the run;
# libFuzzer leaves that input as DIR/NAME-crash-* (or -leak-*, -timeout-*),
# which `DIR/fuzz_NAME FILE` replays. Each target's log: DIR/NAME.log.
set -u
dir=$1 seconds=$2 timeout=$3
shift 3
fail=0
for name in "$@"; do
	corpus=$dir/corpus/$name
	log=$dir/$name.log
	mkdir -p "$corpus"
	if "$dir/fuzz_$name" "$corpus" "selftests/fuzz/seeds/$name" \
		-dict=selftests/fuzz/grammar.dict \
		-max_total_time="$seconds" -timeout="$timeout" \
		-artifact_prefix="$dir/$name-" >"$log" 2>&1; then
		runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log")
		echo "fuzz_$name: ok, ${runs:-?} runs in $seconds s," \
			"corpus $(ls "$corpus" | wc -l) inputs"
	else
		tail -n 40 "$log"
		input=$(ls -t "$dir/$name"-crash-* "$dir/$name"-leak-* \
			"$dir/$name"-timeout-* 2>/dev/null | head -n 1)
		echo "fuzz_$name: FAIL (log $log; input ${input:-none})"
		fail=1
	fi
done
exit $fail
