#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Host-side test of how the runner finds the Debian archive in the
# machine's apt sources (vm_archive_uri in apt.sh): deb822 and one-line
# forms, disabled entries, security and third-party suites skipped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$here/common.sh"
# shellcheck source=apt.sh
. "$here/apt.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# expect NAME WANT: the URI found in $tmp/etc for codename "bookworm".
expect() {
	local got
	n=$((n + 1))
	got=$(VM_APT_ETC=$tmp/etc VM_CODENAME=bookworm vm_archive_uri 2>&1) || got="error: $got"
	if [[ $got == "$2" ]]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1: got '$got', want '$2'"
		failed=$((failed + 1))
	fi
}
fresh() {
	rm -rf "${tmp:?}/etc"
	mkdir -p "$tmp/etc/sources.list.d"
}

fresh
cat >"$tmp/etc/sources.list.d/debian.sources" <<'EOT'
Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

# a comment between paragraphs
Types: deb deb-src
URIs: http://mirror.example/debian http://second.example/debian
Suites: bookworm bookworm-updates
Components: main
EOT
expect "deb822: the entry carrying the codename, its first URI" "http://mirror.example/debian"

fresh
cat >"$tmp/etc/sources.list.d/debian.sources" <<'EOT'
Types: deb
URIs: http://off.example/debian
Suites: bookworm
Enabled: no

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm

Types: deb
URIs: http://on.example/debian
Suites: bookworm
EOT
expect "deb822: disabled and deb-src entries are skipped" "http://on.example/debian"

fresh
cat >"$tmp/etc/sources.list" <<'EOT'
deb http://security.example/debian-security bookworm-security main
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://line.example/debian bookworm main contrib
EOT
expect "one-line form with options" "http://line.example/debian"

fresh
cat >"$tmp/etc/sources.list.d/other.sources" <<'EOT'
Types: deb
URIs: https://vendor.example/apt
Suites: nodistro
EOT
expect "no source for the codename is an error" "error: vm: error: no apt source for bookworm found; set VM_APT_URI"

VM_APT_URI=http://override.example/debian expect "VM_APT_URI wins" "http://override.example/debian"

echo "apt-uri: $((n - failed)) passed, $failed failed"
((failed == 0))
