#!/bin/sh
# A reference taken on a folio between the batch copy and the move makes
# the move fail with -EAGAIN. The retry must copy again rather than trust
# the batch copy (the holder of the reference may have written to the
# source), stats/fallback_retry must count it, and every byte must arrive.
#
# 1. The test migrator's "hold" mode is such a holder, on 8 pairs of every
#    batch: it takes a reference on the source, copies it while changed (its
#    bytes inverted) and changes it back, so that the batch copy is stale,
#    and lets go once the move phase has tried the pair. A retry that
#    trusted the batch copy maps the inverted bytes, and migcheck's check of
#    every byte after every hop fails (it did on a kernel whose
#    migrate_folio_move() kept PAGE_CONTENT_COPIED for the retry). Each held
#    source is retried at least once after its batch copy: fallback_retry
#    counts test/held or more (a source that misses its batch's retries is
#    counted again by the synchronous pass), and test/held_moved shows
#    that retries in the same batch moved folios, the case a stale copy
#    corrupts.
# 2. splice() of the file into a pipe takes real page-cache references
#    (pipe buffers, until the pipe is read) that race with the move of
#    memfd folios: retried, counted, data exact. These holders only read,
#    so this part alone could not see a retry that trusted the copy. (ext4's
#    page cache, buffer heads, is not offered to migrators: 15.)
. /opt/mig/tests/lib.sh

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
T=$TUN/test
# only this test's move_pages() batch: the counts below are exact
echo syscall_or_cpuset > $MIG/reasons || fail "reasons: syscall_or_cpuset rejected"
echo 512 > $TUN/max_batch_pages
select_migrator test || fail "cannot select test"

# hold KINDS: migcheck of 4K folios of KINDS, 4 hops; nothing but the holder
# references these folios, so fallback_retry >= held
hold() {
	echo hold > $T/mode || fail "mode hold rejected"
	held=$(cat $T/held) moved=$(cat $T/held_moved)
	snap
	# a holder lets go from a work item: on a busy host it may come too
	# late for the retries in the same batch, so up to 5 rounds until one
	# retry has moved a held folio (the case that a stale copy corrupts)
	round=0 data=exact
	while [ $round -lt 5 ] && [ "$(cat $T/held_moved)" -eq "$moved" ]; do
		migcheck -q -k 4 -m "$1" -c move_pages -n 0,1,0,1,0 || {
			fail "hold $1: data not exact after retries of stale batch copies"
			data=bad
		}
		test_migrator_idle "hold $1"
		round=$((round + 1))
	done
	held=$(( $(cat $T/held) - held )) moved=$(( $(cat $T/held_moved) - moved ))
	echo "hold $1 ($round rounds): held $held, moved by a retry in the same batch $moved;" \
	     "folios +$(delta folios) retries +$(delta fallback_retry)" \
	     "ineligible +$(delta ineligible)"
	[ "$held" -gt 0 ] || fail "hold $1: the test migrator held no source"
	if [ "$moved" -gt 0 ]; then
		[ $data = bad ] || pass "hold $1: data exact after retries of stale batch copies"
	else
		fail "hold $1: no held folio was moved by a retry in its batch: the check above saw no stale copy"
	fi
	# at least once each: a held source that misses its batch's retries
	# goes to the synchronous pass, whose retries may count it again
	echo "hold $1: fallback_retry +$(delta fallback_retry) for $held sources held"
	[ "$(delta fallback_retry)" -ge "$held" ] &&
		pass "hold $1: stats/fallback_retry counts every held source" ||
		fail "hold $1: stats/fallback_retry counts every held source"
}
hold private,memfd

echo copy > $TUN/test/mode
# a pause between the copy and the move, for the splicers to get in
echo 2 > $TUN/test/delay_ms
snap
round=0
while [ $round -lt 10 ] && [ "$(delta fallback_retry)" -eq 0 ]; do
	migcheck -q -S 2 -k 4 -m memfd -c move_pages -s 2 -n 0,1,0,1,0 ||
		fail "splice round $round: data not exact with splicers"
	round=$((round + 1))
done
echo "splice rounds $round: folios +$(delta folios) retries +$(delta fallback_retry)" \
     "ineligible +$(delta ineligible)"
[ "$(delta fallback_retry)" -gt 0 ] && pass "splice: moves retried after a batch copy, counted" ||
	fail "splice: moves retried after a batch copy, counted" "splice: no move was retried after a batch copy"
[ "$(delta folios)" -gt 0 ] || fail "splice: the test migrator copied nothing"

echo 0 > $TUN/test/delay_ms
select_migrator none
echo all > $MIG/reasons
unload test_migrator || fail "cannot unload test_migrator"
finish
