// SPDX-License-Identifier: GPL-2.0
/*
 * migcheck - integrity test of page migration.
 *
 * Matrix mode: for every folio size x mapping kind x migration syscall,
 * fault a region in on the first node of the route, fill it with a unique
 * pattern and migrate it along the route.  After every hop every byte and
 * the node of every page are checked, after the first hop also the folio
 * size.  Small folios of the mlock kind must stay mlocked.
 *
 * The hugetlb kinds (on request only: they need a pool) also check the
 * pool: its counters may not change with a hop nor stay changed after the
 * munmap; a pool left changed is set back to the per-node sizes it had.
 * soft_offline (on request, hugetlb kinds) migrates every folio once within
 * its node, as memory failure handling does.
 *
 * Writers mode (-W): threads keep incrementing counters in the region while
 * it is moved between the nodes of the route; in the end no increment may
 * be missing.  With -H, every thread writes only the first pages of the
 * region, over and over: their TLB entries stay warm on the writers' CPUs,
 * so that a write through an entry not yet flushed when the migration
 * copies the page (the copy must come after the flush) is lost, and seen.
 *
 * One line per case on stdout ("ok", "FAIL", "skip"), diagnostics on
 * stderr.  Exit: 0 all passed, 1 a check failed, 2 setup problem, 4 skip.
 * Run "migcheck -h" for the options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <numaif.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "migutil.h"

#define MAX_SIZES	16
#define MAX_ROUTE	32
#define MAX_THREADS	64
#define MAX_SIZE_MB	4096UL
#define HIST_NODES	16	/* nodes counted one by one in reports */
#define MASK_BITS	1024
#define LONG_BITS	(8 * sizeof(unsigned long))
#define WORDS_PER_PAGE	(MIG_PAGE_SIZE / sizeof(uint64_t))
#define WHY_LEN		512
#define HTLB_DIR	"/sys/kernel/mm/hugepages"
#define NODE_DIR	"/sys/devices/system/node"

#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT		26
#endif

/* result of one case, or of a step of it */
enum { CASE_OK, CASE_FAIL, CASE_SETUP, CASE_SKIP };

enum kind {
	K_PRIVATE, K_SHARED, K_MEMFD, K_FILE, K_MLOCK,
	K_HUGETLB, K_HUGETLB_SHARED, NR_KINDS
};
static const char *const kind_names[NR_KINDS] = {
	"private", "shared", "memfd", "file", "mlock",
	"hugetlb", "hugetlb_shared",
};
/* the default and "all": hugetlb needs a pool, so only on request */
#define BASE_KINDS	((1U << K_HUGETLB) - 1)

enum sc { SC_MOVE_PAGES, SC_MIGRATE_PAGES, SC_MBIND, SC_SOFT_OFFLINE, NR_SCS };
static const char *const sc_names[NR_SCS] = {
	"move_pages", "migrate_pages", "mbind", "soft_offline",
};
/* soft offline takes the old page frames out of use: only on request */
#define BASE_SCS	((1U << SC_SOFT_OFFLINE) - 1)

/* Counters of the pool of one hugetlb size; per node -1: no such node. */
struct htlb_pool {
	long nr, free, resv, surplus;
	long node_nr[HIST_NODES], node_free[HIST_NODES];
	long node_surplus[HIST_NODES];
};

struct opts {
	unsigned long kbs[MAX_SIZES];
	int nr_kbs;
	unsigned int kinds;		/* bit per enum kind */
	unsigned int scs;		/* bit per enum sc */
	int route[MAX_ROUTE];
	int nr_route;
	unsigned long size_mb;
	unsigned long writer_secs;	/* 0: matrix mode */
	int threads;
	unsigned long hot_pages;	/* -H: writers on these pages only */
	int kept_ok;			/* -K: pages may stay behind */
	int splicers;			/* -S: page-cache reference holders */
	int compact_node;		/* -C: compaction mode, or -1 */
	int quiet;
	const char *dir;		/* where the file kind lives */
};

struct tally {
	int ok, failed, skipped, setup;
	int retried;		/* cases with a hop that needed a retry */
};

/* One case: its region and how it is doing. */
struct tcase {
	const struct opts *o;
	enum kind kind;
	unsigned long kb;
	enum sc sc;
	char name[64];
	char where[48];		/* prefix of failure reasons */
	char why[WHY_LEN];	/* first failure reason */
	char sys_err[128];	/* the syscall reported a failure */
	char note[192];		/* extra information for the "ok" line */
	int retried;		/* hops that needed a retry of their call */
	size_t len;
	unsigned long npages;
	char *buf;
	int fd;
	int mflags;		/* MPOL_MF_MOVE or MPOL_MF_MOVE_ALL */
	uint64_t seed;
	void **addrs;		/* every 4K page of the region */
	int *nodes;		/* move_pages() target per page */
	int *status;		/* move_pages() status per page */
	pid_t child;		/* shared kind: second mapper, or 0 */
	int go_fd;		/* to the child: final node */
	struct htlb_pool pool;	/* hugetlb kinds: with the region faulted in */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: migcheck [options]\n"
"  -k LIST   folio sizes in KiB (default all = 4,16,64,256,2048; 64,256,2048\n"
"            with 64K pages)\n"
"  -m LIST   mapping kinds: private,shared,memfd,file,mlock (default all;\n"
"            with -W: private,memfd); on request only: hugetlb (private)\n"
"            and hugetlb_shared, which need free hugetlb pages of the folio\n"
"            size on the first node of the route\n"
"  -c LIST   syscalls: move_pages,migrate_pages,mbind (default all); on\n"
"            request only: soft_offline, madvise(MADV_SOFT_OFFLINE) of\n"
"            every folio, migrated within its node instead of along the\n"
"            route (hugetlb kinds; the old page frames are lost for good)\n"
"  -n NODES  route: allocate on the first node, then hop along (default\n"
"            0,1,2,0)\n"
"  -s MiB    region size per case (default 4)\n"
"  -d DIR    directory for the file kind (default /mnt)\n"
"  -W SECS   writers mode: threads increment counters in the region while\n"
"            move_pages() moves it around the route, SECS per case; file\n"
"            kind: one more thread keeps calling fsync(), and after the\n"
"            writers the file read with O_DIRECT must equal the mapping\n"
"  -T N      writer threads (default 3)\n"
"  -H PAGES  with -W: every writer thread writes only the first PAGES pages\n"
"            of the region (each its own word of each), so that their TLB\n"
"            entries stay warm on the writers' CPUs; the whole region moves\n"
"  -K        with -W: a migrator may keep pairs (their folios then stay\n"
"            where they were for that move): the last move, with nobody\n"
"            writing, need not move every page; every byte is checked\n"
"  -S N      file and memfd kinds: N threads keep splicing the file into a\n"
"            pipe and draining it during each move; pipe buffers hold\n"
"            page-cache references that race with migration\n"
"  -C NODE   compaction mode: fill -s MiB of 4K pages on NODE, free every\n"
"            other page, compact NODE, verify every remaining byte\n"
"  -q        quiet: only failures and the summary line\n"
"exit: 0 all passed, 1 a check failed, 2 setup problem, 4 skipped\n");
}

/* ---- option parsing ------------------------------------------------ */

static int parse_sizes(const char *arg, struct opts *o)
{
	o->nr_kbs = parse_folio_sizes(arg, o->kbs, MAX_SIZES);
	return o->nr_kbs > 0 ? 0 : -1;
}

