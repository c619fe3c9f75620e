#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Judge one VM run from its serial log: write the TAP of every test binary
# (kselftest runner layout: one top-level result per binary, its own TAP
# nested as "# " lines) and print every reason the run failed. Kernel log
# lines (those with a printk timestamp) are kept out of the TAP and are
# the only lines searched for kernel reports, so a test's own output can
# never fake or hide one.
#
#   vm-report.sh CONSOLE_LOG TAP_OUT KERNEL_NAME [QEMU_STATUS]
#
# Last line: "vm <kernel>: P passed, F failed" (test cases; a binary that
# crashed, timed out or printed no plan counts its missing cases, or one,
# as failed). Exit status 0 only when nothing failed; 3 when the guest died
# before its first test began (no test-begin marker and no end of its
# script: a boot that crashed, hung or was killed), which vm-check answers
# by booting once more; 1 for every other failure.
set -euo pipefail

log=$1 tap=$2 name=$3 qemu_rc=${4:-0}

awk -v tap="$tap" -v name="$name" -v qemu_rc="$qemu_rc" '
function kernel_line(l) { return l ~ /^\[ *[0-9]+\.[0-9]+\]/ }
function problem(s) { if (!(s in seen_problem)) { seen_problem[s] = 1; problems[++np] = s } }
function close_binary(rc,    ok, missing) {
	missing = (plan >= 0) ? plan - (npass + nfail) : 0
	if (missing < 0) missing = 0
	ok = (rc == 0 || rc == 4) && plan >= 0 && nfail == 0 && missing == 0
	if (plan < 0) {
		problem(sprintf("%s: no TAP plan (rc=%s)", bin, rc))
		missing = 1
	} else if (missing > 0) {
		problem(sprintf("%s: %d of %d tests never reported (rc=%s)", bin, missing, plan, rc))
	} else if (!ok && nfail == 0) {
		problem(sprintf("%s: exited with rc=%s", bin, rc))
		missing = 1
	}
	if (rc == 137) problem(sprintf("%s: killed (per-test timeout or crash)", bin))
	pass_total += npass; fail_total += nfail + missing; skip_total += nskip
	nbin++
	results[nbin] = sprintf("%s %d selftests: gpuar: %s", ok ? "ok" : "not ok", nbin, bin)
	body[nbin] = out
	if (!ok) failed_bins++
}
# Drop carriage returns and the firmware terminal escapes.
{ sub(/\r$/, ""); gsub(/\033\[[0-9;?]*[A-Za-z]/, "") }
# ---- structure markers from the guest init
/^gpuar-vm: done$/ { done = 1; next }
/^gpuar-vm: modules loaded$/ { loaded = 1; next }
/^gpuar-vm: FAIL / { problem("guest: " substr($0, 17)); next }
/^gpuar-vm: test-begin / { began = 1; inbin = 1; bin = $3; out = ""; plan = -1; npass = nfail = nskip = 0; next }
/^gpuar-vm: test-end / {
	rc = $4; sub(/^rc=/, "", rc)
	if (inbin) close_binary(rc + 0)
	inbin = 0; next
}
/^gpuar-vm: kmemleak-begin$/ { inleak = 1; next }
/^gpuar-vm: kmemleak-end$/ { inleak = 0; next }
inleak && !kernel_line($0) && NF > 0 { leaks++; if (leaks <= 20) problem("kmemleak: " $0); next }
# ---- kernel reports
kernel_line($0) {
	if ($0 ~ /BUG:|WARNING:|Oops|general protection|Kernel panic|kernel BUG at|possible circular locking|possible recursive locking|inconsistent lock state|sleeping function called from invalid context|refcount_t:|KASAN|UBSAN|suspected memory leak|INFO: task .* blocked|soft lockup|hard LOCKUP|detected stalls? on CPU|self-detected stall|Call Trace:/)
		if (!($0 in seen_report) && ++reports <= 40) problem("kernel: " $0)
	seen_report[$0] = 1
	next
}
# ---- a test binary output
inbin {
	out = out "# " $0 "\n"
	if ($0 ~ /^1\.\.[0-9]+/) { plan = substr($0, 4) + 0 }
	else if ($0 ~ /^ok [0-9]+/) { npass++; if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) nskip++ }
	else if ($0 ~ /^not ok [0-9]+/) { nfail++; problem(bin ": " $0) }
}
END {
	if (inbin) close_binary(-1)
	if (qemu_rc == 124) problem("timeout: the VM did not finish within VM_TIMEOUT")
	else if (qemu_rc != 0) problem("qemu exited with status " qemu_rc)
	if (!loaded) problem("guest: modules did not load, no test ran")
	else if (nbin == 0) problem("guest: no test binary ran")
	if (!done) problem("guest: never reached the end of its script (crash, panic or hang)")
	early = !began && !done
	if (early) problem("guest: died before its first test began")
	printf "TAP version 13\n1..%d\n", nbin > tap
	for (i = 1; i <= nbin; i++) {
		split(results[i], f, " ")
		printf "# selftests: gpuar: %s\n%s%s\n", substr(results[i], index(results[i], ": gpuar: ") + 9), body[i], results[i] > tap
	}
	close(tap)
	for (i = 1; i <= np; i++) printf "vm %s: FAIL %s\n", name, problems[i]
	if (reports > 40) printf "vm %s: FAIL ... %d kernel report lines in all\n", name, reports
	if (skip_total) printf "vm %s: %d skipped (counted as passed)\n", name, skip_total
	if (np > 0 && fail_total == 0) fail_total = 1
	printf "vm %s: %d passed, %d failed\n", name, pass_total, fail_total
	exit early ? 3 : np > 0
}' "$log"
