// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --counter: a thread's own count of an event, from per-CPU counters. At
 * each context switch the thread leaving a CPU takes what was counted
 * there since it arrived, and the thread arriving notes where the count
 * stands. With --latency only threads with a measurement under way have
 * an entry (struct pmt_lat_val in abi.h): the others cost a lookup. On
 * streamed probes every traced thread has one (struct pmt_tcount), its
 * running count since it was first seen. Loaded only with --counter.
 *
 * The event the switch itself causes (a context switch is counted right
 * after this tracepoint) lands in the arriving thread's share: each
 * segment of a thread's run starts with its own arrival's count, so a
 * call that sleeps once counts the one switch of its return to a CPU.
 */
#include "actions.bpf.h"

/* Streamed probes: every traced thread's running count. A thread is
 * taken in at its first arrival on a CPU (a target's, with -p/-- CMD). */
static __always_inline int pmt_count_threads(struct task_struct *prev, struct task_struct *next)
{
	struct pmt_tcount *t, fresh = {};
	__u32 tid = (__u32)BPF_CORE_READ(prev, pid);

	t = bpf_map_lookup_elem(&pmt_tcount, &tid);
	if (t)
		pmt_counters_leave(t->acc, t->last, &t->away);
	tid = (__u32)BPF_CORE_READ(next, pid);
	t = bpf_map_lookup_elem(&pmt_tcount, &tid);
	if (t) {
		pmt_counters_now(t->last);
		t->away = 0;
		return 0;
	}
	if (pmt_filter_target && !pmt_tgid_ok((__u32)BPF_CORE_READ(next, tgid)))
		return 0;
	pmt_counters_now(fresh.last);
	bpf_map_update_elem(&pmt_tcount, &tid, &fresh, BPF_NOEXIST);
	return 0;
}

/* sched_switch(bool preempt, struct task_struct *prev, *next, ...) */
SEC("raw_tp/sched_switch")
int pmt_count_switch(__u64 *ctx)
{
	PMT_LEAN_CUT(0);
	struct task_struct *prev = (void *)ctx[1], *next = (void *)ctx[2];
	struct pmt_lat_key k = {};
	struct pmt_lat_val *v;
	__u32 z = 0;
	__u64 *seq;

	if (pmt_stop)
		return 0;
	seq = bpf_map_lookup_elem(&pmt_switch_seq, &z);
	if (seq)
		(*seq)++;
	if (pmt_stream_counter)
		return pmt_count_threads(prev, next);
	k.match = (__u64)BPF_CORE_READ(prev, pid);
	v = bpf_map_lookup_elem(&pmt_lat, &k);
	if (v)
		pmt_counters_leave(v->acc, v->last, &v->away);
	k.match = (__u64)BPF_CORE_READ(next, pid);
	v = bpf_map_lookup_elem(&pmt_lat, &k);
	if (v) {
		pmt_counters_now(v->last);
		v->away = 0;
	}
	return 0;
}
