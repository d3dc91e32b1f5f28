#!/usr/bin/env bash
# Self-test of the verdicts built around the kernel-log judge (whose own
# self-test is scripts/test-judge.sh), on synthetic input: make test runs it
# before any boot. Prints KTAP; exit status 1 if any case is wrong.
#  - the guest runner, guest/tests/run.sh, run here (busybox sh, as in the
#    guest) on synthetic tests, with RUNNER_ROOT standing for the guest's /
#    (its kernel log and taint mask are files): a test that passes no check
#    fails, a new taint flag W, D, L or B fails the test that ran, each test
#    is marked in the kernel log;
#  - scripts/test-report.py on synthetic boots: a kernel report during a
#    test fails that test; the emulator's deaths (stale int3, stopped
#    before init, QEMU crash) are excused under multi-threaded TCG only;
#  - group_tests (scripts/lib.sh): a name in a group file that no boot of
#    the run can run is an error.
#   KUNIT=DIR  the kernel's KTAP parser (default: the tree's, build/linux)
#   KEEP=1     keep its directory of synthetic files (the path: mktemp's, in /tmp)
. "$(dirname "$0")/lib.sh"

dir=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
n=0 bad=0
planned=44
echo "KTAP version 1"
echo "1..$planned"

# check NAME CMD...: the case passes if CMD does
check() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@" > "$dir/check.out" 2>&1; then
		echo "ok $n $name"
	else
		bad=$((bad + 1))
		sed 's/^/# /' "$dir/check.out" | head -5
		echo "not ok $n $name"
	fi
}
# has FILE LINE: FILE has this exact line
has() { grep -q -x -F -- "$2" "$1" || { echo "no line '$2' in:"; cat "$1"; false; }; }
# follows FILE LINE NEXT: FILE has LINE right before NEXT
follows() {
	grep -x -F -A1 -- "$2" "$1" | grep -q -x -F -- "$3" ||
		{ echo "no line '$2' right before '$3'"; false; }
}

# ---- the guest runner -------------------------------------------------------
root=$dir/root
T=$root/opt/mig/tests
mkdir -p "$T" "$root/tmp" "$root/dev" "$root/proc/sys/kernel" "$root/sys/kernel/mm/migration"
cp "$TOP/guest/tests/lib.sh" "$TOP/guest/tests/run.sh" "$T/"
echo timeout=60 > "$T/settings"
: > "$root/dev/kmsg"
echo 0 > "$root/proc/sys/kernel/tainted"
# test NAME BODY: a synthetic test, lib.sh's checks and finish
test_sh() {
	printf '. $RUNNER_ROOT/opt/mig/tests/lib.sh\n%s\n' "$2" > "$T/$1.sh"
}
taint='echo $(( $(cat $RUNNER_ROOT/proc/sys/kernel/tainted) | (1 << $1) )) > $RUNNER_ROOT/proc/sys/kernel/tainted'
test_sh 01-passes 'pass "a check that held"; finish'
test_sh 02-checks-nothing 'finish'
test_sh 03-fails-only 'true || fail "a check that can only fail"; finish'
test_sh 04-skips-only 'skip "not here"; finish'
test_sh 05-skips 'echo "no MTE here"; exit 4'
test_sh 06-warns "set -- 9; $taint"'
pass "data exact"; finish'
test_sh 07-after-a-warning 'pass "data exact"; finish'
test_sh 08-dies "set -- 5; $taint; set -- 7; $taint; set -- 14; $taint"'
pass "data exact"; finish'
test_sh 09-other-taints "set -- 12; $taint; set -- 13; $taint; set -- 18; $taint"'
pass "data exact"; finish'
sh=sh
! command -v busybox > /dev/null || sh="busybox sh"
names="01-passes 02-checks-nothing 03-fails-only 04-skips-only 05-skips 06-warns 07-after-a-warning 08-dies 09-other-taints"
# shellcheck disable=SC2046,SC2086  # lists
RUNNER_ROOT=$root RESULTS=$dir/run.ktap $sh "$T/run.sh" $(printf "$T/%s.sh " $names) \
	> "$dir/run.console" 2>&1 || true
