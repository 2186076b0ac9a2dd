/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * For programs that build their record themselves (PMU samples, function
 * calls) in the scratch buffer: filter it, then aggregate it (stack ids as
 * keys) or stream it (stack frames after it). The record ends with a
 * struct pmt_stack_rec.
 */
#ifndef PMTRACE_RECORD_BPF_H
#define PMTRACE_RECORD_BPF_H

#include "actions.bpf.h"
#include "filter.bpf.h"
#include "unwind.bpf.h"

#define PMT_STACK_BYTES (PMT_STACK_DEPTH * sizeof(__u64))
/* A streamed stack's frames at most: as many as a key holds (its last
 * slot is the key's check), so a stack deeper than that is cut at the
 * same frame streamed and aggregated (one truth for a stack) */
#define PMT_STREAM_STACK_BYTES (PMT_STACK_KEPT * sizeof(__u64))

/* The hash of a stack's frames, by a bpf_loop callback (checked once,
 * whatever the caller) reading them where the caller took them. */
struct pmt_stack_hash {
	const __u64 *frames;
	__u64 h;
	__u32 n;
};

static long pmt_stack_hash_step(__u32 i, void *data)
{
	struct pmt_stack_hash *c = data;
	__u64 k = i;

	/* bounded in the register the access uses */
	asm volatile("" : "+r"(k));
	if (k >= PMT_STACK_KEPT)
		return 1;
	if (k >= c->n)
		return 1;
	c->h = pmt_hash_word(c->h, c->frames[k]);
	return 0;
}

/* One store of a stack's frames (pmt_stack_store), a probe a step. */
struct pmt_stack_put {
	__u64 *frames;
	__u64 h;
	__u64 key; /* found or stored under, once found is set */
	__u32 owner;
	__u16 found;
	__u16 stat; /* why the last probe failed (enum pmt_stat) */
};

/* The first slots a stack may take: all of them but where the tests
 * make the slots of many stacks meet (PMT_STACK_SLOTS) */
const volatile __u32 pmt_stack_slot_mask __weak = 0xffffffff;

static long pmt_stack_put_step(__u32 i, void *data)
{
	struct pmt_stack_put *c = data;
	__u32 slot = ((__u32)c->h & pmt_stack_slot_mask) + i * ((__u32)(c->h >> 32) | 1);
	__u64 key, *old;
	int err;

	/* the low halves that say "no stack" and "deferred" are no slot */
	if (slot >= PMT_USTACK_DEFERRED)
		return 0;
	key = (__u64)c->owner << 32 | slot;
	/* stored already (the common case: one lookup) */
	old = bpf_map_lookup_elem(&pmt_stacks, &key);
	if (old && old[PMT_STACK_KEPT] != c->h)
		/* once more before calling it another stack's: user space
		 * deletes stacks no key refers to (collect_stacks), and a
		 * deleted element is reused at once by another CPU's stack,
		 * which a lookup made before the delete then reads */
		old = bpf_map_lookup_elem(&pmt_stacks, &key);
	if (old) {
		if (old[PMT_STACK_KEPT] == c->h)
			goto found;
		c->stat = PMT_STAT_STACK_COLLISION;
		return 0;
	}
	c->frames[PMT_STACK_KEPT] = c->h;
	/* an int: before 6.4 a hash map's update is called directly and
	 * returns in 32 bits, not sign-extended (-EEXIST is 0xffffffef) */
	err = (int)bpf_map_update_elem(&pmt_stacks, &key, c->frames, BPF_NOEXIST);
	if (!err)
		goto found;
	if (err == -17 /* EEXIST: another CPU stored a stack there meanwhile */) {
		old = bpf_map_lookup_elem(&pmt_stacks, &key);
		if (old && old[PMT_STACK_KEPT] == c->h)
			goto found;
		c->stat = old ? PMT_STAT_STACK_COLLISION : PMT_STAT_STACK_ERR;
		return 0;
	}
	c->stat = err == -7 /* E2BIG */ ? PMT_STAT_STACK_FULL : PMT_STAT_STACK_ERR;
	return 1;
found:
	c->key = key;
	c->found = 1;
	return 1;
}

