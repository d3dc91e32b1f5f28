#!/usr/bin/env bash
# Boot one kernel in QEMU (TCG) with emulated NUMA and run a job in it:
#   scripts/run-guest.sh VARIANT PROFILE NAME JOB.sh
# Topology: node0 = first half of the vCPUs + memory, node1 = the other half
# + memory, node2 = memory only (a CXL-like far tier). On x86-64 the
# firmware's HMAT says so: node 2 has 6 times the latency and a quarter of
# the bandwidth of local memory, so the kernel puts it in a lower memory
# tier (demotion target of nodes 0 and 1, promotion source under NUMA
# balancing mode 2). With GUEST_ARCH=arm64 (GUEST_PAGE 4k or 64k) the guest
# is QEMU's virt machine with MTE (-machine virt,mte=on -cpu max), booted
# with the device tree QEMU makes (the same three nodes; no HMAT, no DIMM).
# Environment:
#   GUEST_CPUS     vCPUs (default 2, at least 2)
#   GUEST_NODE_MB  memory of nodes 0 1 2 in MiB (default "1024 1024 1024")
#   GUEST_TIMEOUT  hard limit for the whole boot in seconds (default 1800)
#   GUEST_STALL    give up when the console and the results port have been
#                  silent this many seconds (default 300): a stuck guest
#                  fails early, not at GUEST_TIMEOUT (results/NAME.stall:
#                  where its vCPUs were);
#                  GUEST_EARLY_STALL (default 120) before the guest's init starts
#   GUEST_APPEND   extra kernel command-line arguments (after the default ones)
#   GUEST_CPU_FLAGS  CPU features appended to -cpu under TCG, e.g. ",-erms"
#                  (without ERMS the kernel's copy_mc_to_kernel() is memcpy,
#                  not rep movsb, which TCG runs a byte at a time)
#   GUEST_HOTPLUG_MB  size of a hotpluggable DIMM on node 2 in MiB (default 0:
#                  none); present at boot, left offline by the kernel
#                  (memory hot-add/remove tests online and offline it)
#   GUEST_DISKS    raw disk images attached as virtio disks, space-separated,
#                  in order: /dev/vda, /dev/vdb, ... (optional)
#   GUEST_SHARE    a directory of this machine the guest may mount, read-only
#                  (9p over virtio, mount tag "hostroot"; optional)
#   GUEST_ACCEL    tcg (default: multi-threaded TCG, one host thread per vCPU),
#                  tcg-single (one host thread runs every vCPU in turn: slower,
#                  but none of multi-threaded TCG's races; make test's retry
#                  of a boot in which QEMU crashed), kvm (each guest node's memory bound to the host node of the
#                  same number, if there is one), or icount: deterministic TCG,
#                  one host thread runs every vCPU in turn and the guest clock
#                  counts their instructions (-icount shift=0: 1 ns of guest
#                  time per instruction of any vCPU; sleep=off: while every
#                  vCPU idles, the clock jumps to the next timer instead of
#                  following the host's), so that times measured in the guest
#                  are instruction counts, the same from boot to boot
#   GUEST_PLUGIN   a QEMU TCG plugin and its arguments, -plugin's value (make
#                  bench's instruction counts: scripts/insn-plugin.c)
#   VERBOSE=1      show kernel messages live, not only the job's output
# Writes results/NAME.console.log (kernel log + job output), results/NAME.out
# (what the job wrote to $RESULTS), results/NAME.kmsg.log (every kernel log
# record, from guest/kmsglog) and results/NAME.reports (the kernel-log judge's
# verdict: one line per kind of report, scripts/kernel-log.py). Exits 1 if
# the guest did not finish the job (or stalled), 3 if the kernel logs have a
# report (BUG, WARNING, Oops, KASAN, lockdep, hung task, stall, leak...), 4
# if QEMU itself crashed (killed by SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE
# or SIGTRAP: an emulator bug, not the guest's doing).
. "$(dirname "$0")/lib.sh"

