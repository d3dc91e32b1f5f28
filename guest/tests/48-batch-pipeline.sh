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
	     END { print set + 0, rm + 0, max + 0 }' $TRACING/trace
}

# run MIGRATOR CHUNK DEPTH: 4096 base-page folios (8 MiB with 4K pages,
# 256 MiB with 64K), node 0 to 1 and back, in batches of 512 folios: 8
# batches, each CHUNK pages a batch offered
run() {
	label="$1, chunk_pages $2, $3 in flight"
	select_migrator "$1" || { fail "$label: cannot select"; return; }
	echo "$2" > $TUN/chunk_pages && echo "$3" > $TUN/chunks_in_flight ||
		{ fail "$label: settings rejected"; return; }
	snap
	events on $EV
	migbench -s $((BASE_KB * 2)) -k "$BASE_KB" -r 1 -V 0,1,0 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "$label: data or nodes wrong"; }
	events off $EV
	set -- "$@" $(inside)
	pipelined=$([ "$2" != 0 ] && [ "$1" != kernel ] && echo 1)
	size=512
	[ -z "$pipelined" ] || size=$2
	echo "$label: batches +$(delta batches) folios +$(delta folios) busy +$(delta fallback_busy);" \
	     "during copies: $4 unmapped, $5 remapped; largest batch $6 folios"
	# batches of $size folios, or fewer: a folio busy in one pass (a
	# reference not yet dropped elsewhere) is retried in the next, in
	# batches of its own
	[ "$6" -eq $size ] && [ "$(delta batches)" -ge $((4096 / size)) ] ||
		fail "$label: $(delta batches) batches offered, the largest of $6 folios, not $((4096 / size)) of $size"
	# with 2 in flight, a chunk may find dcbm's channels all taken by
	# the one before (fallback_busy): the CPU copies it
	busy=$(delta fallback_busy)
	[ "$3" -gt 1 ] || [ "$busy" -eq 0 ] || fail "$label: $busy folios found the migrator busy"
	# a pair kept past the migrator's deadline (mtcopy's 100 ms, a vCPU
	# off its host core) is copied again by the CPU: counted in kept
	[ $(( $(delta folios) + busy + $(delta kept) )) -eq 4096 ] ||
		fail "$label: the migrator copied $(delta folios) folios ($busy busy, $(delta kept) kept), not 4096"
	if [ -z "$pipelined" ]; then
		[ "$4" -eq 0 ] && [ "$5" -eq 0 ] ||
			fail "$label: folios unmapped or remapped during a copy, unpipelined"
	else
		[ "$4" -gt 0 ] && [ "$5" -gt 0 ] &&
			pass "$label: folios unmapped and remapped while a copy was in flight" ||
			fail "$label: no folio unmapped ($4) or remapped ($5) while a copy was in flight"
	fi
}

for m in kernel test mtcopy dcbm; do
	run $m 0 1
	run $m 128 1
	run $m 64 2
done
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
		fail "$label: a folio stayed unmapped across $1 chunk starts (retried at the end of the batch?)"
done
echo 512 > $TUN/max_batch_pages

select_migrator none
echo "$chunk" > $TUN/chunk_pages
echo "$depth" > $TUN/chunks_in_flight
echo all > $MIG/reasons
for mod in dcbm swdma migrate_mtcopy test_migrator; do rmmod $mod || fail "cannot unload $mod"; done
finish
