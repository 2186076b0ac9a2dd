/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's own account (pmt_stats, per CPU, read at every print and at
 * exit): each loss and each refusal counted, none silent.
 */
#ifndef PMT_ABI_STATS_H
#define PMT_ABI_STATS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Indexes of the per-CPU pmt_stats counters. */
enum pmt_stat {
	PMT_STAT_OUTPUT_ERR,   /* bpf_perf_event_output failed other than full */
	PMT_STAT_TARGET_FULL,  /* a traced command's child did not fit */
	PMT_STAT_FILTER_ABORT, /* filter walk did not end: event rejected */
	PMT_STAT_AGG_FULL,     /* aggregation map full: update dropped */
	PMT_STAT_LAT_FULL,     /* latency start dropped (map update failed) */
	PMT_STAT_LAT_NOSTART,  /* latency end without a start */
	/* perf buffer full. The ring counts these too, but reports them only
	 * with its next record, which may never come: this count is exact. */
	PMT_STAT_RING_FULL,
	PMT_STAT_STACK_FULL,   /* a stack not stored: its table full */
	PMT_STAT_COUNTER_READ, /* --counter: a CPU's counter could not be read */
	/* a user stack ended at a frame-pointer caller no text mapping holds */
	PMT_STAT_UNWIND_ENDED,
	/* a Python code object's first sight not told to user space (its
	 * queue full): its frames may be named "[python]" */
	PMT_STAT_PY_NEW_FULL,
	/* --offcpu: a thread's switch-out not stored (the table of threads
	 * off the CPU full) */
	PMT_STAT_OFFCPU_FULL,
	PMT_STAT_STACK_COLLISION, /* a stack not stored: other stacks held its slots */
	PMT_STAT_STACK_ERR,	  /* a stack not stored: the kernel had no memory */
	/* keys stored in pmt_agg (not a loss: the loader drains the hash
	 * when it has taken many since the last drain) */
	PMT_STAT_AGG_NEW,
	/* a user stack not known to reach its outermost frame, with a frame
	 * in a file whose unwind rows user space had not read yet */
	PMT_STAT_UNWIND_PENDING,
	/* str(): a string the kernel could not read (a page not resident, a
	 * bad address): keys show it as <fault>, filters as "" */
	PMT_STAT_STR_FAULT,
	/* a member of a chain (curtask->a->b) the kernel could not read: a
	 * NULL pointer on the way; it reads as 0 */
	PMT_STAT_MEMBER_FAULT,
	/* an aggregation's user stack left for user space to finish, whose
	 * update the event rings had no room for: keyed in the kernel as far
	 * as it was walked (the count kept, the stack short) */
	PMT_STAT_DEFER_CUT,
	/* --counter: a thread found running on a CPU whose sched_switch to it
	 * the kernel did not trace: what it counted there until then is not
	 * known (not counted); counting goes on from there */
	PMT_STAT_COUNTER_UNSEEN,
	/* --offcpu: a thread found leaving a CPU with its last leaving still
	 * open, its arrival since not traced: its time off since is the time
	 * gone less its run time meanwhile (not a loss) */
	PMT_STAT_OFFCPU_UNSEEN,
	/* a user stack through a Python eval loop call with no Python frame
	 * read there: its thread state or frame not readable (a sample
	 * between the loop's entry and its first frame's, or memory the
	 * kernel could not read) */
	PMT_STAT_PY_NOFRAME,
	/* an event's update lost: the probe's generated program could not
	 * tail-call back to the aggregation (abi/xgen.h; a bug) */
	PMT_STAT_XGEN_BACK,
	/* a user stack cut at the frames a stack keeps (PMT_STACK_KEPT) */
	PMT_STAT_UNWIND_DEPTH,
	/* a user stack of a process past exit_mm: its memory is gone, its
	 * last pc the only frame */
	PMT_STAT_UNWIND_EXITING,
	/* a user stack ended at stack memory the kernel could not read (a
	 * page not resident) or a rule that led nowhere (a CFA not above
	 * the last one) */
	PMT_STAT_UNWIND_UNREAD,
	PMT_STAT__MAX,
};

#endif
