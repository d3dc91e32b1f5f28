#!/bin/sh
# dcbm copies migration batches with the DMA_MEMCPY channels of swdma, on one
# and on four channels, with descriptors completing in order, in reverse and
# at random: every byte must arrive (migbench verifies each hop), the DMA
# engine must have copied the folios, and none may fall back to the CPU.
# The same for every folio size and mapping kind of the core tests.
# Also: the defaults and bad input of /sys/kernel/mm/migration/dcbm/, the
# choice of the DMA device, and the minimum batch. Interrupts: every
# descriptor asks for one, whatever the order its engine completes in.
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM

modprobe swdma nr_channels=4 || { echo "cannot load swdma"; exit 1; }
modprobe dcbm || { echo "cannot load dcbm"; exit 1; }
grep -qw dcbm $MIG/migrator || fail "dcbm not listed" "$(cat $MIG/migrator)"
# the DMA device swdma registered, e.g. dma0
dev=$(ls /sys/class/dma | sed -n 's/chan0$//p' | head -1)
[ -n "$dev" ] || fail "no swdma channels in /sys/class/dma"

[ "$(cat $D/nr_channels)" = 4 ] || fail "nr_channels default" "$(cat $D/nr_channels)"
[ "$(cat $D/timeout_ms)" = 100 ] || fail "timeout_ms default" "$(cat $D/timeout_ms)"
# the pages of 32 KiB (0 with 64K pages)
[ "$(cat $TUN/dcbm/min_batch_pages)" = $((32 / BASE_KB)) ] || fail "min_batch_pages default" "$(cat $TUN/dcbm/min_batch_pages)"
[ "$(cat $D/queue_depth)" = 32 ] || fail "queue_depth default" "$(cat $D/queue_depth)"
[ -z "$(cat $D/device)" ] || fail "device default" "$(cat $D/device)"
[ -z "$(cat $TUN/dcbm/channels)" ] || fail "channels held while not selected" "$(cat $TUN/dcbm/channels)"
for v in 0 17 -1 abc 4x ""; do write_fails $D/nr_channels "$v"; done
for v in 0 60001 -5 x; do write_fails $D/timeout_ms "$v"; done
for v in -1 x 99999999999; do write_fails $TUN/dcbm/min_batch_pages "$v"; done
for v in 0 65537 -1 x; do write_fails $D/queue_depth "$v"; done
write_fails $D/device "0123456789012345678901234567890123"
echo $DCBM_TIMEOUT_MS > $D/timeout_ms || fail "timeout_ms $DCBM_TIMEOUT_MS rejected"

others="fallback_busy fallback_nomem fallback_timeout fallback_error fallback_incomplete fallback_declined fallback_below_min"
# run LABEL: verified hops of base pages, an mTHP size and 2M folios
# (4K, 64K, 2M; with 64K pages 64K, 256K, 2M); dcbm must copy them
# all: 3 sizes x 3 hops x 4 MiB, with only move_pages() batching meanwhile
run() {
	echo syscall_or_cpuset > $MIG/reasons
	snap
	migbench -s 4 -k $BASE_KB,$MTHP_KB,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$1: data not exact after migration"; }
	fb=0
	for c in $others; do fb=$((fb + $(delta $c))); done
	echo "$1: batches +$(delta batches) folios +$(delta folios)" \
	     "bytes +$(delta bytes) fallbacks +$fb"
	[ "$(delta bytes)" -eq $((3 * 3 * 4 << 20)) ] ||
		fail "$1: dcbm copied $(delta bytes) bytes, not the 36 MiB migrated"
	echo all > $MIG/reasons
	[ "$fb" -eq 0 ] || fail "$1: $fb folios fell back to the CPU"
}
# matrix LABEL: every folio size x mapping kind of the core tests (migcheck,
# which checks bytes and page nodes after every hop); for one and for four
# channels (out of order), to keep make test short
matrix() {
	snap
	migcheck -q -c move_pages > /tmp/mc.log 2>&1 ||
		{ cat /tmp/mc.log; fail "$1: matrix not exact"; }
	echo "$1, size x kind matrix: folios +$(delta folios)"
	[ "$(delta folios)" -gt 0 ] || fail "$1: dcbm copied nothing in the matrix"
}
nchan() { wc -w < $TUN/dcbm/channels; }

echo 1 > $D/nr_channels || fail "nr_channels 1"
select_migrator dcbm || fail "cannot select dcbm"
[ "$(active)" = dcbm ] || fail "dcbm not active"
[ "$(nchan)" -eq 1 ] || fail "1 channel wanted, holds" "$(cat $TUN/dcbm/channels)"
echo 0 > $P/out_of_order
run "1 channel, in order"
matrix "1 channel, in order"
echo 1 > $P/out_of_order
run "1 channel, reverse"
select_migrator none || fail "deselect"
[ -z "$(cat $TUN/dcbm/channels)" ] || fail "channels kept after deselect" "$(cat $TUN/dcbm/channels)"

echo 4 > $D/nr_channels || fail "nr_channels 4"
select_migrator dcbm || fail "cannot select dcbm with 4 channels"
[ "$(nchan)" -eq 4 ] || fail "4 channels wanted, holds" "$(cat $TUN/dcbm/channels)"
# nr_channels and device apply from the next selection on: the channels
# held stay as they are
echo 2 > $D/nr_channels || fail "nr_channels 2 rejected while selected"
echo dma99 > $D/device || fail "device rejected while selected"
[ "$(nchan)" -eq 4 ] || fail "channels changed while selected" "$(cat $TUN/dcbm/channels)"
echo 4 > $D/nr_channels && echo > $D/device
echo 0 > $P/out_of_order
d0=$(swdma_copies) i0=$(cat $P/interrupts)
run "4 channels, in order"
d=$(( $(swdma_copies) - d0 )) i=$(( $(cat $P/interrupts) - i0 )) b=$(delta batches)
echo "4 channels, in order: $d descriptors, $i of them asked for an interrupt"
# every descriptor asks for an interrupt (an engine may call back only
# then: idxd reaps its completions only on an interrupt)
[ "$d" -gt 0 ] && [ "$i" -eq "$d" ] ||
	fail "in order: $i of $d descriptors asked for an interrupt, in $b batches on 4 channels"
