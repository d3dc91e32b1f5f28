#!/bin/sh
# Benchmark driver (busybox sh). make bench runs it in the test guest, once
# per boot, the kernels' boots alternating; it also runs on any host booted
# into the kernel to measure (docs/benchmark.md, "Benchmark on a host"). Writes JSON
# lines on $RESULTS (default: stdout), each tagged with the kernel, the
# boot, the experiment and the migrator setting it was measured with.
#
# Settings (environment):
#   KERNEL             vanilla|patched (default: patched if the kernel has
#                      /sys/kernel/mm/migration)
#   BOOT               number of this boot in the alternation (default 1)
#   BENCH_MB           MiB moved per rep (default 128)
#   BENCH_REPS         reps of every configuration in this boot (default 2)
#   BENCH_SIZES        folio sizes in KiB (default 4,16,64,128,256,512,1024,2048)
#   BENCH_EXPERIMENTS  any of "sizes count threads latency pipeline busy insns"
#                      (default the first five; insns needs the host's plugin:
#                      scripts/bench.sh)
#   BENCH_BUSY         the co-runners' nice values of the busy experiment, a
#                      list (default "0 19"); "idle" (no co-runner) is always
#                      measured beside them; NICEa (e.g. 0a): no co-runner
#                      on CPU 0, where the migrating task is pinned
#   BENCH_BUSY_REPS    reps of each busy setting per boot (default BENCH_REPS)
#   BENCH_ENGINE_FIFO  a SCHED_FIFO priority for swdma's channel threads in
#                      the busy experiment (default: none, they are kernel
#                      threads at nice 0): an engine the co-runners cannot
#                      starve, as DMA hardware is, though it still takes
#                      their CPU
#   BENCH_DCBM_DEPTH   dcbm's queue_depth (descriptors in flight per channel)
#                      in the busy experiment (default: the module's, 32)
#   BENCH_CHUNK        chunk_pages of the pipelined settings (default: the
#                      kernel's default)
#   BENCH_PIPE_BATCH   max_batch_pages of the patched kernel's migrators in
#                      the pipeline experiment, a list (default 512, vanilla's)
#   BENCH_PIPE_DEPTH   chunks_in_flight of the pipelined settings in the
#                      pipeline experiment, a list (default: the kernel's)
#   BENCH_TOUCH        touchers in the latency experiment (migbench -R:
#                      threads holding references on the region's pages
#                      while it moves), a list (default "0 2")
#   BENCH_THREADS      threads / channels of mtcopy and dcbm outside the
#                      thread sweep (default: the number of CPUs)
#   BENCH_FULL=1       larger sweeps: every folio size in the thread sweep,
#                      more batch sizes in the latency experiment
#   BENCH_FROM, BENCH_TO  source and destination node (default 0, 1)
#   BENCH_REP_WATCH    seconds after which a rep still running is reported
#                      (stacks) on the console (default 60)
#   BENCH_OFFLOAD      the offloading migrators measured besides none and
#                      kernel, of "mtcopy dcbm" (the default); their modules
#                      are loaded only if named
here=$(dirname "$0")
. "$here/tests/lib.sh"	# MIG, TRACING, events, copy_seconds
: "${RESULTS:=/dev/stdout}" "${BOOT:=1}" "${BENCH_MB:=128}" "${BENCH_REPS:=2}"
: "${BENCH_SIZES:=4,16,64,128,256,512,1024,2048}" "${BENCH_FULL:=0}"
: "${BENCH_EXPERIMENTS:=sizes count threads latency pipeline}" "${BENCH_THREADS:=$(nproc)}"
: "${BENCH_FROM:=0}" "${BENCH_TO:=1}" "${BENCH_OFFLOAD=mtcopy dcbm}"
: "${BENCH_PIPE_BATCH:=512}" "${BENCH_TOUCH:=0 2}" "${BENCH_BUSY:=0 19}"
BENCH_PIPE_BATCH=$(echo "$BENCH_PIPE_BATCH" | tr , ' ')
BENCH_TOUCH=$(echo "$BENCH_TOUCH" | tr , ' ')
BENCH_BUSY=$(echo "$BENCH_BUSY" | tr , ' ')
[ -d $MIG ] && : "${KERNEL:=patched}" || : "${KERNEL:=vanilla}"
sizes=$(echo "$BENCH_SIZES" | tr , ' ')
T=$TRACING

