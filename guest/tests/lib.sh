# Helpers for the guest tests; sourced.
MIG=${RUNNER_ROOT:-}/sys/kernel/mm/migration		# the ABI: migrator, reasons, stats/
TUN=${RUNNER_ROOT:-}/sys/kernel/debug/migration		# the tunables, <migrator>/min_batch_pages, test/
MTCOPY=${RUNNER_ROOT:-}/sys/module/migrate_mtcopy/parameters
DCBM=${RUNNER_ROOT:-}/sys/module/dcbm/parameters

# A sub-check's result: said on the output, and kept in $SUBRESULTS (a
# file, so that a check in a subshell or a pipeline counts too), from which
# run.sh makes the test's nested KTAP results. Name the check in MSG.
fails=0
result() {	# ok|not ok|skip, MSG
	[ -n "${SUBRESULTS:-}" ] || return 0
	set -- "$1" "$(printf '%s' "${2:-a check without a name}" | tr '#\n' '  ')"
	case $1 in
	skip) printf 'ok %s # SKIP\n' "$2" ;;
	*) printf '%s %s\n' "$1" "$2" ;;
	esac >> "$SUBRESULTS"
}
# tap_results PREFIX < OUTPUT: each result line of a (K)TAP output (an
# upstream selftest's, a KUnit suite's) as a sub-check "PREFIX: NAME".
tap_results() {
	awk -v p="$1" '{ sub(/^[ \t]+/, "") }
		/^(not )?ok [0-9]+ / {
			ok = $1 == "ok"; sub(/^(not )?ok [0-9]+ (- )?/, "")
			skip = sub(/ # SKIP.*$/, ""); sub(/ # .*$/, ""); gsub(/#/, " ")
			print (ok || skip ? "ok " : "not ok ") p ": " $0 (skip ? " # SKIP" : "") }' \
		>> "${SUBRESULTS:-/dev/null}"
}
# fail|pass|skip NAME [DETAIL]: NAME is the sub-check's name, the same in
# every run (a dashboard follows it from run to run); DETAIL, what was
# measured, goes to the output only.
fail() { echo "FAIL: $1${2:+ ($2)}"; fails=$((fails + 1)); result "not ok" "$1"; }
pass() { echo "ok: $1${2:+ ($2)}"; result ok "$1"; }
skip() { echo "skip: $1${2:+ ($2)}"; result skip "$1"; }
# verdict NAME DETAIL CMD...: the sub-check NAME passes if CMD succeeds and
# fails if not, so that it is there in every run, under one name
verdict() {
	_name=$1 _detail=$2
	shift 2
	if "$@"; then pass "$_name" "$_detail"; else fail "$_name" "$_detail"; fi
}
# Exit with the verdict of the checks made so far (in any subshell too).
# A test that passed no check fails all the same (run.sh): one that only
# looks for failures must pass what it checked when it finds none.
finish() {
	[ -z "${SUBRESULTS:-}" ] || fails=$(grep -c '^not ok' "$SUBRESULTS")
	[ "$fails" -eq 0 ] && exit 0
	echo "$fails checks failed"; exit 1
}

# new_taint BEFORE AFTER: the taint flags (/proc/sys/kernel/tainted) that
# say the kernel found a bug in itself, set in AFTER and not in BEFORE, as
# letters: B (bad page, also KASAN: bit 5), D (died: an Oops, 7), W (a
# warning, 9), L (a soft lockup, 14). run.sh fails a test on them, as LTP's
# tst_taint does.
new_taint() {
	taint_new=""
	for taint_flag in 5:B 7:D 9:W 14:L; do
		[ $(( ($2 & ~$1) >> ${taint_flag%:*} & 1 )) -eq 0 ] ||
			taint_new="$taint_new${taint_new:+ }${taint_flag#*:}"
	done
	echo "$taint_new"
}

# reset_migration: what a test that failed or was killed may have left
# changed (run.sh calls it then), set back as at boot: no migrator, every
# reason, batches of 512 pages, the migrator modules unloaded.
reset_migration() {
	select_migrator none
	echo all > $MIG/reasons
	echo 512 > $TUN/max_batch_pages
	for m in dcbm swdma migrate_mtcopy test_migrator; do
		! grep -q "^$m " /proc/modules || rmmod $m || echo "cannot unload $m"
	done
}

counter() { cat "$MIG/stats/$1"; }
# The base page size in KiB (4; 64 on an arm64 kernel with 64K pages).
page_kb() { awk '$1 == "KernelPageSize:" { print $2; exit }' /proc/self/smaps; }
# Folio sizes in KiB for the tests: BASE_KB (base pages), MTHP_KB (an anon
# mTHP size: 64, or 256 with 64K pages, where anon has no order 1) and 2048
# (the PMD with 4K pages; with 64K pages an mTHP, the PMD being 512 MiB);
# SIZES_ALL what "all" means to migbench and migcheck (4,16,64,256,2048:
# those from the base page up).
BASE_KB=$(page_kb)
MTHP_KB=64
[ "$BASE_KB" -le 16 ] || MTHP_KB=$((BASE_KB * 4))
SIZES_ALL=
for k in 4 16 64 256 2048; do
	[ "$k" -lt "$BASE_KB" ] || SIZES_ALL=${SIZES_ALL:+$SIZES_ALL,}$k
done
# cpu_list LIST: one number per line ("1-2,5" -> 1 2 5), CPUs or nodes
cpu_list() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF { for (c = $1; c <= (NF > 1 ? $2 : $1); c++) print c }'
}
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
		fail "'$2' rejected by $(basename "$1")" "the write succeeded"
	elif [ "$(cat "$1")" != "$before" ]; then
		fail "'$2' rejected by $(basename "$1")" "the failed write changed it from '$before' to '$(cat "$1")'"
	else
		pass "'$2' rejected by $(basename "$1")"
	fi
}

