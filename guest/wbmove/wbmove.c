// SPDX-License-Identifier: GPL-2.0
/*
 * wbmove - migrate page cache that is under writeback together with
 * anonymous memory, in one move_pages() call.
 *
 * Maps pages of a block device (MAP_SHARED, 64 MiB in, away from what
 * udev reads) and as many anonymous pages, faults both in on node FROM,
 * dirties them, starts the writeback of the device pages with
 * sync_file_range() and, while the device has not completed it (null_blk
 * with late completions), moves all of them to node TO with one
 * move_pages() call.  The first,
 * asynchronous pass of migrate_pages() fails the device pages before their
 * unmap (-EBUSY, under writeback); the synchronous pass then waits and
 * moves them.
 *
 * Prints the PFNs the device pages had before the move ("wb_pfns: ..."),
 * how many of them were under writeback at the move, and how many of all
 * pages ended on the node.  Exit: 0 every page moved, 1 not, 2 setup
 * problem.
 *
 * Usage: wbmove DEVICE FROM TO [PAGES]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "migutil.h"

#define DEV_OFFSET		(64UL << 20)

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned long n = 16, from, to, i;
	long missing;
	uint64_t *pfns, *kpf;
	char *dev, *anon;
	int fd, wb = 0;
	size_t len;

	if (argc < 4 || parse_ulong(argv[2], &from) ||
	    parse_ulong(argv[3], &to) ||
	    (argc > 4 && (parse_ulong(argv[4], &n) || !n))) {
		fprintf(stderr, "usage: wbmove DEVICE FROM TO [PAGES]\n");
		return 2;
	}
	len = n * psz;
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	/* the device pages are faulted in here, not found cached elsewhere */
	posix_fadvise(fd, DEV_OFFSET, len, POSIX_FADV_DONTNEED);
	dev = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   DEV_OFFSET);
	if (dev == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	/* anonymous pages right after the device's, for one move_pages() */
	anon = mmap(dev + len, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	pfns = calloc(n, sizeof(*pfns));
	kpf = calloc(n, sizeof(*kpf));
	if (anon == MAP_FAILED || !pfns || !kpf) {
		perror("mmap");
		return 2;
	}
	if (bind_to_node(from))
		return 2;
	memset(dev, 0x5a, len);
	memset(anon, 0xa5, len);
	if (bind_to_node(-1))
		return 2;
	/* the number of pages not on the node (placement: on stderr) */
	if (region_pages_on_node(dev, 2 * len, from)) {
		fprintf(stderr, "wbmove: not every page is on node %lu\n", from);
		return 2;
	}
	if (sync_file_range(fd, DEV_OFFSET, len, SYNC_FILE_RANGE_WRITE)) {
		perror("sync_file_range");
		return 2;
	}
	if (region_pfns(dev, len, psz, pfns) || region_kpf(dev, len, kpf))
		return 2;
	for (i = 0; i < n; i++)
		wb += !!(kpf[i] & BIT_ULL(KPF_WRITEBACK));

	missing = move_range(dev, 2 * len, psz, to, 0, NULL);

	printf("wb_pfns:");
	for (i = 0; i < n; i++)
		printf(" 0x%llx", (unsigned long long)pfns[i]);
	printf("\nunder_writeback: %d of %lu\n", wb, n);
	printf("moved: %ld of %lu to node %lu\n",
	       missing < 0 ? 0 : (long)(2 * n) - missing, 2 * n, to);
	return missing ? 1 : 0;
}
