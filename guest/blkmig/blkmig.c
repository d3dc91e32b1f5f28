// SPDX-License-Identifier: GPL-2.0
/*
 * blkmig - page migration of block-device page cache under writers.
 *
 * The folios of a block device's page cache carry buffer heads, and are
 * migrated by buffer_migrate_folio_norefs(): it locks the buffers and
 * checks that nobody holds one before it moves the folio.  Whoever finds a
 * buffer through the buffer-head LRU or __find_get_block() (file systems,
 * for their metadata) may change its contents without the folio lock, so
 * the contents must be copied after that check, not before.
 *
 * In every mode a mover thread maps the device read-only (MAP_SHARED) and,
 * over and over while the writers run, reads every page of it and migrates
 * some of them.  In raw mode it move_pages() all of them to the next node
 * of the route.  In fs mode each round takes one hot page, one that the
 * kernel itself has looked up (referenced or active in /proc/kpageflags:
 * __find_get_block() marks pages accessed, reads through the mapping do
 * not), i.e. file-system metadata, the one whose contents changed most
 * often in the last rounds first, with -c pages of anonymous memory ahead
 * of it (which the file system never waits for, so that it shares their
 * batches and waits between its copy and its move while they move): it
 * move_pages() them to a node of the route, then to the last node, and
 * compacts that node (see fs_round()).
 *
 * Why compaction: move_pages() empties the per-CPU buffer-head LRUs and
 * keeps them off (lru_cache_disable()), and a lookup that misses them
 * takes the folio lock, which migration holds from unmap to move; so under
 * move_pages() the file system reaches the buffers of a folio in flight
 * only through references taken before, which fail the move.  Compaction
 * leaves the LRUs on once it has drained them: a lookup that hits the LRU
 * changes a buffer without the folio lock.  The writers of fs mode run
 * each on its own CPU, the mover on another: the LRU is per CPU.
 *
 *   raw     threads pwrite() (buffered) patterns to their own regions of
 *           the device and read them back now and then; at the end the
 *           device is synced, the caches dropped and every byte checked,
 *           and one more move with nobody writing must move every page
 *   fs      the device holds a mounted file system at -d DIR; threads
 *           create, write, fsync and unlink small files in several
 *           directories (bitmaps, inode tables, directory blocks, journal
 *           all change in the device's page cache); the files that must
 *           survive are listed in the manifest -l FILE
 *   verify  after a remount: every file of the manifest has its contents,
 *           and no other file is in the writers' directories
 *   move    only the mover, as in raw mode, for -t seconds: someone else
 *           changes the device (the bh_holder test module) and checks it
 *
 * A file's size and contents follow from its name.  One line per check on
 * stdout ("ok", "FAIL"), diagnostics on stderr.  Exit: 0 passed, 1 a check
 * failed, 2 setup problem, 4 skip.  Run "blkmig -h" for the options.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "migutil.h"

#define MAX_ROUTE	16
#define MAX_THREADS	32
#define MAX_DIRS	64
#define SECTOR		512UL
#define MAX_WRITE	32		/* sectors per raw write */
#define MAX_FILE	16384		/* bytes per file */
#define NAME_LEN	64
#define MIN_ROUNDS	2		/* mover rounds while the writers run */
#define NR_ERRNOS	8		/* move_pages() statuses counted by name */
#define HOLE_PAGES	1024		/* fs: see fs_round() */

enum mode { M_RAW, M_FS, M_VERIFY, M_MOVE };

struct opts {
	enum mode mode;
	const char *dev;
	const char *dir;
	const char *manifest;
	unsigned long secs;
	int threads;
	int route[MAX_ROUTE];
	int nr_route;
	unsigned long bsize;		/* raw: block size to set, 0 = keep */
	unsigned long size_mb;		/* use (raw), map (fs) this much; 0 all */
	unsigned long cold;		/* fs: anonymous pages moved with the hot */
	unsigned long ballast;		/* fs: pages, see fs_round() */
	unsigned long files;		/* fs: live files per thread */
	unsigned long dirs;		/* fs: directories per thread */
	unsigned long fsync_every;	/* fs: fsync every N-th file, 0 never */
	int verbose;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: blkmig raw    -D DEV [-t SECS] [-T N] [-n NODES] [-b BSIZE] [-s MiB]\n"
"       blkmig fs     -D DEV -d DIR -l MANIFEST [-t SECS] [-T N] [-n NODES]\n"
"                     [-s MiB] [-c PAGES] [-B PAGES] [-f FILES] [-r DIRS]\n"
"                     [-F N] [-v]\n"
"       blkmig verify -d DIR -l MANIFEST\n"
"       blkmig move   -D DEV [-t SECS] [-n NODES] [-s MiB]\n"
"  -D DEV    block device: mapped read-only, its pages migrated;\n"
"            raw mode also writes to it (its contents are lost)\n"
"  -d DIR    fs: where the writers work (a directory of the file system\n"
"            on DEV); verify: the same directory after a remount\n"
"  -l FILE   fs: write the list of files that must survive; verify: read it\n"
"  -t SECS   how long the writers run (default 20); the mover makes at\n"
"            least %d rounds meanwhile (the writers go on until then)\n"
"  -T N      writer threads (default 4)\n"
"  -n NODES  nodes the mover cycles through (default 0,1,2); fs: it\n"
"            compacts the last one\n"
"  -b BSIZE  raw: block size of the device's page cache, i.e. buffer heads\n"
"            per folio (BLKBSZSET; default 1024, 0 = keep)\n"
"  -s MiB    raw, move: use only the first MiB of the device; fs: map and move\n"
"            only those (where the file system keeps its metadata: reading\n"
"            a whole large device under emulation takes long) (default all)\n"
"  -c PAGES  fs: pages of anonymous memory moved with each hot page, to\n"
"            share its batches and come before it (default 95)\n"
"  -B PAGES  fs: ballast on the last node of the route while the pages\n"
"            arrive there, so that compaction can move them (default 2048)\n"
"  -f FILES  fs: files each writer keeps; a new one replaces the oldest\n"
"            (default 32)\n"
"  -r DIRS   fs: directories per writer (default 4)\n"
"  -F N      fs: fsync every N-th file (default 1, 0 = never)\n"
"  -v        fs: tell on stderr which hot page each round moved\n"
"exit: 0 passed, 1 a check failed, 2 setup problem, 4 skipped\n",
		MIN_ROUNDS);
}

/* ---- option parsing ------------------------------------------------ */

