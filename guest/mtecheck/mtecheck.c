// SPDX-License-Identifier: GPL-2.0
/*
 * mtecheck - arm64 MTE allocation tags must move with the pages they tag.
 *
 * For every folio size: map PROT_MTE anonymous memory, fault it in on the
 * first node of the route, give every 16-byte granule a tag of its own
 * (1-15, never 0: untagged memory has tag 0) with STG and write a pattern
 * through the tagged pointers; then move the region along the route with
 * move_pages(). After every hop: the pages must be on the new node, every
 * granule's tag read back with LDG must be the one it was given, and every
 * byte must be read back through its tagged pointer with synchronous tag
 * checks (PR_MTE_TCF_SYNC): a tag lost on the way is a tag-check fault
 * (SIGSEGV, SEGV_MTESERR), counted per page and reported.
 *
 * Page migration carries a page's tags only in copy_highpage(): a migrator
 * that copies the bytes alone (a DMA engine) leaves the destination with
 * tags cleared when it is mapped, unless the core keeps tagged folios away
 * from it.
 *
 * QEMU before 8.0 (Debian 12's 7.2) keeps one tag per page in system
 * emulation (QEMU issue 1416: the tag address lacks the offset in the page),
 * so that the granules of a page overwrite each other's tags: mtecheck
 * finds out first, and there gives every granule of a page the page's tag
 * (neighbouring pages differ), which still shows a page whose tags were
 * lost or not copied; elsewhere each granule gets its own.
 *
 * One line per case on stdout ("ok", "FAIL"), diagnostics on stderr.
 * Exit: 0 all passed, 1 a check failed, 2 setup problem, 4 skip (no MTE:
 * not arm64, or a kernel or CPU without it). Run "mtecheck -h" for the
 * options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "migutil.h"

#define MAX_SIZES	16
#define MAX_ROUTE	32
#define GRANULE		16UL

#ifndef PROT_MTE
#define PROT_MTE	0x20
#endif
#ifndef HWCAP2_MTE
#define HWCAP2_MTE	(1 << 18)
#endif
#ifndef PR_SET_TAGGED_ADDR_CTRL
#define PR_SET_TAGGED_ADDR_CTRL	55
#define PR_TAGGED_ADDR_ENABLE	(1UL << 0)
#endif
#ifndef PR_MTE_TCF_SYNC
#define PR_MTE_TCF_SYNC		(1UL << 1)
#define PR_MTE_TAG_SHIFT	3
#endif
#ifndef SEGV_MTESERR
#define SEGV_MTESERR	9
#endif

static unsigned long page_size;
static int tag_per_page;	/* the machine keeps one tag per page */

/* The tag of the granule at untagged address @a: 1-15, neighbours differ. */
static unsigned int granule_tag(uintptr_t a)
{
	return 1 + (a / (tag_per_page ? page_size : GRANULE)) % 15;
}

static uint8_t *tagged(uintptr_t a, unsigned int tag)
{
	return (uint8_t *)(a | (uintptr_t)tag << 56);
}

/* The pattern: each 8-byte word says where it is and in which round. */
static uint64_t word_of(uintptr_t a, unsigned int round)
{
	return (a * 0x9e3779b97f4a7c15ULL) ^ round;
}

#ifdef __aarch64__
/* STG: set the allocation tag of the granule at @p to @p's tag. */
static void set_tag(uint8_t *p)
{
	asm volatile(".arch armv8.5-a+memtag\n\tstg %0, [%0]"
		     : : "r"(p) : "memory");
}

/* LDG: the allocation tag of the granule at @a. */
static unsigned int get_tag(uintptr_t a)
{
	uintptr_t p = a;

	asm volatile(".arch armv8.5-a+memtag\n\tldg %0, [%0]"
		     : "+r"(p) : : "memory");
	return (p >> 56) & 0xf;
}
#else
static void set_tag(uint8_t *p) { (void)p; }
static unsigned int get_tag(uintptr_t a) { (void)a; return 0; }
#endif

static int mte_usable(void)
{
#ifdef __aarch64__
	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE)) {
		printf("mtecheck: no MTE here (the CPU or the kernel has none)\n");
		return 0;
	}
	/* synchronous tag checks; IRG's exclude mask unused (tags set here) */
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, PR_TAGGED_ADDR_ENABLE |
		  PR_MTE_TCF_SYNC | (0xfffeUL << PR_MTE_TAG_SHIFT), 0, 0, 0)) {
		printf("mtecheck: prctl(PR_SET_TAGGED_ADDR_CTRL, sync): %s\n",
		       strerror(errno));
		return 0;
	}
	return 1;
