# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Shared by the tools/vm scripts (sourced, not run): cache layout, logging,
# step timing. Every download and build product lives under $GPUAR_CACHE,
# never in the repository.

GPUAR_CACHE=${GPUAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuar}
export GPUAR_CACHE
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this
{
	REPO_ROOT=$(cd "$VM_DIR/../.." && pwd)
	KERNELS_DIR=$GPUAR_CACHE/kernels
	VM_JOBS=${VM_JOBS:-2}
}

vm_log() {
	printf 'vm: %s\n' "$*" >&2
}

vm_die() {
	printf 'vm: error: %s\n' "$*" >&2
	exit 1
}

# vm_step NAME CMD...: run CMD, then print how long it took, so the cold
# and warm cost of each step is visible in every run's output.
vm_step() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	"$@" || rc=$?
	vm_log "time: $name $(($(date +%s) - t0))s"
	return "$rc"
}
