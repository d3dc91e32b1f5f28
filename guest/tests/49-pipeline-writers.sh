#!/bin/sh
# Writers under every pipelined migrator. Three threads keep incrementing
# counters in the first 8 pages of a region of 4096 base pages while
# move_pages() moves the whole region between nodes 0 and 1 in one batch
# (max_batch_pages 4096) cut into chunks of 64 pages, with 1 and 2 chunks
# in flight, under mtcopy (2 threads), dcbm (2 swdma channels) and the
# test migrator copying when waited for ("copy", the late copy of an
# engine) or keeping every odd pair ("keep", migcheck -K: those pages stay
# behind for a move; a region of 1024 pages, as its kept sources are
# retried one by one): no increment may be lost, every byte must be exact,
# and the batches must have been the chunks (under mtcopy, up to 512
# folios after a chunk it copied alone). The writers' pages are in the
# first chunk, and their TLB entries stay warm on the writers' CPUs: a
# chunk whose copy starts before its TLB entries are flushed keeps taking
# writes through them after its copy, until the flush at the end of the
# unmap phase. migrate_pipeline_cut() without its try_to_unmap_flush()
# (make mutate M=E1-no-flush-at-cut) passed 15, 48, 72 and 90 (15's
# writers run under the kernel migrator, which never pipelines) and fails
# here.
. /opt/mig/tests/lib.sh

echo syscall_or_cpuset > $MIG/reasons	# no background migration in the counts
chunk=$(cat $TUN/chunk_pages)
depth=$(cat $TUN/chunks_in_flight)
echo 4096 > $TUN/max_batch_pages
modprobe migrate_mtcopy && echo 2 > $MTCOPY/threads &&
	echo 0 > $TUN/mtcopy/min_batch_pages || fail "cannot load mtcopy"
dcbm_load 2
modprobe test_migrator || fail "cannot load test_migrator"
kept_in_use=$(cat $TUN/test/kept_in_use)

# run MIGRATOR[:MODE] DEPTH: 4096 pages (16 MiB with 4K pages; keep, whose
# kept pairs' sources are held and retried one by one, 1024), at least one
# move in 3 s. On arm64 a quarter of that: under TCG a move of 4096 pages
# with the writers took 52-55 s there (6-12 s on x86-64), and 16 chunks
# still follow the writers' one.
PAGES=4096
[ "$(uname -m)" != aarch64 ] || PAGES=1024
run() {
	m=${1%:*} mode=${1#*:} label="$1, $2 in flight"
	[ "$m" != test ] || echo "$mode" > $TUN/test/mode ||
		{ fail "$label: mode $mode rejected"; return; }
	select_migrator "$m" && echo 64 > $TUN/chunk_pages &&
		echo "$2" > $TUN/chunks_in_flight || { fail "$label: settings rejected"; return; }
	kept="" pages=$PAGES
	[ "$mode" != keep ] || kept=-K pages=$((PAGES / 4))
	mb=$((pages * BASE_KB / 1024)) min=$((pages / 64))
	snap
	events on mm_migrate_batch_copy_begin
	migcheck -m private -k "$BASE_KB" -s $mb -n 0,1 -W 3 -H 8 $kept \
		> /tmp/mc.log 2>&1
	rc=$?
	events off mm_migrate_batch_copy_begin
	sed 's/^/  /' /tmp/mc.log
	# the batches offered: the chunks (64 pages, or what is left of the
	# batch with them), at least one move's worth (a move is one batch);
	# under mtcopy, once a chunk got no idle vCPU (the writers hold three)
	# and was copied in copy_start(), the rest is cut every 512 folios
	most=128
	[ "$m" != mtcopy ] || most=512 min=$((pages / 512))
	set -- $(awk '/mm_migrate_batch_copy_begin:/ { n++
		if (match($0, /folios=[0-9]+/) && substr($0, RSTART + 7, RLENGTH - 7) + 0 > max)
			max = substr($0, RSTART + 7, RLENGTH - 7) + 0 }
		END { print n + 0, max + 0 }' $TRACING/trace)
	echo "$label: $1 batches offered, the largest of $2 folios; folios +$(delta folios)," \
	     "kept +$(delta kept), busy +$(delta fallback_busy)"
	if [ "$rc" -eq 0 ]; then
		pass "$label: writers in the first chunk lost no write, bytes exact"
	elif grep -q "lost writes" /tmp/mc.log; then
		fail "$label: writes lost in the first chunk"
	else
		fail "$label: writers in the first chunk (migcheck exit $rc)"
	fi
	[ "$1" -ge $min ] && [ "$2" -le $most ] ||
		fail "$label: not pipelined: $1 batches offered, the largest of $2 folios"
	[ "$(delta folios)" -gt 0 ] || fail "$label: $m copied nothing"
	case $mode in
	keep)	[ "$(delta kept)" -gt 0 ] || fail "$label: no pair kept"
		test_migrator_idle "$label"
		[ "$(cat $TUN/test/kept_in_use)" -eq "$kept_in_use" ] ||
			fail "$label: no kept folio in use (test/kept_in_use)" "$(( $(cat $TUN/test/kept_in_use) - kept_in_use )) in use" ;;
	esac
}

for mig in mtcopy dcbm test:copy test:keep; do
	for d in 1 2; do
		run $mig $d
	done
done

select_migrator none
echo copy > $TUN/test/mode
echo "$chunk" > $TUN/chunk_pages
echo "$depth" > $TUN/chunks_in_flight
echo 512 > $TUN/max_batch_pages
echo all > $MIG/reasons
for mod in dcbm swdma migrate_mtcopy test_migrator; do unload $mod || fail "cannot unload $mod"; done
finish
