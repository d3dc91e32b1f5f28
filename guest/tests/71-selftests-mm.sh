#!/bin/sh
# Upstream mm selftests, built from the same source, whose state a migration
# must preserve (pins, mlock, populate, dirty PTEs, THP splits, uffd-wp
# bits and userfaultfd), each run under migrun: while it runs,
# migrate_pages(2) moves all its memory and that of the processes it forks
# from node 0 to node 1 and back, again and again, with every reason
# batching. Each run is a sub-check, under the migrator its line names
# (kernel, mtcopy copying every batch, dcbm on 4 swdma channels): it must
# pass, its TAP totals add up to its plan, every case it skips be one
# allowed below, with its reason, and the batch path must have copied
# folios under each migrator.
#
# Built but not run by default (ST_RUNS="NAME ARGS @MIGRATOR" runs one):
# - hugetlb_dio, hugetlb-madvise and gup_test -H: hugetlb folios never
#   enter the batch path (migrate_hugetlbs()), and the first two check the
#   pool's free count, which any migration of their pages changes for a
#   moment; both failed so under migrun with the batch path off too
#   (migrator none: "Unexpected number of free huge pages line 114";
#   hugetlb_dio "Free pages after munmap").
# - pagemap_ioctl: a page under migration has a migration entry, which
#   PAGEMAP_SCAN reports as swapped, not present: under migrun it failed 3
#   of its 115 cases with the batch path off, 6 under dcbm (a longer
#   window between unmap and remap). Its checks cannot hold under
#   concurrent migration.
# - ksm_functional_tests: on this kernel its test_prot_none never ends
#   (240 s), even with no migrator selected and without migrun.
# - split_huge_page_test: its page-cache cases write a 4 MiB file one byte
#   per write(2), for each of 9 orders, far more than 240 s under TCG
#   (and they skip without XFS anyway).
# - cow: 161 s without migration, about five times that under migrun.
# - uffd-unit-tests groups other than wp-fork, move and sigbus-wp (each
#   group takes 60-250 s under migrun: sigbus, both halves, 168 s with the
#   batch path off, 200-245 s under dcbm); "minor-collapse" on shmem did
#   not end within 240 s without migration. sigbus-wp stays: under dcbm
#   it once read a page of shmem-private memory as 0 ("nr 3084 memory
#   corruption 0 1", CI run of November 25), not seen again in 4 runs.
# gup_test and transhuge-stress run small; the whole test takes about N
# minutes on the debug kernel under TCG (docs/testbed.md, "Times").
. /opt/mig/tests/lib.sh

BIN=/opt/mig/bin
THP=/sys/kernel/mm/transparent_hugepage
KSM=/sys/kernel/mm/ksm
NODE=/sys/devices/system/node
HP=hugepages/hugepages-2048kB
WORK=/mnt/selftests-mm	# ext4: a file system gup_longterm knows
PAUSE_MS=${ST_PAUSE_MS:-10}

# One selftest invocation a line: the program (in $BIN), its arguments and
# a last word @MIGRATOR, the migrator it runs under (make test's time:
# each migrator meets several); with PATH_MIGRATORS set (see lib.sh) each
# runs under every one of those instead.
RUNS=${ST_RUNS:-"gup_longterm @kernel
gup_test -u -m 32 @mtcopy
gup_test -a -m 32 @dcbm
gup_test -L -m 32 @kernel
gup_test -m 32 -ct -F 0x1 0 19 0x1000 @mtcopy
mlock2-tests @dcbm
madv_populate @mtcopy
mkdirty @dcbm
transhuge-stress -d 5 32 @kernel
uffd-unit-tests -f wp-fork @kernel
uffd-unit-tests -f move @mtcopy
uffd-unit-tests -f sigbus-wp @dcbm"}
# allowed_skip SELFTEST CASE: the reason the case ("context: reason", the
# context being the last "[RUN] ..." line, or the uffd test and memory)
# may be skipped here; false if it may not.
allowed_skip() {
	case "$1: $2" in
	# The guest's nodes (1-1.5 GiB) cannot hold a free 1 GiB huge page.
	"cow: "*"(1048576 kB)"*": need more free huge pages"|\
	"gup_longterm: "*"(1048576 kB)"*": need more free huge pages")
		echo "1 GiB hugetlb pages: none can be allocated in this guest" ;;
	# After fork() every PTE of the range is write-protected, and khugepaged
	# does not collapse a range without a writable PTE (SCAN_PAGE_RO, so
	# MADV_COLLAPSE fails with EINVAL): 6.12 skips it without migration too.
	"cow: Basic COW after fork() when collapsing after fork() (fully shared): MADV_COLLAPSE failed: Invalid argument")
		echo "a fully COW-shared range has no writable PTE: 6.12 does not collapse it" ;;
	# MADV_PAGEOUT does not reclaim a folio that migrate_pages() holds
	# isolated at that moment; swap is on (else the test failed above).
	"cow: "*": MADV_PAGEOUT did not work, is swap enabled?")
		echo "the folio was isolated for migration when cow paged it out" ;;
	# Page-cache THPs need a file system with large folios (XFS in 6.12;
	# not in the debug kernel: build time). tmpfs and ext4 have none here.
	"split_huge_page_test: "*": Pagecache folio split skipped")
		echo "no file system with large page-cache folios (XFS) in the guest" ;;
	*) return 1 ;;
	esac
}

