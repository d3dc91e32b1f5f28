#!/usr/bin/env bash
# Check the series as its reviewers and the build bots will: every patch
# alone, and the whole series in the configurations make test does not boot.
#   scripts/check-series.sh [FIRST [LAST]]    (patch numbers; default all)
#   scripts/check-series.sh POSTING          (the patches of patches/POSTING)
# Patch numbers count from the first commit of the first posting.
# 1. checkpatch --strict on each commit of build/linux (as
#    git format-patch writes it), without the sign-off that make postings
#    adds. UNKNOWN_COMMIT_ID is
#    ignored (build/linux has no upstream history for a Fixes: tag to name),
#    and so are commit-log style warnings in backports (another author's
#    message, kept verbatim).
# 2. Each patch in turn, in a worktree of build/linux at that commit: the
#    x86-64 kernel and modules with every option of the series (a
#    non-debug config), then its touched .c files again with W=1; a
#    warning in a file the patch touches fails it, and so does a touched
#    .c file (but arm64's, sparc's and tools/) that the config leaves out.
# 3. The whole series (the last patch checked): x86-64 with
#    MIGRATE_COPY=n; i386 (the 32-bit kernel of the anon_vma
#    alignment patch) with every option on, without NUMA; arm64 with every
#    option on, the series' arm64 files with W=1; sparc64, the mm objects
#    that include the ADI patch's header, compiled with W=1.
# Output under build/check/ (a worktree and one build directory per
# configuration; incremental), the report in results/check-series.txt.
# Exit status 1 if anything failed. About an hour on 2 cores from scratch.
. "$(dirname "$0")/lib.sh"

# SERIES_TREE=DIR checks the HEAD of another worktree of build/linux
# (a series being re-cut), with the report in CHECK_REPORT; EACH_ONLY=1
# skips part 3. Runs take turns on build/check (a lock).
TREE=${SERIES_TREE:-$TREE}
CHECK=$BUILD/check
WT=$CHECK/linux
REPORT=${CHECK_REPORT:-$RESULTS/check-series.txt}
ME=$(git -C "$TREE" config user.email || true)
[ -n "$ME" ] || die "no user.email in $TREE: which patches are backports?"

