#!/bin/sh
# Select, deselect, load and unload migrators and flip the reasons while
# migrations run. The migrations must stay exact; an active migrator's
# module must refuse to unload; nothing may crash, leak or trip lockdep
# (the kernel log is judged separately).
. /opt/mig/tests/lib.sh

start_migrations 4,64,2048

i=0
while [ $i -lt 15 ]; do
	modprobe test_migrator || fail "modprobe $i"
	echo $((i % 3)) > $MIG/test/delay_ms
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
	rmmod test_migrator || fail "rmmod $i"
	grep -q test $MIG/migrator && fail "test still listed after rmmod"
	i=$((i + 1))
done

stop_migrations select/unload
[ "$(active)" = none ] || fail "final migrator list: $(cat $MIG/migrator)"
leak_check "migrators loaded, selected and unloaded"
finish
