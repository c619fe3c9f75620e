#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-man: the manual pages are clean and complete.
#   - mandoc -T lint reports nothing on any page (style included);
#   - every function libgpuar.so exports has a section 3 page of its name
#     (a page or a link to its group's page) that names it in NAME, and
#     every section 3 page is such a function's (no page outlives its
#     function);
#   - every option a tool's --help lists is in its section 1 page.
#
# usage: check-man.sh LIBRARY.so TOOL...   (run from the repository root)
set -eu
so=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuar-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
not_ok() {
	echo "# $*"
	fail=1
}

pages=0
for p in man/man*/*.[0-9]; do
	[ -L "$p" ] && continue
	pages=$((pages + 1))
	(cd man && mandoc -T lint "${p#man/}") >"$tmp/lint" 2>&1 || true
	[ -s "$tmp/lint" ] && not_ok "$(cat "$tmp/lint")"
done

nm -D --defined-only "$so" | awk '$2 == "T" && $3 !~ /^_/ { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
ls man/man3 | sed 's/\.3$//' | sort -u >"$tmp/pages"
for f in $(comm -23 "$tmp/exported" "$tmp/pages"); do
	not_ok "$f: exported, but no man/man3/$f.3"
done
for f in $(comm -13 "$tmp/exported" "$tmp/pages"); do
	not_ok "man/man3/$f.3: no such exported function"
done
for f in $(comm -12 "$tmp/exported" "$tmp/pages"); do
	p=man/man3/$f.3
	if [ -L "$p" ]; then
		t=$(readlink "$p")
		case $t in */*) not_ok "$p: links outside man3 ($t)"; continue ;; esac
		[ -f "man/man3/$t" ] || { not_ok "$p: dangling link to $t"; continue; }
	fi
	# NAME: the lines between .SH NAME and the next .SH, up to "\-".
	sed -n '/^\.SH NAME/,/^\.SH /p' "$p" | sed '1d;$d' | tr '\n' ' ' |
		sed 's/\\-.*//' | tr -d ',' | tr ' ' '\n' | grep -qxF "$f" ||
		not_ok "$p: NAME does not name $f"
done

for tool in "$@"; do
	name=$(basename "$tool")
	page=man/man1/$name.1
	[ -f "$page" ] || { not_ok "$name: no $page"; continue; }
	"$tool" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u >"$tmp/options"
	while read -r opt; do
		grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$page" ||
			not_ok "$page: no $opt (in $name --help)"
	done <"$tmp/options"
done

n=$(wc -l <"$tmp/exported")
if [ "$fail" != 0 ]; then
	echo "not ok - check-man: manual pages (above)"
	exit 1
fi
echo "ok - check-man: $pages pages mandoc-lint clean; each of the $n exported functions has its page; $# tools' options documented"