check "runner: a test that passes a check passes" has "$dir/run.ktap" "ok 1 01-passes"
check "runner: a test that checks nothing fails" \
	has "$dir/run.ktap" "not ok 2 02-checks-nothing # no check passed (exit 0)"
check "runner: a test that only calls fail, and finds nothing, fails" \
	has "$dir/run.ktap" "not ok 3 03-fails-only # no check passed (exit 0)"
check "runner: a test that only skips sub-checks fails" \
	has "$dir/run.ktap" "not ok 4 04-skips-only # no check passed (exit 0)"
check "runner: a test that exits 4 skips" has "$dir/run.ktap" "ok 5 05-skips # SKIP no MTE here"
check "runner: a new W taint fails the test" has "$dir/run.ktap" "not ok 6 06-warns # a sub-check failed (exit 0)"
check "runner: ... with the sub-check kernel not tainted (new: W)" \
	has "$dir/run.ktap" "    not ok 2 kernel not tainted (new: W)"
check "runner: a W set before the test is not the test's" has "$dir/run.ktap" "ok 7 07-after-a-warning"
check "runner: new B, D and L fail the test" \
	has "$dir/run.ktap" "    not ok 2 kernel not tainted (new: B D L)"
check "runner: other taint flags (O, E, N) do not" has "$dir/run.ktap" "ok 9 09-other-taints"
marks=$(for t in $names; do echo "mig-test: start $t"; echo "mig-test: end $t"; done)
check "runner: each test marked in the kernel log, in order" \
	diff <(echo "$marks") "$root/dev/kmsg"
check "runner: the taint failure on the console" \
	has "$dir/run.console" "  FAIL: kernel not tainted (new: W)"
check "runner: each test's start and time right before its result" \
	awk '/^(not )?ok [0-9]+ / { n++; if (p2 !~ /^# start=[0-9-]+T[0-9:]+Z$/ || p1 !~ /^# time=[0-9]+s$/) bad++ }
	     { p2 = p1; p1 = $0 } END { exit !(n == 9 && !bad) }' "$dir/run.ktap"

# ---- the report -------------------------------------------------------------
kunit=${KUNIT:-$TREE/tools/testing/kunit}
R=$dir/results
mkdir -p "$R"
printf 'KTAP version 1\n1..1\nok 1 a case\n# 1 passed, 0 failed\n' > "$R/judge.ktap"
# boot NAME ACCEL ENDED TESTS [retry]: NAME.boot as scripts/test.sh writes it
boot() {
	{ echo "tests=$4"; echo "accel=$2"; echo "ended=$3"
	  [ "$3" != finished ] || echo finished=yes
	  [ -z "${5:-}" ] || echo "retry=$1-retry"; } > "$R/$1.boot"
	: > "$R/$1.reports"
	printf 'KTAP version 1\n1..%s\n' "$(echo "$4" | wc -w)" > "$R/$1.out"
}
# the main boot: reports during 02 and 03, between tests, and at boot
boot main tcg-single finished "01-a 02-b 03-c 04-d"
printf '%s\n' "# start=2026-11-29T10:00:00Z" "# time=12s" "ok 1 01-a" \
	"    KTAP version 1" "    # Subtest: 02-b" "    1..1" "    ok 1 data exact" \
	"ok 2 02-b" "ok 3 03-c # SKIP no MTE here" "ok 4 04-d" >> "$R/main.out"
printf '%s\n' "1 x BUG: KASAN: slab-use-after-free in dcbm_callback (during 02-b)" \
	"2 x WARNING at mm/migrate.c:100 f (during 03-c)" "1 x hard lockup (between tests)" \
	"1 x kmemleak: suspected memory leaks (during boot)" > "$R/main.reports"
# multi-threaded TCG, a stale int3 during 03 after a report during 02
boot mt tcg "died of a stale int3 (QEMU TCG, not the kernel: see docs/testbed.md)" "01-a 02-b 03-c" retry
echo "ok 1 01-a" >> "$R/mt.out"
printf '%s\n' "stale int3 (QEMU, not the kernel): Oops: int3: 0000 [#1]" \
	"1 x WARNING at mm/migrate.c:100 f (during 02-b)" > "$R/mt.reports"
