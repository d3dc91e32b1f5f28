#!/bin/sh
# Select, deselect, load and unload migrators and flip the reasons while
# migrations run. The migrations must stay exact; an active migrator's
# module must refuse to unload; nothing may crash, leak or trip lockdep
# (the kernel log is judged separately). A deselection does not wait for
# a copy in flight.
. /opt/mig/tests/lib.sh

start_migrations 4,64,2048

i=0
while [ $i -lt 15 ]; do
	modprobe test_migrator || fail "modprobe $i"
	echo $((i % 3)) > $TUN/test/delay_ms
	select_migrator test || fail "select $i"
	[ "$(active)" = test ] || fail "test not active after select"
	if rmmod test_migrator 2>/dev/null; then
		fail "rmmod of the active migrator succeeded"
		break
	fi
	[ $((i % 4)) -eq 0 ] && echo none > $MIG/reasons
	sleep 1
	echo all > $MIG/reasons
	select_migrator none || fail "deselect $i"
	unload test_migrator || fail "rmmod $i"
	grep -q test $MIG/migrator && fail "test still listed after rmmod"
	i=$((i + 1))
done

stop_migrations select/unload
[ "$(active)" = none ] || fail "final migrator list" "$(cat $MIG/migrator)"

# A deselection does not wait for copies in flight: one may wait for the
# reclaim of another chunk's destinations, for seconds. Each copy started
# holds a reference on its migrator instead, and the last one disables it.
# The test migrator stalls each wait for its copy (delay_ms 4000, counted in
# test/waiting); deselecting it while one stalls returns with the stall
# still going on (before, the deselection waited for it: waiting 0), the
# module stays pinned until the copy is waited for, and the data is exact.
modprobe test_migrator && echo 4000 > $TUN/test/delay_ms &&
	select_migrator test || fail "stall: cannot select test"
rm -f /tmp/stall.failed
(migbench -s 2 -k $BASE_KB -r 1 -V 0,1 > /tmp/stall.log 2>&1 || touch /tmp/stall.failed) &
stall_pid=$!
i=0
while [ "$(cat $TUN/test/waiting)" -eq 0 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$(cat $TUN/test/waiting)" -eq 0 ]; then
	fail "stall: no copy stalled in 20 s"
else
	select_migrator none || fail "stall: cannot deselect"
	w=$(cat $TUN/test/waiting)
	echo "stall: deselected with $w copies still stalled"
	[ "$w" -gt 0 ] && pass "stall: the deselection did not wait for the copy in flight" ||
		fail "stall: the deselection did not wait for the copy in flight" "stall: the deselection waited for the copy in flight"
	rmmod test_migrator 2>/dev/null && fail "stall: the module of a migrator still copying unloaded"
fi
wait $stall_pid
[ ! -e /tmp/stall.failed ] && pass "stall: data exact" || { cat /tmp/stall.log; fail "stall: data not exact"; }
echo 0 > $TUN/test/delay_ms
select_migrator test && select_migrator none || fail "stall: test cannot be selected again"
unload test_migrator || fail "stall: cannot unload test_migrator"
leak_check "migrators loaded, selected and unloaded"
finish
