#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# make check-packages: the Debian packages (make deb, build/deb/*.deb) on a
# clean bookworm node. In a `debootstrap --variant=minbase bookworm`
# chroot cached under $GPUAR_CACHE/chroot-bookworm-packages, with the 6.1
# kernel headers (linux-headers-amd64) and what the packages depend on:
#
#   1. install the four packages: DKMS must build and install gpuar.ko
#      for the chroot's 6.1 kernel (the host's kernel is not the chroot's,
#      so DKMS builds for the kernels it finds in /lib/modules);
#   2. the README's quick start, compiled with `pkg-config gpuar` against
#      the installed libgpuar-dev and run: no module loads in a chroot, so
#      it must say so with the coded fallback warning and run on the user
#      engine;
#   3. purge the packages: the chroot's file list must equal the one
#      before the install (except depmod's indexes, which no package owns
#      and which depmod rewrites for the kernel whatever is installed).
#
# The archive's URI comes from the machine's own apt sources
# (tools/vm/apt.sh; VM_APT_URI overrides). Needs root (debootstrap,
# chroot). A run purges whatever gpuar packages an interrupted run left.
set -euo pipefail
. "$(dirname "$0")/vm/common.sh"
. "$VM_DIR/apt.sh"

root=$GPUAR_CACHE/chroot-bookworm-packages
debdir=${1:?usage: check-packages.sh DEBDIR}
debdir=$(cd "$debdir" && pwd)
log=$REPO_ROOT/${BUILD:-build}/check-packages.log
mkdir -p "$(dirname "$log")"
: >"$log"

fail() {
	echo "not ok - check-packages: $*"
	echo "# log: $log"
	exit 1
}

((EUID == 0)) || fail "needs root (debootstrap, chroot)"
# The five packages, not their -dbgsym companions.
debs=()
for d in "$debdir"/*.deb; do
	[[ -e $d && $d != *-dbgsym_* ]] && debs+=("$d")
done
((${#debs[@]})) || fail "no packages in $debdir (make deb)"
mkdir -p "$GPUAR_CACHE"
exec 9>"$GPUAR_CACHE/.chroot-bookworm-packages.lock"
flock 9

# A private mount namespace: /proc and a minimal /dev (not the host's,
# which could hold a /dev/gpuar of its own) go away when the command ends.
in_chroot() {
	unshare --mount --fork -- sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc"
		mount -t tmpfs -o mode=755 dev "$root/dev"
		for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
			IFS=: read -r name ma mi <<-END
			$n
			END
			mknod -m 666 "$root/dev/$name" c "$ma" "$mi"
		done
		ln -s /proc/self/fd "$root/dev/fd"
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' sh "$root" "$@"
}

uri=$(vm_archive_uri)
if [[ ! -f $root/.debootstrap-done ]]; then
	bootstrap() {
		rm -rf "$root.tmp"
		debootstrap --variant=minbase bookworm "$root.tmp" "$uri" >>"$log" 2>&1 ||
			{ tail -20 "$log" >&2; return 1; }
		rm -rf "$root"
		mv "$root.tmp" "$root"
		touch "$root/.debootstrap-done"
	}
	vm_step packages-debootstrap bootstrap || fail "debootstrap of bookworm failed"
fi
printf 'deb %s bookworm main\n' "$uri" >"$root/etc/apt/sources.list"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# Leftovers of an interrupted run.
pkgs=()
for d in "${debs[@]}"; do
	pkgs+=("$(dpkg-deb -f "$d" Package)")
done
in_chroot dpkg --purge "${pkgs[@]}" >>"$log" 2>&1 || true

# What a node has before the packages: the 6.1 headers, a compiler and
# pkg-config for the quick start, and every dependency the packages name
# (so that the purge below is compared against a state that has them).
mapfile -t deps < <(for d in "${debs[@]}"; do dpkg-deb -f "$d" Depends; done |
	tr ',' '\n' | sed -E 's/\|.*//; s/\(.*//; s/^ +//; s/ +$//' |
	grep -v '^$' | grep -vxF -f <(printf '%s\n' "${pkgs[@]}") | sort -u)
want=(linux-headers-amd64 build-essential pkg-config "${deps[@]}")
have=$(in_chroot dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${want[@]}" 2>/dev/null |
	grep -c '^ii' || true)
if [[ $have != "${#want[@]}" ]]; then
	install_deps() {
		in_chroot apt-get -q update &&
			in_chroot apt-get -q -y --no-install-recommends install "${want[@]}"
	} >>"$log" 2>&1
	vm_step packages-install-deps install_deps || fail "installing ${want[*]} in the chroot failed"
fi
kver=$(in_chroot dpkg-query -W -f='${Depends}' linux-headers-amd64 | sed -E 's/^linux-headers-([^ ,]+).*/\1/')
[[ -n $kver && -d $root/usr/src/linux-headers-$kver ]] || fail "no 6.1 kernel headers in the chroot"

