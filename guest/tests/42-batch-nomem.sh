#!/bin/sh
# The batch path allocates only without reclaim (GFP_NOWAIT: the core's
# copied/kept bitmaps for batches over 512 folios, the pipeline's chunks,
# mtcopy's batch, dcbm's tables and descriptors) and copies with the CPU
# what it cannot, or migrates the batch unpipelined. Kernel
# fault injection (failslab, fail_page_alloc) fails every such allocation
# made from the migrator's code (a stack filter on its address range) by
# the migrating task alone: under kernel, mtcopy and dcbm, every byte must
# arrive, the injected failures must have happened, and stats/fallback_nomem
# must count the folios the CPU copied for want of memory.
. /opt/mig/tests/lib.sh

F=/sys/kernel/debug
[ -d $F/failslab ] && [ -d $F/fail_page_alloc ] ||
	{ fail "no failslab or fail_page_alloc in this kernel"; finish; }
TIMES=100000

# range SYMBOL|[MODULE]: "start end" of a function, or of a module's text,
# ending at the next symbol. A module loaded last may have its text above
# every other symbol (its data in a hole below): then the range ends at the
# top of the address space, where no other code has symbols.
range() {
	sort /proc/kallsyms | awk -v s="$1" '
		e { next }
		$2 ~ /^[tT]$/ && (s ~ /^\[/ ? $4 == s : $3 == s) { if (!a) a = $1; l = $1; next }
		a && $1 != l { e = "0x" $1 }
		END { if (a && !e && s ~ /^\[/) e = "0xffffffffffffffff"
		      if (a && e) print "0x" a, e }'
}
# DMA-API debugging's own allocations, made while dcbm maps its segments,
# are spared: failing them turns DMA-API debugging off for the boot (test
# 95 fails, and reading its stale entries of swdma's freed devices is a
# use-after-free). add_dma_entry() makes them, for every map call (the
# callers' frames may be gone: debug_dma_map_page() tail-calls it).
reject=$(range add_dma_entry)
inject() {	# START END [ATTR...]: fail allocations made from [START, END)
	s=$1 e=$2
	shift 2
	for a in ${*:-failslab fail_page_alloc}; do
		echo 0 > $F/$a/probability
		echo "$s" > $F/$a/require-start
		echo "$e" > $F/$a/require-end
		if [ -n "$reject" ]; then
			echo "${reject% *}" > $F/$a/reject-start
			echo "${reject#* }" > $F/$a/reject-end
		fi
		echo 32 > $F/$a/stacktrace-depth
		echo Y > $F/$a/task-filter
		echo 0 > $F/$a/verbose
		echo 1 > $F/$a/interval
		echo $TIMES > $F/$a/times
		[ $a = failslab ] || echo 0 > $F/$a/min-order
		# allocations that may reclaim, of user pages too (the kept
		# pairs' new destinations: GFP_HIGHUSER_MOVABLE); the batch
		# path's own never reclaim
		echo N > $F/$a/ignore-gfp-wait
		[ $a = failslab ] || echo N > $F/$a/ignore-gfp-highmem
		echo 100 > $F/$a/probability
	done
}
injected() {	# failures injected since inject
	echo $(( 2 * TIMES - $(cat $F/failslab/times) - $(cat $F/fail_page_alloc/times) ))
}
stop() {
	for a in failslab fail_page_alloc; do
		echo 0 > $F/$a/probability
		echo N > $F/$a/task-filter
		echo 0 > $F/$a/require-start; echo 0 > $F/$a/require-end
		echo 0 > $F/$a/reject-start; echo 0 > $F/$a/reject-end
		echo Y > $F/$a/ignore-gfp-wait
		[ $a = failslab ] || echo Y > $F/$a/ignore-gfp-highmem
	done
}

echo syscall_or_cpuset > $MIG/reasons
echo 2048 > $TUN/max_batch_pages || fail "max_batch_pages 2048 rejected"
# kernel: unpipelined batches of 2048 folios, whose bitmaps are allocated;
# pipeline: the chunks (under the test migrator, which is pipelined),
# without which a batch is migrated unpipelined, the migrator copying it
# all; mtcopy and dcbm pipelined.
for m in kernel pipeline mtcopy dcbm; do
	chunks=$(cat $TUN/chunk_pages)
	case $m in
	kernel)	r=$(range migrate_chunk_start)
		echo 0 > $TUN/chunk_pages ;;
	pipeline)
		modprobe test_migrator && echo copy > $TUN/test/mode
		r=$(range migrate_pipeline_alloc) ;;
	mtcopy)	modprobe migrate_mtcopy && echo 1 > $TUN/mtcopy/min_batch_pages
		r=$(range "[migrate_mtcopy]") ;;
	dcbm)	modprobe swdma nr_channels=2 && dcbm_modprobe
		r=$(range "[dcbm]") ;;
	esac
	sel=$m
	[ $m = pipeline ] && sel=test
	select_migrator $sel || { fail "$m: cannot select $sel"; continue; }
	[ -n "$r" ] || { fail "$m: no address range for its code"; continue; }
	# shellcheck disable=SC2086  # two words
	inject $r
	snap
	# 4K folios in batches of 2048 pages (the core's bitmaps), 64K and 2M
	if sh -c 'echo 1 > /proc/self/make-it-fail && exec migbench -s 16 -k 4,64,2048 -r 1 -V 0,1,0' \
		> /tmp/nomem.log 2>&1; then
		pass "$m: every byte arrived under allocation failures"
	else
		cat /tmp/nomem.log; fail "$m: data not exact under allocation failures"
	fi
	n=$(injected)
	stop
	echo "$m: code $r, $n allocations failed; folios +$(delta folios)" \
	     "nomem +$(delta fallback_nomem) error +$(delta fallback_error)"
	echo "$chunks" > $TUN/chunk_pages
	[ "$n" -gt 0 ] || fail "$m: no allocation failure was injected"
	if [ $m = pipeline ]; then
		[ "$(delta fallback_nomem)" -eq 0 ] && [ "$(delta folios)" -gt 0 ] ||
			fail "$m: batches without chunks were not copied by the migrator"
	else
		[ "$(delta fallback_nomem)" -gt 0 ] || fail "$m: no folio counted in fallback_nomem"
	fi
	[ "$(delta fallback_error)" -eq 0 ] || fail "$m: allocation failures counted as copy errors"
