// SPDX-License-Identifier: GPL-2.0
/*
 * A DMA engine whose "hardware" is the CPU, to test DMA clients on machines
 * without a memcpy engine (virtual machines in particular). A test module of
 * the testbed, not part of the kernel series: built out of the tree against
 * each patched kernel (guest/kmod/Kbuild), whose CONFIG_DMA_TEST_PROVIDERS
 * builds virt-dma in.
 *
 * swdma registers one dma_device with DMA_MEMCPY and DMA_INTERRUPT on
 * nr_channels channels, built on virt-dma as most memcpy providers are
 * (ptdma, sf-pdma, dw-axi-dmac): descriptors, cookies, tx_status and the
 * completion tasklet are the virtual channel's. The "hardware" of a
 * channel is a kernel thread: it takes the issued descriptors one at a
 * time, copies them with memcpy from the pages behind their DMA addresses
 * and completes them. A completion raises the channel's "interrupt" (an
 * irq_work: a hard interrupt of the thread's CPU) whose exit runs the
 * tasklet that calls the completed descriptors back, as an engine's
 * interrupt handler does (ioat's), if the descriptor
 * asked for one (DMA_PREP_INTERRUPT), if it failed, or (unless idle_irq is
 * cleared) when the channel has nothing left to do: the callbacks of
 * descriptors that asked for no interrupt wait for the next one, as on
 * engines that reap completions in batches.
 *
 * To exercise the error paths of clients, module parameters writable at run
 * time delay every descriptor (latency_us) and complete the descriptors
 * queued on a channel in reverse or random order (out_of_order); a
 * fault-injection attribute, swdma/fail_desc in debugfs, fails descriptors
 * as they start (every k-th one with interval=k, a percentage of them with
 * probability), either with an error result and no copy (fail_mode=error)
 * or by hanging them (fail_mode=hang): a hung descriptor stalls its
 * channel, as on a real engine, until the client terminates the channel
 * or, hang_ms later, the channel is reset as ioat's driver
 * recovers one: everything queued on it is called back as aborted (with
 * reset_lose_tail, all but the hung descriptor, whose callback is lost as
 * ioat's was). With error_aborts, a descriptor that fails with an
 * error aborts everything queued behind it, as ioat's error handling does.
 * ring_size bounds the descriptors a channel holds before they complete,
 * as the ring of a real engine does: preparing one more fails or, with
 * prep_blocks set, waits for a slot as idxd's does. max_seg_size,
 * set at load time, limits the length of a memcpy descriptor and of a DMA
 * segment, as dma_get_max_seg_size() reports it. Load-time parameters
 * imitate engines that clients cannot fully trust: results=0 calls failed
 * descriptors back without a result (dmaengine then reports success), and
 * terminate=0 leaves device_terminate_all out, as ioat and idxd do: a
 * client cannot stop a transfer then.
 * slave=1 makes the device a general-purpose controller (DMA_SLAVE), whose
 * channels serve peripherals too. swdma/fail_submit in debugfs fails
 * submissions as idxd fails one on a shared work queue: a descriptor that
 * asked for an interrupt is called back with an error first, then
 * tx_submit returns an error. Writing a channel's index to remove_channel
 * unregisters that channel alone, as idxd does when one of its work queues
 * is disabled. Loaded with out_of_order set, the device
 * declares DMA_COMPLETION_NO_ORDER, and tx_status then says
 * DMA_OUT_OF_ORDER, as dmaengine asks of such devices.
 *
 * The DMA addresses must map directly to memory (no IOMMU translation);
 * probing checks that and fails otherwise. Clients map and unmap their
 * buffers with the DMA API against the swdma platform device as usual.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-direct.h>
#include <linux/dma-map-ops.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/fault-inject.h>
#include <linux/highmem.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/platform_device.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "dmaengine.h"
#include "virt-dma.h"

#define SWDMA_MAX_CHANNELS	16
#define SWDMA_MAX_LATENCY_US	1000000
#define SWDMA_FAILED_COOKIES	16
#define SWDMA_MAX_RING_SIZE	65536

static int swdma_set_uint_range(const char *val, const struct kernel_param *kp,
				unsigned int min, unsigned int max)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n < min || n > max)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static int swdma_set_nr_channels(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, 1, SWDMA_MAX_CHANNELS);
}

static const struct kernel_param_ops swdma_nr_channels_ops = {
	.set = swdma_set_nr_channels,
	.get = param_get_uint,
};

static unsigned int nr_channels = 4;
module_param_cb(nr_channels, &swdma_nr_channels_ops, &nr_channels, 0444);
MODULE_PARM_DESC(nr_channels, "Number of channels, 1..16 (default 4)");

static bool private = true;
module_param(private, bool, 0444);
MODULE_PARM_DESC(private,
		 "Register as DMA_PRIVATE: channels only by request (default true)");

static bool results = true;
module_param(results, bool, 0444);
MODULE_PARM_DESC(results,
		 "Report each descriptor's outcome (DMA_COMPLETION_RESULT); false: call back failed descriptors without a result, as ptdma does (default true)");

static bool terminate = true;
module_param(terminate, bool, 0444);
MODULE_PARM_DESC(terminate,
		 "Provide device_terminate_all; false: none, as ioat and idxd (default true)");

static bool slave;
module_param(slave, bool, 0444);
MODULE_PARM_DESC(slave,
		 "A general-purpose controller: declare DMA_SLAVE too, as controllers serving peripherals do (default false)");

static int swdma_set_max_seg_size(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, 512, UINT_MAX);
}

static const struct kernel_param_ops swdma_max_seg_size_ops = {
	.set = swdma_set_max_seg_size,
	.get = param_get_uint,
};

static unsigned int max_seg_size = UINT_MAX;
module_param_cb(max_seg_size, &swdma_max_seg_size_ops, &max_seg_size, 0444);
MODULE_PARM_DESC(max_seg_size,
		 "Longest memcpy and DMA segment the device takes, 512..4294967295 bytes");

static int swdma_set_ring_size(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, 0, SWDMA_MAX_RING_SIZE);
}

static const struct kernel_param_ops swdma_ring_size_ops = {
	.set = swdma_set_ring_size,
	.get = param_get_uint,
};

static unsigned int ring_size;
module_param_cb(ring_size, &swdma_ring_size_ops, &ring_size, 0644);
MODULE_PARM_DESC(ring_size,
		 "Descriptors a channel holds until they complete, 0..65536 (0: no limit)");

/*
 * idxd prepares a descriptor with idxd_alloc_desc(wq, IDXD_OP_BLOCK): when
 * every descriptor of the work queue is in use, it sleeps (interruptibly:
 * only a signal ends the wait) until one completes.
 */