boot mt-retry tcg-single finished "02-b 03-c"
printf '%s\n' "ok 1 02-b" "ok 2 03-c" >> "$R/mt-retry.out"
# single-threaded TCG: a QEMU crash, an early stop and a stale int3 fail
boot crash tcg-single "was lost to a QEMU crash under tcg-single (not multi-threaded TCG: a failure, see docs/testbed.md)" "01-a 02-b" retry
echo "ok 1 01-a" >> "$R/crash.out"
boot early tcg-single "stopped before its init started (qemu exit 1)" "01-a" retry
boot int3 tcg-single "did not finish: crashed, stalled or timed out (qemu exit 0)" "01-a" retry
echo "stale int3 (QEMU, not the kernel): Oops: int3: 0000 [#1]" > "$R/int3.reports"
# multi-threaded TCG: the same early stop and crash are the emulator's
boot mtearly tcg "stopped before its init started (qemu exit 1)" "01-a" retry
boot mtcrash tcg "was lost to a QEMU crash (the emulator, not the kernel: see docs/testbed.md)" "01-a" retry
if [ -e "$kunit/kunit_parser.py" ]; then
	/usr/bin/python3 "$TOP/scripts/test-report.py" --kunit "$kunit" --results "$R" --skips /dev/null \
		"$R/judge.ktap" main mt mt-retry crash early int3 mtearly mtcrash > "$dir/report.out" 2>&1 || true
else
	echo "no KTAP parser in $kunit (KUNIT=DIR)" > "$dir/report.out"
fi
# each boot's part of test.ktap: $dir/boot.NAME
[ ! -e "$R/test.ktap" ] ||
	awk -v d="$dir" '/^    # Subtest: / { f = d "/boot." $3 } f { print > f }' "$R/test.ktap"
for b in main mt crash early int3 mtearly mtcrash; do [ -e "$dir/boot.$b" ] || : > "$dir/boot.$b"; done
K=$dir/boot.main
check "report: a test with a report during it fails" \
	has "$K" "    not ok 2 02-b # the kernel reported during it"
check "report: ... with the report in its diagnostics" \
	follows "$K" "    # 1 x BUG: KASAN: slab-use-after-free in dcbm_callback (during 02-b)" \
		"    not ok 2 02-b # the kernel reported during it"
check "report: a skipped test with a report during it fails" \
	has "$K" "    not ok 3 03-c # the kernel reported during it"
check "report: a test without one passes" has "$K" "    ok 1 01-a"
check "report: reports between tests and at boot fail no test" has "$K" "    ok 4 04-d"
check "report: ... and all fail the kernel log" has "$K" "    not ok 6 kernel log clean"
check "report: the failure list names the test and its report" \
	grep -q -x -F -e "not ok: main/02-b (the kernel reported during it)" "$dir/report.out"
check "report: ... in test.json" grep -q -F '"main/02-b (the kernel reported during it)"' "$R/test.json"
check "report: ... whose tree has the test failed" /usr/bin/python3 -c '
import json, sys
tree = json.load(open(sys.argv[1]))["tree"]
boot = next(t for t in tree["subtests"] if t["name"] == "main")
sys.exit(next(t for t in boot["subtests"] if t["name"] == "02-b")["status"] != "FAILURE")' "$R/test.json"
check "report: under tcg, a stale int3 is the emulator's" \
	has "$dir/boot.mt" "    ok 3 03-c # SKIP the guest died of a stale int3 (QEMU TCG); run again in mt-retry"
check "report: ... but a test with a report before it fails" \
	has "$dir/boot.mt" "    not ok 2 02-b # did not report: the guest died, stalled or timed out; the kernel reported during it"
check "report: under tcg-single a QEMU crash fails the tests it cut" \
	has "$dir/boot.crash" "    not ok 2 02-b # did not report: the guest died, stalled or timed out"
check "report: ... and the boot" \
	has "$dir/boot.crash" "    not ok 3 guest finished its job # was lost to a QEMU crash under tcg-single (not multi-threaded TCG: a failure, see docs/testbed.md)"
