#!/bin/sh
# In-guest benchmark driver. Environment: KERNEL (vanilla|patched), BENCH_MB,
# BENCH_REPS, BENCH_SIZES (KiB list or "all"). Writes JSON lines on $RESULTS,
# each tagged with the kernel, the migrator and its thread/channel count.
: "${BENCH_MB:=256}" "${BENCH_REPS:=5}" "${BENCH_REPS_2M:=9}" "${BENCH_PAIRS:=7}" "${BENCH_SIZES:=all}"
. /opt/mig/tests/lib.sh	# MIG, events, copy_seconds
T=$TRACING

tag() {	# migrator threads: label every JSON object of the run
	sed "s/^{/{\"kernel\":\"$KERNEL\",\"migrator\":\"$1\",\"threads\":$2,/" > "$RESULTS"
}

# Throughput per folio size, and for the patched kernel the fraction F of
# the move_pages() time spent in the batch copy, from the tracepoints.
# 2M folios get more repetitions: under TCG their copy speed depends on the
# state of QEMU's softmmu TLB (see the README), the best rep is the one
# least slowed by it.
throughput() {	# migrator threads [summary function of extra trace events...]
	m=$1 n=$2 summary=${3:-}
	shift 2; [ $# -gt 0 ] && shift
	echo "bench: $KERNEL, migrator $m, threads $n"
	for kb in $(echo "$BENCH_SIZES" | sed 's/^all$/4 16 64 256 2048/; s/,/ /g'); do
		reps=$BENCH_REPS
		[ "$kb" = 2048 ] && reps=$BENCH_REPS_2M
		copy_events=
		[ -d $T/events/migrate/mm_migrate_batch_copy_begin ] &&
			copy_events="mm_migrate_batch_copy_begin mm_migrate_batch_copy_end $*"
		[ -n "$copy_events" ] && events on $copy_events
		migbench -j -s "$BENCH_MB" -r "$reps" -k "$kb" -f 0 -t 1 > /tmp/move.json
		tag "$m" "$n" < /tmp/move.json
		[ -n "$copy_events" ] || continue
		events off $copy_events
		move_s=$(sed -n 's/.*"move_s":\([0-9.]*\).*/\1/p' /tmp/move.json)
		echo "{\"type\":\"copy_fraction\",\"folio_kb\":$kb,\"copy_s\":$(copy_seconds),\"move_s\":${move_s:-0}}" |
			tag "$m" "$n"
		[ -n "$summary" ] && $summary "$kb" | tag "$m" "$n"
	done
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

# 2M folios, paired: the kernel migrator and an offloading one alternate rep
# by rep, so that both meet the same emulator state (the 2M copy speed
# swings with QEMU's TLB state, slowly, see the README); the median of the
# pairwise ratios is the 2M speedup over the kernel migrator.
paired() {	# migrator threads (its settings already made)
	echo "$BENCH_SIZES" | grep -qE '^all$|(^|,)2048(,|$)' || return 0
	ratios=
	for i in $(seq "$BENCH_PAIRS"); do
		for m in kernel "$1"; do
			echo "$m" > $MIG/migrator
			g=$(migbench -j -s "$BENCH_MB" -r 1 -k 2048 -f 0 -t 1 |
				sed -n 's/.*"gbps":\([0-9.]*\),.*/\1/p')
			if [ "$m" = kernel ]; then k=${g:-0}; else ratios="$ratios ${g:-0}/$k"; fi
		done
	done
	echo kernel > $MIG/migrator
	echo "$ratios" | awk '{
		for (i = 1; i <= NF; i++) {
			split($i, v, "/")
			if (v[2] > 0) r[n++] = v[1] / v[2]
		}
		if (!n) exit
		for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
			if (r[j] < r[i]) { x = r[i]; r[i] = r[j]; r[j] = x }
		printf "{\"type\":\"paired\",\"folio_kb\":2048,\"pairs\":%d,\"ratio_median\":%.3f,\"ratio_min\":%.3f,\"ratio_max\":%.3f}\n",
			n, r[int(n / 2)], r[0], r[n - 1]
	}' | tag "$1" "$2"
}

# First-folio latency at the default settings, from tracepoints that vanilla
# has too: from mm_migrate_pages_start to the first remove_migration_pte/pmd
# of that migrate_pages() call (its first batch's first folio remapped).
# Measured in both kernels, so that the patched default can be compared with
# vanilla: with no migrator selected the batch path must cost nothing.
default_latency() {	# folio_kb
	events on mm_migrate_pages_start remove_migration_pte thp/remove_migration_pmd
	migbench -j -s 64 -r 3 -k "$1" -f 0 -t 1 > /tmp/lat.json
	events off mm_migrate_pages_start remove_migration_pte thp/remove_migration_pmd
	gbps=$(sed -n 's/.*"gbps":\([0-9.]*\).*/\1/p' /tmp/lat.json)
	awk -v kb=$1 -v gbps=${gbps:-0} '
		/mm_migrate_pages_start:/ { sub(":", "", $4); t0 = $4; open = 1 }
		/remove_migration_p[tm][ed]:/ && open {
			sub(":", "", $4); lat[n++] = ($4 - t0) * 1000; open = 0 }
		END {
			if (!n) exit
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
				if (lat[j] < lat[i]) { x = lat[i]; lat[i] = lat[j]; lat[j] = x }
			printf "{\"type\":\"default_latency\",\"folio_kb\":%d,\"calls\":%d,\"first_ms_median\":%.3f,\"first_ms_max\":%.3f,\"gbps\":%s}\n",
				kb, n, lat[int(n / 2)], lat[n - 1], gbps
		}' $T/trace | tag none 1
}

# First-folio latency: from mm_migrate_batch_start to the first
# mm_migrate_folio_remapped of that batch, for growing batches.
latency() {	# folio_kb
	for pages in 512 1024 2048 4096 8192 16384; do
		echo $pages > $MIG/max_batch_pages
		events on mm_migrate_batch_start mm_migrate_folio_remapped
		migbench -j -s 64 -r 3 -k "$1" -f 0 -t 1 > /tmp/lat.json
		events off mm_migrate_batch_start mm_migrate_folio_remapped
		gbps=$(sed -n 's/.*"gbps":\([0-9.]*\).*/\1/p' /tmp/lat.json)
		awk -v pages=$pages -v kb=$1 -v gbps=${gbps:-0} '
			/mm_migrate_batch_start:/ { sub(":", "", $4); t0 = $4; open = 1 }
			/mm_migrate_folio_remapped:/ && open {
				sub(":", "", $4); lat[n++] = ($4 - t0) * 1000; open = 0 }
			END {
				if (!n) exit
				for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
					if (lat[j] < lat[i]) { x = lat[i]; lat[i] = lat[j]; lat[j] = x }
				printf "{\"type\":\"latency\",\"max_batch_pages\":%d,\"folio_kb\":%d,\"batches\":%d,\"first_ms_median\":%.3f,\"first_ms_max\":%.3f,\"gbps\":%s}\n",
					pages, kb, n, lat[int(n / 2)], lat[n - 1], gbps
			}' $T/trace | tag kernel 1
	done
	echo 512 > $MIG/max_batch_pages
}

echo 8192 > $T/buffer_size_kb
migbench -j -s "$BENCH_MB" -r "$BENCH_REPS" -m "$(nproc)" -M | tag none 1

# Both kernels at their defaults: in the patched one, no migrator selected.
throughput none 1
for kb in 4 64 2048; do default_latency $kb; done
if [ "$KERNEL" = patched ]; then
	echo kernel > $MIG/migrator
	throughput kernel 1
	latency 4
	latency 2048
	if modprobe migrate_mtcopy 2>/dev/null; then
		echo mtcopy > $MIG/migrator
		for t in 1 2; do
			echo $t > $MIG/mtcopy/threads
			throughput mtcopy $t
		done
		echo kernel > $MIG/migrator
		paired mtcopy 2
		rmmod migrate_mtcopy
	fi
	# The software DMA engine copies with a kernel thread per channel:
	# these rows show dcbm's own cost, not what DMA hardware would give.
	if modprobe swdma nr_channels=4 2>/dev/null && modprobe dcbm 2>/dev/null; then
		for ch in 1 2 4; do
			echo $ch > $MIG/dcbm/nr_channels
			echo dcbm > $MIG/migrator
			throughput dcbm $ch dcbm_overhead dcbm/dcbm_batch
			echo kernel > $MIG/migrator
		done
		echo 2 > $MIG/dcbm/nr_channels
		paired dcbm 2
		rmmod dcbm swdma
	fi
fi
