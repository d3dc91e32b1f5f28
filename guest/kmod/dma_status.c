// SPDX-License-Identifier: GPL-2.0
/*
 * dma_status - what a DMA provider reports, through tx_status, for the
 * descriptors that a terminate dropped.
 *
 * A client that gives up on a transfer terminates the channel and may then
 * ask dmaengine_tx_status() which of its descriptors completed.  A
 * descriptor that was called back must read DMA_COMPLETE, and one that
 * reads DMA_COMPLETE must have copied its bytes: a descriptor that the
 * terminate dropped before it ran must not read DMA_COMPLETE, even once
 * the channel's completed cookie has passed it.  (One that completed but
 * whose callback the terminate dropped may read DMA_COMPLETE.)  A device
 * that completes out of order (DMA_COMPLETION_NO_ORDER) must read
 * DMA_OUT_OF_ORDER for every descriptor, as dmaengine asks of it: there the
 * callbacks alone tell, and a descriptor called back must have its bytes.
 *
 * On load: takes a DMA_MEMCPY channel by request, queues @nr copies of 64
 * distinct bytes each, waits until @wait_done of them were called back
 * (make the provider slow, e.g. swdma latency_us), terminates the channel
 * with dmaengine_terminate_sync() and asks tx_status of every cookie.
 * Before the terminate, the residue of the last descriptor, still queued,
 * is read too ("queued_residue", -1 where tx_status does not say): a
 * provider with DMA_RESIDUE_GRANULARITY_DESCRIPTOR reports all its bytes.
 * Counters in /sys/module/dma_status/parameters/: "called_back",
 * "completed" (DMA_COMPLETE, or called back out of order, with its bytes),
 * "dropped" (neither DMA_COMPLETE nor called back) and "wrong" (called back
 * but not DMA_COMPLETE, DMA_COMPLETE without its bytes, or any status but
 * DMA_OUT_OF_ORDER on a device that completes out of order).
 */
#include <linux/atomic.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#define CHUNK	64

static unsigned int nr = 32;
module_param(nr, uint, 0444);
MODULE_PARM_DESC(nr, "descriptors queued");
static unsigned int wait_done = 2;
module_param(wait_done, uint, 0444);
MODULE_PARM_DESC(wait_done, "callbacks to wait for before terminating");
static unsigned int called_back, completed, dropped, wrong;
static int queued_residue = -1;
module_param(queued_residue, int, 0444);
module_param(called_back, uint, 0444);
module_param(completed, uint, 0444);
module_param(dropped, uint, 0444);
module_param(wrong, uint, 0444);

struct ds_desc {
	dma_cookie_t cookie;
	bool done;
};

static atomic_t ds_done;
static DECLARE_WAIT_QUEUE_HEAD(ds_wait);

static void ds_callback(void *param, const struct dmaengine_result *res)
{
	struct ds_desc *d = param;

	WRITE_ONCE(d->done, true);
	atomic_inc(&ds_done);
	wake_up(&ds_wait);
}

static int ds_queue(struct dma_chan *chan, struct ds_desc *descs,
		    dma_addr_t buf)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		struct dma_async_tx_descriptor *tx;

		tx = dmaengine_prep_dma_memcpy(chan, buf + (nr + i) * CHUNK,
					       buf + i * CHUNK, CHUNK,
					       DMA_PREP_INTERRUPT | DMA_CTRL_ACK);
		if (!tx)
			return -EIO;
		tx->callback_result = ds_callback;
		tx->callback_param = &descs[i];
		descs[i].cookie = dmaengine_submit(tx);
		if (dma_submit_error(descs[i].cookie))
			return -EIO;
	}
	return 0;
}

static int __init ds_init(void)
{
	struct ds_desc *descs;
	struct dma_chan *chan;
	dma_cap_mask_t mask;
	struct device *dev;
	dma_addr_t buf;
	unsigned int i;
	bool no_order;
	void *cpu;
	int ret;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan))
		return PTR_ERR(chan);
	dev = dmaengine_get_dma_device(chan);

	ret = -ENOMEM;
	descs = kcalloc(nr, sizeof(*descs), GFP_KERNEL);
	cpu = dma_alloc_coherent(dev, 2 * CHUNK * nr, &buf, GFP_KERNEL);
	if (!descs || !cpu)
		goto out;

	memset(cpu, 0, 2 * CHUNK * nr);
	for (i = 0; i < nr; i++)
		memset(cpu + i * CHUNK, i + 1, CHUNK);
	ret = ds_queue(chan, descs, buf);
	dma_async_issue_pending(chan);
	if (!ret && !wait_event_timeout(ds_wait,
					atomic_read(&ds_done) >= wait_done,
					60 * HZ))
		ret = -ETIMEDOUT;
	if (!ret) {
		struct dma_tx_state state;

		if (dmaengine_tx_status(chan, descs[nr - 1].cookie, &state) ==
		    DMA_IN_PROGRESS)
			queued_residue = state.residue;
	}
	dmaengine_terminate_sync(chan);

	no_order = dma_has_cap(DMA_COMPLETION_NO_ORDER, chan->device->cap_mask);
	for (i = 0; i < nr && descs[i].cookie > 0; i++) {
		enum dma_status st = dmaengine_tx_status(chan, descs[i].cookie,
							 NULL);
		bool done = READ_ONCE(descs[i].done);
		bool copied = !memcmp(cpu + (nr + i) * CHUNK, cpu + i * CHUNK,
				      CHUNK);
		bool complete = no_order ? done : st == DMA_COMPLETE;

		called_back += done;
		if (no_order && st != DMA_OUT_OF_ORDER)
			wrong++;
		else if (complete && copied)
			completed++;
		else if (!complete && !done)
			dropped++;
		else
			wrong++;
	}
out:
	if (cpu)
		dma_free_coherent(dev, 2 * CHUNK * nr, cpu, buf);
	kfree(descs);
	dma_release_channel(chan);
	return ret;
}
module_init(ds_init);

static void __exit ds_exit(void)
{
}
module_exit(ds_exit);

MODULE_DESCRIPTION("What a DMA provider reports for terminated descriptors");
MODULE_LICENSE("GPL");
