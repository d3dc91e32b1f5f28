#!/bin/sh
# KUnit suites of the series, run by loading their modules; their KTAP (in
# dmesg) becomes this test's sub-checks, every case and suite.
. /opt/mig/tests/lib.sh

modprobe migrate_copy_kunit || { fail "cannot load migrate_copy_kunit"; finish; }
dmesg | sed -n 's/^\[[^]]*\] //p' | sed -n '/KTAP version/,/^ok [0-9]* migrate_copy$/p' > /tmp/kunit.log
cat /tmp/kunit.log
tap_results kunit < /tmp/kunit.log
grep -q "^ok [0-9]* migrate_copy$" /tmp/kunit.log || fail "the migrate_copy suite did not pass"
finish
