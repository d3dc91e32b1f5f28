#!/bin/sh
# mtcopy's workers run only on CPUs the migrating task may use and that are
# housekeeping CPUs: the workqueue tracepoint shows where each mtcopy work
# ran. Runs in the main boot and in the isolcpus= boot (test.sh), where the
# last CPU is isolated. busybox has no cpuset tools (and the test kernel no
# CONFIG_CPUSETS): confinement is by sched_setaffinity() (taskset).
. /opt/mig/tests/lib.sh

ncpus=$(nproc --all)
last=$((ncpus - 1))
isolated=$(cat /sys/devices/system/cpu/isolated)
echo "$ncpus CPUs, isolated: ${isolated:-none}"

modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo $ncpus > $MIG/mtcopy/threads
echo 1 > $MIG/mtcopy/min_batch_pages
select_migrator mtcopy

# works_on CPUS: move 32 MiB (64K and 2M folios, node 0 to 1) with the task
# confined to CPUS; prints the CPUs the mtcopy works ran on, one per line
works_on() {
	snap
	events on workqueue/workqueue_execute_start
	taskset -c "$1" pathcheck -n 0 -s 32 -f 64,2048 -e 1:100 move 1 >&2 ||
		fail "task on CPUs $1: data check failed"
	events off workqueue/workqueue_execute_start
	[ "$(delta folios)" -gt 0 ] || fail "task on CPUs $1: mtcopy copied nothing"
	awk '/function mtcopy_work_fn/ { if (match($0, /\[[0-9]+\]/))
		print substr($0, RSTART + 1, RLENGTH - 2) + 0 }' $TRACING/trace
}
# in_list CPU LIST: is CPU in the comma-separated LIST?
in_list() { case ",$2," in *",$1,"*) return 0 ;; esac; return 1; }

# All CPUs allowed: workers run, never on an isolated CPU.
all=$(seq -s, 0 $last)
cpus=$(works_on "$all" | sort -n | uniq -c | awk '{ printf "%s%s:%s", s, $2, $1; s = " " }')
echo "task on CPUs $all: works per CPU: ${cpus:-none}"
[ -n "$cpus" ] || fail "task on CPUs $all: no mtcopy work ran"
for c in $cpus; do
	! in_list "${c%%:*}" "$isolated" || fail "a work ran on isolated CPU ${c%%:*}"
done

# Confined to CPUs 0 and 1: works only there (the task is on one of them).
cpus=$(works_on 0,1 | sort -u | tr '\n' ' ')
echo "task on CPUs 0,1: works on CPUs: ${cpus:-none}"
for c in $cpus; do
	in_list "$c" 0,1 || fail "task on CPUs 0,1: a work ran on CPU $c"
	! in_list "$c" "$isolated" || fail "a work ran on isolated CPU $c"
done

# Confined to one CPU: the task copies alone, no work at all.
cpus=$(works_on 0 | sort -u | tr '\n' ' ')
echo "task on CPU 0: works on CPUs: ${cpus:-none}"
[ -z "$cpus" ] || fail "task on CPU 0 alone: works ran on CPUs $cpus"

select_migrator none
echo 64 > $MIG/mtcopy/min_batch_pages
echo 2 > $MIG/mtcopy/threads
rmmod migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