static int parse_opt(int c, const char *arg, struct opts *o)
{
	unsigned long v;

	switch (c) {
	case 'D':
		o->dev = arg;
		return 0;
	case 'd':
		o->dir = arg;
		return 0;
	case 'l':
		o->manifest = arg;
		return 0;
	case 't':
		return parse_ulong(arg, &o->secs) || !o->secs || o->secs > 3600;
	case 'T':
		if (parse_ulong(arg, &v) || !v || v > MAX_THREADS)
			return -1;
		o->threads = v;
		return 0;
	case 'n':
		o->nr_route = parse_route(arg, o->route, MAX_ROUTE, MAX_NODE);
		return o->nr_route < 0;
	case 'b':
		return parse_ulong(arg, &o->bsize) ||
		       (o->bsize && (o->bsize < SECTOR ||
				     o->bsize > MIG_PAGE_SIZE ||
				     o->bsize & (o->bsize - 1)));
	case 's':
		return parse_ulong(arg, &o->size_mb) || o->size_mb > 1 << 20;
	case 'c':
		return parse_ulong(arg, &o->cold);
	case 'B':
		return parse_ulong(arg, &o->ballast) || o->ballast > 1 << 20;
	case 'f':
		return parse_ulong(arg, &o->files) || !o->files ||
		       o->files > 100000;
	case 'r':
		return parse_ulong(arg, &o->dirs) || !o->dirs ||
		       o->dirs > MAX_DIRS;
	case 'F':
		return parse_ulong(arg, &o->fsync_every);
	case 'v':
		o->verbose = 1;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	}
	return 1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	const char *need = NULL;
	int c;

	if (argc < 2) {
		fprintf(stderr, "blkmig: no mode given\n");
		return -1;
	}
	if (!strcmp(argv[1], "-h")) {
		usage(stdout);
		exit(0);
	} else if (!strcmp(argv[1], "raw")) {
		o->mode = M_RAW;
	} else if (!strcmp(argv[1], "fs")) {
		o->mode = M_FS;
	} else if (!strcmp(argv[1], "verify")) {
		o->mode = M_VERIFY;
	} else if (!strcmp(argv[1], "move")) {
		o->mode = M_MOVE;
	} else {
		fprintf(stderr, "blkmig: unknown mode '%s'\n", argv[1]);
		return -1;
	}
	optind = 2;
	while ((c = getopt(argc, argv, "D:d:l:t:T:n:b:s:c:B:f:r:F:vh")) != -1) {
		if (parse_opt(c, optarg, o)) {
			if (c != '?')
				fprintf(stderr, "blkmig: bad argument for -%c: '%s'\n",
					c, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "blkmig: stray argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->mode != M_VERIFY && !o->dev)
		need = "-D";
	else if ((o->mode == M_FS || o->mode == M_VERIFY) && !o->dir)
		need = "-d";
	else if ((o->mode == M_FS || o->mode == M_VERIFY) && !o->manifest)
		need = "-l";
	if (need) {
		fprintf(stderr, "blkmig: this mode needs %s\n", need);
		return -1;
	}
	return 0;
}

/* ---- threads --------------------------------------------------------- */

static int cpus[CPU_SETSIZE], nr_cpus;

static void cpus_init(void)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[nr_cpus++] = c;
}

/*
 * Start @fn(@arg) on the @slot-th CPU we may use (modulo their number),
 * or anywhere if @slot < 0.  Gives up the whole program if it cannot.
 */
static void start_thread(pthread_t *tid, void *(*fn)(void *), void *arg,
			 int slot)
{
	pthread_attr_t attr;
	cpu_set_t set;

	pthread_attr_init(&attr);
	if (slot >= 0 && nr_cpus) {
		CPU_ZERO(&set);
		CPU_SET(cpus[slot % nr_cpus], &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	if (pthread_create(tid, &attr, fn, arg)) {
		fprintf(stderr, "blkmig: pthread_create failed\n");
		exit(EXIT_SETUP);
	}
	pthread_attr_destroy(&attr);
}

/* ---- random numbers and names -------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* FNV-1a: the seed of a file's contents, from its name. */
static uint64_t name_seed(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return h;
}

static size_t name_size(const char *name)
{
	return 1 + name_seed(name) % MAX_FILE;
}

/* ---- the mover ------------------------------------------------------ */

static const int counted_errnos[NR_ERRNOS] = {
	EBUSY, EAGAIN, ENOENT, EFAULT, EACCES, ENOMEM, EIO, 0 /* other */
};

struct mover {
	pthread_t tid;
	const struct opts *o;
	int fd;
	char *map;
	size_t len;
	unsigned long npages;
	int hot_only;		/* only pages the kernel looked up ... */
	unsigned long cold;	/* ... after this many of anonymous memory */
	char *cold_buf;
	char *holes;		/* every other page of it: see fs_round() */
	unsigned long per_round; /* hot pages per round, 0 = all */
	unsigned long cursor;	/* where the next round looks for them */
	uint64_t *sig;		/* per page: signature of its contents */
	unsigned int *score;	/* per page: how often they changed lately */
	unsigned char *stuck;	/* per page: moves failed in a row */
	unsigned short *wait;	/* per page: rounds until it may be picked */
	int pagemap_fd, kpageflags_fd;
	uint64_t *pm;		/* pagemap entry of every page */
	void **addrs;		/* the pages moved in a round */
	int *nodes;
	int *status;
	int stop;		/* set by main, read by the mover */
	unsigned long rounds;	/* completed, read by main */
	/* totals over all rounds */
	unsigned long tried;	/* pages passed to move_pages() */
	unsigned long hot;	/* of them, hot (all in raw mode) */
	unsigned long hot_moved;	/* of those, on the target after it */
	unsigned long compacted;	/* fs: hot pages compaction moved */
	unsigned long moved;	/* of them, on the target after the round */
	unsigned long failed;	/* move_pages() said not migrated */
	unsigned long errs[NR_ERRNOS];	/* not on a node after the round */
	uint64_t ns;		/* in move_pages() */
	uint64_t sum;		/* of the bytes read, so that reads happen */
	char err[160];		/* the mover gave up */
};

static int mover_init(struct mover *m, const struct opts *o, size_t len,
		      int hot_only)
{
	unsigned long n;

	memset(m, 0, sizeof(*m));
	m->o = o;
	m->len = len;
	m->npages = len / MIG_PAGE_SIZE;
	m->hot_only = hot_only;
	m->cold = hot_only ? o->cold : 0;
	m->per_round = hot_only;	/* one hot page: see the top */
	m->pagemap_fd = m->kpageflags_fd = -1;
	if (hot_only) {
		m->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		m->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
		if (m->pagemap_fd < 0 || m->kpageflags_fd < 0) {
			fprintf(stderr, "blkmig: /proc/self/pagemap or /proc/kpageflags: %s\n",
				strerror(errno));
			return -1;
		}
	}
	m->fd = open(o->dev, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		fprintf(stderr, "blkmig: open %s: %s\n", o->dev, strerror(errno));
		return -1;
	}
	m->map = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, 0);
	if (m->map == MAP_FAILED) {
		fprintf(stderr, "blkmig: mmap %s: %s\n", o->dev, strerror(errno));
		close(m->fd);
		return -1;
	}
	if (m->cold && hot_only) {
		m->cold_buf = region_alloc(m->cold * MIG_PAGE_SIZE, 4,
					   o->route[0]);
		if (!m->cold_buf)
			return -1;
	}
	if (hot_only) {
		m->holes = region_alloc(HOLE_PAGES * MIG_PAGE_SIZE, 4,
					o->route[o->nr_route - 1]);
		if (!m->holes)
			return -1;
		for (n = 1; n < HOLE_PAGES; n += 2)
			madvise(m->holes + n * MIG_PAGE_SIZE, MIG_PAGE_SIZE,
				MADV_DONTNEED);
	}
	n = m->npages + m->cold;
	m->pm = malloc(m->npages * sizeof(*m->pm));
	m->sig = calloc(m->npages, sizeof(*m->sig));
	m->score = calloc(m->npages, sizeof(*m->score));
	m->stuck = calloc(m->npages, sizeof(*m->stuck));
	m->wait = calloc(m->npages, sizeof(*m->wait));
	m->addrs = malloc(n * sizeof(*m->addrs));
	m->nodes = malloc(n * sizeof(*m->nodes));
	m->status = malloc(n * sizeof(*m->status));
	if (!m->pm || !m->sig || !m->score || !m->stuck || !m->wait ||
	    !m->addrs || !m->nodes || !m->status) {
		fprintf(stderr, "blkmig: out of memory for %lu pages\n",
			m->npages);
		return -1;
	}
	return 0;
}

static void mover_free(struct mover *m)
{
	munmap(m->map, m->len);
	if (m->cold_buf)
		region_free(m->cold_buf, m->cold * MIG_PAGE_SIZE);
	if (m->holes)
		region_free(m->holes, HOLE_PAGES * MIG_PAGE_SIZE);
	close(m->fd);
	if (m->hot_only) {
		close(m->pagemap_fd);
		close(m->kpageflags_fd);
	}
	free(m->pm);
	free(m->sig);
	free(m->score);
	free(m->stuck);
	free(m->wait);
	free(m->addrs);
	free(m->nodes);
	free(m->status);
}

/* Non-zero if page @i is mapped and the kernel has looked it up (hot). */
static int page_hot(struct mover *m, unsigned long i)
{
	uint64_t flags;

	if (!(m->pm[i] & PM_PRESENT) || !PAGEMAP_PFN(m->pm[i]))
		return 0;
	if (pread(m->kpageflags_fd, &flags, sizeof(flags),
		  PAGEMAP_PFN(m->pm[i]) * sizeof(flags)) != sizeof(flags))
		return 0;
	return !!(flags & (BIT_ULL(KPF_REFERENCED) | BIT_ULL(KPF_ACTIVE)));
}

/* FNV-1a over the words of page @i as it is now. */
static uint64_t page_sig(const struct mover *m, unsigned long i)
{
	const volatile uint64_t *w = (const volatile uint64_t *)
				     (m->map + i * MIG_PAGE_SIZE);
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t k;

	for (k = 0; k < MIG_PAGE_SIZE / sizeof(*w); k++)
		h = (h ^ w[k]) * 0x100000001b3ULL;
	return h;
}

/*
 * The hot pages of a round, after the cold ones in m->addrs[0, @n): up to
 * m->per_round of them, those whose contents changed most often lately
 * first (a decaying score), then from where the last round stopped.  A
 * page that did not move waits 2, 4, ... 64 rounds before it is picked
 * again: some never move (the file system holds their buffers for good).
 * m->pm[] is non-zero for the hot pages.  Returns the new @n.
 */
static unsigned long pick_hot(struct mover *m, unsigned long n)
{
	unsigned long j, i, best, want = m->per_round;
	uint64_t sig;

	for (i = 0; i < m->npages; i++) {
		if (!m->pm[i])
			continue;
		sig = page_sig(m, i);
		m->score[i] = m->score[i] / 2 + (sig != m->sig[i] ? 64 : 0);
		m->sig[i] = sig;
		if (m->wait[i]) {
			m->wait[i]--;
			m->pm[i] = 0;
		}
	}
	if (!want)
		want = m->npages;
	while (want--) {
		best = m->npages;
		for (j = 0; j < m->npages; j++) {
			i = (m->cursor + j) % m->npages;
			if (m->pm[i] && (best == m->npages ||
					 m->score[i] > m->score[best]))
				best = i;
		}
		if (best == m->npages)
			break;
		m->addrs[n++] = m->map + best * MIG_PAGE_SIZE;
		m->pm[best] = 0;
		m->cursor = best + 1;
	}
	return n;
}

/* Remember whether hot page @i moved. */
static void note_hot(struct mover *m, unsigned long i, int moved)
{
	if (moved) {
		m->stuck[i] = 0;
	} else {
		if (m->stuck[i] < 6)
			m->stuck[i]++;
		m->wait[i] = 1 << m->stuck[i];
	}
}

static int route_node(const struct opts *o, unsigned long h)
{
	return o->route[h % o->nr_route];
}

/*
 * Read every page of the device (this maps it, and reads it from the disk
 * if it is not cached) and put the pages of the round in m->addrs: all of
 * them, or the cold ones and then the hot ones.  Returns their number, or
 * -1; @nhot returns how many of them are hot (at the end).
 */
static long round_pages(struct mover *m, unsigned long *nhot)
{
	const volatile char *p = (const volatile char *)m->map;
	size_t pm_len = m->npages * sizeof(*m->pm);
	unsigned long i, n = 0;

	for (i = 0; i < m->npages; i++)
		m->sum += p[i * MIG_PAGE_SIZE];
	if (!m->hot_only) {
		for (i = 0; i < m->npages; i++)
			m->addrs[n++] = m->map + i * MIG_PAGE_SIZE;
		*nhot = n;
		return n;
	}
	if (pread(m->pagemap_fd, m->pm, pm_len,
		  (uintptr_t)m->map / MIG_PAGE_SIZE * sizeof(*m->pm)) !=
	    (ssize_t)pm_len) {
		snprintf(m->err, sizeof(m->err), "pagemap: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < m->npages; i++)
		m->pm[i] = page_hot(m, i);
	for (i = 0; i < m->cold; i++)	/* first: see the top */
		m->addrs[n++] = m->cold_buf + i * MIG_PAGE_SIZE;
	*nhot = pick_hot(m, n) - n;
	return n + *nhot;
}

/*
 * move_pages() the @n pages of m->addrs to @to, then ask where they are.
 * Returns the number of them not on @to, or -1 if a syscall failed.
 */
static long move_round(struct mover *m, unsigned long n, unsigned long nhot,
		       int to)
{
	unsigned long i, behind = 0;
	uint64_t t0;
	long rc;
	int e;

	for (i = 0; i < n; i++)
		m->nodes[i] = to;
	t0 = now_ns();
	rc = move_pages(0, n, m->addrs, m->nodes, m->status, MPOL_MF_MOVE_ALL);
	m->ns += now_ns() - t0;
	/* the statuses of a call that returns > 0 are not all filled in */
	if (rc < 0 || move_pages(0, n, m->addrs, NULL, m->status, 0) < 0) {
		snprintf(m->err, sizeof(m->err), "move_pages(%lu pages to node %d): %s",
			 n, to, strerror(errno));
		return -1;
	}
	m->failed += rc;
	for (i = 0; i < n; i++) {
		if (m->status[i] == to) {
			m->hot_moved += i >= n - nhot;
			continue;
		}
		behind++;
		if (m->status[i] >= 0)
			continue;	/* on another node: not moved */
		for (e = 0; e < NR_ERRNOS - 1; e++)
			if (-m->status[i] == counted_errnos[e])
				break;
		m->errs[e]++;
	}
	m->tried += n;
	m->hot += nhot;
	m->moved += n - behind;
	return behind;
}

/* Raw mode: all the pages to @to; -1, or how many are not there. */
static long mover_round(struct mover *m, int to, unsigned long *tried)
{
	unsigned long nhot;
	long n = round_pages(m, &nhot);

	*tried = n < 0 ? 0 : n;
	return n < 0 ? -1 : move_round(m, n, nhot, to);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/*
 * @len bytes of anonymous memory in 4K pages on @node, populated by the
 * kernel in one call (faulting them in one by one takes long under
 * emulation).  NULL if that cannot be done.
 */
static char *ballast_alloc(size_t len, int node)
{
	unsigned long mask[MAX_NODE / (8 * sizeof(long)) + 1] = { 0 };
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	if (madvise(buf, len, MADV_NOHUGEPAGE) ||
	    mbind(buf, len, MPOL_BIND, mask, MAX_NODE + 1, 0) ||
	    madvise(buf, len, MADV_POPULATE_WRITE)) {
		munmap(buf, len);
		return NULL;
	}
	return buf;
}

/* 0 if not present */
static uint64_t page_pfn(struct mover *m, void *addr)
{
	uint64_t e = pagemap_get_entry(m->pagemap_fd, addr);

	return e & PM_PRESENT ? PAGEMAP_PFN(e) : 0;
}

static int compact(struct mover *m, int node)
{
	char path[80];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/compact",
		 node);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		snprintf(m->err, sizeof(m->err), "%s: %s", path, strerror(errno));
		ret = -1;
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * fs mode, round @h: the cold pages and the hot one to a node of the
 * route, then to its last node, and compact that node: compaction migrates
 * them with the per-CPU buffer-head LRUs on (move_pages() turns them off).
 * Compaction moves pages from the bottom of a zone into the free pages of
 * partly used pageblocks at its top (never into wholly free ones): the
 * mover keeps such pageblocks (m->holes), on the node where it gets pages
 * first.  So that the pages of the round land low instead, -B pages of
 * ballast take the top while they arrive, and leave before compaction.
 * 0, or -1 if a syscall failed.
 */
static int fs_round(struct mover *m, unsigned long h)
{
	int nr = m->o->nr_route, last = m->o->route[nr - 1], moved;
	uint64_t pfn = 0, pfn2 = 0;
	unsigned long nhot, i = 0;
	long n;

	size_t blen = m->o->ballast * MIG_PAGE_SIZE;
	char *ballast = NULL;

	n = round_pages(m, &nhot);
	if (n < 0 || move_round(m, n, nhot, m->o->route[h % (nr - 1)]) < 0)
		return -1;
	if (blen && !(ballast = ballast_alloc(blen, last))) {
		snprintf(m->err, sizeof(m->err), "no ballast on node %d", last);
		return -1;
	}
	n = move_round(m, n, nhot, last) < 0 ? -1 : n;
	if (ballast)
		munmap(ballast, blen);
	if (n < 0)
		return -1;
	if (nhot) {	/* one hot page, the last */
		i = ((char *)m->addrs[n - 1] - m->map) / MIG_PAGE_SIZE;
		moved = m->status[n - 1] == last;
		note_hot(m, i, moved);
		pfn = moved ? page_pfn(m, m->addrs[n - 1]) : 0;
	}
	if (compact(m, last))
		return -1;
	if (pfn) {
		pfn2 = page_pfn(m, m->addrs[n - 1]);
		m->compacted += pfn2 != pfn;
	}
	if (nhot && m->o->verbose)
		fprintf(stderr, "round %lu: page %lu (score %u) %s node %d, pfn %#llx -> %#llx\n",
			h, i, m->score[i], pfn ? "moved to" : "did not move to",
			last, (unsigned long long)pfn, (unsigned long long)pfn2);
	return 0;
}

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	unsigned long h, n;
	long ret;

	for (h = 1; !__atomic_load_n(&m->stop, __ATOMIC_RELAXED); h++) {
		if (m->hot_only)
			ret = fs_round(m, h);
		else
			ret = mover_round(m, route_node(m->o, h), &n);
		if (ret < 0)
			break;
		__atomic_store_n(&m->rounds, h, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* "120 EBUSY, 3 ENOENT" */
static void describe_errs(const struct mover *m, char *s, size_t size)
{
	int e, len = 0;

	s[0] = '\0';
	for (e = 0; e < NR_ERRNOS && len < (int)size; e++) {
		if (!m->errs[e])
			continue;
		len += snprintf(s + len, size - len, "%s%lu %s", len ? ", " : "",
				m->errs[e], counted_errnos[e] ?
				strerrorname_np(counted_errnos[e]) : "other");
	}
	if (!len)
		snprintf(s, size, "none");
}

static void mover_report(const struct mover *m)
{
	char errs[200];

	describe_errs(m, errs, sizeof(errs));
	if (m->hot_only)
		printf("mover: %lu rounds over %lu pages of %s, %lu hot and %lu cold pages each: hot ones moved %lu times by move_pages(), %lu by compaction; %lu pages moved in all, %lu not migrated (not on any node: %s), %.1f s in move_pages()\n",
		       m->rounds, m->npages, m->o->dev,
		       m->rounds ? m->hot / m->rounds / 2 : 0,
		       m->rounds ? (m->tried - m->hot) / m->rounds / 2 : 0,
		       m->hot_moved, m->compacted, m->moved, m->failed, errs,
		       m->ns / 1e9);
	else
		printf("mover: %lu rounds over the %lu pages of %s, %lu moved, %lu not migrated (not on any node: %s), %.1f s in move_pages()\n",
		       m->rounds, m->npages, m->o->dev, m->moved, m->failed, errs,
		       m->ns / 1e9);
}

/*
 * Let the writers run for -t seconds and at least MIN_ROUNDS mover rounds
 * (within ten times that long), then stop the writers with *@stop.
 * 0, or -1 if the mover failed or did not get its rounds.
 */
static int run_for(struct mover *m, int *stop)
{
	uint64_t start = now_ns(), want = m->o->secs * 1000000000ULL;
	unsigned long rounds;
	int ret = 0;

	for (;;) {
		usleep(100000);
		rounds = __atomic_load_n(&m->rounds, __ATOMIC_ACQUIRE);
		if (m->err[0])
			break;
		if (now_ns() - start < want)
			continue;
		if (rounds >= MIN_ROUNDS || now_ns() - start > 10 * want)
			break;
	}
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELAXED);
	pthread_join(m->tid, NULL);
	rounds = m->rounds;	/* the last one overlapped the writers too */
	if (m->err[0]) {
		printf("FAIL mover: %s\n", m->err);
		ret = -1;
	} else if (rounds < MIN_ROUNDS) {
		printf("FAIL mover: only %lu of %d rounds in %.0f s\n", rounds,
		       MIN_ROUNDS, (now_ns() - start) / 1e9);
		ret = -1;
	}
	return ret;
}

/* ---- raw mode ------------------------------------------------------- */

struct raw {
	const struct opts *o;
	int fd;
	size_t len;
	unsigned long nsect;
	uint32_t *gen;		/* generation of the data in each sector */
	int stop;
};

struct rwriter {
	pthread_t tid;
	struct raw *r;
	int id;
	unsigned long first, nsect;	/* its sectors */
	unsigned long writes, checks, syncs;
	unsigned long bad;		/* sectors read back wrong */
	char why[240];
};

/* Generation 0 is the initial fill, then (thread + 1) << 24 | count. */
static uint64_t sector_seed(unsigned long s, uint32_t gen)
{
	return (uint64_t)gen << 40 ^ s ^ 0x5ec7000000000000ULL;
}

static void fill_sectors(char *buf, unsigned long s, unsigned long n,
			 const uint32_t *gen)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		fill_stream(buf + i * SECTOR, SECTOR, sector_seed(s + i, gen[i]), 0);
}

/* Number of the @n sectors from @s in @buf that do not hold gen[s...]. */
static unsigned long check_sectors(const char *buf, unsigned long s,
				   unsigned long n, const uint32_t *gen,
				   char *why, size_t size)
{
	unsigned long i, bad = 0;
	long off;

	for (i = 0; i < n; i++) {
		off = verify_stream(buf + i * SECTOR, SECTOR,
				    sector_seed(s + i, gen[i]), 0);
		if (off < 0)
			continue;
		if (!bad++ && !why[0])
			snprintf(why, size, "sector %lu (device offset %lu, byte %ld of it) does not hold write generation %#x",
				 s + i, (s + i) * SECTOR, off, gen[i]);
	}
	return bad;
}

static void *rwriter_main(void *arg)
{
	struct rwriter *w = arg;
	struct raw *r = w->r;
	uint64_t seed = 0x7a11 + w->id;
	char buf[MAX_WRITE * SECTOR];
	uint32_t gens[MAX_WRITE], count = 0;
	unsigned long s, n, i;
	ssize_t got;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		n = 1 + rnd(&seed) % MAX_WRITE;
		s = w->first + rnd(&seed) % (w->nsect - n + 1);
		count = (count + 1) & 0xffffff;
		for (i = 0; i < n; i++)
			gens[i] = (uint32_t)(w->id + 1) << 24 | count;
		fill_sectors(buf, s, n, gens);
		got = pwrite(r->fd, buf, n * SECTOR, s * SECTOR);
		if (got != (ssize_t)(n * SECTOR)) {
			snprintf(w->why, sizeof(w->why), "pwrite of %lu bytes at %lu: %s",
				 n * SECTOR, s * SECTOR,
				 got < 0 ? strerror(errno) : "short write");
			w->bad++;
			break;
		}
		memcpy(r->gen + s, gens, n * sizeof(*gens));
		w->writes++;
		if (!(w->writes % 8)) {
			/* read back some of what this thread wrote */
			n = 1 + rnd(&seed) % MAX_WRITE;
			s = w->first + rnd(&seed) % (w->nsect - n + 1);
			got = pread(r->fd, buf, n * SECTOR, s * SECTOR);
			if (got != (ssize_t)(n * SECTOR)) {
				snprintf(w->why, sizeof(w->why), "pread: %s",
					 got < 0 ? strerror(errno) : "short read");
				w->bad++;
				break;
			}
			w->bad += check_sectors(buf, s, n, r->gen + s, w->why,
						sizeof(w->why));
			w->checks++;
		}
		if (!(w->writes % 256) && !fdatasync(r->fd))
			w->syncs++;
	}
	return NULL;
}

/* Write generation 0 everywhere, and sync it. */
static int raw_fill(struct raw *r)
{
	size_t chunk = 1 << 20, off;
	char *buf = malloc(chunk);
	int ret = 0;

	if (!buf)
		return -1;
	for (off = 0; off < r->len && !ret; off += chunk) {
		fill_sectors(buf, off / SECTOR, chunk / SECTOR, r->gen + off / SECTOR);
		if (pwrite(r->fd, buf, chunk, off) != (ssize_t)chunk) {
			fprintf(stderr, "blkmig: initial fill at %zu: %s\n", off,
				strerror(errno));
			ret = -1;
		}
	}
	if (!ret && fsync(r->fd)) {
		fprintf(stderr, "blkmig: fsync: %s\n", strerror(errno));
		ret = -1;
	}
	free(buf);
	return ret;
}

/* After a sync and a drop of the caches: every sector from the device. */
static unsigned long raw_check_all(struct raw *r, char *why, size_t size)
{
	size_t chunk = 1 << 20, off;
	unsigned long bad = 0;
	char *buf = malloc(chunk);

	if (!buf) {
		snprintf(why, size, "out of memory");
		return 1;
	}
	for (off = 0; off < r->len; off += chunk) {
		if (pread(r->fd, buf, chunk, off) != (ssize_t)chunk) {
			snprintf(why, size, "pread at %zu: %s", off,
				 strerror(errno));
			bad++;
			break;
		}
		bad += check_sectors(buf, off / SECTOR, chunk / SECTOR,
				     r->gen + off / SECTOR, why, size);
	}
	free(buf);
	return bad;
}

static int raw_open(struct raw *r, const struct opts *o)
{
	uint64_t size;
	int bs = o->bsize;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->fd = open(o->dev, O_RDWR | O_CLOEXEC);
	if (r->fd < 0) {
		fprintf(stderr, "blkmig: open %s: %s\n", o->dev, strerror(errno));
		return -1;
	}
	/* before anything is cached: set_blocksize() drops the page cache */
	if (bs && ioctl(r->fd, BLKBSZSET, &bs)) {
		fprintf(stderr, "blkmig: BLKBSZSET %d: %s\n", bs, strerror(errno));
		return -1;
	}
	if (ioctl(r->fd, BLKGETSIZE64, &size)) {
		fprintf(stderr, "blkmig: BLKGETSIZE64: %s\n", strerror(errno));
		return -1;
	}
	if (o->size_mb && o->size_mb << 20 < size)
		size = o->size_mb << 20;
	r->len = size & ~((1UL << 20) - 1);
	r->nsect = r->len / SECTOR;
	if (r->nsect < (unsigned long)o->threads * MAX_WRITE * 4) {
		fprintf(stderr, "blkmig: %s is too small\n", o->dev);
		return -1;
	}
	r->gen = calloc(r->nsect, sizeof(*r->gen));
	return r->gen ? 0 : -1;
}

static int run_raw(const struct opts *o)
{
	struct rwriter ws[MAX_THREADS];
	unsigned long writes = 0, checks = 0, syncs = 0, bad = 0, n = 0;
	int i, nt = o->threads, ret = 0, bs = 0, last;
	char why[240] = "";
	struct mover m;
	struct raw r;
	long behind;

	if (raw_open(&r, o) || raw_fill(&r))
		return EXIT_SETUP;
	ioctl(r.fd, BLKBSZGET, &bs);
	printf("raw: %s, %zu MiB, block size %d (%lu buffer heads per page), %d writers\n",
	       o->dev, r.len >> 20, bs, bs ? MIG_PAGE_SIZE / bs : 0, nt);
	if (mover_init(&m, o, r.len, 0))
		return EXIT_SETUP;
	memset(ws, 0, sizeof(ws));
	for (i = 0; i < nt; i++) {
		ws[i].r = &r;
		ws[i].id = i;
		ws[i].first = r.nsect / nt * i;
		ws[i].nsect = r.nsect / nt;
		start_thread(&ws[i].tid, rwriter_main, &ws[i], -1);
	}
	start_thread(&m.tid, mover_main, &m, -1);
	if (run_for(&m, &r.stop))
		ret = EXIT_FAIL;
	for (i = 0; i < nt; i++) {
		pthread_join(ws[i].tid, NULL);
		writes += ws[i].writes;
		checks += ws[i].checks;
		syncs += ws[i].syncs;
		bad += ws[i].bad;
		if (ws[i].bad && !why[0])
			snprintf(why, sizeof(why), "writer %d: %s", i, ws[i].why);
	}
	mover_report(&m);
	printf("%s writers: %lu writes, %lu read-backs, %lu fdatasyncs, %lu bad sectors read back%s%s\n",
	       bad ? "FAIL" : "ok", writes, checks, syncs, bad,
	       bad ? "; first: " : "", why);
	if (bad)
		ret = EXIT_FAIL;
	if (!writes) {
		printf("FAIL writers: no write\n");
		ret = EXIT_FAIL;
	}
	if (!m.moved) {
		printf("FAIL mover: no page moved while the writers ran\n");
		ret = EXIT_FAIL;
	}

	/* nobody writes now: every page must move */
	last = route_node(o, m.rounds + 1);
	for (i = 0, behind = 1; i < 3 && behind > 0; i++)
		behind = mover_round(&m, last, &n);
	if (behind)
		printf("FAIL final move: %ld of %lu pages not on node %d%s%s\n",
		       behind, n, last, m.err[0] ? ": " : "", m.err);
	else
		printf("ok final move: all %lu pages on node %d\n", n, last);
	if (behind)
		ret = EXIT_FAIL;
	mover_free(&m);

	/* everything from the device itself */
	why[0] = '\0';
	if (fsync(r.fd) || drop_caches()) {
		fprintf(stderr, "blkmig: fsync or drop_caches: %s\n",
			strerror(errno));
		return EXIT_SETUP;
	}
	bad = raw_check_all(&r, why, sizeof(why));
	printf("%s device contents after sync and drop_caches: %lu of %lu sectors bad%s%s\n",
	       bad ? "FAIL" : "ok", bad, r.nsect, bad ? "; first: " : "", why);
	if (bad)
		ret = EXIT_FAIL;
	close(r.fd);
	free(r.gen);
	return ret;
}

/* ---- move mode ------------------------------------------------------ */

/* The mover alone over the first -s MiB; a page must have moved. */
static int run_move(const struct opts *o)
{
	uint64_t size;
	struct mover m;
	int fd, stop = 0, ret = 0;

	fd = open(o->dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size)) {
		fprintf(stderr, "blkmig: %s: %s\n", o->dev, strerror(errno));
		return EXIT_SETUP;
	}
	close(fd);
	if (o->size_mb && o->size_mb << 20 < size)
		size = o->size_mb << 20;
	size &= ~(MIG_PAGE_SIZE - 1);
	if (!size || mover_init(&m, o, size, 0))
		return EXIT_SETUP;
	start_thread(&m.tid, mover_main, &m, -1);
	if (run_for(&m, &stop))
		ret = EXIT_FAIL;
	mover_report(&m);
	if (!m.moved) {
		printf("FAIL mover: no page moved\n");
		ret = EXIT_FAIL;
	}
	mover_free(&m);
	return ret;
}

/* ---- fs mode -------------------------------------------------------- */

struct fwriter {
	pthread_t tid;
	const struct opts *o;
	int id;
	int *stop;
	unsigned long *ring;	/* file number per slot, ~0UL = empty */
	unsigned long created, unlinked, fsyncs, checks, errors;
	char why[300];
};

static void file_name(char *s, size_t size, int id, unsigned long dirs,
		      unsigned long nr)
{
	snprintf(s, size, "w%d/d%lu/f%lu", id, nr % dirs, nr);
}

/* 0 if @fd holds the contents of @name, else -1 with @why set. */
static int check_file(int fd, const char *name, char *why, size_t size)
{
	static __thread char buf[MAX_FILE + 1];
	size_t want = name_size(name);
	ssize_t got;
	long off;

	got = pread(fd, buf, sizeof(buf), 0);
	if (got < 0) {
		snprintf(why, size, "%s: read: %s", name, strerror(errno));
		return -1;
	}
	if ((size_t)got != want) {
		snprintf(why, size, "%s: %zd bytes instead of %zu", name, got,
			 want);
		return -1;
	}
	off = verify_stream(buf, want, name_seed(name), 0);
	if (off >= 0) {
		snprintf(why, size, "%s: wrong contents from byte %ld of %zu",
			 name, off, want);
		return -1;
	}
	return 0;
}

static int write_file(struct fwriter *w, const char *path, const char *name,
		      int sync)
{
	static __thread char buf[MAX_FILE];
	size_t len = name_size(name);
	int fd, ret = -1;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(w->why, sizeof(w->why), "create %s: %s", name,
			 strerror(errno));
		return -1;
	}
	fill_stream(buf, len, name_seed(name), 0);
	if (write(fd, buf, len) != (ssize_t)len)
		snprintf(w->why, sizeof(w->why), "write %s: %s", name,
			 strerror(errno));
	else if (sync && fsync(fd))
		snprintf(w->why, sizeof(w->why), "fsync %s: %s", name,
			 strerror(errno));
	else
		ret = 0;
	w->fsyncs += sync && !ret;
	close(fd);
	return ret;
}

/* Check (every 8th time) and unlink file @nr. */
static int drop_file(struct fwriter *w, unsigned long nr)
{
	char name[NAME_LEN], path[4096];
	int fd, ret = 0;

	file_name(name, sizeof(name), w->id, w->o->dirs, nr);
	snprintf(path, sizeof(path), "%s/%s", w->o->dir, name);
	if (!(nr % 8)) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(w->why, sizeof(w->why), "open %s: %s", name,
				 strerror(errno));
			return -1;
		}
		ret = check_file(fd, name, w->why, sizeof(w->why));
		close(fd);
		w->checks++;
	}
	if (!ret && unlink(path)) {
		snprintf(w->why, sizeof(w->why), "unlink %s: %s", name,
			 strerror(errno));
		ret = -1;
	}
	w->unlinked += !ret;
	return ret;
}

static void *fwriter_main(void *arg)
{
	struct fwriter *w = arg;
	const struct opts *o = w->o;
	char name[NAME_LEN], path[4096];
	unsigned long nr, slot;
	int sync;

	for (nr = 0; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); nr++) {
		slot = nr % o->files;
		if (w->ring[slot] != ~0UL) {
			if (drop_file(w, w->ring[slot]))
				break;
			w->ring[slot] = ~0UL;
		}
		file_name(name, sizeof(name), w->id, o->dirs, nr);
		snprintf(path, sizeof(path), "%s/%s", o->dir, name);
		sync = o->fsync_every && !(nr % o->fsync_every);
		if (write_file(w, path, name, sync))
			break;
		w->ring[slot] = nr;
		w->created++;
	}
	w->errors = !!w->why[0];
	return NULL;
}

