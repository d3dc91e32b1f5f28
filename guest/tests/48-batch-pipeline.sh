#!/bin/sh
# A pipelined batch (chunk_pages): the copy of each chunk starts as soon as
# the chunk is unmapped, and is waited for only once the CPU has unmapped
# the next chunk and moved the one before. So between a chunk's
# mm_migrate_batch_copy_begin and _end the trace must show folios being
# unmapped (set_migration_pte) and mapped again (remove_migration_pte).
# Unpipelined (chunk_pages 0), or under the kernel migrator, which copies
# synchronously and so is never pipelined, nothing happens between them:
# the controls that show the check can fail. Under each migrator (kernel;
# the test migrator, which copies when waited for; mtcopy; dcbm) and 1 or
# 2 chunks in flight, migbench checks every byte and the node of every
# page, and the batches offered must be the chunks.
# Those events are the core's calls, not the copies: begin comes before
# copy_start() and end after copy_wait(), so a migrator that copies
# synchronously inside copy_start() passes that check. The overlap oracle
# looks for each chunk's copy in flight after its task went on (its first
# unmap or remap after copy_begin, i.e. after copy_start() returned):
# mtcopy's works of that chunk (queued by it, workqueue tracepoints) run
# then; dcbm's swdma channel threads are switched in then (1 in flight,
# while the chunk is the only one open); the test migrator, whose copy
# delay_ms 20 stalls, lets its task go on within 10 ms of copy_begin. The
# test migrator's sync mode, which copies inside copy_start(), is the
# control: no chunk's task goes on before its copy, and mtcopy joining its
# workers in copy_start() (make mutate M=E2-mtcopy-sync-start) fails here.
# A chunk copied inside copy_start() (NULL returned: sync mode, mtcopy
# without an idle vCPU) is moved at once, and the rest of its batch is cut
# only every 512 folios: sync mode offers each batch as two (chunk_pages,
# the rest) and has no folio unmapped or remapped while a chunk is open;
# mtcopy's chunks are chunk_pages or such a rest: two per batch with a hog
# on every vCPU. The test migrator's decline mode (an ERR_PTR) is cut as
# usual (the control).
# Each chunk, from its copy_end, copied every folio it was offered, or
# said why not (dcbm's channels taken, 2 in flight: -EBUSY; mtcopy's late
# worker: -ETIMEDOUT); the chunks offered, with the folios retried in
# batches too small for the migrator, cover all 4096 folios. A folio
# retried after a busy pass is offered again: counted per chunk, not in a
# sum that it would count twice.
. /opt/mig/tests/lib.sh

echo syscall_or_cpuset > $MIG/reasons	# no background migration in the counts
echo 512 > $TUN/max_batch_pages
chunk=$(cat $TUN/chunk_pages)
depth=$(cat $TUN/chunks_in_flight)
modprobe migrate_mtcopy && echo 2 > $MTCOPY/threads &&
	echo 0 > $TUN/mtcopy/min_batch_pages || fail "cannot load mtcopy"
dcbm_load 2
modprobe test_migrator && echo copy > $TUN/test/mode || fail "cannot load test_migrator"
echo 8192 > $TRACING/buffer_size_kb
EV="mm_migrate_batch_copy_begin mm_migrate_batch_copy_end set_migration_pte remove_migration_pte"
# the copies' own contexts: mtcopy's works, swdma's channel threads (only
# under those migrators: the tracepoints slow every migration down)
engine_events() {
	case $1 in
	mtcopy)	echo workqueue/workqueue_queue_work workqueue/workqueue_execute_start \
		     workqueue/workqueue_execute_end ;;
	dcbm)	echo sched/sched_switch ;;
	esac
}
DELAY_MS=20	# the test migrator's copy, stalled

# Events of the migrating task while a chunk's copy was in flight, and the
# largest batch offered: "unmapped remapped folios". Only the task that
# began the copy: another CPU may migrate meanwhile (compaction).
inside() {
	awk '{ pid = $1; sub(/.*-/, "", pid) }
	     /mm_migrate_batch_copy_begin:/ { open++; owner = pid
		if (match($0, /folios=[0-9]+/) && substr($0, RSTART + 7, RLENGTH - 7) + 0 > max)
			max = substr($0, RSTART + 7, RLENGTH - 7) + 0 }
	     /mm_migrate_batch_copy_end:/ { open-- }
	     open > 0 && pid == owner && /set_migration_pte:/ { set++ }
	     open > 0 && pid == owner && /remove_migration_pte:/ { rm++ }
	     END { print set + 0, rm + 0, max + 0 }' /tmp/48.trace
}