[ -d "$TREE/.git" ] || [ -f "$TREE/.git" ] || die "$TREE missing: run 'make tree'"
mapfile -t commits < <(git -C "$TREE" rev-list --reverse base..HEAD)
nr=${#commits[@]}
first=${1:-1}
last=${2:-$nr}
if [ -n "${1:-}" ] && [ -d "$TOP/patches/$1" ]; then
	read -r from to < <(posting_range "$1")
	first=$(($(git -C "$TREE" rev-list --count "base..$from") + 1))
	last=$(git -C "$TREE" rev-list --count "base..$to")
fi
[ "$first" -ge 1 ] && [ "$last" -le "$nr" ] && [ "$first" -le "$last" ] ||
	die "patches $first..$last: the series has 1..$nr"

mkdir -p "$CHECK" "$RESULTS"
exec 9> "$CHECK/lock"
flock 9
[ -e "$WT/.git" ] || git -C "$TREE" worktree add -q --detach "$WT" base
: > "$REPORT"
failed=0
report() { echo "$*" | tee -a "$REPORT"; }
bad() { report "FAIL $*"; failed=$((failed + 1)); }

# make for ARCH, with its cross compiler (the config depends on it too)
amake() {
	local arch=$1 cross=; shift
	case $arch in
	arm64)	cross=aarch64-linux-gnu- ;;
	sparc64) cross=sparc64-linux-gnu- ;;
	esac
	make -C "$WT" ARCH="$arch" CROSS_COMPILE="$cross" "$@"
}
# config OUT ARCH FRAGMENT...: a tinyconfig plus the fragments, in OUT
config() {
	local out=$1 arch=$2; shift 2
	mkdir -p "$out"
	amake "$arch" -s O="$out" tinyconfig >/dev/null
	"$WT/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$@" >/dev/null
	amake "$arch" -s O="$out" olddefconfig >/dev/null
}
# kmake OUT ARCH LOG TARGET...: build, the output appended to LOG
kmake() {
	local out=$1 arch=$2 log=$3; shift 3
	amake "$arch" O="$out" -j"$JOBS" "$@" >> "$log" 2>&1
}
# includer OUT FILE BUILT: the built object of FILE's directory whose
# dependencies name FILE, a .c file compiled only as #included by another
# (kernel/sched/syscalls.c in build_policy.c)
includer() {
	local out=$1 f=$2 built=$3 cmd o
	for cmd in "$out/$(dirname "$f")"/.*.o.cmd; do
		[ -e "$cmd" ] && grep -qF "/$f " "$cmd" || continue
		o=${cmd#"$out/"}; o=${o%.cmd}; o=$(dirname "$o")/$(basename "$o" | sed 's/^\.//')
		grep -qxF "$o" <<< "$built" && { echo "$o"; return 0; }
	done
	return 1
}
# w1 OUT ARCH LOG FILE...: the objects of those .c files that the config
# builds again with W=1, then print the warnings in any of the files
# (headers included) that the log has, from the build before too
w1() {
	local out=$1 arch=$2 log=$3 f objs=() built; shift 3
	# the objects of this configuration: those linked into vmlinux and
	# those of its modules (an incremental build directory may keep the
	# .o of an earlier configuration, which this one would not build)
	built=$({ (cd "$out" && ar t vmlinux.a) | sed "s|^.*$out/||"
		  sed 's/\.o$/.mod/' "$out/modules.order" | (cd "$out" && xargs awk 1); } 2>/dev/null)
	for f in "$@"; do
		[[ $f == *.c ]] || continue
		# with MUST_BUILD, a file the configuration leaves out fails
		# (it would otherwise pass unseen)
		if grep -qxF "${f%.c}.o" <<< "$built"; then
			objs+=("${f%.c}.o")
		elif inc=$(includer "$out" "$f" "$built"); then
			objs+=("$inc")
		elif [ -n "${MUST_BUILD:-}" ]; then
			echo "$f: error: not built in this configuration"
		fi
	done
	[ ${#objs[@]} = 0 ] || kmake "$out" "$arch" "$log" W=1 "${objs[@]}" ||
		{ echo "the W=1 build failed: $log"; return; }
	# compiler (path:line:col:) and kernel-doc (path:line:) reports; the
	# path is the worktree's (build/check/linux/), absolute or relative
	for f in "$@"; do
		grep -E "^(([^ :]*/)?linux/)?$f:[0-9]+(:[0-9]+)?: (warning|error):" "$log" || true
	done
}

x86=(base x86_64 series series-debug check)
frags() { local f; for f in "$@"; do echo "$TOP/config/$f.config"; done; }

# ---- 1. checkpatch ----------------------------------------------------------
log "checkpatch --strict, patches $first..$last"
rm -rf "$CHECK/patches"
git -C "$TREE" format-patch -q -o "$CHECK/patches" base..HEAD
for ((i = first; i <= last; i++)); do
	p=$(ls "$CHECK"/patches/"$(printf %04d "$i")"-*.patch)
	# FILE_PATH_CHANGES: the series adds no MAINTAINERS entry
	# (docs/series.md, "Checkpatch's findings that stay")
	ignore=UNKNOWN_COMMIT_ID,FILE_PATH_CHANGES
	grep -q "^From: .*<$ME>" "$p" || ignore+=,COMMIT_LOG_LONG_LINE
	out=$(perl "$WT/scripts/checkpatch.pl" --strict --no-tree --no-signoff -q --ignore "$ignore" "$p" || true)
	if echo "$out" | grep -qE '^(ERROR|WARNING):'; then
		bad "checkpatch $(basename "$p")"
		echo "$out" | grep -E -A3 '^(ERROR|WARNING):' | tee -a "$REPORT"
	else
		report "ok   checkpatch $(basename "$p")$(echo "$out" | grep -c '^CHECK:' | sed 's/^0$//; s/..*/ (& CHECK)/')"
	fi
done

# ---- 2. each patch alone ----------------------------------------------------
out=$CHECK/x86_64
mkdir -p "$out"
for ((i = first; i <= last; i++)); do
	c=${commits[i - 1]}
	subject=$(git -C "$TREE" log -1 --format=%s "$c")
	log "patch $i/$nr: $subject"
	git -C "$WT" checkout -q --detach "$c"
	blog=$out/patch-$i.log
	: > "$blog"
	mapfile -t cfiles < <(git -C "$WT" diff --name-only --diff-filter=AM "$c^" "$c" -- '*.[ch]' |
			      grep -v -e '^arch/arm64/' -e '^arch/sparc/' -e '^tools/' || true)
	config "$out" x86_64 $(frags "${x86[@]}")
	if ! kmake "$out" x86_64 "$blog" bzImage modules; then
		bad "patch $i builds: $subject (build/check/x86_64/patch-$i.log)"
		grep -i -E -A3 'error|undefined' "$blog" | head -20 | tee -a "$REPORT" || true
		continue
	fi
	warnings=$(MUST_BUILD=1 w1 "$out" x86_64 "$blog" "${cfiles[@]}")
	if [ -n "$warnings" ]; then
		bad "patch $i W=1 warnings: $subject"
		echo "$warnings" | tee -a "$REPORT"
	else
		report "ok   patch $i builds, W=1 clean (${#cfiles[@]} files): $subject"
	fi
done

# ---- 3. the series in other configurations ---------------------------------
if [ -n "${EACH_ONLY:-}" ]; then
	report "$failed failed (each patch only)"
	[ "$failed" = 0 ]
	exit
fi
c=${commits[last - 1]}
git -C "$WT" checkout -q --detach "$c"
mapfile -t files < <(git -C "$WT" diff --name-only --diff-filter=AM base "$c" -- '*.[ch]')

log "x86-64, MIGRATE_COPY=n"
out=$CHECK/x86_64-off
echo "# CONFIG_MIGRATE_COPY is not set" > "$CHECK/off.config"
config "$out" x86_64 $(frags "${x86[@]}") "$CHECK/off.config"
: > "$out/build.log"
if grep -q '^CONFIG_MIGRATE_COPY=y' "$out/.config"; then
	bad "x86-64 =n: the option stayed on"
elif kmake "$out" x86_64 "$out/build.log" bzImage modules; then
	warnings=$(w1 "$out" x86_64 "$out/build.log" $(printf '%s\n' "${files[@]}" | grep -v -e '^arch/arm64/' -e '^arch/sparc/'))
	if [ -n "$warnings" ]; then
		bad "x86-64 =n warnings"; echo "$warnings" | tee -a "$REPORT"
	else
		report "ok   x86-64 with MIGRATE_COPY=n builds, W=1 clean (patch $last)"
	fi
else
	bad "x86-64 with MIGRATE_COPY=n (build/check/x86_64-off/build.log)"
fi

log "i386"
out=$CHECK/i386
cat > "$CHECK/i386.config" <<'EOF'
# CONFIG_64BIT is not set
CONFIG_SMP=y
CONFIG_PRINTK=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_COMPACTION=y
CONFIG_MIGRATION=y
CONFIG_TRANSPARENT_HUGEPAGE=y
CONFIG_DMADEVICES=y
CONFIG_DMA_ENGINE=y
CONFIG_SYSFS=y
CONFIG_DEBUG_FS=y
CONFIG_FTRACE=y
CONFIG_ENABLE_DEFAULT_TRACERS=y
CONFIG_KUNIT=y
EOF
config "$out" i386 "$CHECK/i386.config" $(frags series)
: > "$out/build.log"
# A posting before the series' own options (the fixes) builds without them.
series_opts=$([ -e "$WT/mm/migrate_copy.c" ] && echo 1 || true)
if [ -n "$series_opts" ] && ! grep -q '^CONFIG_MIGRATE_COPY=y' "$out/.config"; then
	bad "i386: MIGRATE_COPY not enabled"
elif ! kmake "$out" i386 "$out/build.log" bzImage modules; then
	bad "i386 (build/check/i386/build.log)"
else
	warnings=$(w1 "$out" i386 "$out/build.log" $(printf '%s\n' "${files[@]}" | grep -v '^arch/'))
	if [ -n "$warnings" ]; then
		bad "i386 W=1 warnings"; echo "$warnings" | tee -a "$REPORT"
	else
		report "ok   i386 builds, W=1 clean (patch $last)"
	fi
fi

log "arm64"
# the cross compiler (make test installs it too, for its arm64 smoke boot)
GUEST_ARCH=arm64 "$TOP/scripts/deps.sh"
out=$CHECK/arm64
config "$out" arm64 $(frags base arm64 arm64-4k series check)
: > "$out/build.log"
if { [ -n "$series_opts" ] && ! grep -q '^CONFIG_MIGRATE_COPY=y' "$out/.config"; } ||
   ! grep -q '^CONFIG_ARM64_MTE=y' "$out/.config"; then
	bad "arm64: MIGRATE_COPY or ARM64_MTE not enabled"
elif ! kmake "$out" arm64 "$out/build.log" Image modules; then
	bad "arm64 (build/check/arm64/build.log)"
else
	warnings=$(w1 "$out" arm64 "$out/build.log" $(printf '%s\n' "${files[@]}" | grep -v -e '^arch/x86/' -e '^arch/sparc/'))
	if [ -n "$warnings" ]; then
		bad "arm64 W=1 warnings"; echo "$warnings" | tee -a "$REPORT"
	else
		report "ok   arm64 builds, W=1 clean (patch $last)"
	fi
fi
# sparc64: the ADI patch's header is included by the series' mm code; a
# kernel of the series' options, the objects that include it with W=1
# (compiled, not linked: a whole sparc64 kernel is not needed for that)
log "sparc64"
DEPS_SPARC64=1 "$TOP/scripts/deps.sh"
out=$CHECK/sparc64
printf 'CONFIG_%s\n' 64BIT=y SMP=y MODULES=y COMPACTION=y MIGRATION=y NUMA=y \
	TRANSPARENT_HUGEPAGE=y SYSFS=y DEBUG_FS=y > "$CHECK/sparc64.config"
config "$out" sparc64 "$CHECK/sparc64.config" $(frags series)
: > "$out/build.log"
sparc_objs=(mm/migrate.o)
[ -z "$series_opts" ] || sparc_objs+=(mm/migrate_copy.o)
if [ -n "$series_opts" ] && ! grep -q '^CONFIG_MIGRATE_COPY=y' "$out/.config"; then
	bad "sparc64: MIGRATE_COPY not enabled"
elif ! kmake "$out" sparc64 "$out/build.log" W=1 "${sparc_objs[@]}"; then
	bad "sparc64 (build/check/sparc64/build.log)"
elif grep -E '(warning|error):' "$out/build.log" | grep -E 'mm/migrate|asm/pgtable_64\.h'; then
	bad "sparc64 W=1 warnings"
else
	report "ok   sparc64: ${sparc_objs[*]} compile, W=1 clean (patch $last)"
fi

report "$((failed)) failed"
[ "$failed" = 0 ]
