#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Fetch one distribution kernel of the matrix into $GPUAR_CACHE/kernels/NAME:
# its image and modules (and, for 6.1 and 6.12, its headers), resolved from
# the package lists at run time and unpacked with dpkg-deb -x; nothing is
# installed. Writes kernels/NAME/kernel.env (KVER, VMLINUZ, MODDIR, KDIR)
# and prints its path. Reuses a previous fetch of the same version.
#
#   tools/vm/fetch-kernel.sh <6.1|6.12|7.x>
#
#   6.1   bookworm, through the machine's own apt
#   6.12  bookworm-backports (private apt list)
#   7.x   trixie-backports (private apt list); its headers need gcc-14 and
#         are installed in the trixie chroot instead (tools/vm/trixie-chroot.sh)
set -euo pipefail
. "$(dirname "$0")/common.sh"
. "$VM_DIR/apt.sh"

name=${1:?usage: fetch-kernel.sh <6.1|6.12|7.x>}
case $name in
6.1) suite=system headers=1 ;;
6.12) suite=bookworm-backports headers=1 ;;
7.x) suite=trixie-backports headers=0 ;;
*) vm_die "unknown distribution kernel '$name'" ;;
esac

dir=$KERNELS_DIR/$name
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9

[[ $suite == system ]] || vm_apt_init "$suite"
image_pkg=$(vm_apt_depends "$suite" linux-image-amd64 '^linux-image-[0-9]' | head -1)
# A fresh machine whose packages were all present never ran apt-get
# update (make deps skips it then): its lists may be empty.
if [[ -z $image_pkg && $suite == system ]]; then
	vm_log "the machine's apt lists know no linux-image-amd64: apt-get update"
	apt-get -q update >&2 || vm_die "apt-get update failed"
	image_pkg=$(vm_apt_depends "$suite" linux-image-amd64 '^linux-image-[0-9]' | head -1)
fi
[[ -n $image_pkg ]] || vm_die "linux-image-amd64 in $suite depends on no kernel image"
kver=${image_pkg#linux-image-}

if [[ -f $dir/kernel.env ]] && grep -qx "KVER=$kver" "$dir/kernel.env"; then
	echo "$dir/kernel.env"
	exit 0
fi
vm_log "fetching $image_pkg from $suite"
rm -rf "$dir/image" "$dir/headers" "$dir/kernel.env"

# From 7.x Debian splits the image into -binary, -modules and -base parts.
mapfile -t image_parts < <(vm_apt_depends "$suite" "$image_pkg" '^linux-(binary|modules|base)-[0-9]')
vm_apt_fetch "$suite" "$dir/image" "$image_pkg" "${image_parts[@]}"
# trixie is merged-/usr: modules live in usr/lib/modules. Give both
# layouts one path so depmod -b and the initramfs builder need not care.
if [[ ! -e $dir/image/lib && -d $dir/image/usr/lib ]]; then
	ln -s usr/lib "$dir/image/lib"
fi
moddir=$dir/image/lib/modules/$kver
vmlinuz=$dir/image/boot/vmlinuz-$kver
# 7.x keeps the image next to its modules instead of in /boot.
[[ -f $vmlinuz ]] || vmlinuz=$moddir/vmlinuz
[[ -d $moddir && -f $vmlinuz ]] || vm_die "$image_pkg has no modules or vmlinuz"
# The package ships no modules.dep (postinst generates it): make one.
depmod -b "$dir/image" "$kver"
[[ -s $moddir/modules.dep ]] || vm_die "depmod produced no modules.dep for $kver"

kdir=
if ((headers)); then
	hdr_pkg=linux-headers-$kver
	mapfile -t hdr_deps < <(vm_apt_depends "$suite" "$hdr_pkg" '^linux-(headers|kbuild)-')
	vm_apt_fetch "$suite" "$dir/headers" "$hdr_pkg" "${hdr_deps[@]}"
	# Debian's headers find their -common half and linux-kbuild through
	# absolute /usr/src and ../../lib paths; point them into this root.
	[[ -e $dir/headers/lib ]] || ln -s usr/lib "$dir/headers/lib"
	kdir=$dir/headers/usr/src/linux-headers-$kver
	sed -i -E "s#^include /usr/src/#include $dir/headers/usr/src/#" "$kdir/Makefile"
	[[ -f $kdir/Module.symvers && -x $kdir/scripts/basic/fixdep ]] ||
		vm_die "headers for $kver incomplete in $kdir"
fi

cat >"$dir/kernel.env.tmp" <<EOT
KVER=$kver
VMLINUZ=$vmlinuz
MODDIR=$moddir
KDIR=$kdir
EOT
mv "$dir/kernel.env.tmp" "$dir/kernel.env"
echo "$dir/kernel.env"
