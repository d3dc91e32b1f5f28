// SPDX-License-Identifier: GPL-2.0
/*
 * bh_holder - change block-device buffers the way a file system changes
 * its metadata, to test the migration of their folios.
 *
 * A file system reaches a metadata block through its buffer head: it takes
 * a reference (sb_bread()), changes b_data without the folio lock or the
 * buffer lock, marks the buffer dirty and drops the reference (ext2 and
 * ext4 without a journal update inodes and bitmaps so).  Such a folio is
 * migrated by buffer_migrate_folio_norefs(), which moves it only if no
 * buffer is referenced and copies it while holding the buffer locks and
 * i_private_lock: a change made before its check is in the copy, and no
 * new reference can be taken before the move.  A copy made before that
 * check (a batch copy ahead of the move) can miss a change made by a
 * holder that drops its reference in between; the move then installs the
 * stale copy.
 *
 * On load, one thread per page of the first @blocks blocks of @dev (opened
 * exclusively, block size @blksize) takes references to the buffers of its
 * page, changes each of them @changes times over @hold_us microseconds,
 * drops the references, waits @gap_us and starts again: a thread per page,
 * so that one page's migration (which holds the folio lock, and with it a
 * lookup) does not hold up the changes of the others.  Each time a thread
 * takes a buffer again it checks that the buffer holds the last pattern it
 * wrote there ("stale" counts the buffers that did not).  Meanwhile a
 * test migrates the device's pages (mmap() and move_pages()).  Writing 1
 * to the "stop" parameter stops the threads, writes the device back, drops
 * its clean page cache and reads every block again ("final_bad": not the
 * last pattern).  Counters are read-only parameters in
 * /sys/module/bh_holder/parameters/.
 */
#include <linux/blkdev.h>
#include <linux/buffer_head.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

static char *dev = "/dev/vdb";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "block device whose first blocks are changed");
static unsigned int blocks = 256;
module_param(blocks, uint, 0444);
MODULE_PARM_DESC(blocks, "number of blocks, from block 0");
static unsigned int blksize = 1024;
module_param(blksize, uint, 0444);
MODULE_PARM_DESC(blksize, "block size set on the device (512..PAGE_SIZE)");
static unsigned int hold_us = 500;
module_param(hold_us, uint, 0444);
MODULE_PARM_DESC(hold_us, "how long the references are held");
static unsigned int changes = 5;
module_param(changes, uint, 0444);
MODULE_PARM_DESC(changes, "changes of each buffer while it is held");
static unsigned int gap_us = 50;
module_param(gap_us, uint, 0444);
MODULE_PARM_DESC(gap_us, "pause without references between holds");

static unsigned long rounds, stale, final_bad, read_errors;
module_param(rounds, ulong, 0444);
MODULE_PARM_DESC(rounds, "holds completed (all threads; counters are set at stop)");
module_param(stale, ulong, 0444);
MODULE_PARM_DESC(stale, "buffers found without the last change");
module_param(final_bad, ulong, 0444);
MODULE_PARM_DESC(final_bad, "blocks without the last change after stop");
module_param(read_errors, ulong, 0444);
MODULE_PARM_DESC(read_errors, "blocks that could not be read");

struct holder {
	struct task_struct *task;
	unsigned int first, nr;		/* its blocks */
	unsigned long rounds, stale, read_errors;
};

static struct file *bdev_file;
static struct holder *holders;
static unsigned int nr_holders;
static struct buffer_head **bhs;	/* per block, while held */
static u32 *gen;		/* per block: the last pattern written */
static bool stopped;
static DEFINE_MUTEX(stop_lock);

/* Every word of block @blk in generation @g: the two and a salt. */
static u64 pattern(unsigned int blk, u32 g)
{
	return (u64)g << 32 ^ blk ^ 0xb40de7a000000000ULL;
}

static void fill(void *data, unsigned int blk, u32 g)
{
	u64 *p = data, v = pattern(blk, g);
	unsigned int i;

	for (i = 0; i < blksize / sizeof(u64); i++)
		WRITE_ONCE(p[i], v);
}

static bool holds(const void *data, unsigned int blk, u32 g)
{
	const u64 *p = data;
	u64 v = pattern(blk, g);
	unsigned int i;

	for (i = 0; i < blksize / sizeof(u64); i++)
		if (READ_ONCE(p[i]) != v)
			return false;
	return true;
}

static struct block_device *bdev(void)
{
	return file_bdev(bdev_file);
}

/* Take block @blk with a reference, as sb_bread() does; NULL on error. */
static struct buffer_head *get_block(unsigned int blk, unsigned long *errors)
{
	struct buffer_head *bh = __bread(bdev(), blk, blksize);

	if (!bh)
		(*errors)++;
	return bh;
}