static bool prep_blocks;
module_param(prep_blocks, bool, 0644);
MODULE_PARM_DESC(prep_blocks,
		 "On a full ring, preparing a descriptor waits for a free slot (interruptibly), as idxd does; false: it fails (default false)");

static int swdma_set_latency(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, 0, SWDMA_MAX_LATENCY_US);
}

static const struct kernel_param_ops swdma_latency_ops = {
	.set = swdma_set_latency,
	.get = param_get_uint,
};

static unsigned int latency_us;
module_param_cb(latency_us, &swdma_latency_ops, &latency_us, 0644);
MODULE_PARM_DESC(latency_us, "Delay of every descriptor, 0..1000000 us");

enum swdma_order { SWDMA_IN_ORDER, SWDMA_REVERSE, SWDMA_RANDOM };

static int swdma_set_order(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, SWDMA_IN_ORDER, SWDMA_RANDOM);
}

static const struct kernel_param_ops swdma_order_ops = {
	.set = swdma_set_order,
	.get = param_get_uint,
};

static unsigned int out_of_order;
module_param_cb(out_of_order, &swdma_order_ops, &out_of_order, 0644);
MODULE_PARM_DESC(out_of_order,
		 "Completion order of the queued descriptors: 0 submission, 1 reverse, 2 random");

/*
 * Failures come from the fault-injection framework
 * (Documentation/fault-injection/fault-injection.rst): fail_desc is asked
 * as each descriptor starts, on any channel, and fails it as fail_mode
 * says. Its attributes are in debugfs, in swdma/fail_desc/ (with
 * CONFIG_FAULT_INJECTION_DEBUG_FS; without it nothing fails):
 * probability=100 with interval=k fails every k-th descriptor started,
 * probability=p with interval=1 p% of them; times=-1 lifts the limit on
 * the failures, verbose=0 keeps them out of the kernel log.
 */
static DECLARE_FAULT_ATTR(swdma_fail_desc);
static struct dentry *swdma_debugfs_dir;

enum swdma_fail_mode { SWDMA_FAIL_ERROR, SWDMA_FAIL_HANG };

static const char * const swdma_fail_modes[] = {
	[SWDMA_FAIL_ERROR]	= "error",
	[SWDMA_FAIL_HANG]	= "hang",
};

static int fail_mode = SWDMA_FAIL_ERROR;

static int swdma_set_fail_mode(const char *val, const struct kernel_param *kp)
{
	int mode = sysfs_match_string(swdma_fail_modes, val);

	if (mode < 0)
		return -EINVAL;
	WRITE_ONCE(fail_mode, mode);
	return 0;
}

static int swdma_get_fail_mode(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", swdma_fail_modes[READ_ONCE(fail_mode)]);
}

static const struct kernel_param_ops swdma_fail_mode_ops = {
	.set = swdma_set_fail_mode,
	.get = swdma_get_fail_mode,
};
module_param_cb(fail_mode, &swdma_fail_mode_ops, NULL, 0644);
MODULE_PARM_DESC(fail_mode,
		 "How descriptors fail: error (error result, no copy) or hang (stall the channel)");

/*
 * ioat's driver resets a channel that makes no progress for two ticks of
 * its timer (ioat_timer_event() -> ioat_reboot_chan()): a hung descriptor
 * stalls its channel until then. hang_ms is that time, 0 for a channel
 * that never recovers (idxd's driver has no such timer: it aborts what a
 * work queue holds when the queue is disabled).
 */
static int swdma_set_hang_ms(const char *val, const struct kernel_param *kp)
{
	return swdma_set_uint_range(val, kp, 0, UINT_MAX);
}

static const struct kernel_param_ops swdma_hang_ms_ops = {
	.set = swdma_set_hang_ms,
	.get = param_get_uint,
};

static unsigned int hang_ms;
module_param_cb(hang_ms, &swdma_hang_ms_ops, &hang_ms, 0644);
MODULE_PARM_DESC(hang_ms,
		 "Reset a channel stalled by a hung descriptor after this many ms, aborting what it holds (0: never)");

/*
 * Or reset them when a test says so: after the client gave up waiting,
 * whatever the time that took, rather than at a time that may come first.
 */
static DECLARE_WAIT_QUEUE_HEAD(swdma_stall_wait);
static atomic_t swdma_resets;

static int swdma_set_reset(const char *val, const struct kernel_param *kp)
{
	atomic_inc(&swdma_resets);
	wake_up_all(&swdma_stall_wait);
	return 0;
}

static const struct kernel_param_ops swdma_reset_ops = {
	.set = swdma_set_reset,
};

module_param_cb(reset, &swdma_reset_ops, NULL, 0200);
MODULE_PARM_DESC(reset,
		 "Write anything to reset now every channel a hung descriptor stalls, as hang_ms does");

/*
 * ioat_abort_descs() skips the descriptor the ring's tail points to, which
 * the reset of a stalled channel did not call back before "dmaengine:
 * ioatdma: call back the descriptor a channel reset stops on": its client
 * lost that callback. A provider may have such a bug; a client must survive
 * it if it can.
 */
static bool reset_lose_tail;
module_param(reset_lose_tail, bool, 0644);
MODULE_PARM_DESC(reset_lose_tail,
		 "A reset drops the hung descriptor without a callback, as ioat's did (default false)");

/*
 * ioat's driver handles a read or write error of a descriptor
 * (ioat_eh()) by calling it back with the error, then aborting
 * everything queued behind it (ioat_abort_descs(), DMA_TRANS_ABORTED) and
 * resetting the channel. With error_aborts, a failed descriptor does that
 * to its channel.
 */
static bool error_aborts;
module_param(error_aborts, bool, 0644);
MODULE_PARM_DESC(error_aborts,
		 "A failed descriptor aborts everything queued on its channel, as ioat's error handling does (default false)");

/*
 * idxd's shared work queues take a descriptor with ENQCMDS, which the
 * device may refuse (busy, or the queue being disabled). idxd_submit_desc()
 * then aborts a descriptor that asked for an interrupt
 * (llist_abort_desc()): it is completed and called back with
 * DMA_TRANS_WRITE_FAILED, and only then does tx_submit return the error.
 * Clients see both. The fault-injection attribute fail_submit
 * (swdma/fail_submit/ in debugfs) is asked at each submission, on any
 * channel, whether it fails that way: probability=100 with interval=k
 * fails every k-th submission.
 */
static DECLARE_FAULT_ATTR(swdma_fail_submit);

