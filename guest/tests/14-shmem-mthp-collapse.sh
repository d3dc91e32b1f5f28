#!/bin/sh
# khugepaged may not collapse shared anonymous memory (shmem) into a folio
# size its shmem_enabled settings do not allow. In 6.12,
# __thp_vma_allowable_orders() returned shmem's allowed orders without
# intersecting them with the orders asked for, so with only 256K shmem
# folios enabled khugepaged was told PMD size was allowed too and collapsed
# eight 256K folios into a 2M one: migcheck's folio check then failed at
# random ("folio larger than expected", test 80 on arm64, November 26).
# The upstream fix is carried as patch 2.
#
# khugepaged is made to scan every 10 ms while migcheck moves 256K shmem
# folios around the nodes, checking the size of every folio after each hop;
# the region is PMD-aligned (migutil's region_map()), as khugepaged needs,
# and khugepaged must be running. Not with 64K base pages, where a PMD
# (512 MiB) is larger than the region.
. /opt/mig/tests/lib.sh

KH=/sys/kernel/mm/transparent_hugepage/khugepaged
[ "$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" -le $((2 << 20)) ] || {
	skip "a PMD is larger than the region: khugepaged cannot collapse it"
	finish
}
saved=$(for k in scan_sleep_millisecs alloc_sleep_millisecs pages_to_scan; do
	echo "$k $(cat $KH/$k)"; done)
echo 10 > $KH/scan_sleep_millisecs
echo 10 > $KH/alloc_sleep_millisecs
echo 4096 > $KH/pages_to_scan
c0=$(vmstat thp_collapse_alloc) f0=$(cat $KH/full_scans)
migcheck -q -k 256 -m shared -c move_pages -s 16 -n 0,1,0,1,0,1,0,1,0 \
	> /tmp/collapse.log 2>&1
rc=$?
scans=$(($(cat $KH/full_scans) - f0))
echo "$saved" | while read -r k v; do echo "$v" > $KH/$k; done
cat /tmp/collapse.log
echo "khugepaged: $scans full scans, $(($(vmstat thp_collapse_alloc) - c0)) collapses (any process)"
# With the fix the region does not even register its mm with khugepaged (0
# scans); without it, khugepaged scanned and collapsed (3 and 3 on x86-64).
grep -qx khugepaged /proc/[0-9]*/comm ||
	fail "no khugepaged thread: the case shows nothing"
if [ $rc -eq 0 ]; then
	pass "256K shmem folios kept their size under khugepaged (every hop checked)"
else
	fail "256K shmem folios under khugepaged: migcheck exit $rc"
fi
finish
