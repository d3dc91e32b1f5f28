#!/bin/sh
# /sys/kernel/mm/migration: defaults, valid writes, and bad input that must
# fail with an error and change nothing.
. /opt/mig/tests/lib.sh

[ -d "$MIG" ] || { echo "no $MIG"; exit 1; }
[ "$(cat $MIG/migrator)" = "[none] kernel" ] || fail "default migrator list: $(cat $MIG/migrator)"
# HPAGE_PMD_NR on x86-64, as without the series
[ "$(cat $MIG/max_batch_pages)" = 512 ] || fail "default max_batch_pages: $(cat $MIG/max_batch_pages)"
all="compaction memory_failure memory_hotplug syscall_or_cpuset mempolicy_mbind numa_misplaced contig_range longterm_pin demotion damon"
[ "$(cat $MIG/reasons)" = "$all" ] || fail "default reasons: $(cat $MIG/reasons)"

for v in bogus "" "[kernel]" "[none]" "kernel test" "none kernel" kernel/ ker; do
	write_fails $MIG/migrator "$v"
done
for v in bogus "" "," "syscall" "all,compaction" "compaction,bogus" "COMPACTION"; do
	write_fails $MIG/reasons "$v"
done
for v in 0 -1 65537 1000000000000 abc "" 12x; do write_fails $MIG/max_batch_pages "$v"; done
for f in $MIG/stats/*; do
	{ echo 0 > "$f"; } 2>/dev/null && fail "$f is writable"
done

echo "syscall_or_cpuset, demotion" > $MIG/reasons || fail "valid reasons list rejected"
[ "$(cat $MIG/reasons)" = "syscall_or_cpuset demotion" ] || fail "reasons read back: $(cat $MIG/reasons)"
echo none > $MIG/reasons && [ "$(cat $MIG/reasons)" = none ] || fail "reasons none"
echo all > $MIG/reasons && [ "$(cat $MIG/reasons)" = "$all" ] || fail "reasons all"
for v in 1 65536 512; do
	echo $v > $MIG/max_batch_pages && [ "$(cat $MIG/max_batch_pages)" = $v ] || fail "max_batch_pages $v"
done
echo none > $MIG/migrator || fail "selecting the active migrator again"
echo kernel > $MIG/migrator && [ "$(cat $MIG/migrator)" = "none [kernel]" ] ||
	fail "selecting kernel: $(cat $MIG/migrator)"
echo none > $MIG/migrator && [ "$(cat $MIG/migrator)" = "[none] kernel" ] ||
	fail "selecting none: $(cat $MIG/migrator)"
finish
