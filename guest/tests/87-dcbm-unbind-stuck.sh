#!/bin/sh
# The provider goes away while copies that will never end hold its
# channels, and its unbind must not wait for them beyond dcbm's bound:
# 2 * timeout_ms per channel it holds (200 ms here). The series before
# November 29 waited a minute (60 s) for the first channel's orphans.
#
# First, every descriptor of swdma hangs and its channel never recovers
# (hang_ms 0), and swdma has no terminate (terminate=0, as ioat and idxd),
# so dcbm's orphans never end. Then a provider that drops what its
# channels hold when its device goes away, as ioat's removal did before
# "dmaengine: ioatdma: abort what a channel holds when the device goes
# away" (swdma remove_drops=1), unbound while migrations run on slow
# descriptors: the batches it dropped are never called back.
#
# Each time dcbm abandons the channels (a warning), never touches them
# again: dcbm/channels reads empty (no KASAN report: the channels' devices
# are freed), dcbm is deselected; every byte of the migrations is exact,
# the folios of kept pairs stay where they were, their sources held for
# good (migbench -K: no more than were kept); and once swdma's device is
# bound again, dcbm is selected on the new channels and copies (the
# series before November 29 refused it for good: -EBUSY). What the
# orphans hold (their kept pairs, the channels and swdma's module) is
# leaked for good, so this test runs last in its boot.
#
# After the reselection a batch maps pages that an orphan of the dropped
# work had mapped: until "dmaengine: dcbm: unmap at once what an orphan
# does not use" this failed on the defect N5 of the dmaengine review (an
# orphan kept its destinations' whole table mapped, also the pages it
# gave back; DMA-API debugging: "cacheline tracking EEXIST"). Now an
# orphan unmaps at once what no descriptor in flight uses.
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM
DRV=/sys/bus/platform/drivers/swdma

# unbind_bounded LABEL: unbind swdma, within the bound; dcbm abandons
unbind_bounded() {
	dmesg -c > /dev/null
	t0=$(date +%s)
	echo swdma > $DRV/unbind || fail "$1: unbind failed"
	t=$(( $(date +%s) - t0 ))
	echo "$1: unbind took $t s; orphans $(cat $TUN/dcbm/orphans)"
	# 2 channels x 200 ms, and time for TCG
	[ "$t" -le 5 ] && pass "$1: the unbind did not wait for the orphans" ||
		fail "$1: the unbind did not wait for the orphans" "$1: the unbind waited $t s for copies that never end"
	dmesg | grep -q "a copy that did not end holds .*: abandoning it" ||
		fail "$1: no warning that a copy holds the channels"
	[ "$(active)" = none ] || fail "$1: dcbm still active without its provider"
	sleep 1
	ch=$(cat $TUN/dcbm/channels)
	[ -z "$ch" ] || fail "$1: dcbm/channels names channels that are gone: $ch"
	select_migrator dcbm 2>/dev/null && fail "$1: dcbm selected without a provider"
}

# reselect LABEL: bind swdma again; dcbm takes its new channels and copies
# (with the tests' timeout: 100 ms, which the orphans above need, times
# out batches of 2 MiB on a slow host, whose folios then stay behind)
reselect() {
	echo swdma > $DRV/bind || fail "$1: rebind failed"
	if select_migrator dcbm; then
		snap
		echo $DCBM_TIMEOUT_MS > $D/timeout_ms
		migbench -s 4 -k 4,64 -r 1 -V 0,1 > /tmp/mb.log 2>&1 ||
			{ cat /tmp/mb.log; fail "$1, rebound: data not exact"; }
		echo 100 > $D/timeout_ms
		echo "$1, rebound: batches +$(delta batches) timeout +$(delta fallback_timeout)" \
		     "kept +$(delta kept)"
		[ "$(delta folios)" -gt 0 ] &&
			pass "$1: selected again on the new channels, copies" ||
			fail "$1: selected again on the new channels, copies" "$1: dcbm copied nothing on the new channels"
	else
		fail "$1: dcbm cannot be selected again after the rebind"
	fi
}

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
unbind_bounded "hung engine"
swdma_fail desc 0; echo error > $P/fail_mode
reselect "hung engine"

# A removal that drops the channels' work, under migrations of 20 ms
# descriptors (batches time out, orphans live until their descriptors
# complete): the orphans in flight are never called back.
echo 20000 > $P/latency_us && echo 1 > $P/remove_drops ||
	fail "cannot set swdma's latency_us, remove_drops"
snap
start_migrations 4,64 -K
t=0
while [ "$(delta batches)" -eq 0 ] && [ $t -lt 60 ]; do sleep 1; t=$((t + 1)); done
[ "$(delta batches)" -gt 0 ] || fail "removal drops: no batch reached dcbm in 60 s"
unbind_bounded "removal drops"
sleep 2
stop_migrations "removal drops"
echo "removal drops: batches +$(delta batches) timeout +$(delta fallback_timeout)" \
     "kept +$(delta kept) orphans $(cat $TUN/dcbm/orphans)"
echo "removal drops: migbench -K: $(kept_left /tmp/bg.kept |
	awk '{ print $1 " folios kept, " $2 " pages left behind" }')"
echo 0 > $P/remove_drops; echo 0 > $P/latency_us
reselect "removal drops"

if dmesg | grep -q "BUG: KASAN"; then
	fail "no KASAN report" "$(dmesg | grep -m1 'BUG: KASAN')"
else
	pass "channels of an unbound provider left alone: no KASAN report"
fi
select_migrator none
echo $DCBM_TIMEOUT_MS > $D/timeout_ms
finish