done

# Fragmented memory: dcbm's allocations of more than one page that may not
# reclaim fail (fail_page_alloc from order 1, allocations that may reclaim
# spared). In the default batches of 512 pages of 4K folios every folio
# must still be copied by dcbm: what such a batch needs was allocated when
# dcbm was selected (on the series before that, its arrays of folios and
# descriptors, orders 2 to 4, failed at every batch: all to the CPU; its
# scatter-gather tables too at times, in kmalloc-4k's order-1 slabs under
# KASAN). In
# batches of 2048 folios on its 2 channels, 1024 descriptors a channel,
# beyond the 512 it holds, dcbm allocates nothing either: those folios go
# to the CPU as fallback_nomem, and no failure is injected in dcbm's code
# (the series before November 30 allocated the rest without reclaim:
# injected failures). Whole batches: a pipeline's chunks have at most 512
# folios.
chunks=$(cat $TUN/chunk_pages)
echo 0 > $TUN/chunk_pages
r=$(range "[dcbm]")
select_migrator dcbm && [ -n "$r" ] || fail "fragmented: cannot select dcbm"
for pages in 512 2048; do
	echo $pages > $TUN/max_batch_pages
	# shellcheck disable=SC2086  # two words
	inject $r fail_page_alloc
	echo 1 > $F/fail_page_alloc/min-order
	echo Y > $F/fail_page_alloc/ignore-gfp-wait
	snap
	sh -c 'echo 1 > /proc/self/make-it-fail && exec migbench -s 8 -k 4 -r 1 -V 0,1' \
		> /tmp/nomem.log 2>&1 || { cat /tmp/nomem.log; fail "fragmented, batches of $pages: data not exact"; }
	n=$(( TIMES - $(cat $F/fail_page_alloc/times) ))
	stop
	echo 0 > $F/fail_page_alloc/min-order
	echo "fragmented, batches of $pages pages: $n allocations failed; folios +$(delta folios)" \
	     "nomem +$(delta fallback_nomem)"
	if [ $pages = 512 ]; then
		[ "$(delta folios)" -gt 0 ] && [ "$(delta fallback_nomem)" -eq 0 ] &&
			pass "fragmented: dcbm copied every folio of its default batches" ||
			fail "fragmented: dcbm copied every folio of its default batches" "fragmented: folios of default batches went to the CPU for want of memory"
	else
		[ "$n" -eq 0 ] && [ "$(delta fallback_nomem)" -gt 0 ] &&
			pass "fragmented, batches of 2048: dcbm allocates nothing, its excess goes to the CPU" ||
			fail "fragmented, batches of 2048: dcbm allocates nothing, its excess goes to the CPU" "fragmented, batches of 2048: $n allocations failed in dcbm, nomem +$(delta fallback_nomem)"
	fi
