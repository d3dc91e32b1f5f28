#!/bin/sh
# The DMA provider goes away while dcbm holds its channels: swdma's device
# is unbound from its driver through sysfs while dcbm is selected and
# migrations run, once with an idle engine and once with batches orphaned
# by descriptors that never complete. dcbm must give the channels back
# before the provider removes them: "none" becomes active, dcbm/channels is
# empty and reads safely (no KASAN report), dcbm cannot be selected without
# a provider, and every byte of the migrations is exact. After a rebind
# dcbm can be selected again and copies.
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$MIG/dcbm
DRV=/sys/bus/platform/drivers/swdma

dcbm_load 4
[ -e $DRV/unbind ] || { fail "swdma's device cannot be unbound through sysfs"; finish; }

unbind() {	# LABEL: unbind swdma's device under running migrations
	select_migrator dcbm || { fail "$1: cannot select dcbm"; return; }
	snap
	start_migrations 4,64,2048
	sleep 3
	echo swdma > $DRV/unbind || fail "$1: unbind failed"
	echo "$1: after the unbind: migrator $(active), channels '$(cat $D/channels)'," \
	     "orphans $(cat $D/orphans)"
	[ "$(active)" = none ] || fail "$1: dcbm still active without its provider"
	[ -z "$(cat $D/channels)" ] || fail "$1: channels still held: $(cat $D/channels)"
	[ "$(cat $D/orphans)" -eq 0 ] || fail "$1: orphans left"
	select_migrator dcbm 2>/dev/null && fail "$1: dcbm selected without a provider"
	sleep 2
	stop_migrations "$1"
	echo "$1: batches +$(delta batches) folios +$(delta folios)" \
	     "timeout +$(delta fallback_timeout) kept +$(delta kept)"
	[ "$(delta folios)" -gt 0 ] || fail "$1: dcbm copied nothing before the unbind"
	echo swdma > $DRV/bind || fail "$1: rebind failed"
}

unbind "idle engine"
# every 8th descriptor never completes: batches time out after 200 ms and
# become orphans, holding their channels until a fence completes
echo 200 > $D/timeout_ms
echo hang > $P/fail_mode; echo 8 > $P/fail_every
unbind "hung descriptors"
[ "$(delta kept)" -gt 0 ] || fail "hung descriptors: no batch was orphaned"
echo 0 > $P/fail_every; echo error > $P/fail_mode
echo 5000 > $D/timeout_ms

select_migrator dcbm || fail "cannot select dcbm after the rebind"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "after the rebind: data not exact"; }
[ "$(delta folios)" -gt 0 ] || fail "after the rebind: dcbm copied nothing"
select_migrator none
rmmod dcbm swdma || fail "cannot unload dcbm and swdma"
leak_check "swdma unbound under dcbm"
finish
