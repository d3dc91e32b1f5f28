#!/bin/sh
# The DMA provider goes away while dcbm holds its channels: swdma's device
# is unbound from its driver through sysfs while dcbm is selected and
# migrations run, once with an idle engine and once with batches orphaned
# by descriptors that hang (their channel stalls until swdma resets it,
# after dcbm's timeout). dcbm must give the channels back
# before the provider removes them: "none" becomes active, dcbm/channels is
# empty and reads safely (no KASAN report), dcbm cannot be selected without
# a provider, and every byte of the migrations is exact (with hung
# descriptors, the folios whose pairs an orphan kept may stay where they
# were while it holds their sources: migbench -K, no more than were kept).
# After a rebind dcbm can be selected again and copies. Then one channel
# is unregistered alone, as idxd does when a work queue is disabled.
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM
DRV=/sys/bus/platform/drivers/swdma

dcbm_load 4
[ -e $DRV/unbind ] || { fail "swdma's device cannot be unbound through sysfs"; finish; }

# The removal must meet batches in flight: wait until dcbm has taken one
# (a fixed sleep gave none on a loaded host), then a little longer.
batches_under_way() {	# LABEL
	t=0
	while [ "$(delta batches)" -eq 0 ] && [ $t -lt 60 ]; do
		sleep 1; t=$((t + 1))
	done
	[ "$(delta batches)" -gt 0 ] || fail "$1: no batch reached dcbm in 60 s"
	sleep 1
}

unbind() {	# LABEL [-K]: unbind swdma's device under running migrations
	select_migrator dcbm || { fail "$1: cannot select dcbm"; return; }
	snap
	start_migrations 4,64,2048 ${2:-}
	batches_under_way "$1"
	abandoned=$(dmesg | grep -c "abandoning it")
	echo swdma > $DRV/unbind || fail "$1: unbind failed"
	# an abandoned channel pins swdma for good (see dcbm_notify())
	[ "$(dmesg | grep -c "abandoning it")" -eq "$abandoned" ] ||
		fail "$1: no channel abandoned" "$(dmesg | grep "abandoning it" | tail -1)"
	echo "$1: after the unbind: migrator $(active), channels '$(cat $TUN/dcbm/channels)'," \
	     "orphans $(cat $TUN/dcbm/orphans)"
	[ "$(active)" = none ] || fail "$1: dcbm still active without its provider"
	[ -z "$(cat $TUN/dcbm/channels)" ] || fail "$1: no channel held" "$(cat $TUN/dcbm/channels)"
	[ "$(cat $TUN/dcbm/orphans)" -eq 0 ] || fail "$1: orphans left"
	select_migrator dcbm 2>/dev/null && fail "$1: dcbm selected without a provider"
	sleep 2
	stop_migrations "$1"
	echo "$1: batches +$(delta batches) folios +$(delta folios)" \
	     "timeout +$(delta fallback_timeout) kept +$(delta kept)"
	[ -z "${2:-}" ] || echo "$1: migbench -K: $(kept_left /tmp/bg.kept |
		awk '{ print $1 " folios kept, " $2 " pages left behind" }')"
	[ "$(delta folios)" -gt 0 ] || fail "$1: dcbm copied nothing before the unbind"
	echo swdma > $DRV/bind || fail "$1: rebind failed"
}

unbind "idle engine"
# every 8th descriptor hangs and stalls its channel: batches time out after
# 1 s and become orphans, holding their channels until swdma resets the
# channel (1.2 s after the hang, aborting what it holds). The unbind waits
# for them up to 2 s (2 x timeout_ms): 0.8 s at least for the reset's
# callbacks and the orphans' ends (200 and 300 ms, the settings until
# November 29, left 0.1 s: on a slow CI host dcbm abandoned a channel, and
# swdma stayed pinned for the tests after this one)
echo 1000 > $D/timeout_ms
echo 1200 > $P/hang_ms
echo hang > $P/fail_mode; swdma_fail desc 100 8 || fail "cannot make swdma hang"
unbind "hung descriptors" -K
[ "$(delta kept)" -gt 0 ] || fail "hung descriptors: no batch was orphaned"
swdma_fail desc 0; echo error > $P/fail_mode; echo 0 > $P/hang_ms
echo $DCBM_TIMEOUT_MS > $D/timeout_ms

select_migrator dcbm || fail "cannot select dcbm after the rebind"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "after the rebind: data not exact"; }
[ "$(delta folios)" -gt 0 ] || fail "after the rebind: dcbm copied nothing"

# One channel unregistered alone while the device stays bound, as idxd
# does when one of its work queues is disabled: dcbm must give that
# channel back first (dmaengine tells it), and only that one: it stays
# selected and copies on the 3 others (before November 29 it gave all
# back and was deselected), dcbm/channels reads safely (no KASAN report:
# before dmaengine's notifier, dcbm kept the channel and read its freed
# device), bytes stay exact.
select_migrator dcbm || fail "one channel: cannot select dcbm"
echo "one channel: channels before '$(cat $TUN/dcbm/channels)'"
snap
start_migrations 4,64,2048
batches_under_way "one channel"
echo 1 > $P/remove_channel || fail "one channel: cannot unregister swdma's channel 1"
now=$(cat $TUN/dcbm/channels)
echo "one channel: after unregistering channel 1: migrator $(active)," \
     "channels '$now', orphans $(cat $TUN/dcbm/orphans)"
[ "$(active)" = dcbm ] || fail "one channel: dcbm deselected for one channel of 4"
[ "$(echo $now | wc -w)" -eq 3 ] || fail "one channel: not the 3 channels left: '$now'"
case " $now " in
*chan1\ *) fail "one channel: the unregistered channel is still held" ;;
esac
sleep 2
stop_migrations "one channel"
[ "$(delta folios)" -gt 0 ] || fail "one channel: dcbm copied nothing before the removal"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "one channel: data not exact on the channels left"; }
[ "$(delta folios)" -gt 0 ] &&
	pass "one channel: dcbm copies on the 3 channels left" ||
	fail "one channel: dcbm copies on the 3 channels left" "one channel: dcbm copied nothing on the channels left"

select_migrator none
unload dcbm && unload swdma || fail "cannot unload dcbm and swdma"
leak_check "swdma unbound under dcbm"
finish
