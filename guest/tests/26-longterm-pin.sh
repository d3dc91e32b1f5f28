#!/bin/sh
# Long-term pins (reason "longterm_pin"): pages in the CMA area of node 2
# may not stay pinned there, so pin_user_pages(FOLL_LONGTERM) (through the
# gup_test debugfs interface) migrates them out before pinning. Every byte
# is checked after, and none may be left in the area.
. /opt/mig/tests/lib.sh

cma_area || finish
for m in $(path_migrators "kernel mtcopy dcbm"); do
	path_begin longterm_pin $m || continue
	pathcheck -n 2 -s 64 -x $cma_lo-$cma_hi pin; rc=$?
	path_end longterm-pin longterm_pin $m $rc multi
done
path_cleanup
finish