# hogs_start: a nice-0 busy loop on every online CPU, returned once each
# has run (it never sleeps: no CPU is idle until hogs_stop)
hogs_start() {
	hogs=""
	rm -f /tmp/hog.*
	for c in $(cpu_list "$(cat /sys/devices/system/cpu/online)"); do
		taskset -c "$c" sh -c ": > /tmp/hog.$c; while :; do :; done" & hogs="$hogs $!"
	done
	_n=$(echo $hogs | wc -w) _t=0
	while [ "$(ls /tmp/hog.* 2>/dev/null | wc -l)" -lt "$_n" ] && [ $_t -lt 60 ]; do
		sleep 1; _t=$((_t + 1))
	done
}
# shellcheck disable=SC2086  # a list
hogs_stop() { kill $hogs; wait $hogs 2>/dev/null; rm -f /tmp/hog.*; }

# Tracepoints (also used by /opt/mig/bench.sh); EVENT is GROUP/NAME, or
# NAME for the migrate group.
TRACING=/sys/kernel/tracing
events() {	# on|off EVENT...: enable (on a cleared buffer) or disable
	# Without recording command names, enabling the first event and
	# disabling the last one do not patch a probe into __schedule(): under
	# QEMU's multi-threaded TCG, a vCPU running __schedule() while that
	# code is patched has died on a stale int3 (three times so far).
	echo 0 > $TRACING/options/record-cmd
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

# mtcopy's works in the trace buffer (workqueue_execute_start and _end
# events on): "N SECONDS", the works started and how long they ran.
mtcopy_works() {
	awk '/workqueue_execute_(start|end):.*function mtcopy_work_fn/ {
		sub(":", "", $4); match($0, /work struct [0-9a-f]+/)
		w = substr($0, RSTART, RLENGTH)
		if (/execute_start/) { t[w] = $4; n++ }
		else if (w in t) { s += $4 - t[w]; delete t[w] }
	     }
	     END { printf "%d %.6f\n", n, s }' $TRACING/trace
}

# Verified migrations around nodes 0, 1, 2 in the background while a test
# changes migrators under them; stop_migrations fails if any was not exact.
# With -K, the folios a migrator kept may stay behind (see kept_left).
start_migrations() {	# folio sizes, e.g. 4,64,2048; [-K]
	rm -f /tmp/stop /tmp/bg.failed /tmp/bg.kept
	(while [ ! -e /tmp/stop ]; do
		migbench -s 2 -k "$1" -r 1 -V 0,1,2 ${2:-} > /tmp/bg.log 2>&1 ||
			{ cat /tmp/bg.log; echo bad > /tmp/bg.failed; }
		grep '^kept ' /tmp/bg.log >> /tmp/bg.kept
	done) &
	bg_pid=$!
}
stop_migrations() {
	touch /tmp/stop
	wait $bg_pid
	[ ! -e /tmp/bg.failed ] && pass "every migration under $1 exact" ||
		fail "a migration under $1 was not exact"
}
# kept_left FILE: from the "kept" lines of migbench -K in FILE, the folios
# kept and the pages left behind, summed: "KEPT LEFT". With -K, migbench
# lets a hop leave behind a folio whose pair the migrator kept (its source
# held while a device may still read it: its move fails until then), or
# one that the hop before left behind, and no other; every byte is
# checked wherever the page is, and it must be where it was.
kept_left() {
	sed -n 's/^kept .* \([0-9][0-9]*\) folios kept, [0-9][0-9]* folios (\([0-9][0-9]*\) pages) left behind.*/\1 \2/p' "$1" |
		awk '{ k += $1; p += $2 } END { print k + 0, p + 0 }'
}

