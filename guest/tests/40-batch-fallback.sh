#!/bin/sh
# The test migrator declines, fails, corrupts or keeps destinations on
# request; whatever it does, every byte must arrive (migbench verifies each
# hop) and stats/ must name the cause of every fallback.
. /opt/mig/tests/lib.sh

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
select_migrator test || fail "cannot select test"
T=$MIG/test

# run MODE: migrate 4K and 2M folios between nodes 0, 1 and 2 under MODE
run() {
	echo "$1" > $T/mode || fail "mode $1 rejected"
	snap
	migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$1: data not exact after migration"; }
	echo "$1: batches +$(delta batches) folios +$(delta folios)" \
	     "declined +$(delta fallback_declined) error +$(delta fallback_error)" \
	     "below_min +$(delta fallback_below_min) kept +$(delta kept)"
}
positive() { [ "$(delta "$1")" -gt 0 ] || fail "$2: $1 did not move"; }
zero() { [ "$(delta "$1")" -eq 0 ] || fail "$2: $1 moved by $(delta "$1")"; }

run copy
positive folios copy; positive batches copy
zero fallback_declined copy; zero fallback_error copy

run decline
positive fallback_declined decline; zero folios decline

run fail_odd
positive folios fail_odd; positive fallback_error fail_odd
# every other folio of each batch fails: about as many fall back as succeed
f=$(delta folios) e=$(delta fallback_error)
[ $((f - e)) -le $((f / 4 + 8)) ] && [ $((e - f)) -le $((e / 4 + 8)) ] ||
	fail "fail_odd: $f copied vs $e failed is not about half"

run fail_all
positive fallback_error fail_all; zero folios fail_all

# corrupt scribbles over every destination and marks none: the CPU copy
# must overwrite all of it
run corrupt
positive fallback_error corrupt; zero folios corrupt

# keep holds every odd destination as an engine that did not stop would,
# scribbles over it now and again later: the core must move those folios to
# new destinations with the CPU, and the kept folios must be unused when the
# late scribble comes (the migrator warns otherwise: the kernel log fails)
run keep
positive kept keep; positive folios keep
zero fallback_error keep
sleep 3		# the late scribbles: up to 2 s each for the core to let go

echo 1000000 > $T/min_batch_pages
run copy
positive fallback_below_min min_batch; zero batches min_batch
echo 0 > $T/min_batch_pages

select_migrator none
rmmod test_migrator || fail "cannot unload test_migrator"
finish
