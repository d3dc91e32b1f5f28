#!/bin/sh
# hugetlb pages migrate with their contents and leave the pool as it was.
#
# Node 0 gets four 2 MiB hugetlb pages, nodes 1 and 2 none, so a move to
# node 1 or 2 has to allocate a temporary huge page from the buddy allocator
# (alloc_migrate_hugetlb_folio(): HPG_temporary, 4, in folio->private); the
# new page then replaces the old one in the pool, and the old one goes back
# to the buddy allocator. migcheck maps 8 MiB of private and of shared
# anonymous hugetlb memory on node 0, fills it with a pattern unique to
# every word of every page (and to this run), and moves it 0 -> 1 -> 0 ->
# 2 -> 0 with move_pages, migrate_pages and mbind. After every hop it checks
# every byte, the node of every page, the folio size and the pool counters
# (total, free, reserved, surplus: unchanged), and after the munmap the pool
# must be as it was before the mmap. Its soft_offline cases migrate every
# page once within node 0 with madvise(MADV_SOFT_OFFLINE), reason
# memory_failure, again onto temporary pages.
#
# This runs under the default settings and the kernel migrator with all
# reasons: hugetlb folios do not take the batch copy (migrate_hugetlbs()),
# but their move must not depend on whether the batch path is on. Other
# migrators are not run: with only hugetlb memory migrating they are given
# no folio at all.
. /opt/mig/tests/lib.sh

MC="migcheck -m hugetlb,hugetlb_shared -k 2048 -s 8 -n 0,1,0,2,0"
MC="$MC -c move_pages,migrate_pages,mbind,soft_offline"
HP=hugepages/hugepages-2048kB
NODE=/sys/devices/system/node

node_pool() { cat $NODE/node"$1"/$HP/"$2"; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# set_pools N0 N1 N2: per-node pool sizes; false if not all of them took
set_pools() {
	echo "$2" > $NODE/node1/$HP/nr_hugepages
	echo "$3" > $NODE/node2/$HP/nr_hugepages
	echo "$1" > $NODE/node0/$HP/nr_hugepages
	[ "$(node_pool 0 nr_hugepages)" -eq "$1" ] &&
	[ "$(node_pool 1 nr_hugepages)" -eq "$2" ] &&
	[ "$(node_pool 2 nr_hugepages)" -eq "$3" ]
}
show_pools() {	# WHEN
	echo "$1: HugePages_Total $(meminfo HugePages_Total)" \
	     "Free $(meminfo HugePages_Free) Rsvd $(meminfo HugePages_Rsvd)" \
	     "Surp $(meminfo HugePages_Surp); nr/free/surplus:" \
	     "$(for n in 0 1 2; do
		printf ' node%s %s/%s/%s' $n "$(node_pool $n nr_hugepages)" \
			"$(node_pool $n free_hugepages)" "$(node_pool $n surplus_hugepages)"
	     done)"
}

# run SETTING: the hugetlb cases under the current migration settings
run() {
	if ! set_pools 4 0 0; then
		show_pools "$1"
		fail "$1: cannot set the hugetlb pools of nodes 0, 1, 2 to 4, 0, 0"
		return
	fi
	show_pools "$1, before"
	[ -d $MIG ] && snap
	$MC > /tmp/mc.log 2>&1
	rc=$?
	cat /tmp/mc.log
	[ $rc -eq 0 ] && pass "$1: bytes, nodes, folio sizes and pools exact after every hop" ||
		fail "$1: bytes, nodes, folio sizes and pools exact after every hop" "$1: migcheck exit $rc"
	! grep -q '^skip' /tmp/mc.log || fail "$1: migcheck skipped a case"
	[ -d $MIG ] && echo "$1: batch path: batches +$(delta batches)" \
		"folios +$(delta folios) declined +$(delta fallback_declined)" \
		"error +$(delta fallback_error)"
	show_pools "$1, after"
	[ "$(meminfo HugePages_Total)" -eq 4 ] && [ "$(meminfo HugePages_Surp)" -eq 0 ] ||
		fail "$1: HugePages_Total $(meminfo HugePages_Total), Surp $(meminfo HugePages_Surp) after migcheck set the pool back, want 4 and 0"
}

[ -d $NODE/node2/$HP ] || { echo "no 2 MiB hugetlb pages or no node 2: skip"; exit 4; }
echo 1 > /proc/sys/vm/enable_soft_offline
if ! set_pools 4 0 0; then
	show_pools "pools"
	set_pools 0 0 0
	echo "node 0 cannot get four 2 MiB hugetlb pages: skip"
	exit 4
fi

if [ ! -d $MIG ]; then
	# a kernel without the series: only the default settings
	run default
	set_pools 0 0 0
	finish
fi
orig_migrator=$(active)
orig_reasons=$(cat $MIG/reasons)

run default

select_migrator kernel && echo all > $MIG/reasons ||
	fail "cannot select the kernel migrator with all reasons"
run kernel

# Upstream selftests/mm/hugetlb-soft-offline, batch path on: it soft-offlines
# one page of a 2-page hugetlbfs memfd (MAP_SHARED) while the pool has free
# pages, so the page migrates (reason memory_failure) into a free pool page
# through hugetlbfs_migrate_folio(), which always copies, and the old page
# is dissolved (nr_hugepages - 1); then the same with enable_soft_offline=0
# (EOPNOTSUPP, pool unchanged). It never looks at the data and takes no
# temporary page: it cannot see a move that skips the copy, the
# soft_offline cases of migcheck above can.
select_migrator kernel && echo all > $MIG/reasons
set_pools 8 0 0 || fail "cannot set the pool of node 0 to 8 pages for hugetlb-soft-offline"
if command -v hugetlb-soft-offline > /dev/null; then
	{ hugetlb-soft-offline 2>&1; echo $? > /tmp/hso.rc; } | tee /tmp/hso.log
	[ "$(cat /tmp/hso.rc)" -eq 0 ] || fail "hugetlb-soft-offline exit $(cat /tmp/hso.rc)"
	grep -q '^# Totals: pass:2 ' /tmp/hso.log || fail "hugetlb-soft-offline: not both cases passed"
else
	fail "hugetlb-soft-offline is not in the initramfs"
fi
echo 1 > /proc/sys/vm/enable_soft_offline
echo "HardwareCorrupted (soft-offlined frames): $(meminfo HardwareCorrupted) kB"

select_migrator "$orig_migrator" || fail "cannot select $orig_migrator again"
if [ "$orig_reasons" = none ]; then
	echo none > $MIG/reasons
else
	echo "$orig_reasons" | tr ' ' ',' > $MIG/reasons
fi || fail "cannot restore the reasons '$orig_reasons'"
set_pools 0 0 0 || fail "cannot empty the hugetlb pools"
show_pools "end"
finish
