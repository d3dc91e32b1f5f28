#!/usr/bin/env bash
# make bench: build the vanilla and the patched kernel from the same source and
# config (non-debug), boot each, run migbench in each, and write
# results/bench.{json,md,png} with the patched/vanilla comparison.
#   BENCH_MB (256), BENCH_REPS (5), BENCH_REPS_2M (9), BENCH_PAIRS (7), BENCH_SIZES ("all" = 4,16,64,256,2048 KiB)
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
for v in vanilla patched; do
	"$TOP/scripts/build-kernel.sh" "$v" bench
	"$TOP/scripts/initramfs.sh" "$v" bench
done

job=$(mktemp)
trap 'rm -f "$job"' EXIT
for v in vanilla patched; do
	cat > "$job" <<JOB
KERNEL=$v BENCH_MB=${BENCH_MB:-256} BENCH_REPS=${BENCH_REPS:-5} BENCH_REPS_2M=${BENCH_REPS_2M:-9} BENCH_PAIRS=${BENCH_PAIRS:-7} BENCH_SIZES=${BENCH_SIZES:-all} \
	sh /opt/mig/bench.sh
JOB
	"$TOP/scripts/run-guest.sh" "$v" bench "bench-$v" "$job" ||
		die "benchmark run on the $v kernel failed (results/bench-$v.console.log)"
done

# Debian's python3, which has python3-matplotlib (another python3 may come first in PATH)
/usr/bin/python3 "$TOP/scripts/bench-report.py" "$RESULTS"/bench-vanilla.out "$RESULTS"/bench-patched.out \
	--out "$RESULTS/bench"
