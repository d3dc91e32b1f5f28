#!/bin/sh
# mtcopy's workers (kworkers at nice 0) copy only for a task entitled to
# that much, and never more than max_workers of them at once in the whole
# system. The workqueue tracepoints show each mtcopy work queued, where it
# ran and how many ran at once while pathcheck moves 32 MiB of 2M folios
# (node 0 to 1, 4 threads, every batch offered to mtcopy, only
# move_pages() batching): for a task at nice 0 works must be queued and run
# on kworkers at nice 0 (the control); at nice 19, SCHED_IDLE and
# SCHED_FIFO none may be queued (the task copies alone); with a nice-0 hog
# on every CPU none either, and again some once they are gone (only idle
# CPUs are asked). Then three tasks
# at nice 0 migrate at once with max_workers 1; with 0, none is queued.
# Every byte checked. Series v4 ran its workers at nice -20 (WQ_HIGHPRI)
# for any task, with no cap.
. /opt/mig/tests/lib.sh

M=$MTCOPY
modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo 4 > $M/threads
echo 1 > $TUN/mtcopy/min_batch_pages
online=$(grep -c '^processor' /proc/cpuinfo)	# online CPUs
max=$(cat $M/max_workers)
echo "max_workers at load: $max ($online CPUs online)"
[ "$max" -eq $((online / 2)) ] || fail "max_workers at load is $max, not half the CPUs"
echo "$online" > $M/max_workers
echo syscall_or_cpuset > $MIG/reasons	# no kswapd or kcompactd batch
select_migrator mtcopy

WQ="workqueue/workqueue_queue_work workqueue/workqueue_execute_start workqueue/workqueue_execute_end
    kmem/kmalloc"
# works CMD...: runs CMD (its exit status: the data check) with the
# workqueue events on; prints "QUEUED MOST": the mtcopy works queued, and
# the most that ran at once; /tmp/workers gets the PIDs that ran them,
# /tmp/allocs the sizes of mtcopy's batch allocations
works() {
	# shellcheck disable=SC2086  # a list
	events on $WQ
	"$@" > /tmp/works.log 2>&1 ||
		{ cat /tmp/works.log; fail "$*: data check failed"; } >&2
	# shellcheck disable=SC2086  # a list
	events off $WQ
	sed -n 's/^ *[^ ]*-\([0-9][0-9]*\) .*workqueue_execute_start:.*function mtcopy_work_fn.*/\1/p' \
		$TRACING/trace | sort -u > /tmp/workers
	sed -n 's/.*kmalloc:.*call_site=mtcopy_copy_start.*bytes_req=\([0-9]*\).*/\1/p' \
		$TRACING/trace | sort -u > /tmp/allocs
	awk '/workqueue_queue_work:.*function=mtcopy_work_fn/ { n++ }
	     /workqueue_execute_start:.*function mtcopy_work_fn/ { if (++cur > most) most = cur }
	     /workqueue_execute_end:.*function mtcopy_work_fn/ { if (cur > 0) cur-- }
	     END { print n + 0, most + 0 }' $TRACING/trace
}
MOVE="pathcheck -n 0 -s 32 -f 2048 move 1"
# shellcheck disable=SC2016  # expanded by that sh
nice19() { sh -c 'renice -n 19 -p $$ > /dev/null && exec "$@"' sh "$@"; }
three() {
	$MOVE & a=$!; $MOVE & b=$!; $MOVE & c=$!
	r=0; wait $a || r=1; wait $b || r=1; wait $c || r=1
	return $r
}

snap
# shellcheck disable=SC2046,SC2086  # words
set -- $(works $MOVE)
echo "nice 0: $1 works queued; folios +$(delta folios)"
[ "$1" -gt 0 ] && pass "nice 0: works queued (the control)" ||
	fail "nice 0: works queued (the control)" "nice 0: no work queued (the control)"
[ -s /tmp/workers ] || fail "nice 0: no work ran"
while read -r pid; do
	# field 19 of /proc/PID/stat: nice (kworkers live on for minutes)
	n=$(awk '{ print $19 }' /proc/$pid/stat 2>/dev/null) || continue
	[ "$n" -eq 0 ] || fail "nice 0: an mtcopy work ran on a kworker at nice $n"
