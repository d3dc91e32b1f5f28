#!/bin/sh
# A provider that calls a descriptor back and then fails its submission:
# idxd does so on a shared work queue whose ENQCMDS the device refuses
# (idxd_submit_desc() -> llist_abort_desc() calls back the descriptor that
# asked for an interrupt with DMA_TRANS_WRITE_FAILED, then tx_submit
# returns the error). swdma's fault-injection attribute fail_submit
# (interval k, probability 100) does the same with every k-th submission,
# on a device that completes out of order as idxd's
# (every descriptor asks for an interrupt). dcbm must count such a
# descriptor once: counted twice, a batch is finished, unmapped and freed
# while one of its descriptors still writes (KASAN: use-after-free in
# dcbm_callback() or swdma_copy()), or its count never reaches zero and
# the orphan never ends. Every byte must arrive, the failed submissions
# fall back as errors, no orphan is left, the kernel log stays clean.
# Failed before the fix (series v5 of November 26): KASAN slab-use-after-free
# in dcbm_callback() from the tasklet, then a general protection fault there
# and a panic (the first case).
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM

modprobe swdma nr_channels=4 out_of_order=2 || { echo "cannot load swdma"; exit 1; }
dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }
echo 4 > $D/nr_channels
select_migrator dcbm || { echo "cannot select dcbm"; exit 1; }

dmesg -c > /dev/null
# case LABEL EVERY LATENCY: verified hops of 4K and 64K folios
case_() {
	echo "$3" > $P/latency_us && swdma_fail submit 100 "$2" ||
		fail "$1: cannot set swdma"
	snap
	migbench -s 8 -k 4,64 -r 2 -V 0,1,2 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$1: data not exact after migration"; }
	# the descriptors a batch left behind complete meanwhile
	sleep 2
	echo "$1: batches +$(delta batches) folios +$(delta folios)" \
	     "error +$(delta fallback_error) timeout +$(delta fallback_timeout)" \
	     "kept +$(delta kept) orphans $(cat $TUN/dcbm/orphans)"
	[ "$(delta fallback_error)" -gt 0 ] || fail "$1: no submission failed"
	[ "$(delta folios)" -gt 0 ] || fail "$1: dcbm copied nothing"
	orphans_gone "$1" 30
	if dmesg | grep -q -e "BUG: KASAN" -e "WARNING:"; then
		fail "$1: no KASAN report or warning" "$(dmesg | grep -m1 -e 'BUG: KASAN' -e 'WARNING:')"
	else
		pass "$1: no KASAN report, no warning"
	fi
}

case_ "every 50th submission fails, 1 ms descriptors" 50 1000
case_ "every 7th submission fails" 7 0
case_ "every 3rd submission fails, 200 us descriptors" 3 200

# The late order: idxd's interrupt thread holds the refused descriptor, so
# tx_submit returns the error first and the descriptor is called back at
# the next interrupt of the work queue (swdma fail_submit_late). By then
# dcbm has given the descriptor's record to a later batch: that callback
# must not count for the later descriptor, or the later batch ends while
# that descriptor's copy is still queued, which then writes a page already
# back in use (a lost write of migcheck's writers, or bytes that differ).
# Failed before the fix (series of November 29): see docs/tests.md.
echo 1 > $P/fail_submit_late || fail "late: cannot set fail_submit_late"
case_ "late callbacks of failed submissions, every 7th, 200 us descriptors" 7 200
snap
migcheck -q -W 5 -k 4,64 > /tmp/mc.log 2>&1 &&
	pass "late callbacks: writers lost no write" ||
	{ cat /tmp/mc.log; fail "late callbacks: writers lost writes (or bytes differ)"; }
echo "late, writers: error +$(delta fallback_error) folios +$(delta folios)"
[ "$(delta fallback_error)" -gt 0 ] || fail "late, writers: no submission failed"
orphans_gone "late, writers" 30
# Rounds of late failures, each followed by a migration without faults:
# the late callbacks still owed are delivered at the channels' first
# completions of that migration, and must not fail its descriptors (a
# fallback_error there is a late callback counted for a later descriptor;
# before the fix: 1 in the first boot that ran it).
errs=0
for r in 1 2 3 4 5 6; do
	swdma_fail submit 100 5
	migbench -s 2 -k 4,64 -r 1 -V 0,1 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "late, round $r: data not exact"; }
	swdma_fail submit 0
	snap
	migbench -s 2 -k 4,64 -r 1 -V 1,0 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "late, round $r, no faults: data not exact"; }
	errs=$((errs + $(delta fallback_error)))
done
[ "$errs" -eq 0 ] &&
	pass "late callbacks: no descriptor of a later migration failed by one" ||
	fail "late callbacks: no descriptor of a later migration failed by one" "late callbacks: $errs descriptors of migrations without faults failed (late callbacks counted for them)"
echo 0 > $P/fail_submit_late

swdma_fail submit 0
echo 0 > $P/latency_us
snap
migbench -s 4 -k 4,64 -r 1 -V 0,1 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "no faults: data not exact"; }
[ "$(delta fallback_error)" -eq 0 ] || fail "no faults: no error counted" "$(delta fallback_error) errors"
[ "$(delta folios)" -gt 0 ] || fail "no faults: dcbm copied nothing"

# The same failures on an engine that completes in order and calls
# descriptors back only when one raises an interrupt (idle_irq=0: idxd's
# driver reaps only then). A descriptor submitted before a failed
# submission that asked for no interrupt (an earlier dcbm asked for one
# per turn only) is never called back: the batch waits for its deadline
# and becomes an orphan, holding the pairs those descriptors cover (kept),
# until a later interrupt on that channel; their folios are not migrated.
# The deadline is 10 s: at 1 s (before November 29) a vCPU kept off the
# host's core that long could make a correct dcbm keep pairs, while
# without the interrupt the callbacks never come, whatever the deadline.
# Failed before the fix (series of November 27), twice: migbench "move to
# node 1 failed (2 pages left behind)", then (8 pages left behind), kept +8.
select_migrator none && unload dcbm && unload swdma || fail "cannot unload"
modprobe swdma nr_channels=4 idle_irq=0 || { echo "cannot load swdma"; exit 1; }
dcbm_modprobe && echo 4 > $D/nr_channels && echo 10000 > $D/timeout_ms &&
	select_migrator dcbm || { echo "cannot select dcbm"; exit 1; }
swdma_fail submit 100 100
dmesg -c > /dev/null
snap
migbench -s 4 -k 4 -r 1 -V 0,1,0 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "in order: pages not migrated or data not exact"; }
echo "in order, interrupts only: batches +$(delta batches)" \
     "error +$(delta fallback_error) kept +$(delta kept)"
[ "$(delta fallback_error)" -gt 0 ] || fail "in order: no submission failed"
[ "$(delta kept)" -eq 0 ] ||
	fail "in order: no pair kept" "$(delta kept) pairs kept (descriptors before a failed submission not called back in time)"
orphans_gone "in order" 10
dmesg | grep -q -e "BUG: KASAN" -e "WARNING:" &&
	fail "in order: no KASAN report or warning" "$(dmesg | grep -m1 -e 'BUG: KASAN' -e 'WARNING:')"
swdma_fail submit 0

select_migrator none || fail "cannot deselect dcbm"
unload dcbm || fail "cannot unload dcbm"
unload swdma || fail "cannot unload swdma"
finish
