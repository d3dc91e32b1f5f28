#!/bin/sh
# cpu.max and mtcopy, as the admin guide states them: the group's limit
# holds for its own tasks' time whatever the migrator, and mtcopy's workers
# (kworkers in the root group) copy outside it; max_workers 0 leaves every
# copy to the task, inside the limit.
#
# A group limited to 20% of a CPU runs migrations (2M folios, verified)
# under the kernel migrator (the control), mtcopy x4, and mtcopy x4 with
# max_workers 0: its usage_usec may not exceed 20% of the wall time by more
# than 10%. With mtcopy x4 the workqueue tracepoints must show works run
# (the workers' time is shown: that is the copy the limit does not cover);
# with max_workers 0 none.
. /opt/mig/tests/lib.sh

QUOTA=20000 PERIOD=100000
CG=$(cgroup_new mig96 cpu) || { echo "cannot create a cgroup with the cpu controller"; exit 1; }
echo "$QUOTA $PERIOD" > $CG/cpu.max || { echo "no cpu.max (CONFIG_CFS_BANDWIDTH)"; exit 1; }

WQ="workqueue/workqueue_execute_start workqueue/workqueue_execute_end"
now() { cut -d' ' -f1 /proc/uptime; }
# limited MIGRATOR: prints "USAGE/QUOTA WORKS WORK_SECONDS details" (run in
# $(...): a failure goes to stderr, and counts through $SUBRESULTS)
limited() {
	select_migrator "$1"
	# shellcheck disable=SC2086  # a list
	events on $WQ
	t0=$(now) u0=$(cpu_stat $CG usage_usec) n0=$(cpu_stat $CG nr_throttled)
	in_cgroups $CG -- migbench -s 32 -k 2048 -r 4 -f 0 -t 1 > /tmp/cpumax.log 2>&1 ||
		{ cat /tmp/cpumax.log; fail "$1: migbench failed under cpu.max"; } >&2
	t1=$(now) u1=$(cpu_stat $CG usage_usec) n1=$(cpu_stat $CG nr_throttled)
	# shellcheck disable=SC2086
	events off $WQ
	works=$(mtcopy_works)
	awk -v t0="$t0" -v t1="$t1" -v u0="$u0" -v u1="$u1" -v n="$((n1 - n0))" \
	    -v q="$QUOTA" -v p="$PERIOD" -v works="$works" 'BEGIN {
		u = (u1 - u0) / 1e6; w = t1 - t0
		printf "%.3f %s usage %.2f s in %.2f s, throttled %d times\n",
			u / w / (q / p), works, u, w, n }'
}

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
echo 4 > $MTCOPY/threads
echo "$(nproc --all)" > $MTCOPY/max_workers
k=$(limited kernel)
m=$(limited mtcopy)
echo 0 > $MTCOPY/max_workers
z=$(limited mtcopy)
select_migrator none
unload migrate_mtcopy
echo "kernel: usage/quota, works, work s: $k"
echo "mtcopy x4: usage/quota, works, work s: $m (the work s ran outside cpu.max)"
echo "mtcopy x4, max_workers 0: usage/quota, works, work s: $z"
for r in "kernel $k" "mtcopy $m" "mtcopy-max_workers-0 $z"; do
	set -- $r
	if awk -v r="$2" 'BEGIN { exit !(r <= 1.10) }'; then
		pass "$1: usage within cpu.max ($2 of the quota)"
	else
		fail "$1: usage $2 times the cpu.max quota"
	fi
done
set -- $m
if [ "$2" -gt 0 ]; then
	pass "mtcopy x4: $2 works ran, outside the group"
else
	fail "mtcopy x4: no work ran (the case shows nothing)"
fi
set -- $z
if [ "$2" -eq 0 ]; then
	pass "mtcopy x4, max_workers 0: no work, every copy in the group"
else
	fail "mtcopy x4, max_workers 0: $2 works ran"
fi
rmdir $CG
finish
