#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# assemble.sh BUNDLE LIBGPUAR VERSION NVCC CUDA_ARCH PTX: finish the bundle
# whose programs make gpu-bundle linked: the run script, libgpuar.so
# (LIBGPUAR: the library by its soname), every other library the programs
# load but glibc's (copied into lib/, where their RPATH $ORIGIN/../lib
# finds them), the bench's PTX, and MANIFEST (what was built, with what,
# and the newest glibc symbol version the programs need, which run
# compares with the machine's). Fails when the bundle reaches 64 MiB, the
# most the device tool carries.
# shellcheck disable=SC1091 # /etc/os-release is this machine's
set -euo pipefail

bundle=$1 libgpuar=$2 version=$3 nvcc=$4 arch=$5 ptx=$6
here=$(cd "$(dirname "$0")" && pwd)
limit_kib=$((64 * 1024))

install -m 0755 "$here/run" "$bundle/run"
mkdir -p "$bundle/lib" "$bundle/share"
# The soname alone, as a file: links need not survive the trip.
rm -f "$bundle"/lib/libgpuar.so*
cp -L "$libgpuar" "$bundle/lib/"
install -m 0644 "$ptx" "$bundle/share/"

mapfile -t programs < <(find "$bundle/bin" "$bundle/tests" -type f -perm -u+x | sort)
# glibc's own libraries stay the machine's; the loader resolves them.
glibc='/(libc|libm|libdl|libpthread|librt|libresolv)\.so|/ld-linux'
for lib in $(ldd "${programs[@]}" "$bundle"/lib/libgpuar.so* 2>/dev/null |
	awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | grep -Ev "$glibc" | sort -u); do
	[ -e "$bundle/lib/$(basename "$lib")" ] || cp -L "$lib" "$bundle/lib/"
done

glibc_needed=$(objdump -T "${programs[@]}" "$bundle"/lib/*.so* 2>/dev/null |
	grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
{
	echo "gpuar $version GPU bundle (make gpu-bundle)"
	echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm)," \
		"$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
	echo "commit: $(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "version=$version"
	echo "glibc_needed=${glibc_needed:-unknown}"
	if [ -n "$nvcc" ]; then
		echo "cuda_programs: nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $arch, runtime static"
	else
		echo "cuda_programs: not built (no nvcc where the bundle was made)"
	fi
	echo "files:"
	(cd "$bundle" && find . -type f ! -name MANIFEST | sort | xargs du -k |
		awk '{ printf "  %6d KiB  %s\n", $1, $2 }')
} >"$bundle/MANIFEST"

size_kib=$(du -sk "$bundle" | cut -f1)
if [ "$size_kib" -ge "$limit_kib" ]; then
	echo "gpu-bundle: $bundle is $size_kib KiB, over the 64 MiB the device tool carries" >&2
	exit 1
fi
echo "gpu-bundle: $bundle ($((size_kib / 1024)).$(((size_kib % 1024) * 10 / 1024)) MiB," \
	"glibc >= ${glibc_needed:-?}); run it there as: $bundle/run OUTDIR"