/* Comma list of names from @names into a bit mask; "all" = @all. */
static int parse_names(const char *arg, const char *const *names, int n,
		       unsigned int all, unsigned int *mask)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	int i, ret = 0;

	if (!dup)
		return -1;
	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*mask |= all;
			continue;
		}
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n)
			ret = -1;
		else
			*mask |= 1U << i;
	}
	free(dup);
	return ret || !*mask ? -1 : 0;
}

/* One option; non-zero if its argument is bad. */
static int parse_opt(int c, const char *arg, struct opts *o)
{
	unsigned long v;

	switch (c) {
	case 'k':
		return parse_sizes(arg, o);
	case 'm':
		return parse_names(arg, kind_names, NR_KINDS, BASE_KINDS,
				   &o->kinds);
	case 'c':
		return parse_names(arg, sc_names, NR_SCS, BASE_SCS, &o->scs);
	case 'n':
		o->nr_route = parse_route(arg, o->route, MAX_ROUTE, MAX_NODE);
		return o->nr_route < 0;
	case 's':
		return parse_ulong(arg, &o->size_mb) || !o->size_mb ||
		       o->size_mb > MAX_SIZE_MB;
	case 'd':
		o->dir = arg;
		return 0;
	case 'W':
		return parse_ulong(arg, &o->writer_secs) || !o->writer_secs ||
		       o->writer_secs > 86400;
	case 'H':
		return parse_ulong(arg, &o->hot_pages) || !o->hot_pages;
	case 'K':
		o->kept_ok = 1;
		return 0;
	case 'T':
		if (parse_ulong(arg, &v) || !v || v > MAX_THREADS)
			return -1;
		o->threads = v;
		return 0;
	case 'S':
		if (parse_ulong(arg, &v) || v > MAX_THREADS)
			return -1;
		o->splicers = v;
		return 0;
	case 'C':
		if (parse_ulong(arg, &v) || v > MAX_NODE)
			return -1;
		o->compact_node = v;
		return 0;
	case 'q':
		o->quiet = 1;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	}
	return 1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c, i, kinds_given = 0;

	while ((c = getopt(argc, argv, "k:m:c:n:s:d:W:T:H:KS:C:qh")) != -1) {
		kinds_given |= c == 'm';
		if (parse_opt(c, optarg, o)) {
			if (c != '?')
				fprintf(stderr, "migcheck: bad argument for -%c: '%s'\n",
					c, optarg);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "migcheck: stray argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->writer_secs && !kinds_given)
		o->kinds = 1U << K_PRIVATE | 1U << K_MEMFD;
	for (i = 0; i < o->nr_kbs; i++) {
		if ((o->size_mb << 20) % (o->kbs[i] * 1024)) {
			fprintf(stderr, "migcheck: -s %lu MiB is not a multiple of %lu KiB folios\n",
				o->size_mb, o->kbs[i]);
			return -1;
		}
	}
	return 0;
}

/* ---- node masks for libnuma's <numaif.h> syscalls ------------------ */

static void node_mask(unsigned long *mask, int node)
{
	memset(mask, 0, MASK_BITS / 8);
	mask[node / LONG_BITS] = 1UL << (node % LONG_BITS);
}

/* ---- results -------------------------------------------------------- */

static int __attribute__((format(printf, 3, 4)))
note_err(struct tcase *c, int r, const char *fmt, ...)
{
	va_list ap;
	int len = 0;

	if (c->why[0])
		return r;	/* the first reason is the interesting one */
	if (c->where[0])	/* much shorter than c->why */
		len = snprintf(c->why, sizeof(c->why), "%s: ", c->where);
	va_start(ap, fmt);
	vsnprintf(c->why + len, sizeof(c->why) - len, fmt, ap);
	va_end(ap);
	return r;
}

#define fail(c, ...)		note_err(c, CASE_FAIL, __VA_ARGS__)
#define setup_err(c, ...)	note_err(c, CASE_SETUP, __VA_ARGS__)

static void report(const struct tcase *c, int r, struct tally *t)
{
	int quiet = c->o->quiet;

	switch (r) {
	case CASE_OK:
		t->ok++;
		if (!quiet)
			printf("ok %s%s%s%s\n", c->name, c->note[0] ? ": " : "",
			       c->note, c->retried ? " (retried)" : "");
		break;
	case CASE_SKIP:
		t->skipped++;
		if (!quiet)
			printf("skip %s: %s\n", c->name, c->why);
		break;
	case CASE_SETUP:
		t->setup++;
		t->failed++;
		printf("FAIL %s: setup: %s\n", c->name, c->why);
		break;
	default:
		t->failed++;
		printf("FAIL %s: %s\n", c->name, c->why);
		break;
	}
	t->retried += c->retried > 0;
	fflush(stdout);
}

/* ---- folio sizes per kind ------------------------------------------- */

static int kind_is_shared(enum kind k)
{
	return k == K_SHARED || k == K_MEMFD || k == K_FILE ||
	       k == K_HUGETLB_SHARED;
}

static int kind_is_hugetlb(enum kind k)
{
	return k == K_HUGETLB || k == K_HUGETLB_SHARED;
}

/* ---- hugetlb pool --------------------------------------------------- */

/* A number from a sysfs file, -1 if it cannot be read. */
static long __attribute__((format(printf, 1, 2)))
read_long(const char *fmt, ...)
{
	char path[256], buf[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

#define POOL_FILE	HTLB_DIR "/hugepages-%lukB/%s"
#define NODE_POOL_FILE	NODE_DIR "/node%d/hugepages/hugepages-%lukB/%s"

static int pool_read(unsigned long kb, struct htlb_pool *p)
{
	int n;

	p->nr = read_long(POOL_FILE, kb, "nr_hugepages");
	p->free = read_long(POOL_FILE, kb, "free_hugepages");
	p->resv = read_long(POOL_FILE, kb, "resv_hugepages");
	p->surplus = read_long(POOL_FILE, kb, "surplus_hugepages");
	for (n = 0; n < HIST_NODES; n++) {
		p->node_nr[n] = read_long(NODE_POOL_FILE, n, kb, "nr_hugepages");
		p->node_free[n] = read_long(NODE_POOL_FILE, n, kb,
					    "free_hugepages");
		p->node_surplus[n] = read_long(NODE_POOL_FILE, n, kb,
					       "surplus_hugepages");
	}
	return p->nr < 0 || p->free < 0 || p->resv < 0 || p->surplus < 0 ?
	       -1 : 0;
}

/* One line on stderr: the pool of the case's size, @when. */
static void pool_print(const struct tcase *c, const char *when,
		       const struct htlb_pool *p)
{
	char nodes[256] = "";
	int n, len = 0;

	for (n = 0; n < HIST_NODES; n++)
		if (p->node_nr[n] >= 0 && len < (int)sizeof(nodes))
			len += snprintf(nodes + len, sizeof(nodes) - len,
					" node%d %ld/%ld/%ld", n, p->node_nr[n],
					p->node_free[n], p->node_surplus[n]);
	fprintf(stderr, "pool %s %s: total %ld free %ld resv %ld surplus %ld; nr/free/surplus:%s\n",
		c->name, when, p->nr, p->free, p->resv, p->surplus, nodes);
}

static int pool_save(struct tcase *c, struct htlb_pool *p)
{
	if (pool_read(c->kb, p))
		return setup_err(c, "cannot read the counters of the %lu KiB hugetlb pool",
				 c->kb);
	return CASE_OK;
}

/*
 * The pool counters must be those of @ref; they are printed whatever they
 * are, and left in @now.
 */
static int pool_check(struct tcase *c, const struct htlb_pool *ref,
		      struct htlb_pool *now)
{
	char msg[160];

	if (pool_read(c->kb, now))
		return fail(c, "cannot read the hugetlb pool counters");
	pool_print(c, c->where, now);
	if (now->nr == ref->nr && now->free == ref->free &&
	    now->resv == ref->resv && now->surplus == ref->surplus)
		return CASE_OK;
	snprintf(msg, sizeof(msg),
		 "hugetlb pool changed: total %ld -> %ld, free %ld -> %ld, resv %ld -> %ld, surplus %ld -> %ld",
		 ref->nr, now->nr, ref->free, now->free, ref->resv, now->resv,
		 ref->surplus, now->surplus);
	/* the case reports its first failure only */
	fprintf(stderr, "pool %s %s: %s\n", c->name, c->where, msg);
	return fail(c, "%s", msg);
}

/* Give every node the number of pages it had in @p: the next case's start. */
static void pool_restore(const struct tcase *c, const struct htlb_pool *p)
{
	struct htlb_pool now;
	char path[256], val[32];
	int n, fd, len;

	pool_read(c->kb, &now);
	for (n = 0; n < HIST_NODES; n++) {
		if (p->node_nr[n] < 0 || now.node_nr[n] == p->node_nr[n])
			continue;
		snprintf(path, sizeof(path), NODE_POOL_FILE, n, c->kb,
			 "nr_hugepages");
		len = snprintf(val, sizeof(val), "%ld", p->node_nr[n]);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, val, len) != len)
			fprintf(stderr, "migcheck: cannot set %s to %s: %s\n",
				path, val, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	pool_read(c->kb, &now);
	pool_print(c, "set back", &now);
}

/*
 * After the munmap the pool must be as before the mmap; pages left on
 * other nodes go back where they were.
 */
static int pool_finish(struct tcase *c, const struct htlb_pool *before,
		       int r)
{
	struct htlb_pool now;
	int pr;

	snprintf(c->where, sizeof(c->where), "after munmap");
	pr = pool_check(c, before, &now);
	if (pr || memcmp(before->node_nr, now.node_nr, sizeof(now.node_nr)))
		pool_restore(c, before);
	return r ? r : pr;
}

static int hugetlb_map_flags(unsigned long kb)
{
	return MAP_HUGETLB | __builtin_ctzl(kb * 1024) << MAP_HUGE_SHIFT;
}

/* Why the case cannot have hugetlb folios of @kb KiB, NULL if it can. */
static const char *hugetlb_unsupported(const struct opts *o, unsigned long kb)
{
	unsigned long need = (o->size_mb << 10) / kb;
	int node = o->route[0];
	static char msg[160];
	long free;

	if (read_long(POOL_FILE, kb, "nr_hugepages") < 0)
		return "no hugetlb pages of this size (no " HTLB_DIR "/hugepages-<N>kB)";
	free = read_long(NODE_POOL_FILE, node, kb, "free_hugepages");
	if (free >= 0 && (unsigned long)free >= need)
		return NULL;
	snprintf(msg, sizeof(msg),
		 "node %d has %ld free hugetlb pages of this size, the case needs %lu (nodeN/hugepages/*/nr_hugepages)",
		 node, free, need);
	return msg;
}

/* Why @kb KiB folios cannot be had for @kind, NULL if they can. */
static const char *size_unsupported(const struct opts *o, enum kind kind,
				    unsigned long kb)
{
	static char msg[160];
	struct stat sd;

	switch (kind) {
	case K_PRIVATE:
	case K_MLOCK:
		return mthp_available(kb) ? NULL :
			"no anon folios of this size (no hugepages-<N>kB/enabled)";
	case K_SHARED:
		return shmem_thp_available(kb) ? NULL :
			"no shmem folios of this size (no hugepages-<N>kB/shmem_enabled)";
	case K_MEMFD:
		/* 6.12: tmpfs follows the top-level shmem_enabled only */
		if (kb == MIG_PAGE_KB || (kb * 1024 == read_pmd_pagesize() && shmem_thp_available(kb)))
			return NULL;
		return "memfd (tmpfs) folios are base pages or PMD-size only; per-size shmem_enabled applies to MAP_SHARED|MAP_ANONYMOUS only";
	case K_HUGETLB:
	case K_HUGETLB_SHARED:
		return hugetlb_unsupported(o, kb);
	case K_FILE:
		if (stat(o->dir, &sd) || !S_ISDIR(sd.st_mode) ||
		    access(o->dir, W_OK)) {
			snprintf(msg, sizeof(msg), "%s is not a writable directory",
				 o->dir);
			return msg;
		}
		if (kb != MIG_PAGE_KB)
			return "page-cache folio size cannot be selected (ext4 in 6.12: base pages only)";
		return NULL;
	default:
		return "unknown kind";
	}
}

static int select_size(enum kind kind, unsigned long kb)
{
	switch (kind) {
	case K_PRIVATE:
	case K_MLOCK:
		return mthp_select(kb);
	case K_SHARED:
	case K_MEMFD:
		return shmem_thp_select(kb);
	default:
		return 0;
	}
}

/* ---- regions ----------------------------------------------------------- */

static int alloc_arrays(struct tcase *c)
{
	unsigned long i;

	c->addrs = malloc(c->npages * sizeof(*c->addrs));
	c->nodes = malloc(c->npages * sizeof(*c->nodes));
	c->status = malloc(c->npages * sizeof(*c->status));
	if (!c->addrs || !c->nodes || !c->status)
		return setup_err(c, "out of memory for %lu page addresses",
				 c->npages);
	for (i = 0; i < c->npages; i++)
		c->addrs[i] = c->buf + i * MIG_PAGE_SIZE;
	return CASE_OK;
}

static int open_backing(struct tcase *c)
{
	char path[4096];

	if (c->kind == K_MEMFD) {
		c->fd = memfd_create("migcheck", MFD_CLOEXEC);
		if (c->fd < 0)
			return setup_err(c, "memfd_create: %s", strerror(errno));
	} else {
		snprintf(path, sizeof(path), "%s/migcheck.%d", c->o->dir,
			 (int)getpid());
		c->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (c->fd < 0)
			return setup_err(c, "open %s: %s", path, strerror(errno));
		/* the page cache stays while mapped; nothing is left behind */
		unlink(path);
	}
	if (ftruncate(c->fd, c->len))
		return setup_err(c, "ftruncate %zu: %s", c->len,
				 strerror(errno));
	return CASE_OK;
}

/* Map the region of the case's kind and fault it in on @node. */
static int region_setup(struct tcase *c, int node)
{
	int r;

	c->fd = -1;
	switch (c->kind) {
	case K_PRIVATE:
	case K_MLOCK:
		c->buf = region_alloc(c->len, c->kb, node);
		if (!c->buf)
			return setup_err(c, "cannot allocate %zu bytes", c->len);
		if (c->kind == K_MLOCK && mlock(c->buf, c->len))
			return setup_err(c, "mlock: %s", strerror(errno));
		break;
	case K_SHARED:
		c->buf = region_map(c->len, c->kb,
				    MAP_SHARED | MAP_ANONYMOUS, -1);
		break;
	case K_HUGETLB:
	case K_HUGETLB_SHARED:
		c->buf = region_map(c->len, c->kb,
				    (c->kind == K_HUGETLB ? MAP_PRIVATE : MAP_SHARED) |
				    MAP_ANONYMOUS | hugetlb_map_flags(c->kb), -1);
		break;
	default:
		r = open_backing(c);
		if (r)
			return r;
		c->buf = region_map(c->len, c->kb, MAP_SHARED, c->fd);
		break;
	}
	if (!c->buf)
		return setup_err(c, "cannot map %zu bytes", c->len);
	if (c->kind != K_PRIVATE && c->kind != K_MLOCK &&
	    region_fault_in(c->buf, c->len, node))
		return setup_err(c, "cannot fault the region in on node %d",
				 node);
	return alloc_arrays(c);
}

static void child_stop(struct tcase *c);

static void region_teardown(struct tcase *c)
{
	child_stop(c);
	region_free(c->buf, c->len);
	if (c->fd >= 0)
		close(c->fd);
	free(c->addrs);
	free(c->nodes);
	free(c->status);
	c->buf = NULL;
	c->addrs = NULL;
	c->nodes = c->status = NULL;
	c->fd = -1;
}

/* ---- checks ---------------------------------------------------------- */

static int check_data(struct tcase *c)
{
	long off = verify_pattern(c->buf, c->len, c->seed);

	if (off < 0)
		return CASE_OK;
	return fail(c, "data corrupted, first bad byte at offset %ld (page %ld), details on stderr",
		    off, off / (long)MIG_PAGE_SIZE);
}

/* Node of every page into c->status; -1 if the query itself failed. */
static int query_nodes(struct tcase *c)
{
	if (move_pages(0, c->npages, c->addrs, NULL, c->status, 0) < 0)
		return -1;
	return 0;
}

/* "12 on node 1, 3 not present" for the pages in c->status not on @node. */
static void describe_strays(const struct tcase *c, int node, char *s,
			    size_t size)
{
	unsigned long on[HIST_NODES] = { 0 }, other = 0, err = 0, i;
	int first_err = 0, n, len = 0;

	for (i = 0; i < c->npages; i++) {
		n = c->status[i];
		if (n == node)
			continue;
		if (n >= 0 && n < HIST_NODES)
			on[n]++;
		else if (n >= 0)
			other++;
		else if (!err++)
			first_err = -n;
	}
	s[0] = '\0';
	for (n = 0; n < HIST_NODES; n++)
		if (on[n] && len < (int)size)
			len += snprintf(s + len, size - len, "%s%lu on node %d",
					len ? ", " : "", on[n], n);
	if (other && len < (int)size)
		len += snprintf(s + len, size - len, "%s%lu on nodes >= %d",
				len ? ", " : "", other, HIST_NODES);
	if (err && len < (int)size)
		snprintf(s + len, size - len, "%s%lu unknown (%s)",
			 len ? ", " : "", err, strerror(first_err));
}

/* Number of pages not on @node, -1 on error; fills c->status. */
static long count_strays(struct tcase *c, int node)
{
	unsigned long i;
	long bad = 0;

	if (query_nodes(c))
		return -1;
	for (i = 0; i < c->npages; i++)
		bad += c->status[i] != node;
	return bad;
}

static int check_nodes(struct tcase *c, int node)
{
	char strays[256];
	long bad = count_strays(c, node);

	if (bad < 0)
		return fail(c, "move_pages(query): %s", strerror(errno));
	if (!bad)
		return CASE_OK;
	describe_strays(c, node, strays, sizeof(strays));
	return fail(c, "%ld of %lu pages did not move to node %d: %s%s%s",
		    bad, c->npages, node, strays, c->sys_err[0] ? "; " : "",
		    c->sys_err);
}

static int check_size(struct tcase *c)
{
	if (kind_is_hugetlb(c->kind) ?
	    !check_hugetlb_size(c->buf, c->len, c->kb) :
	    !check_folio_size(c->buf, c->len, c->kb))
		return CASE_OK;
	return fail(c, "region is not made of %lu KiB folios, details on stderr",
		    c->kb);
}

/*
 * The mlock kind: every page must be mlocked, but after a migration only
 * the small folios.  6.12 re-mlocks only small folios when it maps the new
 * folio (__folio_add_anon_rmap()) and leaves large ones to reclaim, which
 * mlocks them again when it finds them in a VM_LOCKED vma.
 */
static int check_mlocked(struct tcase *c, int migrated)
{
	uint64_t large = BIT_ULL(KPF_COMPOUND_HEAD) | BIT_ULL(KPF_COMPOUND_TAIL);
	long n;

	if (c->kind != K_MLOCK)
		return CASE_OK;
	n = region_kpf_missing(c->buf, c->len, KPF_MLOCKED,
			       migrated ? large : 0);
	if (n < 0)
		return fail(c, "cannot read /proc/kpageflags");
	if (n)
		return fail(c, "%ld of %lu pages are not mlocked%s", n,
			    c->npages, migrated ? " (small folios)" : "");
	return CASE_OK;
}

/* ---- second mapper for the shared kind ------------------------------- */

enum { CHILD_OK, CHILD_DATA = 10, CHILD_NODE, CHILD_ABORT };

/*
 * Map every page (verify_pattern() reads them all), report, then wait for
 * the parent's migrations and check what this process sees afterwards.
 */
static void __attribute__((noreturn))
child_main(struct tcase *c, int ready, int go)
{
	char bad;
	int node;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	bad = verify_pattern(c->buf, c->len, c->seed) >= 0;
	if (write(ready, &bad, 1) != 1 || bad)
		_exit(CHILD_ABORT);
	/* where the pages are, and the pattern of the last hop */
	if (read(go, &node, sizeof(node)) != sizeof(node) ||
	    read(go, &c->seed, sizeof(c->seed)) != sizeof(c->seed))
		_exit(CHILD_ABORT);
	if (verify_pattern(c->buf, c->len, c->seed) >= 0)
		_exit(CHILD_DATA);
	if (region_pages_on_node(c->buf, c->len, node))
		_exit(CHILD_NODE);
	_exit(CHILD_OK);
}

static int child_start(struct tcase *c)
{
	int ready[2], go[2];
	char bad = 1;
	ssize_t n;

	if (pipe(ready))
		return setup_err(c, "pipe: %s", strerror(errno));
	if (pipe(go)) {
		close(ready[0]);
		close(ready[1]);
		return setup_err(c, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	c->child = fork();
	if (!c->child) {
		close(ready[0]);
		close(go[1]);
		child_main(c, ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	c->go_fd = go[1];
	if (c->child < 0) {
		c->child = 0;
		close(ready[0]);
		close(c->go_fd);
		return setup_err(c, "fork: %s", strerror(errno));
	}
	n = read(ready[0], &bad, 1);
	close(ready[0]);
	if (n != 1 || bad)
		return fail(c, "the second mapper saw bad data before any migration");
	return CASE_OK;
}

/* Tell the child where the pages are now and collect its verdict. */
static int child_finish(struct tcase *c, int node)
{
	int st, r = CASE_OK;
	pid_t pid;

	if (write(c->go_fd, &node, sizeof(node)) != sizeof(node) ||
	    write(c->go_fd, &c->seed, sizeof(c->seed)) != sizeof(c->seed))
		r = setup_err(c, "cannot signal the second mapper: %s",
			      strerror(errno));
	close(c->go_fd);
	pid = waitpid(c->child, &st, 0);
	c->child = 0;
	if (pid < 0)
		return setup_err(c, "waitpid: %s", strerror(errno));
	if (r)
		return r;
	if (!WIFEXITED(st))
		return fail(c, "second mapper died (status %#x)", st);
	switch (WEXITSTATUS(st)) {
	case CHILD_OK:
		return CASE_OK;
	case CHILD_DATA:
		return fail(c, "the second mapper sees corrupted data, details on stderr");
	case CHILD_NODE:
		return fail(c, "the second mapper sees pages off node %d", node);
	default:
		return fail(c, "second mapper exited with %d",
			    WEXITSTATUS(st));
	}
}

/* Abandon a child that was not finished: it exits when the pipe closes. */
static void child_stop(struct tcase *c)
{
	if (!c->child)
		return;
	close(c->go_fd);
	waitpid(c->child, NULL, 0);
	c->child = 0;
}

/* ---- migration ----------------------------------------------------------- */

/* move_pages() with every 4K address: robust against split folios. */
static int do_move_pages(struct tcase *c, int to)
{
	unsigned long i;
	long rc;

	for (i = 0; i < c->npages; i++)
		c->nodes[i] = to;
	rc = move_pages(0, c->npages, c->addrs, c->nodes, c->status,
			c->mflags);
	if (rc < 0)
		return fail(c, "move_pages(%lu pages to node %d): %s",
			    c->npages, to, strerror(errno));
	if (rc > 0)
		snprintf(c->sys_err, sizeof(c->sys_err),
			 "move_pages returned %ld (pages not migrated)", rc);
	return CASE_OK;
}

/* The whole process moves; only the region is checked. */
static int do_migrate_pages(struct tcase *c, int from, int to)
{
	unsigned long fmask[MASK_BITS / LONG_BITS];
	unsigned long tmask[MASK_BITS / LONG_BITS];

	node_mask(fmask, from);
	node_mask(tmask, to);
	/* > 0: pages elsewhere in the process that did not move */
	if (migrate_pages(0, MASK_BITS + 1, fmask, tmask) < 0)
		return fail(c, "migrate_pages(%d -> %d): %s", from, to,
			    strerror(errno));
	return CASE_OK;
}

static int do_mbind(struct tcase *c, int to)
{
	unsigned long mask[MASK_BITS / LONG_BITS];
	int err = 0;

	node_mask(mask, to);
	if (mbind(c->buf, c->len, MPOL_BIND, mask, MASK_BITS + 1,
		  c->mflags | MPOL_MF_STRICT))
		err = errno;
	if (mbind(c->buf, c->len, MPOL_DEFAULT, NULL, 0, 0))
		return fail(c, "mbind(MPOL_DEFAULT) to reset the policy: %s",
			    strerror(errno));
	if (err == EIO)	/* some folio did not move: checked next */
		snprintf(c->sys_err, sizeof(c->sys_err),
			 "mbind(MPOL_BIND, node %d, MPOL_MF_STRICT): %s", to,
			 strerror(err));
	else if (err)
		return fail(c, "mbind(MPOL_BIND, node %d): %s", to,
			    strerror(err));
	return CASE_OK;
}

/*
 * Soft offline migrates every folio to a new frame (reason
 * MR_MEMORY_FAILURE), on the same node if it can, and takes the old frame
 * out of use for good.  No folio may keep its frame.
 */
static int do_soft_offline(struct tcase *c)
{
	size_t step = c->kb * 1024;
	unsigned long n = c->len / step, i, kept = 0, first = 0;
	uint64_t *pfns = calloc(2 * n, sizeof(*pfns));
	int r = CASE_OK;

	if (!pfns)
		return setup_err(c, "out of memory for %lu PFNs", 2 * n);
	if (region_pfns(c->buf, c->len, step, pfns)) {
		r = setup_err(c, "cannot read the page frames");
		goto out;
	}
	if (madvise(c->buf, c->len, MADV_SOFT_OFFLINE)) {
		r = fail(c, "madvise(MADV_SOFT_OFFLINE): %s", strerror(errno));
		goto out;
	}
	if (region_pfns(c->buf, c->len, step, pfns + n)) {
		r = setup_err(c, "cannot read the page frames");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (pfns[i] == pfns[n + i] && !kept++)
			first = i;
	if (kept)
		r = fail(c, "%lu of %lu folios kept their page frame, first: folio %lu, pfn %#llx",
			 kept, n, first, (unsigned long long)pfns[first]);
out:
	free(pfns);
	return r;
}

static int migrate_region(struct tcase *c, int from, int to)
{
	c->sys_err[0] = '\0';
	switch (c->sc) {
	case SC_MOVE_PAGES:
		return do_move_pages(c, to);
	case SC_MIGRATE_PAGES:
		return do_migrate_pages(c, from, to);
	case SC_SOFT_OFFLINE:
		return do_soft_offline(c);
	default:
		return do_mbind(c, to);
	}
}

/* ---- matrix mode ------------------------------------------------------ */

#define MAX_RETRIES	2

/*
 * After a failed placement check: migration may refuse a folio for a
 * moment (no free THP on the target node, a passing reference) and say
 * so. Call the same syscall again, at most MAX_RETRIES times, so that a
 * call that moved nothing still fails; the retry is reported and counted.
 * Returns the pages still not on @to, -1 if the call failed.
 */
static long try_again(struct tcase *c, int from, int to)
{
	size_t len = strlen(c->why);
	long bad = -1;
	int i;

	for (i = 0; i < MAX_RETRIES && bad; i++) {
		if (migrate_region(c, from, to))
			return -1;
		bad = count_strays(c, to);
		if (bad < 0)
			return -1;
	}
	if (len < sizeof(c->why))
		snprintf(c->why + len, sizeof(c->why) - len,
			 "; %d more %s calls left %ld", i, sc_names[c->sc],
			 bad);
	c->retried++;
	return bad;
}

static int check_hop(struct tcase *c, int from, int to, int first)
{
	int r;

	/* data first: it also maps in what migration may have zapped */
	r = check_data(c);
	if (!r) {
		r = check_nodes(c, to);
		/*
		 * If a retry moves everything, check the data again. Not for
		 * soft offline, which would take more frames out of use.
		 */
		if (r && c->sc != SC_SOFT_OFFLINE &&
		    try_again(c, from, to) == 0) {
			fprintf(stderr, "note: %s %s: %s\n", c->name, c->where, c->why);
			c->why[0] = '\0';
			c->sys_err[0] = '\0';
			r = check_data(c);
		}
	}
	/*
	 * Only after the first hop: 6.12 splits an anon mTHP on its second
	 * migration (see bench_rep() in migbench.c).  hugetlb folios never
	 * split.
	 */
	if (!r && (first || kind_is_hugetlb(c->kind)))
		r = check_size(c);
	if (!r)
		r = check_mlocked(c, 1);
	if (!r && c->sys_err[0])
		r = fail(c, "%s, although every page is on node %d",
			 c->sys_err, to);
	/* printed whatever happened before */
	if (kind_is_hugetlb(c->kind)) {
		struct htlb_pool now;
		int pr = pool_check(c, &c->pool, &now);

		r = r ? r : pr;
	}
	return r;
}

/* ---- splicers: page-cache references that come and go ------------------ */

struct splicer {
	pthread_t tid;
	const struct tcase *c;
	int pipe[2];
};

static int splicers_stop;

/*
 * splice() moves references to the file's page-cache folios into the pipe,
 * where they stay until the pipe is read: a reference may appear between
 * a batch copy and the move of the same folio, which must then retry.
 */
static void *splicer_main(void *arg)
{
	struct splicer *sp = arg;
	static char sink[64 * 1024];
	loff_t off = 0;
	ssize_t n;

	while (!__atomic_load_n(&splicers_stop, __ATOMIC_RELAXED)) {
		n = splice(sp->c->fd, &off, sp->pipe[1], NULL, sizeof(sink), 0);
		if (n <= 0 || (size_t)off >= sp->c->len)
			off = 0;
		while (n > 0) {
			ssize_t got = read(sp->pipe[0], sink, n);

			if (got <= 0)
				break;
			n -= got;
		}
	}
	return NULL;
}

static int splicers_start(struct tcase *c, struct splicer *sps, int nt)
{
	int i;

	__atomic_store_n(&splicers_stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++) {
		sps[i].c = c;
		if (pipe(sps[i].pipe) ||
		    pthread_create(&sps[i].tid, NULL, splicer_main, &sps[i])) {
			fprintf(stderr, "migcheck: cannot start splicer\n");
			exit(EXIT_SETUP);
		}
	}
	return nt;
}

static void splicers_join(struct splicer *sps, int nt)
{
	int i;

	__atomic_store_n(&splicers_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++) {
		pthread_join(sps[i].tid, NULL);
		close(sps[i].pipe[0]);
		close(sps[i].pipe[1]);
	}
}

/* Node of the region after the last hop. */
static int last_node(const struct tcase *c)
{
	if (c->sc == SC_SOFT_OFFLINE)
		return c->o->route[0];
	return c->o->route[c->o->nr_route - 1];
}

/*
 * Unique per case; the pid makes it unique per run too, so that a page
 * still holding an earlier run's copy cannot pass for this run's data.
 */
static uint64_t seed_for(enum kind kind, unsigned long kb, int sc)
{
	return ((uint64_t)(kind + 1) << 48 | (uint64_t)kb << 16 |
		(unsigned int)(sc + 1)) ^ (uint64_t)getpid() << 24;
}

static int run_hops(struct tcase *c)
{
	const struct opts *o = c->o;
	struct splicer sps[MAX_THREADS];
	int h, from, to, r = CASE_OK, nr_sps = 0;
	/* soft offline: one round, within the first node */
	int nr_hops = c->sc == SC_SOFT_OFFLINE ? 1 : o->nr_route - 1;

	for (h = 0; h < nr_hops && !r; h++) {
		from = o->route[h];
		to = c->sc == SC_SOFT_OFFLINE ? from : o->route[h + 1];
		snprintf(c->where, sizeof(c->where), "hop %d (node %d -> %d)",
			 h + 1, from, to);
		/*
		 * A new pattern for every hop: the destination of a copy that
		 * was skipped may hold the previous hop's data, as the folios
		 * that hop freed are often the ones allocated again.
		 */
		if (h) {
			c->seed = seed_for(c->kind, c->kb, c->sc) ^
				  (uint64_t)h << 56;
			fill_pattern(c->buf, c->len, c->seed);
		}
		/* they race with the move; the checks want the pages back */
		if (c->fd >= 0 && o->splicers)
			nr_sps = splicers_start(c, sps, o->splicers);
		r = migrate_region(c, from, to);
		splicers_join(sps, nr_sps);
		if (!r)
			r = check_hop(c, from, to, !h);
	}
	return r;
}

/* Fresh region of the case on @node, in folios of the requested size. */
static int prepare(struct tcase *c, int node)
{
	int r;

	snprintf(c->where, sizeof(c->where), "before migration");
	if (select_size(c->kind, c->kb))
		return setup_err(c, "cannot select %lu KiB folios", c->kb);
	r = region_setup(c, node);
	if (r)
		return r;
	/* the size is offered: not getting it is a failure */
	r = check_size(c);
	if (r)
		return r;
	if (count_strays(c, node))
		return setup_err(c, "region not allocated on node %d", node);
	if (check_mlocked(c, 0))
		return CASE_SETUP;
	fill_pattern(c->buf, c->len, c->seed);
	if (kind_is_hugetlb(c->kind)) {
		snprintf(c->where, sizeof(c->where), "faulted in on node %d",
			 node);
		r = pool_save(c, &c->pool);
		if (r)
			return r;
		pool_print(c, c->where, &c->pool);
	}
	if (c->kind == K_SHARED || c->kind == K_HUGETLB_SHARED)
		return child_start(c);
	return CASE_OK;
}

static void case_init(struct tcase *c, const struct opts *o, enum kind kind,
		      unsigned long kb, int sc)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->kind = kind;
	c->kb = kb;
	c->sc = sc;
	c->fd = -1;
	c->len = o->size_mb << 20;
	c->npages = c->len / MIG_PAGE_SIZE;
	c->mflags = kind_is_shared(kind) ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE;
	c->seed = seed_for(kind, kb, sc);
}

static int run_case(const struct opts *o, enum kind kind, unsigned long kb,
		    enum sc sc, struct tally *t)
{
	const char *skip = size_unsupported(o, kind, kb);
	int r, hugetlb = kind_is_hugetlb(kind);
	struct htlb_pool before;
	struct tcase c;

	if (sc == SC_SOFT_OFFLINE && !hugetlb)
		skip = "soft offline of a large folio splits it and offlines one page; hugetlb kinds only";
	case_init(&c, o, kind, kb, sc);
	snprintf(c.name, sizeof(c.name), "%s-%luK-%s", kind_names[kind], kb,
		 sc_names[sc]);
	if (skip) {
		snprintf(c.why, sizeof(c.why), "%s", skip);
		r = CASE_SKIP;
	} else if (!hugetlb || !(r = pool_save(&c, &before))) {
		r = prepare(&c, o->route[0]);
		if (!r)
			r = run_hops(&c);
		snprintf(c.where, sizeof(c.where), "after the last hop");
		if (!r && c.child)
			r = child_finish(&c, last_node(&c));
		region_teardown(&c);
		if (hugetlb)
			r = pool_finish(&c, &before, r);
	}
	report(&c, r, t);
	return r;
}

static void run_matrix(const struct opts *o, struct tally *t)
{
	int k, i, s;

	for (k = 0; k < NR_KINDS; k++)
		for (i = 0; i < o->nr_kbs && o->kinds & 1U << k; i++)
			for (s = 0; s < NR_SCS; s++)
				if (o->scs & 1U << s)
					run_case(o, k, o->kbs[i], s, t);
}

/* ---- writers mode ------------------------------------------------------- */

struct writer {
	pthread_t tid;
	uint64_t *buf;		/* the region */
	unsigned long first, step, end;	/* its pages: first + k * step < end */
	int id;
	uint64_t *base;		/* counter values before the start */
	uint64_t *count;	/* increments made, per counter */
	pthread_barrier_t *start;
};

struct wstats {
	unsigned long rounds;	/* move_pages() calls over the region */
	unsigned long moved;	/* pages found on the target after a round */
	unsigned long behind;	/* pages not on the target after a round */
	unsigned long fsyncs;	/* file kind: fsync() calls meanwhile */
	int fsync_err;		/* errno of a failed fsync(), or 0 */
};

/*
 * File kind: a thread keeps calling fsync() while the writers dirty the
 * pages and move_pages() moves them, so that folios are migrated dirty,
 * clean and under writeback.
 */
struct syncer {
	pthread_t tid;
	int fd;
	struct wstats *st;
};

static int writers_stop;

/*
 * Page @p belongs to thread p % T (with -H: pages 0 to PAGES - 1 to every
 * thread); each thread has its own word offset.
 */
static uint64_t *counter_of(uint64_t *buf, unsigned long p, int id)
{
	return buf + p * WORDS_PER_PAGE + (id * 8) % WORDS_PER_PAGE;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned long p, j;
	uint64_t *ctr;

	pthread_barrier_wait(w->start);
	while (!__atomic_load_n(&writers_stop, __ATOMIC_RELAXED)) {
		/* plain read-modify-write: a lost store stays visible */
		for (p = w->first, j = 0; p < w->end; p += w->step, j++) {
			ctr = counter_of(w->buf, p, w->id);
			*ctr += 1;
			w->count[j]++;
		}
	}
	return NULL;
}

static void *syncer_main(void *arg)
{
	struct syncer *s = arg;

	while (!__atomic_load_n(&writers_stop, __ATOMIC_RELAXED)) {
		if (fsync(s->fd)) {
			s->st->fsync_err = errno;
			break;
		}
		s->st->fsyncs++;
	}
	return NULL;
}

/*
 * After the writers: fsync(), then the file as read from the device
 * (O_DIRECT) must be what the mapping holds. A folio migrated while dirty
 * that lost its dirty state would have its last writes only in memory.
 */
static int check_on_disk(struct tcase *c)
{
	unsigned long p, bad = 0, first = 0;
	char path[64];
	ssize_t n = 0;
	size_t done;
	void *disk;
	int fd;

	if (fsync(c->fd))
		return fail(c, "fsync: %s", strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", c->fd);
	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return setup_err(c, "open %s O_DIRECT: %s", path,
				 strerror(errno));
	if (posix_memalign(&disk, MIG_PAGE_SIZE, c->len)) {
		close(fd);
		return setup_err(c, "out of memory for the file's contents");
	}
	for (done = 0; done < c->len; done += n) {
		n = pread(fd, (char *)disk + done, c->len - done, done);
		if (n <= 0)
			break;
	}
	close(fd);
	if (done < c->len) {
		free(disk);
		return fail(c, "O_DIRECT read at %zu: %s", done,
			    n ? strerror(errno) : "end of file");
	}
	for (p = 0; p < c->npages; p++)
		if (memcmp(c->buf + p * MIG_PAGE_SIZE,
			   (char *)disk + p * MIG_PAGE_SIZE, MIG_PAGE_SIZE) &&
		    !bad++)
			first = p;
	free(disk);
	if (!bad)
		return CASE_OK;
	return fail(c, "after fsync, %lu of %lu pages on disk differ from memory (first: page %lu)",
		    bad, c->npages, first);
}

static int writers_init(struct tcase *c, struct writer *ws, int nt,
			pthread_barrier_t *start)
{
	unsigned long per = c->npages / nt + 1, p, j;
	unsigned long hot = c->o->hot_pages;
	int i;

	if (hot > c->npages)
		return setup_err(c, "-H %lu: the region has %lu pages", hot,
				 c->npages);
	if (hot)
		per = hot;
	for (i = 0; i < nt; i++) {
		ws[i] = (struct writer) {
			.buf = (uint64_t *)c->buf, .id = i, .start = start,
			.first = hot ? 0 : i, .step = hot ? 1 : nt,
			.end = hot ? hot : c->npages,
			.base = calloc(per, sizeof(uint64_t)),
			.count = calloc(per, sizeof(uint64_t)),
		};
		if (!ws[i].base || !ws[i].count)
			return setup_err(c, "out of memory for counters");
		for (p = ws[i].first, j = 0; p < ws[i].end; p += ws[i].step, j++)
			ws[i].base[j] = *counter_of(ws[i].buf, p, i);
	}
	return CASE_OK;
}

static void writers_free(struct writer *ws, int nt)
{
	int i;

	for (i = 0; i < nt; i++) {
		free(ws[i].base);
		free(ws[i].count);
	}
}

static void writers_start(struct writer *ws, int nt)
{
	int i;

	__atomic_store_n(&writers_stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++) {
		if (pthread_create(&ws[i].tid, NULL, writer_main, &ws[i])) {
			/* the barrier would never open: give up for good */
			fprintf(stderr, "migcheck: pthread_create failed\n");
			exit(EXIT_SETUP);
		}
	}
	pthread_barrier_wait(ws[0].start);
}

static void writers_join(struct writer *ws, int nt)
{
	int i;

	__atomic_store_n(&writers_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nt; i++)
		pthread_join(ws[i].tid, NULL);
}

/* Nodes to cycle through: the route without a closing return to start. */
static int writer_cycle(const struct opts *o, int *cycle)
{
	int n = o->nr_route;

	if (n > 2 && o->route[n - 1] == o->route[0])
		n--;
	memcpy(cycle, o->route, n * sizeof(*cycle));
	return n;
}

/* Move the region around while the writers run, for the given time. */
static int writers_migrate(struct tcase *c, struct wstats *ws)
{
	uint64_t end = now_ns() + c->o->writer_secs * 1000000000ULL;
	int cycle[MAX_ROUTE], n = writer_cycle(c->o, cycle), h, to, r;
	long bad;

	for (h = 1; now_ns() < end; h++) {
		to = cycle[h % n];
		snprintf(c->where, sizeof(c->where), "round %d (to node %d)",
			 h, to);
		r = do_move_pages(c, to);
		if (r)
			return r;
		bad = count_strays(c, to);
		if (bad < 0)
			return fail(c, "move_pages(query): %s",
				    strerror(errno));
		ws->rounds++;
		ws->moved += c->npages - bad;
		ws->behind += bad;
	}
	return CASE_OK;
}

/* Every counter must hold its base plus what its thread counted. */
static int check_counters(struct tcase *c, struct writer *ws, int nt,
			  uint64_t *total)
{
	unsigned long p, j, lost = 0, pages = 0, ctrs = 0;
	uint64_t *ctr, want;
	char first[200] = "";
	int i;

	for (i = 0; i < nt; i++) {
		for (p = ws[i].first, j = 0; p < ws[i].end; p += ws[i].step, j++) {
			ctrs++;
			ctr = counter_of(ws[i].buf, p, i);
			want = ws[i].base[j] + ws[i].count[j];
			*total += ws[i].count[j];
			if (*ctr != want && !pages++)
				snprintf(first, sizeof(first),
					 "page %lu (thread %d): counter %llu, thread made %llu increments",
					 p, i,
					 (unsigned long long)(*ctr - ws[i].base[j]),
					 (unsigned long long)ws[i].count[j]);
			if (*ctr != want)
				lost += want - *ctr;
			/* back to the pattern, for the full data check */
			*ctr = ws[i].base[j];
		}
	}
	if (!pages)
		return CASE_OK;
	return fail(c, "%lu lost writes on %lu of %lu counters; first: %s",
		    lost, pages, ctrs, first);
}

static int writers_finish(struct tcase *c, struct writer *ws, int nt,
			  const struct wstats *st)
{
	int cycle[MAX_ROUTE], last, r;
	uint64_t total = 0;
	long left = 0;

	writer_cycle(c->o, cycle);
	last = cycle[0];
	snprintf(c->where, sizeof(c->where), "after the writers");
	r = st->fsync_err ? fail(c, "fsync: %s", strerror(st->fsync_err)) : 0;
	if (!r && c->kind == K_FILE)
		r = check_on_disk(c);
	if (!r)
		r = check_counters(c, ws, nt, &total);
	if (!r)
		r = check_data(c);
	/* one more move, with nobody writing: now every page must go */
	if (!r)
		r = do_move_pages(c, last);
	/* -K: the pairs a migrator kept stay where they were, data exact */
	if (!r && c->o->kept_ok) {
		left = count_strays(c, last);
		if (left < 0)
			r = fail(c, "move_pages(query): %s", strerror(errno));
		else if (left == (long)c->npages)
			r = fail(c, "the last move moved no page");
		if (!r)
			r = check_data(c);
	} else if (!r) {
		r = check_nodes(c, last);
	}
	if (!r)
		r = check_mlocked(c, 1);
	if (!r && c->child)
		r = child_finish(c, last);
	if (!r && !st->moved)
		r = fail(c, "no page moved while the writers ran");
	if (!r && !total)
		r = fail(c, "the writers made no increment");
	if (!r && c->kind == K_FILE && !st->fsyncs)
		r = fail(c, "no fsync() ran while the writers ran");
	snprintf(c->note, sizeof(c->note),
		 "%lu migration rounds, %lu pages moved, %lu left behind for a round, %llu increments, %lu fsyncs",
		 st->rounds, st->moved, st->behind, (unsigned long long)total,
		 st->fsyncs);
	if (c->o->kept_ok && left > 0 && strlen(c->note) + 48 < sizeof(c->note))
		snprintf(c->note + strlen(c->note),
			 sizeof(c->note) - strlen(c->note),
			 ", %ld left behind by the last move (-K)", left);
	return r;
}

static int run_writers_region(struct tcase *c)
{
	int nt = c->o->threads, r;
	struct wstats st = { 0 };
	pthread_barrier_t start;
	struct writer ws[MAX_THREADS];
	struct syncer sy = { .fd = c->fd, .st = &st };
	int syncing = 0;

	pthread_barrier_init(&start, NULL, nt + 1);
	memset(ws, 0, sizeof(ws));
	r = writers_init(c, ws, nt, &start);
	if (!r) {
		writers_start(ws, nt);
		if (c->kind == K_FILE) {
			syncing = !pthread_create(&sy.tid, NULL, syncer_main, &sy);
			if (!syncing)
				r = setup_err(c, "cannot start the fsync thread");
		}
		if (!r)
			r = writers_migrate(c, &st);
		writers_join(ws, nt);
		if (syncing)
			pthread_join(sy.tid, NULL);
	}
	if (!r)
		r = writers_finish(c, ws, nt, &st);
	writers_free(ws, nt);
	pthread_barrier_destroy(&start);
	return r;
}

static int run_writers_case(const struct opts *o, enum kind kind,
			    unsigned long kb, struct tally *t)
{
	const char *skip = size_unsupported(o, kind, kb);
	struct tcase c;
	int r;

	case_init(&c, o, kind, kb, NR_SCS);
	snprintf(c.name, sizeof(c.name), "writers-%s-%luK", kind_names[kind],
		 kb);
	if (skip) {
		snprintf(c.why, sizeof(c.why), "%s", skip);
		r = CASE_SKIP;
	} else {
		r = prepare(&c, o->route[0]);
		if (!r)
			r = run_writers_region(&c);
		region_teardown(&c);
	}
	report(&c, r, t);
	return r;
}

static void run_writers(const struct opts *o, struct tally *t)
{
	int k, i;

	for (k = 0; k < NR_KINDS; k++)
		for (i = 0; i < o->nr_kbs && o->kinds & 1U << k; i++)
			run_writers_case(o, k, o->kbs[i], t);
}

/* ---- setup ------------------------------------------------------------- */

/* ---- compaction mode ---------------------------------------------------- */

/*
 * Leave one page in use in every pair on @node, then have the kernel
 * compact the node: compaction migrates the pages left (reason
 * MR_COMPACTION) within the node, and every byte of them must survive.
 * Each page has its own seed, so each can be checked on its own.
 */
static void run_compaction(const struct opts *o, struct tally *t)
{
	size_t len = o->size_mb << 20, npages = len / MIG_PAGE_SIZE, p;
	char path[64], *buf;
	long bad = 0;
	int fd;

	buf = region_alloc(len, MIG_PAGE_KB, o->compact_node);
	if (!buf) {
		t->setup++;
		return;
	}
	for (p = 0; p < npages; p++)
		fill_pattern(buf + p * MIG_PAGE_SIZE, MIG_PAGE_SIZE, 0xc0de + p);
	for (p = 1; p < npages; p += 2)
		madvise(buf + p * MIG_PAGE_SIZE, MIG_PAGE_SIZE, MADV_DONTNEED);

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/compact",
		 o->compact_node);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1) {
		fprintf(stderr, "migcheck: cannot compact node %d: %s\n",
			o->compact_node, strerror(errno));
		t->setup++;
	} else {
		for (p = 0; p < npages; p += 2)
			bad += verify_pattern(buf + p * MIG_PAGE_SIZE,
					      MIG_PAGE_SIZE, 0xc0de + p) >= 0;
		printf("%s compaction of node %d: %zu pages checked, %ld bad\n",
		       bad ? "FAIL" : "ok", o->compact_node, (npages + 1) / 2, bad);
		if (bad)
			t->failed++;
		else
			t->ok++;
	}
	if (fd >= 0)
		close(fd);
	region_free(buf, len);
}

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
	/* a second mapper that died must not kill us through its pipe */
	signal(SIGPIPE, SIG_IGN);
}

/* 0 if the machine can run the test, else the exit code. */
static int check_env(const struct opts *o)
{
	if (geteuid()) {
		fprintf(stderr, "migcheck: needs root (sysfs THP settings, /proc/kpageflags, MPOL_MF_MOVE_ALL): skip\n");
		return EXIT_SKIP;
	}
	return route_usable("migcheck", o->route, o->nr_route);
}

static int exit_code(const struct tally *t)
{
	if (t->failed > t->setup)
		return EXIT_FAIL;
	if (t->setup)
		return EXIT_SETUP;
	if (!t->ok && t->skipped)
		return EXIT_SKIP;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.kinds = BASE_KINDS, .scs = BASE_SCS,
		.route = { 0, 1, 2, 0 }, .nr_route = 4,
		.size_mb = 4, .threads = 3, .dir = "/mnt", .compact_node = -1,
	};
	struct tally t = { 0 };
	uint64_t t0 = now_ns();
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_sizes("all", &o);
	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return EXIT_SETUP;
	}
	ret = check_env(&o);
	if (ret)
		return ret;
	install_signals();
	if (o.compact_node >= 0)
		run_compaction(&o, &t);
	else if (o.writer_secs)
		run_writers(&o, &t);
	else
		run_matrix(&o, &t);
	thp_restore();
	check_folio_close();
	printf("migcheck: %d ok, %d failed, %d skipped, %d retried\n", t.ok,
	       t.failed, t.skipped, t.retried);
	if (!o.quiet)
		fprintf(stderr, "migcheck: %.1f s\n", (now_ns() - t0) / 1e9);
	return exit_code(&t);
}
