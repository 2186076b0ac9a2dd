/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A streamed record sent to this CPU's ring (pmt_events): --str's strings
 * and --counter's counts before its header, then the record, its stack
 * frames and a user stack's dump.
 */
#ifndef PMTRACE_EMIT_BPF_H
#define PMTRACE_EMIT_BPF_H

#include "counters.bpf.h"

/* Fill the header and push hdr + size bytes of data to this CPU's ring. */
/* What a streamed record carries before its header (load-time
 * constants): --counter's counts, and --str's strings before them. */
static __always_inline __u32 pmt_stream_ncounts(void)
{
	return pmt_stream_counter ? (pmt_ncounters < PMT_COUNTERS ? pmt_ncounters : PMT_COUNTERS)
				  : 0;
}

static __always_inline __u32 pmt_stream_nstrs(void)
{
	return pmt_stream_strs < PMT_STREAM_STRS ? pmt_stream_strs : PMT_STREAM_STRS;
}

static __always_inline __u32 pmt_stream_nvals(void)
{
	return pmt_stream_vals < PMT_STREAM_VALS ? pmt_stream_vals : PMT_STREAM_VALS;
}

/* Bytes a streamed record carries before its header: --printf's numbers,
 * join()'s strings, --str's strings, --counter's counts (struct
 * pmt_event). */
static __always_inline __u32 pmt_stream_pre(void)
{
	return pmt_stream_ncounts() * sizeof(struct pmt_counter_rec) +
	       pmt_stream_nstrs() * PMT_STREAM_STR_LEN +
	       (pmt_stream_join ? sizeof(struct pmt_join_rec) : 0) + pmt_stream_nvals() * 8;
}

/* Send e: the record's size bytes, then frames bytes of stack frames
 * (nkernel kernel ones first; tracepoints, see pmt_event_hdr), then dump
 * bytes of a user stack's dump (struct pmt_ustack_dump). */
static __always_inline void pmt_emit_frames(struct pmt_fctx *c, struct pmt_event *e, __u32 probe_id,
					    __u64 size, __u64 frames, __u16 nkernel, __u16 nuser,
					    __u64 dump)
{
	__u64 pid_tgid = pmt_pid_tgid(c);
	/* --counter's counts sent before the header (struct pmt_event) */
	const __u32 cnt = pmt_stream_ncounts() * sizeof(struct pmt_counter_rec);
	/* and --str's strings and --printf's numbers before them
	 * (pmt_stream_strs_fill) */
	const __u32 pre = pmt_stream_pre();
	__u64 len;
	long err;

	if (size > PMT_MAX_DATA)
		size = PMT_MAX_DATA;
	if (frames > PMT_DATA_ROOM - PMT_MAX_DATA - PMT_DUMP_ROOM)
		frames = 0;
	if (dump > PMT_DUMP_ROOM)
		dump = 0;
	/* bounded again in the register the helper is given: a bound 6.1's
	 * verifier checked on one copy of size is lost when the compiler
	 * reloads another, spilled before the check */
	len = pre + sizeof(e->hdr) + size + frames + dump;
	asm volatile("" : "+r"(len));
	if (len > pre + sizeof(e->hdr) + PMT_DATA_ROOM)
		return;
	/* before any call: fewer values kept across them (6.1 allows 512
	 * bytes of stack for a program and its callbacks) */
	e->hdr.probe_id = probe_id;
	e->hdr.size = size;
	e->hdr.nkernel = nkernel;
	e->hdr.nuser = nuser;
	e->hdr.dump = (__u32)dump;
	/* the counts go right before the header: constant offsets only */
	if (pmt_stream_counter)
		pmt_thread_count(c, &e->counts[PMT_COUNTERS - cnt / sizeof(e->counts[0])]);
	e->hdr.pid = pid_tgid >> 32;
	e->hdr.tid = (__u32)pid_tgid;
	pmt_current_comm(e->hdr.comm);
	e->hdr.ts = bpf_ktime_get_ns();
	err = bpf_perf_event_output(c->ctx, &pmt_events, BPF_F_CURRENT_CPU, (__u8 *)&e->hdr - pre,
				    len);
	/* -ENOSPC: the ring is full; anything else (no ring on this CPU)
	 * would vanish without a counter */
	if (err)
		pmt_stat_inc(err == -28 ? PMT_STAT_RING_FULL : PMT_STAT_OUTPUT_ERR);
}

static __always_inline void pmt_emit(struct pmt_fctx *c, struct pmt_event *e, __u32 probe_id,
				     __u64 size)
{
	pmt_emit_frames(c, e, probe_id, size, 0, 0, 0, 0);
}

#endif