# drained FILE SECS: wait up to SECS for the counter in FILE to be 0;
# false if it is not by then
drained() {
	t=0
	while [ "$(cat "$1")" -ne 0 ] && [ $t -lt "$2" ]; do
		sleep 1; t=$((t + 1))
	done
	[ "$(cat "$1")" -eq 0 ]
}

# test_migrator_idle LABEL: wait up to 60 s for the test migrator's work
# items (held sources, late writes to kept destinations) to end, so that
# its counters are final; fail if some are left.
test_migrator_idle() {
	drained $TUN/test/pending 60 ||
		fail "$1: the test migrator's work items end" "$(cat $TUN/test/pending) left after 60 s"
}

# dcbm: wait up to SECS for every orphan (a batch whose descriptors were
# not all called back in time) to end; fail if one is left.
orphans_gone() {	# LABEL SECS
	drained $TUN/dcbm/orphans "$2" ||
		fail "$1: every orphan ends" "$(cat $TUN/dcbm/orphans) left after $2 s"
	echo "$1: orphans ended after ${t} s"
}
# dcbm's default timeout_ms (100) is sized for hardware engines; swdma under
# TCG and KASAN takes tens of milliseconds for one 2 MiB batch and more for
# the tests' larger ones, so the tests give it 5 s (80 checks the default)
DCBM_TIMEOUT_MS=5000
dcbm_modprobe() {
	modprobe dcbm && echo $DCBM_TIMEOUT_MS > $DCBM/timeout_ms
}
# dcbm_load NR: swdma with NR channels, and dcbm set to use NR channels;
# the test ends if either cannot be loaded
dcbm_load() {
	modprobe swdma nr_channels="$1" || { echo "cannot load swdma"; exit 1; }
	dcbm_modprobe || { echo "cannot load dcbm"; exit 1; }
	echo "$1" > $DCBM/nr_channels
}
# swdma_copies: descriptors swdma's channels completed (their memcpy_count)
swdma_copies() {
	cat /sys/devices/platform/swdma/dma/dma*chan*/memcpy_count | awk '{ n += $1 } END { print n + 0 }'
}
# swdma_fail desc|submit PROBABILITY [INTERVAL]: swdma's injected failures,
# its fault-injection attributes in debugfs: swdma/fail_desc fails
# descriptors as they start (as swdma's fail_mode says), swdma/fail_submit
# submissions (as idxd fails them on a shared work queue). With INTERVAL k
# only every k-th call may fail: PROBABILITY 100 fails every k-th one;
# PROBABILITY 0 none. No limit on their number (times -1), and silent
# (verbose 0: the default, 2, logs each failure with a stack dump, which
# the kernel-log judge counts as a report).
swdma_fail() {
	set -- "/sys/kernel/debug/swdma/fail_$1" "$2" "${3:-1}"
	[ -d "$1" ] || { echo "swdma_fail: no $1"; return 1; }
	echo 0 > "$1/verbose" && echo -1 > "$1/times" &&
		echo "$3" > "$1/interval" && echo "$2" > "$1/probability"
}
# dcbm_refuses_held: selecting dcbm while async_tx holds swdma's public
# channels (dmaengine_get()) must fail with ENODEV and change nothing: the
# active migrator stays, dcbm holds no channel. The series before November
# 27 shared them ("dcbm: using N shared DMA channel(s)"): this check fails
# there (by reading; not run).
dcbm_refuses_held() {
	was=$(active)
	if select_migrator dcbm 2> /tmp/select.err; then
		fail "dcbm refuses public channels async_tx holds" "selected on $(cat $TUN/dcbm/channels), $(dmesg | grep dcbm)"
		select_migrator "$was"
	elif grep -q "No such device" /tmp/select.err; then
		pass "dcbm refuses public channels async_tx holds" "$(cat /tmp/select.err)"
	else
		fail "dcbm refuses public channels async_tx holds" "$(cat /tmp/select.err), not ENODEV"
	fi
	[ "$(active)" = "$was" ] || fail "active migrator unchanged by the refused selection" "$(active), not $was"
	[ -z "$(cat $TUN/dcbm/channels)" ] ||
		fail "no channel held after the refused selection" "$(cat $TUN/dcbm/channels)"
}

