# Shared helpers for the testbed scripts. Sourced, not executed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$TOP/build
# RESULTS_DIR: another results directory, so that two runs of one clone
# (a bench and a test, two benches) do not overwrite each other's files
RESULTS=${RESULTS_DIR:-$TOP/results}
TREE=$BUILD/linux		# patched work tree (git, tag "base" = pristine)
VANILLA=$BUILD/vanilla		# git worktree of TREE checked out at "base"
NOMETA=$BUILD/nometa		# git worktree of TREE without the metadata rule (scripts/tree.sh nometa)
# shellcheck source=../config/kernel.env
. "$TOP/config/kernel.env"
JOBS=${JOBS:-$(nproc)}

# The guest's architecture: x86_64 (make test, make bench) or arm64 (make
# test-arm64), whose base page size is GUEST_PAGE (4k or 64k). Each has its
# kernels in its own build/out* directory, its config fragments
# (config/ARCH.config, config/ARCH-PROFILE.config, config/arm64-PAGE.config),
# its compiler for the guest programs and its QEMU (scripts/run-guest.sh).
GUEST_ARCH=${GUEST_ARCH:-x86_64}
# shellcheck disable=SC2034  # used by the scripts that source this
case $GUEST_ARCH in
x86_64)
	KMAKE=(make)
	KIMAGE=arch/x86/boot/bzImage
	OUTDIR=$BUILD/out
	ARCH_FRAGS=(x86_64)
	GUEST_CC=gcc
	GUEST_ROOT=""	# the host's own busybox-static and e2fsck-static
	;;
arm64)
	GUEST_PAGE=${GUEST_PAGE:-4k}
	case $GUEST_PAGE in 4k|64k) ;; *) echo "error: GUEST_PAGE must be 4k or 64k" >&2; exit 1 ;; esac
	KMAKE=(make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	KIMAGE=arch/arm64/boot/Image
	OUTDIR=$BUILD/out-arm64-$GUEST_PAGE
	ARCH_FRAGS=(arm64 "arm64-$GUEST_PAGE")
	GUEST_CC=aarch64-linux-gnu-gcc
	# Debian's arm64 builds of what the guest runs that cannot be
	# installed beside the host's (busybox-static, e2fsck-static):
	# unpacked here by scripts/deps.sh
	GUEST_ROOT=$BUILD/arm64-root
	RESULTS=$TOP/results/arm64-$GUEST_PAGE
	;;
*) echo "error: GUEST_ARCH must be x86_64 or arm64" >&2; exit 1 ;;
esac
export GUEST_ARCH
# A kernel other than the patched one keeps its results apart (VARIANT=nometa).
[ "${VARIANT:-patched}" = patched ] || RESULTS=$RESULTS-$VARIANT

log()  { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# Source tree of a kernel variant: "patched" or "vanilla".
variant_src() {
	case $1 in
	patched) echo "$TREE" ;;
	vanilla) echo "$VANILLA" ;;
	nometa) echo "$NOMETA" ;;
	*) die "unknown kernel variant '$1' (patched|vanilla|nometa)" ;;
	esac
}

# Build output directory of a variant/profile pair, e.g. patched-debug.
kernel_out() { echo "$OUTDIR/$1-$2"; }

# group_tests FILE RUNNABLE [BOOTS]: the tests FILE names (a group file of
# guest/tests, one name a line, "# comments"), in its order; each must be
# one of RUNNABLE (a line each: the tests that BOOTS, the boots of this
# run, can run), or this dies before anything runs.
group_tests() {
	local names t
	names=$(sed -e 's/[[:space:]]*#.*//' -e '/^$/d' "$1")
	for t in $names; do
		grep -q -x -F -- "$t" <<< "$2" && continue
		[ -e "$TOP/guest/tests/$t.sh" ] || die "${1#"$TOP"/}: no test $t (no guest/tests/$t.sh)"
		die "${1#"$TOP"/}: $t is run by none of ${3:-the boots of this run}"
	done
	echo "$names"
}

# kernel_problems [--accel MODE] LOG...: print one line per kind of kernel
# report in these logs of one boot (scripts/kernel-log.py: console and kmsg
# logs; a boot under multi-threaded TCG, MODE tcg, that died of a stale
# int3 of QEMU is judged up to it, and the first line says so); true if
# there is any, or if the logs could not be judged: no verdict is not a
# clean verdict.
kernel_problems() {
	local rc=0
	/usr/bin/python3 "$TOP/scripts/kernel-log.py" "$@" >&2 || rc=$?
	[ "$rc" -ne 0 ]
}

# The series: patches/NAME/, one directory per posting (each with its
# cover letter, 0000-cover-letter.patch, if it is posted), applied in the
# order of the names. In build/linux a branch posting/NAME marks the last
# commit of each posting but the last, which ends at HEAD. The series' own
# commits there are by SERIES_AUTHOR, a name for whoever exports them: the
# stored patches have no From: for it and no Signed-off-by of ours
# (scripts/export.sh), and make postings puts the exporter's identity in
# both (scripts/postings.sh). Other authors' patches (backports) keep
# their From: and sign-offs.
SERIES_AUTHOR_NAME=testbed
SERIES_AUTHOR_EMAIL=testbed@localhost
postings() {
	local d
	for d in "$TOP"/patches/*/; do
		[ -d "$d" ] && basename "$d"
	done
	return 0
}
posting_files() { ls "$TOP/patches/$1"/[0-9][0-9][0-9][0-9]-*.patch 2>/dev/null | grep -v '/0000-' || true; }
# posting_range NAME: "FROM TO", its commits in build/linux (FROM..TO)
posting_range() {
	local from=base to name names
	mapfile -t names < <(postings)
	for name in "${names[@]}"; do
		to=posting/$name
		[ "$name" != "${names[-1]}" ] || to=HEAD
		[ "$name" != "$1" ] || { echo "$from $to"; return 0; }
		from=$to
	done
	die "no posting $1 in patches/"
}
# cover_text FILE: the date (first line), the subject (second) and the text
# of a stored cover letter, without what format-patch appends (shortlog,
# diffstat)
cover_text() {
	python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
head, _, body = text.partition("\n\n")
print(re.search(r"^Date: (.*)", head, re.M).group(1))
subj = re.search(r"^Subject: (.*(?:\n .*)*)", head, re.M).group(1)
print(re.sub(r"\n ", " ", subj))
print(re.split(r"\n[^\n]+ \(\d+\):\n", body)[0].rstrip())
PY
}
# subject_prefix SUBJECT: "PATCH 6.12.y" of "[PATCH 6.12.y 0/2] ..."
subject_prefix() { sed -E 's/^\[([^]]*[^] ]) +[0-9]+\/[0-9]+\].*/\1/; t; s/.*/PATCH/' <<< "$1"; }
