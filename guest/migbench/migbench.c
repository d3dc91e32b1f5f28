// SPDX-License-Identifier: GPL-2.0
/*
 * migbench - time move_pages() of anonymous folios of a given size between
 * NUMA nodes, verifying data, placement and folio size after every move.
 *
 * Results go to stdout (text table or one JSON object per line), progress
 * and diagnostics to stderr.  Exit: 0 ok, 1 verification failure, 2 setup
 * failure.  Run "migbench -h" for the options.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/uio.h>
#include <unistd.h>

#include "migutil.h"

#define EXIT_VERIFY	1
#define EXIT_SETUP	2
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_SIZES	16
#define MAX_NODES	16
#define MAX_REPS	1000
#define MAX_THREADS	256
#define MAX_SIZE_MB	(1UL << 20)


struct opts {
	unsigned long size_mb;
	int from, to;
	unsigned long kbs[MAX_SIZES];
	int nr_kbs;
	int reps;
	unsigned long folios_per_call;	/* 0: not given */
	unsigned long pages_per_call;	/* 0: not given */
	int memcpy_threads;
	int memcpy_only;		/* -M: skip the move benchmark */
	int vnodes[MAX_NODES];
	int nr_vnodes;			/* > 0: verification mode */
	int all_pages;			/* pass every 4K address, not heads */
	int json;
	const char *engine;		/* -e: name prefix of copy-engine threads */
	int kept_stay;			/* -K: kept folios may stay behind */
	int touchers;			/* -R: threads holding page references */
	int corun_nice;			/* -B: co-runners' nice */
	int corun;			/* -B given */
	int corun_alone;		/* -A: CPU 0 left to the task */
};

/* How one size is moved: address step and addresses per call. */
struct move_plan {
	unsigned long kb;
	size_t len;
	size_t step;		/* bytes between passed addresses */
	unsigned long per_call;	/* addresses per move_pages() call */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: migbench [options]\n"
"  -s MiB    region size (default 64)\n"
"  -f NODE   source node (default 0)\n"
"  -t NODE   destination node (default 1)\n"
"  -k LIST   folio sizes in KiB, comma list or \"all\" = 4,16,64,256,2048\n"
"  -r N      repetitions (default 5); cycles around the nodes in -V mode\n"
"  -b N      folios per move_pages() call (default or 0: all in one call)\n"
"  -p N      base pages per move_pages() call (alternative to -b; whole\n"
"            folios only, unless -a)\n"
"  -a        pass every 4K page address (default: one address per folio)\n"
"  -m N      also measure memcpy bandwidth with 1..N threads, reading on\n"
"            the source node and writing on the destination node\n"
"  -M        memcpy measurement only (implies -m 1 unless -m is given)\n"
"  -V NODES  verification mode: move around the node cycle, e.g. 0,1,2\n"
"  -j        JSON output, one object per line (a \"rep\" object per rep,\n"
"            with the CPU time of this thread and of all other threads)\n"
"  -e NAME   count threads whose name starts with NAME (a software copy\n"
"            engine's, e.g. swdma) apart from the other helper threads\n"
"  -K        with -V: a hop may leave behind the folios the migrator kept\n"
"            in it (stats/kept: a device may still read their sources) and\n"
"            those the hop before left behind, no more; each page must be\n"
"            on the target node or where it was, every byte exact, and\n"
"            at most the kept folios split; the same batches, in one call\n"
"            per batch list\n"
"  -R N      N threads touch the region while it is moved: each keeps\n"
"            vmsplice()ing a random 64 KiB of it into a pipe and reading\n"
"            it back, holding references on its pages meanwhile, as\n"
"            page-cache readers do (moves of those folios fail with\n"
"            -EAGAIN and are retried)\n"
"  -B NICE   a CPU-bound co-runner process on every online CPU (pinned,\n"
"            at nice NICE, named corun) counts its loops: the rep's\n"
"            corun_ops are the loops of all of them during the move,\n"
"            corun_window_s the time they were counted in, corun_s their\n"
"            CPU time meanwhile (not in helpers_s)\n"
"  -A        with -B: no co-runner on CPU 0, where the migrating task is\n"
"            pinned: it shares its CPU with none of them\n"
"  -I        mark each timed move for the instruction-count plugin\n"
"            (personality(0xffffffff) before and after; docs/benchmark.md)\n"
"exit: 0 ok, 1 verification failure, 2 setup failure\n");
}

/* ---- option parsing ------------------------------------------------ */

static int parse_int(const char *s, int *out)
{
	unsigned long v;

	if (parse_ulong(s, &v) || v > 1000000)
		return -1;
	*out = v;
	return 0;
}

static int parse_sizes(const char *arg, struct opts *o)
{
	o->nr_kbs = parse_folio_sizes(arg, o->kbs, MAX_SIZES);
	return o->nr_kbs > 0 ? 0 : -1;
}

static int parse_vnodes(const char *arg, struct opts *o)
{
	unsigned long v[MAX_NODES];
	int i, n = parse_list(arg, v, MAX_NODES);

	if (n <= 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (v[i] > 1023)
			return -1;
		o->vnodes[i] = v[i];
	}
	o->nr_vnodes = n;
	return 0;
}

