#!/usr/bin/env bash
# make test: build the patched kernel (debug config), boot it with 4 vCPUs,
# run every guest test but dcbm's integrity matrix, timeout race and stuck
# unbind, and judge the kernel log; then boot it again with swiotlb=force
# for those and dcbm's untrusted-provider test, and with isolcpus= and
# nohz_full= for mtcopy's placement test.
#   TESTS="10-migbench-verify ..."  run only these guest tests (one boot)
# Last line: "N passed, N failed"; exit status non-zero on any failure.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
"$TOP/scripts/build-kernel.sh" patched debug
"$TOP/scripts/initramfs.sh" patched debug

# boot NAME APPEND TEST...: one guest running these tests (all if none);
# its TAP goes to results/NAME.out, its kernel log is judged as one more test.
# All tests take about 45 minutes in one boot: a stuck guest is caught by
# GUEST_STALL, the hard limit only has to be above that.
passed=0 failed=0 skipped=0
retry=1
boot() {
	local name=$1 append=$2 list="" t rc=0 out n left=""
	shift 2
	for t in "$@"; do list="$list /opt/mig/tests/$t.sh"; done
	echo "sh /opt/mig/tests/run.sh$list" > "$job"
	# Fresh disks (see README, "The guest"): vda ext4, mounted on /mnt by
	# init (page-cache and buffer-head tests); vdb raw zeros, written
	# directly by the block-device tests (18 also puts a scratch ext2 on
	# it); vdc ext4 with 1K blocks, not mounted by init (several buffer
	# heads per folio, metadata in the block device's page cache); vdd,
	# vde, vdf raw zeros, the members of 84's RAID5 array (its copies are
	# DMA traffic on channels dcbm shares).
	rm -f "${disks[@]}"
	mkfs.ext4 -q -F "${disks[0]}" 512M
	truncate -s 64M "${disks[1]}"
	mkfs.ext4 -q -F -b 1024 "${disks[2]}" 128M
	for t in "${disks[@]:3}"; do truncate -s 16M "$t"; done
	# Node 0 also holds the kernel and, in the debug kernel, the KASAN
	# shadow of all nodes: give it more, so that migrations to it do not
	# run short of THPs. The migration-path tests (21-29) use a
	# hotpluggable DIMM and a CMA area on node 2.
	GUEST_NODE_MB=${GUEST_NODE_MB:-1536 1024 1024} GUEST_CPUS=${GUEST_CPUS:-4} \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600} GUEST_DISKS="${disks[*]}" GUEST_HOTPLUG_MB=256 \
		GUEST_APPEND="numa_cma=2:640M $append${GUEST_APPEND:+ $GUEST_APPEND}" \
		"$TOP/scripts/run-guest.sh" patched debug "$name" "$job" || rc=$?

	out=$RESULTS/$name.out
	n=$(grep -c -E '^ok [0-9]+ ' "$out" || true)
	t=$(grep -c -E '^ok [0-9]+ .*# SKIP' "$out" || true)
	skipped=$((skipped + t)) passed=$((passed + n - t))
	n=$(grep -c -E '^not ok ' "$out" || true)
	failed=$((failed + n))
	grep -E '^(not )?ok ' "$out" | sed "s/^/$name: /" || true
	# A guest killed by a stale int3 (QEMU, see stale_int3) runs the tests
	# that did not report again, once, in a new boot; this boot's verdict
	# is then a skip, said as such.
	if [ "$rc" -ne 0 ] && [ "$retry" = 1 ] && stale_int3 "$RESULTS/$name.console.log"; then
		for t in "$@"; do
			grep -q -E "^(not )?ok [0-9]+ $t( |\$)" "$out" || left="$left $t"
		done
		skipped=$((skipped + 1))
		echo "$name: skipped - the guest died of a stale int3 (QEMU TCG, not the kernel: see README); again in $name-retry:$left"
		retry=0
		# shellcheck disable=SC2086  # a list
		[ -z "$left" ] || boot "$name-retry" "$append" $left
		retry=1
		return
	fi
	t=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -1)
	t=$(( ${t:-1} - $(grep -c -E '^(not )?ok [0-9]+ ' "$out" || true) ))
	if [ "$t" -gt 0 ]; then
		warn "$name: $t planned tests did not report (guest crashed or timed out)"
		failed=$((failed + t))
	fi
	case $rc in
	0) passed=$((passed + 1)); echo "$name: ok - kernel log clean" ;;
	3) failed=$((failed + 1)); echo "$name: not ok - kernel log clean (see results/$name.console.log)" ;;
	*) failed=$((failed + 1)); echo "$name: not ok - guest did not finish (exit $rc)" ;;
	esac
}

disks=("$BUILD/test-disk.img" "$BUILD/test-raw.img" "$BUILD/test-ext4-1k.img"
       "$BUILD"/test-raid{0,1,2}.img)
job=$(mktemp)
trap 'rm -f "$job"' EXIT
rm -f "$RESULTS"/*-retry.*	# of an earlier run

# dcbm's integrity matrix and its timeout race run in the swiotlb boot only
# (below): the race is one of bounce buffers, and make test stays within
# CI's time. 87 leaks what a hung engine holds, for good: it runs last there.
swiotlb_only="80-dcbm-integrity 86-dcbm-timeout-race"
swiotlb_last=87-dcbm-unbind-stuck
if [ -n "${TESTS:-}" ]; then
	tests=$TESTS
else
	# shellcheck disable=SC2086  # a list
	tests=$(cd "$TOP/guest/tests" && ls [0-9][0-9]-*.sh | sed 's/\.sh$//' |
		grep -v -x -F "$(printf '%s\n' $swiotlb_only $swiotlb_last)")
fi
# shellcheck disable=SC2086  # lists
boot test "" $tests
# The rows the path tests printed: the README's table of migration paths.
logs=("$RESULTS"/test.console.log)
[ ! -e "$RESULTS/test-retry.console.log" ] || logs+=("$RESULTS/test-retry.console.log")
if grep -q '^ *path: ' "${logs[@]}"; then
	{
		echo "| path | migrator | batch path | folios copied | bytes |"
		echo "|---|---|---|---|---|"
		sed -n 's/^ *path: //p' "${logs[@]}"
	} > "$RESULTS/paths.md"
fi
# dcbm with every DMA mapping bounced through swiotlb, as in
# confidential-computing guests (segments capped at dma_max_mapping_size()).
# shellcheck disable=SC2086
[ -n "${TESTS:-}" ] ||
	boot test-swiotlb "swiotlb=force" $swiotlb_only 84-dcbm-untrusted $swiotlb_last
# The last CPU isolated, the one before it tickless: mtcopy's workers must
# stay off both.
last=$((${GUEST_CPUS:-4} - 1))
[ -n "${TESTS:-}" ] ||
	boot test-isolation "isolcpus=$last nohz_full=$((last - 1))" 93-mtcopy-placement

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
