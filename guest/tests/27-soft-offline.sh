#!/bin/sh
# Soft offline (reason "memory_failure") of pages in use: madvise(
# MADV_SOFT_OFFLINE) on every page, and the memory-failure sysfs interface
# (/sys/devices/system/memory/soft_offline_page, a physical address) on some
# pages of another region. Soft offline migrates one folio per call (large
# folios are split first), so every batch holds one folio. Every byte is
# checked after. The offlined pages stay poisoned (out of the allocator).
# dcbm, whose copy is not machine-check safe, is offered none of them.
. /opt/mig/tests/lib.sh

for m in $(path_migrators mtcopy); do
	[ "$m" != dcbm ] || continue	# below
	path_begin memory_failure $m || continue
	pathcheck -n 1 -s 6 soft-offline; rc=$?
	# 64 pages given to soft_offline_page by physical address
	rm -f /tmp/pfns
	held_start -n 1 -s 6 -p /tmp/pfns none
	n=0
	for pfn in $(awk 'NR % 24 == 1' /tmp/pfns 2>/dev/null | head -64); do
		echo $((pfn * 4096)) > /sys/devices/system/memory/soft_offline_page &&
			n=$((n + 1))
	done
	held_finish; rc2=$?
	echo "$m: soft_offline_page took $n of 64 pages"
	[ $n -gt 0 ] || fail "$m: soft_offline_page offlined nothing"
	path_end soft-offline memory_failure $m $((rc | rc2))
done

# The page has corrected errors: the CPU's copy (folio_mc_copy()) fails the
# folio on a poisoned line, a DMA engine's may consume or forward it. dcbm
# does not declare its copy machine-check safe, so it is offered no batch of
# this reason (ineligible), even with the reason enabled; mtcopy (above)
# is, and copies.
path_begin memory_failure dcbm &&
{
	pathcheck -n 1 -s 6 soft-offline; rc=$?
	echo "dcbm: folios +$(delta folios), ineligible +$(delta ineligible), batches +$(delta batches)"
	[ $rc -eq 0 ] || fail "dcbm: data check failed (exit $rc)"
	[ "$(delta folios)" -eq 0 ] && [ "$(delta ineligible)" -gt 0 ] &&
		pass "dcbm: soft offline left to the CPU's machine-check-safe copy" ||
		fail "dcbm: soft offline left to the CPU's machine-check-safe copy" "dcbm: $(delta folios) soft-offlined folios copied by the DMA engine"
	echo all > $MIG/reasons
}
path_cleanup
finish