/*
 * If idxd's interrupt thread holds the refused descriptor (between its
 * llist_del_all() and its list_add_tail() onto the work list), the abort
 * cannot find it: tx_submit returns the error at once, and the interrupt
 * thread calls the descriptor back (DMA_TRANS_WRITE_FAILED) at the next
 * interrupt of the work queue, before the completions it reaps then.
 * fail_submit_late=1 fails submissions that way.
 */
static bool fail_submit_late;
module_param(fail_submit_late, bool, 0644);
MODULE_PARM_DESC(fail_submit_late,
		 "A failed submission is called back after tx_submit returned, at the channel's next completion, as idxd's interrupt thread does when it holds the descriptor (default false)");

/*
 * ioat's driver also reaps completions from a timer and when a client polls
 * tx_status; idxd's, and an engine with no timer, only on an interrupt: a
 * descriptor that asked for none is called back when a later one raises
 * one, never if none does. idle_irq=0 is such an engine.
 */
static bool idle_irq = true;
module_param(idle_irq, bool, 0644);
MODULE_PARM_DESC(idle_irq,
		 "An idle channel calls back what completed without an interrupt (default true; false: only an interrupt does)");

/* Completions that raised an interrupt because the descriptor asked for one */
static atomic_long_t swdma_nr_interrupts;

static int swdma_get_interrupts(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&swdma_nr_interrupts));
}

static const struct kernel_param_ops swdma_interrupts_ops = {
	.get = swdma_get_interrupts,
};
module_param_cb(interrupts, &swdma_interrupts_ops, NULL, 0444);
MODULE_PARM_DESC(interrupts,
		 "Descriptors completed with DMA_PREP_INTERRUPT (the others are counted in each channel's memcpy_count only)");

/*
 * A descriptor is on one list of its virtual channel (allocated, submitted,
 * issued, completed) or on the channel's unacked list (completed and called
 * back, but an async_tx client may still look at it until it acknowledges
 * it). The descriptor the thread copies, or is stalled on, is on none: it
 * is the channel's @cur until it completes, and the thread's alone, to
 * free, once a terminate has disowned it.
 */
struct swdma_desc {
	struct virt_dma_desc vd;
	dma_addr_t dst;
	dma_addr_t src;
	size_t len;
	bool held;		/* counted in nr_held */
	bool completed;		/* completed for the client */
};

struct swdma_chan {
	struct virt_dma_chan vc;
	/* protected by vc.lock */
	struct swdma_desc *cur;
	struct list_head unacked;
	struct list_head late;		/* failed submissions to call back */
	bool busy;			/* the thread copies a descriptor */
	bool removed;			/* chan->local is gone: no statistics */
	unsigned long nr_finished;	/* descriptors the thread finished */
	unsigned int nr_held;		/* prepared and not completed, for ring_size */
	/* Recently failed cookies, for tx_status */
	dma_cookie_t failed[SWDMA_FAILED_COOKIES];
	unsigned int failed_next;

	struct task_struct *thread;
	struct irq_work irq;		/* the engine's interrupt */
	wait_queue_head_t work_wait;	/* the thread waits for issued work */
	wait_queue_head_t idle_wait;	/* synchronize waits for the thread */
	wait_queue_head_t ring_wait;	/* prep waits for a slot */
};

struct swdma_dev {
	struct dma_device dma;
	unsigned int nr_channels;
	struct swdma_chan chans[] __counted_by(nr_channels);
};

/* Set and cleared under kernel_param_lock(), for remove_channel */
static struct platform_device *swdma_pdev;

/* More devices, each on its node, for clients that choose by node */
#define SWDMA_MAX_DEVICES	4
static int nodes[SWDMA_MAX_DEVICES];
static unsigned int nr_nodes;
module_param_array(nodes, int, &nr_nodes, 0444);
MODULE_PARM_DESC(nodes,
		 "NUMA node of each device, one device per entry: \"swdma\", then \"swdma.1\", ... (default: one device, no node)");
static struct platform_device *swdma_pdevs[SWDMA_MAX_DEVICES];

/*
 * Unregister one channel and leave the device and its other channels
 * alone, as idxd does when one of its work queues is disabled
 * (idxd_unregister_dma_channel()): clients that hold the channel must let
 * it go before that, and no client is handed it again.
 */
static int swdma_set_remove_channel(const char *val,
				    const struct kernel_param *kp)
{
	struct swdma_dev *sd;
	struct swdma_chan *sc;
	unsigned int n;
	int ret = -ENODEV;

	if (kstrtouint(val, 0, &n))
		return -EINVAL;
	/* idxd's channels are private; public ones are held by dmaengine_get() */
	if (!private)
		return -EINVAL;
	if (!swdma_pdev)
		return -ENODEV;
	device_lock(&swdma_pdev->dev);
	sd = platform_get_drvdata(swdma_pdev);	/* NULL while unbound */
	if (sd && (n >= sd->nr_channels || sd->chans[n].removed)) {
		ret = -EINVAL;
	} else if (sd) {
		sc = &sd->chans[n];
		spin_lock_irq(&sc->vc.lock);
		sc->removed = true;
		spin_unlock_irq(&sc->vc.lock);
		dma_async_device_channel_unregister(&sd->dma, &sc->vc.chan);
		ret = 0;
	}
	device_unlock(&swdma_pdev->dev);
	return ret;
}

static const struct kernel_param_ops swdma_remove_channel_ops = {
	.set = swdma_set_remove_channel,
};

module_param_cb(remove_channel, &swdma_remove_channel_ops, NULL, 0200);
MODULE_PARM_DESC(remove_channel,
		 "Write a channel's index to unregister that channel alone, as idxd does when a work queue is disabled");

static struct swdma_chan *to_swdma_chan(struct dma_chan *chan)
{
	return container_of(to_virt_chan(chan), struct swdma_chan, vc);
}

static struct swdma_desc *to_swdma_desc(struct virt_dma_desc *vd)
{
	return container_of(vd, struct swdma_desc, vd);
}

static void swdma_unhold(struct swdma_chan *sc, struct swdma_desc *d)
{
	lockdep_assert_held(&sc->vc.lock);
	if (d->held) {
		d->held = false;
		sc->nr_held--;
		wake_up(&sc->ring_wait);
	}
}

static void swdma_kfree(struct swdma_desc *d)
{
	dma_descriptor_unmap(&d->vd.tx);
	kfree(d);
}

static void swdma_kfree_list(struct list_head *list)
{
	struct virt_dma_desc *vd, *tmp;

	list_for_each_entry_safe(vd, tmp, list, node) {
		list_del(&vd->node);
		swdma_kfree(to_swdma_desc(vd));
	}
}