variant=${1:?variant} profile=${2:?profile} name=${3:?name} job=${4:?job script}
out=$(kernel_out "$variant" "$profile")
cpus=${GUEST_CPUS:-2}
read -r -a mb <<< "${GUEST_NODE_MB:-1024 1024 1024}"
read -r -a disks <<< "${GUEST_DISKS:-}"
timeout=${GUEST_TIMEOUT:-1800}
stall=${GUEST_STALL:-300}
# Before init starts the kernel is never silent for long (gaps of 10-20 s
# under TCG): a boot stuck there (seen after PCI enumeration) is stopped
# sooner, and make test boots again.
early_stall=${GUEST_EARLY_STALL:-120}
[ "$cpus" -ge 2 ] && [ $((cpus % 2)) -eq 0 ] || die "GUEST_CPUS must be even and at least 2 (half per CPU node)"
[ ${#mb[@]} -eq 3 ] || die "GUEST_NODE_MB needs three sizes"
[ "$stall" -gt 0 ] || die "GUEST_STALL must be a positive number of seconds"
[ -z "${GUEST_DISK:-}" ] || die "GUEST_DISK was replaced by GUEST_DISKS (a list: vda vdb ...)"
[ -f "$out/$KIMAGE" ] || die "no kernel in $out"
for d in "${disks[@]}"; do [ -f "$d" ] || die "no disk image $d"; done

mkdir -p "$RESULTS"
console=$RESULTS/$name.console.log
result=$RESULTS/$name.out
kmsg=$RESULTS/$name.kmsg.log
reports=$RESULTS/$name.reports
: > "$console"; : > "$result"; : > "$kmsg"; : > "$reports"

# Every exit path (normal, die, ^C) stops the watchdog and QEMU and waits for
# them and the console tail, so that nothing outlives this script.
jobdir=$(mktemp -d)
qpid="" wpid=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	[ -z "$wpid" ] || kill "$wpid" 2>/dev/null || true
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$jobdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The job travels as a second cpio archive appended to the initramfs.
install -m 755 "$job" "$jobdir/job.sh"
(cd "$jobdir" && echo job.sh | cpio -o -H newc --quiet | gzip -1) > "$jobdir/job.cpio.gz"
cat "$out/initramfs.cpio.gz" "$jobdir/job.cpio.gz" > "$jobdir/initrd"

# q35, not pc: the i440fx _PRT is an AML method that the KASAN kernel under
# TCG can run so slowly that ACPICA aborts it (AE_AML_LOOP_TIMEOUT), leaving
# virtio without an interrupt; q35's routing table is static. la57=off: with
# 5-level paging (on in -cpu max) the debug kernel took a KASAN wild access
# in early boot. Guest RAM is preallocated: first touches of host memory
# would otherwise make some migrations several times slower than others.
# arm64: virt has one UART (the PL011 console, ttyAMA0), so the job's
# results and the kernel log go to two 16550s on PCI (ttyS0, ttyS1), named
# to guest/init in its environment (MIG_RESULTS, MIG_KMSG: the kernel
# passes unknown NAME=VALUE arguments to init).
half=$((cpus / 2))	# one socket per CPU node, or the kernel warns about LLC siblings across nodes
case $GUEST_ARCH in
x86_64)
	qemu=qemu-system-x86_64 machine=q35,hmat=on cpu=max,la57=off console_tty=ttyS0
	initiator=,initiator=0	# node 2's CPUs, for the HMAT
	ports=(-serial file:"$result" -serial file:"$kmsg")
	;;
arm64)
	qemu=qemu-system-aarch64 machine=virt,mte=on cpu=max console_tty=ttyAMA0 initiator=
	ports=(-chardev file,id=results,path="$result" -chardev file,id=kmsg,path="$kmsg"
	       -device pci-serial-2x,chardev1=results,chardev2=kmsg)
	console_tty="$console_tty MIG_RESULTS=/dev/ttyS0 MIG_KMSG=/dev/ttyS1"
	[ "${GUEST_HOTPLUG_MB:-0}" -eq 0 ] || die "GUEST_HOTPLUG_MB: no DIMM on arm64's virt machine (ACPI only)"
	;;
