/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * BPF-only pieces every probe kind shares. Each bpf/<kind>.bpf.c includes
 * this; `bpftool gen object` links them into one object, so the maps and
 * settings below are defined __weak here and merged into one instance.
 */
#ifndef PMTRACE_COMMON_BPF_H
#define PMTRACE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "abi.h"

#include "lean.bpf.h"

/* struct bpf_perf_event_value (uapi: linux/bpf.h), laid out as the
 * kernel writes it, without vmlinux.h's CO-RE attribute: each type a
 * program CO-RE relocates costs libbpf a search of all the kernel's
 * types at every start (some 1.5 ms here). */
struct pmt_perf_value {
	__u64 counter;
	__u64 enabled;
	__u64 running;
};

/* Settings, written by the loader between open and load. */
const volatile bool pmt_filter_target __weak = false; /* -p / -- CMD */
const volatile bool pmt_filter_cpu __weak = false;    /* -C */
const volatile bool pmt_filter_cgroup __weak = false; /* --cgroup */
const volatile __u64 pmt_cpu_mask[PMT_MAX_CPUS / 64] __weak = {};
/* What the session uses at all. Read-only data is known to the verifier,
 * so the code of unused features is not even verified: a plain stream
 * loads in a few ms instead of ~120 ms with filter and aggregation code. */
const volatile bool pmt_use_filter __weak = true;
const volatile bool pmt_use_agg __weak = true;
/* ... and does any probe stream? If none, an aggregating session's
 * programs are checked without their streaming half (a second copy of the
 * user stack unwinder in the perf_event program). */
const volatile bool pmt_use_stream __weak = true;
/* Does this probe aggregate (else it streams)? */
#define pmt_aggregates(cfg) (pmt_use_agg && (!pmt_use_stream || (cfg)->action != PMT_ACT_STREAM))
/* The operand sources (bit PMT_FSRC_*), key kinds (bit PMT_KEY_*),
 * filter comparisons (bit PMT_FOP_*) and aggregations (bit PMT_AGG_*)
 * the session's probes use, and the
 * most --by parts a probe has: the code serving any other is dropped
 * before it is verified (an aggregation by comm checks 1 key part of one
 * kind, not 4 of every kind, the combinations of which were ~80% of the
 * verifier's time). */
const volatile __u32 pmt_srcs_used __weak = ~0u;
const volatile __u32 pmt_key_kinds __weak = ~0u;
const volatile __u32 pmt_fops_used __weak = ~0u;
const volatile __u32 pmt_agg_kinds __weak = ~0u; /* bit PMT_AGG_* */
const volatile __u32 pmt_agg_nparts __weak = PMT_AGG_KEYS;
/* --str-len: bytes str() reads, NUL included (1..PMT_STR_MAX) */
const volatile __u32 pmt_str_len __weak = 64;
#define pmt_uses_src(src) (pmt_srcs_used & (1u << (src)))
#define pmt_uses_key(kind) (pmt_key_kinds & (1u << (kind)))
#define pmt_uses_fop(op) (pmt_fops_used & (1u << (op)))
#define pmt_uses_agg(kind) (pmt_agg_kinds & (1u << (kind)))
/* The probe id when the session has one probe, else -1: a constant the
 * verifier folds, so one-probe sessions skip the cookie helper. */
const volatile __s32 pmt_only_probe __weak = -1;
/* Set by the loader when tracing ends: programs return at once while their
 * links are closed (which can take a while, see src/run/session_bpf.c). */
volatile bool pmt_stop __weak = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} pmt_events SEC(".maps") __weak;

/* tgid -> enum pmt_target_state; only consulted when pmt_filter_target */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} pmt_targets SEC(".maps") __weak;

/* --cgroup: the cgroup whose subtree is traced, at index 0 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} pmt_cgroup SEC(".maps") __weak;

/* probe id (the attach cookie) -> record layout */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PMT_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct pmt_probe_cfg);
} pmt_probes SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_event);
} pmt_scratch SEC(".maps") __weak;

/* Per-CPU count, per probe id, of events a filter rejected. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} pmt_filtered SEC(".maps") __weak;

/* Per-CPU count, per probe id, of events that reached an aggregation. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} pmt_hits SEC(".maps") __weak;

/* Per-CPU count, per probe id, of reads that failed: at 2 * id, str()'s;
 * at 2 * id + 1, members' (pmt_read_failed). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * PMT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} pmt_read_faults SEC(".maps") __weak;

/* Per-CPU counters of things the kernel side gave up on (enum pmt_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PMT_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} pmt_stats SEC(".maps") __weak;

/*
 * What a probe's program knows of its event, for filters, keys, values and
 * the record header. pid_tgid is fetched on first use: a helper call costs
 * as much as the rest of a rejecting filter, and most sessions never need
 * it (a --count --by comm, a filter on a field).
 */