static int make_dirs(const struct opts *o)
{
	char path[4096];
	unsigned long d;
	int t;

	if (mkdir(o->dir, 0755) && errno != EEXIST)
		goto err;
	for (t = 0; t < o->threads; t++) {
		snprintf(path, sizeof(path), "%s/w%d", o->dir, t);
		if (mkdir(path, 0755))
			goto err;
		for (d = 0; d < o->dirs; d++) {
			snprintf(path, sizeof(path), "%s/w%d/d%lu", o->dir, t, d);
			if (mkdir(path, 0755))
				goto err;
		}
	}
	return 0;
err:
	fprintf(stderr, "blkmig: mkdir %s: %s\n", path, strerror(errno));
	return -1;
}

static int write_manifest(const struct opts *o, struct fwriter *ws)
{
	char name[NAME_LEN];
	unsigned long s, n = 0;
	FILE *f = fopen(o->manifest, "w");
	int t;

	if (!f) {
		fprintf(stderr, "blkmig: %s: %s\n", o->manifest, strerror(errno));
		return -1;
	}
	fprintf(f, "blkmig %d %lu\n", o->threads, o->dirs);
	for (t = 0; t < o->threads; t++) {
		for (s = 0; s < o->files; s++) {
			if (ws[t].ring[s] == ~0UL)
				continue;
			file_name(name, sizeof(name), t, o->dirs, ws[t].ring[s]);
			fprintf(f, "%s\n", name);
			n++;
		}
	}
	if (fclose(f)) {
		fprintf(stderr, "blkmig: %s: %s\n", o->manifest, strerror(errno));
		return -1;
	}
	printf("manifest: %lu files in %s\n", n, o->manifest);
	return 0;
}

