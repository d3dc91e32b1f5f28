#!/bin/sh
# Memory hot-remove (reason "memory_hotplug"): the testbed's hotpluggable
# DIMM on node 2 (GUEST_HOTPLUG_MB, offline after boot) is onlined movable,
# pathcheck fills node 2 (ZONE_MOVABLE first, i.e. the DIMM), and offlining
# the DIMM's memory blocks migrates every page out. Every byte is checked
# after, and no page may be left in the DIMM's PFN range.
. /opt/mig/tests/lib.sh

M=/sys/devices/system/memory
blocks=""
for b in $M/memory*; do
	[ "$(cat $b/state)" = offline ] && [ -e $b/node2 ] && blocks="$blocks $b"
done
[ -n "$blocks" ] || { fail "no offline memory block on node 2 (GUEST_HOTPLUG_MB)"; finish; }
size=$(printf '%d' 0x$(cat $M/block_size_bytes))
lo=$(for b in $blocks; do printf '%d\n' 0x$(cat $b/phys_index); done | sort -n | head -1)
hi=$(for b in $blocks; do printf '%d\n' 0x$(cat $b/phys_index); done | sort -n | tail -1)
lo=$((lo * size / 4096)) hi=$(((hi + 1) * size / 4096))
echo "DIMM: $(echo $blocks | wc -w) blocks of $((size >> 20)) MiB, PFNs $lo-$hi"

set_blocks() {	# online_movable|offline: every DIMM block, retried while busy
	for b in $blocks; do
		i=0
		until echo $1 > $b/state 2>/dev/null || [ "$(cat $b/state)" = "${1%_movable}" ]; do
			i=$((i + 1)); [ $i -lt 5 ] || { fail "$(basename $b): $1 failed"; return 1; }
			sleep 1
		done
	done
}
for m in $(path_migrators kernel); do
	set_blocks online_movable || break
	path_begin memory_hotplug $m || continue
	held_start -n 2 -s 128 -x $lo-$hi none
	set_blocks offline
	held_finish; rc=$?
	path_end hot-remove memory_hotplug $m $rc multi
done
path_cleanup
finish
