#!/bin/sh
# Upstream tools/testing/selftests/mm/migration, built from the same source.
# It needs 3+ CPUs and hugetlb pages on both nodes; a skipped case is a failure
# here, because a skip would hide that migration was not exercised.
for n in 0 1; do
	echo 4 > /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages
done
echo always > /sys/kernel/mm/transparent_hugepage/enabled
{ migration 2>&1; echo $? > /tmp/migration.rc; } | tee /tmp/migration.log
rc=$(cat /tmp/migration.rc)
[ "$rc" -eq 0 ] || exit "$rc"
grep -q '^# Totals: .* skip:0 ' /tmp/migration.log || { echo "FAIL: a case was skipped"; exit 1; }
