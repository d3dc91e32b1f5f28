#!/bin/sh
# The integrity matrix of 15 with the batch path off (migrator none, the
# default): every folio size x mapping kind x call, around nodes 0 -> 1 ->
# 2 -> 0, as the unpatched kernel migrates.
. /opt/mig/tests/lib.sh

select_migrator none
snap
migcheck -q -k 4,2048 && pass "matrix with the batch path off" ||
	fail "matrix with the batch path off"
[ "$(delta batches)" -eq 0 ] && pass "no batch counted with the batch path off" ||
	fail "no batch counted with the batch path off" "batches counted with the batch path off"
finish
