#!/bin/sh
# The series' own kselftest, tools/testing/selftests/mm/migrate_copy (what a
# reviewer runs with make -C tools/testing/selftests TARGETS=mm), with every
# migrator registered: mtcopy, dcbm on 2 swdma channels (the testbed's
# timeout) and the test migrator. Each case is a sub-check; none may skip
# with 4K pages (anonymous and shmem folios of 64K and PMD size exist on
# x86-64 and arm64 4K). Then its positive control: the test migrator's
# mark_only mode (folios marked copied, not copied) must make it fail.
. /opt/mig/tests/lib.sh

modprobe migrate_mtcopy || fail "cannot load migrate_mtcopy"
modprobe test_migrator || fail "cannot load test_migrator"
dcbm_load 2

{ migrate_copy 2>&1; echo $? > /tmp/mc.rc; } | tee /tmp/mc.log
tap_results migrate_copy < /tmp/mc.log
[ "$(cat /tmp/mc.rc)" -eq 0 ] || fail "migrate_copy exits 0" "exit $(cat /tmp/mc.rc)"
totals=$(grep '^# Totals' /tmp/mc.log)
case $BASE_KB:$totals in
4:"# Totals: pass:35 fail:0 xfail:0 xpass:0 skip:0 error:0") ;;
64:*" fail:0 "*) ;;
*) fail "not every case passed: $totals" ;;
esac

echo mark_only > $TUN/test/mode
migrate_copy -r migrate_copy.test.anon_base_move_pages > /tmp/mc-control.log 2>&1
rc=$?
echo copy > $TUN/test/mode
grep '#' /tmp/mc-control.log | head -5
if [ $rc -ne 0 ] && grep -q 'bytes differ' /tmp/mc-control.log; then
	pass "the test migrator's mark_only mode fails the selftest (exit $rc)"
else
	fail "mark_only did not fail the selftest: exit $rc"
fi
reset_migration
finish