done < /tmp/workers
echo "nice 0: works ran on $(wc -l < /tmp/workers) kworkers"
# Only idle CPUs are asked for help (issue 49): with a nice-0 CPU hog on
# every CPU, the task included, no CPU is idle when a batch starts, so no
# work may be queued and the task copies alone, as without mtcopy; once
# the hogs are gone, works are queued again. (Before the rule, works were
# queued on busy CPUs, where their time was charged to no cgroup.)
hogs_start
snap
# shellcheck disable=SC2046,SC2086  # words
set -- $(works $MOVE)
hogs_stop
cp /tmp/allocs /tmp/allocs.busy
echo "every CPU busy: $1 works queued; folios +$(delta folios)"
[ "$(delta folios)" -gt 0 ] || fail "every CPU busy: mtcopy copied nothing"
[ "$1" -eq 0 ] && pass "every CPU busy: no work queued, the task copies alone" ||
	fail "every CPU busy: no work queued, the task copies alone" "every CPU busy: $1 works queued on CPUs that were busy"
snap
# shellcheck disable=SC2046,SC2086  # words
set -- $(works $MOVE)
echo "hogs gone: $1 works queued"
[ "$1" -gt 0 ] && pass "hogs gone: works queued again on idle CPUs" ||
	fail "hogs gone: works queued again on idle CPUs" "hogs gone: no work queued on idle CPUs"

for wrap in nice19 "rthog -i" "rthog -r 10"; do
	snap
	# shellcheck disable=SC2046,SC2086  # words
	set -- $(works $wrap $MOVE)
	echo "$wrap: $1 works queued; folios +$(delta folios)"
	[ "$(delta folios)" -gt 0 ] || fail "$wrap: mtcopy copied nothing"
	[ "$1" -eq 0 ] && pass "$wrap: no work queued, the task copies alone" ||
		fail "$wrap: no work queued, the task copies alone" "$wrap: $1 works queued for a task that must copy alone"
	[ "$wrap" != nice19 ] || cp /tmp/allocs /tmp/allocs.alone
done
# The CPUs are chosen before a batch is allocated, so that with none idle
# its allocation has no room for workers (before, room for threads - 1 of
# them, about 1 KiB here and 22 KiB with threads 64): every size allocated
# while every CPU was busy is one of a task copying alone (nice 19).
extra=$(awk 'NR == FNR { alone[$1]; next } !($1 in alone)' /tmp/allocs.alone /tmp/allocs.busy)
echo "batch allocations (bytes): alone $(echo $(cat /tmp/allocs.alone)); every CPU busy $(echo $(cat /tmp/allocs.busy))"
[ -s /tmp/allocs.busy ] && [ -s /tmp/allocs.alone ] && [ -z "$extra" ] &&
	pass "every CPU busy: batches allocated without room for workers" ||
	fail "every CPU busy: batches allocated without room for workers" "sizes not of a task alone: ${extra:-none traced}"

# A worker's place is given back just before its function returns: the
# next one may be traced starting before the previous one is traced
# ending, so one more than the cap may show.
echo 1 > $M/max_workers
snap
# shellcheck disable=SC2046
set -- $(works three)
echo "3 tasks, max_workers 1: $1 works queued, at most $2 ran at once; folios +$(delta folios)"
[ "$1" -gt 0 ] || fail "max_workers 1: no work queued"
[ "$2" -le 2 ] && pass "max_workers 1: no more works at once than the cap lets show" ||
	fail "max_workers 1: no more works at once than the cap lets show" "max_workers 1: $2 works ran at once"
echo 0 > $M/max_workers
snap
# shellcheck disable=SC2046,SC2086  # words
set -- $(works $MOVE)
echo "max_workers 0: $1 works queued; folios +$(delta folios)"
[ "$1" -eq 0 ] && pass "max_workers 0: no work queued" || fail "max_workers 0: no work queued" "max_workers 0: $1 works queued"
# above nr_cpu_ids ("0-3": 4)
for bad in -1 $(( $(sed 's/.*-//' /sys/devices/system/cpu/possible) + 2 )) x; do
	! echo "$bad" > $M/max_workers 2>/dev/null || fail "max_workers took '$bad'"
done
[ "$(cat $M/max_workers)" -eq 0 ] || fail "a rejected write changed max_workers"

select_migrator none
echo all > $MIG/reasons
echo 64 > $TUN/mtcopy/min_batch_pages
unload migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
