# Shared helpers for the testbed scripts. Sourced, not executed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build
RESULTS=$TOP/results
TREE=$BUILD/linux		# patched work tree (git, tag "base" = pristine)
VANILLA=$BUILD/vanilla		# git worktree of TREE checked out at "base"
# shellcheck source=../config/kernel.env
. "$TOP/config/kernel.env"
JOBS=${JOBS:-$(nproc)}

log()  { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# Source tree of a kernel variant: "patched" or "vanilla".
variant_src() {
	case $1 in
	patched) echo "$TREE" ;;
	vanilla) echo "$VANILLA" ;;
	*) die "unknown kernel variant '$1' (patched|vanilla)" ;;
	esac
}

# Build output directory of a variant/profile pair, e.g. patched-debug.
kernel_out() { echo "$BUILD/out/$1-$2"; }

# kernel_problems LOG...: print one line per kind of kernel report in these
# logs of one boot (scripts/kernel-log.py: console and kmsg logs; a boot that
# died of a stale int3 of QEMU is judged up to it, and the first line says
# so); true if there is any, or if the logs could not be judged: no verdict
# is not a clean verdict.
kernel_problems() {
	local rc=0
	/usr/bin/python3 "$TOP/scripts/kernel-log.py" "$@" >&2 || rc=$?
	[ "$rc" -ne 0 ]
}
