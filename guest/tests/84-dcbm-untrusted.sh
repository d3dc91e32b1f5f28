#!/bin/sh
# DMA providers that dcbm cannot fully trust, imitated by swdma:
#  results=0          failed descriptors are called back without a result,
#                     as ptdma does, which dmaengine reports as success: dcbm
#                     must refuse such a provider (it would take failed
#                     copies for good ones: the test shows the damage if it
#                     does not refuse)
#  terminate=0        no device_terminate_all, as ioat and idxd; descriptors
#                     slower than dcbm's timeout: dcbm cannot stop them, and
#                     must keep what they cover (sources and destinations)
#                     until they are all called back, the folios move to
#                     new destinations once their sources are let go
#                     (until then they may stay where they were: migbench
#                     -K), every byte checked, and no late write may reach
#                     memory in use (KASAN sees swdma's copy into a freed
#                     page): a dcbm that ends such an orphan when it cannot
#                     terminate its channel fails here; deselected while
#                     orphans of hung descriptors live, dcbm leaves the
#                     channels they use to them, which release them
#  private=0          public channels that async_tx holds, with a RAID5
#                     array writing through them (async_memcpy()
#                     descriptors; under swiotlb=force, the test of the
#                     async_memcpy() fix of the series): the array's
#                     writes must all complete, every byte and its parity
#                     right; dcbm does not share those channels (deferred
#                     to a later patch): selecting it fails with -ENODEV
#                     and leaves the array's traffic alone
#  slave=1            a general-purpose controller (DMA_SLAVE, serving
#                     peripherals): dcbm takes its channels only when the
#                     device setting names it
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM

dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }

