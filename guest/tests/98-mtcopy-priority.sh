#!/bin/sh
# mtcopy's workers (kworkers at nice 0) copy only for a task entitled to
# that much, and never more than max_workers of them at once in the whole
# system. The workqueue tracepoints show each mtcopy work that ran and how
# many ran at once while pathcheck moves 32 MiB of 2M folios (node 0 to 1,
# 4 threads, every batch offered to mtcopy): for a task at nice 0 works
# must run (the control); at nice 19, SCHED_IDLE and SCHED_FIFO none may
# (the task copies alone). Then three tasks at nice 0 migrate at once with
# max_workers 1: works must run, never two at a time. Every byte checked.
# Series v4 ran its workers at nice -20 (WQ_HIGHPRI) for any task, with no
# cap.
. /opt/mig/tests/lib.sh

M=$MIG/mtcopy
modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo 4 > $M/threads
echo 1 > $M/min_batch_pages
max=$(cat $M/max_workers)
echo "max_workers at load: $max ($(nproc) CPUs online)"
[ "$max" -eq $(( $(nproc) / 2 )) ] || fail "max_workers at load is $max, not half the CPUs"
echo "$(nproc)" > $M/max_workers
select_migrator mtcopy

# works CMD...: runs CMD (its exit status: the data check) with the
# workqueue events on; prints "WORKS MOST": the mtcopy works that ran, and
# the most that ran at once
works() {
	events on workqueue/workqueue_execute_start workqueue/workqueue_execute_end
	"$@" > /tmp/works.log 2>&1 ||
		{ cat /tmp/works.log; fail "$*: data check failed"; } >&2
	events off workqueue/workqueue_execute_start workqueue/workqueue_execute_end
	awk '/workqueue_execute_start:.*function mtcopy_work_fn/ { n++; if (++cur > most) most = cur }
	     /workqueue_execute_end:.*function mtcopy_work_fn/ { if (cur > 0) cur-- }
	     END { print n + 0, most + 0 }' $TRACING/trace
}
MOVE="pathcheck -n 0 -s 32 -f 2048 move 1"
nice19() { sh -c 'renice -n 19 -p $$ > /dev/null && exec "$@"' sh "$@"; }
three() { $MOVE & a=$!; $MOVE & b=$!; $MOVE & c=$!; wait $a && wait $b && wait $c; }

snap
# shellcheck disable=SC2086  # words
set -- $(works $MOVE)
echo "nice 0: $1 works ran; folios +$(delta folios)"
[ "$1" -gt 0 ] || fail "nice 0: no worker copied (the control)"
for wrap in nice19 "rthog -i" "rthog -r 10"; do
	snap
	# shellcheck disable=SC2086  # words
	set -- $(works $wrap $MOVE)
	echo "$wrap: $1 works ran; folios +$(delta folios)"
	[ "$(delta folios)" -gt 0 ] || fail "$wrap: mtcopy copied nothing"
	[ "$1" -eq 0 ] || fail "$wrap: $1 works ran for a task that must copy alone"
done

echo 1 > $M/max_workers
snap
set -- $(works three)
echo "3 tasks, max_workers 1: $1 works ran, at most $2 at once; folios +$(delta folios)"
[ "$1" -gt 0 ] || fail "max_workers 1: no worker copied"
[ "$2" -le 1 ] || fail "max_workers 1: $2 works ran at once"
echo 0 > $M/max_workers
snap
# shellcheck disable=SC2086  # words
set -- $(works $MOVE)
echo "max_workers 0: $1 works ran; folios +$(delta folios)"
[ "$1" -eq 0 ] || fail "max_workers 0: $1 works ran"
# above nr_cpu_ids ("0-3": 4)
for bad in -1 $(( $(sed 's/.*-//' /sys/devices/system/cpu/possible) + 2 )) x; do
	! echo "$bad" > $M/max_workers 2>/dev/null || fail "max_workers took '$bad'"
done
[ "$(cat $M/max_workers)" -eq 0 ] || fail "a rejected write changed max_workers"

select_migrator none
echo 64 > $M/min_batch_pages
rmmod migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