static int run_fs(const struct opts *o)
{
	unsigned long created = 0, unlinked = 0, fsyncs = 0, checks = 0;
	struct fwriter ws[MAX_THREADS];
	int i, nt = o->threads, ret = 0, stop = 0;
	char why[300] = "";
	struct stat st;
	struct mover m;
	uint64_t size;
	int fd;

	fd = open(o->dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) || fstat(fd, &st)) {
		fprintf(stderr, "blkmig: %s: %s\n", o->dev, strerror(errno));
		return EXIT_SETUP;
	}
	close(fd);
	if (o->size_mb && o->size_mb << 20 < size)
		size = o->size_mb << 20;
	if (make_dirs(o) || mover_init(&m, o, size & ~(MIG_PAGE_SIZE - 1), 1))
		return EXIT_SETUP;
	printf("fs: %s on %s (first %zu MiB moved), %d writers x %lu files in %lu directories, fsync every %lu\n",
	       o->dir, o->dev, m.len >> 20, nt, o->files, o->dirs,
	       o->fsync_every);

	memset(ws, 0, sizeof(ws));
	for (i = 0; i < nt; i++) {
		ws[i].o = o;
		ws[i].id = i;
		ws[i].stop = &stop;
		ws[i].ring = malloc(o->files * sizeof(*ws[i].ring));
		if (!ws[i].ring)
			return EXIT_SETUP;
		memset(ws[i].ring, 0xff, o->files * sizeof(*ws[i].ring));
		/* the mover on the first CPU, the writers on the others */
		start_thread(&ws[i].tid, fwriter_main, &ws[i],
			     nr_cpus > 1 ? 1 + i % (nr_cpus - 1) : 0);
	}
	start_thread(&m.tid, mover_main, &m, 0);
	if (run_for(&m, &stop))
		ret = EXIT_FAIL;
	for (i = 0; i < nt; i++) {
		pthread_join(ws[i].tid, NULL);
		created += ws[i].created;
		unlinked += ws[i].unlinked;
		fsyncs += ws[i].fsyncs;
		checks += ws[i].checks;
		if (ws[i].errors && !why[0])
			snprintf(why, sizeof(why), "writer %d: %s", i, ws[i].why);
	}
	mover_report(&m);
	printf("%s writers: %lu files created, %lu unlinked (%lu checked first), %lu fsyncs%s%s\n",
	       why[0] ? "FAIL" : "ok", created, unlinked, checks, fsyncs,
	       why[0] ? "; " : "", why);
	if (why[0])
		ret = EXIT_FAIL;
	if (!created) {
		printf("FAIL writers: no file created\n");
		ret = EXIT_FAIL;
	}
	if (!m.moved) {
		printf("FAIL mover: no page moved while the writers ran\n");
		ret = EXIT_FAIL;
	}
	mover_free(&m);
	if (write_manifest(o, ws))
		ret = EXIT_SETUP;
	for (i = 0; i < nt; i++)
		free(ws[i].ring);
	return ret;
}