check "report: under tcg-single an early stop fails" \
	has "$dir/boot.early" "    not ok 2 guest finished its job # stopped before its init started (qemu exit 1)"
check "report: under tcg-single a stale int3 is a kernel report" \
	has "$dir/boot.int3" "    # stale int3 (QEMU, not the kernel): Oops: int3: 0000 [#1]"
check "report: ... that fails the kernel log" grep -q -x -F "not ok: int3/kernel log clean" "$dir/report.out"
check "report: under tcg an early stop is the emulator's" \
	has "$dir/boot.mtearly" "    ok 1 01-a # SKIP the guest stopped before its init started (qemu exit 1); run again in mtearly-retry"
check "report: under tcg a QEMU crash is the emulator's" \
	has "$dir/boot.mtcrash" "    ok 2 guest finished its job # SKIP was lost to a QEMU crash (the emulator, not the kernel: see docs/testbed.md); the tests it had not run went to mtcrash-retry"
check "report: the summary" grep -q -x -F "14 passed, 12 failed, 6 skipped" "$dir/report.out"
# record PATH FIELD VALUE: test.json's record of PATH has FIELD = VALUE
record() {
	/usr/bin/python3 -c '
import json, sys
tests = {t["path"]: t for t in json.load(open(sys.argv[1]))["tests"]}
t = tests.get(sys.argv[2])
print(sys.argv[2], t and t.get(sys.argv[3]))
sys.exit(t is None or str(t.get(sys.argv[3])) != sys.argv[4])' "$R/test.json" "$@"
}
check "report: test.json records a test's start, duration, status" \
	bash -c "$(declare -f record); R=\$1; record main.01-a start_time 2026-11-29T10:00:00Z &&
		record main.01-a duration 12 && record main.01-a status PASS && record main.02-b status FAIL" sh "$R"
check "report: ... each sub-check by its path" record main.02-b.data_exact status PASS
check "report: ... a test that did not report as MISS" record crash.02-b status MISS
check "report: ... an allowed skip as SKIP" record mt.03-c status SKIP
check "report: ... ids unique, each with origin, build and architecture" /usr/bin/python3 -c '
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
ids = [t["id"] for t in tests]
sys.exit(len(ids) != len(set(ids)) or len(ids) < 30 or
         not all(t["origin"] and t["build_id"] and t["environment"]["misc"]["arch"] for t in tests))' "$R/test.json"

# ---- groups -----------------------------------------------------------------
printf '%s\n' "# a group" "15-migcheck	# a comment" "" "60-batch-off" > "$dir/group"
check "groups: the names of a group file, in its order" \
	diff <(printf '%s\n' 15-migcheck 60-batch-off) <(group_tests "$dir/group" "$(printf '%s\n' 10-x 60-batch-off 15-migcheck)")
echo "80-dcbm-integrity" >> "$dir/group"
check "groups: a test that no boot of the run runs is an error" \
	bash -c '! (. "$1/scripts/lib.sh"; group_tests "$2" "$(printf "%s\n" 15-migcheck 60-batch-off)" "the main boot") 2> "$3"; grep -q "80-dcbm-integrity is run by none of the main boot" "$3"' \
	sh "$TOP" "$dir/group" "$dir/err"
echo "99-no-such-test" > "$dir/group"
check "groups: a name with no test is an error" \
	bash -c '! (. "$1/scripts/lib.sh"; group_tests "$2" "15-migcheck") 2> "$3"; grep -q "no test 99-no-such-test" "$3"' \
	sh "$TOP" "$dir/group" "$dir/err"
for g in quick arm64-4k arm64-64k arm64-smoke; do
	check "groups: guest/tests/$g names only tests that exist" \
		bash -c '. "$1/scripts/lib.sh"; group_tests "$1/guest/tests/$2" "$(cd "$1/guest/tests" && ls [0-9][0-9]-*.sh | sed "s/\.sh\$//")"' \
		sh "$TOP" "$g"
done

[ "$n" -eq "$planned" ] || { echo "# planned $planned cases, ran $n"; bad=$((bad + 1)); }
echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
