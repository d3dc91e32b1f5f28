#!/bin/sh
# Block-device page cache under migration. Its folios carry buffer heads and
# move with buffer_migrate_folio_norefs(), which checks under the buffer
# locks and i_private_lock that nobody holds a buffer. A file system changes
# its metadata buffers (bitmaps, inode tables, directory blocks, the journal)
# without the folio lock, so a folio's contents may only be copied after that
# check: a copy made before it (the batch copy) misses an update that lands
# in between, and the move installs the stale copy. blkmig (see its comment)
# maps the device and migrates its pages while writers work:
#   raw   /dev/vdb, 1K blocks (4 buffer heads per folio): buffered pwrite()
#         of patterns while move_pages() moves every page around nodes 0,
#         1, 2; sync, drop caches, every byte checked, and a last move with
#         nobody writing must move every page
#   ext4  /dev/vdc (ext4 with a journal, 1K blocks) mounted: files created,
#         written, fsynced and unlinked while the metadata pages that the
#         kernel has looked up move by move_pages() and node compaction
#         (which, unlike move_pages(), leaves the per-CPU buffer-head LRU on:
#         the file system's way to a buffer without the folio lock); sync,
#         umount, e2fsck -fn, remount, every file checked; no ext4 error
#   ext2  /dev/vdb made a small ext2 file system (busybox mke2fs, 1K
#         blocks), mounted with ext4: without a journal, ext4 releases a
#         metadata buffer right after changing it, where jbd2 holds it until
#         the checkpoint; the same churn and checks
# with the test migrator (a pause before each batch copy) and the kernel
# migrator, every reason enabled; everything is put back at the end.
# This did not catch series v1, which batched these folios, in 16 boots:
# move_pages() disables the buffer-head LRU (lru_cache_disable()), and a
# lookup that misses it takes the folio lock, which migration holds, so a
# writer cannot reach a folio between its batch copy and its move; jbd2
# keeps changed buffers referenced, so those folios do not move at all.
# Only compaction leaves the bh LRU on. The test covers the path (and
# shows the folios ineligible); 19-buffer-holders is the regression test
# for the race (it failed on v1).
. /opt/mig/tests/lib.sh

# T18_* variables override the settings (for experiments): T18_PARTS picks
# the cases, T18_FS_ARGS adds blkmig fs options (-v: the page of each round).
RAW=/dev/vdb FS=/dev/vdc DIR=/tmp/blkmnt
BATCH=${T18_BATCH:-8192}	# max_batch_pages
DELAY=${T18_DELAY:-5}		# test migrator: ms before each batch copy
SECS_RAW=${T18_SECS_RAW:-10}
SECS_FS=${T18_SECS_FS:-20}
RAW_MB=${T18_RAW_MB:-8}	# raw: the part of the device used
FS_MB=${T18_FS_MB:-16}	# fs: the part moved (the metadata is at the start)
COLD=${T18_COLD:-95}	# fs: anonymous pages moved with each hot page
THREADS=${T18_THREADS:-4}	# raw: writers
FS_THREADS=${T18_FS_THREADS:-2}	# fs: writers, each on its own CPU
FSYNC=${T18_FSYNC:-4}		# fs: fsync every N-th file
PARTS=${T18_PARTS:-raw ext4 ext2}

[ -b $RAW ] && [ -b $FS ] ||
	{ echo "needs $RAW and $FS (scripts/run-guest.sh GUEST_DISKS)"; exit 4; }

fs_errors() { dmesg | grep -c -i -E 'ext4.*error|jbd2.*(error|abort)'; }
pgmigrated() { awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat; }

use_migrator() {	# NAME
	select_migrator "$1" || fail "cannot select $1"
	if [ "$1" = test ]; then
		echo copy > $TUN/test/mode
		echo "$DELAY" > $TUN/test/delay_ms
	fi
}

