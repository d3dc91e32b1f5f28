#!/bin/sh
# mm_migrate_folio_remapped must fire once for each folio a batch unmapped,
# when it is mapped again, and never for a folio that failed before its
# unmap: the bench takes the first one after mm_migrate_batch_start as the
# batch's first-folio latency.
#
# wbmove maps pages of a null_blk device whose writes complete 3 s late,
# starts their writeback and moves them together with as many anonymous
# pages in one move_pages() call. The asynchronous first pass fails the
# device pages before their unmap (-EBUSY, under writeback), the
# synchronous pass waits and moves them. So every page moves once, and the
# device pages' old PFNs may appear in no event: a kernel that traced the
# undone device pages gave 48 events for 32 folios, 16 with those PFNs.
. /opt/mig/tests/lib.sh

N=16
modprobe null_blk nr_devices=1 gb=1 irqmode=2 completion_nsec=3000000000 ||
	{ echo "cannot load null_blk"; exit 1; }
select_migrator kernel || fail "cannot select kernel"
events on mm_migrate_folio_remapped
wbmove /dev/nullb0 0 1 $N > /tmp/wbmove.out & pid=$!
wait $pid; rc=$?
events off mm_migrate_folio_remapped
select_migrator none
cat /tmp/wbmove.out
[ $rc -eq 0 ] || fail "wbmove: not every page moved to node 1 (exit $rc)"
grep "^under_writeback: [1-9]" /tmp/wbmove.out > /dev/null ||
	fail "no device page was under writeback at the move: nothing failed before its unmap"

grep -- "-$pid *\[.*mm_migrate_folio_remapped:" $TRACING/trace > /tmp/remapped
echo "remapped events of wbmove: $(wc -l < /tmp/remapped)"
# at least one per folio moved: an anonymous folio undone and retried
# adds one (mapped again twice); an event for a folio that was never
# unmapped is what the PFN check below catches
[ "$(wc -l < /tmp/remapped)" -ge $((2 * N)) ] &&
	pass "a remapped event for every folio moved" ||
	fail "a remapped event for every folio moved"
stale=0
for pfn in $(sed -n 's/^wb_pfns://p' /tmp/wbmove.out); do
	grep -q "pfn=$pfn " /tmp/remapped && stale=$((stale + 1))
done
echo "remapped events with the PFN of a device page never unmapped: $stale"
[ $stale -eq 0 ] && pass "no remapped event for a folio that failed before its unmap" ||
	fail "no remapped event for a folio that failed before its unmap"
rmmod null_blk || echo "cannot unload null_blk"
finish
