// SPDX-License-Identifier: GPL-2.0
/*
 * migutil - helpers for page-migration benchmarks and integrity tests.
 * See migutil.h for the interface.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kernel-page-flags.h>
#include <numa.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <unistd.h>

#include "migutil.h"
#include "thp_settings.h"

/* ---- (m)THP configuration: selftests/mm/thp_settings.c ------------- */

/*
 * The settings being changed, from the first change on: selecting an anon
 * size keeps the shmem selection and the other way round.
 */
static struct thp_settings thp_now;
static bool thp_saved;

void thp_restore(void)
{
	if (!thp_saved)
		return;
	thp_saved = false;
	thp_restore_settings();
}

static struct thp_settings *thp_edit(void)
{
	static bool registered;

	if (!thp_saved) {
		thp_save_settings();
		thp_read_settings(&thp_now);
		thp_saved = true;
		if (!registered)
			atexit(thp_restore);
		registered = true;
	}
	return &thp_now;
}

/* Whether @orders (of thp_supported_orders() ...) has @kb KiB folios. */
static int kb_offered(unsigned long kb, unsigned long (*orders)(void))
{
	unsigned long pages = kb / MIG_PAGE_KB;

	if (kb == MIG_PAGE_KB)
		return 1;
	if (kb % MIG_PAGE_KB || !pages || (pages & (pages - 1)))
		return 0;
	return __builtin_ctzl(pages) < NR_ORDERS &&
	       (orders() & (1UL << __builtin_ctzl(pages)));
}

int mthp_available(unsigned long kb)
{
	return kb_offered(kb, thp_supported_orders);
}

int mthp_select(unsigned long kb)
{
	struct thp_settings *s;
	int i;

	if (!mthp_available(kb)) {
		fprintf(stderr, "mthp: %lu KiB anon folios not offered by this kernel\n",
			kb);
		return -1;
	}
	if (!read_pmd_pagesize())
		return 0;	/* no THP: base pages only */
	s = thp_edit();
	/* no size is left to "inherit": "always" only shows the intent */
	if (kb != MIG_PAGE_KB)
		s->thp_enabled = THP_ALWAYS;
	for (i = 0; i < NR_ORDERS; i++)
		s->hugepages[i].enabled = (MIG_PAGE_KB << i) == kb ?
					  THP_ALWAYS : THP_NEVER;
	thp_write_settings(s);
	return 0;
}

/* ---- regions ------------------------------------------------------- */

#define MASK_BITS	1024
#define LONG_BITS	(8 * sizeof(unsigned long))