esac
cpu+=${GUEST_CPU_FLAGS:-}
case ${GUEST_ACCEL:-tcg} in
tcg) accel=(-accel tcg,thread=multi -cpu "$cpu") ;;
tcg-single) accel=(-accel tcg,thread=single -cpu "$cpu") ;;
kvm) accel=(-accel kvm -cpu host) ;;
icount) accel=(-accel tcg,thread=single -icount shift=0,sleep=off,align=off -cpu "$cpu") ;;
*) die "GUEST_ACCEL must be tcg, tcg-single, kvm or icount" ;;
esac
membind() {	# guest node -> ",host-nodes=N,policy=bind" under KVM
	if [ "${GUEST_ACCEL:-tcg}" = kvm ] && [ -d "/sys/devices/system/node/node$1" ]; then
		echo ",host-nodes=$1,policy=bind"
	fi
}
mem=()
for i in 0 1 2; do
	mem+=(-object "memory-backend-ram,id=m$i,size=${mb[i]}M,prealloc=on$(membind "$i")")
done
ram=$((mb[0] + mb[1] + mb[2]))
hotplug=${GUEST_HOTPLUG_MB:-0} memsize=${ram}M
if [ "$hotplug" -gt 0 ]; then
	memsize="${ram}M,slots=1,maxmem=$((ram + hotplug))M"
	mem+=(-object "memory-backend-ram,id=hp0,size=${hotplug}M,prealloc=on$(membind 2)"
	      -device pc-dimm,id=dimm0,memdev=hp0,node=2)
fi
# HMAT (x86-64, ACPI): latency (ns) and bandwidth from each CPU node to each node.
hmat=()
[ "$GUEST_ARCH" != x86_64 ] || for i in 0 1; do
	for t in 0 1 2; do
		if [ $t = 2 ]; then lat=60 bw=5G; elif [ $t = $i ]; then lat=10 bw=20G; else lat=20 bw=10G; fi
		hmat+=(-numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-latency,latency=$lat"
		       -numa "hmat-lb,initiator=$i,target=$t,hierarchy=memory,data-type=access-bandwidth,bandwidth=$bw")
	done
done
# The debug kernel reports every KASAN bug, not only a boot's first (a
# test that checks for its own report must not be hidden by an earlier one)
debug_append=
[ "$profile" != debug ] || debug_append=" kasan_multi_shot"
args=(
	-machine "$machine" "${accel[@]}"
	-smp "$cpus,sockets=2,cores=$half,threads=1"
	-m "$memsize"
	"${mem[@]}"
	-numa node,nodeid=0,cpus=0-$((half - 1)),memdev=m0
	-numa node,nodeid=1,cpus=$half-$((cpus - 1)),memdev=m1
	-numa "node,nodeid=2,memdev=m2$initiator"
	"${hmat[@]}"
	-kernel "$out/$KIMAGE" -initrd "$jobdir/initrd"
	-append "console=$console_tty panic=-1 oops=panic loglevel=6 log_buf_len=8M watchdog_thresh=60$debug_append${GUEST_APPEND:+ $GUEST_APPEND}"
	-display none -monitor "unix:$jobdir/monitor.sock,server=on,wait=off" -nic none -no-reboot
	-serial file:"$console" "${ports[@]}"
)
# virtio-blk devices are named in the order of their PCI slots, i.e. of -drive.
for d in "${disks[@]}"; do args+=(-drive file="$d",if=virtio,format=raw); done
[ -z "${GUEST_PLUGIN:-}" ] || args+=(-plugin "$GUEST_PLUGIN")
[ -z "${GUEST_SHARE:-}" ] ||
	args+=(-virtfs "local,path=$GUEST_SHARE,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")

log "booting $variant-$profile on $GUEST_ARCH${GUEST_PAGE:+ $GUEST_PAGE} (${GUEST_ACCEL:-tcg}): $cpus vCPUs, nodes ${mb[*]} MiB (log: ${console#"$TOP"/})"
started=$SECONDS
timeout --foreground -k 10 "$timeout" "$qemu" "${args[@]}" &
qpid=$!
if [ -n "${VERBOSE:-}" ]; then
	tail -n +1 -F --pid=$qpid "$console" 2>/dev/null &