/* ---- verify mode ---------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct vtally {
	unsigned long ok, missing, bad, extra;
	char first[400];
};

static void vnote(struct vtally *v, const char *fmt, ...)
{
	va_list ap;

	if (v->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(v->first, sizeof(v->first), fmt, ap);
	va_end(ap);
}

static void verify_file(const struct opts *o, const char *name,
			struct vtally *v)
{
	char path[4096], why[300];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		v->missing++;
		vnote(v, "%s: %s", name, strerror(errno));
		return;
	}
	if (check_file(fd, name, why, sizeof(why))) {
		v->bad++;
		vnote(v, "%s", why);
	} else {
		v->ok++;
	}
	close(fd);
}

/* Every entry of the writers' directories must be in @names. */
static void verify_dirs(const struct opts *o, char **names, size_t n,
			int threads, unsigned long dirs, struct vtally *v)
{
	char path[4096], name[NAME_LEN + 300], *key = name;
	struct dirent *de;
	unsigned long d;
	DIR *dp;
	int t;

	for (t = 0; t < threads; t++) {
		for (d = 0; d < dirs; d++) {
			snprintf(path, sizeof(path), "%s/w%d/d%lu", o->dir, t, d);
			dp = opendir(path);
			if (!dp) {
				v->missing++;
				vnote(v, "directory %s: %s", path, strerror(errno));
				continue;
			}
			while ((de = readdir(dp))) {
				if (!strcmp(de->d_name, ".") ||
				    !strcmp(de->d_name, ".."))
					continue;
				snprintf(name, sizeof(name), "w%d/d%lu/%s", t, d,
					 de->d_name);
				if (bsearch(&key, names, n, sizeof(*names),
					    cmp_names))
					continue;
				v->extra++;
				vnote(v, "%s: exists but should not", name);
			}
			closedir(dp);
		}
	}
}

