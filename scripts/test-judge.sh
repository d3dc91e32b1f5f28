#!/usr/bin/env bash
# Self-test of the kernel-log judge (kernel_problems in scripts/lib.sh,
# scripts/kernel-log.py), on synthetic logs: make test runs it before any boot,
# since every "kernel log clean" rests on it. Prints KTAP; exit status 1 if
# the judge gets any case wrong.
#   scripts/test-judge.sh [LIB]  judge with the kernel_problems() of LIB
#   instead, e.g. an older scripts/lib.sh (git show REV:scripts/lib.sh)
. "$(dirname "$0")/lib.sh"
if [ -n "${1:-}" ]; then
	# shellcheck disable=SC1090  # the judge under test
	. "$1" || die "cannot source $1"
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0 bad=0
echo "KTAP version 1"
echo "1..19"

# verdict NAME problems|clean LOG [TITLE]: the judge must find problems (and
# print TITLE among them) or call the log clean.
verdict() {
	local name=$1 want=$2 log=$3 title=${4:-} got=clean
	n=$((n + 1))
	kernel_problems "$log" 2> "$dir/titles" && got=problems
	if [ "$got" = "$want" ] && { [ -z "$title" ] || grep -q -F -- "$title" "$dir/titles"; }; then
		echo "ok $n $name"
	else
		bad=$((bad + 1))
		echo "# judged $got, expected $want${title:+ with '$title'}; it printed:"
		head -5 "$dir/titles" | sed 's/^/#   /'
		echo "not ok $n $name"
	fi
}

# A boot's usual lines: kernel messages, the job's indented output (which
# may name bugs without being a kernel report), no report.
boot() {
	printf '[    0.000000] Linux version 6.12.117 (gcc)\n'
	printf '[    1.234567] Freeing unused kernel image (initmem) memory: 2048K\n'
	printf 'init: 6.12.117, 4 cpus, nodes: 0-2\n### 40-batch-fallback\n'
	printf '  FAIL: BUG: WARNING: kernel BUG at in a test message, not a kernel line\n'
	printf '  ok: no Call Trace: in dmesg\n'
}
warn() {	# STAMP
	printf '[%12s] ------------[ cut here ]------------\n' "$1"
	printf '[%12s] WARNING: CPU: 1 PID: 42 at lib/test_migrator.c:88 kept_folio_work+0x1a/0x90 [test_migrator]\n' "$1"
	printf '[%12s] Modules linked in: test_migrator\n[%12s] Call Trace:\n' "$1" "$1"
	printf '[%12s]  <TASK>\n[%12s]  process_one_work+0x5f/0x100\n[%12s]  </TASK>\n' "$1" "$1" "$1"
}

boot > "$dir/clean"
verdict "a boot without reports is clean" clean "$dir/clean"

{ boot; warn 12.000001; } > "$dir/one"
verdict "one WARNING" problems "$dir/one" "1 x WARNING at lib/test_migrator.c:88 kept_folio_work"

# Thousands of reports (a WARN per folio): the old judge's grep | head died
# of SIGPIPE under pipefail and called such a log clean.
{ boot; for i in $(seq 2000); do warn "$((100 + i)).000000"; echo "  migbench: hop $i ok"; done; } > "$dir/many"
verdict "2000 WARNINGs, one title" problems "$dir/many" "2000 x WARNING at lib/test_migrator.c:88 kept_folio_work"

# The kernel's line starts in the middle of the job's (shared ttyS0).
{ boot; printf '  ok: some[   12.345678] BUG: KASAN: slab-use-after-free in channels_show+0x2a/0x80 [dcbm]\n'; } > "$dir/split"
verdict "a report that starts mid-line" problems "$dir/split" "1 x BUG: KASAN: slab-use-after-free in channels_show"

# At loglevel=6 a hung task is one line on the console (its stack is KERN_INFO).
{ boot; printf '[  250.000000] INFO: task migbench:123 blocked for more than 122 seconds.\n'; } > "$dir/hung"
verdict "a hung task (one line)" problems "$dir/hung" "hung task: migbench"

{ boot; printf '[   50.000000] rcu: INFO: rcu_sched self-detected stall on CPU\n'
  printf '[   60.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [migbench:77]\n'
  printf '[   70.000000] BUG: Bad page state in process migbench  pfn:12345\n'
  printf '[   80.000000] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n'
  printf '[   90.000000] UBSAN: array-index-out-of-bounds in mm/migrate.c:77:9\n'; } > "$dir/kinds"
verdict "RCU stall, soft lockup, bad page, leak, UBSAN" problems "$dir/kinds" "RCU stall (rcu_sched)"
verdict "five kinds, five titles" problems "$dir/kinds" "1 x UBSAN: array-index-out-of-bounds in mm/migrate.c:77:9"

