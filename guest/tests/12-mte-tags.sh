#!/bin/sh
# arm64 MTE: a process's memory tags move with its pages under every
# migrator. mtecheck maps PROT_MTE memory, gives every 16-byte granule a
# tag (STG) and writes through the tagged pointers, moves it with
# move_pages() around nodes 0 -> 1 -> 2 -> 0, and after every hop reads
# every granule's tag back (LDG) and every byte through its tagged pointer
# with synchronous tag checks (PR_MTE_TCF_SYNC): a lost tag is a tag-check
# fault. The kernel migrator and mtcopy copy with copy_highpage(), which
# copies the tags; dcbm's engine copies bytes only, so the core must keep
# tagged folios out of its batches (the metadata rule of the series): the
# CPU copies them, they count as ineligible. Under QEMU < 8.0 (Debian 12's
# 7.2), which keeps one tag per page, every granule of a page gets the
# page's tag (mtecheck finds out and says so). Base pages and an mTHP size
# (and on the 4K kernel the PMD size), under none, kernel, mtcopy and dcbm.
# Failed on the series without the metadata rule, under dcbm only (every
# size: "N granules lost their tags", "N pages took a tag-check fault on
# a tagged read ... SEGV_MTESERR").
. /opt/mig/tests/lib.sh

grep -qw mte /proc/cpuinfo || { echo "no MTE here: arm64 with CONFIG_ARM64_MTE on a CPU that has it"; exit 4; }
sizes=$BASE_KB,$MTHP_KB,2048
echo "base pages of $BASE_KB KiB; folio sizes $sizes KiB"

modprobe migrate_mtcopy || { echo "cannot load migrate_mtcopy"; exit 1; }
dcbm_load 2
echo 1 > $TUN/mtcopy/min_batch_pages	# mtcopy copies batches of any size
echo 0 > $TUN/dcbm/min_batch_pages
echo syscall_or_cpuset > $MIG/reasons	# only move_pages() batches

for m in none kernel mtcopy dcbm; do
	select_migrator $m || { fail "cannot select $m"; continue; }
	snap
	c0=$(swdma_copies)
	if mtecheck -s 2048 -k $sizes > /tmp/mte.log 2>&1; then
		pass "$m: tags and bytes exact after every hop"
	else
		fail "$m: tags or bytes lost"
	fi
	sed 's/^/  /' /tmp/mte.log
	copies=$(( $(swdma_copies) - c0 ))
	echo "$m: batches +$(delta batches) folios +$(delta folios) ineligible +$(delta ineligible) swdma descriptors +$copies"
	case $m in
	none)
		[ "$(delta batches)" -eq 0 ] || fail "none: no batch" "$(delta batches) batches" ;;
	kernel|mtcopy)
		# they copy tags: every tagged folio is theirs
		[ "$(delta folios)" -gt 0 ] || fail "$m: copied no tagged folio" ;;
	dcbm)
		# every folio of mtecheck is tagged: none may reach the engine
		[ "$(delta folios)" -eq 0 ] && [ "$copies" -eq 0 ] ||
			fail "dcbm: copied $(delta folios) tagged folios ($copies descriptors)"
		[ "$(delta ineligible)" -gt 0 ] || fail "dcbm: no tagged folio counted ineligible" ;;
	esac
done

# The positive control of the dcbm case: untagged memory does reach the
# engine (the same sizes, migcheck's private anonymous memory).
snap
c0=$(swdma_copies)
migcheck -q -k $sizes -m private -c move_pages > /tmp/mc.log 2>&1 ||
	{ cat /tmp/mc.log; fail "dcbm: untagged memory not exact"; }
copies=$(( $(swdma_copies) - c0 ))
echo "dcbm, untagged: folios +$(delta folios) swdma descriptors +$copies"
[ "$(delta folios)" -gt 0 ] && [ "$copies" -gt 0 ] ||
	fail "dcbm: copied no untagged folio"

select_migrator none
echo all > $MIG/reasons
echo 64 > $TUN/mtcopy/min_batch_pages
for mod in dcbm swdma migrate_mtcopy; do unload $mod || fail "cannot unload $mod"; done
finish