# Start counting; counted LABEL then says what the batch path saw: the
# block-device folios it refused as "ineligible" (the ext4 and ext2 cases
# also move anonymous pages, which it copies).
counting() { snap; mig0=$(pgmigrated); err0=$(fs_errors); }
counted() {
	echo "$1: pages migrated +$(( $(pgmigrated) - mig0 )), batches +$(delta batches)," \
	     "copied +$(delta folios), ineligible +$(delta ineligible)," \
	     "retried +$(delta fallback_retry)"
	# block-device folios (buffer heads) are never batched: the batch
	# path must have refused some as ineligible
	[ "$(delta ineligible)" -gt 0 ] ||
		fail "$1: no block-device folio was refused as ineligible"
	[ "$(fs_errors)" -eq "$err0" ] ||
		fail "$1: file system errors in the kernel log: $(dmesg |
			grep -i -E 'ext4.*error|jbd2.*(error|abort)' | tail -3)"
}

fsck_dev() {	# DEV LABEL
	if ! command -v e2fsck.static > /dev/null; then
		echo "$2: no e2fsck.static in the initramfs, not checked"
		return
	fi
	e2fsck.static -fn "$1" > /tmp/fsck.log 2>&1 && rc=0 || rc=$?
	if [ $rc -eq 0 ]; then
		pass "$2: e2fsck -fn clean"
	else
		fail "$2: e2fsck -fn exit $rc"
		head -40 /tmp/fsck.log
	fi
}

# Churn the file system on DEV under migration, then check it from the disk.
fs_case() {	# DEV LABEL MIGRATOR
	label="$2, $3 migrator"
	echo "--- $label"
	use_migrator "$3"
	mount -t ext4 "$1" $DIR || { fail "$label: cannot mount $1"; return; }
	rm -rf $DIR/blkmig
	counting
	blkmig fs -D "$1" -s "$FS_MB" -c "$COLD" -d $DIR/blkmig -l /tmp/manifest \
		-t "$SECS_FS" -T "$FS_THREADS" -F "$FSYNC" ${T18_FS_ARGS:-} ||
		fail "$label: under migration"
	sync
	umount $DIR || fail "$label: umount"
	echo 3 > /proc/sys/vm/drop_caches
	fsck_dev "$1" "$label"
	if mount -t ext4 "$1" $DIR; then
		blkmig verify -d $DIR/blkmig -l /tmp/manifest &&
			pass "$label: every file exact after remount" ||
			fail "$label: every file exact after remount" "$label: files after remount"
		umount $DIR || fail "$label: umount after the check"
	else
		fail "$label: cannot mount $1 again"
	fi
	counted "$label"
}

modprobe test_migrator || { echo "cannot load test_migrator"; exit 1; }
saved_migrator=$(active)
saved_reasons=$(cat $MIG/reasons)
saved_batch=$(cat $TUN/max_batch_pages)
echo all > $MIG/reasons
echo "$BATCH" > $TUN/max_batch_pages || fail "max_batch_pages $BATCH"
mkdir -p $DIR

case " $PARTS " in *" raw "*)
	echo "--- raw $RAW, kernel migrator"
	use_migrator kernel
	# only move_pages() batches: every folio it moves is the device's
	echo syscall_or_cpuset > $MIG/reasons
	counting
	blkmig raw -D $RAW -s "$RAW_MB" -t "$SECS_RAW" -T "$THREADS" &&
		pass "raw $RAW: every sector exact, every page moved at the end" ||
		fail "raw $RAW: every sector exact, every page moved at the end" "raw $RAW"
	counted "raw $RAW"
	[ "$(delta folios)" -eq 0 ] ||
		fail "raw $RAW: no folio of the block device batched" "$(delta folios) folios of the block device were batched"
	echo all > $MIG/reasons
esac
case " $PARTS " in *" ext4 "*)
	fs_case $FS "ext4 $FS" test
	fs_case $FS "ext4 $FS" kernel
esac
case " $PARTS " in *" ext2 "*)
	for m in test kernel; do
		mke2fs -F -b 1024 $RAW $((FS_MB * 1024)) > /dev/null ||
			{ fail "mke2fs $RAW"; break; }
		fs_case $RAW "ext2 $RAW" $m
	done
esac

echo 0 > $TUN/test/delay_ms
echo "$saved_batch" > $TUN/max_batch_pages
echo "$saved_reasons" > $MIG/reasons
select_migrator "$saved_migrator"
unload test_migrator || fail "cannot unload test_migrator"
finish
