#!/usr/bin/env bash
# make test (scripts/test.sh quick) and make test-full (scripts/test.sh
# full): self-test the kernel-log judge, build the patched kernel (debug
# config), boot it with 4 vCPUs and run the guest tests (the quick group,
# guest/tests/quick, or all), and judge the kernel log. make test-full then
# boots it again with swiotlb=force for dcbm's integrity matrix, timeout
# race, untrusted providers and stuck unbind, and both boot it with
# isolcpus=, nohz_full= and debug_pagealloc=on for mtcopy's placement and
# the late reads of kept sources. Writes results/test.ktap and
# results/test.json.
# make test-arm64 (GUEST_ARCH=arm64 scripts/test.sh arm64, once with
# GUEST_PAGE=4k and once with 64k): the arm64 kernel of that page size
# (debug config, MTE), one boot of QEMU's virt machine with MTE running the
# tests of guest/tests/arm64-PAGE; results in results/arm64-PAGE/. Group
# smoke runs guest/tests/arm64-smoke there instead: the quick group runs it
# on the 4K kernel (ARM64_SMOKE=0: not) and counts its boot with its own.
#   TESTS="10-migbench-verify ..."  run only these guest tests (one boot)
# Last line: "N passed, N failed[, N skipped]"; exit status non-zero on any
# failure, or on a skip that guest/tests/skips does not allow.
. "$(dirname "$0")/lib.sh"

group=${1:-quick}
case $group in
quick|full) [ "$GUEST_ARCH" = x86_64 ] || die "$group: the x86-64 groups (GUEST_ARCH=arm64 runs group arm64)" ;;
arm64|smoke) [ "$GUEST_ARCH" = arm64 ] || die "group $group needs GUEST_ARCH=arm64" ;;
*) die "usage: $0 quick|full|arm64|smoke" ;;
esac

# The tests of each boot, first: a name that no boot of this run can run
# (no such guest/tests/NAME.sh, or a test of a boot this group has not) is
# an error before anything is built.
# dcbm's integrity matrix, its timeout race and the untrusted providers run
# in the swiotlb boot of make test-full only (below): the race is one of
# bounce buffers. 87 leaks what a hung engine holds, for good: it runs last
# there.
swiotlb_only="80-dcbm-integrity 86-dcbm-timeout-race 84-dcbm-untrusted"
swiotlb_last=87-dcbm-unbind-stuck
# 93 runs in both boots: off the CPUs isolated at boot there, off those of
# an isolated cpuset partition in the main boot
isolation_only=47-keep-late-read
isolation_too=93-mtcopy-placement
all=$(cd "$TOP/guest/tests" && ls [0-9][0-9]-*.sh | sed 's/\.sh$//')
if [ -n "${TESTS:-}" ]; then
	for t in $TESTS; do
		[ -e "$TOP/guest/tests/$t.sh" ] || die "TESTS: no test $t (no guest/tests/$t.sh)"
	done
	tests=$TESTS
else
	# shellcheck disable=SC2086  # a list
	tests=$(grep -v -x -F "$(printf '%s\n' $swiotlb_only $swiotlb_last $isolation_only)" <<< "$all")
	# a group file: the quick group (the main and isolation boots' tests),
	# or the arm64 kernel's tests; make test's arm64 smoke set is checked
	# here too
	case $group in
	quick)
		# shellcheck disable=SC2086  # a list
		quick=$(group_tests "$TOP/guest/tests/quick" "$(printf '%s\n' $tests $isolation_only)" \
			"the main and isolation boots of make test")
		tests=$(grep -x -F "$quick" <<< "$tests")
		[ "${ARM64_SMOKE:-1}" = 0 ] ||
			group_tests "$TOP/guest/tests/arm64-smoke" "$all" "the arm64 smoke boot" > /dev/null ;;
	arm64|smoke)
		list=arm64-$GUEST_PAGE
		[ "$group" = arm64 ] || list=arm64-smoke
		names=$(group_tests "$TOP/guest/tests/$list" "$all" "the arm64 boot")
		tests=$(grep -x -F "$names" <<< "$all") ;;
	esac
fi

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
[ "${VARIANT:-patched}" = patched ] || "$TOP/scripts/tree.sh" "$VARIANT"
variant=${VARIANT:-patched}
"$TOP/scripts/build-kernel.sh" "$variant" debug
"$TOP/scripts/initramfs.sh" "$variant" debug