# Offloaders available in this boot, as migrator:threads settings.
offload=
if [ "$KERNEL" = patched ]; then
	case " $BENCH_OFFLOAD " in *" mtcopy "*)
		modprobe migrate_mtcopy 2>/dev/null && offload="mtcopy:$BENCH_THREADS"
	esac
	# swdma: a software DMA engine whose channels are kernel threads
	# copying with the CPU; 16 channels for the channel sweep.
	case " $BENCH_OFFLOAD " in *" dcbm "*)
		modprobe swdma nr_channels=16 2>/dev/null && dcbm_modprobe 2>/dev/null &&
			offload="$offload dcbm:$BENCH_THREADS"
	esac
fi
migrators="none"
[ "$KERNEL" = patched ] && migrators="none kernel $offload"
# The pipeline's chunk size measured against 0 (not pipelined)
[ "$KERNEL" = patched ] && : "${BENCH_CHUNK:=$(cat $TUN/chunk_pages)}"
[ "$KERNEL" = patched ] && : "${BENCH_PIPE_DEPTH:=$(cat $TUN/chunks_in_flight)}"
BENCH_PIPE_DEPTH=$(echo "${BENCH_PIPE_DEPTH:-1}" | tr , ' ')

# Select a setting (none, kernel, mtcopy:N, dcbm:N); sets $mig and $n.
use() {
	mig=${1%:*} n=1
	case $1 in *:*) n=${1#*:} ;; esac
	[ "$KERNEL" = patched ] || return 0
	echo none > $MIG/migrator	# dcbm's channel count applies at the next selection
	case $mig in
	mtcopy) echo "$n" > $MTCOPY/threads ;;
	dcbm) echo "$n" > $DCBM/nr_channels ;;
	esac
	echo "$mig" > $MIG/migrator
	echo 0 > $TUN/chunk_pages
}

# Pipeline the batches in chunks of $1 pages (0: not) from now on
chunks() {
	[ "$KERNEL" = patched ] && echo "$1" > $TUN/chunk_pages
	extra="\"chunk_pages\":$1,"
}

# Label every JSON object with the run's coordinates: rep $i of this boot
# (reps of one index are the pairs) and $extra fields.
tag() {	# experiment
	sed "s/^{/{\"kernel\":\"$KERNEL\",\"boot\":$BOOT,\"exp\":\"$1\",\"migrator\":\"$mig\",\"threads\":$n,\"i\":${i:-0},$extra/" >> "$RESULTS"
}

# A rep that takes longer than BENCH_REP_WATCH seconds (default 60; reps
# take seconds) is reported on the console every 30 s while it lasts: the
# state, wait channel and kernel stack of each of its threads and of every
# task in D or R state, and the interrupt counts, so that a stalled rep
# leaves its stacks in the console log (the bench kernels have no sysrq,
# hung-task or soft-lockup detector); after three reports it is killed.
watch_rep() {	# pid what
	sleep "${BENCH_REP_WATCH:-60}" || return 0
	k=0
	while kill -0 "$1" 2>/dev/null; do
		# after three reports, the rep is killed and counts as failed
		if [ $((k += 1)) -gt 3 ]; then
			echo "bench: rep killed: $2"
			kill -9 "$1"
			return 0
		fi
		echo "bench: rep still running: $2"
		for d in /proc/[0-9]*; do
			st=$(sed 's/.*) \(.\).*/\1/' "$d/stat" 2>/dev/null) || continue
			case "$d" in /proc/"$1") st=M ;; esac
			[ "$st" = D ] || [ "$st" = R ] || [ "$st" = M ] || continue
			for t in "$d"/task/*; do
				echo "bench: task ${t#/proc/} $(cat "$t/comm" 2>/dev/null) state $(sed 's/.*) \(.\).*/\1/' "$t/stat" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
				sed 's/^/bench:   /' "$t/stack" 2>/dev/null
			done
		done
		grep -E '^ *(TLB|CAL|RES|LOC):' /proc/interrupts | sed 's/^/bench: /'
		sleep 30 || return 0
	done
}