/*
 * virt-dma frees a descriptor once it is called back; async_tx may still
 * look at it until it acknowledges it (async_tx_quiesce()), so keep it
 * until then. Other clients acknowledge their descriptors when they
 * prepare them; only async_tx, which uses swdma with DMA_TEST_ASYNC_TX
 * alone, does not.
 */
static void swdma_desc_free(struct virt_dma_desc *vd)
{
	struct swdma_chan *sc = to_swdma_chan(vd->tx.chan);
	struct swdma_desc *d = to_swdma_desc(vd);
	unsigned long flags;

	spin_lock_irqsave(&sc->vc.lock, flags);
	swdma_unhold(sc, d);
	if (IS_ENABLED(CONFIG_DMA_TEST_ASYNC_TX) && d->completed &&
	    !async_tx_test_ack(&vd->tx)) {
		list_add_tail(&vd->node, &sc->unacked);
		d = NULL;
	}
	spin_unlock_irqrestore(&sc->vc.lock, flags);
	if (d)
		swdma_kfree(d);
}

static void swdma_reap_acked(struct swdma_chan *sc)
{
	struct virt_dma_desc *vd, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	spin_lock_irqsave(&sc->vc.lock, flags);
	list_for_each_entry_safe(vd, tmp, &sc->unacked, node)
		if (async_tx_test_ack(&vd->tx))
			list_move_tail(&vd->node, &dead);
	spin_unlock_irqrestore(&sc->vc.lock, flags);
	swdma_kfree_list(&dead);
}

/*
 * Copy @len bytes between two DMA addresses, a page at a time: neither range
 * needs to be mapped in the kernel, and either may start anywhere in a page.
 */
static enum dmaengine_tx_result swdma_copy(struct device *dev, dma_addr_t dst,
					   dma_addr_t src, size_t len)
{
	while (len) {
		phys_addr_t sp = dma_to_phys(dev, src), dp = dma_to_phys(dev, dst);
		size_t soff = offset_in_page(sp), doff = offset_in_page(dp);
		size_t n = min3(len, PAGE_SIZE - soff, PAGE_SIZE - doff);
		void *s, *d;

		if (!pfn_valid(PHYS_PFN(sp)))
			return DMA_TRANS_READ_FAILED;
		if (!pfn_valid(PHYS_PFN(dp)))
			return DMA_TRANS_WRITE_FAILED;

		s = kmap_local_page(pfn_to_page(PHYS_PFN(sp)));
		d = kmap_local_page(pfn_to_page(PHYS_PFN(dp)));
		memcpy(d + doff, s + soff, n);
		kunmap_local(d);
		kunmap_local(s);

		src += n;
		dst += n;
		len -= n;
		cond_resched();
	}
	return DMA_TRANS_NOERROR;
}

/* Pick one of the issued descriptors, as out_of_order says. */
static struct swdma_desc *swdma_pick(struct swdma_chan *sc)
{
	struct list_head *issued = &sc->vc.desc_issued;
	struct virt_dma_desc *vd;
	unsigned int skip;

	if (list_empty(issued))
		return NULL;
	switch (READ_ONCE(out_of_order)) {
	case SWDMA_REVERSE:
		vd = list_last_entry(issued, struct virt_dma_desc, node);
		break;
	case SWDMA_RANDOM:
		skip = get_random_u32_below(list_count_nodes(issued));
		vd = list_first_entry(issued, struct virt_dma_desc, node);
		while (skip--)
			vd = list_next_entry(vd, node);
		break;
	default:
		vd = vchan_next_desc(&sc->vc);
	}
	return to_swdma_desc(vd);
}

/*
 * Take the next descriptor for the thread. Newly issued descriptors join
 * the issued list, so that out-of-order completion reorders everything
 * queued on the channel. Return NULL when nothing is left.
 */
static struct swdma_desc *swdma_next(struct swdma_chan *sc)
{
	struct swdma_desc *d;

	spin_lock_irq(&sc->vc.lock);
	d = swdma_pick(sc);
	sc->cur = d;
	if (d)
		list_del(&d->vd.node);
	sc->busy = d;
	spin_unlock_irq(&sc->vc.lock);
	return d;
}

enum swdma_fate { SWDMA_COPY, SWDMA_ERROR, SWDMA_HANG };

static enum swdma_fate swdma_fate(struct swdma_desc *d)
{
	/* an interrupt descriptor (no length) cannot fail */
	if (!d->len || !should_fail(&swdma_fail_desc, d->len))
		return SWDMA_COPY;
	if (READ_ONCE(fail_mode) == SWDMA_FAIL_HANG)
		return SWDMA_HANG;
	return SWDMA_ERROR;
}

/*
 * The completed cookie of a device loaded in order whose out_of_order was
 * switched on: it breaks its word, as an engine may, but the cookie never
 * goes back, or a descriptor already called back would read as in progress
 * (and async_tx would wait for it in vain). Cookies wrap to DMA_MIN_COOKIE:
 * one far below the completed cookie is newer.
 */
static void swdma_cookie_complete(struct dma_async_tx_descriptor *tx)
{
	dma_cookie_t last = tx->chan->completed_cookie;
	dma_cookie_t cookie = tx->cookie;

	dma_cookie_complete(tx);
	if (cookie < last && last - cookie < INT_MAX / 2)
		tx->chan->completed_cookie = last;
}

/*
 * Complete @d for its client and tell whether that raises an interrupt:
 * when it asked for one, or failed.
 */
static bool swdma_complete_one(struct swdma_chan *sc, struct swdma_desc *d,
			       enum dmaengine_tx_result result)
{
	struct dma_async_tx_descriptor *tx = &d->vd.tx;
	bool irq = false;

	lockdep_assert_held(&sc->vc.lock);
	if (result != DMA_TRANS_NOERROR) {
		sc->failed[sc->failed_next] = tx->cookie;
		sc->failed_next = (sc->failed_next + 1) % SWDMA_FAILED_COOKIES;
		/* results=0: called back as if it had worked, as ptdma does */
		if (results)
			d->vd.tx_result.result = result;
		irq = true;
	}
	if (tx->flags & DMA_PREP_INTERRUPT) {
		atomic_long_inc(&swdma_nr_interrupts);
		irq = true;
	}
	if (!sc->removed) {
		this_cpu_inc(tx->chan->local->memcpy_count);
		this_cpu_add(tx->chan->local->bytes_transferred, d->len);
	}
	swdma_unhold(sc, d);
	d->completed = true;
	swdma_cookie_complete(tx);
	list_add_tail(&d->vd.node, &sc->vc.desc_completed);
	return irq;
}

