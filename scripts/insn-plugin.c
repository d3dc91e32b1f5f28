// SPDX-License-Identifier: GPL-2.0
/*
 * insn-plugin: a QEMU TCG plugin that counts the guest instructions executed
 * at each guest address between markers, for per-symbol instruction counts
 * (make bench's experiment "insns", docs/benchmark.md).
 *
 *   -plugin insn-plugin.so,mark=ADDR,out=FILE
 *
 * Every translation block gets an inline counter of its executions. Each
 * time the block at ADDR (the kernel's entry of the marker system call)
 * runs, the plugin appends to FILE the instructions executed since the
 * previous marker, per block start address:
 *
 *   window N
 *   ffffffff81234560 12345
 *   ...
 *
 * so the instructions of the window that one marker opens and the next
 * closes are the block "window 2k+1" (scripts/insn-report.py attributes
 * the addresses to symbols). With -icount and one TCG thread the counts are
 * exact; with several threads the inline additions may race.
 *
 * The few declarations below are QEMU's plugin API (include/qemu/qemu-plugin.h,
 * API version 1, QEMU 7.2), which Debian does not package.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
		void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
		void (*cb)(unsigned int vcpu, void *data),
		enum qemu_plugin_cb_flags flags, void *data);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
		enum qemu_plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One translation of a block; a block translated again gets another. */
struct block {
	uint64_t vaddr, insns, execs, execs_seen;
};

static struct block **blocks;
static size_t nr_blocks, max_blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mark;
static FILE *out;
static unsigned long window;

static int cmp_vaddr(const void *a, const void *b)
{
	const struct block *x = *(struct block * const *)a;
	const struct block *y = *(struct block * const *)b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The marker ran: write what every block executed since the last one. */
static void on_mark(unsigned int vcpu, void *data)
{
	uint64_t sum = 0;
	size_t i;

	pthread_mutex_lock(&lock);
	qsort(blocks, nr_blocks, sizeof(*blocks), cmp_vaddr);
	fprintf(out, "window %lu\n", window++);
	for (i = 0; i < nr_blocks; i++) {
		struct block *b = blocks[i];

		sum += (b->execs - b->execs_seen) * b->insns;
		b->execs_seen = b->execs;
		if (sum && (i + 1 == nr_blocks || blocks[i + 1]->vaddr != b->vaddr)) {
			fprintf(out, "%" PRIx64 " %" PRIu64 "\n", b->vaddr, sum);
			sum = 0;
		}
	}
	fflush(out);
	pthread_mutex_unlock(&lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&lock);
	if (nr_blocks == max_blocks) {
		max_blocks = max_blocks ? 2 * max_blocks : 65536;
		blocks = realloc(blocks, max_blocks * sizeof(*blocks));
		if (!blocks)
			abort();
	}
	blocks[nr_blocks++] = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	if (b->vaddr == mark)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5))
			mark = strtoull(argv[i] + 5, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			out = fopen(argv[i] + 4, "w");
	}
	if (!mark || !out) {
		fprintf(stderr, "insn-plugin: needs mark=ADDR (hex) and out=FILE (writable)\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	return 0;
}
