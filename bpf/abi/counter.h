/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --counter: a thread's own counts of PMU events, in the kernel
 * (bpf/count.bpf.c shares a CPU's count out at context switches).
 */
#ifndef PMT_ABI_COUNTER_H
#define PMT_ABI_COUNTER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PMT_COUNTERS 4 /* --counter events a run */

/* One a --counter, in their order, before a streamed record's header. */
struct pmt_counter_rec {
	__u64 value; /* the thread's count so far */
	__u64 delta; /* since its previous streamed record */
};

/*
 * --counter on streamed probes: a thread's running count of the event,
 * shared out at context switches as above, from when the thread is first
 * seen (pmt_tcount, LRU-bounded); each streamed record of the thread is
 * preceded by a struct pmt_counter_rec a counter (struct pmt_event).
 */
struct pmt_tcount {
	__u64 acc[PMT_COUNTERS];      /* counted on the CPUs it left */
	__u64 last[PMT_COUNTERS];     /* the running CPU's counter when it got it */
	__u64 reported[PMT_COUNTERS]; /* the values its last streamed record showed */
	__u64 away;		      /* 1 from its switch off a CPU to its next arrival */
};

_Static_assert(sizeof(struct pmt_counter_rec) == 16, "read before a streamed header");
_Static_assert(sizeof(struct pmt_tcount) == 3 * PMT_COUNTERS * 8 + 8, "pmt_tcount's values");

#endif