static int holder_fn(void *data)
{
	struct holder *h = data;
	unsigned int i, c, end = h->first + h->nr;

	while (!kthread_should_stop()) {
		for (i = h->first; i < end; i++) {
			bhs[i] = get_block(i, &h->read_errors);
			if (bhs[i] && !holds(bhs[i]->b_data, i, gen[i])) {
				if (!h->stale)
					pr_err("bh_holder: block %u lost generation %u\n",
					       i, gen[i]);
				h->stale++;
			}
		}
		for (c = 0; c < changes; c++) {
			for (i = h->first; i < end; i++) {
				if (!bhs[i])
					continue;
				fill(bhs[i]->b_data, i, ++gen[i]);
				mark_buffer_dirty(bhs[i]);
			}
			usleep_range(hold_us / changes, hold_us / changes + 10);
		}
		for (i = h->first; i < end; i++)
			brelse(bhs[i]);
		h->rounds++;
		usleep_range(gap_us, gap_us + 10);
	}
	return 0;
}

static void stop_threads(void)
{
	unsigned int t;

	for (t = 0; t < nr_holders; t++) {
		if (IS_ERR_OR_NULL(holders[t].task))
			continue;
		kthread_stop(holders[t].task);
		rounds += holders[t].rounds;
		stale += holders[t].stale;
		read_errors += holders[t].read_errors;
	}
}

static void stop_holder(void)
{
	struct buffer_head *bh;
	unsigned int i;

	mutex_lock(&stop_lock);
	if (stopped)
		goto out;
	stopped = true;
	stop_threads();
	/* write back, drop what is clean and unused, read from the device */
	sync_blockdev(bdev());
	invalidate_bdev(bdev());
	for (i = 0; i < blocks; i++) {
		bh = get_block(i, &read_errors);
		if (bh && !holds(bh->b_data, i, gen[i]))
			final_bad++;
		brelse(bh);
	}
	pr_info("bh_holder: %lu holds of %u blocks, %lu stale, %lu bad at the end, %lu read errors\n",
		rounds, blocks, stale, final_bad, read_errors);
out:
	mutex_unlock(&stop_lock);
}

static int stop_set(const char *val, const struct kernel_param *kp)
{
	bool v;
	int ret = kstrtobool(val, &v);

	if (ret)
		return ret;
	if (!v)
		return -EINVAL;
	stop_holder();
	return 0;
}

static const struct kernel_param_ops stop_ops = {
	.set = stop_set,
};
module_param_cb(stop, &stop_ops, NULL, 0200);
MODULE_PARM_DESC(stop, "write 1: stop changing and check the device");

static int __init bh_holder_init(void)
{
	unsigned int i, per_page;
	int ret;

	if (!blocks || !changes || blksize < 512 || blksize > PAGE_SIZE)
		return -EINVAL;
	bdev_file = bdev_file_open_by_path(dev, BLK_OPEN_READ | BLK_OPEN_WRITE,
					   &bdev_file, NULL);
	if (IS_ERR(bdev_file))
		return PTR_ERR(bdev_file);
	ret = set_blocksize(bdev_file, blksize);
	if (ret)
		goto out_close;
	if ((u64)blocks * blksize > bdev_nr_bytes(bdev())) {
		ret = -EINVAL;
		goto out_close;
	}
	ret = -ENOMEM;
	per_page = PAGE_SIZE / blksize;
	nr_holders = DIV_ROUND_UP(blocks, per_page);
	holders = kcalloc(nr_holders, sizeof(*holders), GFP_KERNEL);
	bhs = kcalloc(blocks, sizeof(*bhs), GFP_KERNEL);
	gen = kcalloc(blocks, sizeof(*gen), GFP_KERNEL);
	if (!holders || !bhs || !gen)
		goto out_free;
	/* generation 0: the starting contents, written through the buffers */
	for (i = 0; i < blocks; i++) {
		struct buffer_head *bh = get_block(i, &read_errors);

		if (!bh) {
			ret = -EIO;
			goto out_free;
		}
		fill(bh->b_data, i, 0);
		mark_buffer_dirty(bh);
		brelse(bh);
	}
	for (i = 0; i < nr_holders; i++) {
		struct holder *h = &holders[i];

		h->first = i * per_page;
		h->nr = min(per_page, blocks - h->first);
		h->task = kthread_run(holder_fn, h, "bh_holder/%u", i);
		if (IS_ERR(h->task)) {
			ret = PTR_ERR(h->task);
			stop_threads();
			goto out_free;
		}
	}
	return 0;

out_free:
	kfree(holders);
	kfree(bhs);
	kfree(gen);
out_close:
	fput(bdev_file);
	return ret;
}

static void __exit bh_holder_exit(void)
{
	stop_holder();
	fput(bdev_file);
	kfree(holders);
	kfree(bhs);
	kfree(gen);
}

module_init(bh_holder_init);
module_exit(bh_holder_exit);
MODULE_DESCRIPTION("Test helper: hold and change block-device buffers");
MODULE_LICENSE("GPL");
