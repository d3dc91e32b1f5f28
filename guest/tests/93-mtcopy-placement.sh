#!/bin/sh
# mtcopy's workers run only on CPUs the migrating task may use and that are
# not isolated: the workqueue tracepoint shows where each mtcopy work
# ran. Runs in the main boot and in the isolation boot (test.sh), where the
# last CPU is isolated (isolcpus=) and the one before it runs tickless
# (nohz_full=): neither is a housekeeping CPU for unbound work. The task is
# confined by sched_setaffinity() (taskset) and by a cgroup v2 cpuset; in
# the main boot, also by an isolated cpuset partition.
. /opt/mig/tests/lib.sh

ncpus=$(nproc --all)
last=$((ncpus - 1))
isolated=$(cat /sys/devices/system/cpu/isolated)
nohz_full=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)
echo "$ncpus CPUs, isolated: ${isolated:-none}, nohz_full: ${nohz_full:-none}"
excluded=$( { cpu_list "$isolated"; cpu_list "$nohz_full"; } | sort -nu | tr '\n' ',')

modprobe migrate_mtcopy || { fail "cannot load migrate_mtcopy"; finish; }
echo $ncpus > $MTCOPY/threads
echo $ncpus > $MTCOPY/max_workers	# every CPU may have a worker
echo 1 > $TUN/mtcopy/min_batch_pages
select_migrator mtcopy
# only the task's move_pages(): kcompactd's batches would start works too
echo syscall_or_cpuset > $MIG/reasons

# works_on CPUS [CPUSET]: move 32 MiB (64K and 2M folios, node 0 to 1) with
# the task confined to CPUS by its affinity, or by the cgroup CPUSET whose
# cpuset.cpus they are; /tmp/works gets the CPU of each mtcopy work that ran
works_on() {
	snap
	events on workqueue/workqueue_execute_start
	if [ -n "${2:-}" ]; then
		in_cgroups "$2" -- pathcheck -n 0 -s 32 -f 64,2048 -e 1:100 move 1
	else
		taskset -c "$1" pathcheck -n 0 -s 32 -f 64,2048 -e 1:100 move 1
	fi || fail "task on CPUs $1: data check failed"
	events off workqueue/workqueue_execute_start
	[ "$(delta folios)" -gt 0 ] || fail "task on CPUs $1: mtcopy copied nothing"
	awk '/function mtcopy_work_fn/ { if (match($0, /\[[0-9]+\]/))
		print substr($0, RSTART + 1, RLENGTH - 2) + 0 }' $TRACING/trace > /tmp/works
}
# check_works TASK_CPUS: every work ran on one of them, and on a
# housekeeping CPU
check_works() {
	f0=$fails
	for c in $(sort -u /tmp/works); do
		case ",$1," in *",$c,"*) ;; *) fail "task on CPUs $1: a work ran on CPU $c" ;; esac
		case ",$excluded" in *",$c,"*) fail "a work ran on CPU $c (isolated or nohz_full)" ;; esac
	done
	[ "$fails" -gt "$f0" ] ||
		pass "task on CPUs $1: works only on its CPUs, none isolated or nohz_full"
}

# All CPUs allowed: workers run, never on an isolated CPU.
all=$(seq -s, 0 $last)
works_on "$all"
echo "task on CPUs $all: works per CPU: $(sort -n /tmp/works | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')"
[ -s /tmp/works ] || fail "task on CPUs $all: no mtcopy work ran"
check_works "$all"

# Confined to CPUs 0 and 1: works only there (the task is on one of them).
works_on 0,1
echo "task on CPUs 0,1: works on CPUs: $(sort -u /tmp/works | tr '\n' ' ')"
check_works 0,1

# In a cpuset of CPUs 1 and 2 (its affinity mask allows all): works only there.
cs=$(cgroup_new mig93 cpuset) && echo 1-2 > "$cs/cpuset.cpus" ||
	fail "cannot create a cpuset of CPUs 1-2"
works_on 1,2 "$cs"
echo "task in cpuset 1-2: works on CPUs: $(sort -u /tmp/works | tr '\n' ' ')"
# (none if CPU 1 or 2 is not a housekeeping CPU: the task copies alone)
case ",$excluded" in
*,1,* | *,2,*) ;;
*) [ -s /tmp/works ] || fail "task in cpuset 1-2: no mtcopy work ran" ;;
esac
check_works 1,2
rmdir "$cs"

# In an isolated cpuset partition of CPUs 2 and 3 (main boot: none isolated
# at boot): the task may use both, but they are isolated CPUs
# (cpu_is_isolated()), as memcg and vmstat keep their per-CPU work off.
if [ -z "$excluded" ] && [ "$ncpus" -ge 4 ]; then
	if cs=$(cgroup_new mig93iso cpuset) && echo 2-3 > "$cs/cpuset.cpus" &&
	   echo isolated > "$cs/cpuset.cpus.partition" &&
	   [ "$(cat "$cs/cpuset.cpus.partition")" = isolated ]; then
		works_on 2,3 "$cs"
		echo "task in isolated partition 2-3: works on CPUs: $(sort -u /tmp/works | tr '\n' ' ')"
		[ ! -s /tmp/works ] &&
			pass "task in an isolated cpuset partition: no work" ||
			fail "task in an isolated cpuset partition: works ran on its isolated CPUs"
	else
		fail "cannot make CPUs 2-3 an isolated cpuset partition${cs:+: $(cat "$cs/cpuset.cpus.partition")}"
	fi
	# (no cgroup to remove if cgroup_new failed)
	[ -z "$cs" ] || { echo member > "$cs/cpuset.cpus.partition"; rmdir "$cs"; }
fi

# Confined to one CPU: the task copies alone, no work at all.
works_on 0
echo "task on CPU 0: works on CPUs: $(sort -u /tmp/works | tr '\n' ' ')"
[ ! -s /tmp/works ] && pass "task on CPU 0 alone: no work" || fail "task on CPU 0 alone: no work" "task on CPU 0 alone: works ran"

select_migrator none
echo all > $MIG/reasons
echo 64 > $TUN/mtcopy/min_batch_pages
echo 2 > $MTCOPY/threads
unload migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