# One rep of migbench for the current setting, tagged; a failure is
# recorded as such, not as a number.
rep() {	# experiment migbench-options...
	e=$1; shift
	migbench -j -e swdma -r 1 -f "$BENCH_FROM" -t "$BENCH_TO" "$@" > /tmp/rep.json 2> /tmp/rep.err &
	pid=$!
	watch_rep "$pid" "$e $*" & wd=$!
	wait "$pid"; rc=$?
	kill "$wd" 2>/dev/null; wait "$wd" 2>/dev/null
	if [ "$rc" -ne 0 ]; then
		tail -3 /tmp/rep.err
		echo "{\"type\":\"error\",\"args\":\"$*\",\"msg\":\"$(tail -1 /tmp/rep.err | tr -d '"\\')\"}" | tag "$e"
		return 1
	fi
	grep '"type":"rep"' /tmp/rep.json | tag "$e"
}

# Where dcbm's batches spent their time (dcbm_batch tracepoint): mean
# microseconds per batch in each phase.
dcbm_overhead() {	# folio_kb
	awk -v kb="$1" '/dcbm_batch:/ {
		for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) v[kv[1]] += kv[2]
		n++
		if (/result=-/) bad++
	} END {
		if (!n) exit
		printf "{\"type\":\"dcbm_overhead\",\"folio_kb\":%d,\"batches\":%d,\"bytes\":%d,\"descs\":%.1f,", kb, n, v["bytes"] / n, v["descs"] / n
		printf "\"setup_us\":%.1f,\"submit_us\":%.1f,\"wait_us\":%.1f,\"finish_us\":%.1f,\"failed\":%d}\n",
			v["setup_ns"] / n / 1000, v["submit_ns"] / n / 1000, v["wait_ns"] / n / 1000, v["finish_ns"] / n / 1000, bad
	}' $T/trace
}

# Experiment "sizes": throughput and CPU time per folio size. The settings
# take turns rep by rep, so that each rep of an offloader has a rep of the
# kernel migrator next to it (paired). The kernel migrator's reps also
# give the copy fraction F (batch-copy tracepoints), dcbm's its per-batch
# time breakdown.
sizes() {
	for kb in $sizes; do
		for i in $(seq "$BENCH_REPS"); do
			for m in $migrators; do
				use "$m"
				ev=
				[ "$mig" = kernel ] && ev="mm_migrate_batch_copy_begin mm_migrate_batch_copy_end"
				[ "$mig" = dcbm ] && ev=dcbm/dcbm_batch
				[ -n "$ev" ] && events on $ev
				extra=
				rep sizes -s "$BENCH_MB" -k "$kb" || { [ -n "$ev" ] && events off $ev; continue; }
				[ -n "$ev" ] || continue
				events off $ev
				if [ "$mig" = kernel ]; then
					echo "{\"type\":\"copy\",\"folio_kb\":$kb,\"copy_s\":$(copy_seconds)}" | tag sizes
				else
					dcbm_overhead "$kb" | tag sizes
				fi
			done
		done
	done
}

# Experiment "count": move_pages() time per call for N folios per call.
# 4K: a 16 MiB region (4096 folios); 2M: BENCH_MB, so counts above
# BENCH_MB / 2 are not measured.
count() {
	for kb in 4 2048; do
		mb=$BENCH_MB
		[ "$kb" = 4 ] && mb=16
		for c in 1 8 64 512 4096; do
			[ $((c * kb)) -le $((mb * 1024)) ] || continue
			for i in $(seq "$BENCH_REPS"); do
				for m in $migrators; do
					use "$m"; extra=
					rep count -s "$mb" -k "$kb" -b "$c"
				done
			done
		done
	done
}

