#!/usr/bin/env bash
# make test: build the patched kernel (debug config), boot it with 4 vCPUs,
# run every guest test, and judge the kernel log.
#   TESTS="10-migbench-verify ..."  run only these guest tests
# Last line: "N passed, N failed"; exit status non-zero on any failure.
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/deps.sh"
"$TOP/scripts/tree.sh"
"$TOP/scripts/build-kernel.sh" patched debug
"$TOP/scripts/initramfs.sh" patched debug

# Fresh disks (see README, "The guest"): vda ext4, mounted on /mnt by init
# (page-cache and buffer-head tests); vdb raw zeros, written directly by the
# block-device tests (18 also puts a scratch ext2 on it); vdc ext4 with 1K
# blocks, not mounted by init (several buffer heads per folio, metadata in the
# block device's page cache).
disks=("$BUILD/test-disk.img" "$BUILD/test-raw.img" "$BUILD/test-ext4-1k.img")
rm -f "${disks[@]}"
mkfs.ext4 -q -F "${disks[0]}" 512M
truncate -s 64M "${disks[1]}"
mkfs.ext4 -q -F -b 1024 "${disks[2]}" 128M

job=$(mktemp)
trap 'rm -f "$job"' EXIT
list=""
for t in ${TESTS:-}; do list="$list /opt/mig/tests/$t.sh"; done
echo "sh /opt/mig/tests/run.sh$list" > "$job"

rc=0
# Node 0 also holds the kernel and, in the debug kernel, the KASAN shadow of
# all nodes: give it more, so that migrations to it do not run short of THPs.
# The migration-path tests (21-29) use a hotpluggable DIMM and a CMA area
# on node 2.
GUEST_NODE_MB=${GUEST_NODE_MB:-1536 1024 1024} GUEST_CPUS=${GUEST_CPUS:-4} GUEST_DISKS="${disks[*]}" \
	GUEST_HOTPLUG_MB=256 GUEST_APPEND="numa_cma=2:640M${GUEST_APPEND:+ $GUEST_APPEND}" \
	"$TOP/scripts/run-guest.sh" patched debug test "$job" || rc=$?

# The rows the path tests printed: the README's table of migration paths.
{
	echo "| path | migrator | batch path | folios copied | bytes |"
	echo "|---|---|---|---|---|"
	sed -n 's/^ *path: //p' "$RESULTS/test.console.log"
} > "$RESULTS/paths.md"

out=$RESULTS/test.out
passed=$(grep -c -E '^ok [0-9]+ .*' "$out" | tr -d ' ' || true)
skipped=$(grep -c -E '^ok [0-9]+ .*# SKIP' "$out" || true)
failed=$(grep -c -E '^not ok ' "$out" || true)
passed=$((passed - skipped))
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -1)
missing=$(( ${planned:-1} - passed - skipped - failed ))
if [ "$missing" -gt 0 ]; then
	warn "$missing planned tests did not report (guest crashed or timed out)"
	failed=$((failed + missing))
fi
# The kernel log is one more test: it must be free of bug reports.
grep -E '^(not )?ok ' "$out" || true
case $rc in
0) passed=$((passed + 1)); echo "ok - kernel log clean" ;;
3) failed=$((failed + 1)); echo "not ok - kernel log clean (see results/test.console.log)" ;;
*) failed=$((failed + 1)); echo "not ok - guest did not finish (exit $rc)" ;;
esac
summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
