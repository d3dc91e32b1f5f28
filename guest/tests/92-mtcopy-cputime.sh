#!/bin/sh
# The workers' CPU time is charged to the migrating task: its system time
# with mtcopy (2 threads) stays comparable to the kernel migrator's for the
# same work. Without the charge it would drop by half the copy time. (Two
# threads, because the guest's vCPUs share two host cores: with more busy
# vCPUs than host cores, every copy thread runs slower and the copy really
# costs more guest CPU time.)
. /opt/mig/tests/lib.sh

stime() {	# the migrating thread's system time in move_pages(), 2M folios
	migbench -j -s 32 -k 2048 -r 3 -f 0 -t 1 2>/dev/null |
		sed -n 's/.*"move_stime_s":\([0-9.]*\).*/\1/p'
}

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
select_migrator kernel
events on mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
k=$(stime)
c=$(copy_seconds)
events off mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
select_migrator mtcopy
echo 2 > $MIG/mtcopy/threads
m=$(stime)
select_migrator kernel
rmmod migrate_mtcopy
echo "system time: kernel ${k}s (of which copy ${c}s), mtcopy x2 ${m}s"
# Without the charge, mtcopy x2 would lose about half the copy time (c/2);
# with it, nothing. Fail if more than a quarter of the copy time is missing,
# or if mtcopy costs more than twice the kernel migrator's time.
verdict=$(awk -v k="$k" -v m="$m" -v c="$c" 'BEGIN {
	if (m < k - c / 4) print "hidden"; else if (m > 2 * k) print "over"; else print "ok" }')
case $verdict in
hidden) fail "mtcopy hides CPU time: ${m}s < ${k}s - ${c}s/4" ;;
over) fail "mtcopy over-charges: ${m}s > 2 x ${k}s" ;;
esac
finish
