#!/usr/bin/env bash
# make bench: build the vanilla and the patched kernel from the same source and
# config (non-debug), boot them alternately (vanilla, patched, vanilla, ...)
# BENCH_BOOTS times each, run guest/bench.sh in every boot, and write
# results/bench.{json,md} and results/bench-<experiment>.png. Boot pairs
# make the comparison between kernels immune to drift from boot to boot.
# A boot that fails is reported and the others still run; the report is
# written from whatever was measured, and the exit status is then 1.
#   BENCH_BOOTS (3)   boots of each kernel
#   BENCH_ON=host     no QEMU: run guest/bench.sh on this machine, in the
#                     kernel it runs (as root; docs/benchmark.md, "Benchmark on a host")
#   BENCH_EXPERIMENTS with "insns" (GUEST_ACCEL=icount only): QEMU counts the
#                     instructions at each kernel address during migbench's
#                     moves (scripts/insn-plugin.c) -> results/bench-insns.md
#   BENCH_HOST_CHECK  1 (default): one more boot of the patched kernel checks
#                     the host mode (guest/bench-host-check.sh); 0: skip it
#   everything guest/bench.sh reads (BENCH_MB, BENCH_REPS, BENCH_SIZES,
#   BENCH_EXPERIMENTS, BENCH_THREADS, BENCH_FULL, BENCH_OFFLOAD, BENCH_CHUNK,
#   BENCH_PIPE_BATCH, BENCH_PIPE_DEPTH, BENCH_TOUCH, BENCH_BUSY, BENCH_BUSY_REPS,
#   BENCH_ENGINE_FIFO, BENCH_DCBM_DEPTH, BENCH_REP_WATCH) and run-guest.sh reads (GUEST_CPUS, GUEST_NODE_MB,
#   GUEST_ACCEL) is passed on.
. "$(dirname "$0")/lib.sh"

# GUEST_ACCEL=icount: one host thread runs every vCPU and the guest clock
# counts instructions (scripts/run-guest.sh). Its defaults: the experiments
# that time one thread's work, and the folio sizes below 2M
# (docs/benchmark.md, "Deterministic mode").
if [ "${GUEST_ACCEL:-tcg}" = icount ] && [ "${BENCH_ON:-}" != host ]; then
	: "${BENCH_SIZES:=4,16,64,128,256}" "${BENCH_EXPERIMENTS:=sizes count insns}"
fi
insns=
case " ${BENCH_EXPERIMENTS:-} " in *" insns "*)
	[ "${GUEST_ACCEL:-tcg}" = icount ] && [ "${BENCH_ON:-}" != host ] ||
		die "the experiment insns needs GUEST_ACCEL=icount (exact counts: one TCG thread)"
	insns=$BUILD/insn-plugin.so
	gcc -O2 -Wall -shared -fPIC -fvisibility=hidden -o "$insns" "$TOP/scripts/insn-plugin.c"
esac
# The busy experiment alone: under TCG, one vCPU per host CPU (GUEST_CPUS 2,
# the default, on an otherwise idle host) and enough reps and boots to
# decide 3% (docs/benchmark.md, "A busy system").
if [ "${BENCH_EXPERIMENTS:-}" = busy ] && [ "${GUEST_ACCEL:-tcg}" = tcg ] &&
   [ "${BENCH_ON:-}" != host ]; then
	: "${BENCH_SIZES:=4,64}" "${BENCH_MB:=64}" "${BENCH_REPS:=10}" "${BENCH_BOOTS:=6}"
	[ "${GUEST_CPUS:-2}" -le "$(nproc)" ] ||
		warn "busy: ${GUEST_CPUS:-2} vCPUs on $(nproc) host CPUs: the host's scheduler adds its noise"
fi
# the host's load average when the run starts (later, its own guests count):
# an idle host is what keeps TCG's timings steady
host_load=$(cut -d" " -f1 /proc/loadavg)
boots=${BENCH_BOOTS:-3}
mb=${BENCH_MB:-128}
settings=()
for v in BENCH_MB BENCH_REPS BENCH_SIZES BENCH_EXPERIMENTS BENCH_THREADS BENCH_FULL BENCH_OFFLOAD BENCH_CHUNK BENCH_PIPE_BATCH BENCH_PIPE_DEPTH BENCH_TOUCH BENCH_BUSY BENCH_BUSY_REPS BENCH_ENGINE_FIFO BENCH_DCBM_DEPTH BENCH_REP_WATCH; do
	[ -n "${!v+set}" ] && settings+=("$v='${!v}'")
done
# Nodes 0 and 1 hold the region being moved plus the kernel's own memory.
node=$((mb + 768 > 1024 ? mb + 768 : 1024))
export GUEST_NODE_MB=${GUEST_NODE_MB:-"$node $node 512"}
mkdir -p "$RESULTS"
rm -f "$RESULTS"/bench-*.out "$RESULTS"/bench-*.insns "$RESULTS"/bench-*.png "$RESULTS"/host-check.out
failed=()

