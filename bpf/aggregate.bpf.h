/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * In-kernel aggregation: per-CPU hash of (keys, bucket) -> count/sum/min/max.
 * Nothing is streamed; the loader reads and merges the CPUs at intervals.
 */
#ifndef PMTRACE_AGGREGATE_BPF_H
#define PMTRACE_AGGREGATE_BPF_H

#include "aggkey.bpf.h"

/* key_size is set at load to what --by uses: no BTF key type, which the
 * kernel would find smaller than struct pmt_agg_key, and so no BTF value
 * type either (the kernel refuses one without the other, and libbpf
 * would create the map twice) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240); /* --max-keys */
	__uint(key_size, sizeof(struct pmt_agg_key));
	__uint(value_size, sizeof(struct pmt_agg_val));
} pmt_agg SEC(".maps") __weak;

/* sizeof the hash's keys in 8-byte words, rounded up (set at load) */
const volatile __u32 pmt_agg_key_words __weak = PMT_AGG_KEY_WORDS;

/* one cache a half (pmt_agg_gen) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct pmt_agg_cache);
} pmt_agg_cache SEC(".maps") __weak;

/*
 * The half of the hash the programs write (bit 0): a key carries it in
 * pad, and each half has its own cache. The loader drains the hash into
 * its own totals by flipping it, waiting until no program can still be
 * writing the other half, then reading and deleting that half's keys and
 * clearing its cache (src/aggregate/maps_bpf.c): the hash then bounds what
 * comes between two drains, not what a run sees.
 */
volatile __u32 pmt_agg_gen __weak = 0;

/*
 * Programs inside an update of the hash, per CPU (a cache line each):
 * raised before pmt_agg_gen is read, lowered after the last write. The
 * loader flips pmt_agg_gen, then waits until each CPU's count is 0: both
 * sides write, fence, then read the other's (the raise is an atomic add,
 * a full fence), so a program either is counted or reads the new half.
 */
struct pmt_agg_busy pmt_agg_busy[PMT_MAX_CPUS] __weak SEC(".bss");

/* No --by keys: no hash at all. Slot bucket + 1 of a per-CPU array (sized
 * by the loader: 2, or every bucket of the histogram). */
const volatile bool pmt_agg_keyless __weak = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_agg_val);
} pmt_agg_flat SEC(".maps") __weak;

/* Set by the loader: an aggregation's user stack that meets a file
 * without unwind rows goes to user space to be finished, with its
 * update (pmt_agg_defer_send), instead of being cut short. */
const volatile bool pmt_agg_defer __weak = false;

/* What pmt_agg_defer_send sends, --str's and --counter's room before the
 * header as a streamed record has it (src/run/evloop_bpf.c reads them all
 * alike). */
struct pmt_agg_defer_buf {
	__u8 pre[PMT_STREAM_VALS * 8 + sizeof(struct pmt_join_rec) +
		 PMT_STREAM_STRS * PMT_STREAM_STR_LEN +
		 PMT_COUNTERS * sizeof(struct pmt_counter_rec)];
	struct pmt_event_hdr hdr;
	struct pmt_agg_deferred d;
	__u8 data[PMT_STACK_DEPTH * 8 + PMT_DUMP_ROOM];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_agg_defer_buf);
} pmt_agg_defer_buf SEC(".maps") __weak;

static __always_inline void pmt_agg_add(struct pmt_agg_val *val, __s64 v)
{
	/* per-CPU values: plain updates, no atomics */
	val->count++;
	val->sum += v;
	if (v < val->min)
		val->min = v;
	if (v > val->max)
		val->max = v;
}

/* The slot's key back into the hash (bpf/abi.h): its whole value where the
 * entry is the one it was loaded from, else what it gained since. */