# The overlap oracle, per chunk of the migrating task: "CHUNKS SEEN EARLY".
# A chunk's task went on at its first unmap or remap after its copy_begin.
# SEEN: chunks whose copy was seen running after that: one of the mtcopy
# works it queued (between its copy_begin and going on) started or ended,
# or a swdma channel thread was switched in while it was the only chunk
# open. EARLY: chunks whose task went on within DELAY_S / 2 of copy_begin.
overlap() {	# DELAY_S
	awk -v d="$1" '
	function work() { match($0, /work struct[= ][0-9a-fx]+/); return substr($0, RSTART + 12, RLENGTH - 12) }
	{ pid = $1; sub(/.*-/, "", pid); ts = $4; sub(":", "", ts) }
	/mm_migrate_batch_copy_begin:/ { owner = pid; k++; open[k] = 1; nopen++; b[k] = ts; cur = k; next }
	pid == owner && /mm_migrate_batch_copy_end:/ {
		for (i = 1; i <= k; i++) if (open[i]) { open[i] = 0; nopen--; break }
		next }
	pid == owner && /(set|remove)_migration_pte:/ {
		if (cur) { went[cur] = 1; gap[cur] = ts - b[cur]; cur = 0 }
		next }
	pid == owner && cur && /workqueue_queue_work:.*mtcopy_work_fn/ { w[work()] = cur; next }
	/workqueue_execute_(start|end):.*mtcopy_work_fn/ {
		j = w[work()]; if (j && open[j] && went[j]) seen[j] = 1
		next }
	/sched_switch:.*next_comm=swdma/ && nopen == 1 {
		for (i = k; i >= 1; i--) if (open[i]) { if (went[i]) seen[i] = 1; break } }
	END { for (i = 1; i <= k; i++) { n += seen[i]; if (went[i] && gap[i] < d / 2) e++ }
	      print k + 0, n + 0, e + 0 }' /tmp/48.trace
}

# Per chunk, from copy_end: "OFFERED BAD BUSY LATE": the folios offered
# (a folio offered twice counts twice); chunks that returned 0 without
# copying every folio, or failed for another cause than the two below;
# folios of chunks that found the migrator busy (-EBUSY); chunks of which
# the migrator kept pairs past its deadline (-ETIMEDOUT).
chunk_counts() {
	awk 'function v(key) {
		if (!match($0, key "=-?[0-9]+")) return 0
		return substr($0, RSTART + length(key) + 1, RLENGTH - length(key) - 1) + 0 }
	     /mm_migrate_batch_copy_end:/ { f = v("folios"); c = v("copied"); r = v("ret"); offered += f
		if (r == -16) busy += f
		else if (r == -110) late++
		else if (r != 0 || c != f) bad++ }
	     END { print offered + 0, bad + 0, busy + 0, late + 0 }' /tmp/48.trace
}

