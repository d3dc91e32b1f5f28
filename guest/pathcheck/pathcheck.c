// SPDX-License-Identifier: GPL-2.0
/*
 * pathcheck - data held in memory while one of the kernel's own migration
 * paths moves it: every byte and the place of every page checked after.
 *
 * The region is filled with a unique pattern while the task is bound to
 * the fill node (-n): a region larger than that node's free memory makes
 * the fill itself reclaim there, i.e. demote under kswapd and direct
 * reclaim.  With -w it then prints "ready" and waits for a line on stdin
 * while the caller drives the kernel (offline memory, allocate CMA, merge
 * with KSM).  Then ACTION makes or waits for the migration:
 *
 *   none          nothing more (the fill or the caller did it)
 *   pin           pin the region long-term (FOLL_LONGTERM, through
 *                 /sys/kernel/debug/gup_test): pages in ZONE_MOVABLE or
 *                 CMA are migrated out first; -x is checked while pinned
 *   soft-offline  madvise(MADV_SOFT_OFFLINE) on every page
 *   touch         read the region from CPU -c until -e is met or -t
 *                 seconds pass (NUMA balancing promotion)
 *   until         wait until -e is met or -t seconds pass (DAMON)
 *   move NODE     move_pages(MPOL_MF_MOVE_ALL) the region to NODE (swap
 *                 cache, KSM pages mapped more than once)
 *   migrate NODE  migrate_pages(2) of the whole task to NODE: all its
 *                 folios in one list, so batches of several large folios
 *                 (move_pages() given every page migrates one at a time)
 *
 * Checks: every byte; with -e NODE:PCT at least PCT% of the pages on NODE;
 * with -x LO-HI (PFNs) some pages in that range before the action and none
 * after.  One summary line on stdout.  Exit 0 ok, 1 a check failed, 2 the
 * setup did not give what the check needs (e.g. no page in the range).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "migutil.h"

#define MAX_PARTS	8
#define NR_NODES	8
#define SEED		0x70617468UL	/* "path" */
#define KSM_VARIANTS	16		/* distinct page contents with -m */

#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE	101
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif

/* mm/gup_test.h */
struct pin_longterm_test {
	uint64_t addr, size;
	uint32_t flags;
};
#define PIN_LONGTERM_TEST_START	_IOW('g', 7, struct pin_longterm_test)
#define PIN_LONGTERM_TEST_STOP	_IO('g', 8)
#define PIN_LONGTERM_TEST_FLAG_USE_WRITE	1

struct part {
	char *buf;
	size_t len;
	unsigned long kb;
};

static struct part parts[MAX_PARTS];
static int nr_parts;
static int mergeable;	/* -m: KSM_VARIANTS page contents, repeated */

static void fill(struct part *p)
{
	size_t i;

	if (!mergeable) {
		fill_pattern(p->buf, p->len, SEED + p->kb);
		return;
	}
	for (i = 0; i < p->len / MIG_PAGE_SIZE; i++)
		fill_pattern(p->buf + i * MIG_PAGE_SIZE, MIG_PAGE_SIZE,
			     SEED + i % KSM_VARIANTS);
}

static long verify(struct part *p)
{
	size_t i;

	if (!mergeable)
		return verify_pattern(p->buf, p->len, SEED + p->kb);
	for (i = 0; i < p->len / MIG_PAGE_SIZE; i++)
		if (verify_pattern(p->buf + i * MIG_PAGE_SIZE, MIG_PAGE_SIZE,
				   SEED + i % KSM_VARIANTS) >= 0)
			return i * MIG_PAGE_SIZE;
	return -1;
}

static int make_parts(size_t mb, const char *sizes, int node)
{
	unsigned long kbs[MAX_PARTS];
	int i, n = parse_folio_sizes(sizes, kbs, MAX_PARTS);

	if (n < 1)
		return -1;
	for (i = 0; i < n; i++) {
		struct part *p = &parts[i];
		size_t align = kbs[i] * 1024;

		p->kb = kbs[i];
		p->len = mb * 1024 * 1024 / n / align * align;
		if (!p->len)
			return fprintf(stderr, "%zu MiB is too small\n", mb), -1;
		if (mthp_select(p->kb))
			return -1;
		p->buf = region_map(p->len, p->kb, MAP_PRIVATE | MAP_ANONYMOUS,
				    -1);
		/* filled while bound: pages reclaimed meanwhile hold data */
		if (!p->buf || bind_to_node(node))
			return -1;
		fill(p);
		if (bind_to_node(-1))
			return -1;
		nr_parts++;
	}
	return 0;
}