# The environment, first line of the report's input.
environment() {	# accel guest_cpus node_mb qemu
	local nodes
	nodes=$(ls -d /sys/devices/system/node/node* 2>/dev/null | wc -l)
	printf '{"type":"host","accel":"%s","guest_cpus":"%s","guest_node_mb":"%s","qemu":"%s","commit":"%s","host_load":"%s","host_cpus":%d,"host_cpu_model":"%s","host_nodes":%d,"guest_cpu_flags":"%s","settings":"%s","failed":[%s]}\n' \
		"$1" "$2" "$3" "$4" "$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo -)" \
		"$host_load" \
		"$(nproc)" "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" \
		"$nodes" "${GUEST_CPU_FLAGS:-}" "BENCH_BOOTS=$boots ${settings[*]}" \
		"$([ ${#failed[@]} -eq 0 ] || printf '"%s",' "${failed[@]}" | sed 's/,$//')" > "$RESULTS/bench-env.out"
}

if [ "${BENCH_ON:-}" = host ]; then
	[ "$(id -u)" = 0 ] || die "BENCH_ON=host needs root (sysfs settings, tracing, move_pages of THPs)"
	make -s -C "$TOP/guest" OUT="$BUILD/guest-host" KSRC="$TREE"
	PATH=$BUILD/guest-host:$PATH RESULTS=$RESULTS/bench-host.out sh "$TOP/guest/bench.sh" ||
		failed+=("host")
	environment none - - -
else
	"$TOP/scripts/deps.sh"
	"$TOP/scripts/tree.sh"
	for v in vanilla patched; do
		"$TOP/scripts/build-kernel.sh" "$v" bench
		"$TOP/scripts/initramfs.sh" "$v" bench
	done
	job=$(mktemp)
	trap 'rm -f "$job"' EXIT
	for b in $(seq "$boots"); do
		for v in vanilla patched; do
			echo "KERNEL=$v BOOT=$b ${settings[*]} sh /opt/mig/bench.sh" > "$job"
			plugin=
			if [ -n "$insns" ]; then
				# the marker: the kernel's entry of personality() (migbench -I)
				mark=$(awk '$3 == "__x64_sys_personality" { print $1 }' \
					"$(kernel_out "$v" bench)/System.map")
				[ -n "$mark" ] || die "insns: no __x64_sys_personality in the $v kernel (x86-64 only)"
				plugin="$insns,out=$RESULTS/bench-$v-$b.insns,mark=$mark"
			fi
			GUEST_PLUGIN=$plugin GUEST_APPEND="${GUEST_APPEND:-}${insns:+ nokaslr}" \
				"$TOP/scripts/run-guest.sh" "$v" bench "bench-$v-$b" "$job" || {
				warn "boot $b of the $v kernel failed (results/bench-$v-$b.console.log)"
				failed+=("$v-$b")
			}
		done
	done
	# The host mode, in a guest of the patched kernel that has this
	# machine's userspace (its root file system, read-only): the "Benchmark
	# on a host" of docs/benchmark.md as a user would run it, at a small size.
	if [ "${BENCH_HOST_CHECK:-1}" = 1 ]; then
		# TOP without symbolic links: the guest resolves them in its own root
		printf 'TOP=%q BENCH_HOST_MB=16 BENCH_HOST_SIZES=4,64 BENCH_HOST_REPS=2 sh /opt/mig/bench-host-check.sh\n' \
			"$(cd "$TOP" && pwd -P)" > "$job"
		GUEST_SHARE=/ "$TOP/scripts/run-guest.sh" patched bench host-check "$job" &&
			grep -q '^ok 4 ' "$RESULTS/host-check.out" &&
			! grep -q '^not ok' "$RESULTS/host-check.out" || {
			warn "the host-mode check failed (results/host-check.{out,console.log})"
			grep '^not ok' "$RESULTS/host-check.out" >&2 || true
			failed+=("host-check")
		}
	fi
	# after the host check: its failure is listed too
	environment "${GUEST_ACCEL:-tcg}" "${GUEST_CPUS:-2}" "$GUEST_NODE_MB" \
		"$(qemu-system-x86_64 --version | head -1 | sed 's/QEMU emulator version //')"
fi

# Debian's python3, which has python3-matplotlib (another python3 may come first in PATH)
/usr/bin/python3 "$TOP/scripts/bench-report.py" "$RESULTS"/bench-*.out --out "$RESULTS/bench"
if [ -n "$insns" ]; then
	/usr/bin/python3 "$TOP/scripts/insn-report.py" --out "$RESULTS/bench-insns.md" \
		--build vanilla="$(kernel_out vanilla bench)" \
		--build patched="$(kernel_out patched bench)" "$RESULTS"/bench-*.insns ||
		failed+=("insns")
fi
[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]} (the report has what they measured)"
