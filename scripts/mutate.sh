#!/usr/bin/env bash
# make mutate (scripts/mutate.sh [NAME...]): the suite proven against
# deliberate bugs. Each mutant is a small patch to the kernel tree at the
# series' HEAD, scripts/mutants/NAME.patch, whose header names the tests
# that must catch it:
#   Mutant: what the bug is          Tests: the catching tests
#   Where:  file and function        Arch: arm64 (default x86_64)
#   Expect: the check that fails     Append: extra kernel arguments
# For each one in turn (all, or the NAMEs given; make mutate M=NAME): apply
# it to build/linux (git apply), run scripts/test.sh with TESTS set to its
# tests (which rebuilds the kernel incrementally, boots it once and judges
# the kernel log; arm64: the 4K kernel), and restore the tree (git checkout
# of the files it touched, also on failure or interrupt). A mutant is
# caught if a test failed or the judge found a report, escaped if all
# passed; "no verdict" if the run did not get as far as a report (the
# kernel did not build). Then NAME=baseline, the same tests on the tree as
# it is (the main boot's: a catch means nothing if they fail without the
# mutant too): make mutate M=baseline.
# Each run's result files go to results/mutate/NAME/ (make test's own
# results/test.* are overwritten); the table (mutant, verdict, catching
# test, check line) to results/mutate.md, also printed. Not part of make
# test (time: one build and boot per mutant).
. "$(dirname "$0")/lib.sh"

MUTANTS=$TOP/scripts/mutants
OUTDIR=$TOP/results/mutate
TABLE=$TOP/results/mutate.md

# header FILE KEY: the value of "KEY: value" in the header of a mutant
header() { sed -n "/^diff --git /q; s/^$2: *//p" "$1"; }

if [ $# -gt 0 ]; then
	names=("$@")
else
	mapfile -t names < <(cd "$MUTANTS" && ls ./*.patch | sed 's|^\./||; s|\.patch$||')
fi
for n in "${names[@]}"; do
	[ "$n" = baseline ] || [ -e "$MUTANTS/$n.patch" ] || die "no mutant $n (scripts/mutants/$n.patch)"
done

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
mkdir -p "$OUTDIR"

touched=()
restore() {
	[ ${#touched[@]} -gt 0 ] || return 0
	git -C "$TREE" checkout -q -- "${touched[@]}" &&
		log "restored ${touched[*]}" || warn "could not restore ${touched[*]} in $TREE"
	touched=()
}
trap restore EXIT
trap 'restore; exit 130' INT TERM

# verdict RESULTS: "caught|escaped|no verdict<TAB>test<TAB>check line",
# from RESULTS/test.json (scripts/test-report.py): the first failing test
# of a boot, and its first failed sub-check or kernel report
verdict() {
	/usr/bin/python3 - "$1/test.json" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print('no verdict\t-\tno test.json: the run stopped before its report (build?)'); sys.exit()
fails = j['failures']
for i, f in enumerate(fails):
    if f.startswith('  ') or '/' not in f.split(' ')[0]:
        continue        # a sub-line, or a self-test of the harness
    name = f.split(' ')[0].split('/', 1)[1]
    line = next((s.strip() for s in fails[i + 1:i + 2] if s.startswith('  ')), f)
    print(f'caught\t{name}\t{line}'); sys.exit()
if fails:
    print('no verdict\t-\t' + fails[0]); sys.exit()
s = j['summary']
print(f'escaped\t-\t{s["passed"]} passed, {s["failed"]} failed')
EOF
}

declare -A rows
for n in "${names[@]}"; do
	if [ "$n" = baseline ]; then
		patch="" arch=x86_64 append=""
		# the main boot's catchers: isolation and arm64 ones need their boots
		tests=$(for f in "$MUTANTS"/*.patch; do
			[ -n "$(header "$f" Arch)" ] || [ -n "$(header "$f" Append)" ] || header "$f" Tests
		done | tr ' ' '\n' | sort -u | tr '\n' ' ')
		what="the catching tests of the main boot, no mutant"
	else
		patch=$MUTANTS/$n.patch
		tests=$(header "$patch" Tests)
		arch=$(header "$patch" Arch)
		append=$(header "$patch" Append)
		what=$(header "$patch" Mutant)
		arch=${arch:-x86_64}
		[ -n "$tests" ] || die "$n: no Tests: line"
		mapfile -t files < <(git -C "$TREE" apply --numstat "$patch" | cut -f3)
		git -C "$TREE" diff --quiet HEAD -- "${files[@]}" ||
			die "$n: build/linux has changes of its own in ${files[*]}: commit or stash them first"
		git -C "$TREE" apply "$patch" || die "$n: does not apply to build/linux (HEAD $(git -C "$TREE" log -1 --format=%h))"
		touched=("${files[@]}")
	fi
	log "mutant $n ($what): $tests${append:+ (append: $append)}${arch:+ [$arch]}"
	rc=0
	if [ "$arch" = arm64 ]; then
		res=$TOP/results/arm64-4k
		rm -f "$res"/test.json
		TESTS="$tests" GUEST_ARCH=arm64 GUEST_PAGE=4k GUEST_APPEND="$append" \
			"$TOP/scripts/test.sh" arm64 || rc=$?
	else
		res=$TOP/results
		rm -f "$res"/test.json
		TESTS="$tests" GUEST_APPEND="$append" "$TOP/scripts/test.sh" quick || rc=$?
	fi
	restore
	rm -rf "${OUTDIR:?}/$n"
	mkdir -p "$OUTDIR/$n"
	cp "$res"/test.{json,ktap,out,console.log,kmsg.log,reports,boot} "$OUTDIR/$n/" 2>/dev/null || true
	v=$(verdict "$res")
	[ "$rc" -ne 0 ] || [ "${v%%$'\t'*}" = escaped ] ||
		warn "$n: test.sh passed, yet the report says: $v"
	rows[$n]="$v"
	IFS=$'\t' read -r result test line <<< "$v"
	[ "$n" != baseline ] || case $result in
		caught) result="FAILS without a mutant" ;;
		escaped) result="all pass" ;;
	esac
	echo "mutant $n: $result${test:+ ($test)}: $line"
	{
		echo "| mutant | tests run | verdict | catching test | check line |"
		echo "|---|---|---|---|---|"
		for m in "${!rows[@]}"; do
			IFS=$'\t' read -r result test line <<< "${rows[$m]}"
			[ "$m" != baseline ] || case $result in
				caught) result="FAILS without a mutant" ;;
				escaped) result="all pass" ;;
			esac
			mt=$(header "$MUTANTS/$m.patch" Tests 2>/dev/null || true)
			echo "| $m | ${mt:-main-boot catchers} | $result | $test | ${line//|/\\|} |"
		done | sort
	} > "$TABLE.new"
	# keep the rows of mutants not run this time
	[ ! -e "$TABLE" ] || grep '^| [A-Z]\|^| baseline' "$TABLE" |
		while IFS= read -r row; do
			m=$(cut -d'|' -f2 <<< "$row" | tr -d ' ')
			[ -n "${rows[$m]:-}" ] || echo "$row"
		done >> "$TABLE.new"
	{ head -2 "$TABLE.new"; tail -n +3 "$TABLE.new" | sort; } > "$TABLE"
	rm -f "$TABLE.new"
done
log "the table: ${TABLE#"$TOP"/} (per mutant: results/mutate/NAME/)"
cat "$TABLE"
