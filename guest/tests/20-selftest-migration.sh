#!/bin/sh
# Upstream tools/testing/selftests/mm/migration, built from the same source,
# under dcbm (the longest window between unmap and remap: see lib.sh,
# path_migrators) with only move_pages() and migrate_pages() batching: it
# moves pages with move_pages(2) and migrate_pages(2) while threads write to
# them. It needs 3+ CPUs and hugetlb pages on both nodes; a skipped case
# is a failure here, because a skip would hide that migration was not
# exercised. Each case is a sub-check. (With the batch path off the kernel
# is vanilla's: each run takes two minutes here, so that one is left out.)
. /opt/mig/tests/lib.sh

for n in 0 1; do
	echo 4 > /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages
done
echo always > /sys/kernel/mm/transparent_hugepage/enabled
for m in $(path_migrators dcbm); do
	# only its own calls batch (not background compaction)
	path_begin syscall_or_cpuset $m || continue
	events off mm_migrate_batch_start mm_migrate_batch_copy_begin
	snap
	{ migration 2>&1; echo $? > /tmp/migration.rc; } | tee /tmp/migration.log
	tap_results "$m" < /tmp/migration.log
	rc=$(cat /tmp/migration.rc)
	[ "$rc" -eq 0 ] || fail "$m: migration exited $rc"
	grep -q '^# Totals: pass:[1-9][0-9]* fail:0 .* skip:0 ' /tmp/migration.log ||
		fail "$m: a case failed or was skipped" "$(grep '^# Totals' /tmp/migration.log)"
	echo "$m: batches +$(delta batches) folios +$(delta folios)"
	[ "$(delta folios)" -gt 0 ] ||
		fail "$m: the selftest's migrations copied nothing through $m"
	echo all > $MIG/reasons
done
path_cleanup
finish
