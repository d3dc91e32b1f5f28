// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduling policies for the tests (busybox has no chrt):
 *   rthog CPU SECS           a SCHED_FIFO (priority 50) busy loop on CPU for
 *                            SECS seconds: nothing of lower priority runs
 *                            there meanwhile, with RT throttling and the
 *                            fair server off
 *   rthog -r PRIO CMD ARG..  run CMD with SCHED_FIFO priority PRIO
 *   rthog -i CMD ARG..       run CMD with SCHED_IDLE
 *   rthog -p PRIO PID..      give the threads PID.. SCHED_FIFO priority PRIO
 *                            (make bench's busy experiment: swdma's channel
 *                            threads as an engine that is never starved)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "migutil.h"

#define HOG_PRIO	50

static int set_policy(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (sched_setscheduler(0, policy, &sp)) {
		perror("rthog: sched_setscheduler");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t end;
	cpu_set_t set;

	if (argc >= 4 && !strcmp(argv[1], "-r")) {
		if (set_policy(SCHED_FIFO, atoi(argv[2])))
			return 2;
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		return 2;
	}
	if (argc >= 4 && !strcmp(argv[1], "-p")) {
		struct sched_param sp = { .sched_priority = atoi(argv[2]) };
		int i, ret = 0;

		for (i = 3; i < argc; i++) {
			if (sched_setscheduler(atoi(argv[i]), SCHED_FIFO, &sp)) {
				perror("rthog: sched_setscheduler");
				ret = 2;
			}
		}
		return ret;
	}
	if (argc >= 3 && !strcmp(argv[1], "-i")) {
		if (set_policy(SCHED_IDLE, 0))
			return 2;
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		return 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: rthog CPU SECS | rthog -r PRIO CMD [ARG...] | rthog -i CMD [ARG...] | rthog -p PRIO PID...\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("rthog: sched_setaffinity");
		return 2;
	}
	if (set_policy(SCHED_FIFO, HOG_PRIO))
		return 2;
	end = now_ns() + strtoull(argv[2], NULL, 0) * 1000000000ULL;
	while (now_ns() < end)
		;
	return 0;
}
