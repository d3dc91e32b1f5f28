#!/bin/sh
# The workers' CPU time is charged to the migrating task. Compared within
# one run, so that the emulator's speed swings (see the README) cancel out:
# with the kernel migrator the migrating thread's system time in
# move_pages() is about the wall time of the calls; with mtcopy x2 it copies
# half of each batch and waits for a worker doing the other half, so
# without the charge its system time would again be about the wall time,
# and with it, the wall time plus the worker's copy time, which is about
# the duration of the batch copies. (Two threads, because the guest's
# vCPUs share two host cores.)
. /opt/mig/tests/lib.sh

# migrator -> "stime wall copy": system time and wall time in move_pages(),
# and the summed duration of the batch copies, for 2M folios
measure() {
	select_migrator "$1"
	events on mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
	migbench -j -s 32 -k 2048 -r 3 -f 0 -t 1 2>/dev/null |
		grep '"type":"move"' > /tmp/cputime.json	# the summary of the reps
	events off mm_migrate_batch_copy_begin mm_migrate_batch_copy_end
	echo "$(sed -n 's/.*"move_stime_s":\([0-9.]*\).*/\1/p' /tmp/cputime.json)" \
	     "$(sed -n 's/.*"move_s":\([0-9.]*\).*/\1/p' /tmp/cputime.json)" \
	     "$(copy_seconds)"
}
# stime wall copy -> the system time beyond the wall time, in copy times
extra() { echo "$@" | awk '{ printf "%.2f\n", ($3 > 0) ? ($1 - $2) / $3 : 0 }'; }

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
echo 2 > $MIG/mtcopy/threads
# A worker that has not started when the task has copied its own share is
# not waited for: the task copies that share too, and there is nothing to
# charge. On a loaded host that can happen to most batches of a run, so a
# run that shows no charge is repeated, up to three in all.
for attempt in 1 2 3; do
	k=$(measure kernel)
	m=$(measure mtcopy)
	ek=$(extra $k) em=$(extra $m)
	echo "run $attempt: kernel: stime wall copy = $k s, extra $ek copies"
	echo "run $attempt: mtcopy x2: stime wall copy = $m s, extra $em copies"
	# kernel: about 0; mtcopy x2: up to 1, less when the worker's share
	# goes faster than the task's (0.3 to 0.8 measured); 0 if hidden.
	verdict=$(awk -v k="$ek" -v m="$em" 'BEGIN {
		if (k >= 0.15) print "control"; else if (m < 0.2) print "hidden";
		else if (m > 1.5) print "over"; else print "ok" }')
	[ "$verdict" = hidden ] || break
done
select_migrator none
rmmod migrate_mtcopy
case $verdict in
control) fail "kernel migrator: system time exceeds wall time by $ek copy times" ;;
hidden) fail "mtcopy hides CPU time: only $em copy times beyond the wall time, in 3 runs" ;;
over) fail "mtcopy over-charges: $em copy times beyond the wall time" ;;
esac
finish