/*
 * The failed submissions of fail_submit_late are called back before the
 * completion that raises the next interrupt.
 */
static bool swdma_complete(struct swdma_chan *sc, struct swdma_desc *d,
			   enum dmaengine_tx_result result)
{
	struct swdma_desc *l, *tmp;

	list_for_each_entry_safe(l, tmp, &sc->late, vd.node) {
		list_del(&l->vd.node);
		swdma_complete_one(sc, l, DMA_TRANS_WRITE_FAILED);
	}
	return swdma_complete_one(sc, d, result);
}

/*
 * The engine's interrupt: virt-dma's tasklet runs at its exit, as it does
 * from the interrupt handlers of ioat and most virt-dma providers, not
 * from ksoftirqd as when the thread, a task, raises it.
 */
static void swdma_irq(struct irq_work *work)
{
	tasklet_schedule(&container_of(work, struct swdma_chan, irq)->vc.task);
}

/*
 * The thread is done with a descriptor: @d, if not NULL, is its own to free.
 * Called with the channel's lock held, which it releases.
 */
static void swdma_done(struct swdma_chan *sc, struct swdma_desc *d, bool irq)
	__releases(&sc->vc.lock)
{
	lockdep_assert_held(&sc->vc.lock);
	/* Nothing left to do: report what completed without an interrupt. */
	if (READ_ONCE(idle_irq) && list_empty(&sc->vc.desc_issued) &&
	    !list_empty(&sc->vc.desc_completed))
		irq = true;
	if (irq)
		irq_work_queue(&sc->irq);
	sc->busy = false;
	sc->nr_finished++;
	spin_unlock_irq(&sc->vc.lock);

	if (d)
		swdma_kfree(d);
	wake_up_all(&sc->idle_wait);
}

/* A reset: everything queued on the channel is called back as aborted. */
static void swdma_abort_queued(struct swdma_chan *sc)
{
	struct virt_dma_desc *vd, *tmp;
	LIST_HEAD(queued);

	lockdep_assert_held(&sc->vc.lock);
	list_splice_tail_init(&sc->vc.desc_issued, &queued);
	list_splice_tail_init(&sc->vc.desc_submitted, &queued);
	list_for_each_entry_safe(vd, tmp, &queued, node) {
		list_del(&vd->node);
		swdma_complete(sc, to_swdma_desc(vd), DMA_TRANS_ABORTED);
	}
}

static bool swdma_stall_ends(struct swdma_chan *sc, struct swdma_desc *d,
			     int resets)
{
	return READ_ONCE(sc->cur) != d || kthread_should_stop() ||
	       atomic_read(&swdma_resets) != resets;
}

/*
 * @d hung: it stalls the channel, as on a real engine, until a terminate
 * drops it or, hang_ms later (or at a write to reset), the channel is
 * reset as ioat_timer_event() resets one that makes no progress
 * (ioat_reboot_chan()): everything queued on the channel, @d first, is
 * completed and called back with DMA_TRANS_ABORTED, as ioat_abort_descs()
 * and idxd's aborts (idxd_dma_complete_txd() with IDXD_COMPLETE_ABORT) do;
 * with reset_lose_tail, @d is dropped without a callback, as ioat's reset
 * dropped the descriptor the ring's tail points to before its fix.
 */
static void swdma_stall(struct swdma_chan *sc, struct swdma_desc *d)
{
	unsigned int ms = READ_ONCE(hang_ms);
	int resets = atomic_read(&swdma_resets);
	bool lose;

	wait_event_idle_timeout(swdma_stall_wait,
				swdma_stall_ends(sc, d, resets),
				ms ? msecs_to_jiffies(ms) : MAX_SCHEDULE_TIMEOUT);

	spin_lock_irq(&sc->vc.lock);
	if (sc->cur != d) {
		/* terminated: ours to free */
		swdma_unhold(sc, d);
		swdma_done(sc, d, false);
		return;
	}
	sc->cur = NULL;
	lose = READ_ONCE(reset_lose_tail);
	/*
	 * Named by the thread: dma_chan_name() reads chan->dev, which the
	 * channel's unregistration frees while a client may still hold it.
	 */
	dev_warn_ratelimited(sc->vc.chan.device->dev,
			     "%s: reset after a hang of %u ms%s\n",
			     current->comm, ms,
			     lose ? ", the hung descriptor's callback lost" : "");
	if (lose) {
		swdma_unhold(sc, d);
	} else {
		swdma_complete(sc, d, DMA_TRANS_ABORTED);
		d = NULL;
	}
	swdma_abort_queued(sc);
	swdma_done(sc, d, true);
}

static void swdma_run(struct swdma_chan *sc, struct swdma_desc *d)
{
	struct device *dev = sc->vc.chan.device->dev;
	enum dmaengine_tx_result result = DMA_TRANS_NOERROR;
	unsigned int delay = READ_ONCE(latency_us);
	enum swdma_fate fate;
	bool owned, irq = false;

	if (delay)
		fsleep(delay);
	fate = swdma_fate(d);
	if (fate == SWDMA_HANG) {
		swdma_stall(sc, d);
		return;
	}
	if (fate == SWDMA_COPY)
		result = swdma_copy(dev, d->dst, d->src, d->len);
	else if (fate == SWDMA_ERROR)
		result = d->vd.tx.cookie & 1 ? DMA_TRANS_READ_FAILED :
					       DMA_TRANS_WRITE_FAILED;

	spin_lock_irq(&sc->vc.lock);
	owned = sc->cur == d;
	spin_unlock_irq(&sc->vc.lock);
	/*
	 * Done before it completes: it may be freed as soon as it has. (A
	 * dependent descriptor of another channel is still that channel's to
	 * free if it is terminated meanwhile: async_tx never terminates.)
	 */
	if (owned) {
		dma_descriptor_unmap(&d->vd.tx);
		dma_run_dependencies(&d->vd.tx);
	}

	spin_lock_irq(&sc->vc.lock);
	if (sc->cur == d) {
		sc->cur = NULL;
		irq = swdma_complete(sc, d, result);
		d = NULL;
		if (result != DMA_TRANS_NOERROR && READ_ONCE(error_aborts))
			swdma_abort_queued(sc);
	} else {
		/* terminated while the thread had it: ours */
		swdma_unhold(sc, d);
	}
	swdma_done(sc, d, irq);
}

/* Lockless: issue_pending wakes the thread afterwards. */
static bool swdma_has_work(struct swdma_chan *sc)
{
	return !list_empty(&sc->vc.desc_issued);
}