# A stack dump that follows no report is a report of its own.
{ boot; printf '[   30.000000] swdma: something odd\n[   30.000001] CPU: 1 UID: 0 PID: 9 Comm: x\n'
  printf '[   30.000001] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009)\n[   30.000001] Call Trace:\n'; } > "$dir/stack"
verdict "a stack dump alone" problems "$dir/stack" "stack dump after: swdma: something odd"

# arm64 (make test-arm64): a kernel fault is "Unable to handle kernel ..."
# and "Internal error: Oops", its stack "Call trace:", not "Call Trace:".
{ boot; printf '[  123.456789] Unable to handle kernel paging request at virtual address dead000000000108\n'
  printf '[  123.456790] Mem abort info:\n[  123.456791]   ESR = 0x0000000096000044\n'
  printf '[  123.456800] Internal error: Oops: 0000000096000044 [#1] PREEMPT SMP\n'
  printf '[  123.456801] Modules linked in: dcbm swdma\n[  123.456803] pc : dcbm_callback+0x2c/0x120 [dcbm]\n'
  printf '[  123.456804] Call trace:\n[  123.456805]  dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/arm64-oops"
verdict "an arm64 Oops" problems "$dir/arm64-oops" "1 x Internal error: Oops"
verdict "an arm64 fault's first line" problems "$dir/arm64-oops" "1 x Unable to handle kernel paging request"
{ boot; printf '[   30.000000] swdma: something odd\n[   30.000001] CPU: 1 UID: 0 PID: 9 Comm: x\n'
  printf '[   30.000001] Hardware name: linux,dummy-virt (DT)\n[   30.000001] Call trace:\n'
  printf '[   30.000002]  show_stack+0x20/0x38 (C)\n'; } > "$dir/arm64-stack"
verdict "an arm64 stack dump alone" problems "$dir/arm64-stack" "stack dump after: swdma: something odd"

# A kmsg log (guest/kmsglog) and the console carry the same reports: once.
{ boot; warn 12.000001; } > "$dir/console"
{ boot | grep '^\['; warn 12.000001; } > "$dir/kmsg"
n=$((n + 1))
if kernel_problems "$dir/console" "$dir/kmsg" 2>&1 | grep -q '^1 x WARNING'; then
	echo "ok $n the same report in two logs counts once"
else
	bad=$((bad + 1)); echo "not ok $n the same report in two logs counts once"
fi
# A kmsg log that is empty (kmsglog never ran) or lost records is no verdict.
boot > "$dir/console"
: > "$dir/kmsg-empty"
n=$((n + 1))
if kernel_problems "$dir/console" "$dir/kmsg-empty" 2>/dev/null; then
	echo "ok $n an empty kmsg log is not clean"
else
	bad=$((bad + 1)); echo "not ok $n an empty kmsg log is not clean"
fi
{ boot | grep '^\['; printf '[   20.000000] kmsglog: 5000 records lost\n'; } > "$dir/kmsg-lost"
verdict "a kmsg log that lost records" problems "$dir/kmsg-lost" "kmsglog lost records"

# A boot that died of a stale int3 (QEMU): judged up to it.
int3() {
	printf '[  500.000000] Oops: int3: 0000 [#1] PREEMPT SMP KASAN NOPTI\n'
	printf '[  500.000001] RIP: 0010:___slab_alloc+0x10/0x900\n'
	printf '[  500.000002] Code: 48 89 e5 41 57 66 90 <0f> 1f 44 00 00 41 56\n'
	printf '[  500.000003] Kernel panic - not syncing: Fatal exception in interrupt\n'
}
{ boot; int3; } > "$dir/int3"
verdict "a stale int3 alone" clean "$dir/int3" "stale int3 (QEMU, not the kernel): Oops: int3"
# The kmsg log caught only the Oops' first line: cut where the console's was.
# (sed -n 1p, not head -1: under pipefail a writer killed by SIGPIPE when
# head exits first, which a loaded host allows, ended this script.)
{ boot | grep '^\['; int3 | sed -n 1p; } > "$dir/kmsg-int3"
n=$((n + 1))
if kernel_problems "$dir/int3" "$dir/kmsg-int3" 2>/dev/null; then
	bad=$((bad + 1)); echo "not ok $n a stale int3 seen whole in one log only"
else
	echo "ok $n a stale int3 seen whole in one log only"
fi
{ boot; warn 40.000000; int3; } > "$dir/int3-warn"
verdict "a WARNING before a stale int3" problems "$dir/int3-warn" "1 x WARNING at lib/test_migrator.c:88"
# A real int3 (the byte is still 0xcc) is the kernel's.
{ boot; int3 | sed 's/66 90 <0f>/66 cc <0f>/'; } > "$dir/int3-real"
verdict "an int3 that is still in memory" problems "$dir/int3-real" "Oops: int3"

verdict "a log that cannot be read is not clean" problems "$dir/missing"

[ "$n" -eq 19 ] || { echo "# planned 19 cases, ran $n"; bad=$((bad + 1)); }
echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