# Experiment "insns": the default path's instructions. Moves with no
# migrator selected, each bracketed by migbench -I's markers, at which
# QEMU's plugin writes what every kernel address executed since the last
# (scripts/insn-plugin.c, insn-report.py): every size in one call, and 4K
# folios one per call (16 MiB: 4096 calls), as NUMA balancing migrates.
# Reps and markers must match one to one: nothing else runs migbench -I.
insns() {
	for kb in $sizes single; do
		for i in $(seq "$BENCH_REPS"); do
			use none; extra=
			if [ "$kb" = single ]; then
				rep insns -s 16 -k 4 -b 1 -I
			else
				rep insns -s "$BENCH_MB" -k "$kb" -I
			fi
		done
	done
}

# Experiment "threads": mtcopy 1, 2, 4, 8 threads, dcbm 1, 2, 4, 8, 16
# channels, each rep next to a rep of the kernel migrator.
threads() {
	[ -n "$offload" ] || return 0
	ssizes=256
	[ "$BENCH_FULL" = 1 ] && ssizes=$sizes
	sweep=kernel
	case $offload in *mtcopy*) sweep="$sweep mtcopy:1 mtcopy:2 mtcopy:4 mtcopy:8" ;; esac
	case $offload in *dcbm*) sweep="$sweep dcbm:1 dcbm:2 dcbm:4 dcbm:8 dcbm:16" ;; esac
	for kb in $ssizes; do
		for i in $(seq "$BENCH_REPS"); do
			for m in $sweep; do
				use "$m"; extra=
				rep threads -s "$BENCH_MB" -k "$kb"
			done
		done
	done
}

# Experiment "latency": with tracepoints vanilla has, the first-folio
# latency (mm_migrate_pages_start to the first remove_migration_pte/pmd of
# that call) and each folio's inaccessible time (its set_migration_pte/pmd
# to its remove_migration_pte/pmd), for batch sizes (max_batch_pages) from
# vanilla's 512 up. One move_pages() call of a region of the largest batch.
latency() {
	batches="512 4096 16384"
	[ "$BENCH_FULL" = 1 ] && batches="512 1024 2048 4096 8192 16384"
	top=$(echo $batches | awk '{ print $NF * 4 / 1024 }')
	ev="mm_migrate_pages_start set_migration_pte remove_migration_pte thp/set_migration_pmd thp/remove_migration_pmd"
	for kb in 4 2048; do
		for i in $(seq "$BENCH_REPS"); do
			for m in $migrators; do
				for b in $batches; do
				for c in 0 $BENCH_CHUNK; do
					# vanilla's batch is 512 pages; so is the default's
					[ "$m" = none ] && { [ "$b" != 512 ] || [ "$c" != 0 ]; } && continue
				for t in $BENCH_TOUCH; do
					use "$m"
					[ "$KERNEL" = patched ] && echo "$b" > $TUN/max_batch_pages
					chunks "$c"
					events on $ev
					extra="$extra\"batch_pages\":$b,\"touchers\":$t,"
					t0=$(tlb_ipis)
					rep latency -s "$top" -k "$kb" -R "$t" || { events off $ev; continue; }
					events off $ev
					# the touchers are threads of the mm: flushes reach their CPUs
					[ -z "$t0" ] || echo "{\"type\":\"tlb\",\"folio_kb\":$kb,\"ipis\":$(( $(tlb_ipis) - t0 ))}" | tag latency
					inaccessible "$kb" | tag latency
				done
				done
				done
			done
		done
	done
	[ "$KERNEL" = patched ] && echo 512 > $TUN/max_batch_pages
}