# boot NAME APPEND TEST...: one guest running these tests (all if none):
# its KTAP goes to results/NAME.out, the judge's verdict on its kernel logs
# to results/NAME.reports, how it ended to results/NAME.boot; the report
# (scripts/test-report.py) makes the verdicts of all boots.
# The main boot's tests take up to 20 minutes (quick) or 60-80 (full) on a
# slow 2-core host (the debug kernel under TCG): a stuck guest is caught by GUEST_STALL and each
# test by its time limit (guest/tests/settings), the hard limit only has to
# be above that.
boots=()
retry=1
boot() {
	local name=$1 append=$2 list="" t rc=0 out left="" ended again
	local accel=${GUEST_ACCEL:-tcg-single}
	shift 2
	for t in "$@"; do list="$list /opt/mig/tests/$t.sh"; done
	echo "sh /opt/mig/tests/run.sh$list" > "$job"
	# Fresh disks (see docs/testbed.md, "Disks"): vda ext4, mounted on /mnt by
	# init (page-cache and buffer-head tests); vdb raw zeros, written
	# directly by the block-device tests (18 also puts a scratch ext2 on
	# it); vdc ext4 with 1K blocks, not mounted by init (several buffer
	# heads per folio, metadata in the block device's page cache); vdd,
	# vde, vdf raw zeros, the members of 84's RAID5 array (its copies are
	# DMA traffic on channels dcbm shares).
	rm -f "${disks[@]}"
	# created first: mke2fs -q still prints "Creating regular file"
	truncate -s 512M "${disks[0]}"
	truncate -s 64M "${disks[1]}"
	truncate -s 128M "${disks[2]}"
	mkfs.ext4 -q -F "${disks[0]}"
	mkfs.ext4 -q -F -b 1024 "${disks[2]}"
	for t in "${disks[@]:3}"; do truncate -s 16M "$t"; done
	# Node 0 also holds the kernel and, in the debug kernel, the KASAN
	# shadow of all nodes: give it more, so that migrations to it do not
	# run short of THPs. The migration-path tests (21-29) use a
	# hotpluggable DIMM and a CMA area on node 2 (x86-64 only: virt's
	# DIMMs need ACPI, and they do not run on arm64).
	# Single-threaded TCG (one host thread runs every vCPU in turn): QEMU
	# 7.2's multi-threaded TCG crashed early boots (an MSI-X table
	# assertion, SIGSEGV) and ran stale int3s (docs/testbed.md), and on 2
	# host cores it was slower here (docs/testbed.md, "Times").
	# GUEST_ACCEL=tcg: multi-threaded.
	GUEST_ACCEL=$accel \
	GUEST_NODE_MB=${GUEST_NODE_MB:-1536 1024 1024} GUEST_CPUS=${GUEST_CPUS:-4} \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-7200} GUEST_DISKS="${disks[*]}" GUEST_HOTPLUG_MB=$hotplug_mb \
		GUEST_APPEND="$paths_append$append${GUEST_APPEND:+ $GUEST_APPEND}" \
		"$TOP/scripts/run-guest.sh" "$variant" debug "$name" "$job" || rc=$?

	out=$RESULTS/$name.out
	grep -E '^(not )?ok ' "$out" | sed "s/^/$name: /" || true
	if grep -q '^init: job finished' "$RESULTS/$name.console.log"; then
		ended="finished"
	elif [ "$rc" -eq 4 ] && [ "$accel" = tcg ]; then
		ended="was lost to a QEMU crash (the emulator, not the kernel: see docs/testbed.md)"
	elif [ "$rc" -eq 4 ]; then
		ended="was lost to a QEMU crash under $accel (not multi-threaded TCG: a failure, see docs/testbed.md)"
	elif grep -q '^stale int3' "$RESULTS/$name.reports"; then
		ended="died of a stale int3 (QEMU TCG, not the kernel: see docs/testbed.md)"
	elif ! grep -q '^init: ' "$RESULTS/$name.console.log"; then
		ended="stopped before its init started (qemu exit $rc; see results/$name.console.log)"
	else
		ended="did not finish: crashed, stalled or timed out (qemu exit $rc; see results/$name.console.log)"
	fi
	{ echo "tests=$*"; echo "accel=$accel"; echo "ended=$ended"
	  [ "$ended" != finished ] || echo "finished=yes"; } > "$RESULTS/$name.boot"
	boots+=("$name")
	# A guest killed by a stale int3 (its log judged up to it), or stuck
	# before its init started (an early-boot hang under TCG, seen once on a
	# slow host in the isolation boot; its console judged), or lost to a
	# crash of QEMU itself (SIGSEGV early in the boot, twice in a row on
	# one CI host), runs the tests that did not report again, once, in a
	# new boot: under multi-threaded TCG only, whose races they were seen
	# to be (docs/testbed.md). Under tcg-single (make test's) they fail.
	case $accel:$ended in
	tcg:"died of a stale int3"*|tcg:"stopped before its init started"*|tcg:"was lost to a QEMU crash"*)
		again=$retry ;;
	*) again=0 ;;
	esac
	if [ "$again" = 1 ]; then
		for t in "$@"; do
			grep -q -E "^(not )?ok [0-9]+ $t( |\$)" "$out" || left="$left $t"
		done
		[ -n "$left" ] || return 0
		echo "retry=$name-retry" >> "$RESULTS/$name.boot"
		echo "$name: the guest $ended; again in $name-retry:$left"
		retry=0
		# shellcheck disable=SC2086  # a list
		boot "$name-retry" "$append" $left
		retry=1
	fi
}

