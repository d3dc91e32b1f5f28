#!/bin/sh
# A reference taken on a folio between the batch copy and the move (here by
# splice() of the file into a pipe, which holds page-cache references until
# the pipe is read) makes the move fail with -EAGAIN. The retry must copy
# again rather than trust the batch copy, stats/fallback_retry must count
# it, and every byte must arrive.
. /opt/mig/tests/lib.sh

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
select_migrator test || fail "cannot select test"
echo copy > $MIG/test/mode
# a pause between the copy and the move, for the splicers to get in
echo 2 > $MIG/test/delay_ms

snap
round=0
while [ $round -lt 10 ] && [ "$(delta fallback_retry)" -eq 0 ]; do
	migcheck -q -S 2 -k 4 -m file,memfd -c move_pages -s 2 -n 0,1,0,1,0 ||
		fail "round $round: data not exact with splicers"
	round=$((round + 1))
done
echo "rounds $round: folios +$(delta folios) retries +$(delta fallback_retry)" \
     "ineligible +$(delta ineligible)"
[ "$(delta fallback_retry)" -gt 0 ] || fail "no move was retried after a batch copy"
[ "$(delta folios)" -gt 0 ] || fail "the test migrator copied nothing"

echo 0 > $MIG/test/delay_ms
select_migrator none
rmmod test_migrator || fail "cannot unload test_migrator"
finish
