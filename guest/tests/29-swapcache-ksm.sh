#!/bin/sh
# Folios in the swap cache, KSM folios and dirty page cache, moved by
# move_pages() (reason "syscall_or_cpuset"): anonymous memory swapped out to
# a swap file and read back (its folios stay in the swap cache), pages KSM
# merged (16 contents, each mapped 128 times; moved with MPOL_MF_MOVE_ALL),
# and an ext4 file's pages that threads keep writing through a shared
# mapping while another keeps calling fsync(). Every byte is checked after,
# most pages must be on node 2; also that the swapped folios were in the
# swap cache, that KSM had merged the pages, and that the file on disk
# equals the mapping.
. /opt/mig/tests/lib.sh

dd if=/dev/zero of=/mnt/swapfile bs=1M count=96 2>/dev/null
chmod 600 /mnt/swapfile
mkswap /mnt/swapfile > /dev/null && swapon /mnt/swapfile || { fail "cannot enable swap"; finish; }
K=/sys/kernel/mm/ksm
echo 1000 > $K/pages_to_scan; echo 20 > $K/sleep_millisecs
for m in $(path_migrators kernel); do
	path_begin syscall_or_cpuset $m || continue
	s0=$(vmstat pswpout)
	held_start -n 1 -s 32 -f 4,64 -P -e 2:90 move 2
	cached=$(awk '$1 == "SwapCached:" { print $2 }' /proc/meminfo)
	held_finish; rc=$?
	echo "$m: swapped out +$(($(vmstat pswpout) - s0)) pages, $cached kB in the swap cache before the move"
	[ $(($(vmstat pswpout) - s0)) -gt 0 ] || fail "$m: nothing was swapped out"
	[ "$cached" -ge 16384 ] || fail "$m: the region is not in the swap cache"

	echo 1 > $K/run
	held_start -n 1 -s 8 -f 4 -m -e 2:50 move 2	# a KSM folio may be busy
	t=0
	while [ "$(cat $K/pages_sharing)" -lt 1000 ] && [ $t -lt 60 ]; do sleep 1; t=$((t + 1)); done
	echo "$m: KSM pages_shared $(cat $K/pages_shared), pages_sharing $(cat $K/pages_sharing)"
	[ "$(cat $K/pages_sharing)" -gt 0 ] || fail "$m: KSM merged nothing"
	held_finish; rc2=$?
	echo 2 > $K/run	# unmerge

	# ext4 page cache that writers keep dirtying while fsync() writes it
	# back and move_pages() moves it: folios migrate dirty, clean and
	# under writeback; no write may be lost, in memory or on disk.
	migcheck -W 5 -k 4 -m file -d /mnt; rc3=$?
	[ $rc3 -eq 0 ] || fail "$m: dirty page cache racing fsync (migcheck exit $rc3)"
	path_end swap-cache+ksm+dirty syscall_or_cpuset $m $((rc | rc2 | rc3)) multi
done
echo 0 > $K/run
swapoff /mnt/swapfile; rm -f /mnt/swapfile
path_cleanup
finish
