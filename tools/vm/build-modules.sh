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

build_one() {
	local dir=$1 ko=$2
	"${run[@]}" make -C "$src/$dir" KDIR="$kdir" -j"$VM_JOBS" >"$outdir/$ko.log" 2>&1 || {
		tail -30 "$outdir/$ko.log" >&2
		vm_die "building $ko against $kdir failed (log: $outdir/$ko.log)"
	}
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
