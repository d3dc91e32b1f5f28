#!/bin/sh
# CPUs go offline and online in a loop while mtcopy copies migrations with
# workers on every CPU: a worker's CPU may go away between mtcopy's choice
# of it and the work running (the workqueue then runs it elsewhere), and a
# worker held up by the hotplug past mtcopy's wait has its folios kept, which
# leaves them where they were for that call. No byte may be wrong, and the
# kernel log stays clean.
. /opt/mig/tests/lib.sh

last=$(($(nproc --all) - 1))
modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
echo $((last + 1)) > $MTCOPY/threads
echo $((last + 1)) > $MTCOPY/max_workers
echo 1 > $TUN/mtcopy/min_batch_pages
select_migrator mtcopy
snap
# verified moves of 16 MiB between nodes 0 and 1, until told to stop
rm -f /tmp/stop /tmp/bg.failed
(n=1; while [ ! -e /tmp/stop ]; do
	pathcheck -n $((1 - n)) -s 16 -f 4,64,2048 move $n > /tmp/bg.log 2>&1 ||
		{ cat /tmp/bg.log; touch /tmp/bg.failed; }
	n=$((1 - n))
done) &
bg=$!
cycles=0
end=$(($(cut -d. -f1 /proc/uptime) + 40))
while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
	for c in $(seq 1 $last); do
		echo 0 > /sys/devices/system/cpu/cpu$c/online || fail "offline CPU $c"
		sleep 0.5
		echo 1 > /sys/devices/system/cpu/cpu$c/online || fail "online CPU $c"
		cycles=$((cycles + 1))
	done
done
touch /tmp/stop
wait $bg
[ ! -e /tmp/bg.failed ] && pass "every migration under CPU hotplug exact" ||
	fail "every migration under CPU hotplug exact" "a migration under CPU hotplug was not exact"
echo "$cycles offline/online cycles, $(delta batches) mtcopy batches," \
     "$(delta folios) folios copied, $(delta kept) kept, $(delta fallback_error) fell back"
[ "$(delta batches)" -gt 0 ] || fail "mtcopy copied no batch"
for c in $(seq 1 $last); do
	[ "$(cat /sys/devices/system/cpu/cpu$c/online)" = 1 ] || fail "CPU $c left offline"
done
select_migrator none
echo 64 > $TUN/mtcopy/min_batch_pages
echo 2 > $MTCOPY/threads
unload migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
