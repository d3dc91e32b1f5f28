#!/bin/sh
# The provider goes away while copies that will never end hold its
# channels: every descriptor of swdma hangs and its channel never recovers
# (hang_ms 0), and swdma has no terminate (terminate=0, as ioat and idxd),
# so dcbm's orphans never end. Unbinding swdma's device waits for them for a minute (dcbm's
# longest timeout), then goes on, and the provider unregisters the
# channels; dcbm must never touch them again: dcbm/channels reads empty
# (no KASAN report: the channels' devices are freed), dcbm is not active
# and cannot be selected. What the orphans hold (their mappings, the kept
# pairs with their sources and destinations, the channels) is leaked for
# good, so this test runs last in its boot. Every byte of the migration is
# still exact; the folios of kept pairs stay where they were, their
# sources held for good (migbench -K: no more than were kept).
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM
DRV=/sys/bus/platform/drivers/swdma

modprobe swdma nr_channels=2 terminate=0 || { echo "cannot load swdma"; exit 1; }
dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }
echo 2 > $D/nr_channels
echo 100 > $D/timeout_ms
select_migrator dcbm || { echo "cannot select dcbm"; exit 1; }
echo hang > $P/fail_mode && swdma_fail desc 100 || fail "cannot make swdma hang"
snap
migbench -s 4 -k 64 -r 1 -V 0,1 -K > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "data not exact after migration"; }
echo "hung engine: batches +$(delta batches) kept +$(delta kept)," \
     "orphans $(cat $TUN/dcbm/orphans)"
echo "hung engine: migbench -K: $(kept_left /tmp/mb.log |
	awk '{ print $1 " folios kept, " $2 " pages left behind" }')"
[ "$(cat $TUN/dcbm/orphans)" -gt 0 ] || fail "no orphan holds the channels"

dmesg -c > /dev/null
t0=$(date +%s)
echo swdma > $DRV/unbind || fail "unbind failed"
echo "unbind took $(( $(date +%s) - t0 )) s; orphans $(cat $TUN/dcbm/orphans)"
# one warning per channel abandoned, all after the one minute in all
dmesg | grep -q "a copy that never completed holds .*: abandoning it" ||
	fail "no warning that a copy holds the channels"
[ "$(active)" = none ] || fail "dcbm still active without its provider"
# the orphans' reaper may run meanwhile: it must leave the channels alone
sleep 1
ch=$(cat $TUN/dcbm/channels)
[ -z "$ch" ] || fail "dcbm/channels names channels that are gone: $ch"
select_migrator dcbm 2>/dev/null && fail "dcbm selected while orphans hold gone channels"
if dmesg | grep -q "BUG: KASAN"; then
	fail "KASAN: $(dmesg | grep -m1 'BUG: KASAN')"
else
	pass "channels of an unbound provider left alone: no KASAN report"
fi
echo $DCBM_TIMEOUT_MS > $D/timeout_ms
finish