# a batch of one 2M folio (one hop of a single folio, in one batch unless
# max_batch_pages is lower) is shared by all four channels, each copying
# its part of the folio
counts() { cat /sys/devices/platform/swdma/dma/dma*chan*/memcpy_count; }
counts > /tmp/cnt0
snap
migbench -s 2 -k 2048 -r 1 -V 0,1 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "one 2M folio: data not exact"; }
counts > /tmp/cnt1
used=$(paste /tmp/cnt0 /tmp/cnt1 | awk '$2 > $1' | wc -l)
echo "one 2M folio a hop: batches +$(delta batches) folios +$(delta folios), channels used $used"
[ "$(delta folios)" -ge 1 ] && [ "$(delta batches)" -le 2 ] && [ "$used" -eq 4 ] ||
	fail "one 2M folio" "$(delta batches) batches used $used of the 4 channels"
echo 1 > $P/out_of_order
run "4 channels, reverse"
echo 2 > $P/out_of_order
run "4 channels, random"
matrix "4 channels, random"
echo 300 > $P/latency_us
run "4 channels, random, 300us latency"
echo 0 > $P/latency_us
echo 0 > $P/out_of_order

# two migrations at once share the channels: batches borrow the free ones,
# or fall back with -EBUSY when none is free; all bytes must arrive
select_migrator none
for n in 1 4; do
	echo $n > $D/nr_channels
	select_migrator dcbm || fail "cannot select dcbm with $n channels"
	echo 2 > $P/out_of_order
	snap
	rm -f /tmp/par.failed
	for j in 1 2; do
		{ migbench -s 4 -k $BASE_KB,$MTHP_KB,2048 -r 1 -V 0,1,2 > /tmp/par$j.log 2>&1 ||
			{ cat /tmp/par$j.log; touch /tmp/par.failed; }; } &
	done
	wait
	[ -e /tmp/par.failed ] && fail "$n channel(s), concurrent: data not exact"
	echo "$n channel(s), 2 concurrent migrations: batches +$(delta batches)" \
	     "folios +$(delta folios) busy +$(delta fallback_busy)" \
	     "error +$(delta fallback_error) timeout +$(delta fallback_timeout)"
	[ "$(delta folios)" -gt 0 ] || fail "$n channel(s), concurrent: dcbm copied nothing"
	for c in fallback_nomem fallback_timeout fallback_error fallback_incomplete; do
		[ "$(delta $c)" -eq 0 ] || fail "$n channel(s), concurrent: $c moved"
	done
	echo 0 > $P/out_of_order
	select_migrator none
done
echo 4 > $D/nr_channels
select_migrator dcbm || fail "cannot select dcbm again"

# a minimum batch larger than any batch: all copied by the CPU
echo 1000000 > $TUN/dcbm/min_batch_pages
snap
migbench -s 2 -k $BASE_KB,2048 -r 1 -V 0,1 > /tmp/mb.log 2>&1 || { cat /tmp/mb.log; fail "min_batch: data"; }
[ "$(delta fallback_below_min)" -gt 0 ] || fail "min_batch: fallback_below_min did not move"
[ "$(delta batches)" -eq 0 ] || fail "min_batch" "$(delta batches) batches offered"
echo 0 > $TUN/dcbm/min_batch_pages
select_migrator none || fail "deselect"

# device by DMA device name and by parent device name; an unknown one
# fails the selection and leaves "none" active
for name in $dev swdma; do
	echo $name > $D/device || fail "device $name rejected"
	select_migrator dcbm || fail "cannot select dcbm on $name"
	case "$(cat $TUN/dcbm/channels)" in
	${dev}chan*) ;;
	*) fail "device $name: channels $(cat $TUN/dcbm/channels)" ;;
	esac
	run "device $name"
	select_migrator none
done
echo dma99 > $D/device
select_migrator dcbm 2>/dev/null && fail "dcbm selected without a dma99"
[ "$(active)" = none ] || fail "active after a failed selection" "$(active)"
[ -z "$(cat $TUN/dcbm/channels)" ] || fail "channels held after a failed selection"
echo > $D/device
[ -z "$(cat $D/device)" ] || fail "device not cleared" "$(cat $D/device)"

# an engine taking short segments only, not a multiple of the page size:
# dcbm must split folios to fit, and still copy it all
unload swdma || fail "cannot unload swdma"
modprobe swdma max_seg_size=5000 out_of_order=2 ||
	fail "cannot load swdma max_seg_size=5000 out_of_order=2"
select_migrator dcbm || fail "cannot select dcbm on 5000-byte segments"
d0=$(swdma_copies) i0=$(cat $P/interrupts)
run "5000-byte segments, random"
d=$(( $(swdma_copies) - d0 )) i=$(( $(cat $P/interrupts) - i0 ))
echo "5000-byte segments, random: $d descriptors, $i of them asked for an interrupt"
[ "$d" -gt 0 ] && [ "$i" -eq "$d" ] ||
	fail "out of order: $i of $d descriptors asked for an interrupt"
select_migrator none

unload dcbm || fail "cannot unload dcbm"
unload swdma || fail "cannot unload swdma"
finish