static __always_inline void pmt_agg_writeback(struct pmt_agg_cslot *slot)
{
	struct pmt_agg_val zero = {}, *val = bpf_map_lookup_elem(&pmt_agg, &slot->key);

	if (!val) {
		/* deleted as idle after the slot took it in */
		if (!(int)bpf_map_update_elem(&pmt_agg, &slot->key, &zero, BPF_NOEXIST))
			pmt_stat_inc(PMT_STAT_AGG_NEW);
		val = bpf_map_lookup_elem(&pmt_agg, &slot->key);
	}
	if (!val) {
		pmt_stat_inc(PMT_STAT_AGG_FULL);
		return;
	}
	if (val->count == slot->base_count) {
		*val = slot->val;
		return;
	}
	/* a new entry for the key (this CPU's part starts at zero) */
	if (!val->count || slot->val.min < val->min)
		val->min = slot->val.min;
	if (!val->count || slot->val.max > val->max)
		val->max = slot->val.max;
	val->count += slot->val.count - slot->base_count;
	val->sum += slot->val.sum - slot->base_sum;
}

/* Add v under key k in the hash's half gen, through its cache. */
static __always_inline void pmt_agg_update_gen(const struct pmt_agg_cfg *a, struct pmt_agg_key *k,
					       __s64 v, __u32 gen)
{
	struct pmt_agg_val zero = {}, *val;
	struct pmt_agg_cache *cache;
	struct pmt_agg_cslot *slot;
	const __u64 *w;
	__u64 sum = 0;
	__u32 i;

	cache = bpf_map_lookup_elem(&pmt_agg_cache, &gen);
	if (!cache)
		return;
	k->pad = gen | (__u32)a->map << PMT_AGG_MAP_SHIFT;
	k->bucket = pmt_agg_bucket(a, v);
	w = (const __u64 *)k;
	for (i = 0; i < PMT_AGG_KEY_WORDS; i++)
		if (i < pmt_agg_key_words)
			sum += w[i];
	slot = &cache->slot[PMT_AGG_CSLOT(sum) & (PMT_AGG_CACHE - 1)];
	if (slot->val.count) {
		const __u64 *sw = (const __u64 *)&slot->key;
		bool same = true;

		for (i = 0; i < PMT_AGG_KEY_WORDS; i++)
			if (i < pmt_agg_key_words && sw[i] != w[i])
				same = false;
		if (same) {
			pmt_agg_add(&slot->val, v);
			return;
		}
		pmt_agg_writeback(slot);
		slot->val.count = 0;
	}
	val = bpf_map_lookup_elem(&pmt_agg, k);
	if (!val) {
		/* EEXIST (another CPU just added it) is fine; E2BIG (full)
		 * shows up as the lookup failing */
		if (!(int)bpf_map_update_elem(&pmt_agg, k, &zero, BPF_NOEXIST))
			pmt_stat_inc(PMT_STAT_AGG_NEW);
		val = bpf_map_lookup_elem(&pmt_agg, k);
		if (!val) {
			pmt_stat_inc(PMT_STAT_AGG_FULL);
			return;
		}
	}
	slot->key = *k;
	slot->val = *val;
	slot->base_count = val->count;
	slot->base_sum = val->sum;
	if (!slot->val.count)
		slot->val.min = slot->val.max = v;
	pmt_agg_add(&slot->val, v);
}

/* Add v under key k (its data filled, in pmt_key_buf): the bucket set
 * here, in the half the loader does not drain (pmt_agg_busy). */
static __always_inline void pmt_agg_update_key(const struct pmt_agg_cfg *a, struct pmt_agg_key *k,
					       __s64 v)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= PMT_MAX_CPUS)
		return;
	__sync_fetch_and_add(&pmt_agg_busy[cpu].n, 1);
	pmt_agg_update_gen(a, k, v, pmt_agg_gen & 1);
	__sync_fetch_and_add(&pmt_agg_busy[cpu].n, -1);
}

/* The update of v under k (its bucket set), and its user stack's frames
 * and dump (where the scratch header says: pmt_unwind_key), to user
 * space, which finishes the stack and adds it. A function of its own:
 * its locals on its own stack frame, not the program's (6.1 allows 512
 * bytes for a program and the callbacks it is in). */