/* pages per node over all parts; counts[NR_NODES] = elsewhere / absent */
static int node_counts(long *counts)
{
	long c[NR_NODES + 1];
	int i, j;

	memset(counts, 0, sizeof(c));
	for (i = 0; i < nr_parts; i++) {
		if (region_node_counts(parts[i].buf, parts[i].len, c, NR_NODES))
			return -1;
		for (j = 0; j <= NR_NODES; j++)
			counts[j] += c[j];
	}
	return 0;
}

static long total_pages(void)
{
	long n = 0;
	int i;

	for (i = 0; i < nr_parts; i++)
		n += parts[i].len / MIG_PAGE_SIZE;
	return n;
}

/* The PFN of every page of @p (0 if absent), or NULL; free() it. */
static uint64_t *part_pfns(const struct part *p)
{
	uint64_t *pfns = malloc(p->len / MIG_PAGE_SIZE * sizeof(*pfns));

	if (!pfns)
		fprintf(stderr, "out of memory for %zu PFNs\n",
			p->len / MIG_PAGE_SIZE);
	else if (region_pfns(p->buf, p->len, MIG_PAGE_SIZE, pfns)) {
		free(pfns);
		pfns = NULL;
	}
	return pfns;
}

/* Pages of @p whose PFN is in [lo, hi), or -1 */
static long part_in_range(const struct part *p, uint64_t lo, uint64_t hi)
{
	uint64_t *pfns = part_pfns(p);
	long i, n = 0;

	if (!pfns)
		return -1;
	for (i = 0; i < (long)(p->len / MIG_PAGE_SIZE); i++)
		n += pfns[i] >= lo && pfns[i] < hi;
	free(pfns);
	return n;
}

static long in_pfn_range(uint64_t lo, uint64_t hi)
{
	long n = 0, k;
	int i;

	for (i = 0; i < nr_parts; i++) {
		k = part_in_range(&parts[i], lo, hi);
		if (k < 0)
			return -1;
		n += k;
	}
	return n;
}

/* Has at least @pct percent of the region reached @node? */
static int reached(int node, long pct)
{
	long c[NR_NODES + 1];

	return !node_counts(c) && c[node] * 100 >= pct * total_pages();
}

static volatile uint64_t sink;

static int touch_until(int node, long pct, long secs)
{
	uint64_t end = now_ns() + secs * 1000000000ULL, next = 0, sum = 0;
	size_t off;
	int i;

	while (now_ns() < end) {
		for (i = 0; i < nr_parts; i++)
			for (off = 0; off < parts[i].len; off += 64)
				sum += *(volatile uint64_t *)(parts[i].buf + off);
		if (now_ns() >= next) {
			if (reached(node, pct))
				break;
			next = now_ns() + 1000000000ULL;
		}
	}
	sink = sum;
	return 0;
}

static int wait_until(int node, long pct, long secs)
{
	while (secs-- > 0 && !reached(node, pct))
		sleep(1);
	return 0;
}

/*
 * Pin each part long-term (PIN_LONGTERM_TEST_START keeps the pins until
 * STOP; it fails if the kernel cannot migrate a page out) and count its
 * pages in [lo, hi) while they are pinned: that is the promise.  Once
 * unpinned, pages may come back (khugepaged collapses into new THPs).
 */
static long pin_longterm(uint64_t lo, uint64_t hi)
{
	int fd = open("/sys/kernel/debug/gup_test", O_RDWR), i;
	struct pin_longterm_test t;
	long n, in_range = 0;

	if (fd < 0)
		return perror("/sys/kernel/debug/gup_test"), -1;
	for (i = 0; i < nr_parts && in_range >= 0; i++) {
		t.addr = (uintptr_t)parts[i].buf;
		t.size = parts[i].len;
		t.flags = PIN_LONGTERM_TEST_FLAG_USE_WRITE;
		if (ioctl(fd, PIN_LONGTERM_TEST_START, &t)) {
			fprintf(stderr, "pin %lu KiB folios long-term: %s\n",
				parts[i].kb, strerror(errno));
			in_range = -1;
			break;
		}
		n = part_in_range(&parts[i], lo, hi);
		in_range = n < 0 ? -1 : in_range + n;
		if (ioctl(fd, PIN_LONGTERM_TEST_STOP))
			in_range = -1;
	}
	close(fd);
	return in_range;
}

/*
 * move_pages() with MPOL_MF_MOVE_ALL: also pages mapped more than once.
 * The pages not on @node then are passed once more, as migbench does: a
 * transient failure (a folio a migrator kept, or compaction held) passes
 * the second time, a kernel that keeps failing them still fails -e.
 */
