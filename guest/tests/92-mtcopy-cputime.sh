#!/bin/sh
# mtcopy's workers are kworkers: their CPU time is kernel overhead, not
# charged to the migrating process or its cgroups (the series does not
# account one task's work to another; see the admin guide). Compared within
# one run against the kernel migrator, so that the emulator's speed swings
# (see docs/benchmark.md) cancel out.
#
# With mtcopy x2 the workers copy part of each batch while the task copies
# the rest and then sleeps until they are done, so the task's system time
# in move_pages() stays about its wall time, as with the kernel migrator;
# had the workers' time been added to it (the charging patch of series v4)
# it would exceed the wall time by up to one batch-copy time (0.77 of it
# measured on that series). The workqueue tracepoints show that the
# workers did copy (their works' durations against the batch-copy time),
# so that the check cannot pass because mtcopy copied alone. The same run
# checks that
#   - the process's user time in move_pages() stays small: the copy is not
#     shown as user time;
#   - the thread's CPU clock (CLOCK_THREAD_CPUTIME_ID) stays within the
#     wall time;
#   - cgroup v2 usage_usec and cgroup v1 cpuacct.usage of the task's
#     groups equal the process's user + system time.
. /opt/mig/tests/lib.sh

CG=$(cgroup_new mig92) || { echo "cannot create a cgroup v2 group"; exit 1; }
V1=/tmp/cpuacct
mkdir -p $V1
grep -q " $V1 cgroup " /proc/mounts || mount -t cgroup -o cpuacct none $V1 ||
	{ echo "cannot mount cgroup v1 cpuacct"; exit 1; }
rmdir $V1/mig92 2>/dev/null
mkdir $V1/mig92

# json TYPE KEY: a number from migbench's line of that type
json() { sed -n "/\"type\":\"$1\"/s/.*\"$2\":\([0-9.]*\).*/\1/p" /tmp/cputime.json; }
EV="mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
    workqueue/workqueue_execute_start workqueue/workqueue_execute_end"
# measure MIGRATOR: "name=value" lines, in seconds, for 2M folios
measure() {
	select_migrator "$1"
	u0=$(cpu_stat $CG usage_usec) r0=$(cat $V1/mig92/cpuacct.usage)
	# shellcheck disable=SC2086  # a list
	events on $EV
	in_cgroups $CG $V1/mig92 -- migbench -j -s 32 -k 2048 -r 3 -f 0 -t 1 \
		2>/tmp/cputime.err > /tmp/cputime.json ||
		{ cat /tmp/cputime.err; fail "$1: migbench failed"; } >&2
	# shellcheck disable=SC2086
	events off $EV
	r1=$(cat $V1/mig92/cpuacct.usage) u1=$(cpu_stat $CG usage_usec)
	echo "wall=$(json move move_s)"
	echo "stime=$(json move move_stime_s)"
	echo "utime=$(json move move_utime_s)"
	echo "thread=$(json move move_thread_s)"
	echo "copy=$(copy_seconds)"
	echo "works=$(mtcopy_works | cut -d" " -f2)"
	echo "proc=$(awk -v u="$(json rusage utime_s)" -v s="$(json rusage stime_s)" \
		'BEGIN { print u + s }')"
	echo "cg=$(awk -v a="$u0" -v b="$u1" 'BEGIN { print (b - a) / 1e6 }')"
	echo "v1=$(awk -v a="$r0" -v b="$r1" 'BEGIN { print (b - a) / 1e9 }')"
}
# show PREFIX: the figures of one measure
show() { set | sed -n "s/^$1_//p" | tr '\n' ' ' | tr -d "'"; echo; }
# check AWK-CONDITION MESSAGE: fail with MESSAGE unless the condition holds
# over the k_ and m_ figures
check() {
	ok=$(set | sed -n "s/^\([km]_[a-z0-9]*\)='*\([0-9.]*\)'*$/-v \1=\2/p" | tr '\n' ' ')
	# shellcheck disable=SC2086
	if awk $ok "BEGIN { exit !($1) }"; then pass "$2"; else fail "$2"; fi
}

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
echo 2 > $MTCOPY/threads
echo "$(nproc --all)" > $MTCOPY/max_workers
# A worker that has not started when the task has taken the whole batch is
# cancelled, and then the task copied alone. On a loaded host that can
# happen to most batches of a run, so a run in which the workers copied
# less than a fifth of the batch-copy time is repeated, up to three in all.
for attempt in 1 2 3; do
	eval "$(measure kernel | sed 's/^/k_/')"
	eval "$(measure mtcopy | sed 's/^/m_/')"
	echo "run $attempt: kernel: $(show k)"
	echo "run $attempt: mtcopy x2: $(show m)"
	awk -v w="$m_works" -v c="$m_copy" 'BEGIN { exit !(w < 0.2 * c) }' || break
done
select_migrator none
unload migrate_mtcopy

check "k_works == 0 && m_works >= 0.2 * m_copy" \
	"mtcopy's workers copied (their works ran for a fifth of the copy time or more)"
check "(k_stime - k_wall) / k_copy < 0.15" \
	"kernel migrator: system time in move_pages() about its wall time"
check "(m_stime - m_wall) / m_copy < 0.15" \
	"mtcopy: the workers' time is not added to the process's system time"
check "m_utime <= 0.1 * m_stime + 0.03 && k_utime <= 0.1 * k_stime + 0.03" \
	"the copy is not shown as user time"
check "m_thread <= 1.02 * m_wall + 0.02 && k_thread <= 1.02 * k_wall + 0.02" \
	"the thread's own CPU clock stays within the wall time"
for g in cg v1; do
	check "m_$g - m_proc < 0.05 * m_proc + 0.05 && m_proc - m_$g < 0.05 * m_proc + 0.05" \
		"cgroup $g usage is the process's CPU time, without the workers'"
done
rmdir $V1/mig92 $CG
umount $V1
finish