struct pmt_fctx {
	void *ctx;	 /* the program's context (raw record for tp) */
	const __u8 *rec; /* copy of the record's fixed part, or NULL */
	__u64 pid_tgid;	 /* 0 until pmt_pid_tgid() */
	__u32 counter;	 /* the --counter an update is for (PMT_KEY_COUNTER) */
	/* the user stack of an aggregation's key was left for user space
	 * (where its frames and dump lie: the scratch record's header, see
	 * pmt_unwind_key); in what was padding, so no program's stack grows */
	__u32 udefer;
	__u64 *xslot; /* the probe's expressions' values (pmt_x_prepare) */
	__u32 kskip;  /* the kernel stack's first frames that are ours */
	__u32 probe;  /* the probe's id, for what is counted per probe */
};

static __always_inline __u64 pmt_pid_tgid(struct pmt_fctx *c)
{
	/* 0 is also the idle task's: it is then fetched again, harmlessly */
	if (!c->pid_tgid)
		c->pid_tgid = bpf_get_current_pid_tgid();
	return c->pid_tgid;
}

static __always_inline void pmt_stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&pmt_stats, &which);

	if (v)
		(*v)++;
}

/* A read that failed: counted in all (pmt_stats) and for the probe. */
static __always_inline void pmt_read_failed(const struct pmt_fctx *c, bool member)
{
	__u32 k = (c->probe & (PMT_MAX_PROBES - 1)) * 2 + member;
	__u64 *n = bpf_map_lookup_elem(&pmt_read_faults, &k);

	pmt_stat_inc(member ? PMT_STAT_MEMBER_FAULT : PMT_STAT_STR_FAULT);
	if (n)
		(*n)++;
}

/* Is process tgid one we trace? Cheap when no target was given. */
static __always_inline bool pmt_tgid_ok(__u32 tgid)
{
	__u8 *st;

	if (!pmt_filter_target)
		return true;
	st = bpf_map_lookup_elem(&pmt_targets, &tgid);
	return st && *st == PMT_TARGET_ACTIVE;
}

/* Is the current task one we trace? (--cgroup: is it in the cgroup's
 * subtree, as the kernel's cgroup v2 hierarchy says) */
static __always_inline bool pmt_target_ok(struct pmt_fctx *c)
{
	if (pmt_filter_cgroup && bpf_current_task_under_cgroup(&pmt_cgroup, 0) != 1)
		return false;
	return !pmt_filter_target || pmt_tgid_ok((__u32)(pmt_pid_tgid(c) >> 32));
}

static __always_inline bool pmt_cpu_ok(void)
{
	/* 64-bit: a 32-bit cpu is checked on a zero-extended copy and used
	 * unchecked, which 6.1's verifier rejects */
	__u64 cpu;

	if (!pmt_filter_cpu)
		return true;
	cpu = bpf_get_smp_processor_id();
	if (cpu >= PMT_MAX_CPUS)
		return false;
	return pmt_cpu_mask[cpu / 64] & (1ULL << (cpu % 64));
}

/*
 * The task's comm into 16 bytes: two loads through the BTF task pointer.
 * task->comm is kept NUL-padded (__set_task_comm pads), so this equals
 * bpf_get_current_comm() without its strscpy.
 */
static __always_inline void pmt_task_comm(struct task_struct *t, void *dst)
{
	((__u64 *)dst)[0] = *(__u64 *)&t->comm[0];
	((__u64 *)dst)[1] = *(__u64 *)&t->comm[8];
}

static __always_inline void pmt_current_comm(void *dst)
{
	pmt_task_comm(bpf_get_current_task_btf(), dst);
}

/* streamed records carry their thread's counts (struct pmt_counter_rec) */
const volatile bool pmt_stream_counter __weak = false;
/* --str: the strings each streamed record carries (0..PMT_STREAM_STRS) */
const volatile __u32 pmt_stream_strs __weak = 0;
/* --printf: the numbers each streamed record carries (0..PMT_STREAM_VALS) */
const volatile __u32 pmt_stream_vals __weak = 0;
/* when pmtrace began (CLOCK_MONOTONIC ns): elapsed's origin */
const volatile __u64 pmt_elapsed_origin __weak = 0;
/* the command's pid (cpid), forked before the programs load */
const volatile __u32 pmt_cpid __weak = 0;
/* a printf's join(): each streamed record carries a struct pmt_join_rec */
const volatile bool pmt_stream_join __weak = false;

#endif /* PMTRACE_COMMON_BPF_H */
