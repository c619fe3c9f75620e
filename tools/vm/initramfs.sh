#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build the test VM's initramfs: busybox-static, tools/vm/init, the
# kernel's own modules the tests need (dependencies resolved from the
# kernel's modules.dep, decompressed for busybox insmod), our modules and
# the static test binaries in /tests.
#
#   initramfs.sh OUT.cpio.gz NAME MODDIR "WANTED..." "OWN_KO..." TESTS_DIR [EXTRA_ROOT]
#
# TESTS_DIR may name several directories, separated by ':'. EXTRA_ROOT, if
# given, is copied over the initramfs root (the library suites' binaries,
# doubles and shared libraries, tools/vm/lib-tests.sh).
# MODDIR is the kernel's /lib/modules/<ver> ("" when everything needed is
# built in, as in the debug kernel). WANTED names modules of that kernel
# (drm, vgem, ...); OWN_KO are paths of our .ko files, loaded last and
# required to unload. VM_TEST_TIMEOUT (s) bounds each test binary;
# VM_SUITES lists the test binaries to include (default: all of TESTS_DIR);
# VM_KMEMLEAK=1 makes the guest scan for leaks after the suites.
# VM_KFUZZ_SECONDS runs the fuzzer (kfuzz_test) that long instead of its
# default 100000 calls; VM_SOAK_COMPLETIONS is the soak's target.
set -euo pipefail
. "$(dirname "$0")/common.sh"

out=$1 name=$2 moddir=$3 wanted=$4 own=$5 tests=$6 extra=${7:-}
busybox=${BUSYBOX:-/bin/busybox}
[[ -x $busybox ]] || vm_die "$busybox missing (apt-get install busybox-static)"
# A dynamic busybox would find no libc in the guest.
! readelf -l "$busybox" | grep -q 'INTERP' || vm_die "$busybox is not static"

stage=$(mktemp -d "${TMPDIR:-/tmp}/gpuar-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
# mktemp makes it 0700, and it becomes the guest's /: a test that drops to
# nobody must still reach /sys and /dev through it.
chmod 755 "$stage"
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,tests,lib/modules}
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[[ -e $stage/bin/$applet ]] || ln -s busybox "$stage/bin/$applet"
done
install -m 0755 "$VM_DIR/init" "$stage/init"

norm() {
	local b=${1##*/}
	b=${b%.xz}
	b=${b%.zst}
	b=${b%.gz}
	b=${b%.ko}
	echo "${b//-/_}"
}

# Load order: for each wanted module, its modules.dep dependencies (listed
# nearest first, so reversed) and then the module itself, each once.
declare -A seen=()
order=()
add_path() {
	local rel=$1 key
	key=$(norm "$rel")
	[[ -z ${seen[$key]:-} ]] || return 0
	seen[$key]=1
	order+=("$rel")
}
if [[ -n $wanted ]]; then
	[[ -s $moddir/modules.dep ]] || vm_die "no modules.dep in '$moddir'"
	for w in $wanted; do
		key=$(norm "$w")
		line=$(awk -F: -v k="$key" '{
			b = $1; sub(/.*\//, "", b); sub(/\.(xz|zst|gz)$/, "", b)
			sub(/\.ko$/, "", b); gsub(/-/, "_", b)
			if (b == k) { print; exit }
		}' "$moddir/modules.dep")
		if [[ -z $line ]]; then
			if grep -qE "/${w//_/[-_]}\.ko$" "$moddir/modules.builtin" 2>/dev/null; then
				continue
			fi
			vm_die "module $w is neither in modules.dep nor built into $name"
		fi
		read -r -a deps <<<"${line#*:}"
		for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
			add_path "${deps[i]}"
		done
		add_path "${line%%:*}"
	done
fi

load=()
for rel in "${order[@]}"; do
	dst=$stage/lib/modules/$(norm "$rel").ko
	case $rel in
	*.ko.xz) xz -dc "$moddir/$rel" >"$dst" ;;
	*.ko.zst) zstd -qdc "$moddir/$rel" >"$dst" ;;
	*.ko.gz) gzip -dc "$moddir/$rel" >"$dst" ;;
	*) cp "$moddir/$rel" "$dst" ;;
	esac
	load+=("/lib/modules/${dst##*/}")
done
own_names=()
for ko in $own; do
	cp "$ko" "$stage/lib/modules/"
	load+=("/lib/modules/${ko##*/}")
	own_names+=("$(norm "$ko")")
done

# VM_SUITES (names of test binaries) narrows the run to a subset.
IFS=: read -r -a test_dirs <<<"$tests"
for dir in "${test_dirs[@]}"; do
	[[ -n $dir && -d $dir ]] || continue
	for t in "$dir"/*; do
		[[ -f $t && -x $t ]] || continue
		if [[ -n ${VM_SUITES:-} && " $VM_SUITES " != *" ${t##*/} "* ]]; then
			continue
		fi
		cp "$t" "$stage/tests/"
	done
done
if [[ -n $extra ]]; then
	[[ -d $extra ]] || vm_die "no directory $extra"
	cp -r "$extra/." "$stage/"
fi

cat >"$stage/vm.conf" <<EOT
VM_KERNEL='$name'
VM_MODULES='${load[*]}'
VM_OWN_MODULES='${own_names[*]}'
VM_TEST_TIMEOUT='${VM_TEST_TIMEOUT:-600}'
VM_KMEMLEAK='${VM_KMEMLEAK:-}'
VM_KFUZZ_SECONDS='${VM_KFUZZ_SECONDS:-}'
VM_SOAK_COMPLETIONS='${VM_SOAK_COMPLETIONS:-}'
VM_KMOD_WITHOUT='${VM_KMOD_WITHOUT:-}'
EOT

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
vm_log "initramfs $out: ${#load[@]} modules, $(ls "$stage/tests" | wc -l) tests, $(du -h "$out" | cut -f1)"
