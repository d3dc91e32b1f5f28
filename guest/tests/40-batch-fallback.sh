#!/bin/sh
# The test migrator declines, fails, corrupts, stops halfway or keeps
# destinations on request; whatever it does, every byte must arrive (migbench
# verifies each hop) and stats/ must count exactly what it did, by cause.
# Its mark_only mode marks folios copied without copying them: the positive
# control, under which migbench, migcheck and pathcheck must report bad data.
. /opt/mig/tests/lib.sh

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
T=$TUN/test
# Only move_pages() (and, for migcheck, mbind()) of this test's own data may
# batch: no background migration (compaction, reclaim) adds to the exact
# counts below, and mark_only corrupts nothing but this test's data.
echo syscall_or_cpuset > $MIG/reasons || fail "reasons: syscall_or_cpuset rejected"
echo 512 > $TUN/max_batch_pages	# the batches counted below
select_migrator test || fail "cannot select test"
warnings=$(dmesg | grep -c -E 'WARNING:|BUG:')

STATS="batches folios bytes ineligible fallback_below_min fallback_declined
       fallback_busy fallback_nomem fallback_timeout fallback_error
       fallback_incomplete fallback_retry kept"

# What `migbench -s 4 -k 4,2048 -r 1 -V 0,1,2` migrates: three hops
# (0 -> 1 -> 2 -> 0) of 4 MiB, first in 4K folios, then in 2M folios. 4K:
# 1024 folios per hop in one move_pages() call, which migrate_pages() cuts
# into two batches of max_batch_pages (512). 2M: 2 folios per hop, each a
# batch of its own (512 pages; after the first hop migbench passes every
# page address, and the second page of a queued folio flushes the queue).
# All private anonymous folios with no other reference: all eligible.
B=12				# batches: 3 x 2 + 3 x 2
F=3078				# folios: 3 x 1024 + 3 x 2
BYTES=$((24 << 20))		# 3 x 4 MiB + 3 x 4 MiB
EVEN=1536			# 4K folios of even index: 256 per batch of 512
EVEN_BYTES=$((EVEN * 4096))
ODD=1536			# 4K folios of odd index
FEW=6				# 2M folios: index 0 of a batch of one
FEW_BYTES=$((FEW << 21))

# run MODE [MIGBENCH-OPTION]: migrate 4K and 2M folios between nodes 0, 1
# and 2 under MODE
run() {
	echo "$1" > $T/mode || fail "mode $1 rejected"
	snap
	split0=$(vmstat thp_migration_split)
	if migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 $2 > /tmp/mb.log 2>&1; then
		pass "$LBL$1: data exact after migration"
	else
		cat /tmp/mb.log; fail "$LBL$1: data not exact after migration"
	fi
	show "$1"
	# the counts assume a 2M destination for every 2M folio (the nodes
	# have far more free memory than 4 MiB): a split one says why not
	[ "$(vmstat thp_migration_split)" -eq "$split0" ] ||
		echo "$1: $(( $(vmstat thp_migration_split) - split0 )) 2M folios split (no 2M destination): the counts below cannot match"
}
show() {	# LABEL: the counters that moved
	line=""
	for c in $STATS; do
		[ "$(delta $c)" -eq 0 ] || line="$line ${c#fallback_} +$(delta $c)"
	done
	echo "$LBL$1:${line:- nothing counted}"
}
# expect LABEL NAME=VALUE...: every counter of stats/ moved by exactly the
# value given (NAME>=VALUE: at least), those not named by 0
expect() {
	label=$LBL$1; shift
	wrong=0
	for c in $STATS; do
		want=0 op=-eq
		for kv in "$@"; do
			case $kv in
			"$c>="*) want=${kv#*>=} op=-ge ;;
			"$c="*) want=${kv#*=} op=-eq ;;
			esac
		done
		[ "$(delta $c)" $op "$want" ] || {
			fail "$label: stats/$c ${op#-} $want" "moved by $(delta $c)"
			wrong=$((wrong + 1))
		}
	done
	[ $wrong -gt 0 ] || pass "$label: every counter of stats/ as expected"
}

