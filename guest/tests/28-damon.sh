#!/bin/sh
# DAMON (reason "damon"): a DAMOS migrate_cold scheme on the physical
# address range of node 1 (paddr operations, sysfs interface) moves the
# regions nobody accesses to node 2, in lists of folios. pathcheck fills a
# region on node 1 and leaves it idle until most of it is on node 2. Every
# byte is checked after.
. /opt/mig/tests/lib.sh

D=/sys/kernel/mm/damon/admin/kdamonds
M=/sys/devices/system/memory
[ -d $D ] || { fail "no DAMON sysfs interface"; finish; }
size=$(printf '%d' 0x$(cat $M/block_size_bytes))
idx=$(for b in /sys/devices/system/node/node1/memory[0-9]*; do printf '%d\n' 0x$(cat $b/phys_index); done | sort -n)
start=$(($(echo "$idx" | head -1) * size)) end=$((($(echo "$idx" | tail -1) + 1) * size))

echo 1 > $D/nr_kdamonds
K=$D/0/contexts
echo 1 > $K/nr_contexts
echo paddr > $K/0/operations
I=$K/0/monitoring_attrs/intervals
echo 20000 > $I/sample_us; echo 200000 > $I/aggr_us; echo 1000000 > $I/update_us
echo 1 > $K/0/targets/nr_targets
echo 1 > $K/0/targets/0/regions/nr_regions
echo $start > $K/0/targets/0/regions/0/start
echo $end > $K/0/targets/0/regions/0/end
echo 1 > $K/0/schemes/nr_schemes
S=$K/0/schemes/0
echo migrate_cold > $S/action
echo 2 > $S/target_nid
A=$S/access_pattern	# every range defaults to 0-0
echo 18446744073709551615 > $A/sz/max
echo 0 > $A/nr_accesses/min; echo 0 > $A/nr_accesses/max
echo 5 > $A/age/min	# aggregation intervals: 1 s untouched
echo 4294967295 > $A/age/max
echo "node 1: physical $start-$end"

for m in $(path_migrators dcbm); do
	path_begin damon $m || continue
	echo on > $D/0/state || { fail "cannot start kdamond"; path_end damon damon $m 1; continue; }
	pathcheck -n 1 -s 48 -e 2:90 -t 120 until; rc=$?
	echo off > $D/0/state
	path_end damon damon $m $rc multi
done
echo 0 > $D/nr_kdamonds
path_cleanup
finish
