#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The build environment for the 7.x kernel: Debian trixie-backports builds
# its kernel with gcc-14, which bookworm lacks, so out-of-tree modules for
# it are built in a `debootstrap --variant=minbase trixie` chroot under
# $GPUAR_CACHE/chroot-trixie holding gcc-14, make, sparse (the module's
# lint runs with every build) and that kernel's headers.
# Idempotent; prints the chroot's path.
#
#   tools/vm/trixie-chroot.sh KVER            prepare (headers for KVER)
#   tools/vm/trixie-chroot.sh --run CMD...    run CMD inside the chroot
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$VM_DIR/apt.sh"

root=$GPUAR_CACHE/chroot-trixie

# Run in a private mount namespace so /proc is unmounted when it ends.
in_chroot() {
	unshare --mount --fork -- sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		mount --make-rslave "$root/dev"
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "$@"
}

if [[ ${1:-} == --run ]]; then
	shift
	[[ -f $root/.gpuar-ready ]] || vm_die "chroot not prepared: $root"
	in_chroot "$@"
	exit
fi

kver=${1:?usage: trixie-chroot.sh KVER | --run CMD...}
((EUID == 0)) || vm_die "building the trixie chroot needs root (debootstrap, chroot)"
mkdir -p "$GPUAR_CACHE"
exec 9>"$GPUAR_CACHE/.chroot-trixie.lock"
flock 9

uri=$(vm_archive_uri)
if [[ ! -f $root/.debootstrap-done ]]; then
	bootstrap() {
		rm -rf "$root.tmp"
		debootstrap --variant=minbase trixie "$root.tmp" "$uri" >"$GPUAR_CACHE/chroot-trixie.log" 2>&1 ||
			{ tail -20 "$GPUAR_CACHE/chroot-trixie.log" >&2; return 1; }
		rm -rf "$root"
		mv "$root.tmp" "$root"
		touch "$root/.debootstrap-done"
	}
	vm_step chroot-debootstrap bootstrap || vm_die "debootstrap of trixie failed"
fi

printf 'deb %s trixie main\ndeb %s trixie-backports main\n' "$uri" "$uri" \
	>"$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

installed() {
	in_chroot dpkg-query -W -f='${db:Status-Abbrev}\n' "$@" 2>/dev/null | grep -c '^ii'
}
if [[ $(installed "linux-headers-$kver" sparse) != 2 ]]; then
	install_headers() {
		in_chroot apt-get -q update &&
			in_chroot apt-get -q -y --no-install-recommends install \
				gcc-14 make sparse "linux-headers-$kver"
	} >>"$GPUAR_CACHE/chroot-trixie.log" 2>&1
	rm -f "$root/.gpuar-ready"
	vm_step chroot-install-headers install_headers ||
		{ tail -20 "$GPUAR_CACHE/chroot-trixie.log" >&2; vm_die "installing headers $kver in the chroot failed"; }
	# A newer kernel replaced the old one: drop the old headers.
	in_chroot sh -c "dpkg-query -W -f='\${Package}\n' 'linux-headers-*-amd64' |
		grep -vx 'linux-headers-$kver' | xargs -r apt-get -y -q purge" \
		>>"$GPUAR_CACHE/chroot-trixie.log" 2>&1 || true
fi
touch "$root/.gpuar-ready"
echo "$root"
