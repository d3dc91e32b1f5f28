#!/bin/sh
# A migrator that keeps a pair (a copy that may still be running) holds its
# source as well as its destination, and the core must not free the source
# before the migrator lets it go (include/linux/migrate_copy.h, @kept).
# Runs with debug_pagealloc=on (the isolation boot): freed pages leave the
# kernel's direct map, so reading a freed source faults.
#
# The test migrator's keep mode keeps every odd pair and reads its source
# from a work item delay_ms (300) after the core has given the kept
# destination up, by when the core has moved the pair with the CPU: a
# source freed then is read after its free (the contract before this rule
# said an engine may do so). migcheck checks every byte after each hop
# (not where the pages are: kept pairs stay behind by design); the kernel
# log is judged as for every test.
. /opt/mig/tests/lib.sh

grep -q -w "debug_pagealloc=on" /proc/cmdline ||
	{ skip "needs debug_pagealloc=on (the isolation boot of make test)"; finish; }
modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
T=$TUN/test
echo syscall_or_cpuset > $MIG/reasons || fail "reasons: syscall_or_cpuset rejected"
select_migrator test || fail "cannot select test"
echo keep > $T/mode || fail "mode keep rejected"
echo 300 > $T/delay_ms
snap
# Every call keeps half of what it moves, and a kept pair does not move
# until the late copy lets its source go: migcheck's placement check fails
# by design here ("did not move"), its byte check must not.
migcheck -q -s 1 -k 4,64 -m private,file -c move_pages -n 0,1,0 > /tmp/47.out 2>&1
rc=$?
cat /tmp/47.out
[ $rc -le 1 ] || fail "migcheck could not run (exit $rc)"
! grep -q "data corrupted" /tmp/47.out && pass "data exact after moves of kept pairs" ||
	fail "data exact after moves of kept pairs" "data not exact after moves of kept pairs"
grep -q "did not move" /tmp/47.out ||
	echo "every page moved: no kept source was held through a move"
test_migrator_idle "late reads"
echo "kept +$(delta kept), copied +$(delta folios), retried +$(delta fallback_retry)"
# a read of a freed source is a KASAN report or a fault: the log judge's
[ "$(delta kept)" -gt 0 ] && pass "kept sources read late" "$(delta kept) kept" ||
	fail "kept sources read late" "the test migrator kept no pair: no source was read late"
[ "$(cat $T/kept_in_use)" -eq 0 ] || fail "no kept folio in use (test/kept_in_use)" "$(cat $T/kept_in_use) kept folios were in use"
reset_migration	# unloads the test migrator, its settings with it
finish
