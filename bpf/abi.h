/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The only types shared between the BPF programs (bpf/) and the loader
 * (src/). Fixed-width types only: both sides must agree on every byte.
 *
 * Data flow for a streamed event:
 *
 *   tracepoint fires ─► pmt_tp (bpf/tracepoint.bpf.c)
 *        │  cookie = probe id ─► probes[id] : struct pmt_probe_cfg
 *        │  target/cpu checks (rodata)          (record layout)
 *        ▼
 *   per-CPU scratch : struct pmt_event { hdr, raw record bytes }
 *        │  bpf_perf_event_output(BPF_F_CURRENT_CPU)
 *        ▼
 *   events : PERF_EVENT_ARRAY ─► one perf ring per CPU ─► src/evloop.c
 *        (wakeup by watermark, drained on a short timeout, merged by ts)
 */
#ifndef PMTRACE_ABI_H
#define PMTRACE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PMT_COMM_LEN	 16
/* Largest raw record copied out (perf's own limit is 8 KiB). */
#define PMT_MAX_DATA	 8192
/* __data_loc/__rel_loc fields of one tracepoint the BPF side follows. */
#define PMT_MAX_DYN	 8
/* Probes (attach points) one session may hold. */
#define PMT_MAX_PROBES	 16384
/* CPUs the -C mask can name. */
#define PMT_MAX_CPUS	 1024

/* Values of the target map (pid filter). */
enum pmt_target_state {
	PMT_TARGET_PENDING = 1, /* command forked, not yet exec'd: not traced */
	PMT_TARGET_ACTIVE = 2,	/* traced */
};

/* Indexes of the per-CPU pmt_stats counters. */
enum pmt_stat {
	PMT_STAT_OUTPUT_ERR,	/* bpf_perf_event_output failed other than full */
	PMT_STAT_TARGET_FULL,	/* a traced command's child did not fit */
	PMT_STAT__MAX,
};

struct pmt_event_hdr {
	__u64 ts;	/* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u32 pid;	/* tgid */
	__u32 tid;
	__u32 probe_id;
	__u32 size;	/* bytes of data[] that follow */
	char comm[PMT_COMM_LEN];
};

struct pmt_event {
	struct pmt_event_hdr hdr;
	__u8 data[PMT_MAX_DATA];
};

/* dyn[] entry flags */
#define PMT_DYN_REL	0x8000	/* __rel_loc: offset relative to field end */
#define PMT_DYN_OFF(x)	((x) & 0x7fff)

struct pmt_probe_cfg {
	__u32 fixed_size;	/* bytes of the record up to its last fixed field */
	__u16 n_dyn;		/* used entries of dyn[] */
	__u16 pad;
	/* offset of each 4-byte __data_loc/__rel_loc word (PMT_DYN_REL set
	 * for __rel_loc); the dynamic data ends at the largest off+len. */
	__u16 dyn[PMT_MAX_DYN];
};

#endif /* PMTRACE_ABI_H */