# run MIGRATOR CHUNK DEPTH: 4096 base-page folios (8 MiB with 4K pages,
# 256 MiB with 64K), node 0 to 1 and back, in batches of 512 folios: 8
# batches, each CHUNK pages a batch offered
run() {
	label="$1, chunk_pages $2, $3 in flight"
	[ "$1" != test ] || label="test ($(cat $TUN/test/mode)), chunk_pages $2, $3 in flight"
	select_migrator "$1" || { fail "$label: cannot select"; return; }
	echo "$2" > $TUN/chunk_pages && echo "$3" > $TUN/chunks_in_flight ||
		{ fail "$label: settings rejected"; return; }
	snap
	events on $EV $(engine_events $1)
	migbench -s $((BASE_KB * 2)) -k "$BASE_KB" -r 1 -V 0,1,0 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$label: data or nodes wrong"; }
	events off $EV $(engine_events $1)
	cat $TRACING/trace > /tmp/48.trace	# read once: formatting it is slow
	set -- "$@" $(inside) $(overlap "$(cat $TUN/test/delay_ms | awk '{ print $1 / 1000 }')") $(chunk_counts)
	pipelined=$([ "$2" != 0 ] && [ "$1" != kernel ] && echo 1)
	# the largest batch offered, LO to HI folios: the batch, a chunk, or
	# the rest of a batch after a chunk copied inside copy_start() (sync:
	# the first, less the folios of the rest busy in that pass; mtcopy:
	# any chunk that got no worker); at least NR batches
	lo=512 hi=512 nr=8
	[ -z "$pipelined" ] || lo=$2 hi=$2 nr=$((4096 / $2))
	case $pipelined:$1:$(cat $TUN/test/mode) in
	1:test:sync)	lo=$(($2 + 1)) hi=$((512 - $2)) nr=16 ;;
	1:mtcopy:*)	hi=$((512 - $2)) nr=16 ;;
	esac
	echo "$label: batches +$(delta batches) folios +$(delta folios) busy +$(delta fallback_busy);" \
	     "during copies: $4 unmapped, $5 remapped; largest batch $6 folios;" \
	     "of $7 chunks, $8 seen copying after their task went on, $9 went on within half the delay;" \
	     "offered ${10} folios, below_min +$(delta fallback_below_min), ${11} chunks short, ${12} busy, ${13} late"
	# and the others of fewer folios: a folio busy in one pass (a
	# reference not yet dropped elsewhere) is retried in the next, in
	# batches of its own
	[ "$6" -ge $lo ] && [ "$6" -le $hi ] && [ "$(delta batches)" -ge $nr ] ||
		fail "$label: batches of $lo to $hi folios offered" "$(delta batches) batches offered, the largest of $6 folios, not at least $nr, the largest of $lo to $hi"
	# every chunk copied what it was offered, or said why not: with 2 in
	# flight, a chunk may find dcbm's channels all taken by the one
	# before (-EBUSY), the CPU copies it; mtcopy keeps the pairs of a
	# worker that missed its deadline (-ETIMEDOUT: a vCPU off its host
	# core), the CPU copies them again
	[ "${11}" -eq 0 ] || fail "$label: every chunk copied what it was offered" "${11} chunks copied fewer folios than offered, or failed"
	[ "$3" -gt 1 ] || [ "${12}" -eq 0 ] || fail "$label: no folio found the migrator busy" "${12} did"
	[ $(( ${10} + $(delta fallback_below_min) )) -ge 4096 ] ||
		fail "$label: every folio offered or below the minimum" "${10} folios offered, $(delta fallback_below_min) below the minimum, of 4096"
	if [ -z "$pipelined" ]; then
		[ "$4" -eq 0 ] && [ "$5" -eq 0 ] ||
			fail "$label: folios unmapped or remapped during a copy, unpipelined"
		return
	fi
	if [ "$1:$(cat $TUN/test/mode)" = test:sync ]; then
		[ "$4" -eq 0 ] && [ "$5" -eq 0 ] &&
			pass "$label: chunks copied in copy_start() moved at once: nothing unmapped or remapped while one was open" ||
			fail "$label: chunks copied in copy_start() moved at once: nothing unmapped or remapped while one was open" "$4 unmapped, $5 remapped"
	else
		[ "$4" -gt 0 ] && [ "$5" -gt 0 ] &&
			pass "$label: folios unmapped and remapped while a copy was in flight" ||
			fail "$label: folios unmapped and remapped while a copy was in flight" "$label: no folio unmapped ($4) or remapped ($5) while a copy was in flight"
	fi
	case $1:$3:$(cat $TUN/test/mode) in
	mtcopy:*|dcbm:1:*)
		[ "$8" -gt 0 ] &&
			pass "$label: chunks' copies ran after their task went on" "$8 of $7 chunks" ||
			fail "$label: chunks' copies ran after their task went on" "none of $7 chunks (a copy done inside copy_start()?)" ;;
	test:*:copy)
		[ "$9" -gt 0 ] &&
			pass "$label: chunks' tasks went on before their copy" "$9 of $7 chunks, copies stalled $DELAY_MS ms" ||
			fail "$label: chunks' tasks went on before their copy" "none of $7 chunks (a copy done inside copy_start()?)" ;;
	test:*:sync)	# the control: the oracle must fail it
		[ "$9" -eq 0 ] &&
			pass "$label: the oracle fails a copy inside copy_start(): no chunk's task went on before its copy" ||
			fail "$label: the oracle fails a copy inside copy_start(): no chunk's task went on before its copy" "the task of $9 of $7 chunks went on within $((DELAY_MS / 2)) ms, its copy synchronous" ;;
	esac
}

for m in kernel test mtcopy dcbm; do
	[ "$m" != test ] || echo $DELAY_MS > $TUN/test/delay_ms
	run $m 0 1
	run $m 128 1
	run $m 64 2
