#!/bin/sh
# The upstream dmatest client, with verification, against swdma: on every
# channel, private and public, interrupt-driven and polled, with several
# threads per channel completing out of order; all must pass. Then with
# swdma failing every descriptor, or never completing them, dmatest must
# see every test fail (an error status, a timeout), and swdma must unload.
# Last, what tx_status says after a terminate (the dma_status test module):
# a descriptor called back reads DMA_COMPLETE, and one that reads
# DMA_COMPLETE has copied its bytes: one the terminate dropped before it
# ran must not, in order and out of order. And swdma's device unbound
# while dmatest holds its channels: no use-after-free when it lets them go.
. /opt/mig/tests/lib.sh

T=/sys/module/dmatest/parameters
P=/sys/module/swdma/parameters

# dmatest LABEL EXPECT_FAILED ARGS...: run dmatest on every swdma channel;
# check that each thread's summary counts EXPECT_FAILED failures ("all" for
# as many as tests)
dmatest() {
	label=$1 expect=$2
	shift 2
	dmesg -c > /dev/null
	modprobe dmatest "$@" || { fail "$label: modprobe dmatest $*"; return; }
	echo 1 > $T/run
	cat $T/wait > /dev/null
	dmesg | grep 'summary' > /tmp/dmatest.log
	rmmod dmatest || fail "$label: rmmod dmatest"
	n=$(wc -l < /tmp/dmatest.log)
	bad=0
	while read -r line; do
		set -- $(echo "$line" | sed -n 's/.*summary \([0-9]*\) tests, \([0-9]*\) failures.*/\1 \2/p')
		if [ "$expect" = all ]; then
			[ "$1" -gt 0 ] && [ "$2" -eq "$1" ] || bad=$((bad + 1))
		else
			[ "$2" -eq "$expect" ] || bad=$((bad + 1))
		fi
	done < /tmp/dmatest.log
	echo "$label: $n threads; $(sed 's/.*\] //' /tmp/dmatest.log | head -2 | tr '\n' ';')"
	[ "$n" -ge "$want_threads" ] || fail "$label: $n summaries, $want_threads wanted"
	[ "$bad" -eq 0 ] || { cat /tmp/dmatest.log; fail "$label: $bad threads with unexpected failures"; }
	[ "$n" -lt "$want_threads" ] || [ "$bad" -ne 0 ] ||
		pass "$label: every thread's summary as expected"
}

modprobe swdma nr_channels=4 || { echo "cannot load swdma"; exit 1; }
want_threads=4
dmatest "private, verified" 0 iterations=200 timeout=5000 noverify=0
# dma_sync_wait() spins without scheduling: on a non-preemptible kernel it
# must leave a CPU to the channel threads, so poll from one thread only
want_threads=1
dmatest "private, polled" 0 iterations=50 timeout=5000 polled=1 max_channels=1
# random order on a device loaded in order, which thus breaks its word:
# a descriptor called back must still read DMA_COMPLETE
want_threads=8
echo 2 > $P/out_of_order
echo 50 > $P/latency_us
dmatest "2 threads/channel, switched to random order" 0 iterations=100 timeout=5000 threads_per_chan=2
echo 0 > $P/latency_us
echo 0 > $P/out_of_order
# an engine that completes out of order says so (DMA_COMPLETION_NO_ORDER):
# its tx_status is DMA_OUT_OF_ORDER, which dmatest accepts, and the
# callbacks tell what completed
unload swdma || fail "cannot unload swdma"
modprobe swdma nr_channels=4 out_of_order=2 latency_us=50 ||
	{ echo "cannot load swdma out_of_order=2"; exit 1; }
dmatest "2 threads/channel, random order" 0 iterations=100 timeout=5000 threads_per_chan=2
unload swdma || fail "cannot unload swdma"
modprobe swdma nr_channels=4 || { echo "cannot load swdma"; exit 1; }