/* One option; non-zero if its argument is bad. */
static int parse_opt(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case 's':
		return parse_ulong(arg, &o->size_mb) || !o->size_mb ||
		       o->size_mb > MAX_SIZE_MB;
	case 'f':
		return parse_int(arg, &o->from);
	case 't':
		return parse_int(arg, &o->to);
	case 'k':
		return parse_sizes(arg, o);
	case 'r':
		return parse_int(arg, &o->reps) || !o->reps ||
		       o->reps > MAX_REPS;
	case 'b':
		return parse_ulong(arg, &o->folios_per_call);
	case 'p':
		return parse_ulong(arg, &o->pages_per_call);
	case 'a':
		o->all_pages = 1;
		return 0;
	case 'm':
		return parse_int(arg, &o->memcpy_threads) ||
		       !o->memcpy_threads || o->memcpy_threads > MAX_THREADS;
	case 'M':
		o->memcpy_only = 1;
		return 0;
	case 'V':
		return parse_vnodes(arg, o);
	case 'j':
		o->json = 1;
		return 0;
	case 'e':
		o->engine = arg;
		return !*arg;
	case 'K':
		o->kept_stay = 1;
		return 0;
	case 'I':
		move_range_marked = 1;
		return 0;
	case 'R':
		return parse_int(arg, &o->touchers) || o->touchers > MAX_THREADS;
	case 'A':
		o->corun_alone = 1;
		return 0;
	case 'B':
		o->corun = 1;
		return parse_int(arg, &o->corun_nice) || o->corun_nice > 19;
	case 'h':
		usage(stdout);
		exit(0);
	}
	return 1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "s:f:t:k:r:b:p:am:MV:je:KIR:B:Ah")) != -1) {
		if (parse_opt(c, optarg, o)) {
			if (c != '?')
				fprintf(stderr, "migbench: bad argument for -%c: '%s'\n",
					c, optarg);
			return -1;
		}
	}
	if (optind < argc || (o->folios_per_call && o->pages_per_call)) {
		fprintf(stderr, "migbench: stray arguments or both -b and -p\n");
		return -1;
	}
	if (o->memcpy_only && o->nr_vnodes) {
		fprintf(stderr, "migbench: -M and -V do not mix\n");
		return -1;
	}
	if (o->kept_stay && !o->nr_vnodes) {
		fprintf(stderr, "migbench: -K needs -V\n");
		return -1;
	}
	if (o->memcpy_only && !o->memcpy_threads)
		o->memcpy_threads = 1;
	return 0;
}

/* ---- setup ------------------------------------------------------------ */

