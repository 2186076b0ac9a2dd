// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --counter: a thread's own count of an event between two points, from
 * per-CPU counters. At each context switch the thread leaving a CPU takes
 * what was counted there since it arrived, and the thread arriving notes
 * where the count stands (struct pmt_lat_val in abi.h). Only threads
 * with a measurement under way have an entry: the others cost a lookup.
 * Loaded only with --counter.
 *
 * The event the switch itself causes (a context switch is counted right
 * after this tracepoint) lands in the arriving thread's share: each
 * segment of a thread's run starts with its own arrival's count, so a
 * call that sleeps once counts the one switch of its return to a CPU.
 */
#include "aggregate.bpf.h"

/* sched_switch(bool preempt, struct task_struct *prev, *next, ...) */
SEC("raw_tp/sched_switch")
int pmt_count_switch(__u64 *ctx)
{
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	struct pmt_lat_key k = {};
	struct pmt_lat_val *v;
	__u64 now;

	if (pmt_stop)
		return 0;
	k.match = (__u64)BPF_CORE_READ(prev, pid);
	v = bpf_map_lookup_elem(&pmt_lat, &k);
	if (v) {
		now = pmt_counter_now();
		v->acc += now - v->last;
		v->last = now;
	}
	k.match = (__u64)BPF_CORE_READ(next, pid);
	v = bpf_map_lookup_elem(&pmt_lat, &k);
	if (v)
		v->last = pmt_counter_now();
	return 0;
}