done
echo sync > $TUN/test/mode
run test 128 1
echo copy > $TUN/test/mode
# batches: migrate 8 batches of 512 folios (chunk_pages 128), every byte
# and node checked; B: the batches offered, RESTS: those of more than a
# chunk (the rest of a batch, less its folios retried in a later pass)
batches() {
	snap
	events on mm_migrate_batch_copy_begin
	migbench -s $((BASE_KB * 2)) -k "$BASE_KB" -r 1 -V 0,1,0 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$label: data or nodes wrong"; }
	events off mm_migrate_batch_copy_begin
	B=$(delta batches)
	RESTS=$(awk '/mm_migrate_batch_copy_begin:/ && match($0, /folios=[0-9]+/) &&
		substr($0, RSTART + 7, RLENGTH - 7) + 0 > 128 { n++ } END { print n + 0 }' $TRACING/trace)
}
# mtcopy with no idle vCPU (a nice-0 hog on each) gets no worker, copies
# each chunk inside copy_start() and returns NULL: its batch is offered as
# two, as in sync mode, not as four chunks (the series before that rule);
# the test migrator declining each chunk (ERR_PTR) is cut into four
echo 128 > $TUN/chunk_pages && echo 1 > $TUN/chunks_in_flight || fail "chunk settings rejected"
label="mtcopy, every vCPU busy, chunk_pages 128, 1 in flight"
select_migrator mtcopy || fail "$label: cannot select"
hogs_start
batches
hogs_stop
[ "$RESTS" -eq 8 ] && [ "$B" -ge 16 ] &&
	pass "$label: each batch cut once, after its chunk copied in copy_start()" "$B batches, $RESTS of more than 128 folios" ||
	fail "$label: each batch cut once, after its chunk copied in copy_start()" "$B batches, $RESTS of more than 128 folios, not 8 (0: cut into chunks of 128)"
label="test (decline), chunk_pages 128, 1 in flight"
select_migrator test && echo decline > $TUN/test/mode || fail "$label: cannot select"
batches
echo copy > $TUN/test/mode
[ "$RESTS" -eq 0 ] && [ "$B" -ge 32 ] &&
	pass "$label: a batch whose chunks fail is still cut (the control)" "$B batches, none of more than 128 folios" ||
	fail "$label: a batch whose chunks fail is still cut (the control)" "$B batches, $RESTS of more than 128 folios"
# Moves retried at the next cut: page-cache references that come and go
# (migcheck -S: threads splicing the memfd into pipes) make moves of its
# shmem folios fail with -EAGAIN. Such a pair gets its other tries at the
# next cut and is given up there if it still fails (before: at the end of
# the batch), so no folio of a 4096-page batch stays unmapped across more
# than depth + 2 chunk starts of its task: its own, the one that moves it,
# the one of its retries. spans: the largest number of copy_begin events
# between a folio's unmap and its remap, and how many folios were remapped
# only after depth + 2 (retried at the next cut, or later).
spans() {	# DEPTH
	awk -v d="$1" '{ pid = $1; sub(/.*-/, "", pid) }
	     /mm_migrate_batch_copy_begin:/ { if (!owner) owner = pid; if (pid == owner) n++ }
	     pid != owner { next }
	     /(set|remove)_migration_pte:/ { match($0, /addr=[0-9a-fx]+/); a = substr($0, RSTART, RLENGTH) }
	     /set_migration_pte:/ { at[a] = n }
	     /remove_migration_pte:/ && (a in at) { s = n - at[a]; if (s > max) max = s
		if (s >= d + 2) late++; delete at[a] }
	     END { print max + 0, late + 0 }' $TRACING/trace
}
echo 4096 > $TUN/max_batch_pages
for depth_r in 1 2; do
	label="retried moves, $depth_r in flight"
	select_migrator test && echo 128 > $TUN/chunk_pages &&
		echo $depth_r > $TUN/chunks_in_flight || { fail "$label: settings rejected"; continue; }
	events on $EV
	migcheck -q -m memfd -c move_pages -k "$BASE_KB" -s $((BASE_KB * 4)) -n 0,1,0,1,0 -S 2 \
		> /tmp/mc.log 2>&1 || { cat /tmp/mc.log; fail "$label: data or nodes wrong"; }
	events off $EV
	set -- $(spans $depth_r)
	echo "$label: a folio unmapped across at most $1 chunk starts; $2 remapped after $((depth_r + 2))"
	[ "$1" -le $((depth_r + 2)) ] &&
		pass "$label: every folio remapped within $((depth_r + 2)) chunk starts" ||
		fail "$label: every folio remapped within $((depth_r + 2)) chunk starts" "$label: a folio stayed unmapped across $1 chunk starts (retried at the end of the batch?)"
done
echo 512 > $TUN/max_batch_pages

select_migrator none
echo "$chunk" > $TUN/chunk_pages
echo "$depth" > $TUN/chunks_in_flight
echo all > $MIG/reasons
for mod in dcbm swdma migrate_mtcopy test_migrator; do unload $mod || fail "cannot unload $mod"; done
finish
