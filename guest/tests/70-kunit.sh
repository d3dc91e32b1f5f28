#!/bin/sh
# KUnit suites of the series, run by loading their modules; results in dmesg.
modprobe migrate_copy_kunit || { echo "cannot load migrate_copy_kunit"; exit 1; }
dmesg | grep -E "# migrate_copy|ok [0-9]+ (migrate_copy|reasons_)" | sed 's/^\[[^]]*\] //'
dmesg | grep -q "ok [0-9]* migrate_copy$" && ! dmesg | grep -q "not ok [0-9]* migrate_copy"
