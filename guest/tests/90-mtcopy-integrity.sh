#!/bin/sh
# mtcopy with 1 and 4 threads copies every folio size and mapping kind
# exactly, including batches with fewer folios than threads (folios cut
# into chunks).
. /opt/mig/tests/lib.sh

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
select_migrator mtcopy || fail "cannot select mtcopy"
M=$MTCOPY

# From the second hop migbench passes every page, and each large folio is a
# batch of its own (split mTHPs: 16 or 4 pages): mtcopy takes batches of
# any size here, so that it copies every byte.
[ "$(cat $TUN/mtcopy/min_batch_pages)" = 64 ] || fail "min_batch_pages default" "$(cat $TUN/mtcopy/min_batch_pages)"
echo 1 > $TUN/mtcopy/min_batch_pages
echo "$(nproc --all)" > $M/max_workers	# no cap below the threads
nsizes=$(echo "$SIZES_ALL" | tr , ' ' | wc -w)
for t in 1 4; do
	echo $t > $M/threads
	# every size (5 from 4K to 2M; 3 with 64K pages) x 3 hops x 4 MiB,
	# only move_pages() batching
	echo syscall_or_cpuset > $MIG/reasons
	snap
	migbench -s 4 -k all -r 1 -V 0,1,2 > /tmp/mb.log 2>&1 ||
		{ cat /tmp/mb.log; fail "threads=$t: data not exact"; }
	echo "threads=$t: folios +$(delta folios) bytes +$(delta bytes) batches +$(delta batches) error +$(delta fallback_error) below_min +$(delta fallback_below_min) kept +$(delta kept)"
	# a kept destination (a copy past mtcopy's deadline: a worker's vCPU
	# not run for 100 ms) is safe, and migbench moves its folio once more:
	# then other bytes
	[ "$(delta bytes)" -eq $((nsizes * 3 * 4 << 20)) ] || [ "$(delta kept)" -gt 0 ] ||
		fail "threads=$t: mtcopy copied every byte migrated" "$(delta bytes) bytes, not the $((nsizes * 12)) MiB migrated"
	echo all > $MIG/reasons
	[ "$(delta fallback_error)" -eq 0 ] || fail "threads=$t: copies failed"
	# every folio size x mapping kind of the core tests
	snap
	migcheck -q -c move_pages > /tmp/mc.log 2>&1 ||
		{ cat /tmp/mc.log; fail "threads=$t: matrix not exact"; }
	echo "threads=$t, size x kind matrix: folios +$(delta folios)"
	[ "$(delta folios)" -gt 0 ] || fail "threads=$t: mtcopy copied nothing in the matrix"
done
echo 64 > $TUN/mtcopy/min_batch_pages

# One 2M folio per batch and 4 threads: each thread copies a quarter of it.
echo 4 > $M/threads
echo 512 > $TUN/max_batch_pages
snap
migbench -s 4 -k 2048 -r 2 -V 0,1 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "chunked copy: data not exact"; }
[ "$(delta folios)" -gt 0 ] || fail "chunked copy: nothing copied by mtcopy"

# Small batches (below 64 pages by default) are left to the move phase:
# waking workers would cost them more than it saves. Only move_pages()
# batches: compaction's, of mTHPs, may reach 64 pages.
echo syscall_or_cpuset > $MIG/reasons
snap
migbench -s 1 -k $BASE_KB -b 16 -r 1 -f 0 -t 1 > /tmp/mb.log 2>&1 ||
	{ cat /tmp/mb.log; fail "small batches: data not exact"; }
[ "$(delta fallback_below_min)" -gt 0 ] && [ "$(delta folios)" -eq 0 ] ||
	fail "16-page batches: below the minimum, none copied by mtcopy" "below_min +$(delta fallback_below_min), copied +$(delta folios)"
echo all > $MIG/reasons

for v in 0 65 -1 abc ""; do write_fails $M/threads "$v"; done
for v in nowhere "" 1; do write_fails $M/placement "$v"; done
write_fails $TUN/mtcopy/min_batch_pages -5
# spread, also towards the memory-only node 2, which has no CPUs
echo spread > $M/placement && migbench -s 2 -k $BASE_KB,2048 -r 1 -V 0,1,2 > /dev/null ||
	fail "placement spread"
echo dst_node > $M/placement

# dst_node: a batch's worker runs on a CPU of the node nearest its
# destination: node 1's own CPUs, and for node 2 (no CPUs) those of the node
# with CPUs at the least distance from it (the lowest on a tie, as
# numa_nearest_node() takes it). A farther CPU is right only while every
# nearer one is busy, so each batch is a process of its own (one 2 MiB
# folio, one worker with 2 threads): the worker of the batch before is long
# off its CPU. Batches back to back in one call were not, as often as the
# host left that vCPU without a core: 71-98% of the works on the nearest
# node on an idle host, 48% with two busy loops on its two cores (and under
# 60% in CI), where one batch per process got 89-100%. A rule blind to
# distance puts half of them elsewhere (the rotor's start is spread over
# 4 CPUs): at least 3 in 4 there, of at least 20 works in 60 batches.
nearest_cpu_node() {	# NODE
	cpu_list "$(cat /sys/devices/system/node/has_cpu)" |
		awk -v d="$(cat /sys/devices/system/node/node$1/distance)" 'BEGIN { split(d, dist) }
			best == "" || dist[$1 + 1] < dist[best + 1] { best = $1 } END { print best }'
}
echo 2 > $M/threads
chunk0=$(cat $TUN/chunk_pages)
echo 0 > $TUN/chunk_pages
echo 1 > $TUN/mtcopy/min_batch_pages
echo syscall_or_cpuset > $MIG/reasons
for dst in 1 2; do
	near=$(nearest_cpu_node $dst)
	cpus=",$(cpu_list "$(cat /sys/devices/system/node/node$near/cpulist)" | tr '\n' ','),"
	events on workqueue/workqueue_execute_start
	for i in $(seq 60); do
		pathcheck -n 0 -s 2 -f 2048 -e $dst:100 move $dst > /dev/null ||
			fail "dst_node to node $dst: data check failed"
	done
	events off workqueue/workqueue_execute_start
	set -- $(awk -v cpus="$cpus" '/function mtcopy_work_fn/ && match($0, /\[[0-9]+\]/) {
			n++; if (index(cpus, "," substr($0, RSTART + 1, RLENGTH - 2) + 0 ",")) near++ }
		END { print n + 0, near + 0 }' $TRACING/trace)
	echo "dst_node to node $dst (nearest CPUs: node $near): $2 of $1 works there"
	[ "$1" -ge 20 ] && [ $(($2 * 4)) -ge $(($1 * 3)) ] &&
		pass "dst_node to node $dst: works on the nearest node's CPUs" ||
		fail "dst_node to node $dst: works on the nearest node's CPUs" "$2 of $1"
done
echo all > $MIG/reasons
echo 64 > $TUN/mtcopy/min_batch_pages
echo "$chunk0" > $TUN/chunk_pages

select_migrator none
unload migrate_mtcopy || fail "cannot unload migrate_mtcopy"
finish