disks=("$BUILD/test-disk.img" "$BUILD/test-raw.img" "$BUILD/test-ext4-1k.img"
       "$BUILD"/test-raid{0,1,2}.img)
hotplug_mb=256 paths_append="numa_cma=2:640M "
[ "$GUEST_ARCH" = x86_64 ] || hotplug_mb=0 paths_append=""
job=$(mktemp)
trap 'rm -f "$job"' EXIT
mkdir -p "$RESULTS"
rm -f "$RESULTS"/*.boot "$RESULTS"/*-retry.* "$RESULTS"/test.*	# of an earlier run

# The kernel-log judge first: every "kernel log clean" below rests on it.
log "self-test of the kernel-log judge"
if ! "$TOP/scripts/test-judge.sh" > "$RESULTS/judge.ktap"; then
	warn "the kernel-log judge fails its self-test (results/judge.ktap):"
	grep -v '^ok ' "$RESULTS/judge.ktap" >&2 || true
fi
# And what decides around it: the guest's runner, the report, the groups.
log "self-test of the runner and the report"
if ! KUNIT=$TREE/tools/testing/kunit "$TOP/scripts/test-harness.sh" > "$RESULTS/harness.ktap"; then
	warn "the runner or the report fails its self-test (results/harness.ktap):"
	grep -v '^ok ' "$RESULTS/harness.ktap" >&2 || true
fi

# shellcheck disable=SC2086  # lists
boot test "" $tests
# The rows the path tests printed: the table of docs/migration-paths.md.
logs=("$RESULTS"/test.console.log)
[ ! -e "$RESULTS/test-retry.console.log" ] || logs+=("$RESULTS/test-retry.console.log")
if grep -q '^ *path: ' "${logs[@]}"; then
	{
		echo "| path | migrator | batch path | folios copied | bytes |"
		echo "|---|---|---|---|---|"
		sed -n 's/^ *path: //p' "${logs[@]}"
	} > "$RESULTS/paths.md"
fi
# make test-full: dcbm with every DMA mapping bounced through swiotlb, as in
# confidential-computing guests (segments capped at dma_max_mapping_size()).
# 95 checks DMA-API debugging after the DMA tests of this boot too, before
# 87 leaks its mappings.
# shellcheck disable=SC2086
[ -n "${TESTS:-}" ] || [ "$group" != full ] ||
	boot test-swiotlb "swiotlb=force" $swiotlb_only 95-dma-api-debug $swiotlb_last
# The last CPU isolated, the one before it tickless: mtcopy's workers must
# stay off both. Freed pages unmapped from the direct map: a migrator that
# reads a source after the core freed it faults (47).
last=$((${GUEST_CPUS:-4} - 1))
# shellcheck disable=SC2086  # a list
[ -n "${TESTS:-}" ] || [ "$GUEST_ARCH" = arm64 ] ||
	boot test-isolation "isolcpus=$last nohz_full=$((last - 1)) debug_pagealloc=on" \
		$isolation_too $isolation_only

# make test: the arm64 smoke set, in results/arm64-4k/ (its own report
# there too); its boots are counted here. A part that stopped before its
# boot (a failed cross build) fails as a boot that did not run its tests.
if [ "$group" = quick ] && [ -z "${TESTS:-}" ] && [ "${ARM64_SMOKE:-1}" != 0 ]; then
	smoke=$TOP/results/arm64-4k
	mkdir -p "$smoke"
	rm -f "$smoke"/*.boot
	log "the arm64 smoke set (guest/tests/arm64-smoke; ARM64_SMOKE=0: not)"
	GUEST_ARCH=arm64 GUEST_PAGE=4k VARIANT=patched "$0" smoke ||
		warn "the arm64 smoke set failed (results/arm64-4k/)"
	if [ ! -e "$smoke/test.boot" ]; then
		{ echo "tests=$(sed -e 's/[[:space:]]*#.*//' -e '/^$/d' "$TOP/guest/tests/arm64-smoke" | tr '\n' ' ')"
		  echo "ended=never booted: the arm64 part stopped before its boot (see its output)"; } > "$smoke/test.boot"
	fi
	boots+=(arm64-4k/test)
	[ ! -e "$smoke/test-retry.boot" ] || boots+=(arm64-4k/test-retry)
fi

/usr/bin/python3 "$TOP/scripts/test-report.py" --kunit "$TREE/tools/testing/kunit" \
	--results "$RESULTS" --skips "$TOP/guest/tests/skips" --arch "$GUEST_ARCH" \
	--harness "$RESULTS/harness.ktap" \
	--commit "$(git -C "$TREE" describe --always --dirty --abbrev=40 2>/dev/null)" \
	--testbed-commit "$(git -C "$TOP" describe --always --dirty --abbrev=40 2>/dev/null)" \
	"$RESULTS/judge.ktap" "${boots[@]}"
