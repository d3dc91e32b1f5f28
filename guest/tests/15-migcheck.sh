#!/bin/sh
# Integrity matrix with the batch path on (kernel migrator; off: 16): every
# folio size x mapping kind (private, shared across processes, memfd, ext4
# page cache, mlocked) x move_pages/migrate_pages/mbind, around nodes
# 0 -> 1 -> 2 -> 0; then threads writing counters into pages that migrate
# back and forth, and no write may be lost.
. /opt/mig/tests/lib.sh

select_migrator kernel
snap
migcheck -q && pass "matrix with the batch path on" || fail "matrix with the batch path on"
[ "$(delta batches)" -gt 0 ] || fail "the batch path was not used"
migcheck -q -W 5 -k $BASE_KB,2048 && pass "concurrent writers: no write lost" ||
	fail "concurrent writers"
select_migrator none
finish