# ---- saved global state ----------------------------------------------------
# knob FILE: its value, the bracketed choice of a sysfs selection
knob() {
	v=$(cat "$1")
	case $v in *\[*\]*) v=$(echo "$v" | sed 's/.*\[\(.*\)\].*/\1/') ;; esac
	echo "$v"
}
# save_knobs FILE...: "file value" of each writable one (root may open the
# others for writing too: the mode says); restore_knobs writes back those
# that changed.
save_knobs() {
	find "$@" -maxdepth 0 -type f -perm -200 | while read -r f; do echo "$f $(knob "$f")"; done
}
restore_knobs() {
	while read -r f v; do
		[ "$(knob "$f")" = "$v" ] || echo "$v" > "$f" || fail "cannot restore $f to $v"
	done < "$1"
}
rm -rf $WORK; mkdir -p $WORK/tmp
save_knobs $THP/* $THP/hugepages-*/* $THP/khugepaged/* $KSM/* \
	$NODE/node*/$HP/nr_hugepages > $WORK/knobs

# hugetlb: 20 pages on each of nodes 0 and 1 (uffd-unit-tests maps 32 at
# once, hugetlb-madvise wants 20 free); the moves take others from the
# buddy allocator as temporary pages.
for n in 0 1; do echo 20 > $NODE/node$n/$HP/nr_hugepages; done
echo "hugetlb 2M pools: $(cat $NODE/node0/$HP/nr_hugepages) on node 0, $(cat $NODE/node1/$HP/nr_hugepages) on node 1"
echo always > $THP/enabled
# cow's swap-out cases need swap (MADV_PAGEOUT)
dd if=/dev/zero of=$WORK/swap bs=1M count=64 2>/dev/null
chmod 600 $WORK/swap
mkswap $WORK/swap > /dev/null && swapon $WORK/swap || fail "cannot enable swap"
# ksm_functional_tests execs ./ksm_functional_tests
ln -s $BIN/ksm_functional_tests $WORK/ksm_functional_tests

uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }

# check_log SELFTEST LOG RC: the run passed, its totals add up, its skips
# are allowed; prints the totals
check_log() {
	name=$1 log=$2 rc=$3 bad=0
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $name exited $rc"; bad=1
	fi
	case $name in
	uffd-unit-tests)
		t=$(sed -n 's/.*Userfaults unit tests: pass=\([0-9]*\), skip=\([0-9]*\), fail=\([0-9]*\) (total=\([0-9]*\)).*/\1 \2 \3 \4/p' "$log")
		set -- $t
		if [ $# -ne 4 ] || [ "$3" -ne 0 ] || [ "$1" -eq 0 ] || [ $(($1 + $2)) -ne "$4" ]; then
			echo "FAIL: $name: totals '${t:-none}' (pass skip fail total)"; bad=1
		fi
		totals="pass:${1:-?} skip:${2:-?} fail:${3:-?}"
		sed -n 's/^Testing \(.*\)\.\.\. skipped \[reason: \(.*\)\]$/\1: \2/p' "$log" > $WORK/skips ;;
	hugetlb-madvise)	# no TAP: its exit status is its one result
		totals="exit $rc"
		: > $WORK/skips ;;
	*)
		plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$log" | head -1)
		t=$(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) xfail:\([0-9]*\) xpass:\([0-9]*\) skip:\([0-9]*\) error:\([0-9]*\).*/\1 \2 \3 \4 \5 \6/p' "$log")
		set -- $t
		if [ $# -ne 6 ] || [ -z "$plan" ] || [ "$1" -eq 0 ] || [ "$2" -ne 0 ] ||
		   [ "$4" -ne 0 ] || [ "$6" -ne 0 ] || [ $(($1 + $3 + $5)) -ne "$plan" ]; then
			echo "FAIL: $name: totals '${t:-none}' (pass fail xfail xpass skip error), plan ${plan:-none}"; bad=1
		fi
		totals="pass:${1:-?} skip:${5:-?} fail:${2:-?} of ${plan:-?}"
		awk '/^# \[RUN\]/ { sub(/^# \[RUN\] */, ""); ctx = $0 }
		     /^ok [0-9]+ .*# SKIP/ { r = $0; sub(/.*# SKIP */, "", r)
			print (ctx != "" ? ctx : "-") ": " r }' "$log" > $WORK/skips ;;
	esac
	while read -r c; do
		if why=$(allowed_skip "$name" "$c"); then
			echo "  skipped as allowed ($why): $c"
		else
			echo "FAIL: $name: unexpected skip: $c"; bad=1
		fi
	done < $WORK/skips
	return $bad
}

