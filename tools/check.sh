#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make check`: every test gpuar has, in one run, with one closing line.
#
# Runs each step even after an earlier one failed, so one run shows every
# failure. Each step's output is kept in build/check/<step>.log. Counts
# come from the steps' own summaries (Check's "Checks: N, Failures: F,
# Errors: E", the VM runner's "vm <kernel>: P passed, F failed", pytest's
# closing "N passed, F failed, S skipped, E errors in T s"); a step that
# reports no count counts as one test.
#
# GPUAR_CHECK_ALL=1 (make check-all) runs the full VM suites on every
# kernel; otherwise the kernels named in GPUAR_SMOKE_KERNELS run the smoke
# subset (see README "Testing").
set -uo pipefail

cd "$(dirname "$0")/.."
: "${MAKE:=make}"
# Warnings are errors in every build the checks make (a user's plain
# `make` leaves them warnings).
export WERROR=1
: "${GPUAR_CHECK_ALL:=0}"
: "${GPUAR_KERNELS:=6.1 6.12 7.x debug}"
: "${GPUAR_SMOKE_KERNELS:=}"
logdir=build/check
mkdir -p "$logdir"

passed=0
failed=0
skipped=0
failed_steps=()

# pytest's closing line, "=== 3 passed, 1 skipped in 0.52s ===".
pytest_word='(passed|failed|skipped|errors?|deselected|xfailed|xpassed|warnings?)'
pytest_summary="^=* ?(([0-9]+ $pytest_word,? )+)in [0-9.]+s"

# count_log LOG TAP -> sets p f s from the summaries in LOG (and, when TAP
# is 1, its TAP lines: the VM steps' TAP is already in their summary line);
# returns 1 if none.
count_log() {
	local log=$1 tap=$2 line n fl er
	p=0 f=0 s=0
	local found=1
	while IFS= read -r line; do
		if [[ $line =~ Checks:\ ([0-9]+),\ Failures:\ ([0-9]+),\ Errors:\ ([0-9]+) ]]; then
			n=${BASH_REMATCH[1]} fl=${BASH_REMATCH[2]} er=${BASH_REMATCH[3]}
			p=$((p + n - fl - er))
			f=$((f + fl + er))
			found=0
		elif [[ $line =~ ^vm\ [^:]+:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
			p=$((p + BASH_REMATCH[1]))
			f=$((f + BASH_REMATCH[2]))
			found=0
		elif [[ $line =~ $pytest_summary ]]; then
			count_pytest "${BASH_REMATCH[1]}"
			found=0
		elif [[ $tap == 1 && $line =~ ^not\ ok\ ([0-9]+|-) ]]; then
			f=$((f + 1))
			found=0
		elif [[ $tap == 1 && $line =~ ^ok\ ([0-9]+|-) ]]; then
			if [[ $line =~ \#\ [Ss][Kk][Ii][Pp] ]]; then
				s=$((s + 1))
			else
				p=$((p + 1))
			fi
			found=0
		fi
	done <"$log"
	return $found
}

# count_pytest "3 passed, 1 failed, 2 skipped, 1 error " -> adds to p f s
# (errors are tests that failed outside their body: failures).
count_pytest() {
	local part n what parts
	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		read -r n what <<<"$part"
		case $what in
		passed) p=$((p + n)) ;;
		failed | error | errors) f=$((f + n)) ;;
		skipped) s=$((s + n)) ;;
		esac
	done
}

step() {
	local name=$1
	shift
	local log=$logdir/$name.log start rc
	start=$(date +%s)
	echo "=== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	local tap=1
	[[ $name != vm-* ]] || tap=0
	if count_log "$log" "$tap"; then
		:
	elif ((rc == 0)); then
		p=1 f=0
	else
		p=0 f=1 s=0
	fi
	# A failing step with clean counts still fails (a crash, a build error).
	if ((rc != 0 && f == 0)); then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	((rc == 0)) || failed_steps+=("$name")
	echo "=== $name: rc=$rc passed=$p failed=$f skipped=$s ($(($(date +%s) - start)) s)"
}

step build $MAKE -j2 all
step unit $MAKE -j2 check-unit
step sanitize $MAKE -j2 check-sanitize
step gpu-bundle $MAKE -j2 check-gpu-bundle
step fuzz $MAKE check-fuzz
step kmod-lint $MAKE check-kmod-lint
step dkms $MAKE check-dkms
step python $MAKE check-python
step ucx $MAKE check-ucx
step packages $MAKE check-packages
for k in $GPUAR_KERNELS; do
	suite=full
	if [[ $GPUAR_CHECK_ALL != 1 && " $GPUAR_SMOKE_KERNELS " == *" $k "* ]]; then
		suite=smoke
	fi
	step "vm-$k" $MAKE vm-check KERNEL="$k" VM_SUITE="$suite"
done
# The pin-charge fallback of kernels that do not export free_uid, proven
# on 6.1 with the module built as for such a kernel (VM_KMOD_WITHOUT).
if [[ " $GPUAR_KERNELS " == *" 6.1 "* ]]; then
	step vm-6.1-without-free-uid env VM_KMOD_WITHOUT=free_uid_export \
		VM_SUITES=limits_test $MAKE vm-check KERNEL=6.1
fi

if ((${#failed_steps[@]})); then
	echo "check: failed steps: ${failed_steps[*]}"
fi
echo "check: $passed passed, $failed failed, $skipped skipped"
((failed == 0 && ${#failed_steps[@]} == 0))
