#!/bin/sh
# With reasons=none the batch path is patched out: migrations stay exact and
# no batch is counted. Only the enabled reasons batch.
. /opt/mig/tests/lib.sh

echo none > $MIG/reasons
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 || fail "migration with the batch path off"
[ "$(delta batches)" -eq 0 ] || fail "batches counted with reasons=none"

# move_pages() migrates for MR_SYSCALL ("syscall_or_cpuset")
echo compaction > $MIG/reasons
snap
migbench -s 4 -k 4 -r 1 -V 0,1 > /dev/null || fail "migration with compaction only"
[ "$(delta batches)" -eq 0 ] || fail "move_pages() batched with only compaction enabled"
echo syscall_or_cpuset > $MIG/reasons
snap
migbench -s 4 -k 4 -r 1 -V 0,1 > /dev/null || fail "migration with syscall only"
[ "$(delta batches)" -gt 0 ] || fail "move_pages() did not batch with syscall_or_cpuset enabled"
echo all > $MIG/reasons
finish