static void on_signal(int sig)
{
	/* never leave the THP settings of the machine changed */
	thp_restore();
	_exit(128 + sig);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static int check_node(int node)
{
	if (node_has_memory(node))
		return 0;
	fprintf(stderr, "migbench: node %d does not exist or has no memory (see /sys/devices/system/node/has_memory)\n",
		node);
	return -1;
}

static int check_setup(const struct opts *o)
{
	int i, bad = 0;

	if (numa_available() < 0) {
		fprintf(stderr, "migbench: NUMA not available (kernel without CONFIG_NUMA?)\n");
		return -1;
	}
	if (o->nr_vnodes) {
		for (i = 0; i < o->nr_vnodes; i++)
			bad |= check_node(o->vnodes[i]);
	} else {
		bad |= check_node(o->from);
		bad |= check_node(o->to);
	}
	for (i = 0; i < o->nr_kbs && !o->memcpy_only; i++) {
		/* fail before any number is printed, not halfway through */
		if (mthp_select(o->kbs[i]))
			bad = 1;
		if (((o->size_mb << 20) % (o->kbs[i] * 1024))) {
			fprintf(stderr, "migbench: -s %lu MiB is not a multiple of %lu KiB folios\n",
				o->size_mb, o->kbs[i]);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

static void plan_moves(const struct opts *o, unsigned long kb,
		       struct move_plan *mp)
{
	unsigned long ppf = kb / MIG_PAGE_KB, step_pages, pages = 0, addrs;

	mp->kb = kb;
	mp->len = o->size_mb << 20;
	/*
	 * One address per folio lets the kernel queue all folios before it
	 * migrates them.  Listing every subpage (-a) makes the second subpage
	 * of each large folio fail isolation with -EBUSY, which flushes the
	 * queue: the folios are then migrated one by one.
	 */
	step_pages = o->all_pages ? 1 : ppf;
	mp->step = step_pages * MIG_PAGE_SIZE;
	addrs = mp->len / mp->step;
	if (o->folios_per_call)
		pages = o->folios_per_call * ppf;
	else if (o->pages_per_call)
		pages = o->pages_per_call;
	mp->per_call = pages ? pages / step_pages : addrs;
	if (!mp->per_call)
		mp->per_call = 1;
	if (mp->per_call > addrs)
		mp->per_call = addrs;
}

static unsigned long plan_pages_per_call(const struct move_plan *mp)
{
	return mp->per_call * (mp->step / MIG_PAGE_SIZE);
}

static double plan_folios_per_call(const struct move_plan *mp)
{
	return (double)plan_pages_per_call(mp) / (mp->kb / MIG_PAGE_KB);
}

/* Allocate on @node and make sure we got exactly what was asked for. */
static void *alloc_checked(const struct move_plan *mp, int node, int *err)
{
	void *buf;

	*err = EXIT_SETUP;
	if (mthp_select(mp->kb))
		return NULL;
	buf = region_alloc(mp->len, mp->kb, node);
	if (!buf)
		return NULL;
	if (check_folio_size(buf, mp->len, mp->kb)) {
		fprintf(stderr, "migbench: FATAL: requested %lu KiB folios did not materialize on node %d; refusing to report numbers for another size\n",
			mp->kb, node);
		goto fail;
	}
	if (region_pages_on_node(buf, mp->len, node)) {
		fprintf(stderr, "migbench: FATAL: region not allocated on node %d\n",
			node);
		goto fail;
	}
	*err = 0;
	return buf;
fail:
	region_free(buf, mp->len);
	return NULL;
}

/* ---- checks and moves ------------------------------------------------- */

static int verify_region(const struct move_plan *mp, void *buf, int node,
			 uint64_t seed, int check_size)
{
	if (verify_pattern(buf, mp->len, seed) >= 0)
		return -1;
	if (region_pages_on_node(buf, mp->len, node))
		return -1;
	if (check_size && check_folio_size(buf, mp->len, mp->kb)) {
		fprintf(stderr, "migbench: folio size changed by migration\n");
		return -1;
	}
	return 0;
}

/*
 * CPU time around a move: this process's user and system time, this
 * thread's own CPU clock (the time the scheduler saw it run),
 * and the time of every other thread: the copy engine's (-e) apart from the
 * rest (kworkers, mtcopy's workers, ...).
 */
struct cpu_times {
	double utime, stime;	/* this process (one thread while it moves) */
	double thread;		/* CLOCK_THREAD_CPUTIME_ID */
	double helpers, engine;	/* all other threads */
	double corun;		/* the co-runners (-B) */
	double corun_ops;	/* their loops during the move */
	double window;		/* seconds in which they were counted */
};

/*
 * Add up utime + stime of every thread of the system but this one, from
 * /proc/PID/task/TID/stat (clock ticks: 10 ms, the finest that every
 * kernel offers; the mean over reps is still unbiased).
 */
static void other_threads(const char *engine, struct cpu_times *t)
{
	char path[64], buf[512], *p;
	struct dirent *pe, *te;
	unsigned long ut, st;
	long self = syscall(SYS_gettid), tick = sysconf(_SC_CLK_TCK);
	DIR *proc = opendir("/proc"), *task;
	FILE *f;

	t->helpers = t->engine = t->corun = 0;
	while (proc && (pe = readdir(proc))) {
		if (pe->d_name[0] < '0' || pe->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/task", pe->d_name);
		task = opendir(path);
		while (task && (te = readdir(task))) {
			if (te->d_name[0] < '0' || te->d_name[0] > '9' ||
			    atol(te->d_name) == self)
				continue;
			snprintf(path, sizeof(path), "/proc/%.16s/task/%.16s/stat",
				 pe->d_name, te->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;	/* exited meanwhile */
			/* "tid (comm) state ..." : utime and stime are fields 14, 15 */
			p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
			fclose(f);
			if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
					 &ut, &st) != 2)
				continue;
			p = strchr(buf, '(') + 1;
			if (!strncmp(p, "corun)", 6))
				t->corun += (double)(ut + st) / tick;
			else if (engine && !strncmp(p, engine, strlen(engine)))
				t->engine += (double)(ut + st) / tick;
			else
				t->helpers += (double)(ut + st) / tick;
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

static void own_times(struct cpu_times *t)
{
	struct rusage ru;

	struct timespec ts;

	getrusage(RUSAGE_SELF, &ru);
	t->utime = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	t->stime = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t->thread = ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @sum += @after - @before */
static void cpu_add_delta(struct cpu_times *sum, const struct cpu_times *before,
			  const struct cpu_times *after)
{
	sum->utime += after->utime - before->utime;
	sum->stime += after->stime - before->stime;
	sum->thread += after->thread - before->thread;
	sum->helpers += after->helpers - before->helpers;
	sum->engine += after->engine - before->engine;
	sum->corun += after->corun - before->corun;
	sum->corun_ops += after->corun_ops - before->corun_ops;
	sum->window += after->window - before->window;
}

/* ---- co-runners: CPU-bound processes that count their work ----------- */

#define CORUN_LINE	64

static char *corun_counts;	/* a cache line per co-runner, shared */
static pid_t corun_pids[MAX_THREADS];
static int nr_corun;

/*
 * One process per online CPU (but CPU 0 if @alone), pinned to it, at nice
 * @nice, counting loops of a fixed amount of work in its own line of a
 * shared mapping. Started before any region is allocated, so that they
 * share none of it (a folio mapped twice is not moved by move_pages()).
 */
static int corun_start(int nice, int alone)
{
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), i;
	volatile uint64_t *n;
	unsigned int k;
	cpu_set_t set;
	pid_t pid;

	if (cpus > MAX_THREADS)
		return -1;
	corun_counts = mmap(NULL, (size_t)cpus * CORUN_LINE, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (corun_counts == MAP_FAILED)
		return -1;
	for (i = alone ? 1 : 0; i < cpus; i++) {
		pid = fork();
		if (pid < 0)
			return -1;
		if (pid) {
			corun_pids[nr_corun++] = pid;
			continue;
		}
		/* lines in start order, as corun_loops() reads them */
		n = (volatile uint64_t *)(corun_counts + nr_corun * CORUN_LINE);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "corun");
		CPU_ZERO(&set);
		CPU_SET(i, &set);
		if (sched_setaffinity(0, sizeof(set), &set) ||
		    setpriority(PRIO_PROCESS, 0, nice))
			_exit(1);
		for (;;) {
			for (k = 0; k < 1000; k++)
				__asm__ __volatile__("" ::: "memory");
			*n = *n + 1;
		}
	}
	return 0;
}

/* The co-runners' loops so far, all of them */
static double corun_loops(void)
{
	double sum = 0;
	int i;

	for (i = 0; i < nr_corun; i++)
		sum += *(volatile uint64_t *)(corun_counts + i * CORUN_LINE);
	return sum;
}

static void corun_stop(void)
{
	int i;

	for (i = 0; i < nr_corun; i++) {
		kill(corun_pids[i], SIGKILL);
		waitpid(corun_pids[i], NULL, 0);
	}
	nr_corun = 0;
}

/*
 * Move and verify; returns the move_pages() time in ns, 0 on failure.
 * With @cost, the CPU time of the move is added to it and the calls
 * issued are stored in @calls.
 */
static uint64_t move_verified(const struct opts *o, const struct move_plan *mp,
			      void *buf, int to, uint64_t seed, int check_size,
			      unsigned long *busy, struct cpu_times *cost,
			      unsigned long *calls)
{
	struct cpu_times before, after;
	struct move_stats st;
	long bad;

	/* this thread's times closest to the move: the scans are not its cost */
	if (cost) {
		other_threads(o->engine, &before);
		own_times(&before);
	}
	if (cost && nr_corun) {
		before.corun_ops = corun_loops();
		before.window = now_ns() / 1e9;
	}
	bad = move_range(buf, mp->len, mp->step, to, mp->per_call, &st);
	if (cost && nr_corun) {
		after.window = now_ns() / 1e9;
		after.corun_ops = corun_loops();
	}
	if (cost) {
		own_times(&after);
		other_threads(o->engine, &after);
		cpu_add_delta(cost, &before, &after);
		*calls = st.calls;
	}
	*busy += st.busy_moved;
	if (st.retried)
		fprintf(stderr, "  note: %lu KiB: %lu pages moved again after a transient status (-EBUSY, -ENOENT, -EAGAIN) or none\n",
			mp->kb, st.retried);
	if (bad) {
		fprintf(stderr, "migbench: %lu KiB: move to node %d failed (%ld pages left behind)\n",
			mp->kb, to, bad);
		return 0;
	}
	if (verify_region(mp, buf, to, seed, check_size)) {
		fprintf(stderr, "migbench: %lu KiB: verification after move to node %d FAILED\n",
			mp->kb, to);
		return 0;
	}
	return st.ns ? st.ns : 1;
}

static uint64_t seed_for(unsigned long kb, int rep)
{
	return kb << 32 | (unsigned int)rep;
}

static double gbps(size_t bytes, uint64_t ns)
{
	return (double)bytes / ((double)ns / 1e9) / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v and return its median. */
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- benchmark mode ---------------------------------------------------- */

static void print_move_header(const struct opts *o)
{
	if (o->json)
		return;
	printf("%8s %8s %4s %4s %12s %11s %4s %9s %9s %9s %8s\n",
	       "folio_kb", "total_mb", "from", "to", "folios/call",
	       "pages/call", "reps", "GB/s", "min", "max", "verified");
}

/* Time spent in the timed moves of all reps, from their throughputs. */
static double total_seconds(const struct move_plan *mp, const double *v, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += mp->len / (v[i] * 1e9);
	return s;
}

static void print_move(const struct opts *o, const struct move_plan *mp,
		       double *v, int ok, const struct cpu_times *cpu)
{
	double med = ok ? median(v, o->reps) : 0;

	if (!o->json) {
		if (ok)
			printf("%8lu %8lu %4d %4d %12g %11lu %4d %9.3f %9.3f %9.3f %8s\n",
			       mp->kb, o->size_mb, o->from, o->to,
			       plan_folios_per_call(mp), plan_pages_per_call(mp),
			       o->reps, med, v[0], v[o->reps - 1], "yes");
		else
			printf("%8lu %8lu %4d %4d %12g %11lu %4d %9s %9s %9s %8s\n",
			       mp->kb, o->size_mb, o->from, o->to,
			       plan_folios_per_call(mp), plan_pages_per_call(mp),
			       o->reps, "-", "-", "-", "FAILED");
	} else {
		printf("{\"type\":\"move\",\"folio_kb\":%lu,\"total_mb\":%lu,\"from\":%d,\"to\":%d,"
		       "\"folios_per_call\":%g,\"pages_per_call\":%lu,\"addr_step_kb\":%zu,\"reps\":%d,",
		       mp->kb, o->size_mb, o->from, o->to,
		       plan_folios_per_call(mp), plan_pages_per_call(mp),
		       mp->step / 1024, o->reps);
		if (ok)
			printf("\"gbps\":%.3f,\"gbps_min\":%.3f,\"gbps_max\":%.3f,\"move_s\":%.6f,"
			       "\"move_utime_s\":%.6f,\"move_stime_s\":%.6f,\"move_thread_s\":%.6f,\"verified\":true}\n",
			       med, v[0], v[o->reps - 1], total_seconds(mp, v, o->reps),
			       cpu->utime, cpu->stime, cpu->thread);
		else
			printf("\"gbps\":null,\"gbps_min\":null,\"gbps_max\":null,\"verified\":false}\n");
	}
	fflush(stdout);
}

/*
 * One rep: fresh folios on the source node, one timed move to the
 * destination, verified. Each rep migrates newly faulted folios because
 * Linux 6.12 splits an mTHP on its second migration: unmapping it PTE by
 * PTE marks it partially mapped, the mark moves to the destination folio,
 * and the next migrate_pages() splits it. Moving the same buffer back and
 * forth would time 4K folios from the second rep on.
 */
/* ---- touchers: page references that come and go ---------------------- */

#define TOUCH_WINDOW	(64UL << 10)

struct toucher {
	pthread_t tid;
	char *buf;
	size_t len;
	int pipe[2];
	unsigned int seed;
};

static int touchers_stop;

static void *toucher_main(void *arg)
{
	struct toucher *t = arg;
	static char sink[TOUCH_WINDOW];
	size_t windows = t->len / TOUCH_WINDOW;
	struct iovec iov;
	ssize_t n;

	while (windows && !__atomic_load_n(&touchers_stop, __ATOMIC_RELAXED)) {
		iov.iov_base = t->buf + (rand_r(&t->seed) % windows) * TOUCH_WINDOW;
		iov.iov_len = TOUCH_WINDOW;
		n = vmsplice(t->pipe[1], &iov, 1, 0);
		while (n > 0) {
			ssize_t r = read(t->pipe[0], sink, n);

			if (r <= 0)
				break;
			n -= r;
		}
	}
	return NULL;
}

/* Start @nt touchers of [@buf, @buf + @len); how many started. */
static int touchers_start(struct toucher *ts, int nt, void *buf, size_t len)
{
	int i;

	__atomic_store_n(&touchers_stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++) {
		ts[i] = (struct toucher){ .buf = buf, .len = len, .seed = i + 1 };
		if (pipe(ts[i].pipe))
			break;
		if (pthread_create(&ts[i].tid, NULL, toucher_main, &ts[i])) {
			close(ts[i].pipe[0]);
			close(ts[i].pipe[1]);
			break;
		}
	}
	return i;
}

static void touchers_join(struct toucher *ts, int nt)
{
	int i;

	__atomic_store_n(&touchers_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++) {
		pthread_join(ts[i].tid, NULL);
		close(ts[i].pipe[0]);
		close(ts[i].pipe[1]);
	}
}

static int bench_rep(const struct opts *o, const struct move_plan *mp,
		     int rep, double *out, unsigned long *busy, struct cpu_times *sum)
{
	struct toucher ts[MAX_THREADS];
	int nt;
	uint64_t seed = seed_for(mp->kb, rep), ns;
	struct cpu_times cost = { 0 };
	unsigned long calls = 0;
	void *buf;
	int err;

	buf = alloc_checked(mp, o->from, &err);
	if (!buf)
		return err;
	fill_pattern(buf, mp->len, seed);
	nt = touchers_start(ts, o->touchers, buf, mp->len);
	if (nt < o->touchers) {
		touchers_join(ts, nt);
		region_free(buf, mp->len);
		fprintf(stderr, "migbench: cannot start %d touchers\n", o->touchers);
		return EXIT_SETUP;
	}
	ns = move_verified(o, mp, buf, o->to, seed, 1, busy, &cost, &calls);
	touchers_join(ts, nt);
	region_free(buf, mp->len);
	if (!ns)
		return EXIT_VERIFY;
	*out = gbps(mp->len, ns);
	cpu_add_delta(sum, &(struct cpu_times){ 0 }, &cost);
	fprintf(stderr, "  %lu KiB rep %d: %.3f GB/s (%.3f ms)\n",
		mp->kb, rep, *out, ns / 1e6);
	if (o->json)
		printf("{\"type\":\"rep\",\"folio_kb\":%lu,\"total_mb\":%lu,\"folios_per_call\":%g,"
		       "\"rep\":%d,\"calls\":%lu,\"move_s\":%.6f,\"gbps\":%.4f,\"utime_s\":%.6f,"
		       "\"stime_s\":%.6f,\"thread_s\":%.6f,\"helpers_s\":%.3f,\"engine_s\":%.3f%s",
		       mp->kb, o->size_mb, plan_folios_per_call(mp), rep, calls,
		       ns / 1e9, *out, cost.utime, cost.stime, cost.thread,
		       cost.helpers, cost.engine, nr_corun ? "," : "}\n");
	if (o->json && nr_corun)
		printf("\"corun_nice\":%d,\"corun_ops\":%.0f,\"corun_window_s\":%.6f,\"corun_s\":%.3f}\n",
		       o->corun_nice, cost.corun_ops, cost.window, cost.corun);
	return 0;
}

static int bench_size(const struct opts *o, unsigned long kb)
{
	struct cpu_times cpu = { 0 };
	double v[MAX_REPS];
	struct move_plan mp;
	unsigned long busy = 0;
	int rep, err = 0;

	plan_moves(o, kb, &mp);
	fprintf(stderr, "migbench: %lu KiB folios, %lu MiB, node %d -> %d, %lu addresses per call\n",
		kb, o->size_mb, o->from, o->to, mp.per_call);
	for (rep = 0; rep < o->reps && !err; rep++)
		err = bench_rep(o, &mp, rep, &v[rep], &busy, &cpu);
	if (busy)
		fprintf(stderr, "  note: %lu pages reported -EBUSY but were moved with their folio\n",
			busy);
	if (err == EXIT_SETUP)
		return err;
	print_move(o, &mp, v, !err, &cpu);
	return err;
}

/* ---- verification mode ---------------------------------------------- */

#define KEPT_STAT	"/sys/kernel/mm/migration/stats/kept"

/* stats/kept: folios the migrators kept (a device may still use them) */
static long read_kept(void)
{
	unsigned long v;
	char buf[32];

	if (read_text(KEPT_STAT, buf, sizeof(buf)) <= 0) {
		fprintf(stderr, "migbench: -K: cannot read %s\n", KEPT_STAT);
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return parse_ulong(buf, &v) ? -1 : (long)v;
}

/* -K: what the hops of one folio size left behind */
struct left_behind {
	long prev;		/* folios the previous hop left behind */
	long kept;		/* folios kept (stats/kept) in all hops */
	long folios, pages;	/* left behind, added over the hops */
	long most;		/* most folios one hop left behind */
};

/*
 * -K: move every folio that is not on @to yet, in the lists that
 * move_pages() would hand migrate_pages() in the default mode (the first
 * hop's one address per folio: one list; then every page: a large folio's
 * second subpage, already taken, or a page on @to flushes the list), but
 * each list in a call of its own: a folio that fails makes move_pages()
 * give up on the rest of its call, which would then stay behind unseen by
 * the migrator. A migrator that kept a pair holds its source until the
 * device is done with it, and the move of that folio fails meanwhile: such
 * a folio may stay where it was, with its data. So may one that the
 * previous hop left behind, whose source may still be held. Check every
 * byte, that each page is on @to or where it was before the hop, and that
 * no more folios stayed behind than stats/kept counted in this hop plus
 * those the previous hop left behind; after the first hop, that folios
 * kept their size, or at most those kept were split. Returns the time
 * spent in move_pages() in ns, 0 on failure.
 */
static uint64_t move_kept(const struct move_plan *mp, void *buf, int to,
			  uint64_t seed, int first, struct left_behind *lb)
{
	unsigned long n = mp->len / MIG_PAGE_SIZE, i, m = 0, start = 0;
	uint64_t tail = BIT_ULL(KPF_COMPOUND_TAIL), *kpf;
	int *before = malloc(n * sizeof(*before));
	int *after = malloc(n * sizeof(*after));
	long kept0, kept1, folios = 0, pages = 0, strays = 0, split;
	void **addrs = malloc(n * sizeof(*addrs));
	uint64_t ns = 0, t, sum = 0;

	kpf = malloc(n * sizeof(*kpf));
	if (!before || !after || !addrs || !kpf) {
		fprintf(stderr, "migbench: out of memory\n");
		goto out;
	}
	if (region_nodes(buf, mp->len, before) || region_kpf(buf, mp->len, kpf))
		goto out;
	kept0 = read_kept();
	if (kept0 < 0)
		goto out;
	for (i = 0; i <= n; i++) {
		int on = i < n && before[i] == to, is_tail = i < n && (kpf[i] & tail);

		if (i < n && !on && !is_tail)
			addrs[m++] = (char *)buf + i * MIG_PAGE_SIZE;
		if ((i == n || on || (is_tail && !first)) && m > start) {
			if (move_addrs(addrs + start, m - start, to, &t) < 0)
				goto out;
			sum += t;
			start = m;
		}
	}
	kept1 = read_kept();
	if (kept1 < 0)
		goto out;
	if (verify_pattern(buf, mp->len, seed) >= 0) {
		fprintf(stderr, "migbench: %lu KiB: verification after move to node %d FAILED\n",
			mp->kb, to);
		goto out;
	}
	if (region_nodes(buf, mp->len, after) || region_kpf(buf, mp->len, kpf))
		goto out;
	for (i = 0; i < n; i++) {
		if (after[i] == to)
			continue;
		if (after[i] != before[i]) {
			if (!strays++)
				fprintf(stderr, "migbench: %lu KiB: page %lu on node %d, was on node %d, wanted %d\n",
					mp->kb, i, after[i], before[i], to);
			continue;
		}
		pages++;
		folios += !(kpf[i] & tail);
	}
	if (strays) {
		fprintf(stderr, "migbench: %lu KiB: %ld pages neither on node %d nor where they were\n",
			mp->kb, strays, to);
		goto out;
	}
	fprintf(stderr, "  %lu KiB: %ld folios kept, %ld folios (%ld pages) left behind, %ld left behind before\n",
		mp->kb, kept1 - kept0, folios, pages, lb->prev);
	if (folios > kept1 - kept0 + lb->prev) {
		fprintf(stderr, "migbench: %lu KiB: move to node %d left %ld folios (%ld pages) behind, but only %ld were kept and %ld left behind before\n",
			mp->kb, to, folios, pages, kept1 - kept0, lb->prev);
		goto out;
	}
	/*
	 * A large folio mapped by PTEs that the core unmapped and then failed
	 * to move (its source held) is split by the retry once it can be, as
	 * after any failed move (6.12: a partially mapped folio): no more
	 * than were kept.
	 */
	split = first ? count_not_folios(buf, mp->len, mp->kb) : 0;
	if (split < 0)
		goto out;
	if (split)
		fprintf(stderr, "  %lu KiB: %ld folios split (up to the %ld kept may be)\n",
			mp->kb, split, kept1 - kept0);
	if (split > kept1 - kept0) {
		fprintf(stderr, "migbench: folio size changed by migration\n");
		goto out;
	}
	lb->prev = folios;
	lb->kept += kept1 - kept0;
	lb->folios += folios;
	lb->pages += pages;
	lb->most = folios > lb->most ? folios : lb->most;
	ns = sum ? sum : 1;
out:
	free(before);
	free(after);
	free(addrs);
	free(kpf);
	return ns;
}

static void print_hop(const struct opts *o, unsigned long kb, int hop,
		      int from, int to, uint64_t ns, size_t len)
{
	if (o->json && ns)
		printf("{\"type\":\"verify\",\"folio_kb\":%lu,\"hop\":%d,\"from\":%d,\"to\":%d,\"ok\":true,\"gbps\":%.3f}\n",
		       kb, hop, from, to, gbps(len, ns));
	else if (o->json)
		printf("{\"type\":\"verify\",\"folio_kb\":%lu,\"hop\":%d,\"from\":%d,\"to\":%d,\"ok\":false,\"gbps\":null}\n",
		       kb, hop, from, to);
	else
		printf("verify %5lu KiB hop %3d: node %d -> %d %s\n",
		       kb, hop, from, to, ns ? "ok" : "FAILED");
	fflush(stdout);
}

static int verify_size(const struct opts *o, unsigned long kb)
{
	int n = o->nr_vnodes, hop, from, to, err;
	uint64_t seed, ns;
	unsigned long busy = 0;
	struct move_plan mp, every_page;
	struct left_behind lb = { 0 };
	void *buf;

	plan_moves(o, kb, &mp);
	every_page = mp;
	every_page.step = MIG_PAGE_SIZE;
	every_page.per_call = mp.len / MIG_PAGE_SIZE;
	buf = alloc_checked(&mp, o->vnodes[0], &err);
	if (!buf)
		return err;
	err = 0;
	for (hop = 0; hop < n * o->reps && !err; hop++) {
		from = o->vnodes[hop % n];
		to = o->vnodes[(hop + 1) % n];
		/*
		 * A new pattern for every hop: the destination of a copy that
		 * was skipped may hold the previous hop's data, as the folios
		 * that hop freed are often the ones allocated again.
		 */
		seed = seed_for(kb, 0xc0de + hop);
		fill_pattern(buf, mp.len, seed);
		/*
		 * After the first hop, folios may have been split (see
		 * bench_rep()): check their size only once and pass every
		 * page, or split subpages would stay behind.
		 */
		if (o->kept_stay)
			ns = move_kept(&mp, buf, to, seed, hop == 0, &lb);
		else
			ns = move_verified(o, hop ? &every_page : &mp, buf, to,
					   seed, hop == 0, &busy, NULL, NULL);
		print_hop(o, kb, hop, from, to, ns, mp.len);
		err = ns ? 0 : EXIT_VERIFY;
	}
	/* what -K allowed: for the test to compare and show */
	if (o->kept_stay && !o->json)
		printf("kept %lu KiB: %d hops, %ld folios kept, %ld folios (%ld pages) left behind, at most %ld in a hop\n",
		       kb, hop, lb.kept, lb.folios, lb.pages, lb.most);
	else if (o->kept_stay)
		printf("{\"type\":\"kept\",\"folio_kb\":%lu,\"hops\":%d,\"kept\":%ld,\"left_folios\":%ld,\"left_pages\":%ld,\"most\":%ld}\n",
		       kb, hop, lb.kept, lb.folios, lb.pages, lb.most);
	region_free(buf, mp.len);
	return err;
}

/* ---- memcpy baseline --------------------------------------------------- */

struct copy_job {
	char *dst;
	const char *src;
	size_t len;
	int cpu;		/* -1: not pinned */
	pthread_barrier_t *start;
	uint64_t t_start, t_end;
};

static void *copy_thread(void *arg)
{
	struct copy_job *j = arg;
	cpu_set_t set;

	if (j->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(j->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	pthread_barrier_wait(j->start);
	j->t_start = now_ns();
	memcpy(j->dst, j->src, j->len);
	j->t_end = now_ns();
	return NULL;
}

/* Wall time of @nt threads each copying its slice of @len bytes. */
static uint64_t copy_once(char *dst, const char *src, size_t len, int nt,
			  const int *cpus, int ncpus)
{
	struct copy_job jobs[nt];
	pthread_t tids[nt];
	pthread_barrier_t start;
	size_t slice = len / nt;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int i;

	pthread_barrier_init(&start, NULL, nt + 1);
	for (i = 0; i < nt; i++) {
		jobs[i] = (struct copy_job) {
			.dst = dst + i * slice, .src = src + i * slice,
			.len = i == nt - 1 ? len - i * slice : slice,
			.cpu = ncpus ? cpus[i % ncpus] : -1, .start = &start,
		};
		if (pthread_create(&tids[i], NULL, copy_thread, &jobs[i])) {
			fprintf(stderr, "migbench: pthread_create failed\n");
			exit(EXIT_SETUP);
		}
	}
	pthread_barrier_wait(&start);
	/*
	 * Each thread stamps its own start and end: with more threads than
	 * CPUs the main thread may not run again until the copies are done.
	 */
	for (i = 0; i < nt; i++) {
		pthread_join(tids[i], NULL);
		t0 = jobs[i].t_start < t0 ? jobs[i].t_start : t0;
		t1 = jobs[i].t_end > t1 ? jobs[i].t_end : t1;
	}
	pthread_barrier_destroy(&start);
	return t1 > t0 ? t1 - t0 : 1;
}

/*
 * CPUs for the copy threads: those of the source node first, then the
 * others, so that N threads run on N CPUs where there are N.
 */
static int copy_cpus(int node, int *cpus, int max)
{
	struct bitmask *mask = numa_allocate_cpumask();
	int n = 0, i, cpu;

	/* -1: @node itself first */
	for (i = -1; i <= numa_max_node(); i++) {
		if (i == node || numa_node_to_cpus(i < 0 ? node : i, mask))
			continue;
		for (cpu = 0; cpu < (int)mask->size && n < max; cpu++)
			if (numa_bitmask_isbitset(mask, cpu))
				cpus[n++] = cpu;
	}
	numa_free_cpumask(mask);
	return n;
}

/*
 * Under QEMU TCG the softmmu TLB is direct-mapped and, in the state a guest
 * usually leaves it in, covers no more than 2 MiB: a copy between two buffers
 * at the same offset modulo 2 MiB (as every 2M folio migration is) makes each
 * source and destination access evict the other's entry.  The bound is
 * therefore measured twice, with the destination at the same offset
 * ("aliased", what a 2M folio copy gets) and 64 KiB further (what copies
 * of small folios between unrelated pages mostly get; less than that still
 * aliases with glibc's large memcpy, which streams four pages at once).
 */
static int memcpy_bench(const struct opts *o)
{
	static const size_t dst_offsets[] = { 0, 64 * 1024 };
	size_t len = o->size_mb << 20, pad = 2048 * 1024, off;
	unsigned long kb = MIG_PAGE_KB;
	int cpus[1024], ncpus, nt, rep, i;
	char *src, *dst;
	double v[MAX_REPS];

	/* 2M pages keep TLB misses out, as for the kernel's direct map */
	if (mthp_available(2048) && !(len % (2048 * 1024)))
		kb = 2048;
	if (mthp_select(kb))
		return EXIT_SETUP;
	/* same traffic as migration: read on the source, write the target */
	src = region_alloc(len, kb, o->from);
	dst = region_alloc(len + pad, kb, o->to);
	if (!src || !dst)
		return EXIT_SETUP;
	fill_pattern(src, len, 1);
	ncpus = copy_cpus(o->from, cpus, 1024);
	for (i = 0; i < (int)ARRAY_SIZE(dst_offsets); i++) {
		off = dst_offsets[i];
		for (nt = 1; nt <= o->memcpy_threads; nt++) {
			copy_once(dst + off, src, len, nt, cpus, ncpus);	/* warm up */
			for (rep = 0; rep < o->reps; rep++)
				v[rep] = gbps(len, copy_once(dst + off, src, len, nt,
							     cpus, ncpus));
			if (o->json)
				printf("{\"type\":\"memcpy\",\"threads\":%d,\"total_mb\":%lu,\"from\":%d,\"to\":%d,\"folio_kb\":%lu,\"dst_offset\":%zu,\"reps\":%d,\"gbps\":%.3f}\n",
				       nt, o->size_mb, o->from, o->to, kb, off,
				       o->reps, median(v, o->reps));
			else
				printf("memcpy %2d thread(s) %lu MiB node %d -> %d, dst offset %zu: %9.3f GB/s (median of %d)\n",
				       nt, o->size_mb, o->from, o->to, off,
				       median(v, o->reps), o->reps);
			fflush(stdout);
		}
	}
	region_free(src, len);
	region_free(dst, len + pad);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

/*
 * The process's CPU time (its cgroup's usage should match it: test 92).
 */
static void print_rusage(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("{\"type\":\"rusage\",\"utime_s\":%ld.%06ld,\"stime_s\":%ld.%06ld}\n",
	       (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
	       (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.size_mb = 64, .from = 0, .to = 1, .reps = 5,
	};
	int i, err, ret = 0;

	parse_sizes("all", &o);
	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return EXIT_SETUP;
	}
	install_signals();
	if (check_setup(&o))
		return EXIT_SETUP;
	if (o.corun_alone) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(0, &set);
		if (!o.corun || sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "migbench: -A needs -B and CPU 0\n");
			return EXIT_SETUP;
		}
	}
	if (o.corun && corun_start(o.corun_nice, o.corun_alone)) {
		corun_stop();
		fprintf(stderr, "migbench: cannot start the co-runners\n");
		return EXIT_SETUP;
	}

	if (!o.nr_vnodes && !o.memcpy_only)
		print_move_header(&o);
	for (i = 0; i < o.nr_kbs && !o.memcpy_only; i++) {
		err = o.nr_vnodes ? verify_size(&o, o.kbs[i]) :
				    bench_size(&o, o.kbs[i]);
		if (err == EXIT_SETUP) {
			ret = EXIT_SETUP;
			goto out;
		}
		if (err)
			ret = err;
	}
	if (!o.nr_vnodes && o.memcpy_threads) {
		err = memcpy_bench(&o);
		if (err)
			ret = err;
	}
out:
	corun_stop();
	if (o.json)
		print_rusage();
	thp_restore();
	check_folio_close();
	if (ret)
		fprintf(stderr, "migbench: %s\n", ret == EXIT_SETUP ?
			"SETUP FAILURE" : "VERIFICATION FAILURE");
	return ret;
}
