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
# One report line each (printf %b: \n, \r, \0 as escapes), after a boot:
# the judge must find it, with the title after the "|". The forms of 6.12
# the judge missed before November 29 (review-tests-2026-11-29.md, 1.1:
# the hard lockup, the block layer's I/O errors, EXT4 warnings, direct I/O
# against the page cache, a hung task whose comm has a space, caller ids),
# then the review's other synthetic reports.
LINES='[   60.000000] watchdog: CPU1: Watchdog detected hard LOCKUP on cpu 0|1 x hard lockup (during 40-batch-fallback)
[   60.000000] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1|1 x hard lockup
[   60.000000] I/O error, dev vdb, sector 2048 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 2|1 x I/O error on vdb
[   60.000000] EXT4-fs warning (device vda): ext4_end_bio:343: I/O error 10 writing to inode 12 starting block 4096)|1 x EXT4-fs warning on vda: ext4_end_bio
[   60.000000] Page cache invalidation failure on direct I/O.  Possible data corruption due to collision with buffered I/O!|1 x Page cache invalidation failure on direct I/O
[  250.000000] INFO: task jbd2/vda-8 x:123 blocked for more than 122 seconds.|1 x hung task: jbd2/vda-N x (during 40-batch-fallback)
[  250.000000] INFO: task kworker/u8:3:123 blocked for more than 122 seconds.|1 x hung task: kworker/u8:N
[   90.000000][  T123] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]|1 x BUG: KASAN: slab-use-after-free in dcbm_callback
[   90.000000][    C1] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [migbench:77]|1 x BUG: soft lockup
[   90.000000] BUG: sleeping function called from invalid context at mm/migrate.c:1234|BUG: sleeping function called from invalid context at mm/migrate.c:1234
[   90.000000] rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-.... } 21 jiffies s: 605|RCU stall (rcu_preempt)
[   90.000000] INFO: rcu_tasks detected stalls on tasks:|RCU stall (rcu_tasks)
[   90.000000] Oops: general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN NOPTI|Oops: general protection fault, probably for non-canonical address N
[   90.000000] Oops: Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI|1 x Oops: Oops
[   90.000000] list_del corruption, ffff888012345678->next is LIST_POISON1 (dead000000000100)|1 x list_del corruption
[   90.000000] BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 33s!|BUG: workqueue lockup
[   90.000000] BUG: KFENCE: use-after-free read in dcbm_callback+0x2c/0x120 [dcbm]|BUG: KFENCE: use-after-free
[   90.000000] BUG kmalloc-64 (Not tainted): Poison overwritten|1 x BUG kmalloc-N: Poison overwritten
[   90.000000] Kernel panic - not syncing: Fatal exception|1 x Kernel panic: Fatal exception
[   90.000000] Out of memory: Killed process 77 (migbench) total-vm:1000kB, anon-rss:900kB|1 x OOM kill of migbench
[   90.000000] migbench[77]: segfault at 0 ip 0000000000401000 sp 00007ffc00000000 error 4 in migbench[401000+1000]|1 x segfault of migbench
[   90.000000] mtecheck[77]: unhandled exception: EL0 ...|1 x segfault of mtecheck
2026-11-29T01:02:03Z [   90.000000] BUG: KASAN: use-after-free in migrate_chunk_finish+0x1/0x2|1 x BUG: KASAN: use-after-free in migrate_chunk_finish
<3>[   90.000000] BUG: KASAN: use-after-free in migrate_chunk_finish+0x1/0x2|1 x BUG: KASAN: use-after-free in migrate_chunk_finish
[   90.000000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\r|1 x BUG: KASAN: slab-use-after-free in dcbm_callback
[   90.000000] BUG: KA\0SAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]|1 x BUG: KA
[   90.000000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n[   90.000001] virtio_net virtio0: another CPU|1 x BUG: KASAN: slab-use-after-free in dcbm_callback
[   90.000000] BUG: KASAN: slab-use-after-f  ok: hop 3|1 x BUG: KASAN: slab-use-after-f ok: hop N'

n=0 bad=0
planned=$((33 + $(printf '%s\n' "$LINES" | wc -l)))
echo "KTAP version 1"
echo "1..$planned"

# verdict NAME problems|clean LOG [TITLE]: the judge must find problems (and
# print TITLE among them) or call the log clean. With accel=MODE, the boot
# ran under that accelerator (kernel-log.py --accel). (A '#' in NAME would
# start a KTAP directive.)
verdict() {
	local name=${1//#/ } want=$2 log=$3 title=${4:-} got=clean
	n=$((n + 1))
	kernel_problems ${accel:+--accel "$accel"} "$log" 2> "$dir/titles" && got=problems
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
	printf '[    1.300000] virtio_blk virtio2: [vdb] 131072 512-byte logical blocks (67.1 MB/64.0 MiB)\n'
	printf '[    1.400000] EXT4-fs (vda): mounted filesystem 0123-4567 r/w with ordered data mode. Quota mode: none.\n'
	printf 'init: 6.12.117, 4 cpus, nodes: 0-2\n### 40-batch-fallback\n'
	printf '[    1.500000] mig-test: start 40-batch-fallback\n'
	printf '  FAIL: BUG: WARNING: kernel BUG at in a test message, not a kernel line\n'
	printf '  ok: no Call Trace: in dmesg, no I/O error, dev vdb, sector 0\n'
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
if kernel_problems "$dir/console" "$dir/kmsg" 2>&1 |
   grep -q '^1 x WARNING at lib/test_migrator.c:88 kept_folio_work (during 40-batch-fallback)$'; then
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
accel=tcg verdict "a stale int3 alone" clean "$dir/int3" "stale int3 (QEMU, not the kernel): Oops: int3"
# Only multi-threaded TCG runs stale int3s: under tcg-single (make test),
# or with no accelerator named, such an Oops is the kernel's.
accel=tcg-single verdict "a stale int3 under single-threaded TCG" problems "$dir/int3" "1 x Oops: int3"
verdict "a stale int3, accelerator unknown" problems "$dir/int3" "1 x Oops: int3"
# The kmsg log caught only the Oops' first line: cut where the console's was.
# (sed -n 1p, not head -1: under pipefail a writer killed by SIGPIPE when
# head exits first, which a loaded host allows, ended this script.)
{ boot | grep '^\['; int3 | sed -n 1p; } > "$dir/kmsg-int3"
n=$((n + 1))
if kernel_problems --accel tcg "$dir/int3" "$dir/kmsg-int3" 2>/dev/null; then
	bad=$((bad + 1)); echo "not ok $n a stale int3 seen whole in one log only"
else
	echo "ok $n a stale int3 seen whole in one log only"
fi
{ boot; warn 40.000000; int3; } > "$dir/int3-warn"
accel=tcg verdict "a WARNING before a stale int3" problems "$dir/int3-warn" "1 x WARNING at lib/test_migrator.c:88"
# A real int3 (the byte is still 0xcc) is the kernel's.
{ boot; int3 | sed 's/66 90 <0f>/66 cc <0f>/'; } > "$dir/int3-real"
accel=tcg verdict "an int3 that is still in memory" problems "$dir/int3-real" "Oops: int3"

verdict "a log that cannot be read is not clean" problems "$dir/missing"

# Each report names the test that ran (guest/tests/run.sh's marks in
# /dev/kmsg), or says it came before the first or between two.
{ printf '[    0.000000] Linux version 6.12.117 (gcc)\n'; warn 1.000000
  printf '[    2.000000] mig-test: start 40-batch-fallback\n'; warn 3.000000
  printf '[    4.000000] mig-test: end 40-batch-fallback\n'; warn 5.000000
  printf '[    6.000000] mig-test: start 45-batch-retry\n'; warn 7.000000; } > "$dir/blame"
verdict "a report before the first test" problems "$dir/blame" "1 x WARNING at lib/test_migrator.c:88 kept_folio_work (during boot)"
verdict "a report during a test" problems "$dir/blame" "1 x WARNING at lib/test_migrator.c:88 kept_folio_work (during 40-batch-fallback)"
verdict "a report between tests" problems "$dir/blame" "1 x WARNING at lib/test_migrator.c:88 kept_folio_work (between tests)"
verdict "a report during a test that never ended" problems "$dir/blame" "1 x WARNING at lib/test_migrator.c:88 kept_folio_work (during 45-batch-retry)"
# the marks are in the kmsg log only (the console's were lost): the same
{ boot | grep -v mig-test; warn 12.000001; } > "$dir/console"
{ boot | grep '^\['; warn 12.000001; } > "$dir/kmsg"
n=$((n + 1))
if kernel_problems "$dir/console" "$dir/kmsg" 2>&1 |
   grep -q '^1 x WARNING at lib/test_migrator.c:88 kept_folio_work (during 40-batch-fallback)$'; then
	echo "ok $n the marks of one log name the test in both"
else
	bad=$((bad + 1)); echo "not ok $n the marks of one log name the test in both"
fi

while IFS='|' read -r line title; do
	{ boot; printf '%b\n' "$line"; } > "$dir/line"
	verdict "found: ${line#*] }" problems "$dir/line" "$title"
done <<< "$LINES"
# a report as the console's last line, with no newline
{ boot; printf '[   90.000000] kernel BUG at mm/migrate.c:321!'; } > "$dir/last"
verdict "a report on the last line, unterminated" problems "$dir/last" "1 x kernel BUG at mm/migrate.c:321"
# the job's output inside the first word of a report on the console: only
# the kmsg log has it whole, and the two are judged together
{ boot; printf '[   90.000000] BU  ok: hop 3\nG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/console"
{ boot | grep '^\['; printf '[   90.000000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/kmsg"
n=$((n + 1))
if kernel_problems "$dir/console" "$dir/kmsg" 2>&1 | grep -q '^1 x BUG: KASAN: slab-use-after-free in dcbm_callback '; then
	echo "ok $n a report the console split in its first word, whole in the kmsg log"
else
	bad=$((bad + 1)); echo "not ok $n a report the console split in its first word, whole in the kmsg log"
fi
# the same inside its stamp
{ boot; printf '[   90.0  ok: hop 3\n00000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/console"
{ boot | grep '^\['; printf '[   90.000000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/kmsg"
n=$((n + 1))
if kernel_problems "$dir/console" "$dir/kmsg" 2>&1 | grep -q '^1 x BUG: KASAN: slab-use-after-free in dcbm_callback '; then
	echo "ok $n a report the console split in its stamp, whole in the kmsg log"
else
	bad=$((bad + 1)); echo "not ok $n a report the console split in its stamp, whole in the kmsg log"
fi
# a real report after a stale-looking int3: cut under tcg only
{ boot; int3; printf '[  500.500000] BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120 [dcbm]\n'; } > "$dir/int3-kasan"
accel=tcg-single verdict "a report after an int3 under single-threaded TCG" problems "$dir/int3-kasan" "1 x BUG: KASAN: slab-use-after-free in dcbm_callback"
# the kernel's first line not in the first 50: no verdict
{ for i in $(seq 60); do echo "junk $i"; done; boot; } > "$dir/late"
verdict "a log whose first 50 lines are not the kernel's is not clean" problems "$dir/late" "does not start with the kernel's first line"
# printk.time=0: no stamp, no report can be found; no verdict
{ boot | sed 's/^\[[^]]*\] //'; printf 'BUG: KASAN: slab-use-after-free in dcbm_callback+0x2c/0x120\n'; } > "$dir/nostamp"
verdict "a log without stamps is not clean" problems "$dir/nostamp" "no printk stamps"
# caller ids (CONFIG_PRINTK_CALLER) on every line of a boot without reports
boot | sed 's/^\(\[[^]]*\]\)/\1[    T1]/' > "$dir/caller"
verdict "a boot with caller ids and no reports is clean" clean "$dir/caller"

[ "$n" -eq "$planned" ] || { echo "# planned $planned cases, ran $n"; bad=$((bad + 1)); }
echo "# $((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
