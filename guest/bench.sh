#!/bin/sh
# In-guest benchmark driver. Environment: KERNEL (vanilla|patched), BENCH_MB,
# BENCH_REPS, BENCH_SIZES (KiB list). Writes JSON lines on $RESULTS, each
# tagged with the kernel, the migrator and its thread/channel count.
: "${BENCH_MB:=256}" "${BENCH_REPS:=5}" "${BENCH_SIZES:=all}"

tag() {	# migrator threads: prefix every JSON object with the run's labels
	sed -u "s/^{/{\"kernel\":\"$KERNEL\",\"migrator\":\"$1\",\"threads\":$2,/" > "$RESULTS"
}

run() {	# migrator threads
	echo "bench: $KERNEL, migrator $1, threads $2"
	migbench -j -s "$BENCH_MB" -r "$BENCH_REPS" -k "$BENCH_SIZES" -f 0 -t 1 | tag "$1" "$2"
}

migbench -j -s "$BENCH_MB" -r "$BENCH_REPS" -m "$(nproc)" -k 4 -b 0 -M | tag none 1

if [ "$KERNEL" = vanilla ]; then
	run none 1
else
	run kernel 1
fi
