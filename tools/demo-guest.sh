#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs inside the test VM (busybox sh) as one "test" of the VM runner:
# unpacks the static gpuar-bench and gpuar-stat appended to this script,
# runs the benchmark and an estimator exercise, and prints their outputs
# between "gpuar-demo: NAME-begin/-end" lines for tools/demo.sh to
# extract from the serial console. TAP so the runner judges it.
echo "1..2"
dir=/tmp/gpuar-demo
mkdir -p "$dir"
sed -n '/^__PAYLOAD__$/,$p' "$0" | tail -n +2 | base64 -d | tar -C "$dir" -xzf - ||
	{ echo "not ok 1 unpack"; exit 1; }

show() {
	echo "gpuar-demo: $1-begin"
	cat "$2"
	echo "gpuar-demo: $1-end"
}

rc=0
"$dir/gpuar-bench" --json "$dir/bench.json" --plot-script "$dir/bench.gp" \
	@DEMO_ARGS@ >"$dir/table.txt" 2>"$dir/stderr.txt" || rc=$?
show table "$dir/table.txt"
show json "$dir/bench.json"
show plot "$dir/bench.gp"
show stderr "$dir/stderr.txt"
if [ "$rc" = 0 ]; then echo "ok 1 gpuar-bench"; else echo "not ok 1 gpuar-bench rc=$rc"; fi

# gpuar-stat on a live port: an exercise of its own in the background,
# read meanwhile through debugfs (every port, with points) and fdinfo,
# then its final state through the statistics ioctls.
rc=0
"$dir/gpuar-stat" --exercise 1500 --work-us 1000 >"$dir/stat-ioctl.txt" 2>&1 &
pid=$!
sleep 1
{
	echo "-- while running, from debugfs:"
	"$dir/gpuar-stat" --source debugfs 2>&1 || rc=$?
	echo "-- while running, from fdinfo:"
	"$dir/gpuar-stat" --source fdinfo 2>&1 || rc=$?
} >"$dir/stat.txt"
wait "$pid" || rc=$?
echo "-- at the end, from the statistics ioctls:" >>"$dir/stat.txt"
cat "$dir/stat-ioctl.txt" >>"$dir/stat.txt"
show stat "$dir/stat.txt"
if [ "$rc" = 0 ]; then echo "ok 2 gpuar-stat"; else echo "not ok 2 gpuar-stat rc=$rc"; fi
exit 0
