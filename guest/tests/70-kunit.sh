#!/bin/sh
# KUnit suites of the series, run by loading their modules; their KTAP (in
# dmesg) becomes this test's sub-checks, every case and suite.
. /opt/mig/tests/lib.sh

modprobe migrate_copy_kunit || { fail "cannot load migrate_copy_kunit"; finish; }
dmesg | sed -n 's/^\[[^]]*\] //p' | sed -n '/KTAP version/,/^ok [0-9]* migrate_copy$/p' > /tmp/kunit.log
cat /tmp/kunit.log
tap_results kunit < /tmp/kunit.log
grep -q "^ok [0-9]* migrate_copy$" /tmp/kunit.log || fail "the migrate_copy suite did not pass"
# Every case of the suite ran: as many as migrate_copy_test_cases[] in
# mm/migrate_copy_kunit.c holds (CASES changes with it). A case dropped
# from the array passes every check above.
CASES=6
plan=$(sed -n 's/^    1\.\.\([0-9]*\)$/\1/p' /tmp/kunit.log | head -1)
ran=$(grep -c -E '^    (not )?ok [0-9]+ ' /tmp/kunit.log)
echo "migrate_copy: plan ${plan:-none}, $ran cases reported, $CASES expected"
[ "${plan:-0}" -eq "$CASES" ] && [ "$ran" -eq "$CASES" ] &&
	pass "kunit: every case of migrate_copy ran" ||
	fail "kunit: every case of migrate_copy ran"
finish
