#!/bin/sh
# Thread-count and placement changes, select/deselect and unload of mtcopy
# while migrations run: every migration stays exact.
. /opt/mig/tests/lib.sh

start_migrations 4,2048

i=0
while [ $i -lt 10 ]; do
	modprobe migrate_mtcopy || fail "modprobe $i"
	select_migrator mtcopy || fail "select $i"
	for t in 1 3 8 2; do echo $t > $MTCOPY/threads; sleep 0.3; done
	echo spread > $MTCOPY/placement
	rmmod migrate_mtcopy 2>/dev/null && fail "rmmod of the active mtcopy succeeded"
	select_migrator none || fail "deselect $i"
	unload migrate_mtcopy || fail "rmmod $i"
	i=$((i + 1))
done
stop_migrations "thread changes/unload"
leak_check "mtcopy loaded, reconfigured and unloaded"
finish
