#!/bin/sh
# DMA providers that dcbm cannot fully trust, imitated by swdma:
#  results=0          failed descriptors are called back without a result,
#                     as ptdma does, which dmaengine reports as success: dcbm
#                     must refuse such a provider (it would take failed
#                     copies for good ones: the test shows the damage if it
#                     does not refuse)
#  terminate_stops=0  terminate_all forgets the descriptors but the channel
#                     still copies them, late, as ptdma's does; descriptors
#                     slower than dcbm's timeout: dcbm must keep what they
#                     cover until a fence after the terminate completes, the
#                     folios move to new destinations, every byte checked,
#                     and no late write may reach memory in use (KASAN sees
#                     swdma's copy into a freed page)
#  private=0          public channels, shared with other clients (async_tx
#                     loaded, no traffic: RAID456 traffic is not tested): dcbm must
#                     never terminate them; on a timeout it waits for their
#                     callbacks before it lets the destinations go
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$MIG/dcbm

modprobe dcbm || { echo "cannot load dcbm"; exit 1; }

run() {		# LABEL MIGBENCH-ARGS...
	label=$1; shift
	snap
	migbench "$@" > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$label: data not exact after migration"; }
	echo "$label: batches +$(delta batches) folios +$(delta folios)" \
	     "error +$(delta fallback_error) timeout +$(delta fallback_timeout)" \
	     "kept +$(delta kept)"
}
kasan_clean() {
	if dmesg | grep -q "BUG: KASAN"; then
		fail "$1: KASAN: $(dmesg | grep -m1 'BUG: KASAN')"
	else
		pass "$1: no KASAN report"
	fi
}

echo "--- results=0: failures without a result"
modprobe swdma nr_channels=2 results=0 || { echo "cannot load swdma"; exit 1; }
if select_migrator dcbm 2>/dev/null; then
	fail "dcbm took channels that do not report failures"
	echo error > $P/fail_mode && echo 3 > $P/fail_every
	run "results=0, every 3rd fails" -s 2 -k 4,64 -r 1 -V 0,1
	select_migrator none
else
	pass "dcbm refuses a provider without DMA_COMPLETION_RESULT"
fi
rmmod swdma || fail "cannot unload swdma"

echo "--- terminate_stops=0: late writes after terminate"
modprobe swdma nr_channels=2 terminate_stops=0 latency_us=30000 ||
	{ echo "cannot load swdma"; exit 1; }
echo 20 > $D/timeout_ms
select_migrator dcbm || fail "cannot select dcbm"
run "terminate does not stop" -s 1 -k 4,64 -r 1 -V 0,1,0
[ "$(delta kept)" -gt 0 ] || fail "terminate does not stop: nothing kept"
[ "$(cat $P/terminations)" -gt 0 ] || fail "terminate does not stop: no channel terminated"
orphans_gone "terminate does not stop" 120
kasan_clean "terminate does not stop"
select_migrator none || fail "cannot deselect dcbm"
rmmod swdma || fail "cannot unload swdma"

echo "--- private=0: shared channels are never terminated"
modprobe swdma nr_channels=2 private=0 latency_us=30000 ||
	{ echo "cannot load swdma"; exit 1; }
# async_tx holds the public channels (dmaengine_get()): dcbm must share them
modprobe async_tx || fail "cannot load async_tx"
dmesg -c > /dev/null
select_migrator dcbm || fail "cannot select dcbm"
dmesg | grep -q "dcbm: using .* shared" || fail "dcbm did not share: $(dmesg | grep dcbm)"
run "shared, slow" -s 1 -k 4,64 -r 1 -V 0,1,0
[ "$(delta kept)" -gt 0 ] || fail "shared, slow: nothing kept"
[ "$(cat $P/terminations)" -eq 0 ] ||
	fail "shared, slow: a shared channel was terminated $(cat $P/terminations) times"
# deselecting with orphans defers the release of the channels to the last
select_migrator none || fail "cannot deselect dcbm"
orphans_gone "shared, slow" 120
kasan_clean "shared, slow"
[ -z "$(cat $D/channels)" ] || fail "channels still held: $(cat $D/channels)"
echo 5000 > $D/timeout_ms
rmmod async_tx || fail "cannot unload async_tx"
rmmod swdma || fail "cannot unload swdma"
rmmod dcbm || fail "cannot unload dcbm"
finish
