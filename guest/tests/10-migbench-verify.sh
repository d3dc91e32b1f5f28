#!/bin/sh
# Every folio size, moved around nodes 0 -> 1 -> 2 -> 0 with move_pages():
# every byte, the node of every page and the folio size checked after each hop.
. /opt/mig/tests/lib.sh

migbench -s 8 -k all -V 0,1,2 &&
	pass "every folio size: bytes, nodes and folio sizes exact after every hop" ||
	fail "every folio size: bytes, nodes and folio sizes exact after every hop" "migbench -V: a hop was not exact"
finish
