#!/bin/sh
# Buffers changed by their holders while their folios migrate: the race
# that buffer_migrate_folio_norefs() closes by copying only after it has
# checked, under the buffer locks and i_private_lock, that nobody holds a
# buffer. A file system changes its metadata buffers so: reference, change
# without the folio lock, mark dirty, drop (18-blockdev cannot make it
# happen often enough: see there). The bh_holder test module does exactly
# that to the first 256 1K blocks of /dev/vdb (64 folios of 4 buffers), in
# a loop: hold all, change each one several times, drop all; each time it
# takes a buffer again it checks the buffer has its last change. blkmig
# move meanwhile move_pages() the device's first MiB around nodes 0, 1, 2.
# A batch copy made before the move's check misses the changes that the
# holder makes before it drops its reference, and the move installs it.
# After each run the module writes the device back, drops the page cache
# and reads every block again.
# Series v1 failed this (its batch path took these folios); in this series
# they are not batched: the stats must show them ineligible.
. /opt/mig/tests/lib.sh

DEV=/dev/vdb
KO=/opt/mig/kmod/bh_holder.ko
P=/sys/module/bh_holder/parameters
SECS=${T19_SECS:-8}
MIGRATORS=${T19_MIGRATORS:-kernel test}	# any other is offered none of these folios

[ -b $DEV ] || { echo "needs $DEV (scripts/run-guest.sh GUEST_DISKS)"; exit 4; }
[ -f $KO ] || { echo "no $KO in the initramfs"; exit 1; }

param() { cat $P/$1; }

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
saved_migrator=$(active)
saved_reasons=$(cat $MIG/reasons)
# only move_pages() batches: every folio it moves is the device's
echo syscall_or_cpuset > $MIG/reasons

for m in $MIGRATORS; do
	echo "--- $m migrator"
	select_migrator $m || { fail "cannot select $m"; continue; }
	[ $m = test ] && echo copy > $TUN/test/mode
	insmod $KO dev=$DEV blocks=256 blksize=1024 ||
		{ fail "$m: cannot load bh_holder"; continue; }
	snap
	blkmig move -D $DEV -s 1 -t "$SECS" || fail "$m: the mover"
	echo 1 > $P/stop
	echo "$m: $(param rounds) holds, batches +$(delta batches)," \
	     "copied +$(delta folios), ineligible +$(delta ineligible)"
	[ "$(param rounds)" -gt 0 ] || fail "$m: the holder did not run"
	[ "$(param read_errors)" -eq 0 ] ||
		fail "$m: every block read" "$(param read_errors) blocks could not be read"
	if [ "$(param stale)" -eq 0 ]; then
		pass "$m: every buffer had its last change when taken again"
	else
		fail "$m: no buffer lost a change" "$(param stale) buffers lost a change (a stale copy moved in)"
	fi
	if [ "$(param final_bad)" -eq 0 ]; then
		pass "$m: every block read back from the device has its last change"
	else
		fail "$m: every block on the device has its last change" "$(param final_bad) blocks on the device lost their last change"
	fi
	[ "$(delta ineligible)" -gt 0 ] ||
		fail "$m: no block-device folio was refused as ineligible"
	[ "$(delta folios)" -eq 0 ] ||
		fail "$m: no folio of the block device batched" "$(delta folios) folios of the block device were batched"
	rmmod bh_holder || fail "$m: cannot unload bh_holder"
done

echo "$saved_reasons" > $MIG/reasons
select_migrator "$saved_migrator"
unload test_migrator && unload migrate_mtcopy || fail "cannot unload the migrators"
finish
