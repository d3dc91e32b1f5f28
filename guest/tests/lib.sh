# Helpers for the guest tests; sourced.
MIG=/sys/kernel/mm/migration
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pass() { echo "ok: $*"; }
# Exit with the verdict of the checks made so far.
finish() { [ "$fails" -eq 0 ] && exit 0; echo "$fails checks failed"; exit 1; }

counter() { cat "$MIG/stats/$1"; }
# Snapshot all counters into variables s_<name>; delta NAME prints the change.
snap() { for f in "$MIG"/stats/*; do eval "s_$(basename "$f")=$(cat "$f")"; done; }
delta() { eval "echo \$(( \$(counter $1) - s_$1 ))"; }

# The active migrator: the bracketed name.
active() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$MIG/migrator"; }
select_migrator() { echo "$1" > "$MIG/migrator"; }

# write_fails FILE VALUE: the write must fail and leave FILE unchanged.
write_fails() {
	before=$(cat "$1")
	if echo "$2" > "$1" 2>/dev/null; then
		fail "writing '$2' to $1 succeeded"
	elif [ "$(cat "$1")" != "$before" ]; then
		fail "failed write of '$2' changed $1 from '$before' to '$(cat "$1")'"
	else
		pass "'$2' rejected by $(basename "$1")"
	fi
}

# Tracepoints (also used by /opt/mig/bench.sh); EVENT is GROUP/NAME, or
# NAME for the migrate group.
TRACING=/sys/kernel/tracing
events() {	# on|off EVENT...: enable (on a cleared buffer) or disable
	v=0; [ "$1" = on ] && v=1 && : > $TRACING/trace
	shift
	for e in "$@"; do
		case $e in */*) ;; *) e=migrate/$e ;; esac
		echo $v > $TRACING/events/$e/enable
	done
}
# Sum of the batch-copy durations in the trace buffer, in seconds.
copy_seconds() {
	awk '/mm_migrate_batch_copy_begin:/ { sub(":", "", $4); t = $4 }
	     /mm_migrate_batch_copy_end:/   { sub(":", "", $4); s += $4 - t }
	     END { printf "%.6f\n", s }' $TRACING/trace
}

# Verified migrations around nodes 0, 1, 2 in the background while a test
# changes migrators under them; stop_migrations fails if any was not exact.
start_migrations() {	# folio sizes, e.g. 4,64,2048
	rm -f /tmp/stop /tmp/bg.failed
	(while [ ! -e /tmp/stop ]; do
		migbench -s 2 -k "$1" -r 1 -V 0,1,2 > /tmp/bg.log 2>&1 ||
			{ cat /tmp/bg.log; echo bad > /tmp/bg.failed; }
	done) &
	bg_pid=$!
}
stop_migrations() {
	touch /tmp/stop
	wait $bg_pid
	[ ! -e /tmp/bg.failed ] || fail "a migration under $1 was not exact"
}

# dcbm: wait up to SECS for every orphan (a batch whose descriptors were
# not all called back in time) to end; fail if one is left.
orphans_gone() {	# LABEL SECS
	t=0
	while [ "$(cat $MIG/dcbm/orphans)" -ne 0 ] && [ $t -lt "$2" ]; do
		sleep 1; t=$((t + 1))
	done
	[ "$(cat $MIG/dcbm/orphans)" -eq 0 ] ||
		fail "$1: $(cat $MIG/dcbm/orphans) orphans left after $2 s"
	echo "$1: orphans ended after ${t} s"
}
