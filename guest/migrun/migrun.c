// SPDX-License-Identifier: GPL-2.0
/*
 * migrun - run a command while its memory keeps moving between two nodes.
 *
 *   migrun [-n A,B] [-p MS] CMD [ARG...]
 *
 * CMD runs as a child. Until it exits, migrun calls migrate_pages(2) on it
 * and on each of its descendants, moving every page of node A to node B,
 * then (next round) every page of node B back to node A, and so on, with a
 * pause of MS milliseconds (default 10) after each round. Descendants are
 * found anew in /proc every round (the children files of each thread, or
 * every process's parent), so that the children a selftest forks (and the
 * programs they exec) are migrated too; migrun is a child subreaper, so
 * that one whose parent exited stays a descendant.
 *
 * At the end it prints one line on stderr, a TAP comment:
 *   # migrun: R rounds, C calls on P processes, N pages not migrated, ...
 * where "not migrated" is what migrate_pages() returned, summed, and the
 * pgmigrate_success/pgmigrate_fail deltas of /proc/vmstat are taken around
 * the calls only (system-wide counters: while nothing else migrates, the
 * pages these calls moved). Calls on a process that is exiting or gone
 * (ESRCH, or EINVAL once it has no mm) are counted apart, not as errors.
 *
 * CMD runs in a process group of its own, to which migrun forwards SIGINT,
 * SIGTERM and SIGHUP: a timeout stops the processes it forked as well.
 *
 * Exit status: the command's (128 + signal number if a signal killed it);
 * 125 if migrun cannot run it, 127 if it cannot be executed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "migutil.h"

#define MAX_PROCS	4096
#define MAX_SEEN	1024

static pid_t child;

/* to the command's process group: the children it forked too */
static void forward(int sig)
{
	if (child > 0)
		kill(-child, sig);
}

/* pgmigrate_success and pgmigrate_fail of /proc/vmstat */
static int read_vmstat(unsigned long *ok, unsigned long *failed)
{
	char line[128];
	unsigned long v;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	*ok = *failed = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pgmigrate_success %lu", &v) == 1)
			*ok = v;
		else if (sscanf(line, "pgmigrate_fail %lu", &v) == 1)
			*failed = v;
	}
	fclose(f);
	return 0;
}

/* The parent of @pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_text(path, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	/* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * Append to @out (holding @n) the children of every thread of @pid that are
 * not there yet, from /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN):
 * the new count, or -1 if the kernel has no such file.
 */
static int children_of(pid_t pid, pid_t *out, int n, int max)
{
	char path[64], buf[4096], *p, *end;
	struct dirent *d;
	DIR *dir;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return n;	/* gone */
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, tid);
		if (read_text(path, buf, sizeof(buf)) < 0) {
			if (errno == ENOENT && pid == getpid()) {
				closedir(dir);
				return -1;
			}
			continue;	/* the thread exited */
		}
		for (p = buf; n < max; p = end) {
			long c = strtol(p, &end, 10);

			if (end == p)
				break;
			for (i = 0; i < n && out[i] != c; i++)
				;
			if (i == n)
				out[n++] = c;
		}
	}
	closedir(dir);
	return n;
}

/*
 * The processes descended from @root (not @root itself) into @out: the
 * count. Without CONFIG_PROC_CHILDREN, by the parent of every process in
 * /proc (a few hundred small reads per round in a test guest).
 */
static int descendants(pid_t root, pid_t *out, int max)
{
	static pid_t pids[MAX_PROCS], ppids[MAX_PROCS];
	int n = 0, found, i, j, grew;
	struct dirent *d;
	DIR *dir;

	found = children_of(root, out, 0, max);
	if (found >= 0) {
		for (i = 0; i < found; i++)
			found = children_of(out[i], out, found, max);
		return found;
	}
	found = 0;
	dir = opendir("/proc");
	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < MAX_PROCS) {
		pid_t pid = atoi(d->d_name), ppid;

		if (pid <= 0 || (ppid = parent_of(pid)) < 0)
			continue;
		pids[n] = pid;
		ppids[n++] = ppid;
	}
	closedir(dir);
	/* add every process whose parent is root or already in: to a fixpoint */
	do {
		grew = 0;
		for (i = 0; i < n && found < max; i++) {
			int in = ppids[i] == root;

			if (!pids[i])
				continue;
			for (j = 0; !in && j < found; j++)
				in = ppids[i] == out[j];
			if (in) {
				out[found++] = pids[i];
				pids[i] = 0;
				grew = 1;
			}
		}
	} while (grew);
	return found;
}