static __noinline __attribute__((unused)) long pmt_agg_defer_send(struct pmt_fctx *c,
								  struct pmt_agg_key *k, __s64 v)
{
	const __u32 pre = pmt_stream_pre();
	struct pmt_agg_defer_buf *b;
	__u64 len, off, pid_tgid = pmt_pid_tgid(c);
	struct pmt_event *e;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&pmt_agg_defer_buf, &zero);
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	if (!b || !e)
		return 1;
	len = (__u64)e->hdr.nuser * 8 + e->hdr.dump;
	off = e->hdr.size;
	asm volatile("" : "+r"(len));
	asm volatile("" : "+r"(off));
	if (len > sizeof(b->data) || off > PMT_DATA_ROOM - sizeof(b->data))
		return 1;
	if (bpf_probe_read_kernel(b->data, len, e->data + off))
		return 1;
	__builtin_memcpy(&b->d.key, k, sizeof(*k));
	b->d.value = v;
	b->d.probe_id = c->probe;
	b->d.nuser = e->hdr.nuser;
	b->d.pad = 0;
	b->d.dump = e->hdr.dump;
	b->d.pad2 = 0;
	b->hdr.pid = pid_tgid >> 32;
	b->hdr.tid = (__u32)pid_tgid;
	b->hdr.probe_id = PMT_PROBE_AGG_DEFERRED;
	b->hdr.size = (__u32)(sizeof(b->d) + len);
	b->hdr.nkernel = 0;
	b->hdr.nuser = 0;
	b->hdr.dump = 0;
	pmt_current_comm(b->hdr.comm);
	b->hdr.ts = bpf_ktime_get_ns();
	len += pre + sizeof(b->hdr) + sizeof(b->d);
	asm volatile("" : "+r"(len));
	if (len > sizeof(*b) - sizeof(b->pre) + pre)
		return 1;
	/* not sent (the ring full): the caller keys it in the kernel */
	return bpf_perf_event_output(c->ctx, &pmt_events, BPF_F_CURRENT_CPU, (__u8 *)&b->hdr - pre,
				     len);
}

static __always_inline void pmt_agg_update(const struct pmt_agg_cfg *a, struct pmt_fctx *c,
					   __u32 probe_id, __s64 v)
{
	struct pmt_agg_val *val;
	struct pmt_agg_key *k;
	__u32 z = 0;

	if (pmt_agg_keyless) {
		/* -1 (below a histogram's range) is slot 0 */
		z = (__u32)(pmt_agg_bucket(a, v) + 1);
		val = bpf_map_lookup_elem(&pmt_agg_flat, &z);
		if (!val) {
			pmt_stat_inc(PMT_STAT_AGG_FULL);
			return;
		}
		if (!val->count)
			val->min = val->max = v;
		pmt_agg_add(val, v);
		return;
	}
	k = bpf_map_lookup_elem(&pmt_key_buf, &z);
	if (!k)
		return;
	pmt_agg_fill_key(a, c, k, probe_id);
	pmt_agg_update_key(a, k, v);
}

static __always_inline __s64 pmt_agg_value(const struct pmt_agg_cfg *a, struct pmt_fctx *c)
{
	__s64 v = (__s64)pmt_fetch_num(&a->value, c);

	if (a->scale == PMT_SCALE_MUL)
		v *= (__s64)a->k;
	else if (a->scale == PMT_SCALE_DIV && a->k)
		v = v < 0 ? -(__s64)((__u64)-v / a->k) : (__s64)((__u64)v / a->k);
	return v;
}

/* What an update adds: nothing to read for a count. */
static __always_inline __s64 pmt_agg_event_value(const struct pmt_agg_cfg *a, struct pmt_fctx *c)
{
	return pmt_agg_kinds == 1u << PMT_AGG_COUNT || a->kind == PMT_AGG_COUNT
		       ? 0
		       : pmt_agg_value(a, c);
}

#endif