static int move_all(int node)
{
	long n = total_pages(), i = 0, m, ret;
	void **addrs = malloc(n * sizeof(*addrs));
	int *nodes = malloc(n * sizeof(*nodes));
	int *status = malloc(n * sizeof(*status));
	size_t off;
	int k;

	if (!addrs || !nodes || !status)
		return fprintf(stderr, "out of memory\n"), -1;
	for (k = 0; k < nr_parts; k++)
		for (off = 0; off < parts[k].len; off += MIG_PAGE_SIZE) {
			addrs[i] = parts[k].buf + off;
			nodes[i++] = node;
		}
	ret = move_pages(0, n, addrs, nodes, status, MPOL_MF_MOVE_ALL);
	for (i = 0, m = 0; ret >= 0 && i < n; i++)
		if (status[i] != node)
			addrs[m++] = addrs[i];
	if (ret >= 0 && m)
		ret = move_pages(0, m, addrs, nodes, status, MPOL_MF_MOVE_ALL);
	if (ret < 0)
		perror("move_pages(MPOL_MF_MOVE_ALL)");
	free(addrs);
	free(nodes);
	free(status);
	return ret < 0 ? -1 : 0;
}

/* migrate_pages(2): every page of the task on another node to @node */
static int migrate_task(int node)
{
	unsigned long from = ((1UL << NR_NODES) - 1) & ~(1UL << node);
	unsigned long to = 1UL << node;

	if (migrate_pages(0, NR_NODES + 1, &from, &to) < 0)
		return perror("migrate_pages"), -1;
	return 0;
}

/* The PFN of every page, one per line in hex (soft_offline_page input) */
static int write_pfns(const char *path)
{
	FILE *f = fopen(path, "w");
	uint64_t *pfns;
	size_t i;
	int k;

	for (k = 0; f && k < nr_parts; k++) {
		pfns = part_pfns(&parts[k]);
		if (!pfns) {
			fclose(f);
			return -1;
		}
		for (i = 0; i < parts[k].len / MIG_PAGE_SIZE; i++)
			fprintf(f, "%#llx\n", (unsigned long long)pfns[i]);
		free(pfns);
	}
	if (!f || fclose(f))
		return perror(path), -1;
	return 0;
}

static int for_each_part(int advice)
{
	int i;

	for (i = 0; i < nr_parts; i++)
		if (madvise(parts[i].buf, parts[i].len, advice)) {
			fprintf(stderr, "madvise(%d): %s\n", advice,
				strerror(errno));
			return -1;
		}
	return 0;
}

static int act(const char *action, int arg, int cpu, int node, long pct,
	       long secs)
{
	cpu_set_t set;

	if (!strcmp(action, "none") || !strcmp(action, "pin"))
		return 0;	/* pin: done in main(), which has the range */
	if (!strcmp(action, "soft-offline"))
		return for_each_part(MADV_SOFT_OFFLINE);
	if (!strcmp(action, "move"))
		return move_all(arg);
	if (!strcmp(action, "migrate"))
		return migrate_task(arg);
	if (node < 0) {
		fprintf(stderr, "%s needs -e NODE:PCT\n", action);
		return -1;
	}
	if (!strcmp(action, "until"))
		return wait_until(node, pct, secs);
	if (!strcmp(action, "touch")) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return perror("sched_setaffinity"), -1;
		return touch_until(node, pct, secs);
	}
	fprintf(stderr, "unknown action '%s'\n", action);
	return -1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pathcheck [-s MB] [-f KB,...] [-m] [-n NODE] [-P]\n"
		"                 [-p FILE] [-w] [-x LO-HI] [-e NODE:PCT] [-c CPU] [-t SECS]\n"
		"                 ACTION [NODE]\n"
		"  -s  region size in MiB (default 64), split evenly between the folio sizes\n"
		"  -f  folio sizes in KiB (default 4,64,2048)\n"
		"  -m  mergeable: %d page contents repeated, MADV_MERGEABLE (KSM)\n"
		"  -n  node to fill on (bound: a region larger than the node reclaims)\n"
		"  -P  swap the region out (MADV_PAGEOUT) and read it back: swap cache\n"
		"  -p  write the PFN of every page to FILE before the action\n"
		"  -w  print \"ready\" and wait for a line on stdin before the action\n"
		"  -x  PFN range [LO, HI): some pages in it before, none after\n"
		"  -e  at least PCT%% of the pages on NODE at the end\n"
		"  -c  CPU to read from (touch), -t seconds to wait (touch, until)\n"
		"ACTION: none, pin, soft-offline, touch, until, move NODE,\n"
		"        migrate NODE\n",
		KSM_VARIANTS);
	exit(EXIT_SETUP);
}