static void usage(void)
{
	fprintf(stderr, "usage: migrun [-n A,B] [-p MS] CMD [ARG...]\n");
	exit(125);
}

int main(int argc, char **argv)
{
	unsigned long nodes[2] = { 0, 1 }, pause_ms = 10, ok0, fail0, ok1, fail1;
	unsigned long rounds = 0, calls = 0, gone = 0, errors = 0;
	unsigned long long not_migrated = 0, moved = 0, failed = 0;
	static pid_t procs[MAX_PROCS], seen[MAX_SEEN];
	int nseen = 0, status = 0, done = 0, first_errno = 0, opt, i, j;
	struct sigaction sa = { .sa_handler = forward };
	uint64_t start = now_ns();

	while ((opt = getopt(argc, argv, "+n:p:")) != -1) {
		switch (opt) {
		case 'n':
			if (parse_list(optarg, nodes, 2) != 2 || nodes[0] == nodes[1] ||
			    nodes[0] >= 64 || nodes[1] >= 64)
				usage();
			break;
		case 'p':
			if (parse_ulong(optarg, &pause_ms))
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	if (!node_has_memory(nodes[0]) || !node_has_memory(nodes[1])) {
		fprintf(stderr, "migrun: node %lu or %lu has no memory\n", nodes[0], nodes[1]);
		return 125;
	}
	/* orphans of the command's processes are reparented to us, and followed */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		perror("migrun: PR_SET_CHILD_SUBREAPER");
		return 125;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	child = fork();
	if (child < 0) {
		perror("migrun: fork");
		return 125;
	}
	if (!child) {
		setpgid(0, 0);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "migrun: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);	/* whichever of the two runs first */

	while (!done) {
		/* odd rounds move A -> B, even ones B -> A */
		unsigned long from = 1UL << nodes[rounds % 2];
		unsigned long to = 1UL << nodes[(rounds + 1) % 2];
		struct timespec ts = {
			.tv_sec = pause_ms / 1000,
			.tv_nsec = (pause_ms % 1000) * 1000000,
		};
		int n = descendants(getpid(), procs, MAX_PROCS);

		read_vmstat(&ok0, &fail0);
		for (i = 0; i < n; i++) {
			long ret = migrate_pages(procs[i], 8 * sizeof(unsigned long),
						 &from, &to);

			calls++;
			if (ret >= 0) {
				not_migrated += ret;
			} else if (errno == ESRCH || errno == EINVAL) {
				gone++;	/* exited, or a zombie (no mm) */
			} else {
				if (!errors++)
					first_errno = errno;
			}
			for (j = 0; j < nseen && seen[j] != procs[i]; j++)
				;
			if (j == nseen && nseen < MAX_SEEN)
				seen[nseen++] = procs[i];
		}
		if (!read_vmstat(&ok1, &fail1)) {
			moved += ok1 - ok0;
			failed += fail1 - fail0;
		}
		rounds++;

		/* reap what ended: the command, or orphans reparented to us */
		for (;;) {
			int st;
			pid_t pid = waitpid(-1, &st, WNOHANG);

			if (pid <= 0)
				break;
			if (pid == child) {
				status = st;
				done = 1;
			}
		}
		if (!done)
			nanosleep(&ts, NULL);
	}

	fprintf(stderr, "# migrun: %lu rounds (node %lu <-> %lu, %lu ms apart) in %.1f s, "
		"%lu calls on %d processes, %llu pages not migrated; "
		"during the calls pgmigrate_success +%llu, pgmigrate_fail +%llu; "
		"%lu calls on exiting processes",
		rounds, nodes[0], nodes[1], pause_ms, (now_ns() - start) / 1e9,
		calls, nseen, not_migrated, moved, failed, gone);
	if (errors)
		fprintf(stderr, ", %lu failed calls (first: %s)", errors, strerror(first_errno));
	fprintf(stderr, "\n");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
