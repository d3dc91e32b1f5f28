/* SPDX-License-Identifier: GPL-2.0 */
/*
 * migutil - small helpers for page-migration benchmarks and integrity tests.
 *
 * Everything here runs inside the test guest as root, statically linked
 * with libnuma and the mm selftests' vm_util.c and thp_settings.c.  Helpers
 * print a diagnostic on stderr when they fail so callers can simply
 * propagate the error code; thp_settings' writes exit on failure.
 */
#ifndef MIGUTIL_H
#define MIGUTIL_H

#include <linux/kernel-page-flags.h>
#include <stddef.h>
#include <stdint.h>

#include "vm_util.h"

/*
 * The exit status of the guest's checkers (migcheck, mtecheck, pathcheck,
 * blkmig), which guest/tests/lib.sh reads: 0 every check passed.
 */
#define EXIT_FAIL	1	/* a check failed */
#define EXIT_SETUP	2	/* the test could not be set up */
#define EXIT_SKIP	4	/* not testable here */
/* The largest node number the checkers take in a route */
#define MAX_NODE	1023

/*
 * The base page size (vm_util's psize()): 4 KiB, or 16 or 64 KiB on arm64
 * kernels configured so.  A folio of MIG_PAGE_KB KiB is a base page.
 */
#define MIG_PAGE_SIZE	((unsigned long)psize())
#define MIG_PAGE_KB	(MIG_PAGE_SIZE / 1024)

/* ---- anon (m)THP configuration ---------------------------------------- */

/*
 * Make new anonymous faults produce folios of exactly @kb KiB (MIG_PAGE_KB
 * = base pages only).  The first change of mthp_select() or
 * shmem_thp_select() saves the THP settings (thp_save_settings()), which
 * thp_restore() (also registered with atexit()) puts back.
 * Returns 0, or -1 if the size is not offered by the kernel.
 */
int mthp_select(unsigned long kb);
/* Non-zero if the kernel offers anon folios of @kb KiB (MIG_PAGE_KB always). */
int mthp_available(unsigned long kb);
/*
 * Restore the settings saved by the first selection; idempotent, and called
 * from signal handlers too (no malloc(), no stdio lock but on failure).
 */
void thp_restore(void);

/* ---- memory regions ----------------------------------------------------- */

/*
 * mmap @len bytes of anonymous memory aligned to @folio_kb, advise it for
 * that folio size and fault every page in on @node.  @len must be a multiple
 * of the folio size.  Returns NULL on failure.
 */
void *region_alloc(size_t len, unsigned long folio_kb, int node);
void region_free(void *buf, size_t len);

/* ---- data pattern --------------------------------------------------------- */

/* Fill @buf with words unique per (seed, page index, word index). */
void fill_pattern(void *buf, size_t len, uint64_t seed);
/*
 * Check @buf against fill_pattern(@seed).  Returns -1 if intact, else the
 * offset of the first bad byte (the first bad page is reported on stderr).
 */
long verify_pattern(const void *buf, size_t len, uint64_t seed);

/* ---- placement -------------------------------------------------------- */

/* Number of the @n pages in @addrs that are not on @node, -1 on error. */
long pages_on_node(void **addrs, unsigned long n, int node);
/* Same for every base page of [buf, buf + len). */
long region_pages_on_node(void *buf, size_t len, int node);
/* Node of every base page of [buf, buf + len) into @nodes (or -errno): 0 or -1. */
int region_nodes(void *buf, size_t len, int *nodes);
/*
 * Pages of [buf, buf + len) per node into @counts[0 .. @nr_nodes - 1];
 * @counts[@nr_nodes] gets the pages on higher nodes or not present.  0 or -1.
 */
int region_node_counts(void *buf, size_t len, long *counts, int nr_nodes);

/*
 * Check through /proc/self/pagemap and /proc/kpageflags that the region is
 * made of folios of exactly @kb KiB.  0 if so, -1 (with a message) if not.
 */
int check_folio_size(void *buf, size_t len, unsigned long kb);
/* Same for hugetlb folios (KPF_HUGE instead of KPF_THP). */
int check_hugetlb_size(void *buf, size_t len, unsigned long kb);
/*
 * The number of @kb KiB blocks of [buf, buf + len) that are not one anon
 * folio of that size (the first one reported), or -1 if it cannot tell.
 */
long count_not_folios(void *buf, size_t len, unsigned long kb);
/*
 * PFNs of the pages at buf, buf + step, ... below buf + len into @pfns
 * (0 if not present).  0, or -1 (with a message) if pagemap cannot be
 * opened; a failed read exits (vm_util's pagemap_get_entry()).
 */
int region_pfns(void *buf, size_t len, size_t step, uint64_t *pfns);
void check_folio_close(void);

/* ---- migration ------------------------------------------------------------ */

struct move_stats {
	uint64_t ns;		/* wall time spent inside move_pages() only */
	unsigned long calls;	/* move_pages() calls issued */
	unsigned long addrs;	/* addresses passed in total */
	unsigned long busy_moved; /* -EBUSY status, but page did move */
	unsigned long retried;	/* pages moved again after a transient status */
};

/*
 * Move [buf, buf + len) to @node with move_pages(MPOL_MF_MOVE), passing one
 * address every @step bytes and at most @per_call addresses per call
 * (0 = all in one call), then once more the pages a transient status
 * (-EBUSY, -ENOENT, -EAGAIN) kept back or that got none.  Returns the
 * number of passed pages that did not end up on @node, or -1 if the
 * syscall itself failed or reported a page moved that is not on @node.
 * @st may be NULL.
 */