/*
 * Store the frames at byte off of the scratch buffer (zero-padded to
 * PMT_STACK_KEPT by the caller) under owner (a tgid, or PMT_KSTACK_OWNER)
 * with their 64-bit hash h, kept in the last slot: the key is owner << 32
 * | a slot, the first of PMT_STACK_PROBES slots that holds this stack or
 * none (the low half of h, then steps of its high half: two stacks of
 * one owner whose low halves meet take different slots, and never
 * merge). User space gives each stack one key however the kernel placed
 * it (pmt_stack_copies__id). The key, or owner << 32 | 0xffffffff when
 * the stack could not be stored (counted by cause).
 */
static __always_inline __u64 pmt_stack_store(struct pmt_event *e, __u32 off, __u32 owner, __u64 h)
{
	struct pmt_stack_put c = {.frames = (__u64 *)(e->data + off),
				  .h = h,
				  .owner = owner,
				  .stat = PMT_STAT_STACK_COLLISION};

	bpf_loop(PMT_STACK_PROBES, pmt_stack_put_step, &c, 0);
	if (c.found)
		return c.key;
	pmt_stat_inc(c.stat);
	return (__u64)owner << 32 | 0xffffffffULL;
}

/* The key of the stack the kernel gives (flags: 0 for the kernel's, or
 * BPF_F_USER_STACK for frame pointers'), taken into the scratch buffer at
 * byte off. */
static __always_inline __u64 pmt_stack_take(void *ctx, struct pmt_event *e, const __u64 off,
					    __u32 owner, __u64 flags)
{
	__u64 *frames = (__u64 *)(e->data + off);
	struct pmt_stack_hash c = {.frames = frames, .h = PMT_STACK_HASH_SEED};
	long n;

	/* zero-padded by the helper itself, up to the check slot */
	n = bpf_get_stack(ctx, frames, PMT_STACK_KEPT * sizeof(__u64), flags);
	if (n <= 0)
		return (__u64)owner << 32 | 0xffffffffULL;
	c.n = (__u32)((__u64)n / 8);
	bpf_loop(PMT_STACK_KEPT, pmt_stack_hash_step, &c, 0);
	return pmt_stack_store(e, (__u32)off, owner, c.h);
}

/*
 * The aggregation key of the current user stack, unwound from CFI into
 * the scratch buffer after the record, zero-padded (see pmt_stack_store).
 * defer (the update follows in this run, keyed by this stack): a stack
 * left at a file without rows is for user space to finish
 * (pmt_aggregate_deferred), its key part PMT_USTACK_DEFERRED until then.
 */
static __always_inline __u64 pmt_unwind_key(struct pmt_fctx *fc, struct pmt_event *e,
					    const __u64 rec_size, const bool defer)
{
	__u64 *frames = (__u64 *)(e->data + rec_size), h = 0;
	__u32 tgid = (__u32)(pmt_pid_tgid(fc) >> 32), n, dump;

	/* zero-padded: all of it zeroed first, by one helper call that
	 * zeroes what it is given when it cannot read the source, which
	 * address 0 never is (a loop zeroing from the n-th frame on was
	 * checked 127 ways, two thirds of the perf_event program's verifier
	 * time; 127 stores were checked on every path reaching them, 760
	 * instructions) */
	bpf_probe_read_kernel(frames, PMT_STACK_BYTES, NULL);
	n = pmt_unwind_user((__u32)rec_size, PMT_STACK_KEPT, &h, defer && pmt_agg_defer);
	if (defer && pmt_agg_defer && (dump = pmt_unwind_dumped())) {
		/* where pmt_agg_defer_send finds them: the scratch
		 * header, which an aggregation does not send */
		e->hdr.size = (__u32)rec_size;
		e->hdr.nuser = (__u16)n;
		e->hdr.dump = dump;
		fc->udefer = 1;
		return (__u64)tgid << 32 | PMT_USTACK_DEFERRED;
	}
	if (!n)
		return (__u64)tgid << 32 | 0xffffffffULL;
	return pmt_stack_store(e, (__u32)rec_size, tgid, h);
}

