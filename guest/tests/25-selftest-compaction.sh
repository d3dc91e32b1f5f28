#!/bin/sh
# Upstream tools/testing/selftests/mm/compaction_test, built from the same
# source: fills 80% of free memory with mlocked pages, frees half of it and
# asks for huge pages, which compaction must make room for. Only compaction
# may use the batch path meanwhile, and it must have used it.
. /opt/mig/tests/lib.sh

echo never > /sys/kernel/mm/transparent_hugepage/enabled	# 4K pages to compact
echo compaction > $MIG/reasons
snap
{ compaction_test 2>&1; echo $? > /tmp/compaction.rc; } | tee /tmp/compaction.log
echo "compaction: batches +$(delta batches) folios +$(delta folios) ineligible +$(delta ineligible)"
echo all > $MIG/reasons
[ "$(cat /tmp/compaction.rc)" -eq 0 ] || fail "compaction_test failed"
grep -q '^# Totals: pass:1 ' /tmp/compaction.log || fail "compaction_test did not pass its case"
[ "$(delta batches)" -gt 0 ] || fail "compaction did not use the batch path"
finish
