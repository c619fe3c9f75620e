# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Private apt instances for fetching the kernel matrix (sourced). Each suite
# gets its own sources list, package lists, archive cache and an empty dpkg
# status under $GPUAR_CACHE/apt/<suite>, so nothing on the machine changes
# and nothing installed on it influences which version is picked. The
# archive's URI is read from the machine's own apt sources at run time
# (VM_APT_URI overrides it); no host name is written into the repository.
# VM_APT_ETC and VM_CODENAME replace /etc/apt and the machine's codename
# (for tests).

# The URI of the machine's main Debian archive: the first source that
# carries the machine's own codename (not -security, -updates, ...).
vm_archive_uri() {
	if [[ -n ${VM_APT_URI:-} ]]; then
		echo "$VM_APT_URI"
		return
	fi
	local codename f uri etc=${VM_APT_ETC:-/etc/apt}
	codename=${VM_CODENAME:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
	[[ -n $codename ]] || vm_die "no VERSION_CODENAME in /etc/os-release"
	for f in "$etc"/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		# deb822: paragraphs separated by blank lines.
		uri=$(awk -v cn="$codename" '
			function flush() {
				if (!found && types ~ /(^| )deb( |$)/ && !off && uris != "") {
					n = split(suites, s, " ")
					for (i = 1; i <= n; i++)
						if (s[i] == cn && !found) {
							split(uris, u, " "); print u[1]; found = 1
						}
				}
				types = suites = uris = ""; off = 0
			}
			/^[ \t]*$/ { flush(); next }
			/^#/ { next }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "uris:" { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
			tolower($1) == "enabled:" && tolower($2) == "no" { off = 1 }
			END { flush() }' "$f")
		if [[ -n $uri ]]; then
			echo "$uri"
			return
		fi
	done
	for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		# One-line form: deb [options] uri suite components...
		uri=$(sed -E 's/\[[^]]*\]//' "$f" |
			awk -v cn="$codename" '$1 == "deb" && $3 == cn { print $2; exit }')
		if [[ -n $uri ]]; then
			echo "$uri"
			return
		fi
	done
	vm_die "no apt source for $codename found; set VM_APT_URI"
}

# vm_apt_init SUITE: prepare $GPUAR_CACHE/apt/SUITE and fetch its package
# lists (at most once per VM_APT_MAX_AGE seconds, default a day).
vm_apt_init() {
	local suite=$1 d keyring
	d=$GPUAR_CACHE/apt/$suite
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/etc/preferences.d"
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$(vm_archive_uri)" \
		"$suite" >"$d/etc/sources.list"
	: >"$d/status"
	local age=${VM_APT_MAX_AGE:-86400} stamp=$d/lists/.updated
	if [[ ! -f $stamp || $(($(date +%s) - $(stat -c %Y "$stamp"))) -gt $age ]] ||
		! cmp -s "$d/etc/sources.list" "$d/lists/.sources"; then
		vm_apt "$suite" -q update >&2 || vm_die "apt-get update of $suite failed"
		cp "$d/etc/sources.list" "$d/lists/.sources"
		touch "$stamp"
	fi
}

# vm_apt_opts SUITE: the options that make apt use only the private state.
# The suite "system" is the machine's own apt configuration.
vm_apt_opts() {
	local d=$GPUAR_CACHE/apt/$1
	# Downloads land in the cache, which apt's sandbox user cannot write.
	printf '%s\n' -o "APT::Sandbox::User=root"
	[[ $1 != system ]] || return 0
	printf '%s\n' \
		-o "Dir::Etc::SourceList=$d/etc/sources.list" \
		-o "Dir::Etc::SourceParts=-" \
		-o "Dir::Etc::PreferencesParts=$d/etc/preferences.d" \
		-o "Dir::State::Lists=$d/lists" \
		-o "Dir::State::status=$d/status" \
		-o "Dir::Cache=$d/cache" \
		-o "Dir::Cache::archives=$d/archives"
}

vm_apt() {
	local suite=$1
	shift
	local -a opts
	mapfile -t opts < <(vm_apt_opts "$suite")
	mkdir -p "$GPUAR_CACHE/apt/$suite/cache"
	apt-get "${opts[@]}" "$@"
}

vm_apt_cache() {
	local suite=$1
	shift
	local -a opts
	mapfile -t opts < <(vm_apt_opts "$suite")
	apt-cache "${opts[@]}" "$@"
}

# vm_apt_depends SUITE PKG REGEX: PKG's direct dependencies matching REGEX.
vm_apt_depends() {
	vm_apt_cache "$1" show --no-all-versions "$2" |
		sed -n 's/^\(Pre-\)\?Depends: //p' | tr ',|' '\n\n' |
		sed -E 's/^ +//; s/[ (].*//' | grep -E "$3" | sort -u
}

# vm_apt_fetch SUITE DEST PKG...: download PKGs (cached) and unpack them
# into DEST with dpkg-deb -x, never installing anything.
vm_apt_fetch() {
	local suite=$1 dest=$2 p deb
	shift 2
	local d=$GPUAR_CACHE/apt/$suite/debs
	mkdir -p "$d" "$dest"
	for p in "$@"; do
		local ver
		ver=$(vm_apt_cache "$suite" show --no-all-versions "$p" |
			sed -n 's/^Version: //p' | head -1)
		[[ -n $ver ]] || vm_die "$p not found in $suite"
		deb=$(ls "$d/${p}_${ver//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
		if [[ -z $deb ]]; then
			(cd "$d" && vm_apt "$suite" -q download "$p=$ver" >&2) ||
				vm_die "download of $p=$ver from $suite failed (stale lists? apt-get update)"
			deb=$(ls "$d/${p}_${ver//:/%3a}_"*.deb | head -1)
		fi
		dpkg-deb -x "$deb" "$dest"
	done
}