# Experiment "pipeline": throughput per folio size with the batches
# pipelined (chunk_pages $BENCH_CHUNK) and not (0), against vanilla: the
# kernel migrator (its unpipelined reps give the copy fraction F), mtcopy
# with one and two helpers (max_workers raised to 2 for it), dcbm on 1, 2
# and 4 channels; pipelined, with each of $BENCH_PIPE_DEPTH chunks in
# flight, and the share of the folios the CPU copied because the migrator
# was busy with another chunk (stats/fallback_busy).
pipeline() {
	set="none kernel"
	case $offload in *mtcopy*) set="$set mtcopy:2 mtcopy:3" ;; esac
	case $offload in *dcbm*) set="$set dcbm:1 dcbm:2 dcbm:4" ;; esac
	[ "$KERNEL" = patched ] || set=none
	[ -d $MTCOPY ] && workers=$(cat $MTCOPY/max_workers) &&
		echo 2 > $MTCOPY/max_workers
	batches=$BENCH_PIPE_BATCH	# vanilla's and the default's: 512
	for kb in $sizes; do
		for i in $(seq "$BENCH_REPS"); do
			for m in $set; do
				bl=$batches
				[ "$m" = none ] && bl=512
				for b in $bl; do
				for c in 0 $BENCH_CHUNK; do
					[ "$m" = none ] && [ "$c" != 0 ] && continue
					depths=1
					[ "$c" != 0 ] && depths=$BENCH_PIPE_DEPTH
				for d in $depths; do
					use "$m"
					[ "$KERNEL" = patched ] && echo "$b" > $TUN/max_batch_pages
					chunks "$c"
					extra="$extra\"batch_pages\":$b,"
					if [ "$c" != 0 ]; then
						echo "$d" > $TUN/chunks_in_flight
						extra="$extra\"chunks_in_flight\":$d,"
					fi
					# unpipelined, the kernel migrator's copy time
					# (F); dcbm's time per batch, in each phase
					ev=
					case $mig$c in
					kernel0) ev="mm_migrate_batch_copy_begin mm_migrate_batch_copy_end" ;;
					dcbm*) ev=dcbm/dcbm_batch ;;
					esac
					[ -n "$ev" ] && events on $ev
					[ "$KERNEL" = patched ] && snap
					t0=$(tlb_ipis)
					rep pipeline -s "$BENCH_MB" -k "$kb" || { [ -n "$ev" ] && events off $ev; continue; }
					[ -z "$t0" ] || echo "{\"type\":\"tlb\",\"folio_kb\":$kb,\"ipis\":$(( $(tlb_ipis) - t0 ))}" | tag pipeline
					case $mig$c in mtcopy0|dcbm0) ;; mtcopy*|dcbm*)
						echo "{\"type\":\"stats\",\"folio_kb\":$kb,\"folios\":$(delta folios),\"busy\":$(delta fallback_busy)}" | tag pipeline
					esac
					[ -n "$ev" ] || continue
					events off $ev
					if [ "$mig" = kernel ]; then
						echo "{\"type\":\"copy\",\"folio_kb\":$kb,\"copy_s\":$(copy_seconds)}" | tag pipeline
					else
						dcbm_overhead "$kb" | tag pipeline
					fi
				done
				done
				done
			done
		done
	done
	[ -z "${workers:-}" ] || echo "$workers" > $MTCOPY/max_workers
	[ "$KERNEL" = patched ] && echo 512 > $TUN/max_batch_pages &&
		echo 1 > $TUN/chunks_in_flight
}

# Experiment "busy" (issue 49): a CPU-bound co-runner on every CPU (migbench
# -B: pinned, at each nice of $BENCH_BUSY) counts its work while the region
# moves; and the idle case (no co-runner) beside it. Settings as a user
# would select them, pipelined as by default (chunk_pages $BENCH_CHUNK):
# the default, the kernel migrator, mtcopy with one and three helpers
# (threads 2 and 4; max_workers raised to the CPUs but one), dcbm on 1 and 2
# swdma channels. They take turns rep by rep, under each load in turn, so
# that every rep has one of the default next to it in the same boot.
# dcbm's reps also record its batches' phases (dcbm_batch tracepoint).
busy() {
	set="none kernel"
	case $offload in *mtcopy*) set="$set mtcopy:2 mtcopy:4" ;; esac
	case $offload in *dcbm*) set="$set dcbm:1 dcbm:2" ;; esac
	[ "$KERNEL" = patched ] || set=none
	[ -d $MTCOPY ] && workers=$(cat $MTCOPY/max_workers) &&
		echo $(($(nproc) - 1)) > $MTCOPY/max_workers
	[ -d $DCBM ] && [ -n "${BENCH_DCBM_DEPTH:-}" ] && depth=$(cat $DCBM/queue_depth) &&
		echo "$BENCH_DCBM_DEPTH" > $DCBM/queue_depth
	for kb in $sizes; do
		for i in $(seq "${BENCH_BUSY_REPS:-$BENCH_REPS}"); do
			for load in idle $BENCH_BUSY; do
				for m in $set; do
					use "$m"
					chunks "${BENCH_CHUNK:-0}"
					extra="$extra\"load\":\"$load\","
					[ "$mig" = dcbm ] && [ -n "${BENCH_ENGINE_FIFO:-}" ] &&
						engine_fifo "$BENCH_ENGINE_FIFO"
					# dcbm: where its batches spent their time
					[ "$mig" = dcbm ] && events on dcbm/dcbm_batch
					case $load in
					idle) rep busy -s "$BENCH_MB" -k "$kb" ;;
					# the task alone on CPU 0
					*a) rep busy -s "$BENCH_MB" -k "$kb" -B "${load%a}" -A ;;
					*) rep busy -s "$BENCH_MB" -k "$kb" -B "$load" ;;
					esac
					[ "$mig" = dcbm ] || continue
					events off dcbm/dcbm_batch
					dcbm_overhead "$kb" | tag busy
				done
			done
		done
	done
	[ -z "${workers:-}" ] || echo "$workers" > $MTCOPY/max_workers
	[ -z "${depth:-}" ] || echo "$depth" > $DCBM/queue_depth
}

