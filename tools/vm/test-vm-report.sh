#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Host-side test of the VM runner's judge (vm-report.sh): canned serial
# logs, each with the verdict and the closing line it must produce. The
# judge decides whether a kernel run passed, so a judge that passes a
# broken run is a broken test suite.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# expect NAME WANT_RC WANT_LAST_LINE [QEMU_RC] < LOG
expect() {
	local name=$1 want_rc=$2 want_last=$3 qemu_rc=${4:-0} rc=0 last
	n=$((n + 1))
	cat >"$tmp/log"
	"$here/vm-report.sh" "$tmp/log" "$tmp/tap" k "$qemu_rc" >"$tmp/out" || rc=$?
	last=$(tail -1 "$tmp/out")
	if [[ $rc == "$want_rc" && $last == "$want_last" ]]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name: rc=$rc (want $want_rc), last line '$last' (want '$want_last')"
		sed 's/^/#   /' "$tmp/out"
		failed=$((failed + 1))
	fi
}

head_ok='gpuar-vm: kernel 6.1 name=k
gpuar-vm: modules loaded'
tail_ok='gpuar-vm: rmmod gpuar ok
gpuar-vm: dmesg-begin
[    1.000000] gpuar: loaded
gpuar-vm: dmesg-end
gpuar-vm: done'
two_pass='gpuar-vm: test-begin a_test
TAP version 13
1..2
# WARNING: a test may print this; only kernel lines are judged
ok 1 global.one
ok 2 global.two
gpuar-vm: test-end a_test rc=0'

expect "clean run passes" 0 "vm k: 2 passed, 0 failed" <<<"$head_ok
$two_pass
$tail_ok"

expect "a failed test fails the run" 1 "vm k: 1 passed, 1 failed" <<<"$head_ok
gpuar-vm: test-begin a_test
TAP version 13
1..2
ok 1 global.one
not ok 2 global.two
gpuar-vm: test-end a_test rc=1
$tail_ok"

expect "a binary that dies mid-plan counts its missing tests" 1 "vm k: 1 passed, 2 failed" <<<"$head_ok
gpuar-vm: test-begin a_test
TAP version 13
1..3
ok 1 global.one
gpuar-vm: test-end a_test rc=137
$tail_ok"

expect "a binary without a plan fails" 1 "vm k: 0 passed, 1 failed" <<<"$head_ok
gpuar-vm: test-begin a_test
Segmentation fault
gpuar-vm: test-end a_test rc=139
$tail_ok"

expect "a kernel WARNING fails a passing run" 1 "vm k: 2 passed, 1 failed" <<<"$head_ok
$two_pass
[    2.000000] WARNING: CPU: 0 PID: 1 at kmod/port.c:10 port_release+0x1/0x2 [gpuar]
$tail_ok"

expect "a kernel line after firmware escapes is still judged" 1 "vm k: 2 passed, 1 failed" <<<"$(printf '\033[2J[    0.100000] BUG: KASAN: use-after-free in x\n')
$head_ok
$two_pass
$tail_ok"

for report in "BUG: KASAN: slab-out-of-bounds in f" "UBSAN: shift-out-of-bounds in x.c:1:2" \
	"WARNING: possible circular locking dependency detected" \
	"BUG: sleeping function called from invalid context at m.c:1" \
	"refcount_t: underflow; use-after-free." "general protection fault, probably for non-canonical address" \
	"kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)" \
	"watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [submit_test:96]" \
	"INFO: task cancel_test:101 blocked for more than 30 seconds." \
	"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" \
	"rcu: INFO: rcu_preempt self-detected stall on CPU"; do
	expect "kernel report: $report" 1 "vm k: 2 passed, 1 failed" <<<"$head_ok
$two_pass
[    3.000000] $report
$tail_ok"
done

expect "a kmemleak report fails" 1 "vm k: 2 passed, 1 failed" <<<"$head_ok
$two_pass
gpuar-vm: kmemleak-begin
unreferenced object 0xffff888003a1c000 (size 192):
  comm \"insmod\", pid 34, jiffies 4294893400 (age 30.100s)
gpuar-vm: kmemleak-end
$tail_ok"

expect "an empty kmemleak report passes" 0 "vm k: 2 passed, 0 failed" <<<"$head_ok
$two_pass
gpuar-vm: kmemleak-begin
gpuar-vm: kmemleak-end
$tail_ok"

