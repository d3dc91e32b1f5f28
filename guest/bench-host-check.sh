#!/bin/sh
# make bench's host mode, checked in the guest (busybox sh): the guest is a
# host booted into the patched kernel, with the machine's own userspace.
# scripts/bench.sh shares the machine's root file system read-only (9p,
# tag "hostroot"); this mounts it under a writable overlay, gives it what a
# booted host has (proc, sys, dev, tracing, a writable /tmp, this kernel's
# modules in /lib/modules), copies the testbed from TOP there, and runs
#   make bench BENCH_ON=host
# in a chroot, as "Benchmark on a host" (docs/benchmark.md) tells a user to: the
# programs are built by the machine's compiler, guest/bench.sh runs in the
# machine's shell, the report is made by its python3. TAP on $RESULTS.
# The testbed is copied from the 9p mount itself, not from the overlay:
# there the guest's own mounts (a fresh /tmp, /proc, /sys, /dev) hide
# whatever the machine has under them, e.g. a clone in /tmp.
#   TOP            the testbed's path on the machine, without symbolic links
#   BENCH_HOST_*   BENCH_MB, BENCH_SIZES, BENCH_REPS of the run (small)
n=0 bad=0
say() { n=$((n + 1)); echo "$1 $n $2" > "$RESULTS"; echo "$1 $n $2"; [ "$1" = ok ] || bad=1; }
check() { if eval "$1"; then say ok "$2"; else say "not ok" "$2"; fi; }
echo "1..4" > "$RESULTS"

# The machine's root, read-only, under a writable overlay (a booted host's
# root is writable: /lib/modules may not even exist on the machine).
R=/host
mkdir -p /hostro /hostrw $R
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro hostroot /hostro ||
   ! mount -t tmpfs tmpfs /hostrw || ! mkdir -p /hostrw/upper /hostrw/work ||
   ! mount -t overlay overlay -o lowerdir=/hostro,upperdir=/hostrw/upper,workdir=/hostrw/work $R; then
	say "not ok" "mount the machine's root file system (9p, overlay)"
	exit 0
fi
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t tracefs tracefs $R/sys/kernel/tracing
mount -t tmpfs tmpfs $R/tmp
mkdir -p $R/lib/modules
mount -o bind /lib/modules $R/lib/modules

# The testbed as the machine has it, copied to the chroot's /tmp.
missing=
for d in Makefile config guest scripts; do
	[ -e "/hostro$TOP/$d" ] || missing="$missing $TOP/$d"
done
if [ -n "$missing" ]; then
	p=$TOP
	while [ -n "$p" ] && [ ! -e "/hostro$p" ]; do p=${p%/*}; done
	echo "  of $TOP, the guest sees ${p:-/} only"
	say "not ok" "the testbed: the guest cannot see$missing in the machine's root file system shared over 9p (/hostro$TOP)"
	exit 1
fi
mkdir -p $R/tmp/repo
if ! cp -a "/hostro$TOP/Makefile" "/hostro$TOP/config" "/hostro$TOP/guest" "/hostro$TOP/scripts" $R/tmp/repo/; then
	say "not ok" "the testbed: copying it from $TOP (/hostro$TOP) failed"
	exit 1
fi
# The guest programs also build with two files of the kernel tree (make
# tree's build/linux, guest/Makefile's KSRC): the selftests' vm_util and
# thp_settings, and the uapi headers they include.
k=build/linux/tools
mkdir -p $R/tmp/repo/$k/testing/selftests $R/tmp/repo/$k/include
if ! cp -a "/hostro$TOP/$k/testing/selftests/mm" "/hostro$TOP/$k/testing/selftests/kselftest.h" \
	$R/tmp/repo/$k/testing/selftests/ ||
   ! cp -a "/hostro$TOP/$k/include/uapi" $R/tmp/repo/$k/include/ ||
   ! cp -a "/hostro$TOP/$k/arch" $R/tmp/repo/$k/; then
	say "not ok" "the testbed: copying the selftests' sources from $TOP/build/linux failed (make tree)"
	exit 1
fi
say ok "the machine's root file system, as a booted host's, and the testbed from $TOP"

# What docs/benchmark.md tells a user with a patched kernel to run, in a
# login-like environment: nothing of the guest's.
chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/tmp BENCH_ON=host BENCH_MB="$BENCH_HOST_MB" BENCH_SIZES="$BENCH_HOST_SIZES" \
	BENCH_REPS="$BENCH_HOST_REPS" BENCH_EXPERIMENTS=sizes \
	make -C /tmp/repo bench 2>&1
check "[ $? -eq 0 ]" "make bench BENCH_ON=host"

# Every folio size asked for, measured with vanilla's path and with each
# migrator the kernel offers, in this kernel, without QEMU.
chroot $R /usr/bin/python3 - "$BENCH_HOST_SIZES" <<'EOF'
import json, sys
want = {int(s) for s in sys.argv[1].split(",")}
try:
    d = json.load(open("/tmp/repo/results/bench.json"))
except (OSError, ValueError) as e:
    sys.exit("no report from make bench BENCH_ON=host: %s" % e)
problems = []
if d["env"]["accel"] != "none":
    problems.append("env.accel is %r, not 'none'" % d["env"]["accel"])
if d["errors"]:
    problems.append("errors: %r" % d["errors"])
boots = d["boots"]
if len(boots) != 1 or boots[0]["kernel"] != "patched":
    problems.append("boots: %r" % boots)
for m in ("none", "kernel", "mtcopy", "dcbm"):
    got = {r["folio_kb"] for r in d["reps"] if r["exp"] == "sizes" and r["migrator"] == m}
    if got != want:
        problems.append("%s: folio sizes %s, not %s" % (m, sorted(got), sorted(want)))
print("\n".join(problems) or "bench.json: all sizes for none, kernel, mtcopy, dcbm")
sys.exit(1 if problems else 0)
EOF
check "[ $? -eq 0 ]" "bench.json has every size for every migrator, measured on the host"

if [ -s $R/tmp/repo/results/bench.md ]; then
	sed 's/^/  | /' $R/tmp/repo/results/bench.md | head -40
	say ok "the report, results/bench.md"
else
	say "not ok" "the report, results/bench.md"
fi
umount $R/lib/modules $R/tmp $R/sys/kernel/tracing $R/sys/kernel/debug $R/dev $R/sys $R/proc
umount $R /hostrw /hostro
exit $bad