# run_one NAME ARGS...: one selftest run under migrun, from $WORK
run_one() {
	prog=$BIN/$1
	shift
	# shellcheck disable=SC2086  # ST_WRAP is words
	set -- $ST_WRAP "$prog" "$@"
	# hugetlb_dio writes from hugetlb pages with O_DIRECT into a file in
	# /tmp: on ext4 rather than tmpfs, so that the I/O pins them (a bind
	# mount in a mount namespace of its own)
	# shellcheck disable=SC2016  # expanded by that sh
	[ "${prog##*/}" != hugetlb_dio ] ||
		set -- unshare -m sh -c 'mount --bind "$0" /tmp && exec "$@"' $WORK/tmp "$@"
	(cd $WORK && exec timeout -k 10 "$ST_TIMEOUT" "$@") < /dev/null
}
ST_TIMEOUT=${ST_TIMEOUT:-240}	# under GUEST_STALL: a hung selftest fails alone
ST_WRAP=${ST_WRAP-"migrun -p $PAUSE_MS"}

for m in $(path_migrators "kernel mtcopy dcbm"); do
	path_begin all $m || continue
	snap
	folios_before=$(counter folios)
	echo "$RUNS" | while read -r name args; do
		[ -n "$name" ] || continue
		under=
		case $args in
		@*) under=${args#@} args= ;;
		*" @"*) under=${args##* @} args=${args% @*} ;;
		esac
		[ -n "${PATH_MIGRATORS:-}" ] || [ -z "$under" ] || [ "$under" = "$m" ] || continue
		: > $WORK/ran.$m	# the loop is a subshell
		log=$WORK/$name.log
		snap
		t0=$(uptime_cs)
		# shellcheck disable=SC2086  # args are words
		run_one "$name" $args > "$log" 2>&1
		rc=$?
		t1=$(uptime_cs)
		secs=$(( (t1 - t0) / 100 )).$(( (t1 - t0) % 100 / 10 ))
		if check_log "$name" "$log" "$rc" > $WORK/check; then
			res=ok
		else
			res=FAIL
		fi
		[ "$res" = ok ] && [ -z "${ST_VERBOSE:-}" ] || sed 's/^/    | /' "$log"
		cat $WORK/check
		cpu=0
		for c in fallback_below_min fallback_declined fallback_busy fallback_nomem \
			 fallback_timeout fallback_error fallback_incomplete fallback_retry; do
			cpu=$((cpu + $(delta $c)))
		done
		echo "selftest: | $name${args:+ $args} | $m | ${secs} s | $totals |" \
		     "$(sed -n 's/^# migrun: //p' "$log") | batch $(delta batches) batches," \
		     "$(delta folios) folios by $m, $cpu by CPU | $res |"
		if [ "$res" = ok ]; then
			pass "$name${args:+ $args} under $m"
		else
			fail "$name${args:+ $args} under $m"
		fi
	done
	if [ ! -e $WORK/ran.$m ]; then
		echo "$m: no selftest runs under it"
		continue
	fi
	n=$(( $(counter folios) - folios_before ))
	echo "$m: the batch path copied $n folios over all selftests"
	[ "$m" = none ] || [ "$n" -gt 0 ] || fail "$m: the batch path copied no folio"
done
path_cleanup

# ---- restore -------------------------------------------------------------
swapoff $WORK/swap || fail "cannot disable swap"
echo 2 > $KSM/run	# unmerge what is left
restore_knobs $WORK/knobs
rm -rf $WORK
echo 1 > /proc/sys/vm/compact_memory
finish