/*
 * The key of the user stack pmt_unwind_key left for user space, as far as
 * it was walked and the frame it stopped at, for an update that could not
 * be sent (the rings full): the count stays whole, the stack short, and
 * said (PMT_STAT_DEFER_CUT). The dump after the frames is zeroed, as a
 * key's padding is. A function of its own: 6.1 allows 512 bytes of stack
 * for a program and its calls.
 */
static __noinline __attribute__((unused)) __s64 pmt_unwind_cut_key(struct pmt_fctx *fc, __u32 off)
{
	__u32 tgid = (__u32)(pmt_pid_tgid(fc) >> 32), zero = 0;
	__s64 none = (__s64)((__u64)tgid << 32 | 0xffffffffULL);
	__u64 n, at, base = off, *frames;
	struct pmt_unwind *u;
	struct pmt_event *e;

	pmt_stat_inc(PMT_STAT_DEFER_CUT);
	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	if (!u || !e)
		return none;
	n = u->n;
	asm volatile("" : "+r"(n));
	if (n >= PMT_STACK_KEPT)
		return none;
	at = base + n * 8;
	asm volatile("" : "+r"(at));
	if (at > PMT_DATA_ROOM - PMT_STACK_BYTES)
		return none;
	/* the frame the walk stopped at ends it, the rest zeroed */
	frames = (__u64 *)(e->data + at);
	frames[0] = u->native ? u->pc - 1 : u->pc; /* a caller at its call, as written */
	bpf_probe_read_kernel(frames + 1, (PMT_STACK_KEPT - 1 - n) * 8, NULL);
	asm volatile("" : "+r"(base));
	if (base > PMT_DATA_ROOM - PMT_STACK_BYTES)
		return none;
	return (__s64)pmt_stack_store(e, (__u32)base, tgid, pmt_hash_word(u->hash, frames[0]));
}

/* The streamed record's strings and numbers filled in, then the block's
 * map updates (a printf's block may update maps too: all its updates are
 * cfg->next_agg's chain) and statements run: false where a printf's
 * condition (if) keeps the record back */
static __always_inline bool pmt_stream_ready(const struct pmt_probe_cfg *cfg, struct pmt_fctx *c,
					     struct pmt_event *e)
{
	bool skip;

	pmt_stream_strs_fill(cfg, c, e);
	skip = pmt_print_skipped(cfg, c);
	pmt_aggregate_rest(cfg, c);
	return !skip;
}

/* An aggregation's update, its stack keys in st (frames from byte
 * frames_off): a user stack left for user space goes with its update,
 * or, when the rings have no room, is keyed as far as it was walked. */
static __always_inline void pmt_aggregate_stacked(const struct pmt_probe_cfg *cfg,
						  struct pmt_fctx *fc, struct pmt_stack_rec *st,
						  const __u64 frames_off, __u32 id)
{
	bool sent = false;

	if (pmt_agg_defer && fc->udefer) {
		/* its expressions run from here: from the function below, the
		 * machine's frame would be on top of that one's (6.1 bounds a
		 * chain of calls to 512 bytes) */
		pmt_x_prepare(cfg->agg.xprog, fc);
		sent = !pmt_aggregate_deferred(cfg, fc);
		if (!sent) {
			st->ustack = pmt_unwind_cut_key(fc, (__u32)frames_off);
			fc->udefer = 0;
		}
	}
	/* the rest on this frame: 6.1 bounds the frames of a chain of calls
	 * to 512 bytes in all */
	if (!sent)
		pmt_aggregate_action(cfg, fc, id);
	pmt_aggregate_rest(cfg, fc);
}

