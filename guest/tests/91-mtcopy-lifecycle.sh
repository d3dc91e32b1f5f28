#!/bin/sh
# Thread-count and placement changes, select/deselect and unload of mtcopy
# while migrations run: every migration stays exact.
. /opt/mig/tests/lib.sh

rm -f /tmp/stop /tmp/bg.failed
(while [ ! -e /tmp/stop ]; do
	migbench -s 2 -k 4,2048 -r 1 -V 0,1,2 > /tmp/bg.log 2>&1 ||
		{ cat /tmp/bg.log; echo bad > /tmp/bg.failed; }
done) &
bg=$!

i=0
while [ $i -lt 10 ]; do
	modprobe migrate_mtcopy || fail "modprobe $i"
	select_migrator mtcopy || fail "select $i"
	for t in 1 3 8 2; do echo $t > $MIG/mtcopy/threads; sleep 0.3; done
	echo spread > $MIG/mtcopy/placement
	rmmod migrate_mtcopy 2>/dev/null && fail "rmmod of the active mtcopy succeeded"
	select_migrator kernel || fail "deselect $i"
	rmmod migrate_mtcopy || fail "rmmod $i"
	i=$((i + 1))
done
touch /tmp/stop
wait $bg
[ -e /tmp/bg.failed ] && fail "a migration under thread changes/unload was not exact"
finish
