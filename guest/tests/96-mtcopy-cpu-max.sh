#!/bin/sh
# cpu.max covers the copy that mtcopy's workers do for a task: their time
# is charged to the bandwidth of the task's groups, which are throttled for
# it as for their own time and repay what is left from later periods. The
# workers themselves run where they are (kworkers in the root group); the
# limit is applied to the task that asked for the work.
#
# A group limited to 20% of a CPU runs migrations (2M folios, verified);
# its usage_usec, which includes the workers' time, may not exceed 20% of
# the wall time by more than 10%. Without the charge the workers copy
# outside the limit, on top of the task's 20%. The kernel migrator is the
# control: it copies in the task.
. /opt/mig/tests/lib.sh

QUOTA=20000 PERIOD=100000
CG=$(cgroup_new mig96 cpu) || { echo "cannot create a cgroup with the cpu controller"; exit 1; }
echo "$QUOTA $PERIOD" > $CG/cpu.max || { echo "no cpu.max (CONFIG_CFS_BANDWIDTH)"; exit 1; }

now() { cut -d' ' -f1 /proc/uptime; }
# limited MIGRATOR: prints "usage/quota ratio" and the details (run in
# $(...): a failure goes to stderr, and counts through $SUBRESULTS)
limited() {
	select_migrator "$1"
	t0=$(now) u0=$(cpu_stat $CG usage_usec) n0=$(cpu_stat $CG nr_throttled)
	in_cgroups $CG -- migbench -s 32 -k 2048 -r 4 -f 0 -t 1 > /tmp/cpumax.log 2>&1 ||
		{ cat /tmp/cpumax.log; fail "$1: migbench failed under cpu.max"; } >&2
	t1=$(now) u1=$(cpu_stat $CG usage_usec) n1=$(cpu_stat $CG nr_throttled)
	awk -v t0="$t0" -v t1="$t1" -v u0="$u0" -v u1="$u1" -v n="$((n1 - n0))" \
	    -v q="$QUOTA" -v p="$PERIOD" 'BEGIN {
		u = (u1 - u0) / 1e6; w = t1 - t0
		printf "%.3f usage %.2f s in %.2f s, throttled %d times\n", u / w / (q / p), u, w, n }'
}

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
echo 4 > $MIG/mtcopy/threads
echo "$(nproc --all)" > $MIG/mtcopy/max_workers
k=$(limited kernel)
snap
m=$(limited mtcopy)
copied=$(delta folios)
select_migrator none
rmmod migrate_mtcopy
echo "kernel: usage/quota $k"
echo "mtcopy x4: usage/quota $m"
[ "$copied" -gt 0 ] || fail "mtcopy copied no batch"
for r in "kernel $k" "mtcopy $m"; do
	set -- $r
	if awk -v r="$2" 'BEGIN { exit !(r <= 1.10) }'; then
		pass "$1: usage within cpu.max ($2 of the quota)"
	else
		fail "$1: usage $2 times the cpu.max quota"
	fi
done
rmdir $CG
finish
