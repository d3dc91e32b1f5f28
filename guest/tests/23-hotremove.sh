#!/bin/sh
# Memory hot-remove (reason "memory_hotplug"): the testbed's hotpluggable
# DIMM on node 2 (GUEST_HOTPLUG_MB, offline after boot) is onlined movable,
# pathcheck fills node 2 (ZONE_MOVABLE first, i.e. the DIMM), and offlining
# the DIMM's memory blocks migrates every page out. Every byte is checked
# after, and no page may be left in the DIMM's PFN range.
. /opt/mig/tests/lib.sh

dimm_blocks || finish
for m in $(path_migrators "kernel mtcopy dcbm"); do
	dimm_set online_movable || break
	path_begin memory_hotplug $m || continue
	held_start -n 2 -s 128 -x $dimm_lo-$dimm_hi none
	dimm_set offline
	held_finish; rc=$?
	path_end hot-remove memory_hotplug $m $rc multi
done
path_cleanup
finish
