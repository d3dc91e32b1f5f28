#!/bin/sh
# Compaction (reason "compaction") through the batch path, with only that
# reason batching, under mtcopy (see lib.sh, path_migrators): migcheck -C
# fragments node 1 (one 4K page in use in every pair) and compacts it, then
# checks every byte left; the upstream tools/testing/selftests/mm/
# compaction_test, built from the same source, must pass as well. How much
# its compactions move depends on how fragmented the guest is just then
# (in one run 0 folios under one migrator, 32 under the next): shown, not
# checked; migcheck -C is the check that compaction batches.
. /opt/mig/tests/lib.sh

THP=/sys/kernel/mm/transparent_hugepage/enabled
thp=$(sed 's/.*\[\(.*\)\].*/\1/' $THP)
for m in $(path_migrators mtcopy); do
	path_begin compaction $m || continue
	echo "$thp" > $THP
	migcheck -C 1 -s 128; rc=$?
	path_end compaction compaction $m $rc multi

	echo never > $THP	# compaction_test wants 4K pages to compact
	echo compaction > $MIG/reasons
	snap
	{ compaction_test 2>&1; echo $? > /tmp/compaction.rc; } | tee /tmp/compaction.log
	[ "$(cat /tmp/compaction.rc)" -eq 0 ] || fail "$m: compaction_test failed"
	grep -q '^# Totals: pass:1 ' /tmp/compaction.log ||
		fail "$m: compaction_test did not pass its case"
	echo "$m: compaction_test: batches +$(delta batches) folios +$(delta folios)"
	echo all > $MIG/reasons
done
path_cleanup

# Leave free memory in large blocks: later tests fault in THPs.
echo "$thp" > $THP
echo 1 > /proc/sys/vm/compact_memory
finish