/* --stack's aggregation keys into st: the stacks --stack asks for, stored
 * in pmt_stacks by content, or -1 (kernel) / a key of no frames (user);
 * frames are built in the scratch buffer from byte frames_off (a constant
 * of the caller's). defer: as pmt_unwind_key's. */
static __always_inline void pmt_stack_keys(const struct pmt_probe_cfg *cfg, struct pmt_fctx *fc,
					   struct pmt_event *e, struct pmt_stack_rec *st,
					   const __u64 frames_off, const bool defer)
{
	__u32 tgid = (__u32)(pmt_pid_tgid(fc) >> 32);
	__u64 k;

	st->kstack = -1;
	if (cfg->stack & PMT_STACK_KERNEL) {
		k = pmt_stack_take(fc->ctx, e, frames_off, PMT_KSTACK_OWNER,
				   fc->kskip & BPF_F_SKIP_FIELD_MASK);
		st->kstack = (__u32)k == 0xffffffff ? -1 : (__s64)k;
	}
	st->ustack = -1;
	if ((cfg->stack & PMT_STACK_USER) && pmt_unwind_dwarf)
		/* a latency's update comes in another run, or keyed by its
		 * start: only a plain update goes with its stack */
		st->ustack = pmt_unwind_key(fc, e, frames_off, defer && cfg->action == PMT_ACT_AGG);
	else if (cfg->stack & PMT_STACK_USER)
		st->ustack = pmt_stack_take(fc->ctx, e, frames_off, tgid, BPF_F_USER_STACK);
}

/* Is this event traced (target, CPU, not stopping; or its probe's any
 * task's)? Then its probe's settings in *cfg and the scratch buffer to
 * build the record in. */
static __always_inline struct pmt_event *pmt_record_begin(__u32 id, struct pmt_fctx *fc,
							  const struct pmt_probe_cfg **cfg)
{
	__u32 zero = 0;

	if (pmt_stop)
		return NULL;
	fc->probe = id;
	*cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	if (!*cfg || (!(*cfg)->any_task && (!pmt_target_ok(fc) || !pmt_cpu_ok())))
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
		pmt_stack_keys(cfg, fc, e, st, rec_size, true);
		pmt_aggregate_stacked(cfg, fc, st, rec_size, id);
		return;
	}
	if (cfg->stack & PMT_STACK_KERNEL) {
		kb = bpf_get_stack(ctx, frames, PMT_STREAM_STACK_BYTES,
				   fc->kskip & BPF_F_SKIP_FIELD_MASK);
		if (kb < 0 || kb > (long)PMT_STACK_BYTES)
			kb = 0;
		st->nkernel = (__u16)((__u64)kb / 8);
	}
	if (cfg->stack & PMT_STACK_USER) {
		/* offset kept in a 64-bit masked form the verifier can bound */
		__u64 off = (__u64)kb & (PMT_STACK_BYTES | (PMT_STACK_BYTES - 1));

		if (off <= PMT_STACK_BYTES && pmt_unwind_dwarf) {
			__u64 h;

			ub = (long)pmt_unwind_user((__u32)(rec_size + off), PMT_STACK_KEPT, &h,
						   true) *
			     8;
			st->nuser = (__u16)((__u64)ub / 8);
		} else if (off <= PMT_STACK_BYTES) {
			ub = bpf_get_stack(ctx, frames + off, PMT_STREAM_STACK_BYTES,
					   BPF_F_USER_STACK);
			if (ub < 0 || ub > (long)PMT_STACK_BYTES)
				ub = 0;
			st->nuser = (__u16)((__u64)ub / 8);
		}
	}
	size += (__u64)(st->nkernel + st->nuser) * 8;
	if (!pmt_stream_ready(cfg, fc, e))
		return;
	/* a user stack left for user space: its dump after the frames */
	pmt_emit_frames(fc, e, id, size, 0, 0, 0,
			(cfg->stack & PMT_STACK_USER) && pmt_unwind_dwarf ? pmt_unwind_dumped()
									  : 0);
}

#endif /* PMTRACE_RECORD_BPF_H */