static int swdma_thread(void *data)
{
	struct swdma_chan *sc = data;
	struct swdma_desc *d;

	while (!kthread_should_stop()) {
		wait_event_idle(sc->work_wait,
				swdma_has_work(sc) || kthread_should_stop());
		while ((d = swdma_next(sc))) {
			swdma_run(sc, d);
			cond_resched();
		}
	}
	return 0;
}

/*
 * Submit, or fail the submission as idxd_submit_desc() does on a shared
 * work queue whose ENQCMDS was refused: the descriptor was given a cookie;
 * if it asked for an interrupt it is completed and called back with an
 * error (llist_abort_desc() -> idxd_dma_complete_txd()); then it is freed
 * and the submission fails (idxd_dma_tx_submit()).
 */
static dma_cookie_t swdma_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct swdma_chan *sc = to_swdma_chan(tx->chan);
	struct swdma_desc *d = container_of(tx, struct swdma_desc, vd.tx);
	struct dmaengine_result res = { .result = DMA_TRANS_WRITE_FAILED };
	bool irq = tx->flags & DMA_PREP_INTERRUPT;
	unsigned long flags;

	if (!should_fail(&swdma_fail_submit, d->len))
		return vchan_tx_submit(tx);

	spin_lock_irqsave(&sc->vc.lock, flags);
	dma_cookie_assign(tx);
	list_del(&d->vd.node);		/* from the allocated list */
	if (irq && READ_ONCE(fail_submit_late)) {
		list_add_tail(&d->vd.node, &sc->late);
		spin_unlock_irqrestore(&sc->vc.lock, flags);
		return -EAGAIN;
	}
	swdma_unhold(sc, d);
	if (irq)
		swdma_cookie_complete(tx);
	spin_unlock_irqrestore(&sc->vc.lock, flags);

	if (irq)
		dmaengine_desc_get_callback_invoke(tx, &res);
	swdma_kfree(d);
	return -EAGAIN;
}

static void swdma_issue_pending(struct dma_chan *chan)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&sc->vc.lock, flags);
	kick = vchan_issue_pending(&sc->vc);
	spin_unlock_irqrestore(&sc->vc.lock, flags);

	if (kick)
		wake_up(&sc->work_wait);
}

static struct dma_async_tx_descriptor *
swdma_prep(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src, size_t len,
	   unsigned long flags)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	unsigned int ring = READ_ONCE(ring_size);
	unsigned long irqflags;
	struct swdma_desc *d;
	bool full;

	swdma_reap_acked(sc);
	if (len > max_seg_size)
		return NULL;
	d = kzalloc(sizeof(*d), GFP_NOWAIT);
	if (!d)
		return NULL;

	for (;;) {
		spin_lock_irqsave(&sc->vc.lock, irqflags);
		full = ring && sc->nr_held >= ring;
		if (!full) {
			sc->nr_held++;
			d->held = true;
		}
		spin_unlock_irqrestore(&sc->vc.lock, irqflags);
		if (!full || !READ_ONCE(prep_blocks))
			break;
		/*
		 * idxd's submission hands a descriptor to the device (its
		 * issue_pending does nothing): what was submitted runs while
		 * prep waits, as idxd_alloc_desc(IDXD_OP_BLOCK) does, until
		 * a slot frees or a signal comes.
		 */
		swdma_issue_pending(chan);
		if (wait_event_interruptible(sc->ring_wait,
					     READ_ONCE(sc->nr_held) < ring))
			break;
	}
	if (full) {
		kfree(d);
		return NULL;
	}

	d->dst = dst;
	d->src = src;
	d->len = len;
	vchan_tx_prep(&sc->vc, &d->vd, flags);
	d->vd.tx.tx_submit = swdma_tx_submit;
	return &d->vd.tx;
}

static struct dma_async_tx_descriptor *
swdma_prep_dma_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		      size_t len, unsigned long flags)
{
	return swdma_prep(chan, dst, src, len, flags);
}

/*
 * A descriptor that copies nothing: it takes a slot of the ring and
 * completes in turn, raising an interrupt if asked, as ioat's, idxd's and
 * ptdma's do. Clients queue one to be called back once what they queued
 * before it has completed.
 */
static struct dma_async_tx_descriptor *
swdma_prep_dma_interrupt(struct dma_chan *chan, unsigned long flags)
{
	return swdma_prep(chan, 0, 0, 0, flags);
}

/* The descriptor of @cookie if it has not completed yet */
static struct swdma_desc *swdma_find(struct swdma_chan *sc,
				     dma_cookie_t cookie)
{
	struct virt_dma_desc *vd;

	if (sc->cur && sc->cur->vd.tx.cookie == cookie)
		return sc->cur;
	vd = vchan_find_desc(&sc->vc, cookie);
	if (vd)
		return to_swdma_desc(vd);
	list_for_each_entry(vd, &sc->vc.desc_submitted, node)
		if (vd->tx.cookie == cookie)
			return to_swdma_desc(vd);
	return NULL;
}

static bool swdma_cookie_failed(struct swdma_chan *sc, dma_cookie_t cookie)
{
	int i;

	if (cookie < DMA_MIN_COOKIE)	/* also what an empty slot holds */
		return false;
	for (i = 0; i < SWDMA_FAILED_COOKIES; i++)
		if (sc->failed[i] == cookie)
			return true;
	return false;
}

/*
 * A device that completes out of order cannot say more than that
 * (DMA_COMPLETION_NO_ORDER): its clients go by their callbacks. Otherwise
 * the completed cookie of the channel says what completed, and a
 * descriptor still queued, running or hung is in progress; a recently
 * failed one reads DMA_ERROR. Residue is per descriptor: all of it until it
 * completes. A device loaded in order that is switched to out_of_order, or
 * whose reset loses a descriptor, breaks in-order completion as a faulty
 * engine would: a descriptor a terminate or a reset then drops behind the
 * completed cookie reads DMA_COMPLETE, as it would from any in-order
 * driver.
 */
static enum dma_status swdma_tx_status(struct dma_chan *chan,
				       dma_cookie_t cookie,
				       struct dma_tx_state *txstate)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	enum dma_status status;
	struct swdma_desc *d;
	unsigned long flags;

	status = dma_cookie_status(chan, cookie, txstate);
	if (dma_has_cap(DMA_COMPLETION_NO_ORDER, chan->device->cap_mask))
		return DMA_OUT_OF_ORDER;

	spin_lock_irqsave(&sc->vc.lock, flags);
	d = swdma_find(sc, cookie);
	if (d) {
		status = DMA_IN_PROGRESS;
		dma_set_residue(txstate, d->len);
	} else if (status == DMA_COMPLETE && swdma_cookie_failed(sc, cookie)) {
		status = DMA_ERROR;
	}
	spin_unlock_irqrestore(&sc->vc.lock, flags);
	return status;
}