# SCHED_FIFO priority $1 for every swdma channel thread (created when dcbm
# takes its channels, at its selection)
engine_fifo() {
	# shellcheck disable=SC2046  # PIDs
	rthog -p "$1" $(grep -l '^swdma' /proc/[0-9]*/comm | cut -d/ -f3) ||
		echo "bench: cannot make swdma's threads SCHED_FIFO"
	extra="$extra\"engine_fifo\":$1,"
}

# TLB shootdown IPIs received by all CPUs so far (x86's "TLB" line in
# /proc/interrupts; empty where there is none)
tlb_ipis() {
	awk '$1 == "TLB:" { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; print s }' /proc/interrupts
}

# Summary of the trace buffer: first-folio latency and inaccessible time.
inaccessible() {	# folio_kb
	awk '{ t = $4; sub(":", "", t) }
	/mm_migrate_pages_start:/ { t0 = t; first = 1 }
	/(set|remove)_migration_p[tm][ed]:/ { match($0, /addr=[0-9a-f]+/); a = substr($0, RSTART + 5, RLENGTH - 5) }
	/set_migration_p[tm][ed]:/ { set[a] = t }
	/remove_migration_p[tm][ed]:/ {
		if (first) { print "first", (t - t0) * 1000; first = 0 }
		if (a in set) { print "inacc", (t - set[a]) * 1000; delete set[a] }
	}' $T/trace > /tmp/lat.txt
	f=$(for k in first inacc; do
		sed -n "s/^$k //p" /tmp/lat.txt | sort -n | awk -v k=$k '{ v[n++] = $1; s += $1 }
			END { if (n) printf "\"%s_ms_median\":%.4f,\"%s_ms_p99\":%.4f,\"%s_ms_max\":%.4f,\"%s_ms_mean\":%.4f,\"%s_n\":%d,",
				k, v[int(n / 2)], k, v[int(n * 0.99)], k, v[n - 1], k, s / n, k, n }'
	done)
	[ -z "$f" ] || echo "{\"type\":\"inaccessible\",\"folio_kb\":$1,${f%,}}"
}

echo 8192 > $T/buffer_size_kb
mig=none n=1 i=0 extra=
echo "{\"type\":\"boot\",\"uname\":\"$(uname -r)\",\"cpus\":$(nproc),\"nodes\":\"$(cat /sys/devices/system/node/has_memory)\",\"offload\":\"$offload\"}" | tag env
migbench -j -s "$BENCH_MB" -r 3 -m "$(nproc)" -M -f "$BENCH_FROM" -t "$BENCH_TO" | grep memcpy | tag memcpy
for e in $BENCH_EXPERIMENTS; do
	echo "bench: $KERNEL boot $BOOT: $e"
	$e
done
use none
[ "$KERNEL" = patched ] && { rmmod dcbm swdma migrate_mtcopy 2>/dev/null; true; }