#else
	printf("mtecheck: no MTE here (not arm64)\n");
	return 0;
#endif
}

/*
 * Does the machine keep a tag per granule? Two granules of the first page
 * of @buf (tag 0 yet) that share a tag byte on QEMU < 8.0: the first keeps
 * its tag only if it has its own. The tags are set back to 0.
 */
static void probe_tag_storage(uintptr_t buf)
{
	set_tag(tagged(buf, 1));
	set_tag(tagged(buf + 2 * GRANULE, 2));
	tag_per_page = get_tag(buf) != 1;
	set_tag(tagged(buf, 0));
	set_tag(tagged(buf + 2 * GRANULE, 0));
	if (tag_per_page)
		printf("mtecheck: this machine keeps one tag per page (QEMU < 8.0, issue 1416): a tag per page, not per granule\n");
}

/* ---- tag-check faults -------------------------------------------------- */

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;
static volatile uintptr_t fault_addr;
static volatile int fault_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!fault_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	fault_addr = (uintptr_t)si->si_addr;
	fault_code = si->si_code;
	fault_armed = 0;
	siglongjmp(fault_jmp, 1);
}

/* ---- one case ---------------------------------------------------------- */

struct report {
	unsigned long tags_bad;		/* granules whose tag changed */
	unsigned long pages_faulted;	/* pages with a tag-check fault */
	unsigned long words_bad;	/* words read back wrong */
	uintptr_t first_tag, first_fault, first_word;
	unsigned int first_tag_got;
	int first_code;
};

static void fill(uintptr_t buf, size_t len, unsigned int round)
{
	uintptr_t g, w;

	for (g = buf; g < buf + len; g += GRANULE) {
		uint8_t *p = tagged(g, granule_tag(g));

		set_tag(p);
		for (w = 0; w < GRANULE; w += 8)
			*(volatile uint64_t *)(p + w) = word_of(g + w, round);
	}
}

/* Tags (LDG) of every granule, then every word through its tagged pointer. */
static void check(uintptr_t buf, size_t len, unsigned int round,
		  struct report *r)
{
	volatile uintptr_t page;	/* kept across the siglongjmp() */
	uintptr_t g, w;
	unsigned int got;

	memset(r, 0, sizeof(*r));
	for (g = buf; g < buf + len; g += GRANULE) {
		got = get_tag(g);
		if (got != granule_tag(g) && !r->tags_bad++) {
			r->first_tag = g;
			r->first_tag_got = got;
		}
	}
	for (page = buf; page < buf + len; page += page_size) {
		volatile uintptr_t gv = page;

		if (sigsetjmp(fault_jmp, 1)) {
			if (!r->pages_faulted++) {
				r->first_fault = fault_addr;
				r->first_code = fault_code;
			}
			continue;	/* the rest of this page unread */
		}
		fault_armed = 1;
		for (gv = page; gv < page + page_size; gv += GRANULE) {
			uint8_t *p = tagged(gv, granule_tag(gv));

			for (w = 0; w < GRANULE; w += 8)
				if (*(volatile uint64_t *)(p + w) !=
				    word_of(gv + w, round) && !r->words_bad++)
					r->first_word = gv + w;
		}
		fault_armed = 0;
	}
}

static int report_bad(const struct report *r, char *why, size_t size)
{
	int n = 0;

	if (!r->tags_bad && !r->pages_faulted && !r->words_bad)
		return 0;
	if (r->tags_bad)
		n += snprintf(why + n, size - n,
			      "%lu granules lost their tags (first at %#lx: tag %u, not %u); ",
			      r->tags_bad, (unsigned long)r->first_tag,
			      r->first_tag_got, granule_tag(r->first_tag));
	if (r->pages_faulted)
		n += snprintf(why + n, size - n,
			      "%lu pages took a tag-check fault on a tagged read (first at %#lx, %s); ",
			      r->pages_faulted, (unsigned long)r->first_fault,
			      r->first_code == SEGV_MTESERR ?
			      "SEGV_MTESERR" : "not SEGV_MTESERR");
	if (r->words_bad)
		snprintf(why + n, size - n,
			 "%lu words read back wrong (first at %#lx); ",
			 r->words_bad, (unsigned long)r->first_word);
	return 1;
}

/*
 * Returns 0 (ok), EXIT_FAIL or EXIT_SETUP; prints the case's line.
 */
