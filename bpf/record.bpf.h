/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * For programs that build their record themselves (PMU samples, function
 * calls) in the scratch buffer: filter it, then aggregate it (stack ids as
 * keys) or stream it (stack frames after it). The record ends with a
 * struct pmt_stack_rec.
 */
#ifndef PMTRACE_RECORD_BPF_H
#define PMTRACE_RECORD_BPF_H

#include "aggregate.bpf.h"
#include "unwind.bpf.h"

/* --stack with an aggregation: stacks are keys, stored once each (sized
 * by the loader: one entry unless a session keys by stacks) */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PMT_STACK_DEPTH * sizeof(__u64));
} pmt_stacks SEC(".maps") __weak;

#define PMT_STACK_BYTES (PMT_STACK_DEPTH * sizeof(__u64))

/*
 * The aggregation key of the current user stack, unwound from CFI: tgid <<
 * 32 | a hash of its frames, which pmt_ustacks maps to the frames (the
 * low half 0xffffffff: no frames). The frames are built in the scratch
 * buffer after the record, zero-padded.
 */
static __always_inline __u64 pmt_unwind_key(struct pmt_fctx *fc, struct pmt_event *e,
					    const __u64 rec_size)
{
	__u64 *frames = (__u64 *)(e->data + rec_size);
	__u64 tgid = pmt_pid_tgid(fc) & ~0xffffffffULL, h, key;
	__u32 n;

	/* zero-padded: all of it zeroed first (straight-line stores, checked
	 * once; a loop zeroing from the n-th frame on was checked 127 ways,
	 * two thirds of the perf_event program's verifier time) */
	__builtin_memset(frames, 0, PMT_STACK_DEPTH * sizeof(*frames));
	n = pmt_unwind_user((__u32)rec_size, PMT_STACK_DEPTH, &h);
	if (!n)
		return tgid | 0xffffffffULL;
	key = tgid | (__u32)((h ^ (h >> 32)) & 0x7fffffff);
	if (bpf_map_update_elem(&pmt_ustacks, &key, frames, BPF_NOEXIST) == -7 /* E2BIG */)
		pmt_stat_inc(PMT_STAT_STACK_FULL);
	return key;
}

/* A stack id, counted when the table could not take the stack (-ENOMEM:
 * full; -EEXIST: its bucket holds another). */
static __always_inline __s32 pmt_stackid(void *ctx, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &pmt_stacks, flags);

	if (id == -12 || id == -17)
		pmt_stat_inc(PMT_STAT_STACK_FULL);
	return (__s32)id;
}

/* --stack's aggregation keys into st: the stack ids --stack asks for, or
 * -1; DWARF user frames are built in the scratch buffer from byte
 * frames_off (a constant of the caller's). */
static __always_inline void pmt_stack_keys(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					   struct pmt_event *e, struct pmt_stack_rec *st,
					   const __u64 frames_off)
{
	st->kstack = cfg->stack & PMT_STACK_KERNEL ? pmt_stackid(fc->ctx, 0) : -1;
	st->ustack = -1;
	if ((cfg->stack & PMT_STACK_USER) && pmt_unwind_dwarf)
		st->ustack = pmt_unwind_key(fc, e, frames_off);
	else if (cfg->stack & PMT_STACK_USER)
		st->ustack = (pmt_pid_tgid(fc) & ~0xffffffffULL) |
			     (__u32)pmt_stackid(fc->ctx, BPF_F_USER_STACK);
}

/* Is this event traced (target, CPU, not stopping)? Then its probe's
 * settings in *cfg and the scratch buffer to build the record in. */
static __always_inline struct pmt_event *pmt_record_begin(__u32 id, struct pmt_fctx *fc,
							  const struct pmt_probe_cfg **cfg)
{
	__u32 zero = 0;

	if (pmt_stop || !pmt_target_ok(fc) || !pmt_cpu_ok())
		return NULL;
	*cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	if (!*cfg)
		return NULL;
	return bpf_map_lookup_elem(&pmt_scratch, &zero);
}

/* Does anything read the record's own fields (a stream, or a filter, key
 * or value on them)? If not, a program need not fill them in. */
static __always_inline bool pmt_record_needed(const struct pmt_probe_cfg *cfg)
{
	return !pmt_aggregates(cfg) || cfg->agg.needs_record ||
	       (pmt_use_filter && cfg->filter.n && cfg->filter.needs_record);
}

/*
 * rec_size is the record's size, a constant of the caller's, so the frames
 * land at a constant offset of the scratch buffer: the verifier bounds
 * every write.
 */
static __always_inline void pmt_record_finish(const struct pmt_probe_cfg *cfg, struct pmt_event *e,
					      const __u64 rec_size, __u32 id, struct pmt_fctx *fc)
{
	struct pmt_stack_rec *st = (struct pmt_stack_rec *)(e->data + rec_size - sizeof(*st));
	__u8 *frames = e->data + rec_size;
	void *ctx = fc->ctx;
	__u64 size = rec_size;
	long kb = 0, ub = 0;

	fc->rec = e->data;
	st->kstack = -1;
	st->ustack = -1;
	st->nkernel = 0;
	st->nuser = 0;
	if (pmt_use_filter && cfg->filter.n && !pmt_filter_run(&cfg->filter, fc)) {
		__u64 *n = bpf_map_lookup_elem(&pmt_filtered, &id);

		if (n)
			(*n)++;
		return;
	}
	if (pmt_aggregates(cfg)) {
		pmt_stack_keys(cfg, fc, e, st, rec_size);
		pmt_aggregate(cfg, fc, id);
		return;
	}
	if (cfg->stack & PMT_STACK_KERNEL) {
		kb = bpf_get_stack(ctx, frames, PMT_STACK_BYTES, 0);
		if (kb < 0 || kb > (long)PMT_STACK_BYTES)
			kb = 0;
		st->nkernel = (__u16)((__u64)kb / 8);
	}
	if (cfg->stack & PMT_STACK_USER) {
		/* offset kept in a 64-bit masked form the verifier can bound */
		__u64 off = (__u64)kb & (PMT_STACK_BYTES | (PMT_STACK_BYTES - 1));

		if (off <= PMT_STACK_BYTES && pmt_unwind_dwarf) {
			__u64 h;

			ub = (long)pmt_unwind_user((__u32)(rec_size + off), PMT_STACK_DEPTH, &h) *
			     8;
			st->nuser = (__u16)((__u64)ub / 8);
		} else if (off <= PMT_STACK_BYTES) {
			ub = bpf_get_stack(ctx, frames + off, PMT_STACK_BYTES, BPF_F_USER_STACK);
			if (ub < 0 || ub > (long)PMT_STACK_BYTES)
				ub = 0;
			st->nuser = (__u16)((__u64)ub / 8);
		}
	}
	size += (__u64)(st->nkernel + st->nuser) * 8;
	pmt_emit(fc, e, id, size);
}

#endif /* PMTRACE_RECORD_BPF_H */
