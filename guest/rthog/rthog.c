// SPDX-License-Identifier: GPL-2.0
/*
 * rthog CPU SECS - a SCHED_FIFO busy loop on CPU for SECS seconds: nothing
 * else of lower priority runs there meanwhile (with RT throttling off,
 * /proc/sys/kernel/sched_rt_runtime_us = -1). busybox has no chrt.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "migutil.h"

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	uint64_t end;
	cpu_set_t set;

	if (argc != 3) {
		fprintf(stderr, "usage: rthog CPU SECS\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("rthog");
		return 2;
	}
	end = now_ns() + strtoull(argv[2], NULL, 0) * 1000000000ULL;
	while (now_ns() < end)
		;
	return 0;
}
