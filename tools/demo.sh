#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make demo: install what is needed, build, and run gpuar-bench with every
# wait strategy on the default workload (1 ms of work; 2000 waits x 5
# repetitions) — on this machine when the gpuar module is loaded
# (/dev/gpuar), else inside a QEMU VM booting Debian's 6.1 kernel with the
# module and vgem loaded (tools/vm/), where emulation runs each wait 2-3x
# slower, so 1000 waits x 5 repetitions keep the whole demo within about
# five minutes on two cores. Writes build/demo/bench.json and
# build/demo/bench.png and prints the table last.
#
# Knobs (environment): DEMO_WHERE=auto|host|vm, DEMO_ARGS (extra
# gpuar-bench options, e.g. "--waits 500"), DEMO_KERNEL (VM kernel, 6.1),
# DEMO_SKIP_DEPS=1 (skip `make deps`), BUILD, MAKE.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
where=${DEMO_WHERE:-auto}
kernel=${DEMO_KERNEL:-6.1}
out=$BUILD/demo
read -r -a extra <<<"${DEMO_ARGS:-}"
vm_default_args="--waits 1000"

say() { echo "demo: $*" >&2; }
die() { echo "demo: error: $*" >&2; exit 1; }

case $where in
auto) if [[ -e /dev/gpuar ]]; then where=host; else where=vm; fi ;;
host | vm) ;;
*) die "DEMO_WHERE must be auto, host or vm (not '$where')" ;;
esac

if [[ -z ${DEMO_SKIP_DEPS:-} ]]; then
	say "installing dependencies (make deps)"
	"$MAKE" -s deps >&2
fi

mkdir -p "$out"
rm -f "$out/bench.json" "$out/bench.png" "$out/table.txt" "$out/bench.gp"

if [[ $where == host ]]; then
	say "building the tools"
	"$MAKE" -s -j2 tools >&2
	[[ -e /dev/gpuar ]] || say "no /dev/gpuar here: the kernel strategies will be listed as skipped"
	say "running gpuar-bench on this machine ($(uname -r)); this takes a few minutes"
	rc=0
	"$BUILD/tools/gpuar-bench" --json "$out/bench.json" --plot "$out/bench.png" \
		"${extra[@]}" >"$out/table.txt" || rc=$?
	cat "$out/table.txt"
	say "wrote $out/bench.json and $out/bench.png"
	exit "$rc"
fi

# ---- inside the VM
say "building the tools (static, for the VM's busybox initramfs)"
"$MAKE" -s -j2 tools tools-static >&2

# The VM runner runs every executable of VM_TESTS as a test and judges
# TAP; one self-extracting script carries both static tools in.
payload=$out/vm-tests
rm -rf "$payload"
mkdir -p "$payload"
stage=$(mktemp -d "${TMPDIR:-/tmp}/gpuar-demo.XXXXXX")
trap 'rm -rf "$stage"' EXIT
cp "$BUILD/tools/gpuar-bench-static" "$stage/gpuar-bench"
cp "$BUILD/tools/gpuar-stat-static" "$stage/gpuar-stat"
{
	sed "s|@DEMO_ARGS@|$vm_default_args ${extra[*]:-}|" tools/demo-guest.sh
	echo "__PAYLOAD__"
	tar -C "$stage" -czf - gpuar-bench gpuar-stat | base64
} >"$payload/gpuar-demo"
chmod 0755 "$payload/gpuar-demo"

say "booting the $kernel VM (TCG) with the module and vgem; the benchmark takes a few minutes"
vm_rc=0
# The guest kernel's clocksource watchdog distrusts the TSC under TCG and
# falls back to HPET, an emulated device whose every read is a trip out of
# the translated code that serializes the vCPUs: each clock read then
# costs microseconds (spin p50 2.7 us instead of 0.5 us, measured) and
# every strategy's timing with it. Under TCG the TSC comes from QEMU's one
# virtual clock, so it agrees across vCPUs: tell the guest to trust it, as
# a real machine's clocksource would be. The JSON records the clocksource.
VM_APPEND="tsc=reliable ${VM_APPEND:-}" \
	VM_TESTS=$(realpath "$payload") VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-1200} \
	BUILD=$BUILD tools/vm/vm-check "$kernel" >"$out/vm-check.log" 2>&1 || vm_rc=$?
log=$BUILD/vm/$kernel/console.log
[[ -s $log ]] || die "the VM left no console log (see $out/vm-check.log)"

# Lines between "gpuar-demo: NAME-begin" and "-end", without the serial
# line's CR and without kernel log lines that may interleave.
extract() {
	awk -v name="$1" '
		{ sub(/\r$/, "") }
		$0 == "gpuar-demo: " name "-end" { on = 0 }
		on && !/^\[ *[0-9]+\.[0-9]+\]/ { print }
		$0 == "gpuar-demo: " name "-begin" { on = 1 }
	' "$log"
}
extract table >"$out/table.txt"
extract json >"$out/bench.json"
extract plot >"$out/bench.gp"
extract stat >"$out/stat.txt"
extract stderr >"$out/bench.stderr"

[[ -s $out/table.txt ]] || die "no table in the VM's console (see $log and $out/vm-check.log)"
if [[ -s $out/bench.gp ]]; then
	(cd "$out" && gnuplot bench.gp) || say "gnuplot failed on $out/bench.gp"
fi
if ((vm_rc)); then
	say "the VM run reported a problem (tools/vm/vm-check exit $vm_rc):"
	grep -v '^ok ' "$BUILD/vm/$kernel/summary.txt" >&2 || true
fi
if [[ -s $out/stat.txt ]]; then
	echo "== gpuar-stat --exercise inside the VM: the estimator learning on a live port"
	cat "$out/stat.txt"
	echo
fi
say "wrote $out/bench.json and $out/bench.png (console: $log)"
echo "== gpuar-bench inside the $kernel VM (TCG: compare ratios within the run, not absolute times)"
cat "$out/table.txt"
exit "$vm_rc"