/*
 * Drop every descriptor of the channel without calling it back, the hung
 * one too. The one the thread is copying may still be written;
 * device_synchronize waits for that.
 */
static int swdma_terminate_all(struct dma_chan *chan)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	unsigned long flags;
	LIST_HEAD(head);

	spin_lock_irqsave(&sc->vc.lock, flags);
	sc->cur = NULL;
	vchan_get_all_descriptors(&sc->vc, &head);
	list_splice_tail_init(&sc->late, &head);
	spin_unlock_irqrestore(&sc->vc.lock, flags);

	vchan_dma_desc_free_list(&sc->vc, &head);
	/* a thread stalled on a hung descriptor lets it go */
	wake_up_all(&swdma_stall_wait);
	wake_up(&sc->work_wait);
	return 0;
}

static bool swdma_finished(struct swdma_chan *sc, unsigned long target)
{
	bool ret;

	spin_lock_irq(&sc->vc.lock);
	ret = (long)(sc->nr_finished - target) >= 0;
	spin_unlock_irq(&sc->vc.lock);
	return ret;
}

/*
 * Wait until the descriptor the thread was busy with, if any, is finished,
 * then for the callbacks under way.
 */
static void swdma_synchronize(struct dma_chan *chan)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	unsigned long target;
	bool busy;

	if (WARN_ON_ONCE(current == sc->thread))
		return;

	spin_lock_irq(&sc->vc.lock);
	busy = sc->busy;
	target = sc->nr_finished + 1;
	spin_unlock_irq(&sc->vc.lock);

	if (busy)
		wait_event(sc->idle_wait, swdma_finished(sc, target));
	vchan_synchronize(&sc->vc);
}

static int swdma_alloc_chan_resources(struct dma_chan *chan)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	struct task_struct *t;

	t = kthread_run(swdma_thread, sc, "swdma%d/%d", chan->device->dev_id,
			chan->chan_id);
	if (IS_ERR(t))
		return PTR_ERR(t);
	sc->thread = t;
	/* Cookies start again: forget the failures of the previous client. */
	dma_cookie_init(chan);
	memset(sc->failed, 0, sizeof(sc->failed));
	return 0;
}

static void swdma_free_chan_resources(struct dma_chan *chan)
{
	struct swdma_chan *sc = to_swdma_chan(chan);
	LIST_HEAD(dead);

	swdma_terminate_all(chan);
	/* The thread finishes what it had. */
	kthread_stop(sc->thread);
	sc->thread = NULL;
	irq_work_sync(&sc->irq);
	vchan_synchronize(&sc->vc);
	vchan_free_chan_resources(&sc->vc);

	spin_lock_irq(&sc->vc.lock);
	list_splice_tail_init(&sc->unacked, &dead);
	sc->nr_held = 0;
	spin_unlock_irq(&sc->vc.lock);
	wake_up_all(&sc->ring_wait);
	swdma_kfree_list(&dead);
}

static void swdma_release(struct dma_device *dma)
{
	struct swdma_dev *sd = container_of(dma, struct swdma_dev, dma);
	unsigned int i;

	for (i = 0; i < sd->nr_channels; i++) {
		irq_work_sync(&sd->chans[i].irq);
		tasklet_kill(&sd->chans[i].vc.task);
	}
	kfree(sd);
}

/*
 * The copy reads and writes the pages behind the DMA addresses, so these
 * must be physical addresses (possibly bounce buffers), not I/O virtual
 * addresses. Check that a mapped page reads back through its DMA address.
 */
static int swdma_check_mapping(struct device *dev)
{
	struct page *page = alloc_page(GFP_KERNEL);
	dma_addr_t addr;
	phys_addr_t phys;
	bool ok = false;
	void *p;

	if (!page)
		return -ENOMEM;
	memset(page_address(page), 0xa5, PAGE_SIZE);
	strscpy(page_address(page), "swdma", PAGE_SIZE);

	addr = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_TO_DEVICE);
	if (!dma_mapping_error(dev, addr)) {
		phys = dma_to_phys(dev, addr);
		if (pfn_valid(PHYS_PFN(phys)) && !offset_in_page(phys)) {
			p = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));
			ok = !memcmp(p, page_address(page), PAGE_SIZE);
			kunmap_local(p);
		}
		dma_unmap_page(dev, addr, PAGE_SIZE, DMA_TO_DEVICE);
	}
	__free_page(page);
	return ok ? 0 : -ENODEV;
}

static int swdma_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct dma_device *dma;
	struct swdma_dev *sd;
	unsigned int i;
	int ret;

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	dma_set_max_seg_size(dev, max_seg_size);
	/*
	 * The CPU does the device's writes: where DMA is not coherent, the
	 * client's unmap would invalidate them from the caches.
	 */
	if (!dev_is_dma_coherent(dev)) {
		dev_err(dev, "DMA is not cache-coherent here\n");
		return -ENODEV;
	}
	ret = swdma_check_mapping(dev);
	if (ret) {
		dev_err(dev, "DMA addresses are not physical addresses here\n");
		return ret;
	}

	sd = kzalloc(struct_size(sd, chans, nr_channels), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	sd->nr_channels = nr_channels;

	dma = &sd->dma;
	dma->dev = dev;
	dma_cap_set(DMA_MEMCPY, dma->cap_mask);
	dma_cap_set(DMA_INTERRUPT, dma->cap_mask);
	if (private)
		dma_cap_set(DMA_PRIVATE, dma->cap_mask);
	if (slave)
		dma_cap_set(DMA_SLAVE, dma->cap_mask);
	if (results)
		dma_cap_set(DMA_COMPLETION_RESULT, dma->cap_mask);
	/* out_of_order may change at run time; this says how it was loaded */
	if (out_of_order)
		dma_cap_set(DMA_COMPLETION_NO_ORDER, dma->cap_mask);
	dma->copy_align = DMAENGINE_ALIGN_1_BYTE;
	dma->residue_granularity = DMA_RESIDUE_GRANULARITY_DESCRIPTOR;
	dma->device_alloc_chan_resources = swdma_alloc_chan_resources;
	dma->device_free_chan_resources = swdma_free_chan_resources;
	dma->device_prep_dma_memcpy = swdma_prep_dma_memcpy;
	dma->device_prep_dma_interrupt = swdma_prep_dma_interrupt;
	dma->device_issue_pending = swdma_issue_pending;
	dma->device_tx_status = swdma_tx_status;
	if (terminate)
		dma->device_terminate_all = swdma_terminate_all;
	dma->device_synchronize = swdma_synchronize;
	dma->device_release = swdma_release;
	INIT_LIST_HEAD(&dma->channels);

	for (i = 0; i < sd->nr_channels; i++) {
		struct swdma_chan *sc = &sd->chans[i];

		INIT_LIST_HEAD(&sc->unacked);
		INIT_LIST_HEAD(&sc->late);
		init_waitqueue_head(&sc->work_wait);
		init_waitqueue_head(&sc->idle_wait);
		init_irq_work(&sc->irq, swdma_irq);
		init_waitqueue_head(&sc->ring_wait);
		sc->vc.desc_free = swdma_desc_free;
		vchan_init(&sc->vc, dma);
	}

	ret = dma_async_device_register(dma);
	if (ret) {
		kfree(sd);
		return ret;
	}
	platform_set_drvdata(pdev, sd);
	dev_info(dev, "dma%d: %u %s memcpy channels\n", dma->dev_id,
		 sd->nr_channels, private ? "private" : "public");
	return 0;
}