static int run_case(unsigned long kb, size_t len, const int *route, int nr)
{
	char name[64], why[1024];
	struct report r;
	uintptr_t buf;
	void *map;
	size_t off;
	long left;
	int hop;

	snprintf(name, sizeof(name), "mte-%luK", kb);
	if (mthp_select(kb)) {
		printf("FAIL %s: cannot select %lu KiB folios\n", name, kb);
		return EXIT_SETUP;
	}
	map = region_map(len, kb, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!map)
		return EXIT_SETUP;
	buf = (uintptr_t)map;
	if (mprotect(map, len, PROT_READ | PROT_WRITE | PROT_MTE)) {
		printf("FAIL %s: mprotect(PROT_MTE): %s\n", name, strerror(errno));
		region_free(map, len);
		return EXIT_SETUP;
	}
	if (bind_to_node(route[0]))
		goto setup;
	for (off = 0; off < len; off += page_size)
		*(volatile char *)(buf + off) = 0;	/* tag 0 everywhere yet */
	if (bind_to_node(-1))
		goto setup;
	if (check_folio_size(map, len, kb)) {
		printf("FAIL %s: not made of %lu KiB folios\n", name, kb);
		goto fail;
	}
	probe_tag_storage(buf);
	fill(buf, len, 0);
	check(buf, len, 0, &r);
	if (report_bad(&r, why, sizeof(why))) {
		printf("FAIL %s: before any move: %s\n", name, why);
		goto fail;
	}
	for (hop = 1; hop < nr; hop++) {
		left = move_range(map, len, page_size, route[hop], 0, NULL);
		if (left < 0)
			goto setup;
		if (left) {
			printf("FAIL %s: hop %d (node %d -> %d): %ld pages not moved\n",
			       name, hop, route[hop - 1], route[hop], left);
			goto fail;
		}
		check(buf, len, hop - 1, &r);
		if (report_bad(&r, why, sizeof(why))) {
			printf("FAIL %s: hop %d (node %d -> %d): %s\n", name,
			       hop, route[hop - 1], route[hop], why);
			goto fail;
		}
		/* new data and the same tags for the next hop */
		fill(buf, len, hop);
	}
	printf("ok %s: %zu KiB, %lu granules (a tag per %s), tags and bytes exact after %d hops\n",
	       name, len / 1024, len / GRANULE, tag_per_page ? "page" : "granule",
	       nr - 1);
	region_free(map, len);
	return 0;
fail:
	region_free(map, len);
	return EXIT_FAIL;
setup:
	printf("FAIL %s: setup failed\n", name);
	region_free(map, len);
	return EXIT_SETUP;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: mtecheck [-s KIB] [-k SIZES] [-n ROUTE]\n"
"  -s KIB    memory per folio size (default 1024; a multiple of each size)\n"
"  -k SIZES  folio sizes in KiB, comma list (default: the base page size)\n"
"  -n ROUTE  nodes to move through (default 0,1,2,0)\n");
}

int main(int argc, char **argv)
{
	unsigned long kbs[MAX_SIZES], kib = 1024;
	int route[MAX_ROUTE] = { 0, 1, 2, 0 }, nr_route = 4, nr_kbs = 0;
	struct sigaction sa = { 0 };
	int i, c, rc = 0, ret;

	page_size = sysconf(_SC_PAGESIZE);
	while ((c = getopt(argc, argv, "s:k:n:h")) != -1) {
		switch (c) {
		case 's':
			if (parse_ulong(optarg, &kib) || !kib)
				goto bad;
			break;
		case 'k':
			nr_kbs = parse_list(optarg, kbs, MAX_SIZES);
			if (nr_kbs < 1)
				goto bad;
			break;
		case 'n':
			nr_route = parse_route(optarg, route, MAX_ROUTE, MAX_NODE);
			if (nr_route < 0)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!nr_kbs) {
		kbs[0] = page_size / 1024;
		nr_kbs = 1;
	}
	for (i = 0; i < nr_kbs; i++)
		if (kbs[i] * 1024 < page_size || kbs[i] & (kbs[i] - 1) ||
		    kib % kbs[i])
			goto bad;
	if (!mte_usable())
		return EXIT_SKIP;
	ret = route_usable("mtecheck", route, nr_route);
	if (ret)
		return ret;
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < nr_kbs; i++) {
		ret = run_case(kbs[i], kib * 1024, route, nr_route);
		if (ret > rc)
			rc = ret;
	}
	thp_restore();
	return rc;
bad:
	usage(stderr);
	return EXIT_SETUP;
}