# The chroot's files (path, type, mode) outside what every apt or dpkg run
# changes anyway.
snapshot() {
	(cd "$root" && find . -xdev \
		\( -path ./proc -o -path ./dev -o -path ./tmp -o -path ./run \
		-o -path ./var/cache -o -path ./var/lib/apt -o -path ./var/lib/dpkg \
		-o -path ./var/log -o -path ./root \) -prune -o \
		-printf '%p %y %m\n' | grep -vE "^\./(usr/)?lib/modules/[^/]+/modules\.[a-z.]+ " | sort)
}
snapshot >"$GPUAR_CACHE/packages-before.txt"

rm -rf "$root/tmp/gpuar-debs" && mkdir -p "$root/tmp/gpuar-debs"
cp "${debs[@]}" "$root/tmp/gpuar-debs/"
install_pkgs() {
	in_chroot sh -c 'apt-get -q -y --no-install-recommends install /tmp/gpuar-debs/*.deb' >>"$log" 2>&1
}
vm_step packages-install install_pkgs || fail "installing the packages failed"

ko=$root/lib/modules/$kver/updates/dkms/gpuar.ko
[[ -f $ko ]] || fail "DKMS did not install gpuar.ko for $kver"
modver=$(modinfo -F version "$ko")
want_ver=$(dpkg-deb -f "$debdir"/gpuar-dkms_*.deb Version)
[[ $modver == "$want_ver" ]] || fail "gpuar.ko is version '$modver', the package $want_ver"
vermagic=$(modinfo -F vermagic "$ko")
[[ $vermagic == "$kver "* ]] || fail "gpuar.ko was built for '$vermagic', not $kver"
echo "ok - check-packages: DKMS built gpuar.ko $modver for $kver"
[[ -f $root/lib/udev/rules.d/60-gpuar.rules || -f $root/usr/lib/udev/rules.d/60-gpuar.rules ]] ||
	fail "no udev rule 60-gpuar.rules"

# The quick start: README's first c block, as check-quickstart takes it.
awk '/^```c$/ { on = 1; next } on && /^```$/ { exit } on' "$REPO_ROOT/README.md" \
	>"$root/tmp/quickstart.c"
quickstart() {
	in_chroot sh -c 'cd /tmp && cc quickstart.c $(pkg-config --cflags --libs gpuar) -o quickstart &&
		./quickstart' >"$GPUAR_CACHE/packages-quickstart.out" 2>&1
}
vm_step packages-quickstart quickstart ||
	{ cat "$GPUAR_CACHE/packages-quickstart.out"; fail "the quick start did not build or run"; }
out=$GPUAR_CACHE/packages-quickstart.out
if ! grep -q "engine-fallback\[11\].*using 'user' instead" "$out" ||
	! grep -q 'record: user_data=42 status=0 value=1' "$out"; then
	cat "$out"
	fail "the quick start's output is not the user engine's record after the fallback warning"
fi
echo "ok - check-packages: the README quick start builds with pkg-config gpuar and runs on the user engine"
rm -f "$root"/tmp/quickstart*

for m in gpuar_port_open.3 gpuar.7 gpuar.4 gpuar-stat.1; do
	[[ -n $(find "$root/usr/share/man" -name "$m*" -print -quit) ]] || fail "manual page $m not installed"
done
in_chroot gpuar-stat --help >/dev/null || fail "gpuar-stat --help failed"

# The Python binding: imported by Debian's python3, on the packaged
# libgpuar.so.0, a port opened (the user engine: no module here). -B: no
# bytecode written into the package's directory, which the purge below
# would leave behind (no postinst compiles it).
pycheck() {
	in_chroot python3 -B -c 'import gpuar
print(gpuar.__version__, gpuar.library_path)
print(gpuar.Plan("poll"))
with gpuar.Port() as port:
    print(port.engine)' >"$GPUAR_CACHE/packages-python.out" 2>&1
}
vm_step packages-python pycheck ||
	{ cat "$GPUAR_CACHE/packages-python.out"; fail "python3-gpuar did not import or open a port"; }
if ! grep -qE '^[0-9.]+ /usr/lib/[^ ]+/libgpuar\.so\.0' "$GPUAR_CACHE/packages-python.out"; then
	cat "$GPUAR_CACHE/packages-python.out"
	fail "python3-gpuar did not load the packaged libgpuar.so.0"
fi
echo "ok - check-packages: python3-gpuar imports with Debian's python3 on the packaged libgpuar and opens a port"

purge() {
	in_chroot dpkg --purge "${pkgs[@]}" >>"$log" 2>&1
}
vm_step packages-purge purge || fail "purging the packages failed"
rm -rf "$root/tmp/gpuar-debs"
snapshot >"$GPUAR_CACHE/packages-after.txt"
if ! diff -u "$GPUAR_CACHE/packages-before.txt" "$GPUAR_CACHE/packages-after.txt" >"$GPUAR_CACHE/packages-diff.txt"; then
	cat "$GPUAR_CACHE/packages-diff.txt"
	fail "the purge left the chroot different (above)"
fi
echo "ok - check-packages: purging ${pkgs[*]} leaves nothing behind"