long move_range(void *buf, size_t len, size_t step, int node,
		unsigned long per_call, struct move_stats *st);
/*
 * Non-zero: move_range() brackets its move_pages() calls with a marker
 * system call, personality(0xffffffff) (a query: it changes nothing), for
 * the instruction-count plugin (scripts/insn-plugin.c).
 */
extern int move_range_marked;
/*
 * One move_pages(MPOL_MF_MOVE) of the @n pages at @addrs to @node; the time
 * spent in it into @ns.  Its return value: -1 (with a message) if it failed
 * or reported a page moved that is not on @node, else the number of pages
 * it reports not migrated.
 */
long move_addrs(void **addrs, unsigned long n, int node, uint64_t *ns);

/* ---- misc ------------------------------------------------------------------ */

uint64_t now_ns(void);
/* Non-zero if @node exists and has memory. */
int node_has_memory(int node);
/*
 * 0 if NUMA is usable and every node of @route has memory; otherwise says
 * why on stderr, after "@prog: ", and returns 4 (skip, as kselftest).
 */
int route_usable(const char *prog, const int *route, int n);
/* A small text file (sysfs, procfs) into @buf, NUL-terminated: length or -1. */
ssize_t read_text(const char *path, char *buf, size_t size);

/* ---- shmem (m)THP configuration ---------------------------------------- */

/*
 * Non-zero if anonymous shmem (MAP_SHARED | MAP_ANONYMOUS) can get folios of
 * @kb KiB: hugepages-<kb>kB/shmem_enabled exists (MIG_PAGE_KB always).
 */
int shmem_thp_available(unsigned long kb);
/*
 * Make new shmem folios exactly @kb KiB: that size's shmem_enabled becomes
 * "always", every other size "never".  The top-level shmem_enabled, which
 * is all that tmpfs and memfd follow in 6.12 (PMD size or nothing), becomes
 * "always" if @kb is the PMD size, else "never".  Saved and restored as
 * by mthp_select().  Returns 0, or -1 if the size is not offered.
 */
int shmem_thp_select(unsigned long kb);

/* ---- more regions ------------------------------------------------------- */

/*
 * mmap @len bytes at an address aligned to @folio_kb, with @flags
 * (MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS ...) on @fd at offset 0, and
 * advise it for that folio size (not with MAP_HUGETLB, whose size is in
 * @flags).  Unlike trimming an over-sized mapping, the new mapping starts
 * at file offset 0, so its folios can be aligned.  Nothing is faulted in.
 * Returns NULL on failure; free with region_free().
 */
void *region_map(size_t len, unsigned long folio_kb, int flags, int fd);
/* Write-fault every page of [buf, buf + len) in with allocations on @node. */
int region_fault_in(void *buf, size_t len, int node);
/*
 * Allocate the calling thread's new pages on @node only (MPOL_BIND), or
 * as by default if @node < 0: 0, or -1 with a message.
 */
int bind_to_node(int node);

/* ---- more placement ------------------------------------------------------ */

/* /proc/kpageflags bit of include/linux/kernel-page-flags.h, not in UAPI */
#define KPF_MLOCKED	33

/*
 * Number of base pages of [buf, buf + len) whose /proc/kpageflags entry
 * lacks bit @kpf (KPF_*), counting pages that are not present; pages
 * with any flag of the mask @skip are not checked.  -1 on error.  The
 * first such page is reported on stderr.
 */
long region_kpf_missing(void *buf, size_t len, int kpf, uint64_t skip);
/*
 * /proc/kpageflags entry of every base page of [buf, buf + len) into
 * @flags (0 for a page not present): 0, or -1 with a message.
 */
int region_kpf(void *buf, size_t len, uint64_t *flags);

/* ---- option parsing --------------------------------------------------------- */

/* A non-negative number (decimal, 0x hex, 0 octal); 0, or -1 if malformed. */
int parse_ulong(const char *s, unsigned long *out);
/* Comma list of numbers into @out; returns the count or -1. */
int parse_list(const char *arg, unsigned long *out, int max);
/*
 * A route of nodes, "0,1,0,2": at least two, each at most @max_node and not
 * the previous one again. Returns the count or -1.
 */
int parse_route(const char *arg, int *route, int max, int max_node);
/*
 * Folio sizes in KiB: "all" (4,16,64,256,2048: those from the base page
 * size up, with 64K pages 64,256,2048) or a comma list of powers of two
 * from the base page size. Returns the count or -1.
 */
int parse_folio_sizes(const char *arg, unsigned long *kbs, int max);

/* ---- byte streams and caches ------------------------------------------- */

/*
 * Bytes [off, off + len) of a pseudo-random stream determined by @seed:
 * contents of any length and alignment (files, disk sectors) that can be
 * checked piece by piece.
 */
void fill_stream(void *buf, size_t len, uint64_t seed, uint64_t off);
/* -1 if @buf holds those bytes, else the offset in @buf of the first bad one. */
long verify_stream(const void *buf, size_t len, uint64_t seed, uint64_t off);
/* sync(), then drop the clean page cache, dentries and inodes: 0 or -1. */
int drop_caches(void);

#endif /* MIGUTIL_H */
