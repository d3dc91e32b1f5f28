#!/bin/sh
# Every migrate reason of the quick group's, under an offloading migrator:
# dcbm on swdma (a DMA engine; the CPU copies only what it declines), one
# small region per path, each path with only its reason batching (the
# machinery of the path tests 21-28, lib.sh's path_begin and path_end):
#   move_pages(2), migrate_pages(2), a cpuset's mems changed (cgroup v2,
#   whose cpusets migrate a task's memory when its mems change):
#   syscall_or_cpuset; mbind(2): mempolicy_mbind; compaction of node 1:
#   compaction; proactive reclaim (memory.reclaim) of a cgroup on node 1,
#   demotion on: demotion to node 2; the DIMM of node 2 offlined:
#   memory_hotplug; the CMA area of node 2 allocated whole: contig_range;
#   a FOLL_LONGTERM pin of pages in it: longterm_pin.
# For each: every byte checked after (pathcheck, migcheck), every page
# where the path must put it (all on the target node, or none left in
# the DIMM or the CMA area; demotion: half on node 2 at least), batches
# of the reason in the trace, folios counted as copied by dcbm
# (stats/folios) and descriptors completed by swdma's channels: the
# engine really copied. Soft offline (memory_failure) and NUMA balancing
# (numa_misplaced) are 27 and 22 of the quick group (27: dcbm is offered
# no soft-offlined folio, mtcopy copies them); DAMON is 28 (make
# test-full). Before this test the quick group batched only three
# reasons.
. /opt/mig/tests/lib.sh

M=dcbm
# step NAME REASON one|multi CMD...: CMD moves the data through the path
# of REASON (exit 0: bytes and placement right), in batches of more than
# one folio if multi; one row of the path table
step() {
	name=$1 reason=$2 multi=$3
	shift 3
	path_begin "$reason" $M || return 1
	c0=$(swdma_copies)
	"$@"; rc=$?
	verdict "$name, $M: the DMA engine copied" \
		"swdma completed $(($(swdma_copies) - c0)) descriptors" [ "$(swdma_copies)" -gt "$c0" ]
	path_end "$name" "$reason" $M $rc $multi
}

# the syscalls: pathcheck's move and migrate actions, every page on node 1
step move_pages syscall_or_cpuset one \
	pathcheck -n 0 -s 8 -e 1:100 move 1
step migrate_pages syscall_or_cpuset multi \
	pathcheck -n 0 -s 8 -e 1:100 migrate 1
step mbind mempolicy_mbind one \
	migcheck -q -c mbind -m private,memfd -k 4,$MTHP_KB,2048 -n 0,1,0 -s 2

# a cpuset's mems changed from node 0 to node 1 under its task
cpuset_move() {
	cs=$(cgroup_new mig13 cpuset) && echo 0 > "$cs/cpuset.mems" ||
		{ echo "cannot create a cpuset on node 0"; return 2; }
	HELD_IN="in_cgroups $cs --" held_start -n 0 -s 8 -e 1:100 none
	echo 1 > "$cs/cpuset.mems" || echo "cannot set the cpuset's mems to 1"
	held_finish; r=$?
	rmdir "$cs"
	return $r
}
step cpuset_mems syscall_or_cpuset multi cpuset_move

step compaction compaction multi compact_batched 1 16

# proactive reclaim of a cgroup whose memory is on node 1: with demotion
# on, node 1's pages go to node 2, the lower tier (no swap: demotion is
# all the reclaim there is)
demote() {
	cg=$(cgroup_new mig13 memory) || { echo "cannot create a memory cgroup"; return 2; }
	echo true > /sys/kernel/mm/numa/demotion_enabled
	d0=$(vmstat pgdemote_direct)
	HELD_IN="in_cgroups $cg --" held_start -n 1 -s 8 -e 2:50 none
	echo 8M > "$cg/memory.reclaim" 2>/dev/null || echo "memory.reclaim: not all reclaimed"
	echo "demoted +$(($(vmstat pgdemote_direct) - d0)) pages"
	held_finish; r=$?
	echo false > /sys/kernel/mm/numa/demotion_enabled
	rmdir "$cg"
	return $r
}
step demotion demotion multi demote

# the DIMM of node 2 onlined, filled, offlined: no page left in it
hot_remove() {
	dimm_set online_movable || return 2
	held_start -n 2 -s 16 -x $dimm_lo-$dimm_hi none
	dimm_set offline
	held_finish
}
dimm_blocks && step hot-remove memory_hotplug multi hot_remove

# the CMA area allocated whole (checked while allocated), then a
# long-term pin of pages in it
cma_alloc() {
	held_start -n 2 -s 16 -x $cma_lo-$cma_hi none
	echo $((cma_hi - cma_lo)) > $CMA/alloc || echo "cma_alloc of the whole area failed"
	held_finish; r=$?
	echo $((cma_hi - cma_lo)) > $CMA/free
	return $r
}
if cma_area; then
	step cma contig_range multi cma_alloc
	step longterm-pin longterm_pin multi \
		pathcheck -n 2 -s 8 -x $cma_lo-$cma_hi pin
fi
path_cleanup
finish
