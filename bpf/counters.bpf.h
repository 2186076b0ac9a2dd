/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --counter: a thread's own counts of an event from per-CPU counters
 * (pmt_counters, opened by the loader), shared out at context switches by
 * bpf/count.bpf.c; the running counts of streamed threads (pmt_tcount).
 */
#ifndef PMTRACE_COUNTERS_BPF_H
#define PMTRACE_COUNTERS_BPF_H

#include "common.bpf.h"

/* --counter: one counting perf event per CPU (the loader opens them),
 * read where the thread runs; sized at load. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmt_counters SEC(".maps") __weak;

/* --latency measures pmt_counters' events, not time */
const volatile bool pmt_lat_counter __weak = false;
/* counters (at most PMT_COUNTERS); counter k of CPU c is at k * cpus + c */
const volatile __u32 pmt_ncounters __weak = 0;
const volatile __u32 pmt_counter_cpus __weak = 1;

/* threads' running counts for pmt_stream_counter (tid key) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_tcount);
} pmt_tcount SEC(".maps") __weak;

/* A thread's entry before it is first seen */
const volatile struct pmt_tcount pmt_tcount_zero __weak = {};

/* This CPU's count of --counter k (0 and counted if unreadable). */
static __always_inline __u64 pmt_counter_now(__u32 k)
{
	struct pmt_perf_value v = {};
	__u64 idx = (__u64)k * pmt_counter_cpus + bpf_get_smp_processor_id();

	if (bpf_perf_event_read_value(&pmt_counters, idx, (void *)&v, sizeof(v))) {
		pmt_stat_inc(PMT_STAT_COUNTER_READ);
		return 0;
	}
	return v.counter;
}

/* Where each counter stands on this CPU, into last[]. */
static __always_inline void pmt_counters_now(__u64 *last)
{
	__u32 k;

	for (k = 0; k < PMT_COUNTERS; k++)
		if (k < pmt_ncounters)
			last[k] = pmt_counter_now(k);
}

/* What counted on this CPU since last[] joins acc[]. */
static __always_inline void pmt_counters_take(__u64 *acc, const __u64 *last)
{
	__u32 k;

	for (k = 0; k < PMT_COUNTERS; k++)
		if (k < pmt_ncounters)
			acc[k] += pmt_counter_now(k) - last[k];
}

/*
 * A thread leaving a CPU (away: 1 since it last left one): what it
 * counted there since it arrived joins acc[]. Found leaving or running
 * while away, its arrival was not traced (sched_switch did not fire for
 * it): since when it ran here is not known, so that stretch is not
 * counted (PMT_STAT_COUNTER_UNSEEN).
 */
static __always_inline void pmt_counters_leave(__u64 *acc, const __u64 *last, __u64 *away)
{
	if (*away)
		pmt_stat_inc(PMT_STAT_COUNTER_UNSEEN);
	else
		pmt_counters_take(acc, last);
	*away = 1;
}

/* A running thread's counts resume from here if its arrival went
 * untraced (pmt_counters_leave). */
static __always_inline void pmt_counters_found(__u64 *last, __u64 *away)
{
	if (!*away)
		return;
	pmt_stat_inc(PMT_STAT_COUNTER_UNSEEN);
	pmt_counters_now(last);
	*away = 0;
}

/* The current thread's counts so far and since its last streamed record
 * into out[0..pmt_ncounters); a thread not seen before starts at 0 now. */
static __always_inline void pmt_thread_count(struct pmt_fctx *c, struct pmt_counter_rec *out)
{
	__u32 tid = (__u32)pmt_pid_tgid(c), k;
	struct pmt_tcount *t = bpf_map_lookup_elem(&pmt_tcount, &tid);
	bool seen = t != NULL;
	__u64 now;

	if (!t) {
		/* its entry made from zeros in .rodata, not on the stack (6.1
		 * allows 512 bytes for a program and the calls it is in) */
		bpf_map_update_elem(&pmt_tcount, &tid, (void *)&pmt_tcount_zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&pmt_tcount, &tid);
		if (t)
			pmt_counters_now(t->last);
	} else {
		pmt_counters_found(t->last, &t->away);
	}
	for (k = 0; k < PMT_COUNTERS; k++) {
		if (k >= pmt_ncounters)
			break;
		out[k].value = out[k].delta = 0;
		if (!seen || !t)
			continue;
		now = pmt_counter_now(k);
		out[k].value = t->acc[k] + (now - t->last[k]);
		out[k].delta = out[k].value - t->reported[k];
		t->reported[k] = out[k].value;
	}
}

#endif
