#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Build gpuar.ko (kmod/) and, when its sources exist, the test-only
# gpuar_testfence.ko (selftests/kmod/testfence/) for one kernel of the
# matrix, into OUTDIR. The sources are copied first so builds for several
# kernels never share objects with each other or with a developer's
# in-tree `make -C kmod`.
#
#   build-modules.sh OUTDIR KDIR            build on this machine
#   build-modules.sh OUTDIR KDIR --chroot   build in the trixie chroot
#
# Every build is also the lint of that kernel: W=1 and sparse (C=1), and
# any compiler or sparse diagnostic fails it, so the module is proven
# warning-free on each kernel of the matrix, not only on the host's
# headers (VM_KMOD_LINT=0 builds plainly, for experiments).
#
# VM_KMOD_WITHOUT (names, as kmod/conftest.sh's GPUAR_CONFTEST_WITHOUT)
# builds the module as for a kernel that lacks those facilities.
#
# VM_KMOD_SRC replaces kmod/ (used to prove the runner with a throwaway
# module before the real one builds); the test-fence module, which builds
# on kmod/'s compat headers, is then skipped.
set -euo pipefail
. "$(dirname "$0")/common.sh"

outdir=$1 kdir=$2 mode=${3:-}
kmod_src=${VM_KMOD_SRC:-$REPO_ROOT/kmod}

copy_sources() {
	local dst=$1
	rm -rf "$dst"
	mkdir -p "$dst/selftests/kmod"
	cp -a "$REPO_ROOT/include" "$REPO_ROOT/core" "$dst/"
	cp -a "$kmod_src" "$dst/kmod"
	if [[ -d $REPO_ROOT/selftests/kmod/testfence ]]; then
		cp -a "$REPO_ROOT/selftests/kmod/testfence" "$dst/selftests/kmod/"
		# Its tests' shared header lives one level up.
		cp -a "$REPO_ROOT"/selftests/kmod/*.h "$dst/selftests/kmod/" 2>/dev/null || true
	fi
	# Never carry a developer's stale objects into this build.
	find "$dst" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
		-o -name Module.symvers -o -name modules.order \) -delete
}

has_kbuild() {
	[[ -f $1/Makefile || -f $1/Kbuild ]]
}

mkdir -p "$outdir"
rm -f "$outdir"/*.ko
if [[ $mode == --chroot ]]; then
	root=$GPUAR_CACHE/chroot-trixie
	src=/build/gpuar
	exec 9>"$GPUAR_CACHE/.chroot-build.lock"
	flock 9
	copy_sources "$root$src"
	run=("$VM_DIR/trixie-chroot.sh" --run)
	base=$root$src
else
	src=$outdir/src
	copy_sources "$src"
	run=()
	base=$src
fi

lint=()
forced_sparse=0
if [[ ${VM_KMOD_LINT:-1} == 1 && -z ${VM_KMOD_SRC:-} ]]; then
	lint=(W=1 C=1)
	# From 6.13 Kbuild asks scripts/checker-valid.sh whether sparse can
	# read the kernel's headers, and silently drops C=1 when it cannot.
	# Debian's 7.x headers package lacks that script, and Debian's sparse
	# (0.6.4) is older than those headers: it cannot parse two GNU
	# builtins they use. So for such a kernel sparse is forced on
	# (KBUILD_CHECKSRC on the command line) with sparse-compat.h read
	# first, which spells those builtins in terms sparse knows;
	# lint_log() proves from the CHECK lines that it ran on every file.
	kroot=$kdir
	[[ $mode == --chroot ]] && kroot=$root$kdir
	if grep -qs checker-valid.sh "$kroot/Makefile" "$kroot"/../*/Makefile; then
		cp "$VM_DIR/sparse-compat.h" "$base/sparse-compat.h"
		lint+=(KBUILD_CHECKSRC=1 "CF=-include $src/sparse-compat.h")
		forced_sparse=1
	fi
fi

# lint_log LOG KO: no W=1 or sparse diagnostic, and sparse checked every
# object the compiler built (the .mod.c and .module-common.c Kbuild generates excepted).
lint_log() {
	local log=$1 ko=$2 diag cc checked missing=()
	diag=$(grep -E '(warning|error|note):' "$log" | grep -v 'Skipping BTF' |
		{ if ((forced_sparse)); then grep -v 'is not available or not up to date'; else cat; fi } || true)
	if [[ -n $diag ]]; then
		echo "$diag" >&2
		vm_die "$ko: W=1/sparse diagnostics against $kdir (log: $log)"
	fi
	cc=$(sed -n 's/^ *CC \[M\] *\(.*\)\.o$/\1/p' "$log" | grep -v -E '(\.mod|(^|/)\.module-common)$' || true)
	checked=$(sed -n 's/^ *CHECK *\(.*\)\.c$/\1/p' "$log")
	[[ -n $cc ]] || vm_die "$ko: no compiled objects in $log"
	while read -r o; do
		grep -qxF "$o" <<<"$checked" || missing+=("$o")
	done <<<"$cc"
	((${#missing[@]} == 0)) ||
		vm_die "$ko: sparse did not check ${missing[*]} (log: $log)"
	vm_log "$ko: W=1 and sparse clean against $kdir ($(wc -l <<<"$cc") files)"
}

build_one() {
	local dir=$1 ko=$2
	"${run[@]}" make -C "$src/$dir" KDIR="$kdir" -j"$VM_JOBS" "${lint[@]}" \
		GPUAR_CONFTEST_WITHOUT="${VM_KMOD_WITHOUT:-}" \
		>"$outdir/$ko.log" 2>&1 || {
		tail -30 "$outdir/$ko.log" >&2
		vm_die "building $ko against $kdir failed (log: $outdir/$ko.log)"
	}
	((${#lint[@]} == 0)) || lint_log "$outdir/$ko.log" "$ko"
	local built
	built=$(find "$base/$dir" -name "$ko" | head -1)
	[[ -n $built ]] || vm_die "make in $dir produced no $ko"
	cp "$built" "$outdir/$ko"
}

has_kbuild "$base/kmod" || vm_die "no Makefile or Kbuild in $kmod_src"
build_one kmod gpuar.ko
if [[ -n ${VM_KMOD_SRC:-} ]]; then
	vm_log "VM_KMOD_SRC set: gpuar_testfence.ko (built on kmod/) skipped"
elif has_kbuild "$base/selftests/kmod/testfence"; then
	build_one selftests/kmod/testfence gpuar_testfence.ko
else
	vm_log "no selftests/kmod/testfence build yet: gpuar_testfence.ko skipped"
fi
ls "$outdir"/*.ko