# ---- the kernel's own migration paths (tests 20-29, 71) -------------------
# Each path runs with only its migrate reason batching, under the migrator
# its test names (make test's time: every migrator meets several paths), or
# under each one of PATH_MIGRATORS when that is set: the full matrix is
# GUEST_APPEND='PATH_MIGRATORS="kernel mtcopy dcbm"' (the kernel passes a
# quoted value to init whole). path_end prints a row of the table
# in docs/migration-paths.md.
# The events stay on and the batch path stays enabled from one migrator to
# the next (fewer code patches: see events()) until path_cleanup.
path_migrators() { echo "${PATH_MIGRATORS:-$1}"; }
path_begin() {	# REASON MIGRATOR
	case $2 in
	mtcopy)	modprobe migrate_mtcopy &&
		echo 1 > $TUN/mtcopy/min_batch_pages ;;	# also small batches
	dcbm)	modprobe swdma nr_channels=4 && dcbm_modprobe &&
		echo 0 > $TUN/dcbm/min_batch_pages ;;
	esac || { fail "$2: cannot load it"; return 1; }
	select_migrator "$2" || { fail "cannot select $2"; return 1; }
	echo "$1" > $MIG/reasons
	snap
	events on mm_migrate_batch_start mm_migrate_batch_copy_begin
}
# path_end PATH REASON MIGRATOR RC [multi]: RC is the data check's exit
# status. The batch path must have run for REASON, with a batch of more
# than one folio if "multi" (the path hands over lists).
path_end() {
	starts=$(grep -c "mm_migrate_batch_start: .*reason=$2\$" $TRACING/trace)
	largest=$(awk '/mm_migrate_batch_copy_begin:/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^folios=/) {
			n = substr($i, 8) + 0; if (n > m) m = n } }
		END { print m + 0 }' $TRACING/trace)
	cpu=0 why="" fails0=$fails
	for c in fallback_below_min fallback_declined fallback_busy fallback_nomem \
		 fallback_timeout fallback_error fallback_incomplete fallback_retry; do
		[ "$(delta $c)" -eq 0 ] || why="$why${why:+, }${c#fallback_} $(delta $c)"
		cpu=$((cpu + $(delta $c)))
	done
	[ -z "$why" ] || why=" ($why)"
	bytes=ok
	[ "$4" -eq 0 ] || { bytes=BAD; fail "$1, $3: data check failed (exit $4)"; }
	echo "path: | $1 | $3 | $(delta batches) batches (trace: $starts reason=$2), largest $largest folios | $(delta folios) by $3, $cpu by CPU$why | $bytes |"
	[ "$starts" -gt 0 ] && [ "$(delta batches)" -gt 0 ] ||
		fail "$1, $3: no batch for reason $2"
	[ "$(delta folios)" -gt 0 ] || fail "$1, $3: $3 copied" "folios +0"
	[ "${5:-}" != multi ] || [ "$largest" -gt 1 ] ||
		fail "$1, $3: no batch of more than one folio"
	[ "$fails" -gt "$fails0" ] || pass "$1, $3: data exact, batched for reason $2"
	# A kept destination (a copy that did not finish in time: under TCG a
	# vCPU can lose its host core for longer than mtcopy's 100 ms) is a
	# safe outcome, the folio is not migrated by that call: shown, not
	# failed; the data and placement checks decide.
	[ "$(delta kept)" -eq 0 ] || echo "  $1, $3: $(delta kept) destinations kept"
	echo all > $MIG/reasons
}
# compact_batched NODE MIB: migcheck's compaction mode between path_begin
# and path_end. Compaction may find nothing to move, or no free page to
# move into, on a pass (a batch begun and given up before any copy: 13
# failed so in a clean-clone run of December 1): up to 3 passes, until one
# offered a batch to the migrator.
compact_batched() {
	for try in 1 2 3; do
		migcheck -C "$1" -s "$2" || return $?
		grep -q mm_migrate_batch_copy_begin: $TRACING/trace && return 0
		echo "  compaction of node $1, pass $try: no batch offered"
	done
	return 0
}
# Unload the migrator modules the path tests loaded.
path_cleanup() {
	events off mm_migrate_batch_start mm_migrate_batch_copy_begin
	select_migrator none
	[ ! -e $TUN/mtcopy ] || echo 64 > $TUN/mtcopy/min_batch_pages
	for m in dcbm swdma migrate_mtcopy; do
		! grep -q "^$m " /proc/modules || rmmod $m || fail "cannot unload $m"
	done
}
# The testbed's hotpluggable DIMM on node 2 (GUEST_HOTPLUG_MB: offline
# after boot; left offline by who onlines it). dimm_blocks: its memory
# blocks in $dimm_blocks, their PFNs [$dimm_lo, $dimm_hi); fails if there
# is none. dimm_set online_movable|offline: every block, retried while busy.
MEMORY=${RUNNER_ROOT:-}/sys/devices/system/memory
dimm_blocks() {
	dimm_blocks=""
	for b in $MEMORY/memory*; do
		[ "$(cat $b/state)" = offline ] && [ -e $b/node2 ] && dimm_blocks="$dimm_blocks $b"
	done
	[ -n "$dimm_blocks" ] || { fail "no offline memory block on node 2 (GUEST_HOTPLUG_MB)"; return 1; }
	_bs=$(printf '%d' 0x$(cat $MEMORY/block_size_bytes))
	dimm_lo=$(for b in $dimm_blocks; do printf '%d\n' 0x$(cat $b/phys_index); done | sort -n | head -1)
	dimm_hi=$(for b in $dimm_blocks; do printf '%d\n' 0x$(cat $b/phys_index); done | sort -n | tail -1)
	dimm_lo=$((dimm_lo * _bs / 4096)) dimm_hi=$(((dimm_hi + 1) * _bs / 4096))
	echo "DIMM: $(echo $dimm_blocks | wc -w) blocks of $((_bs >> 20)) MiB, PFNs $dimm_lo-$dimm_hi"
}
dimm_set() {
	for b in $dimm_blocks; do
		i=0
		until echo $1 > $b/state 2>/dev/null || [ "$(cat $b/state)" = "${1%_movable}" ]; do
			i=$((i + 1)); [ $i -lt 5 ] || { fail "DIMM: $1 failed"; return 1; }
			sleep 1
		done
	done
}
# The CMA area of node 2 (numa_cma=2:SIZE): its debugfs directory $CMA,
# its PFNs [$cma_lo, $cma_hi); fails if there is none.
CMA=${RUNNER_ROOT:-}/sys/kernel/debug/cma/numa2
cma_area() {
	[ -d $CMA ] || { fail "no CMA area on node 2 (numa_cma=2:SIZE)"; return 1; }
	cma_lo=$(cat $CMA/base_pfn) cma_hi=$(( $(cat $CMA/base_pfn) + $(cat $CMA/count) ))
	echo "CMA area numa2: PFNs $cma_lo-$cma_hi ($(( $(cat $CMA/count) >> 8 )) MiB)"
}
# node_meminfo NODE FIELD: a value (kB) of /sys/devices/system/node/nodeN/meminfo
node_meminfo() {
	awk -v f="$2:" '$3 == f { print $4 }' /sys/devices/system/node/node$1/meminfo
}
# vmstat FIELD
vmstat() { awk -v f="$1" '$1 == f { print $2 }' /proc/vmstat; }
# holders MODULE: who holds it, for a report: its reference count, the
# modules that use it, and for a DMA provider the channels clients hold
holders() {
	_h="refcnt $(cat /sys/module/$1/refcnt 2>/dev/null)"
	_h="$_h, used by '$(ls /sys/module/$1/holders 2>/dev/null | tr '\n' ' ')'"
	for _c in /sys/class/dma/*; do
		[ "$(cat $_c/in_use 2>/dev/null || echo 0)" -eq 0 ] ||
			_h="$_h, ${_c##*/} in use"
	done
	[ ! -d $TUN/dcbm ] ||
		_h="$_h, dcbm channels '$(cat $TUN/dcbm/channels)' orphans $(cat $TUN/dcbm/orphans)"
	echo "$_h"
}
# unload MODULE: a migrator deselected while copies were in flight keeps its
# module (and dcbm its channels, so swdma its module) until the last copy
# has been waited for, which may come after another chunk's unmap: up to
# 10 s, then rmmod's own error. Says who held it when it had to wait.
unload() {
	rmmod "$1" 2>/dev/null && return
	echo "unload $1: in use ($(holders "$1")), waiting"
	_u=0
	while ! rmmod "$1" 2>/dev/null; do
		if [ $_u -ge 100 ]; then
			echo "unload $1: still in use after 10 s ($(holders "$1"))"
			rmmod "$1"
			return
		fi
		sleep 0.1; _u=$((_u + 1))
	done
	echo "unload $1: unloaded after $_u tenths of a second"
}
# Base pages isolated for migration, of every kind
isolated_pages() { echo $(( $(vmstat nr_isolated_anon) + $(vmstat nr_isolated_file) )); }
isolated_back() {	# BEFORE LABEL: no folio left isolated (10 s for others' to end)
	i=0
	while [ "$(isolated_pages)" -gt "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(isolated_pages)" -le "$1" ] &&
		pass "$2: no folio left isolated" "nr_isolated_* $1 -> $(isolated_pages)" ||
		fail "$2: no folio left isolated" "nr_isolated_* $1 -> $(isolated_pages)"
}
# held_start ARGS: pathcheck -w ARGS in the background; returns once it holds
# its data (or died). held_finish lets it go on, shows its report and
# returns its exit status.
# HELD_IN="in_cgroups DIR --" runs it in those cgroups.
held_start() {
	rm -f /tmp/ctl /tmp/pc.out; mkfifo /tmp/ctl
	${HELD_IN:-} pathcheck -w "$@" < /tmp/ctl > /tmp/pc.out &
	pc=$!
	exec 3> /tmp/ctl
	until grep -q '^ready$' /tmp/pc.out || ! kill -0 $pc 2>/dev/null; do sleep 1; done
}
held_finish() {
	trap '' PIPE	# it may have died already
	echo go >&3 2>/dev/null; exec 3>&-
	trap - PIPE
	wait $pc; hrc=$?
	grep -v '^ready$' /tmp/pc.out
	return $hrc
}

