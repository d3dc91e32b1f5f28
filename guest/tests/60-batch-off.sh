#!/bin/sh
# The batch path runs only with a migrator selected and the migration's
# reason enabled; otherwise it is patched out (a static key) and migration
# is the vanilla one: migrations stay exact and no batch is counted.
. /opt/mig/tests/lib.sh

no_batches() {	# what: migrations must be exact and batch nothing
	snap
	f0=$fails
	migbench -s 4 -k 4,2048 -r 1 -V 0,1,2 > /dev/null || fail "migration: $1"
	[ "$(delta batches)" -eq 0 ] || fail "batches counted: $1"
	[ "$(delta ineligible)" -eq 0 ] || fail "folios examined for a batch: $1"
	[ "$fails" -gt "$f0" ] || pass "exact, no batch, no folio examined: $1"
}

[ "$(active)" = none ] || fail "default migrator" "$(active)"
no_batches "default settings (migrator none, all reasons)"

select_migrator kernel
echo none > $MIG/reasons
no_batches "kernel migrator, reasons none"

# move_pages() migrates for MR_SYSCALL ("syscall_or_cpuset"); another
# reason, one that nothing migrates for meanwhile (compaction could:
# kcompactd's batches count too)
echo longterm_pin > $MIG/reasons
no_batches "kernel migrator, only longterm_pin enabled"
echo syscall_or_cpuset > $MIG/reasons
snap
migbench -s 4 -k 4 -r 1 -V 0,1 > /dev/null || fail "migration with syscall only"
[ "$(delta batches)" -gt 0 ] && pass "move_pages() batched with syscall_or_cpuset enabled" ||
	fail "move_pages() batched with syscall_or_cpuset enabled" "move_pages() did not batch with syscall_or_cpuset enabled"

echo all > $MIG/reasons
select_migrator none
no_batches "migrator none selected again"
finish
