#!/bin/sh
# Long-term pins (reason "longterm_pin"): pages in the CMA area of node 2
# may not stay pinned there, so pin_user_pages(FOLL_LONGTERM) (through the
# gup_test debugfs interface) migrates them out before pinning. Every byte
# is checked after, and none may be left in the area.
. /opt/mig/tests/lib.sh

C=/sys/kernel/debug/cma/numa2
[ -d $C ] || { fail "no CMA area on node 2 (numa_cma=2:SIZE)"; finish; }
base=$(cat $C/base_pfn) count=$(cat $C/count)
for m in $(path_migrators kernel); do
	path_begin longterm_pin $m || continue
	pathcheck -n 2 -s 64 -x $base-$((base + count)) pin; rc=$?
	path_end longterm-pin longterm_pin $m $rc multi
done
path_cleanup
finish