# The modes on whole batches (chunk_pages 0), then pipelined (chunk_pages
# $CHUNK, the default): each chunk of a batch is offered as a batch of its
# own, 4 chunks of 128 4K folios in a batch of 512 with the same folios
# failing (every other one, the first half of each chunk), a 2M folio a
# chunk of its own; so only the number of batches differs.
CHUNK=$(cat $TUN/chunk_pages)
[ $((512 % CHUNK)) -eq 0 ] || fail "chunk_pages $CHUNK: the counts below assume a divisor of 512"
for chunk in 0 $CHUNK; do
echo $chunk > $TUN/chunk_pages
LBL="chunk_pages $chunk: "
[ $chunk = 0 ] || B=$((3 * 2 * 512 / chunk + 6))

run copy
expect copy batches=$B folios=$F bytes=$BYTES

run decline
expect decline batches=$B fallback_declined=$F

# every other folio of each batch fails: index 0 of each 2M batch is copied
run fail_odd
expect fail_odd batches=$B folios=$((EVEN + FEW)) \
	bytes=$((EVEN_BYTES + FEW_BYTES)) fallback_error=$ODD

run fail_all
expect fail_all batches=$B fallback_error=$F

# corrupt scribbles over every destination and marks none: the CPU copy
# must overwrite all of it
run corrupt
expect corrupt batches=$B fallback_error=$F

# incomplete copies the first half of each batch (rounded down: nothing of
# a 2M batch of one), scribbles over the rest and returns 0: the rest is
# fallback_incomplete, and the CPU copy must overwrite it
run incomplete
expect incomplete batches=$B folios=$EVEN bytes=$EVEN_BYTES \
	fallback_incomplete=$((ODD + FEW))

# keep holds every odd pair as an engine that did not stop would: it
# scribbles over the destination now, and later copies the source into it
# and scribbles again; the core must move those folios to new destinations
# with the CPU, and no kept folio may be in use when the core gives it up
# (test/kept_in_use counts those that were). Until the late copy has let
# the source go, its move fails on that reference and is retried, and a
# retry of move_pages() is a batch of its own, copied by the test migrator
# (and retried again, fallback_retry, while the source is still held): the
# batches and folios copied are at least those of one pass.
# A kept pair whose late copy has not let its source go by the last retry
# of its move stays behind, with its bytes, as the migrator contract
# allows: migbench -K accepts that (and no more), and the counts of later
# hops vary with those folios (they are not eligible while held). It
# happens more often to the pairs kept in a pipelined batch's last chunk,
# retried sooner after their copy, but also to whole batches (6 pages in a
# run of November 28 under the debug kernel).
in_use=$(cat $T/kept_in_use)
run keep -K
expect keep "batches>=$B" "folios>=$EVEN" "bytes>=$EVEN_BYTES" \
	"kept>=$((ODD / 3))" "fallback_retry>=0" "ineligible>=0"
test_migrator_idle keep	# the late scribbles: up to 2 s each for the core to let go
[ "$(cat $T/kept_in_use)" -eq "$in_use" ] ||
	fail "${LBL}keep: no kept folio in use at the late scribble (test/kept_in_use)" "$(( $(cat $T/kept_in_use) - in_use )) in use"

echo 1000000 > $T/min_batch_pages
run copy
expect min_batch fallback_below_min=$F
echo 0 > $T/min_batch_pages
done
LBL=
echo 0 > $TUN/chunk_pages	# the counts below are of whole batches

# The positive control. mark_only marks every folio copied and copies none:
# the destinations keep what they held (zeros: freed pages are cleared), and
# every oracle must see it. A run that passed here would pass a core that
# skips copies it must not skip. migbench stops a folio size at its first
# bad hop: hop 0 of each size is migrated, 2 batches of 512 4K folios and 2
# of one 2M folio.
echo mark_only > $T/mode || fail "mode mark_only rejected"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1
rc=$?
show "mark_only migbench (exit $rc)"
expect "mark_only migbench" batches=4 folios=1026 bytes=$((8 << 20))
if [ $rc -ne 1 ]; then
	cat /tmp/mb.log
	fail "mark_only: migbench -V exited $rc, not 1 (verification failure)"