static int run_verify(const struct opts *o)
{
	char line[NAME_LEN + 2], **names = NULL;
	struct vtally v = { 0 };
	size_t n = 0, cap = 0, i;
	unsigned long dirs;
	int threads, bad;
	FILE *f;

	f = fopen(o->manifest, "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "blkmig %d %lu", &threads, &dirs) != 2) {
		fprintf(stderr, "blkmig: %s: not a manifest\n", o->manifest);
		return EXIT_SETUP;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			names = realloc(names, cap * sizeof(*names));
		}
		if (!names || !(names[n++] = strdup(line)))
			return EXIT_SETUP;
	}
	fclose(f);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++)
		verify_file(o, names[i], &v);
	verify_dirs(o, names, n, threads, dirs, &v);
	bad = v.missing || v.bad || v.extra;
	printf("%s files: %zu listed, %lu intact, %lu missing, %lu wrong, %lu that should not exist%s%s\n",
	       bad ? "FAIL" : "ok", n, v.ok, v.missing, v.bad, v.extra,
	       bad ? "; first: " : "", v.first);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return bad ? EXIT_FAIL : 0;
}

/* ---- main ----------------------------------------------------------- */

static int check_env(const struct opts *o)
{
	if (o->mode == M_VERIFY)
		return 0;
	if (geteuid()) {
		fprintf(stderr, "blkmig: needs root (MPOL_MF_MOVE_ALL, drop_caches): skip\n");
		return EXIT_SKIP;
	}
	return route_usable("blkmig", o->route, o->nr_route);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.secs = 20, .threads = 4, .route = { 0, 1, 2 }, .nr_route = 3,
		.bsize = 1024, .cold = 95, .ballast = 2048, .files = 32, .dirs = 4, .fsync_every = 1,
	};
	uint64_t t0 = now_ns();
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cpus_init();
	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return EXIT_SETUP;
	}
	ret = check_env(&o);
	if (ret)
		return ret;
	switch (o.mode) {
	case M_RAW:
		ret = run_raw(&o);
		break;
	case M_FS:
		ret = run_fs(&o);
		break;
	case M_MOVE:
		ret = run_move(&o);
		break;
	default:
		ret = run_verify(&o);
		break;
	}
	fprintf(stderr, "blkmig: %.1f s\n", (now_ns() - t0) / 1e9);
	return ret;
}