want_threads=2
swdma_fail desc 100 || fail "cannot make swdma fail"
echo error > $P/fail_mode
dmatest "all fail with an error" all iterations=5 timeout=5000 max_channels=2
grep -q "completion error status" /tmp/dmatest.log ||
	dmesg | grep -q "completion error status" || fail "no completion error status reported"
echo hang > $P/fail_mode
dmatest "all hang" all iterations=2 timeout=300 max_channels=2
swdma_fail desc 0
echo error > $P/fail_mode
want_threads=4
dmatest "after the faults" 0 iterations=50 timeout=5000
unload swdma || fail "cannot unload swdma"

# status_after_terminate LABEL RESIDUE SWDMA-ARGS...: RESIDUE is what
# tx_status must say of a queued descriptor ("any" where it says nothing)
status_after_terminate() {
	label=$1 residue=$2; shift 2
	modprobe swdma nr_channels=1 latency_us=20000 "$@" ||
		{ fail "$label: cannot load swdma"; return; }
	if insmod /opt/mig/kmod/dma_status.ko nr=32 wait_done=2; then
		S=/sys/module/dma_status/parameters
		echo "$label: called back $(cat $S/called_back), complete $(cat $S/completed)," \
		     "dropped $(cat $S/dropped), wrong $(cat $S/wrong)," \
		     "residue of a queued one $(cat $S/queued_residue)"
		[ "$residue" = any ] || [ "$(cat $S/queued_residue)" -eq "$residue" ] ||
			fail "$label: a queued 64-byte descriptor has residue $(cat $S/queued_residue)"
		[ "$(cat $S/wrong)" -eq 0 ] ||
			fail "$label: tx_status right after terminate" "$(cat $S/wrong) descriptors with the wrong tx_status after terminate"
		[ "$(cat $S/dropped)" -gt 0 ] && [ "$(cat $S/completed)" -ge 2 ] ||
			fail "$label: the terminate did not come between the descriptors"
		[ "$(cat $S/wrong)" -ne 0 ] ||
			pass "$label: every descriptor's tx_status right after the terminate"
		rmmod dma_status
	else
		fail "$label: dma_status did not run"
	fi
	unload swdma || fail "$label: cannot unload swdma"
}
status_after_terminate "tx_status after terminate" 64
status_after_terminate "tx_status after terminate, out of order" any out_of_order=2

# A client that still holds channels when their provider goes (swdma's
# device unbound while dmatest runs), and lets them go after:
# dma_release_channel() must not touch a channel once it has dropped the
# last reference to the device, which frees swdma's channels with it (on
# series v4: KASAN slab-use-after-free in dma_release_channel()).
unbind_held() {
	modprobe swdma nr_channels=2 latency_us=1000 || { fail "unbind: cannot load swdma"; return; }
	modprobe dmatest iterations=0 timeout=2000 max_channels=2 noverify=1 &&
		echo 1 > $T/run || fail "unbind: cannot start dmatest"
	sleep 2
	held=$(cat /sys/devices/platform/swdma/dma/dma*chan*/in_use | grep -c '^1$')
	[ "$held" -eq 2 ] || fail "unbind: dmatest holds $held of swdma's 2 channels"
	dmesg -c > /dev/null
	echo swdma > /sys/bus/platform/drivers/swdma/unbind || fail "cannot unbind swdma"
	echo 0 > $T/run		# dmatest gives its channels back
	rmmod dmatest || fail "unbind: rmmod dmatest"
	if dmesg | grep -q 'BUG: KASAN'; then
		dmesg | grep -A 3 'BUG: KASAN'
		fail "unbound with its channels held: KASAN report when dmatest let them go"
	else
		pass "unbound with its channels held: no KASAN report when dmatest let them go"
	fi
	unload swdma || fail "cannot unload swdma after the unbind"
}
unbind_held

modprobe swdma nr_channels=3 private=0 || fail "cannot load swdma private=0"
want_threads=3
dmatest "public, verified" 0 iterations=100 timeout=5000
unload swdma || fail "cannot unload swdma (public)"
finish
