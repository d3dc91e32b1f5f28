#!/bin/sh
# Promotion (reason "numa_misplaced"): NUMA balancing in memory-tiering
# mode promotes pages of the lower tier (node 2) that a task on node 0
# keeps reading. Each hint fault hands one folio to migrate_pages(), so
# every batch holds one folio (mtcopy copies it only because the test
# lowers its minimum batch). Every byte is checked after; a quarter of
# the pages at least must have reached node 0, within 300 s (the reads
# stop as soon as they have: 10 s in the runs of November 29; the scan
# rate under TCG decides, so the bound is wide and the share low), and
# vmstat must count the promotions.
. /opt/mig/tests/lib.sh

NB=/sys/kernel/debug/sched/numa_balancing
echo 2 > /proc/sys/kernel/numa_balancing
if [ -d $NB ]; then	# scan sooner and more often (CONFIG_SCHED_DEBUG)
	echo 100 > $NB/scan_delay_ms; echo 100 > $NB/scan_period_min_ms
fi
for m in $(path_migrators mtcopy); do
	path_begin numa_misplaced $m || continue
	p0=$(vmstat pgpromote_success)
	pathcheck -n 2 -s 24 -c 0 -e 0:25 -t 300 touch; rc=$?
	echo "$m: promoted +$(($(vmstat pgpromote_success) - p0)) pages"
	[ "$(vmstat pgpromote_success)" -gt "$p0" ] &&
		pass "promotion, $m: pages promoted (pgpromote_success)" ||
		fail "promotion, $m: pages promoted (pgpromote_success)"
	path_end promotion numa_misplaced $m $rc
done
echo 0 > /proc/sys/kernel/numa_balancing
if [ -d $NB ]; then
	echo 1000 > $NB/scan_delay_ms; echo 1000 > $NB/scan_period_min_ms
fi
path_cleanup
finish