else
	# Job output only; kernel messages start with a [timestamp].
	tail -n +1 -F --pid=$qpid "$console" 2>/dev/null | grep --line-buffered -v -E '^\[ *[0-9]+\.[0-9]+\]' &
fi
tpid=$!

# Watchdog: a guest that prints nothing for $stall seconds, neither on its
# console nor on its results port, is stuck (an interrupt that never comes,
# a deadlock); stop it instead of waiting for GUEST_TIMEOUT. timeout(1)
# passes the TERM on to QEMU (KILL 10 s later). The results port counts:
# a bench experiment writes a line per rep there and nothing on the
# console for minutes (the "stalls" of November 29, issue 45, were that).
# Before QEMU goes, scripts/monitor-dump.py writes where its vCPUs are to
# results/NAME.stall (x86-64; symbols right only with nokaslr).
stalled=$jobdir/stalled
(
	sp=""
	trap '[ -z "$sp" ] || { kill "$sp"; wait "$sp"; } 2>/dev/null; exit 0' TERM
	size=-1 since=$SECONDS
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5 & sp=$!
		wait "$sp" || true
		now=$(( $(stat -c %s "$console") + $(stat -c %s "$result") ))
		if [ "$now" != "$size" ]; then
			size=$now since=$SECONDS
		elif [ $((SECONDS - since)) -ge "$stall" ] ||
		     { [ $((SECONDS - since)) -ge "$early_stall" ] &&
		       ! grep -q '^init: ' "$console"; }; then
			: > "$stalled"
			# where the vCPUs are (their RIPs and stacks), before QEMU goes
			[ "$GUEST_ARCH" != x86_64 ] || [ ! -f "$out/System.map" ] ||
				timeout 60 python3 "$TOP/scripts/monitor-dump.py" "$jobdir/monitor.sock" \
					"$out/System.map" > "$RESULTS/$name.stall" 2>&1 || true
			kill "$qpid" 2>/dev/null || true
			exit 0
		fi
	done
) &
wpid=$!

wait $qpid && rc=0 || rc=$?
qpid=""
wait $tpid 2>/dev/null || true	# let the tail print the last lines

# The judge's verdict on every boot, finished or not (a stale int3's boot,
# under multi-threaded TCG, is judged up to it): on standard error and in
# NAME.reports.
problems=0
logs=("$console" "$kmsg")
# A guest that stopped before its init started (no "init:" line) has no
# kmsg log (guest/kmsglog runs from init): its console is all there is.
grep -q '^init: ' "$console" || [ -s "$kmsg" ] || logs=("$console")
! kernel_problems --accel "${GUEST_ACCEL:-tcg}" "${logs[@]}" 2> "$reports" || problems=1
if [ -s "$reports" ]; then
	warn "kernel log of $name:"
	sed 's/^/  /' "$reports" >&2
fi
if [ -e "$stalled" ]; then
	warn "guest stalled: no console output for $stall s; its last lines:"
	tail -n 5 "$console" >&2
	[ ! -s "$RESULTS/$name.stall" ] ||
		warn "its vCPUs' registers and stacks: ${RESULTS#"$TOP"/}/$name.stall"
	exit 1
fi
[ "$rc" -eq 124 ] && warn "guest timed out after ${timeout}s"
# timeout(1) dies of the signal that killed QEMU: 128 + its number.
case $rc in
132|133|134|135|136|139)
	warn "QEMU crashed: killed by SIG$(kill -l $((rc - 128))) after $((SECONDS - started)) s; the guest's last lines:"
	tail -n 5 "$console" >&2
	exit 4 ;;
esac
if ! grep -q '^init: job finished' "$console"; then
	warn "the guest did not finish its job (qemu exit $rc)"
	exit 1
fi
[ "$problems" -eq 0 ] || exit 3
exit 0
