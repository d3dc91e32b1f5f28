#!/bin/sh
# A provider whose prep sleeps while its ring is full: idxd prepares with
# idxd_alloc_desc(wq, IDXD_OP_BLOCK), which waits (interruptibly, so a
# kernel thread waits for ever) until a descriptor of the work queue
# completes. swdma's prep_blocks=1 with ring_size=4 does the same. dcbm
# must never have more descriptors in flight on a channel than
# dcbm/queue_depth, set to the ring's size: then prep never waits, a batch
# on an engine that stopped completing gives up after timeout_ms as on
# any other engine (its pairs kept, sources and destinations held until
# the engine's driver resets the channel, swdma's hang_ms), and the
# migration goes on. The migrating task must not
# be stuck in prep: it is given 25 s (timeout_ms is 300 then), then killed
# so that the test can go on. Every byte must arrive; the folios of kept
# pairs may stay where they were while their sources are held (migbench
# -K: no more than were kept). The orphans end, and the engine then
# copies again. Failed before the fix (series v5 of November 26): the migration stayed
# in swdma_prep_dma_memcpy().
. /opt/mig/tests/lib.sh

P=/sys/module/swdma/parameters
D=$DCBM
RING=4

# one channel that completes in order, one descriptor per page so that a batch needs many more descriptors than the ring holds
modprobe swdma nr_channels=1 max_seg_size=4096 || { echo "cannot load swdma"; exit 1; }
dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }
echo 1 > $D/nr_channels
if [ -e $D/queue_depth ]; then
	echo $RING > $D/queue_depth || fail "cannot set queue_depth to $RING"
else
	echo "dcbm has no queue_depth"
fi
echo $RING > $P/ring_size && echo 1 > $P/prep_blocks || fail "cannot set swdma's ring"
select_migrator dcbm || { echo "cannot select dcbm"; exit 1; }

# migrate LABEL [-K]: a verified hop of 4K folios 0 -> 1 -> 0, given 25 s
# (about 2 s in CI; below the 30 s timeout_ms of the working engine)
migrate() {
	rm -f /tmp/mb.rc
	(migbench -s 2 -k 4 -r 1 -V 0,1 ${2:-} > /tmp/mb.log 2>&1; echo $? > /tmp/mb.rc) &
	sub=$!
	t=0
	while [ ! -e /tmp/mb.rc ] && [ $t -lt 25 ]; do sleep 1; t=$((t + 1)); done
	if [ ! -e /tmp/mb.rc ]; then
		pid=$(for p in /proc/[0-9]*; do
			[ "$(cat $p/comm 2>/dev/null)" = migbench ] &&
				[ "$(awk '{ print $4 }' $p/stat)" = $sub ] && echo ${p#/proc/}
		done)
		fail "$1: the migration ends in time" "still running after $t s (timeout_ms $(cat $D/timeout_ms)): in $(cat /proc/$pid/wchan 2>/dev/null)"
		sed 's/^/    /' /proc/$pid/stack 2>/dev/null
		kill -KILL $pid
	else
		pass "$1: the migration ended within 25 s"
	fi
	wait $sub
	rc=$(cat /tmp/mb.rc)
	echo "$1: migbench exit $rc after about $t s"
	# killed (137): its data was not checked to the end
	if [ "$rc" -eq 0 ]; then
		pass "$1: data exact after migration"
	elif [ "$rc" -ne 137 ]; then
		cat /tmp/mb.log; fail "$1: data not exact after migration"
	fi
	[ -z "${2:-}" ] || echo "$1: migbench -K: $(kept_left /tmp/mb.log |
		awk '{ print $1 " folios kept, " $2 " pages left behind" }')"
}

# the engine completes: prep never needs to wait, every folio copied (a
# ring of 4 is slow on an emulated machine: no timeout then)
echo 30000 > $D/timeout_ms
snap
migrate "ring of $RING, engine working"
echo "engine working: batches +$(delta batches) folios +$(delta folios)" \
     "nomem +$(delta fallback_nomem) timeout +$(delta fallback_timeout)"
[ "$(delta folios)" -gt 0 ] || fail "engine working: dcbm copied nothing"
[ "$(delta fallback_timeout)" -eq 0 ] || fail "engine working: timeouts"

# the engine stops completing: the ring fills and stays full
echo 300 > $D/timeout_ms
echo 600 > $P/hang_ms &&
	echo hang > $P/fail_mode && swdma_fail desc 100 || fail "cannot make swdma hang"
snap
migrate "ring of $RING, engine hung" -K
echo "engine hung: batches +$(delta batches) kept +$(delta kept)" \
     "timeout +$(delta fallback_timeout) busy +$(delta fallback_busy)," \
     "orphans $(cat $TUN/dcbm/orphans)"
[ "$(delta kept)" -gt 0 ] && pass "engine hung: destinations kept" ||
	fail "engine hung: destinations kept" "engine hung: no destination kept"

# the engine completes again; its orphans end when swdma resets their
# channel and aborts what it holds
swdma_fail desc 0 && echo error > $P/fail_mode && echo 0 > $P/hang_ms
orphans_gone "engine hung" 60
echo 30000 > $D/timeout_ms
snap
migrate "ring of $RING, engine working again"
[ "$(delta folios)" -gt 0 ] || fail "working again: dcbm copied nothing"

select_migrator none || fail "cannot deselect dcbm"
echo $DCBM_TIMEOUT_MS > $D/timeout_ms
[ ! -e $D/queue_depth ] || echo 32 > $D/queue_depth
unload dcbm || fail "cannot unload dcbm"
unload swdma || fail "cannot unload swdma"
finish