# cgroup v2 at /sys/fs/cgroup. cgroup_new NAME [CONTROLLER...]: a fresh
# child of the root with those controllers enabled; prints its path.
CGROUP=/sys/fs/cgroup
cgroup_new() {
	name=$1; shift
	grep -q " $CGROUP cgroup2 " /proc/mounts || mount -t cgroup2 none $CGROUP || return 1
	for c in "$@"; do echo "+$c" > $CGROUP/cgroup.subtree_control || return 1; done
	rmdir $CGROUP/$name 2>/dev/null
	mkdir $CGROUP/$name && echo $CGROUP/$name
}
# in_cgroups DIR... -- CMD...: run CMD as a member of each cgroup DIR
in_cgroups() {
	sh -c 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; done
	       shift; exec "$@"' sh "$@"
}
# cpu_stat DIR FIELD: a field of DIR/cpu.stat (microseconds)
cpu_stat() { awk -v f="$2" '$1 == f { print $2 }' "$1/cpu.stat"; }

# kmemleak (CONFIG_DEBUG_KMEMLEAK, no automatic scans). It reports an
# object only from the second scan that finds nothing pointing to it, and
# only once it is 5 s old: kmemleak_scan scans twice, 6 s apart, and fails
# if kmemleak cannot scan (it turns itself off when it runs out of memory).
KMEMLEAK=${RUNNER_ROOT:-}/sys/kernel/debug/kmemleak
kmemleak_scan() {
	echo scan > $KMEMLEAK && sleep 6 && echo scan > $KMEMLEAK
}
# leak_check LABEL: fail if kmemleak finds an object nothing points to
# (shown with its allocation's stack); what it found is then cleared, so
# that the next check reports only new leaks. run.sh scans at the start
# and the end of each boot too.
leak_check() {
	[ -e $KMEMLEAK ] || { skip "$1: no kmemleak in this kernel"; return; }
	if ! kmemleak_scan; then
		fail "$1: kmemleak cannot scan"
	elif grep -q unreferenced $KMEMLEAK; then
		head -40 $KMEMLEAK
		fail "$1: kmemleak found no leak" "$(grep -c unreferenced $KMEMLEAK) unreferenced objects"
		echo clear > $KMEMLEAK
	else
		pass "$1: kmemleak found no leak"
	fi
}
