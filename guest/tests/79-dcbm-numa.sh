#!/bin/sh
# dcbm chooses a batch's channels by node and device: first those whose
# DMA device is on the destination node, then on the source's, then any;
# at each step one channel per device before a second one of a device.
# swdma's two devices ("swdma", "swdma.1", nodes=), two channels each.
#
# Devices on nodes 1 and 2, batches of 32 pages (max_batch_pages: dcbm
# wants 2 of its 4 channels for each, and no batch overlaps another):
# migrations between nodes 0 and 1 copy only on the node-1 device, between
# 0 and 2 only on the node-2 device (the way back to node 0, which has no
# device, by the source's node). Devices on no node, dcbm holding 3
# channels (2 of one device, 1 of the other): every batch takes one
# channel of each device, so both copy as many bytes. Only move_pages()
# batches: compaction of node 0 during a hop would use any device. Bytes
# exact throughout. Failed before "dmaengine: dcbm: choose a batch's
# channels by node, then by device": rotation alone gave the other node's
# device half the bytes, and the device with one channel half the bytes of
# the other.
. /opt/mig/tests/lib.sh

# dev_bytes DEV: bytes the channels of swdma's device DEV copied
dev_bytes() {
	cat /sys/devices/platform/$1/dma/dma*chan*/bytes_transferred |
		awk '{ n += $1 } END { print n + 0 }'
}

# load NODES NR_CHANNELS: swdma's two devices on NODES, dcbm selected on
# NR_CHANNELS of their channels
load() {
	modprobe swdma nr_channels=2 nodes="$1" || { fail "cannot load swdma nodes=$1"; finish; }
	dcbm_modprobe && echo "$2" > $DCBM/nr_channels && select_migrator dcbm &&
		echo 32 > $TUN/max_batch_pages &&
		echo syscall_or_cpuset > $MIG/reasons ||
		{ fail "cannot select dcbm on swdma nodes=$1"; finish; }
	echo "nodes=$1: dcbm channels: $(cat $TUN/dcbm/channels)"
}

unload_all() {
	echo 512 > $TUN/max_batch_pages
	echo all > $MIG/reasons
	select_migrator none
	unload dcbm
	unload swdma
}

# hops LABEL NODES: 8 MiB of 4K folios around NODES and back (migbench -V)
hops() {
	snap
	migbench -s 8 -k 4 -r 1 -V "$2" > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$1: data not exact"; }
	[ "$(delta folios)" -gt 0 ] || fail "$1: dcbm copied nothing"
}

# Devices on nodes 1 and 2
load 1,2 4
for n in 1 2; do
	a0=$(dev_bytes swdma) b0=$(dev_bytes swdma.1)
	hops "0<->$n" 0,$n
	a=$(( $(dev_bytes swdma) - a0 )) b=$(( $(dev_bytes swdma.1) - b0 ))
	echo "0<->$n: node-1 device $a bytes, node-2 device $b bytes"
	if [ $n = 1 ]; then near=$a far=$b; else near=$b far=$a; fi
	verdict "0<->$n: copied only on the node-$n device" \
		"$near bytes there, $far on the other" test "$near" -gt 0 -a "$far" -eq 0
done
unload_all

# Devices on no node: spread over devices first
load -1,-1 3
a0=$(dev_bytes swdma) b0=$(dev_bytes swdma.1)
hops "no node" 0,1
a=$(( $(dev_bytes swdma) - a0 )) b=$(( $(dev_bytes swdma.1) - b0 ))
echo "no node: device swdma $a bytes, swdma.1 $b bytes"
# within 10% of each other (a batch under 64 KiB, a retry, takes one)
even() {
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ $((a * 10)) -ge $((b * 9)) ] &&
		[ $((b * 10)) -ge $((a * 9)) ]
}
verdict "no node: a batch takes a channel of each device" "$a and $b bytes" even
unload_all
finish
