#!/bin/sh
# A real-time task taking a worker's CPU does not keep a batch unmapped:
# once its own share is copied, mtcopy waits at most 100 ms for a run in
# progress, then keeps that run's folios (the worker releases them when it
# gets its CPU back).
#
# The migrating task, a normal one (a real-time task copies alone: 98)
# confined to CPUs 0 and 1, migrates 64K folios with migrate_pages(2),
# 256 MiB per batch, so that a batch copy lasts longer than the trigger
# takes. As soon as a batch copy begins (a trace instance of its own, read
# through trace_pipe), SCHED_FIFO loops take every CPU but the one the copy
# began on (the task's) for HOG_S seconds: the worker, on the other CPU
# the task may use, is preempted in the middle of its copy and gets only
# what RT throttling and 6.12's fair server leave it (50 ms of every
# second; turning the fair server off at run time warns in 6.12's
# sub_running_bw()), while the task goes on. Twice.
# Checked: every byte; the task gave up on a preempted worker (folios
# kept) instead of waiting for it; no batch copy lasted as long as a hog.
. /opt/mig/tests/lib.sh

# This script, its trigger and the hogs' launchers stay off CPUs 0 and 1:
# mtcopy asks only a CPU idle when a batch starts for help, and the
# worker must be there when the hog comes.
taskset -p -c 2-$(($(nproc --all) - 1)) $$ > /dev/null ||
	fail "cannot move the test off CPUs 0 and 1"
HOG_S=20 WINDOWS=2	# the batch copies take 3-5 s here
TRIGGER=$TRACING/instances/rthog
modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo 2 > $MTCOPY/threads
echo 1 > $TUN/mtcopy/min_batch_pages
select_migrator mtcopy
batch=$(cat $TUN/max_batch_pages) chunk=$(cat $TUN/chunk_pages)
echo 65536 > $TUN/max_batch_pages
# whole batches: a pipelined chunk's copy is over before the hogs start,
# and the next chunk finds the worker's CPU still busy with the last one
# (only idle CPUs are asked)
echo 0 > $TUN/chunk_pages
cpus=$(seq 0 $(($(nproc --all) - 1)))
mkdir -p $TRIGGER

# hog_next_copy: once the next batch copy begins, every CPU taken for HOG_S s
hog_next_copy() {
	: > $TRIGGER/trace
	echo 1 > $TRIGGER/events/migrate/mm_migrate_batch_copy_begin/enable
	line=$(timeout 60 grep -m 1 mm_migrate_batch_copy_begin $TRIGGER/trace_pipe) ||
		fail "no batch copy began within 60 s"
	# "<...>-PID [CPU] ...": the task's CPU, with no preemption point
	# between the event and the copy (PREEMPT_NONE)
	self=$(echo "$line" | sed -n 's/.*\[0*\([0-9][0-9]*\)\].*/\1/p')
	hogs=""
	for c in $cpus; do
		[ "$c" != "$self" ] || continue
		{ rthog $c $HOG_S || echo $c >> /tmp/hog.failed; } &
		hogs="$hogs $!"
	done
	cut -d' ' -f1 /proc/uptime >> /tmp/hog.starts
	echo 0 > $TRIGGER/events/migrate/mm_migrate_batch_copy_begin/enable
	wait $hogs
}

snap
events on mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
rm -f /tmp/hog.done /tmp/hog.failed /tmp/hog.starts /tmp/moves.failed
(i=0; until [ -e /tmp/hog.done ]; do
	taskset -c 0,1 pathcheck -n 0 -s 256 -f 64 migrate 1 \
		> /tmp/move.out 2>&1 || { cat /tmp/move.out; echo $i >> /tmp/moves.failed; }
	i=$((i + 1))
done; echo "$i migrations") &
moves=$!
for w in $(seq $WINDOWS); do
	hog_next_copy
done
touch /tmp/hog.done
wait $moves
events off mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
rmdir $TRIGGER

[ ! -e /tmp/hog.failed ] || fail "rthog failed on CPUs $(sort -u /tmp/hog.failed | tr '\n' ' ')"
[ ! -e /tmp/moves.failed ] && pass "every migration's data exact" ||
	fail "every migration's data exact" "data check failed in migrations $(tr '\n' ' ' < /tmp/moves.failed)"
# the batch copies, longest first: duration and start (s)
awk '/mm_migrate_batch_copy_begin:/ { sub(":", "", $4); t = $4 }
	/mm_migrate_batch_copy_end:/ { sub(":", "", $4); printf "%.3f %.3f\n", $4 - t, t }' \
	$TRACING/trace | sort -rn > /tmp/copies
longest=$(awk '{ print $1; exit }' /tmp/copies)
echo "hogs started at (s): $(tr '\n' ' ' < /tmp/hog.starts)"
echo "batches $(delta batches), longest copies (s, at): $(head -3 /tmp/copies | tr '\n' ' ')"
echo "folios kept $(delta kept)"
[ "$(delta kept)" -gt 0 ] && pass "folios kept: the task gave up on its preempted worker" ||
	fail "folios kept: the task gave up on its preempted worker" "no folio kept: the task waited for its preempted worker"
awk -v l="${longest:-0}" -v h=$HOG_S 'BEGIN { exit !(l < h) }' &&
	pass "no batch copy lasted as long as a hog" ||
	fail "no batch copy lasted as long as a hog" "a batch copy took $longest s, as long as a hog"
[ "$(delta batches)" -gt 0 ] || fail "no batch"

echo "$batch" > $TUN/max_batch_pages
echo "$chunk" > $TUN/chunk_pages
select_migrator none
echo 64 > $TUN/mtcopy/min_batch_pages
unload migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
