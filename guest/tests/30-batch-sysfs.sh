#!/bin/sh
# /sys/kernel/mm/migration (the ABI: migrator, reasons, stats/) and the
# tunables in debugfs: defaults, valid writes, and bad input that must fail
# with an error and change nothing; without a migrator, no tunable changes
# the path.
. /opt/mig/tests/lib.sh

[ -d "$MIG" ] || { echo "no $MIG"; exit 1; }
# the ABI is what an administrator sets and reads: no tunable in it
[ "$(ls $MIG | tr '\n' ' ')" = "migrator reasons stats " ] &&
	pass "$MIG holds migrator, reasons, stats only" ||
	fail "$MIG holds migrator, reasons, stats only" "$MIG holds: $(ls $MIG | tr '\n' ' ')"
[ "$(cat $MIG/migrator)" = "[none] kernel" ] || fail "default migrator list" "$(cat $MIG/migrator)"
# HPAGE_PMD_NR on x86-64, as without the series
[ "$(cat $TUN/max_batch_pages)" = 512 ] || fail "default max_batch_pages" "$(cat $TUN/max_batch_pages)"
[ "$(cat $TUN/chunk_pages)" = 128 ] || fail "default chunk_pages" "$(cat $TUN/chunk_pages)"
[ "$(cat $TUN/chunks_in_flight)" = 1 ] || fail "default chunks_in_flight" "$(cat $TUN/chunks_in_flight)"
all="compaction memory_failure memory_hotplug syscall_or_cpuset mempolicy_mbind numa_misplaced contig_range longterm_pin demotion damon"
[ "$(cat $MIG/reasons)" = "$all" ] || fail "default reasons" "$(cat $MIG/reasons)"

for v in bogus "" "[kernel]" "[none]" "kernel test" "none kernel" kernel/ ker; do
	write_fails $MIG/migrator "$v"
done
for v in bogus "" "," "syscall" "all,compaction" "compaction,bogus" "COMPACTION"; do
	write_fails $MIG/reasons "$v"
done
for v in 0 -1 65537 1000000000000 abc "" 12x; do write_fails $TUN/max_batch_pages "$v"; done
for v in -1 65537 1000000000000 abc "" 12x; do write_fails $TUN/chunk_pages "$v"; done
for v in 0 5 -1 abc "" 2x; do write_fails $TUN/chunks_in_flight "$v"; done
for f in $MIG/stats/*; do
	{ echo 0 > "$f"; } 2>/dev/null && fail "$f is writable"
done

echo "syscall_or_cpuset, demotion" > $MIG/reasons || fail "valid reasons list rejected"
[ "$(cat $MIG/reasons)" = "syscall_or_cpuset demotion" ] || fail "reasons read back" "$(cat $MIG/reasons)"
echo none > $MIG/reasons && [ "$(cat $MIG/reasons)" = none ] || fail "reasons none"
echo all > $MIG/reasons && [ "$(cat $MIG/reasons)" = "$all" ] || fail "reasons all"
for v in 1 65536 512; do
	echo $v > $TUN/max_batch_pages && [ "$(cat $TUN/max_batch_pages)" = $v ] || fail "max_batch_pages $v"
done
for v in 0 1 65536 128; do
	echo $v > $TUN/chunk_pages && [ "$(cat $TUN/chunk_pages)" = $v ] || fail "chunk_pages $v"
done
for v in 4 2 1; do
	echo $v > $TUN/chunks_in_flight && [ "$(cat $TUN/chunks_in_flight)" = $v ] ||
		fail "chunks_in_flight $v"
done
echo none > $MIG/migrator || fail "selecting the active migrator again"
echo kernel > $MIG/migrator && [ "$(cat $MIG/migrator)" = "none [kernel]" ] ||
	fail "selecting kernel" "$(cat $MIG/migrator)"
echo none > $MIG/migrator && [ "$(cat $MIG/migrator)" = "[none] kernel" ] ||
	fail "selecting none" "$(cat $MIG/migrator)"

# Without a migrator the path is the unpatched one whatever the tunables
# say: max_batch_pages 4096 still unmaps batches of 512 pages (HPAGE_PMD_NR
# on x86-64): one move_pages() of 2048 pages is 4 batches, not 1.
echo 4096 > $TUN/max_batch_pages
events on mm_migrate_batch_start
migbench -s $((BASE_KB * 2)) -k $BASE_KB -r 1 -V 0,1 > /tmp/mb.log 2>&1 || { cat /tmp/mb.log; fail "none: data"; }
events off mm_migrate_batch_start
n=$(grep -c "mm_migrate_batch_start: .*reason=syscall_or_cpuset" $TRACING/trace)
echo "none, max_batch_pages 4096: $n batches for 2048 pages"
[ "$n" -ge 4 ] && pass "none: batches of the unpatched kernel whatever max_batch_pages says" ||
	fail "none: batches of the unpatched kernel whatever max_batch_pages says" "none: $n batches for 2048 pages: max_batch_pages 4096 changed the path without a migrator"
echo 512 > $TUN/max_batch_pages

# min_batch_pages: the core's file in each registered migrator's debugfs
# directory. It is applied before a batch enters the batch path, from the
# value the migrator had when selected and from any write while it is
# active.
[ ! -e $TUN/none ] && [ ! -e $TUN/kernel ] || fail "a built-in migrator has a directory"
modprobe test_migrator || fail "cannot load test_migrator"
T=$TUN/test
[ "$(cat $T/min_batch_pages)" = 0 ] || fail "test min_batch_pages default" "$(cat $T/min_batch_pages)"
for v in -1 x 99999999999 "" 3y; do write_fails $T/min_batch_pages "$v"; done
min_batch_run() {	# NAME EXPECTED-BATCHES(0|+)
	snap
	migbench -s 2 -k $BASE_KB -r 1 -V 0,1 > /tmp/mb.log 2>&1 || { cat /tmp/mb.log; fail "$1: data"; }
	echo "$1: $(delta batches) batches offered, $(delta fallback_below_min) folios below min"
	if [ "$2" = 0 ]; then
		[ "$(delta batches)" -eq 0 ] && [ "$(delta fallback_below_min)" -gt 0 ] ||
			fail "$1: no batch offered, folios below min" "$(delta batches) batches offered, $(delta fallback_below_min) below min"
	else
		[ "$(delta batches)" -gt 0 ] && [ "$(delta fallback_below_min)" -eq 0 ] ||
			fail "$1: batches offered, none below min" "$(delta batches) batches offered, $(delta fallback_below_min) below min"
	fi
}
echo 1000000 > $T/min_batch_pages || fail "min_batch_pages 1000000"
select_migrator test || fail "cannot select test"
min_batch_run "set before selection" 0
echo 0 > $T/min_batch_pages
min_batch_run "lowered while selected" +
echo 1000000 > $T/min_batch_pages
min_batch_run "raised while selected" 0
select_migrator kernel
min_batch_run "kernel after test" +
select_migrator none
echo 0 > $T/min_batch_pages
unload test_migrator || fail "cannot unload test_migrator"
finish