else
	pass "mark_only: migbench -V failed its verification"
fi
for kb in 4 2048; do
	grep -q "^migbench: $kb KiB: verification after move to node 1 FAILED" /tmp/mb.log ||
		fail "mark_only: migbench did not report bad data for $kb KiB folios"
done
# migcheck: every kind offered to migrators, move_pages() and mbind() (mbind
# migrates for mempolicy_mbind), one hop each; every case must fail on its
# data at hop 1 (a case that cannot have the size is skipped, not run).
# ext4's page cache (buffer heads) is never offered: its cases must pass.
echo syscall_or_cpuset,mempolicy_mbind > $MIG/reasons
migcheck -q -k 4,2048 -m file -c move_pages,mbind -n 0,1 > /tmp/mc.log 2>&1 &&
	pass "mark_only: ext4 page cache not offered, its data exact" ||
	{ cat /tmp/mc.log; fail "mark_only: ext4 page cache corrupted: offered to the migrator"; }
snap
migcheck -q -k 4,2048 -m private,shared,memfd,mlock \
	-c move_pages,mbind -n 0,1 > /tmp/mc.log 2>/tmp/mc.err
rc=$?
echo syscall_or_cpuset > $MIG/reasons
sed 's/^/  /' /tmp/mc.log
summary=$(tail -1 /tmp/mc.log)
show "mark_only migcheck (exit $rc)"
[ $rc -eq 1 ] || fail "mark_only: migcheck exited $rc, not 1 (a check failed)"
case $summary in
"migcheck: 0 ok, "*) pass "mark_only: migcheck passed no case" ;;
*) fail "mark_only: migcheck passed cases: $summary" ;;
esac
for k in private shared memfd mlock; do
	for c in move_pages mbind; do
		grep -q "^FAIL $k-4K-$c: hop 1 (node 0 -> 1): data corrupted" /tmp/mc.log ||
			fail "mark_only: migcheck $k-4K-$c did not report bad data"
	done
done
n=$(grep -c '^FAIL ' /tmp/mc.log)
[ "$n" -eq "$(grep -c '^FAIL .*: hop 1 (node 0 -> 1): data corrupted' /tmp/mc.log)" ] ||
	fail "mark_only: migcheck failed otherwise than on data"
[ "$(delta folios)" -gt 0 ] || fail "mark_only: migcheck migrated nothing through the test migrator"
# pathcheck: 4K, 64K and 2M folios moved with MPOL_MF_MOVE_ALL
snap
pathcheck -s 6 -f 4,64,2048 -n 0 move 1 > /tmp/pc.log 2>&1
rc=$?
sed 's/^/  /' /tmp/pc.log
show "mark_only pathcheck (exit $rc)"
[ $rc -eq 1 ] && grep -q 'bytes BAD' /tmp/pc.log &&
	pass "mark_only: pathcheck reported bad data" ||
	fail "mark_only: pathcheck reported bad data" "mark_only: pathcheck did not report bad data (exit $rc)"
[ "$(delta folios)" -gt 0 ] || fail "mark_only: pathcheck migrated nothing through the test migrator"

# What mark_only leaves behind: the wrong bytes were only in the migrating
# processes, which have exited; the kernel must not have noticed anything,
# and the next migrations must be exact again.
B=12
run copy
expect "copy after mark_only" batches=$B folios=$F bytes=$BYTES
[ "$(dmesg | grep -c -E 'WARNING:|BUG:')" -eq "$warnings" ] ||
	fail "the kernel warned during this test" "$(dmesg | grep -E 'WARNING:|BUG:' | tail -3)"

select_migrator none
echo all > $MIG/reasons
echo $CHUNK > $TUN/chunk_pages
unload test_migrator || fail "cannot unload test_migrator"
finish
