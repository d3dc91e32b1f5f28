#!/bin/sh
# In-guest test runner, after kselftest's runner.sh: runs every
# /opt/mig/tests/NN-*.sh (or the ones named as arguments), each in its own
# session under the time limit of tests/settings, and reports KTAP on
# $RESULTS. A test exits 0 (pass), 4 (skip, the kselftest convention) or
# anything else (fail); its output goes to the console, indented, and into
# the KTAP as diagnostics; its sub-checks (fail/pass/skip of tests/lib.sh,
# kept in $SUBRESULTS) become its nested results. A test that exits 0 with
# a failed sub-check fails, and so does one that exits 0 without a passed
# sub-check (it checked nothing), and one during which the kernel took a
# taint flag that says it found a bug (new_taint of tests/lib.sh: a
# sub-check "kernel not tainted (new: W)" that fails). Each test's start
# and end are marked in the kernel log ("mig-test: start NN-name", "...
# end ..."): the host's kernel-log judge names the test in its reports.
# Before each test's result: "# start=" (UTC) and "# time=Ns".
# RUNNER_ROOT: a directory standing for / (the runner's self-test on the
# host, scripts/test-harness.sh: its tests, files, kernel log and taint).
root=${RUNNER_ROOT:-}
dir=$root/opt/mig/tests
tests=${*:-$(ls $dir/[0-9][0-9]-*.sh)}
. $dir/lib.sh
export SUBRESULTS=$root/tmp/subresults
log=$root/tmp/test.log
kmsg=$root/dev/kmsg
tainted=$root/proc/sys/kernel/tainted

# limit NAME: seconds NAME may run (tests/settings: timeout=, NAME=)
limit() {
	sed -n -e "s/^$1=\([0-9]*\)$/\1/p" -e 's/^timeout=\([0-9]*\)$/\1/p' $dir/settings | tail -1
}
# The test's output as KTAP diagnostics ("Subtest:" would open a test).
diagnostics() {	# INDENT
	awk 1 $log | sed -e "s/^/$1# /" -e 's/# Subtest:/# Subtest -/'
}
# Emit a test's sub-results, numbered, indented as its nested KTAP.
nested() {	# NAME
	m=$(grep -c . $SUBRESULTS)
	[ "$m" -gt 0 ] || { diagnostics ""; return; }
	echo "    KTAP version 1"
	echo "    # Subtest: $1"
	diagnostics "    "
	echo "    1..$m"
	awk '{ s = "ok"; if (sub(/^not ok /, "")) s = "not ok"; else sub(/^ok /, "")
	       print "    " s " " NR " " $0 }' $SUBRESULTS
}

# watch PID SECS NAME: say on the console every minute that NAME still runs
# (GUEST_STALL is for a guest whose userspace is stuck, not for a long
# test); past SECS, kill the session of PID, and after 20 s more tell the
# runner (USR1) to leave it behind.
watch() {
	trap 'kill $s 2>/dev/null; exit' TERM
	i=0
	while [ $i -lt "$2" ]; do
		sleep 5 & s=$!
		wait $s
		i=$((i + 5))
		[ $((i % 60)) -ne 0 ] || echo "  [$3: running for $i s]"
	done
	touch $root/tmp/timedout
	kill -KILL -- -"$1" 2>/dev/null
	sleep 20
	kill -USR1 $$
}

# A test runs in its own session (setsid runs it in place: its pid is the
# session's); what is left of the session when it ends is killed. A test
# that outlives its limit is killed with its session; one that cannot be
# killed (stuck in the kernel) is left behind after 20 s and the runner goes
# on: the kernel log (a hung task) tells the rest.
trap 'abandoned=1' USR1
# kmemleak: forget what boot left behind, so that a scan reports the tests'
# leaks; the last scan's findings ("kmemleak: N new suspected memory
# leaks", KERN_INFO) go to the kmsg log, which the host judges.
[ ! -e $KMEMLEAK ] || { kmemleak_scan; echo clear > $KMEMLEAK; }
n=0
exec 3> "$RESULTS"
echo "KTAP version 1" >&3
echo "1..$(echo "$tests" | wc -w)" >&3
for t in $tests; do
	n=$((n + 1))
	name=$(basename "$t" .sh)
	secs=$(limit "$name")
	: > $SUBRESULTS
	echo "### $name"
	start=$(date +%s)
	out=$root/tmp/out.$n
	mkfifo $out
	sed -e "w $log" -e 's/^/  /' < $out &	# not tee: it may buffer
	reader=$!
	rm -f $root/tmp/timedout
	taint0=$(cat $tainted)
	echo "mig-test: start $name" >> $kmsg
	setsid sh "$t" > $out 2>&1 3>&- &
	pid=$!
	watch $pid "$secs" "$name" &
	watcher=$!
	abandoned=0
	wait $pid; rc=$?
	# what is left of its session; then its output, all of it (a child
	# stuck in the kernel may hold the fifo: the watcher still runs)
	[ "$abandoned" = 1 ] || kill -KILL -- -$pid 2>/dev/null
	[ "$abandoned" = 1 ] || wait $reader
	kill $watcher 2>/dev/null
	rm -f $out
	flags=$(new_taint "$taint0" "$(cat $tainted)")
	if [ -n "$flags" ]; then
		echo "  FAIL: kernel not tainted (new: $flags)"
		result "not ok" "kernel not tainted (new: $flags)"
	fi
	secs=$(( $(date +%s) - start ))
	if [ -e $root/tmp/timedout ]; then
		res="not ok $n $name # TIMEOUT after $(limit "$name") s"
	elif grep -q '^not ok' $SUBRESULTS; then
		res="not ok $n $name # a sub-check failed (exit $rc)"
	elif [ "$rc" = 4 ]; then
		res="ok $n $name # SKIP $(tail -n 1 $log | tr -d '#')"
	elif [ "$rc" != 0 ]; then
		res="not ok $n $name # exit $rc"
	elif ! grep -v '# SKIP$' $SUBRESULTS | grep -q '^ok '; then
		res="not ok $n $name # no check passed (exit 0)"
	else
		res="ok $n $name"
	fi
	echo "$res (${secs}s)"
	case $res in "not ok"*) reset_migration ;; esac
	# (what reset_migration makes the kernel say is the failed test's)
	echo "mig-test: end $name" >> $kmsg
	# when it started (the guest's clock, UTC) and how long it took, as
	# diagnostics right before its result (scripts/test-report.py puts
	# them in test.json)
	{ nested "$name"; echo "# start=$(date -u -d "@$start" +%Y-%m-%dT%H:%M:%SZ)"
	  echo "# time=${secs}s"; echo "$res"; } >&3
done
if [ -e $KMEMLEAK ]; then
	kmemleak_scan || echo "kmemleak cannot scan"
	head -60 $KMEMLEAK
fi
