/* SPDX-License-Identifier: GPL-2.0 */
/*
 * migutil - small helpers for page-migration benchmarks and integrity tests.
 *
 * Everything here runs inside the test guest as root, statically linked.
 * Only <numaif.h> constants are used, the syscalls are issued directly:
 * any libnuma object drags in the whole static library, whose getaddrinfo()
 * use makes the static link warn.  Node and CPU lists come from sysfs.  Helpers print a diagnostic on stderr when they fail so
 * callers can simply propagate the error code.
 */
#ifndef MIGUTIL_H
#define MIGUTIL_H

#include <stddef.h>
#include <stdint.h>

#define MIG_PAGE_SIZE	4096UL

/* ---- anon (m)THP configuration ---------------------------------------- */

/*
 * Make new anonymous faults produce folios of exactly @kb KiB (4 = base
 * pages only).  The first call saves every setting it may touch; the saved
 * state is restored by mthp_restore() (also registered with atexit()).
 * Returns 0, or -1 if the size is not offered by the kernel.
 */
int mthp_select(unsigned long kb);
/* Non-zero if the kernel offers anon folios of @kb KiB (4 always). */
int mthp_available(unsigned long kb);
/*
 * Restore the settings saved by the first mthp_select(); idempotent and
 * async-signal-safe (only open/write/close).
 */
void mthp_restore(void);

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

/*
 * Check through /proc/self/pagemap and /proc/kpageflags that the region is
 * made of folios of exactly @kb KiB.  0 if so, -1 (with a message) if not.
 */
int check_folio_size(void *buf, size_t len, unsigned long kb);
void check_folio_close(void);

/* ---- migration ------------------------------------------------------------ */

struct move_stats {
	uint64_t ns;		/* wall time spent inside move_pages() only */
	unsigned long calls;	/* move_pages() calls issued */
	unsigned long addrs;	/* addresses passed in total */
	unsigned long busy_moved; /* -EBUSY status, but page did move */
};

/*
 * Move [buf, buf + len) to @node with move_pages(MPOL_MF_MOVE), passing one
 * address every @step bytes and at most @per_call addresses per call
 * (0 = all in one call).  Returns the number of passed pages that did not
 * end up on @node, or -1 if the syscall itself failed.  @st may be NULL.
 */
long move_range(void *buf, size_t len, size_t step, int node,
		unsigned long per_call, struct move_stats *st);

/* ---- misc ------------------------------------------------------------------ */

uint64_t now_ns(void);
/* Non-zero if the kernel has NUMA syscalls (CONFIG_NUMA). */
int numa_usable(void);
/* Non-zero if @node exists and has memory. */
int node_has_memory(int node);
/* CPUs of @node into @cpus (0 for a memory-only node). */
int node_cpus(int node, int *cpus, int max);
/* Expand a kernel list file such as "0-3,8"; count or -1. */
int sysfs_read_list(const char *path, int *out, int max);

#endif /* MIGUTIL_H */
