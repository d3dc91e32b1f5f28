#!/bin/sh
# In-guest test runner: runs every /opt/mig/tests/NN-*.sh (or the ones named
# as arguments) and reports TAP on $RESULTS. A test exits 0 (pass), 4 (skip,
# the kselftest convention) or anything else (fail); its output goes to the
# console, indented.
tests=${*:-$(ls /opt/mig/tests/[0-9][0-9]-*.sh)}
n=0
echo "1..$(echo "$tests" | wc -w)" > "$RESULTS"
for t in $tests; do
	n=$((n + 1))
	name=$(basename "$t" .sh)
	echo "### $name"
	start=$(date +%s)
	{ sh "$t" 2>&1; echo $? > /tmp/rc; } | sed 's/^/  /'
	rc=$(cat /tmp/rc 2>/dev/null || echo 1)
	rm -f /tmp/rc
	secs=$(( $(date +%s) - start ))
	case $rc in
	0) res="ok $n $name" ;;
	4) res="ok $n $name # SKIP" ;;
	*) res="not ok $n $name # exit $rc" ;;
	esac
	echo "$res (${secs}s)"
	echo "$res" > "$RESULTS"
done
echo "# done" > "$RESULTS"
