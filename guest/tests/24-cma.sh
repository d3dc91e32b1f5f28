#!/bin/sh
# Contiguous allocation (reason "contig_range"): the test boot reserves a
# CMA area on node 2 (numa_cma=2:...), movable allocations on node 2 use it,
# and allocating the whole area through the CMA debugfs interface
# (cma_alloc -> alloc_contig_range) migrates every page out of it. Every
# byte is checked after, and none may be left in the area.
. /opt/mig/tests/lib.sh

cma_area || finish
for m in $(path_migrators dcbm); do
	path_begin contig_range $m || continue
	held_start -n 2 -s 128 -x $cma_lo-$cma_hi none
	echo $((cma_hi - cma_lo)) > $CMA/alloc || fail "$m: cma_alloc of the whole area failed"
	# checked while the area is still allocated: once it is free, new
	# allocations (a THP khugepaged collapses) may use it again
	held_finish; rc=$?
	echo $((cma_hi - cma_lo)) > $CMA/free
	path_end cma contig_range $m $rc multi
done
path_cleanup
finish