run() {		# LABEL MIGBENCH-ARGS...
	label=$1; shift
	snap
	migbench "$@" > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$label: data not exact after migration"; }
	echo "$label: batches +$(delta batches) folios +$(delta folios)" \
	     "error +$(delta fallback_error) timeout +$(delta fallback_timeout)" \
	     "kept +$(delta kept)"
	! grep -q '^kept ' /tmp/mb.log ||
		echo "$label: migbench -K: $(kept_left /tmp/mb.log |
			awk '{ print $1 " folios kept, " $2 " pages left behind" }')"
}
# RAID5 over vdd, vde, vdf through md's sysfs (the guest has no mdadm): no
# superblock; the members are zeros, so it is clean (resync_start none).
# With ASYNC_TX_DMA, raid5 copies each written page into its stripe cache
# with async_memcpy(), on the public channel dmaengine gives this CPU.
R=/sys/block/md0/md
raid_create() {
	modprobe raid456 && echo md0 > /sys/module/md_mod/parameters/new_array &&
	echo none > $R/metadata_version && echo raid5 > $R/level &&
	echo 3 > $R/raid_disks && echo 65536 > $R/chunk_size &&
	echo 2 > $R/layout || return 1
	slot=0
	for d in vdd vde vdf; do
		cat /sys/block/$d/dev > $R/new_dev && echo $slot > $R/dev-$d/slot &&
		echo 16384 > $R/dev-$d/size || return 1
		slot=$((slot + 1))
	done
	echo 16384 > $R/component_size && echo none > $R/resync_start &&
	echo active > $R/array_state
}
# raid_write LABEL MIB: write MIB of random bytes through the array's page
# cache, then check them from the members (page cache dropped) and md's
# parity check; done in $TMPDIR/raid.$LABEL.ok or .fail
raid_write() {
	head -c $(($2 * 1048576)) /dev/urandom > /tmp/raid.pat
	if dd if=/tmp/raid.pat of=/dev/md0 bs=64K conv=fsync 2>/dev/null &&
	   echo 3 > /proc/sys/vm/drop_caches &&
	   head -c $(($2 * 1048576)) /dev/md0 | cmp -s - /tmp/raid.pat; then
		echo check > $R/sync_action
		while [ "$(cat $R/sync_action)" != idle ]; do sleep 1; done
		echo "mismatch $(cat $R/mismatch_cnt)" > "/tmp/raid.$1.ok"
	else
		echo "bytes differ" > "/tmp/raid.$1.fail"
	fi
}
# raid_check LABEL SECS: raid_write LABEL finished in time, bytes and parity right
raid_check() {
	i=0
	while [ ! -e "/tmp/raid.$1.ok" ] && [ ! -e "/tmp/raid.$1.fail" ] && [ $i -lt "$2" ]; do
		sleep 1; i=$((i + 1))
	done
	if [ -e "/tmp/raid.$1.ok" ]; then
		[ "$(cat "/tmp/raid.$1.ok")" = "mismatch 0" ] ||
			fail "$1: RAID5 parity check: $(cat "/tmp/raid.$1.ok")"
		pass "$1: the array's writes completed in $i s, every byte right"
	elif [ -e "/tmp/raid.$1.fail" ]; then
		fail "$1: $(cat "/tmp/raid.$1.fail")"
	else
		fail "$1: the array's writes did not complete in $2 s"
	fi
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
	echo error > $P/fail_mode && swdma_fail desc 100 3
	run "results=0, every 3rd fails" -s 2 -k 4,64 -r 1 -V 0,1
	select_migrator none
else
	pass "dcbm refuses a provider without DMA_COMPLETION_RESULT"
fi
unload swdma || fail "cannot unload swdma"

echo "--- slave=1: a general-purpose controller only by name"
modprobe swdma nr_channels=2 slave=1 || { echo "cannot load swdma"; exit 1; }
if select_migrator dcbm 2>/dev/null; then
	fail "dcbm took a general-purpose controller that was not named"
	select_migrator none
else
	pass "dcbm leaves a general-purpose controller alone"
fi
echo swdma > $D/device
if select_migrator dcbm; then
	run "general-purpose controller, named" -s 1 -k 4,64 -r 1 -V 0,1
	[ "$(delta batches)" -gt 0 ] || fail "named controller: no batch"
	select_migrator none || fail "cannot deselect dcbm"
else
	fail "dcbm refused the general-purpose controller it was given"
fi
echo > $D/device
unload swdma || fail "cannot unload swdma"

echo "--- terminate=0: slow descriptors that cannot be terminated"
modprobe swdma nr_channels=2 terminate=0 latency_us=30000 ||
	{ echo "cannot load swdma"; exit 1; }
echo 20 > $D/timeout_ms
select_migrator dcbm || fail "cannot select dcbm"
run "no terminate" -s 1 -k 4,64 -r 1 -V 0,1,0 -K
[ "$(delta kept)" -gt 0 ] || fail "no terminate: nothing kept"
orphans_gone "no terminate" 120
kasan_clean "no terminate"
# deselecting with orphans defers the release of the channels to the
# last: every descriptor hangs until swdma resets its channel, 5 s later;
# the migration waits for the sources the orphan holds, so deselect
# while it runs
echo 0 > $P/latency_us && echo 5000 > $P/hang_ms && echo hang > $P/fail_mode &&
	swdma_fail desc 100 || fail "cannot make swdma hang"
migbench -s 1 -k 64 -r 1 -V 0,1 -K > /tmp/mb.log 2>&1 &
mb=$!
i=0
while [ "$(cat $TUN/dcbm/orphans)" -eq 0 ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
select_migrator none || fail "cannot deselect dcbm"
n=$(cat $TUN/dcbm/orphans) held=$(cat $TUN/dcbm/channels)
echo "hung, no terminate: deselected with $n orphans, channels held: $held"
[ "$n" -gt 0 ] || fail "hung, no terminate: no orphan when deselected"
[ "$n" -eq 0 ] || [ -n "$held" ] ||
	fail "hung, no terminate: channels released under $n orphans"
wait $mb || { cat /tmp/mb.log; fail "hung, no terminate: data not exact after migration"; }
swdma_fail desc 0
orphans_gone "hung, no terminate" 60
[ -z "$(cat $TUN/dcbm/channels)" ] || fail "channels still held" "$(cat $TUN/dcbm/channels)"
kasan_clean "hung, no terminate"
unload swdma || fail "cannot unload swdma"

echo "--- private=0: public channels async_tx holds, with a RAID5 array"
modprobe swdma nr_channels=2 private=0 || { echo "cannot load swdma"; exit 1; }
# async_tx holds the public channels (dmaengine_get()), and raid5 copies
# through them
raid_create || fail "cannot create the RAID5 array"
before=$(swdma_copies)
raid_write "RAID5 alone" 8
raid_check "RAID5 alone" 1
copies=$(( $(swdma_copies) - before ))
echo "RAID5 alone: $copies copies by swdma"
[ "$copies" -ge 2048 ] || fail "RAID5 alone: $copies copies by swdma, 2048 pages written"
# dcbm does not share them, even while the array writes through them
dmesg -c > /dev/null
raid_write "RAID5 with a selection" 2 &
dcbm_refuses_held
raid_check "RAID5 with a selection" 300
kasan_clean "RAID5"
echo $DCBM_TIMEOUT_MS > $D/timeout_ms
echo clear > $R/array_state || fail "cannot stop the RAID5 array"
# async_tx holds the public channels as long as it is loaded
for m in raid456 async_raid6_recov async_pq async_xor async_memcpy async_tx; do
	[ ! -d /sys/module/$m ] || unload $m || fail "cannot unload $m"
done
unload swdma || fail "cannot unload swdma"
unload dcbm || fail "cannot unload dcbm"
finish