expect "a failed rmmod fails" 1 "vm k: 2 passed, 1 failed" <<<"$head_ok
$two_pass
gpuar-vm: FAIL rmmod gpuar
$tail_ok"

expect "a module that does not load fails" 1 "vm k: 0 passed, 1 failed" <<<"gpuar-vm: kernel 6.1 name=k
gpuar-vm: FAIL insmod /lib/modules/gpuar.ko
gpuar-vm: tests not run: a module failed to load
$tail_ok"

expect "a guest that never finishes fails" 1 "vm k: 2 passed, 1 failed" <<<"$head_ok
$two_pass"

# A boot that dies before any test: status 3, which vm-check retries once.
expect "a guest that dies at boot is told apart (3)" 3 "vm k: 0 passed, 1 failed" <<<"gpuar-vm: kernel 7.x name=k
[    3.100000] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[    3.100100] RIP: 0010:sched_clock_cpu+0x5/0x1a0
[    3.100200] Kernel panic - not syncing: Fatal exception in interrupt"

expect "a boot killed by the timeout before any test is told apart (3)" 3 "vm k: 0 passed, 1 failed" 124 <<<"gpuar-vm: kernel 7.x name=k"

expect "a panic after a test began stays a failure (1)" 1 "vm k: 0 passed, 2 failed" <<<"$head_ok
gpuar-vm: test-begin a_test uptime=4.27
TAP version 13
1..2
[    5.000000] Kernel panic - not syncing: Fatal exception"

expect "a module that fails to load and a clean end is no boot death (1)" 1 "vm k: 0 passed, 1 failed" <<<"gpuar-vm: kernel 6.1 name=k
[    2.000000] Oops: general protection fault
gpuar-vm: FAIL insmod /lib/modules/gpuar.ko
gpuar-vm: tests not run: a module failed to load
$tail_ok"

expect "a timeout fails" 1 "vm k: 2 passed, 1 failed" 124 <<<"$head_ok
$two_pass
$tail_ok"

expect "skipped tests count as passed" 0 "vm k: 2 passed, 0 failed" <<<"$head_ok
gpuar-vm: test-begin a_test
TAP version 13
1..2
ok 1 global.one
ok 2 global.two # SKIP no virtio-gpu
gpuar-vm: test-end a_test rc=0
$tail_ok"

expect "kernel lines inside a test's output stay out of its TAP" 0 "vm k: 2 passed, 0 failed" <<<"$head_ok
gpuar-vm: test-begin a_test
TAP version 13
1..2
[    4.000000] ok 7 not a test result
ok 1 global.one
ok 2 global.two
gpuar-vm: test-end a_test rc=0
$tail_ok"

expect "markers carry the guest uptime (init's format)" 0 "vm k: 2 passed, 0 failed" <<<"$head_ok
gpuar-vm: test-begin a_test uptime=4.27
TAP version 13
1..2
ok 1 global.one
ok 2 global.two
gpuar-vm: test-end a_test rc=0 uptime=5.50
$tail_ok"

# A library suite (selftests/unit/unit_tap.h): Check's results, then skips.
expect "a Check suite's TAP with skips passes" 0 "vm k: 3 passed, 0 failed" <<<"$head_ok
gpuar-vm: test-begin lib_port_test uptime=1.00
TAP version 13
1..3
ok 1 - selftests/unit/test_lib_port.c:port:a: Passed
ok 2 - selftests/unit/test_lib_port.c:port:b: Passed
ok 3 - line_limit_gives_enospc # SKIP the module's limit is its module parameter
gpuar-vm: test-end lib_port_test rc=0 uptime=2.00
$tail_ok"

expect "a Check suite's failure fails the run" 1 "vm k: 1 passed, 1 failed" <<<"$head_ok
gpuar-vm: test-begin lib_port_test uptime=1.00
TAP version 13
1..2
ok 1 - selftests/unit/test_lib_port.c:port:a: Passed
not ok 2 - selftests/unit/test_lib_port.c:port:b: Test timeout expired
gpuar-vm: test-end lib_port_test rc=1 uptime=2.00
$tail_ok"

echo "vm-report: $((n - failed)) passed, $failed failed"
((failed == 0))
