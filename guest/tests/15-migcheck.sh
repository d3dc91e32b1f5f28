#!/bin/sh
# Integrity matrix with the batch path on (kernel migrator; off: 16): every
# folio size x mapping kind (private, shared across processes, memfd, ext4
# page cache, mlocked) x move_pages/migrate_pages/mbind, around nodes
# 0 -> 1 -> 2 -> 0; then threads writing counters into pages that migrate
# back and forth, and no write may be lost. ext4's page cache and the raw
# block device's, buffer heads, are never offered to the migrator, shmem
# is: batching buffer_migrate_folio_norefs() folios (make mutate
# M=E3-norefs-batched) passed the quick group before that check.
. /opt/mig/tests/lib.sh

select_migrator kernel
snap
migcheck -q && pass "matrix with the batch path on" || fail "matrix with the batch path on"
[ "$(delta batches)" -gt 0 ] || fail "the batch path was not used"

# ext4's page cache migrates with buffer_migrate_folio(), whose buffers a
# file system may change without the folio lock (hfs and hfsplus B-trees):
# never offered to a migrator, copied in its move (ineligible). memfd
# (shmem, migrate_folio()) is the control: offered. Only move_pages() of the
# region (migrate_pages() would move the process's anonymous memory too),
# and no background batches in the counts.
echo syscall_or_cpuset > $MIG/reasons
for kind in file memfd; do
	snap
	migcheck -q -m $kind -k $BASE_KB -c move_pages || fail "$kind: data or nodes wrong"
	echo "$kind: folios +$(delta folios), ineligible +$(delta ineligible)"
	case $kind in
	file)	[ "$(delta folios)" -eq 0 ] && [ "$(delta ineligible)" -gt 0 ] &&
			pass "ext4 page cache (buffer heads) not offered to the migrator" ||
			fail "ext4 page cache (buffer heads) not offered to the migrator" "ext4 page cache: $(delta folios) folios copied by the migrator" ;;
	memfd)	[ "$(delta folios)" -gt 0 ] &&
			pass "memfd (shmem) offered to the migrator" ||
			fail "memfd (shmem) offered to the migrator" "memfd: no folio copied by the migrator" ;;
	esac
done
# The block device's page cache moves with buffer_migrate_folio_norefs(),
# whose buffers the file system on it changes without the folio lock:
# never offered either (18 and 19, in make test-full, race writers against
# it). blkmig's mover alone maps the first MiB of the raw disk and moves
# its pages around nodes 0, 1, 2 for 2 s.
snap
if blkmig move -D /dev/vdb -s 1 -t 2 > /tmp/blk.log 2>&1; then
	echo "block device: folios +$(delta folios), ineligible +$(delta ineligible)"
	[ "$(delta folios)" -eq 0 ] && [ "$(delta ineligible)" -gt 0 ] &&
		pass "block-device page cache (buffer_migrate_folio_norefs) not offered to the migrator" ||
		fail "block-device page cache (buffer_migrate_folio_norefs) not offered to the migrator" "block-device page cache: $(delta folios) folios copied by the migrator, $(delta ineligible) ineligible"
else
	cat /tmp/blk.log; fail "block device: blkmig move failed"
fi
echo all > $MIG/reasons
migcheck -q -W 5 -k $BASE_KB,2048 && pass "concurrent writers: no write lost" ||
	fail "concurrent writers: no write lost" "concurrent writers"
select_migrator none
finish