int bind_to_node(int node)
{
	unsigned long mask[MASK_BITS / LONG_BITS] = { 0 };

	if (node < 0) {
		if (!set_mempolicy(MPOL_DEFAULT, NULL, 0))
			return 0;
		fprintf(stderr, "bind: set_mempolicy(MPOL_DEFAULT): %s\n",
			strerror(errno));
		return -1;
	}
	if (node >= MASK_BITS) {
		fprintf(stderr, "bind: bad node %d\n", node);
		return -1;
	}
	mask[node / LONG_BITS] = 1UL << (node % LONG_BITS);
	if (set_mempolicy(MPOL_BIND, mask, MASK_BITS + 1)) {
		fprintf(stderr, "bind: set_mempolicy(MPOL_BIND, node %d): %s\n",
			node, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Fault every page in while the task policy binds to @node; the task
 * policy only decides where the first touch allocates, later migration
 * is free to move the pages anywhere.
 */
static int fault_in_on_node(char *buf, size_t len, int node)
{
	size_t off;

	if (node < 0 || bind_to_node(node))
		return -1;
	for (off = 0; off < len; off += MIG_PAGE_SIZE)
		buf[off] = 1;	/* buf escapes: the store stays */
	return bind_to_node(-1);
}

void *region_alloc(size_t len, unsigned long folio_kb, int node)
{
	size_t align = folio_kb * 1024, map_len = len + align;
	char *raw, *buf;

	if (!len || folio_kb < MIG_PAGE_KB || len % align) {
		fprintf(stderr, "region: size %zu is not a multiple of %lu KiB\n",
			len, folio_kb);
		return NULL;
	}
	raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		fprintf(stderr, "region: mmap %zu: %s\n", map_len,
			strerror(errno));
		return NULL;
	}
	/* over-allocated by one folio: trim both ends to get alignment */
	buf = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
	if (buf > raw)
		munmap(raw, buf - raw);
	if (raw + map_len > buf + len)
		munmap(buf + len, raw + map_len - (buf + len));

	/* 4K: keep khugepaged and any "inherit" size away from the region */
	if (madvise(buf, len, folio_kb > MIG_PAGE_KB ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    folio_kb > MIG_PAGE_KB) {
		fprintf(stderr, "region: madvise(MADV_HUGEPAGE): %s\n",
			strerror(errno));
		munmap(buf, len);
		return NULL;
	}
	if (fault_in_on_node(buf, len, node)) {
		munmap(buf, len);
		return NULL;
	}
	return buf;
}

void region_free(void *buf, size_t len)
{
	if (buf)
		munmap(buf, len);
}

/* ---- data pattern -------------------------------------------------- */

#define WORDS_PER_PAGE	(MIG_PAGE_SIZE / sizeof(uint64_t))
#define SEED_MUL	0x9e3779b97f4a7c15ULL
#define MIX_MUL1	0xbf58476d1ce4e5b9ULL
#define MIX_MUL2	0x94d049bb133111ebULL

/*
 * splitmix64 finaliser over (seed, page, word).  The finaliser is a
 * bijection and (page << 9 | word) is injective, so within one seed no two
 * words of the buffer are equal; and it can be inverted to tell where a
 * misplaced word came from.
 */
static inline uint64_t pat_word(uint64_t seed, uint64_t page, uint64_t word)
{
	uint64_t x = (seed * SEED_MUL) ^ (page << 9 | word);

	x ^= x >> 30;
	x *= MIX_MUL1;
	x ^= x >> 27;
	x *= MIX_MUL2;
	x ^= x >> 31;
	return x;
}

static uint64_t mul_inverse(uint64_t m)
{
	uint64_t inv = m;
	int i;

	/* Newton iteration: each step doubles the number of correct bits */
	for (i = 0; i < 6; i++)
		inv *= 2 - m * inv;
	return inv;
}

/* Recover (page << 9 | word) of a pattern word written with @seed. */
static uint64_t pat_decode(uint64_t x, uint64_t seed)
{
	x ^= x >> 31 ^ x >> 62;
	x *= mul_inverse(MIX_MUL2);
	x ^= x >> 27 ^ x >> 54;
	x *= mul_inverse(MIX_MUL1);
	x ^= x >> 30 ^ x >> 60;
	return x ^ (seed * SEED_MUL);
}

void fill_pattern(void *buf, size_t len, uint64_t seed)
{
	uint64_t *w = buf;
	size_t p, i;

	for (p = 0; p < len / MIG_PAGE_SIZE; p++)
		for (i = 0; i < WORDS_PER_PAGE; i++)
			*w++ = pat_word(seed, p, i);
}

static void report_bad_page(const uint64_t *w, size_t page, size_t npages,
			    uint64_t seed)
{
	size_t i, first = WORDS_PER_PAGE, nbad = 0, nzero = 0;
	uint64_t exp, idx;

	for (i = 0; i < WORDS_PER_PAGE; i++) {
		if (w[i] == pat_word(seed, page, i))
			continue;
		if (first == WORDS_PER_PAGE)
			first = i;
		nbad++;
		nzero += !w[i];
	}
	exp = pat_word(seed, page, first);
	fprintf(stderr,
		"verify: page %zu word %zu (byte %zu in page): expected 0x%016llx got 0x%016llx; %zu/%zu words bad, %zu zero\n",
		page, first, first * 8, (unsigned long long)exp,
		(unsigned long long)w[first], nbad, WORDS_PER_PAGE, nzero);
	idx = pat_decode(w[first], seed);
	if (w[first] && idx >> 9 < npages)
		fprintf(stderr, "verify: that word belongs to page %llu word %llu\n",
			(unsigned long long)(idx >> 9),
			(unsigned long long)(idx & 511));
	else if (w[first])
		fprintf(stderr, "verify: that word is not from this seed (stale data or garbage)\n");
}

long verify_pattern(const void *buf, size_t len, uint64_t seed)
{
	size_t p, i, npages = len / MIG_PAGE_SIZE, bad_pages = 0;
	const uint64_t *w;
	long first = -1;

	for (p = 0; p < npages; p++) {
		w = (const uint64_t *)buf + p * WORDS_PER_PAGE;
		for (i = 0; i < WORDS_PER_PAGE; i++)
			if (w[i] != pat_word(seed, p, i))
				break;
		if (i == WORDS_PER_PAGE)
			continue;
		if (first < 0) {
			uint64_t x = w[i] ^ pat_word(seed, p, i);

			/* little endian: lowest differing byte comes first */
			first = p * MIG_PAGE_SIZE + i * 8 + __builtin_ctzll(x) / 8;
			report_bad_page(w, p, npages, seed);
		}
		bad_pages++;
	}
	if (first >= 0)
		fprintf(stderr, "verify: %zu of %zu pages bad, first bad byte at offset %ld\n",
			bad_pages, npages, first);
	return first;
}

/* ---- placement ----------------------------------------------------- */

static void **page_addrs(void *buf, size_t len, size_t step)
{
	size_t i, n = len / step;
	void **addrs = malloc(n * sizeof(*addrs));

	if (!addrs) {
		fprintf(stderr, "out of memory for %zu page addresses\n", n);
		return NULL;
	}
	for (i = 0; i < n; i++)
		addrs[i] = (char *)buf + i * step;
	return addrs;
}

/* move_pages() query mode: status[i] = node of addrs[i] or -errno. */
static int query_nodes(void **addrs, unsigned long n, int *status)
{
	if (move_pages(0, n, addrs, NULL, status, 0) < 0) {
		fprintf(stderr, "move_pages(query %lu pages): %s\n", n,
			strerror(errno));
		return -1;
	}
	return 0;
}

int region_node_counts(void *buf, size_t len, long *counts, int nr_nodes)
{
	size_t n = len / MIG_PAGE_SIZE, i;
	void **addrs = page_addrs(buf, len, MIG_PAGE_SIZE);
	int *status = malloc(n * sizeof(*status));
	int ret = -1;

	if (!addrs || !status || query_nodes(addrs, n, status))
		goto out;
	for (i = 0; i <= (size_t)nr_nodes; i++)
		counts[i] = 0;
	for (i = 0; i < n; i++)
		counts[status[i] >= 0 && status[i] < nr_nodes ?
		       status[i] : nr_nodes]++;
	ret = 0;
out:
	free(status);
	free(addrs);
	return ret;
}

long pages_on_node(void **addrs, unsigned long n, int node)
{
	int *status = malloc(n * sizeof(*status));
	unsigned long i;
	long bad = 0;

	if (!status || query_nodes(addrs, n, status)) {
		free(status);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (status[i] == node)
			continue;
		if (!bad++) {
			if (status[i] < 0)
				fprintf(stderr, "placement: page %p: %s, expected node %d\n",
					addrs[i], strerror(-status[i]), node);
			else
				fprintf(stderr, "placement: page %p on node %d, expected node %d\n",
					addrs[i], status[i], node);
		}
	}
	if (bad)
		fprintf(stderr, "placement: %ld of %lu pages not on node %d\n",
			bad, n, node);
	free(status);
	return bad;
}

int region_nodes(void *buf, size_t len, int *nodes)
{
	void **addrs = page_addrs(buf, len, MIG_PAGE_SIZE);
	int ret = addrs ? query_nodes(addrs, len / MIG_PAGE_SIZE, nodes) : -1;

	free(addrs);
	return ret;
}

long region_pages_on_node(void *buf, size_t len, int node)
{
	void **addrs = page_addrs(buf, len, MIG_PAGE_SIZE);
	long ret;

	if (!addrs)
		return -1;
	ret = pages_on_node(addrs, len / MIG_PAGE_SIZE, node);
	free(addrs);
	return ret;
}

/* ---- folio size check via pagemap + kpageflags --------------------- */

#define KPF(f)		BIT_ULL(KPF_##f)

static int pagemap_fd = -1;
static int kpageflags_fd = -1;

static int open_once(int *fd, const char *path)
{
	if (*fd >= 0)
		return 0;
	*fd = open(path, O_RDONLY);
	if (*fd < 0) {
		fprintf(stderr, "folio check: open %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

void check_folio_close(void)
{
	if (pagemap_fd >= 0)
		close(pagemap_fd);
	if (kpageflags_fd >= 0)
		close(kpageflags_fd);
	pagemap_fd = kpageflags_fd = -1;
}

/* pread() all @count 64-bit entries at entry index @idx. */
static int read_entries(int fd, uint64_t *out, size_t count, uint64_t idx)
{
	size_t done = 0, want = count * sizeof(*out);
	ssize_t n;

	while (done < want) {
		n = pread(fd, (char *)out + done, want - done,
			  idx * sizeof(*out) + done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/*
 * The pagemap entries of [buf, buf + len), malloc()ed, in one read rather
 * than vm_util's pagemap_get_entry() a page.  Opens kpageflags too.
 */
static uint64_t *region_pagemap(void *buf, size_t len)
{
	size_t npages = len / MIG_PAGE_SIZE;
	uint64_t *pm;

	if (open_once(&pagemap_fd, "/proc/self/pagemap") ||
	    open_once(&kpageflags_fd, "/proc/kpageflags"))
		return NULL;
	pm = malloc(npages * sizeof(*pm));
	if (pm && !read_entries(pagemap_fd, pm, npages,
				(uintptr_t)buf / MIG_PAGE_SIZE))
		return pm;
	fprintf(stderr, "folio check: read pagemap: %s\n",
		pm ? strerror(errno) : "out of memory");
	free(pm);
	return NULL;
}

/* Pagemap entries of the block: present, PFN visible, contiguous. */
static const char *check_block_pfns(const uint64_t *pm, size_t per)
{
	uint64_t pfn0 = PAGEMAP_PFN(pm[0]);
	size_t i;

	for (i = 0; i < per; i++) {
		if (!(pm[i] & PM_PRESENT))
			return "page not present";
		if (!PAGEMAP_PFN(pm[i]))
			return "PFN hidden (need CAP_SYS_ADMIN)";
		if (per > 1 && PAGEMAP_PFN(pm[i]) != pfn0 + i)
			return "PFNs not contiguous";
	}
	if (pfn0 % per)
		return "PFN not aligned to the folio size";
	return NULL;
}

/*
 * Flags of the block's pages plus the page right after it (@kf has
 * per + 1 entries): a TAIL there means the folio is larger than the block.
 */
static const char *check_block_flags(const uint64_t *kf, size_t per,
				     int hugetlb)
{
	uint64_t kind = hugetlb ? KPF(HUGE) : KPF(THP);
	size_t i;

	if (per == 1) {
		if (kf[0] & (KPF(COMPOUND_HEAD) | KPF(COMPOUND_TAIL)))
			return "page is part of a large folio";
		return NULL;
	}
	if (!(kf[0] & KPF(COMPOUND_HEAD)) || (kf[0] & KPF(COMPOUND_TAIL)))
		return "first page is not a folio head";
	if ((kf[0] & (KPF(THP) | KPF(HUGE))) != kind)
		return hugetlb ? "folio is not a hugetlb folio" :
				 "folio is not an anon THP/mTHP";
	for (i = 1; i < per; i++)
		if (!(kf[i] & KPF(COMPOUND_TAIL)) ||
		    (kf[i] & KPF(COMPOUND_HEAD)))
			return "folio smaller than expected";
	if (kf[per] & KPF(COMPOUND_TAIL))
		return "folio larger than expected";
	return NULL;
}

/* NULL if the block is one folio of @per pages, else the reason. */
static const char *check_block(const uint64_t *pm, size_t per, uint64_t *kf,
			       int hugetlb)
{
	size_t nflags = per > 1 ? per + 1 : 1;
	const char *why;

	why = check_block_pfns(pm, per);
	if (why)
		return why;
	if (read_entries(kpageflags_fd, kf, nflags, PAGEMAP_PFN(pm[0])))
		return "cannot read /proc/kpageflags";
	return check_block_flags(kf, per, hugetlb);
}

/*
 * Has block @b (of @per pages) moved since @pm was read?  Then the flags
 * read for it were another folio's (compaction ran meanwhile): @pm is
 * updated for another look.
 */
static int block_moved(void *buf, uint64_t *pm, size_t b, size_t per)
{
	uint64_t pfn = PAGEMAP_PFN(pm[b]);

	return !read_entries(pagemap_fd, pm + b, per,
			     (uintptr_t)buf / MIG_PAGE_SIZE + b) &&
	       PAGEMAP_PFN(pm[b]) != pfn;
}

/*
 * Blocks of [buf, buf + len) that are not one @kb KiB folio, the first
 * reported; with @all, every block is looked at, else only up to the first
 * bad one. -1 if the check itself failed.
 */
static long bad_blocks(void *buf, size_t len, unsigned long kb, int hugetlb,
		       int all)
{
	size_t per = kb / MIG_PAGE_KB, npages = len / MIG_PAGE_SIZE, b;
	uint64_t *pm = NULL, *kf = NULL;
	long ret = -1, bad = 0;

	if (kb < MIG_PAGE_KB || (kb & (kb - 1)) || len % (kb * 1024)) {
		fprintf(stderr, "folio check: bad size %lu KiB / len %zu\n",
			kb, len);
		return -1;
	}
	pm = region_pagemap(buf, len);
	kf = calloc(per + 1, sizeof(*kf));
	if (!pm || !kf)
		goto out;
	for (b = 0; b < npages; b += per) {
		const char *why;
		int tries = 3;

		do {
			kf[0] = 0;
			why = check_block(pm + b, per, kf, hugetlb);
		} while (why && --tries && block_moved(buf, pm, b, per));
		if (why && !bad++)
			fprintf(stderr, "folio check: block %zu (addr %p, pfn %#llx, flags %#llx) is not one %lu KiB folio: %s\n",
				b / per, (char *)buf + b * MIG_PAGE_SIZE,
				(unsigned long long)PAGEMAP_PFN(pm[b]),
				(unsigned long long)kf[0], kb, why);
		if (bad && !all)
			break;
	}
	ret = bad;
out:
	free(pm);
	free(kf);
	return ret;
}

int check_folio_size(void *buf, size_t len, unsigned long kb)
{
	return bad_blocks(buf, len, kb, 0, 0) ? -1 : 0;
}

int check_hugetlb_size(void *buf, size_t len, unsigned long kb)
{
	return bad_blocks(buf, len, kb, 1, 0) ? -1 : 0;
}

long count_not_folios(void *buf, size_t len, unsigned long kb)
{
	return bad_blocks(buf, len, kb, 0, 1);
}

int region_pfns(void *buf, size_t len, size_t step, uint64_t *pfns)
{
	size_t i;
	uint64_t pm;

	if (open_once(&pagemap_fd, "/proc/self/pagemap"))
		return -1;
	for (i = 0; i < len / step; i++) {
		pm = pagemap_get_entry(pagemap_fd, (char *)buf + i * step);
		pfns[i] = pm & PM_PRESENT ? PAGEMAP_PFN(pm) : 0;
	}
	return 0;
}

/* ---- migration ----------------------------------------------------- */

#define STATUS_UNSET	INT_MIN

/*
 * The status array is not the whole truth.  A large folio is queued by its
 * first listed subpage; the next subpage then fails isolation and gets
 * -EBUSY although the folio is moved right after.  If move_pages() gives up
 * early (positive return) the rest keeps no status at all.  So re-query
 * every page whose status is not @node and count what really stayed behind.
 */
static long settle_status(void **pages, int *status, unsigned long n,
			  int node, struct move_stats *st)
{
	unsigned long i, m = 0;
	void **again;
	int *now;
	long bad = 0;

	for (i = 0; i < n; i++)
		m += status[i] != node;
	if (!m)
		return 0;
	again = malloc(m * sizeof(*again));
	now = malloc(m * sizeof(*now));
	if (!again || !now) {
		bad = -1;
		goto out;
	}
	for (i = 0, m = 0; i < n; i++)
		if (status[i] != node)
			again[m++] = pages[i];
	if (query_nodes(again, m, now)) {
		bad = -1;
		goto out;
	}
	for (i = 0, m = 0; i < n; i++) {
		if (status[i] == node)
			continue;
		if (now[m++] == node) {
			st->busy_moved += status[i] == -EBUSY;
			continue;
		}
		if (!bad++)
			fprintf(stderr, "move: page %p: status %s, now on node %d, wanted %d\n",
				pages[i], status[i] == STATUS_UNSET ? "unset" :
				status[i] < 0 ? strerror(-status[i]) : "other node",
				now[m - 1], node);
	}
out:
	free(again);
	free(now);
	return bad;
}

/*
 * One more move_pages() call for the pages that a transient status kept
 * back (-EBUSY, -ENOENT, -EAGAIN: the page was under migration or locked
 * by someone else, e.g. compaction, whose migration entry reads as not
 * present) or that got no status (move_pages() stopped at a folio that
 * failed, e.g. one a migrator kept while its copy ran late) and that are
 * still not on @node, as migcheck retries: a kernel that keeps failing
 * them still fails the caller.  Timed with the rest.
 */
static void retry_transient(void **pages, int *status, unsigned long n,
			    int node, struct move_stats *st)
{
	unsigned long i, m = 0, k = 0;
	void **again = malloc(n * sizeof(*again));
	unsigned long *idx = malloc(n * sizeof(*idx));
	int *now = malloc(n * sizeof(*now));
	int *nodes = malloc(n * sizeof(*nodes));
	uint64_t t0;

	if (!again || !idx || !now || !nodes)
		goto out;
	for (i = 0; i < n; i++)
		if (status[i] == -EBUSY || status[i] == -ENOENT ||
		    status[i] == -EAGAIN || status[i] == STATUS_UNSET) {
			idx[m] = i;
			again[m++] = pages[i];
		}
	if (!m || query_nodes(again, m, now))
		goto out;
	for (i = 0; i < m; i++)
		if (now[i] != node) {
			idx[k] = idx[i];
			again[k++] = again[i];
		}
	if (!k)
		goto out;
	for (i = 0; i < k; i++)
		nodes[i] = node;
	t0 = now_ns();
	if (move_pages(0, k, again, nodes, now, MPOL_MF_MOVE) >= 0)
		for (i = 0; i < k; i++)
			status[idx[i]] = now[i];
	st->ns += now_ns() - t0;
	st->calls++;
	st->retried += k;
out:
	free(again);
	free(idx);
	free(now);
	free(nodes);
}

/*
 * The pages whose status says they moved to @node but that are elsewhere: a
 * migration that reported a folio it gave up as migrated. Returns their
 * number (with messages), or -1 if the query failed.
 */
static long status_false_moves(void **addrs, const int *status,
			       unsigned long n, int node)
{
	void **moved = malloc(n * sizeof(*moved) + 1);
	unsigned long i, m = 0;
	long bad;

	if (!moved)
		return -1;
	for (i = 0; i < n; i++)
		if (status[i] == node)
			moved[m++] = addrs[i];
	bad = m ? pages_on_node(moved, m, node) : 0;
	if (bad > 0)
		fprintf(stderr, "move_pages: %ld pages reported moved to node %d are not there\n",
			bad, node);
	free(moved);
	return bad;
}

int move_range_marked;

static void mark(void)
{
	if (move_range_marked)
		personality(0xffffffff);
}

long move_range(void *buf, size_t len, size_t step, int node,
		unsigned long per_call, struct move_stats *st)
{
	unsigned long i, n = len / step, cnt;
	struct move_stats local = { 0 };
	int *nodes, *status;
	uint64_t t0;
	void **pages;
	long ret, rc;

	pages = page_addrs(buf, len, step);
	nodes = malloc(n * sizeof(*nodes));
	status = malloc(n * sizeof(*status));
	if (!pages || !nodes || !status) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < n; i++) {
		nodes[i] = node;
		status[i] = STATUS_UNSET;
	}
	if (!per_call || per_call > n)
		per_call = n;

	/* only the syscalls are timed, array setup and checks are not */
	mark();
	for (i = 0; i < n; i += cnt) {
		cnt = n - i < per_call ? n - i : per_call;
		t0 = now_ns();
		rc = move_pages(0, cnt, pages + i, nodes + i, status + i,
				MPOL_MF_MOVE);
		local.ns += now_ns() - t0;
		local.calls++;
		local.addrs += cnt;
		if (rc < 0) {
			fprintf(stderr, "move_pages(%lu pages to node %d): %s\n",
				cnt, node, strerror(errno));
			ret = -1;
			mark();
			goto out;
		}
	}
	mark();
	if (status_false_moves(pages, status, n, node)) {
		ret = -1;
		goto out;
	}
	retry_transient(pages, status, n, node, &local);
	ret = settle_status(pages, status, n, node, &local);
out:
	if (st)
		*st = local;
	free(pages);
	free(nodes);
	free(status);
	return ret;
}

long move_addrs(void **addrs, unsigned long n, int node, uint64_t *ns)
{
	int *nodes = malloc(n * sizeof(*nodes) + 1);
	int *status = malloc(n * sizeof(*status) + 1);
	unsigned long i;
	uint64_t t0;
	long rc = -1;

	*ns = 0;
	if (!nodes || !status) {
		fprintf(stderr, "out of memory for %lu page addresses\n", n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		nodes[i] = node;
		status[i] = STATUS_UNSET;	/* a call that stops early sets none */
	}
	t0 = now_ns();
	rc = n ? move_pages(0, n, addrs, nodes, status, MPOL_MF_MOVE) : 0;
	*ns = now_ns() - t0;
	if (rc < 0)
		fprintf(stderr, "move_pages(%lu pages to node %d): %s\n", n,
			node, strerror(errno));
	else if (n && status_false_moves(addrs, status, n, node))
		rc = -1;
out:
	free(nodes);
	free(status);
	return rc;
}

/* ---- misc ---------------------------------------------------------- */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

ssize_t read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int node_has_memory(int node)
{
	return numa_node_size64(node, NULL) > 0;
}

int route_usable(const char *prog, const int *route, int n)
{
	int i;

	if (numa_available() < 0) {
		fprintf(stderr, "%s: NUMA not available (kernel without CONFIG_NUMA?): skip\n", prog);
		return 4;
	}
	for (i = 0; i < n; i++) {
		if (!node_has_memory(route[i])) {
			fprintf(stderr, "%s: node %d does not exist or has no memory "
				"(see /sys/devices/system/node/has_memory): skip\n", prog, route[i]);
			return 4;
		}
	}
	return 0;
}

/* ---- shmem (m)THP configuration ------------------------------------ */

int shmem_thp_available(unsigned long kb)
{
	return kb_offered(kb, thp_shmem_supported_orders);
}

int shmem_thp_select(unsigned long kb)
{
	struct thp_settings *s;
	int i;

	if (!shmem_thp_available(kb)) {
		fprintf(stderr, "shmem thp: %lu KiB shmem folios not offered by this kernel\n",
			kb);
		return -1;
	}
	if (!read_pmd_pagesize())
		return 0;
	s = thp_edit();
	/* tmpfs and memfd follow the top level only: PMD size or nothing */
	s->shmem_enabled = kb * 1024 == read_pmd_pagesize() ?
			   SHMEM_ALWAYS : SHMEM_NEVER;
	for (i = 0; i < NR_ORDERS; i++)
		s->shmem_hugepages[i].enabled = (MIG_PAGE_KB << i) == kb ?
						SHMEM_ALWAYS : SHMEM_NEVER;
	thp_write_settings(s);
	return 0;
}

/* ---- more regions -------------------------------------------------- */

void *region_map(size_t len, unsigned long folio_kb, int flags, int fd)
{
	size_t align = folio_kb * 1024, pmd = read_pmd_pagesize(), res_len;
	char *res, *buf;

	if (!len || folio_kb < MIG_PAGE_KB || len % align) {
		fprintf(stderr, "region: size %zu is not a multiple of %lu KiB\n",
			len, folio_kb);
		return NULL;
	}
	/*
	 * Large folios of shared memory: PMD-aligned where a PMD fits, so
	 * that whether khugepaged may collapse the region does not depend on
	 * where mmap() put it (6.12 without the series' patch 2 collapsed
	 * smaller shmem folios into a PMD-size one when it happened to put
	 * the region on a PMD boundary).
	 */
	if (folio_kb > MIG_PAGE_KB && !(flags & MAP_HUGETLB) && pmd > align &&
	    pmd <= len)
		align = pmd;
	res_len = len + align;
	/* reserve an over-sized range, then map over its aligned part */
	res = mmap(NULL, res_len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED) {
		fprintf(stderr, "region: reserve %zu: %s\n", res_len,
			strerror(errno));
		return NULL;
	}
	buf = (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	if (mmap(buf, len, PROT_READ | PROT_WRITE, flags | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		fprintf(stderr, "region: mmap %zu (flags %#x): %s\n", len, flags,
			strerror(errno));
		munmap(res, res_len);
		return NULL;
	}
	if (buf > res)
		munmap(res, buf - res);
	if (res + res_len > buf + len)
		munmap(buf + len, res + res_len - (buf + len));

	/* a hugetlb mapping has its folio size already */
	if (flags & MAP_HUGETLB)
		return buf;
	if (madvise(buf, len, folio_kb > MIG_PAGE_KB ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) &&
	    folio_kb > MIG_PAGE_KB) {
		fprintf(stderr, "region: madvise(MADV_HUGEPAGE): %s\n",
			strerror(errno));
		munmap(buf, len);
		return NULL;
	}
	return buf;
}

int region_fault_in(void *buf, size_t len, int node)
{
	return fault_in_on_node(buf, len, node);
}

/* ---- more placement ------------------------------------------------ */

int region_kpf(void *buf, size_t len, uint64_t *flags)
{
	size_t npages = len / MIG_PAGE_SIZE, i;
	uint64_t *pm = region_pagemap(buf, len);
	int ret = 0;

	if (!pm)
		return -1;
	for (i = 0; i < npages; i++) {
		flags[i] = 0;
		if ((pm[i] & PM_PRESENT) && PAGEMAP_PFN(pm[i]) &&
		    read_entries(kpageflags_fd, &flags[i], 1,
				 PAGEMAP_PFN(pm[i]))) {
			fprintf(stderr, "kpageflags: cannot read /proc/kpageflags\n");
			ret = -1;
			break;
		}
	}
	free(pm);
	return ret;
}

long region_kpf_missing(void *buf, size_t len, int kpf, uint64_t skip)
{
	size_t npages = len / MIG_PAGE_SIZE, i;
	uint64_t *kf = malloc(npages * sizeof(*kf));
	long missing = 0;

	if (!kf || region_kpf(buf, len, kf)) {
		if (!kf)
			fprintf(stderr, "kpageflags: out of memory\n");
		free(kf);
		return -1;
	}
	for (i = 0; i < npages; i++) {
		if ((kf[i] & BIT_ULL(kpf)) || (kf[i] & skip))
			continue;
		if (!missing++)
			fprintf(stderr, "kpageflags: page %p (flags %#llx) lacks flag bit %d\n",
				(char *)buf + i * MIG_PAGE_SIZE,
				(unsigned long long)kf[i], kpf);
	}
	free(kf);
	return missing;
}

/* ---- option parsing ------------------------------------------------ */

int parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

int parse_folio_sizes(const char *arg, unsigned long *kbs, int max)
{
	static const unsigned long all[] = { 4, 16, 64, 256, 2048 };
	int i, n = 0;

	if (!strcmp(arg, "all")) {
		for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])); i++) {
			if (all[i] < MIG_PAGE_KB)
				continue;
			if (n == max)
				return -1;
			kbs[n++] = all[i];
		}
		return n;
	}
	n = parse_list(arg, kbs, max);
	for (i = 0; i < n; i++)
		if (kbs[i] < MIG_PAGE_KB || (kbs[i] & (kbs[i] - 1)))
			return -1;
	return n > 0 ? n : -1;
}

/* Comma list of numbers into @out; returns the count or -1. */
int parse_list(const char *arg, unsigned long *out, int max)
{
	char *dup = strdup(arg), *tok, *save = NULL;
	int n = 0;

	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max || parse_ulong(tok, &out[n])) {
			n = -1;
			break;
		}
		n++;
	}
	free(dup);
	return n;
}

int parse_route(const char *arg, int *route, int max, int max_node)
{
	unsigned long v[64];
	int i, n = parse_list(arg, v, max < 64 ? max : 64);

	if (n < 2)
		return -1;
	for (i = 0; i < n; i++) {
		if (v[i] > (unsigned long)max_node || (i && v[i] == v[i - 1]))
			return -1;
		route[i] = v[i];
	}
	return n;
}

/* ---- byte streams and caches ---------------------------------------- */

/* Word @k of the stream of @seed: the same finaliser as pat_word(). */
static inline uint64_t stream_word(uint64_t seed, uint64_t k)
{
	return pat_word(seed, k >> 9, k & 511);
}

void fill_stream(void *buf, size_t len, uint64_t seed, uint64_t off)
{
	unsigned char *b = buf;
	uint64_t w;
	size_t i = 0;

	/* whole words where the stream is word-aligned: little endian */
	if (!(off % 8) && !((uintptr_t)buf % 8))
		for (; i + 8 <= len; i += 8)
			*(uint64_t *)(b + i) = stream_word(seed, (off + i) / 8);
	for (; i < len; i++) {
		w = stream_word(seed, (off + i) / 8);
		b[i] = w >> ((off + i) % 8 * 8);
	}
}

long verify_stream(const void *buf, size_t len, uint64_t seed, uint64_t off)
{
	const unsigned char *b = buf;
	uint64_t w = 0, k = ~0ULL;
	size_t i = 0;

	if (!(off % 8) && !((uintptr_t)buf % 8))
		for (; i + 8 <= len; i += 8)
			if (*(const uint64_t *)(b + i) !=
			    stream_word(seed, (off + i) / 8))
				break;	/* the bytes below find the first */
	for (; i < len; i++) {
		if ((off + i) / 8 != k) {
			k = (off + i) / 8;
			w = stream_word(seed, k);
		}
		if (b[i] != (unsigned char)(w >> ((off + i) % 8 * 8)))
			return i;
	}
	return -1;
}

int drop_caches(void)
{
	int fd, ret = -1;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -1;
	if (write(fd, "3", 1) == 1)
		ret = 0;
	close(fd);
	return ret;
}
