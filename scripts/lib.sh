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

# Print the kernel's reports of bugs in a console log; true if there are any.
# Only kernel lines ([timestamp] prefix) count: what tests print does not.
kernel_problems() {
	grep -E '^\[ *[0-9]+\.[0-9]+\] .*(BUG:|WARNING:|Oops|kernel BUG|Kernel panic|general protection fault|KASAN|UBSAN|possible (circular|recursive) locking|lockdep|blocked for more than|soft lockup|rcu.*stall|Call Trace:)' "$1" | head -20 >&2
}
