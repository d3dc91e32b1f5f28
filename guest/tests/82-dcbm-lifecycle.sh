#!/bin/sh
# dcbm acquires channels when selected and releases them when deselected:
# without a DMA engine the selection fails cleanly; while dcbm holds
# channels, neither swdma nor dcbm can be unloaded; select, deselect, load
# and unload cycles under running migrations keep every byte exact. Public
# channels that a general-purpose client holds through dmaengine_get()
# (async_tx here) are shared instead.
. /opt/mig/tests/lib.sh

D=$MIG/dcbm
others="fallback_busy fallback_nomem fallback_timeout fallback_error fallback_incomplete"

modprobe dcbm || { echo "cannot load dcbm"; exit 1; }
select_migrator dcbm 2>/dev/null && fail "dcbm selected without any DMA engine"
[ "$(active)" = none ] || fail "active after a failed selection: $(active)"

modprobe swdma || fail "cannot load swdma"
select_migrator dcbm || fail "cannot select dcbm"
if rmmod swdma 2> /tmp/rmmod.err; then
	fail "swdma unloaded while dcbm holds its channels"
else
	echo "rmmod swdma while dcbm holds $(cat $D/channels): $(cat /tmp/rmmod.err)"
fi
if rmmod dcbm 2> /tmp/rmmod.err; then
	fail "dcbm unloaded while selected"
else
	echo "rmmod dcbm while selected: $(cat /tmp/rmmod.err)"
fi
grep -q '^swdma ' /proc/modules || fail "swdma gone"
[ -n "$(cat $D/channels)" ] || fail "no channels held"
select_migrator none || fail "deselect"
rmmod swdma || fail "swdma not unloadable after deselect"
rmmod dcbm || fail "dcbm not unloadable after deselect"

snap
start_migrations 4,64,2048
i=0
while [ $i -lt 8 ]; do
	priv=$(( (i / 2) % 2 == 0 ))
	modprobe swdma nr_channels=$((i % 4 + 1)) private=$priv out_of_order=$((i % 3)) ||
		fail "modprobe swdma $i"
	modprobe dcbm || fail "modprobe dcbm $i"
	echo $((4 - i % 4)) > $D/nr_channels || fail "nr_channels $i"
	select_migrator dcbm || fail "select $i"
	[ "$(active)" = dcbm ] || fail "dcbm not active after select $i"
	want=$(( i % 4 + 1 < 4 - i % 4 ? i % 4 + 1 : 4 - i % 4 ))
	[ "$(wc -w < $D/channels)" -eq $want ] ||
		fail "$i: $want channels wanted, holds: $(cat $D/channels)"
	rmmod swdma 2>/dev/null && { fail "rmmod swdma while held ($i)"; break; }
	sleep 1
	select_migrator none || fail "deselect $i"
	rmmod dcbm || fail "rmmod dcbm $i"
	rmmod swdma || fail "rmmod swdma $i"
	i=$((i + 1))
done
stop_migrations select/unload
echo "cycles: batches +$(delta batches) folios +$(delta folios) busy +$(delta fallback_busy)"
[ "$(delta folios)" -gt 0 ] || fail "dcbm copied nothing during the cycles"
for c in fallback_nomem fallback_timeout fallback_error fallback_incomplete; do
	[ "$(delta $c)" -eq 0 ] || fail "cycles: $c moved by $(delta $c)"
done

# public channels: someone holds them through dmaengine_get(), so dcbm
# cannot request them and shares them instead
modprobe swdma private=0 nr_channels=4 || fail "swdma private=0"
modprobe async_tx || fail "cannot load async_tx"
modprobe dcbm || fail "dcbm"
dmesg -c > /dev/null
select_migrator dcbm || fail "cannot select dcbm on shared channels"
dmesg | grep -q "dcbm: using .* shared" || fail "dcbm did not share: $(dmesg | grep dcbm)"
echo "shared: $(cat $D/channels)"
snap
migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "shared: data not exact"; }
[ "$(delta folios)" -gt 0 ] || fail "shared: dcbm copied nothing"
for c in $others; do
	[ "$(delta $c)" -eq 0 ] || fail "shared: $c moved by $(delta $c)"
done
rmmod swdma 2>/dev/null && fail "swdma unloaded while shared"
select_migrator none || fail "deselect shared"
rmmod dcbm || fail "rmmod dcbm (shared)"
rmmod async_tx || fail "rmmod async_tx"
rmmod swdma || fail "rmmod swdma (shared)"
[ "$(active)" = none ] || fail "final migrator list: $(cat $MIG/migrator)"
leak_check "dcbm and swdma loaded, selected and unloaded"
finish
