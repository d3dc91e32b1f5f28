#!/bin/sh
# DMA-API debugging (CONFIG_DMA_API_DEBUG) has checked every map, sync and
# unmap of the tests before it (dcbm and swdma with faults, timeouts,
# orphans and an unbind; dmatest): it must have reported no error, must
# not have run out of entries, and no mapping of swdma's device may be
# left now that nothing uses it.
. /opt/mig/tests/lib.sh

A=/sys/kernel/debug/dma-api
[ -d $A ] || { fail "no DMA-API debugging in this kernel"; finish; }
used=$(($(cat $A/nr_total_entries) - $(cat $A/num_free_entries)))
echo "DMA-API debugging: $(cat $A/error_count) errors, $used entries in use," \
     "at most $(($(cat $A/nr_total_entries) - $(cat $A/min_free_entries))) at once"
[ "$(cat $A/disabled)" = N ] || fail "DMA-API debugging turned itself off"
[ "$(cat $A/error_count)" -eq 0 ] && pass "no DMA-API error" ||
	fail "no DMA-API error" "DMA-API errors: $(cat $A/error_count)"
left=$(grep -c swdma $A/dump)
if [ "$left" -eq 0 ]; then
	pass "no mapping of swdma's device left"
else
	grep swdma $A/dump | head -5; fail "$left mappings of swdma's device left"
fi
finish
