#!/bin/sh
# dcbm acquires channels when selected and releases them when deselected:
# without a DMA engine the selection fails cleanly; while dcbm holds
# channels, neither swdma nor dcbm can be unloaded; select, deselect, load
# and unload cycles under running migrations keep every byte exact. dcbm
# takes private channels only: public channels nobody holds (swdma
# private=0) it requests as private ones, but those that a general-purpose
# client holds through dmaengine_get() (async_tx here) it does not share
# (deferred to a later patch): the selection fails with -ENODEV and the
# migrator stays what it was.
. /opt/mig/tests/lib.sh

D=$DCBM
others="fallback_busy fallback_nomem fallback_timeout fallback_error fallback_incomplete"

dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }
select_migrator dcbm 2>/dev/null && fail "dcbm selected without any DMA engine"
[ "$(active)" = none ] || fail "active after a failed selection" "$(active)"

modprobe swdma || fail "cannot load swdma"
select_migrator dcbm || fail "cannot select dcbm"
if rmmod swdma 2> /tmp/rmmod.err; then
	fail "swdma unloaded while dcbm holds its channels"
else
	echo "rmmod swdma while dcbm holds $(cat $TUN/dcbm/channels): $(cat /tmp/rmmod.err)"
fi
if rmmod dcbm 2> /tmp/rmmod.err; then
	fail "dcbm unloaded while selected"
else
	echo "rmmod dcbm while selected: $(cat /tmp/rmmod.err)"
fi
grep -q '^swdma ' /proc/modules || fail "swdma gone"
[ -n "$(cat $TUN/dcbm/channels)" ] || fail "no channels held"
select_migrator none || fail "deselect"
unload swdma || fail "swdma not unloadable after deselect"
unload dcbm || fail "dcbm not unloadable after deselect"

snap
start_migrations 4,64,2048
i=0
while [ $i -lt 8 ]; do
	priv=$(( (i / 2) % 2 == 0 ))
	modprobe swdma nr_channels=$((i % 4 + 1)) private=$priv out_of_order=$((i % 3)) ||
		fail "modprobe swdma $i"
	dcbm_modprobe || fail "modprobe dcbm $i"
	echo $((4 - i % 4)) > $D/nr_channels || fail "nr_channels $i"
	select_migrator dcbm || fail "select $i"
	[ "$(active)" = dcbm ] || fail "dcbm not active after select $i"
	want=$(( i % 4 + 1 < 4 - i % 4 ? i % 4 + 1 : 4 - i % 4 ))
	[ "$(wc -w < $TUN/dcbm/channels)" -eq $want ] ||
		fail "$i: $want channels wanted, holds" "$(cat $TUN/dcbm/channels)"
	rmmod swdma 2>/dev/null && { fail "rmmod swdma while held ($i)"; break; }
	sleep 1
	select_migrator none || fail "deselect $i"
	unload dcbm || fail "rmmod dcbm $i"
	unload swdma || fail "rmmod swdma $i"
	i=$((i + 1))
done
stop_migrations select/unload
echo "cycles: batches +$(delta batches) folios +$(delta folios) busy +$(delta fallback_busy)"
[ "$(delta folios)" -gt 0 ] || fail "dcbm copied nothing during the cycles"
for c in fallback_nomem fallback_timeout fallback_error fallback_incomplete; do
	[ "$(delta $c)" -eq 0 ] || fail "cycles: $c moved by $(delta $c)"
done

# public channels that async_tx holds (dmaengine_get() when it loads):
# dcbm does not share them, the selection fails and changes nothing
modprobe swdma private=0 nr_channels=4 || fail "swdma private=0"
modprobe async_tx || fail "cannot load async_tx"
dcbm_modprobe || fail "dcbm"
select_migrator kernel || fail "cannot select the kernel migrator"
dmesg -c > /dev/null
dcbm_refuses_held
rmmod swdma 2>/dev/null && fail "swdma unloaded while async_tx holds it"
# once async_tx lets them go, dcbm takes them as private channels, and an
# async_tx loaded meanwhile does not get them
unload async_tx || fail "rmmod async_tx"
select_migrator dcbm || fail "cannot select dcbm on public channels nobody holds"
[ "$(active)" = dcbm ] || fail "dcbm not active" "$(active)"
[ "$(wc -w < $TUN/dcbm/channels)" -eq 4 ] || fail "4 channels wanted, holds" "$(cat $TUN/dcbm/channels)"
dmesg | grep -q "dcbm: using 4 private DMA channel" ||
	fail "dcbm's message" "$(dmesg | grep dcbm)"
modprobe async_tx || fail "cannot load async_tx while dcbm holds the channels"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "public, private to dcbm: data not exact"; }
[ "$(delta folios)" -gt 0 ] || fail "public, private to dcbm: dcbm copied nothing"
for c in $others; do
	[ "$(delta $c)" -eq 0 ] || fail "public, private to dcbm: $c moved by $(delta $c)"
done
select_migrator none || fail "deselect"
unload dcbm || fail "rmmod dcbm (public)"
unload async_tx || fail "rmmod async_tx"
unload swdma || fail "rmmod swdma (public)"
[ "$(active)" = none ] || fail "final migrator list" "$(cat $MIG/migrator)"
leak_check "dcbm and swdma loaded, selected and unloaded"
finish
