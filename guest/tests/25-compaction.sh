#!/bin/sh
# Compaction (reason "compaction") through the batch path, with only that
# reason batching, under mtcopy (see lib.sh, path_migrators): migcheck -C
# fragments node 1 (one 4K page in use in every pair) and compacts it, then
# checks every byte left. (The upstream selftests/mm/compaction_test, built
# into the initramfs, is not run: it counts the huge pages compaction
# yields, not what migration did to the data, and took two of this test's
# three minutes.)
. /opt/mig/tests/lib.sh

for m in $(path_migrators mtcopy); do
	path_begin compaction $m || continue
	compact_batched 1 128; rc=$?
	path_end compaction compaction $m $rc multi
done
path_cleanup

# Leave free memory in large blocks: later tests fault in THPs.
echo 1 > /proc/sys/vm/compact_memory
finish
