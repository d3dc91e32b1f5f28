#!/bin/sh
# A real-time task taking a worker's CPU does not keep a batch unmapped:
# mtcopy waits at most 100 ms for a run in progress, then keeps that run's
# folios (the worker releases them when it gets its CPU back).
#
# Migrations of 2M folios (move_pages(): a batch per folio) run with the
# task confined to CPUs 0 and 1.
# Three times, SCHED_FIFO loops take every CPU but 0 for 3 seconds, with
# RT throttling and 6.12's fair server (50 ms of every second for normal
# tasks) off there: the worker is on a hogged CPU (the previous mtcopy,
# which ignored the task's affinity, put it on node 1). A hog that starts
# while a worker copies preempts it. Every byte is checked, and no batch
# copy may take a second; the previous mtcopy waited for the worker, that
# is for the hog (3 s).
. /opt/mig/tests/lib.sh

HOG_S=3 WINDOWS=3
FS=/sys/kernel/debug/sched/fair_server
modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo 2 > $MIG/mtcopy/threads
echo 1 > $MIG/mtcopy/min_batch_pages
select_migrator mtcopy
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
others=$(seq 1 $(($(nproc --all) - 1)))

# hog: every CPU but 0 taken for HOG_S seconds
hog() {
	echo -1 > /proc/sys/kernel/sched_rt_runtime_us
	cut -d' ' -f1 /proc/uptime >> /tmp/hog.starts
	hogs=""
	for c in $others; do
		fs_runtime=$(cat $FS/cpu$c/runtime)
		echo 0 > $FS/cpu$c/runtime || fail "cannot turn the fair server of CPU $c off"
		{ rthog $c $HOG_S || echo $c >> /tmp/hog.failed; } &
		hogs="$hogs $!"
	done
	wait $hogs
	for c in $others; do echo $fs_runtime > $FS/cpu$c/runtime; done
	echo "$rt" > /proc/sys/kernel/sched_rt_runtime_us
}

snap
events on mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
rm -f /tmp/hog.done /tmp/hog.failed /tmp/hog.starts /tmp/moves.failed
(i=0; until [ -e /tmp/hog.done ]; do
	taskset -c 0,1 pathcheck -n 0 -s 32 -f 2048 move 1 > /tmp/move.out 2>&1 ||
		{ cat /tmp/move.out; echo $i >> /tmp/moves.failed; }
	i=$((i + 1))
done; echo "$i moves") &
moves=$!
for w in $(seq $WINDOWS); do
	sleep 1
	hog
done
touch /tmp/hog.done
wait $moves
events off mm_migrate_batch_copy_begin mm_migrate_batch_copy_end

[ ! -e /tmp/hog.failed ] || fail "rthog failed on CPUs $(sort -u /tmp/hog.failed | tr '\n' ' ')"
[ ! -e /tmp/moves.failed ] || fail "data check failed in moves $(tr '\n' ' ' < /tmp/moves.failed)"
# the batch copies, longest first: duration and start (s)
awk '/mm_migrate_batch_copy_begin:/ { sub(":", "", $4); t = $4 }
	/mm_migrate_batch_copy_end:/ { sub(":", "", $4); printf "%.3f %.3f\n", $4 - t, t }' \
	$TRACING/trace | sort -rn > /tmp/copies
longest=$(awk '{ print $1; exit }' /tmp/copies)
echo "hog windows started at (s): $(cat /tmp/hog.starts | tr '\n' ' ')"
echo "batches $(delta batches), longest copies (s, at): $(head -3 /tmp/copies | tr '\n' ' ')"
echo "folios kept $(delta kept)"
awk -v l="${longest:-0}" 'BEGIN { exit !(l < 1) }' ||
	fail "a batch copy took $longest s with the worker's CPU taken"
[ "$(delta batches)" -gt 0 ] || fail "no batch"

select_migrator none
echo 64 > $MIG/mtcopy/min_batch_pages
rmmod migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