done

echo "$chunks" > $TUN/chunk_pages

# A pair the migrator kept is given up at once, as a move that failed:
# nothing is allocated for it (the core used to allocate a new destination
# in migrate_chunk_finish() and, without one, failed the whole call with
# ENOMEM). So with every page allocation made there failing, none fails
# that warns when it fails, as a destination's does (GFP_HIGHUSER_MOVABLE:
# fail_page_alloc's verbose message), move_pages() never fails with
# ENOMEM, every page's status is exact (migbench: none reported moved that
# is not) and no folio stays isolated. The kernel's debugging allocates
# there quietly at times (__GFP_NOWARN: KASAN's stack depot, debug
# objects; one such failure in 4 runs) and is not counted. Page
# allocations only, and none made from the test migrator's code: its own
# (slab pages, when it keeps a pair) must succeed for it to keep pairs.
r=$(range migrate_chunk_finish)
reject=$(range "[test_migrator]")
if [ -z "$r" ]; then
	fail "keep: no address range for migrate_chunk_finish (inlined?)"
else
	echo 512 > $TUN/max_batch_pages	# the core's bitmaps on the stack
	modprobe test_migrator && echo keep > $TUN/test/mode &&
		select_migrator test || fail "keep: cannot select the test migrator"
	iso0=$(isolated_pages)
	loud0=$(dmesg | grep -c 'FAULT_INJECTION: forcing a failure')
	# shellcheck disable=SC2086  # two words
	inject $r fail_page_alloc
	echo 1 > $F/fail_page_alloc/verbose	# a message for each loud failure
	snap
	sh -c 'echo 1 > /proc/self/make-it-fail && exec migbench -s 4 -k 4,64 -r 2 -V 0,1 -K' \
		> /tmp/nomem.log 2>&1
	rc=$?
	n=$(( TIMES - $(cat $F/fail_page_alloc/times) ))
	stop
	echo 0 > $F/fail_page_alloc/verbose
	loud=$(( $(dmesg | grep -c 'FAULT_INJECTION: forcing a failure') - loud0 ))
	echo "keep: $n allocations failed, $loud of them without __GFP_NOWARN; kept +$(delta kept)"
	cat /tmp/nomem.log
	[ "$(delta kept)" -gt 0 ] || fail "keep: no pair kept"
	[ "$loud" -eq 0 ] && pass "keep: nothing allocated for kept pairs" ||
		fail "keep: nothing allocated for kept pairs" "keep: $loud allocations for kept pairs (failed by injection)"
	if grep -q 'Cannot allocate memory' /tmp/nomem.log; then
		fail "keep: move_pages() failed with ENOMEM"
	elif [ $rc -ne 0 ]; then
		fail "keep: migbench -K failed ($rc): a status or a page wrong"
	else
		pass "keep: no ENOMEM, every status exact, every byte kept"
	fi
	test_migrator_idle keep
	isolated_back "$iso0" keep
	echo copy > $TUN/test/mode
fi
select_migrator none
echo 512 > $TUN/max_batch_pages
echo all > $MIG/reasons
for mod in dcbm swdma migrate_mtcopy test_migrator; do unload $mod || fail "cannot unload $mod"; done
finish
