#!/bin/sh
# Compaction (reason "compaction") through the batch path, with only that
# reason batching: migcheck -C fragments node 1 (one 4K page in use in every
# pair) and compacts it, then checks every byte left; the upstream
# tools/testing/selftests/mm/compaction_test, built from the same source,
# must pass as well.
. /opt/mig/tests/lib.sh

THP=/sys/kernel/mm/transparent_hugepage/enabled
thp=$(sed 's/.*\[\(.*\)\].*/\1/' $THP)
select_migrator kernel
echo compaction > $MIG/reasons

snap
migcheck -C 1 -s 128 || fail "data not exact after compacting node 1"
echo "node 1: batches +$(delta batches) folios +$(delta folios) ineligible +$(delta ineligible)"
[ "$(delta batches)" -gt 0 ] && [ "$(delta folios)" -gt 0 ] ||
	fail "compaction did not use the batch path"

echo never > $THP	# compaction_test wants 4K pages to compact
{ compaction_test 2>&1; echo $? > /tmp/compaction.rc; } | tee /tmp/compaction.log
[ "$(cat /tmp/compaction.rc)" -eq 0 ] || fail "compaction_test failed"
grep -q '^# Totals: pass:1 ' /tmp/compaction.log || fail "compaction_test did not pass its case"

# Leave free memory in large blocks: later tests fault in THPs.
echo all > $MIG/reasons
select_migrator none
echo "$thp" > $THP
echo 1 > /proc/sys/vm/compact_memory
finish
