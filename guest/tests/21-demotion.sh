#!/bin/sh
# Demotion (reason "demotion") under real reclaim: node 2 is a lower memory
# tier (QEMU's HMAT makes it slow), demotion is enabled, and pathcheck fills
# more than node 1's free memory while bound to node 1: kswapd and direct
# reclaim on node 1 demote the coldest of its pages to node 2 through the
# batch path. Every byte is checked after, some pages must be on node 2.
. /opt/mig/tests/lib.sh

T=/sys/devices/virtual/memory_tiering
lower=$(for t in $T/memory_tier*; do echo "$(basename $t) $(cat $t/nodelist)"; done | sort -V | tail -1)
echo "memory tiers: $(for t in $T/memory_tier*; do printf '%s=%s ' $(basename $t) $(cat $t/nodelist); done)"
[ "${lower#* }" = 2 ] || { fail "node 2 is not alone in the lowest tier"; finish; }

echo true > /sys/kernel/mm/numa/demotion_enabled
# kswapd wakes at the low watermark and direct reclaim starts at min: a wide
# gap (1% of the node's memory by default) lets kswapd, which the filling
# task can outrun under TCG, take part in every run (once, for the kernel
# migrator, it demoted nothing: all was direct reclaim).
wsf=$(cat /proc/sys/vm/watermark_scale_factor)
echo 1000 > /proc/sys/vm/watermark_scale_factor
for m in $(path_migrators dcbm); do
	path_begin demotion $m || continue
	free=$(node_meminfo 1 MemFree)
	k0=$(vmstat pgdemote_kswapd) d0=$(vmstat pgdemote_direct)
	pathcheck -n 1 -s $((free / 1024 + 192)) -e 2:1 none; rc=$?
	echo "$m: node 1 had $((free / 1024)) MiB free; demoted by kswapd" \
	     "+$(($(vmstat pgdemote_kswapd) - k0)), by direct reclaim +$(($(vmstat pgdemote_direct) - d0))"
	[ $(($(vmstat pgdemote_kswapd) - k0)) -gt 0 ] || fail "$m: kswapd demoted nothing"
	path_end demotion demotion $m $rc multi
done
echo false > /sys/kernel/mm/numa/demotion_enabled
echo "$wsf" > /proc/sys/vm/watermark_scale_factor
path_cleanup
finish