/*
 * ioat_remove() resets each channel's hardware and disables its interrupts
 * before it unregisters the device: what the rings held is forgotten,
 * never called back, also what completed and was not reaped yet (before
 * "dmaengine: ioatdma: abort what a channel holds when the device goes
 * away"). remove_drops=1 removes the device that way.
 */
static bool remove_drops;
module_param(remove_drops, bool, 0644);
MODULE_PARM_DESC(remove_drops,
		 "Removing the device drops what its channels hold without calling it back, as ioat's removal did (default false: the channels finish it)");

static void swdma_remove(struct platform_device *pdev)
{
	struct swdma_dev *sd = platform_get_drvdata(pdev);
	unsigned int i;

	for (i = 0; READ_ONCE(remove_drops) && i < sd->nr_channels; i++)
		swdma_terminate_all(&sd->chans[i].vc.chan);

	/*
	 * Unregistering frees the channels' statistics even while a client
	 * holds them and their threads still complete descriptors.
	 */
	for (i = 0; i < sd->nr_channels; i++) {
		struct swdma_chan *sc = &sd->chans[i];

		spin_lock_irq(&sc->vc.lock);
		sc->removed = true;
		spin_unlock_irq(&sc->vc.lock);
	}
	/* The last reference to the dma_device frees sd in swdma_release(). */
	dma_async_device_unregister(&sd->dma);
}

/*
 * An ordinary driver, with "bind" and "unbind" in sysfs: clients are tested
 * against a provider that goes away while they hold its channels, as a
 * hot-unplugged or unbound PCI engine does.
 */
static struct platform_driver swdma_driver = {
	.driver = {
		.name = "swdma",
	},
	.probe = swdma_probe,
	.remove = swdma_remove,
};

/*
 * The engine is the CPU: its writes go through the CPU's caches, so it is
 * cache-coherent whatever the platform's bus masters are. Say so where the
 * architecture keeps coherence per device (arm64), which a platform device
 * that no firmware describes would otherwise not have; swdma_probe() still
 * refuses a device the DMA API treats as non-coherent (its clients' unmaps
 * would invalidate the lines that hold the copies).
 */
static void swdma_set_coherent(struct device *dev)
{
#if defined(CONFIG_ARCH_HAS_SYNC_DMA_FOR_DEVICE) || \
	defined(CONFIG_ARCH_HAS_SYNC_DMA_FOR_CPU) || \
	defined(CONFIG_ARCH_HAS_SYNC_DMA_FOR_CPU_ALL)
	dev->dma_coherent = true;
#endif
}

static void swdma_debugfs_init(void)
{
	if (!IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS))
		return;
	swdma_debugfs_dir = debugfs_create_dir("swdma", NULL);
	fault_create_debugfs_attr("fail_desc", swdma_debugfs_dir,
				  &swdma_fail_desc);
	fault_create_debugfs_attr("fail_submit", swdma_debugfs_dir,
				  &swdma_fail_submit);
}

/* The device @i, on nodes[i] if given; the first is "swdma" */
static int swdma_add_device(unsigned int i)
{
	struct platform_device *pdev;
	int ret;

	pdev = platform_device_alloc("swdma", i ? i : PLATFORM_DEVID_NONE);
	if (!pdev)
		return -ENOMEM;
	if (nr_nodes)
		set_dev_node(&pdev->dev, nodes[i]);
	swdma_set_coherent(&pdev->dev);
	ret = platform_device_add(pdev);
	if (ret) {
		platform_device_put(pdev);
		return ret;
	}
	if (!device_is_bound(&pdev->dev)) {
		/* probe said why; no use for a module without its engine */
		platform_device_unregister(pdev);
		return -ENODEV;
	}
	swdma_pdevs[i] = pdev;
	return 0;
}

static void swdma_remove_devices(void)
{
	unsigned int i;

	for (i = 0; i < SWDMA_MAX_DEVICES; i++) {
		if (swdma_pdevs[i])
			platform_device_unregister(swdma_pdevs[i]);
		swdma_pdevs[i] = NULL;
	}
}

static int __init swdma_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < nr_nodes; i++)
		if (nodes[i] != NUMA_NO_NODE &&
		    (nodes[i] < 0 || nodes[i] >= MAX_NUMNODES ||
		     !node_online(nodes[i])))
			return -EINVAL;
	ret = platform_driver_register(&swdma_driver);
	if (ret)
		return ret;
	for (i = 0; i < max(nr_nodes, 1U) && !ret; i++)
		ret = swdma_add_device(i);
	if (ret) {
		swdma_remove_devices();
		platform_driver_unregister(&swdma_driver);
		return ret;
	}
	kernel_param_lock(THIS_MODULE);
	swdma_pdev = swdma_pdevs[0];
	kernel_param_unlock(THIS_MODULE);
	swdma_debugfs_init();
	return 0;
}
module_init(swdma_init);

static void __exit swdma_exit(void)
{
	debugfs_remove_recursive(swdma_debugfs_dir);
	/* the parameters outlive this: remove_channel must not see it */
	kernel_param_lock(THIS_MODULE);
	swdma_pdev = NULL;
	kernel_param_unlock(THIS_MODULE);
	swdma_remove_devices();
	platform_driver_unregister(&swdma_driver);
}
module_exit(swdma_exit);

MODULE_DESCRIPTION("Software memcpy DMA engine for testing DMA clients");
MODULE_LICENSE("GPL");