int main(int argc, char **argv)
{
	unsigned long mb = 64, lo = 0, hi = 0, v;
	long counts[NR_NODES + 1], before = 0, after = 0, bad, secs = 60,
	     pct = 0;
	const char *sizes = "4,64,2048", *action, *pfn_file = NULL;
	int opt, node = 0, cpu = 0, want = -1, pageout = 0;
	int i, arg = -1, ok = 1, wait_line = 0, pinned;
	char *dash, line[16];

	while ((opt = getopt(argc, argv, "s:f:mn:Pp:wx:e:c:t:h")) != -1) {
		switch (opt) {
		case 's':
			if (parse_ulong(optarg, &mb) || !mb)
				usage();
			break;
		case 'f':
			sizes = optarg;
			break;
		case 'm':
			mergeable = 1;
			break;
		case 'n':
			node = atoi(optarg);
			break;
		case 'P':
			pageout = 1;
			break;
		case 'p':
			pfn_file = optarg;
			break;
		case 'w':
			wait_line = 1;
			break;
		case 'x':
			dash = strchr(optarg, '-');
			if (!dash)
				usage();
			*dash = 0;
			if (parse_ulong(optarg, &lo) || parse_ulong(dash + 1, &hi) ||
			    lo >= hi)
				usage();
			break;
		case 'e':
			if (sscanf(optarg, "%d:%ld", &want, &pct) != 2 ||
			    want < 0 || want >= NR_NODES || pct < 1 || pct > 100)
				usage();
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 't':
			if (parse_ulong(optarg, &v))
				usage();
			secs = v;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	action = argv[optind];
	if (!strcmp(action, "move") || !strcmp(action, "migrate")) {
		if (optind + 1 >= argc)
			usage();
		arg = atoi(argv[optind + 1]);
	}
	if (make_parts(mb, sizes, node))
		return EXIT_SETUP;
	if (mergeable && for_each_part(MADV_MERGEABLE))
		return EXIT_SETUP;
	if (pageout) {
		if (for_each_part(MADV_PAGEOUT))
			return EXIT_SETUP;
		for (i = 0; i < nr_parts; i++)	/* swapped in: swap cache */
			if (verify(&parts[i]) >= 0)
				ok = 0;
	}
	if (hi) {
		before = in_pfn_range(lo, hi);
		if (before < 0)
			return EXIT_SETUP;
	}
	if (pfn_file && write_pfns(pfn_file))
		return EXIT_SETUP;
	if (wait_line) {
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return EXIT_SETUP;
	}
	if (act(action, arg, cpu, want, pct, secs))
		return EXIT_SETUP;
	pinned = !strcmp(action, "pin");
	if (pinned) {
		if (!hi) {
			fprintf(stderr, "pin needs -x LO-HI\n");
			return EXIT_SETUP;
		}
		after = pin_longterm(lo, hi);
		if (after < 0)
			return EXIT_FAIL;
	}

	for (i = 0; i < nr_parts; i++) {
		bad = verify(&parts[i]);
		if (bad >= 0) {
			fprintf(stderr, "%lu KiB folios: byte %ld wrong\n",
				parts[i].kb, bad);
			ok = 0;
		}
	}
	if (node_counts(counts))
		return EXIT_SETUP;
	printf("pathcheck %s: %ld MiB of %s KiB folios: bytes %s; pages per node",
	       action, total_pages() >> 8, sizes, ok ? "ok" : "BAD");
	for (i = 0; i < NR_NODES; i++)
		if (counts[i])
			printf(" %d:%ld", i, counts[i]);
	if (counts[NR_NODES])
		printf(" other:%ld", counts[NR_NODES]);
	if (hi) {
		if (!pinned)
			after = in_pfn_range(lo, hi);
		printf("; in PFNs %#lx-%#lx: %ld before, %ld %s", lo, hi,
		       before, after, pinned ? "while pinned" : "after");
		if (after)
			ok = 0;
	}
	if (want >= 0 && counts[want] * 100 < pct * total_pages()) {
		printf("; wanted %ld%% on node %d", pct, want);
		ok = 0;
	}
	printf("\n");
	if (!ok)
		return EXIT_FAIL;
	return hi && !before ? EXIT_SETUP : 0;
}
