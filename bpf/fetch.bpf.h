/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Plain operands loaded (struct pmt_operand, bpf/abi/filter.h): a field
 * of the raw record, a word of the program's context, or what the task
 * says. The expression machine (expr.bpf.h) loads its leaves by these;
 * operand.bpf.h adds expressions and strings on top.
 */
#ifndef PMTRACE_FETCH_BPF_H
#define PMTRACE_FETCH_BPF_H

#include "common.bpf.h"

/* Per-CPU room for one string operand. */
struct pmt_fstr {
	char s[PMT_STR_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_fstr);
} pmt_fstr_buf SEC(".maps") __weak;

static __always_inline __u64 pmt_load_sized(const __u8 *p, __u8 size, bool sign)
{
	switch (size) {
	case 1: return sign ? (__u64)(__s64) * (__s8 *)p : *p;
	case 2: return sign ? (__u64)(__s64) * (__s16 *)p : *(__u16 *)p;
	case 4: return sign ? (__u64)(__s64) * (__s32 *)p : *(__u32 *)p;
	default: return *(__u64 *)p;
	}
}

/* 4-byte words of the record every tracepoint of the session has in full
 * (set at load): the kernel refuses to attach a program that reads a
 * context further than the tracepoint's record, and the verifier sees
 * only the loads below this bound. */
const volatile __u32 pmt_ctx_words __weak = 0;
/* ... and the words the session's operands load (bit w, set at load):
 * the verifier then follows one load a field, not one a word */
const volatile __u32 pmt_ctx_used __weak = ~0u;
/* ... and the words past pmt_ctx_words up to the last one used (set at
 * load): copied by one read of the record's tail, where a read a field
 * (a helper call each) was 30 ns a field here, a fifth of runqlat.bt's
 * sched_switch program (next_pid is past sched_wakeup's record). What
 * is read past a shorter record is never used: an operand reads only
 * its own probe's fields. */
const volatile __u32 pmt_ctx_tail __weak = 0;

#ifdef PMT_RAW_CTX
/* asm: clang would otherwise merge the loads into one through a computed
 * pointer, which the verifier refuses for a context */
#define PMT_CTX_LOAD(ctx, off)                                                       \
	({                                                                           \
		__u32 __v;                                                           \
		asm volatile("%0 = *(u32 *)(%1 + " #off ")" : "=r"(__v) : "r"(ctx)); \
		__v;                                                                 \
	})
#endif

/* The words of the record the session loads (pmt_ctx_used), copied from
 * the context once an event by pmt_ctx_fill: the operands then read them
 * at a variable index, where a load from the context itself must be at a
 * constant offset (the verifier takes no other kind of context access),
 * and a ladder of such loads, one a word, was walked again at each
 * operand's every state (half of a tracepoint program's verification). */
struct pmt_ctxw {
	__u32 w[32];
	__u64 ctx; /* the event's context, for pmt_tp_fetch (a global function) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_ctxw);
} pmt_ctxw_buf SEC(".maps") __weak;

/* Is word w copied each event: one the session's operands use (words
 * 0 and 1 are the kernel's common fields, not readable)? */
static __always_inline bool pmt_ctx_has(__u32 w)
{
	return w >= 2 && w < 32 && (pmt_ctx_used & (1u << w)) && w < pmt_ctx_words + pmt_ctx_tail;
}

#ifdef PMT_RAW_CTX
/* Word i's load where pmt_ctx_has(i) and every record of the session
 * has it: the verifier drops the others, rodata being constant */
#define PMT_CTX_FILL(i, off)                       \
	if ((i) < pmt_ctx_words && pmt_ctx_has(i)) \
	cw->w[i] = PMT_CTX_LOAD(ctx, off)

static __always_inline void pmt_ctx_fill(void *ctx)
{
	struct pmt_ctxw *cw;
	__u32 zero = 0;

	if (!pmt_uses_src(PMT_FSRC_FIELD))
		return;
	cw = bpf_map_lookup_elem(&pmt_ctxw_buf, &zero);
	if (!cw)
		return;
	cw->ctx = (__u64)ctx;
	/* (the bounds are constants to the verifier; a read that fails,
	 * which the trace buffer's does not, leaves zeros) */
	if (pmt_ctx_tail && pmt_ctx_words >= 2 && pmt_ctx_words + pmt_ctx_tail <= 32)
		bpf_probe_read_kernel(&cw->w[pmt_ctx_words & 31], (pmt_ctx_tail * 4) & 127,
				      (char *)ctx + pmt_ctx_words * 4);
	if (!(pmt_ctx_used & ~3u) || pmt_ctx_words <= 2)
		return;
	PMT_CTX_FILL(2, 8);
	PMT_CTX_FILL(3, 12);
	PMT_CTX_FILL(4, 16);
	PMT_CTX_FILL(5, 20);
	PMT_CTX_FILL(6, 24);
	PMT_CTX_FILL(7, 28);
	PMT_CTX_FILL(8, 32);
	PMT_CTX_FILL(9, 36);
	PMT_CTX_FILL(10, 40);
	PMT_CTX_FILL(11, 44);
	PMT_CTX_FILL(12, 48);
	PMT_CTX_FILL(13, 52);
	PMT_CTX_FILL(14, 56);
	PMT_CTX_FILL(15, 60);
	PMT_CTX_FILL(16, 64);
	PMT_CTX_FILL(17, 68);
	PMT_CTX_FILL(18, 72);
	PMT_CTX_FILL(19, 76);
	PMT_CTX_FILL(20, 80);
	PMT_CTX_FILL(21, 84);
	PMT_CTX_FILL(22, 88);
	PMT_CTX_FILL(23, 92);
	PMT_CTX_FILL(24, 96);
	PMT_CTX_FILL(25, 100);
	PMT_CTX_FILL(26, 104);
	PMT_CTX_FILL(27, 108);
	PMT_CTX_FILL(28, 112);
	PMT_CTX_FILL(29, 116);
	PMT_CTX_FILL(30, 120);
	PMT_CTX_FILL(31, 124);
}
_Static_assert(PMT_CTX_DIRECT == 32 * 4, "pmt_ctx_fill covers PMT_CTX_DIRECT bytes");
#endif

/* Word w of the copy, masked where it is read: the verifier takes the
 * index's bounds from the mask (clang would reuse an earlier register
 * whose bounds 6.12's verifier does not carry through the shift) */
static __always_inline __u32 pmt_ctx_word(const struct pmt_ctxw *cw, __u32 w)
{
	asm volatile("" : "+r"(w));
	return cw->w[w & 31];
}

/* A PMT_FFLAG_CTX field (naturally aligned, little-endian) of the event
 * pmt_ctx_fill saw; a field past a shorter record of the session's, or
 * one no operand declared, is read from the record itself (at ctx, or
 * where pmt_ctx_fill saw it: NULL). */
static __always_inline __u64 pmt_ctx_field(void *ctx, __u64 off, __u8 size, bool sign)
{
	__u32 w = (off / 4) & 31, zero = 0;
	struct pmt_ctxw *cw = bpf_map_lookup_elem(&pmt_ctxw_buf, &zero);
	__u64 v;

	if (!cw || !pmt_ctx_has(w) || (size == 8 && !pmt_ctx_has(w + 1))) {
		v = 0;
		if (!ctx && cw)
			ctx = (void *)cw->ctx;
		bpf_probe_read_kernel(&v, 8, (char *)ctx + off);
		return pmt_load_sized((const __u8 *)&v, size, sign);
	}
	v = pmt_ctx_word(cw, w);
	if (size == 8)
		return v | (__u64)pmt_ctx_word(cw, w + 1) << 32;
	v >>= (off % 4) * 8;
	return pmt_load_sized((const __u8 *)&v, size, sign);
}

/* An operand's value, but an expression's (pmt_fetch_num), the record's
 * fields read from rec: inline, as pmt_fetch_base is in every program but
 * a tracepoint's */
static __always_inline __u64 pmt_fetch_base_rec(const struct pmt_operand *e, struct pmt_fctx *c,
						const __u8 *rec)
{
	__u64 off;

	switch (e->src) {
	case PMT_FSRC_FIELD:
		if (!pmt_uses_src(PMT_FSRC_FIELD))
			break;
		off = e->off;
#ifdef PMT_RAW_CTX
		if (e->flags & PMT_FFLAG_CTX)
			return pmt_ctx_field(c->ctx, off, e->size, e->flags & PMT_FFLAG_SIGNED);
#endif
		/* up to the tracepoints' stack keys at PMT_TP_STACK */
		if (!rec || off > PMT_TP_STACK + 8)
			return 0;
		return pmt_load_sized(rec + off, e->size, e->flags & PMT_FFLAG_SIGNED);
	case PMT_FSRC_PID: return pmt_uses_src(PMT_FSRC_PID) ? pmt_pid_tgid(c) >> 32 : 0;
	case PMT_FSRC_TID: return pmt_uses_src(PMT_FSRC_TID) ? (__u32)pmt_pid_tgid(c) : 0;
	case PMT_FSRC_CPU: return pmt_uses_src(PMT_FSRC_CPU) ? bpf_get_smp_processor_id() : 0;
	case PMT_FSRC_UID: return pmt_uses_src(PMT_FSRC_UID) ? (__u32)bpf_get_current_uid_gid() : 0;
	case PMT_FSRC_GID: return pmt_uses_src(PMT_FSRC_GID) ? bpf_get_current_uid_gid() >> 32 : 0;
	case PMT_FSRC_CGROUP:
		return pmt_uses_src(PMT_FSRC_CGROUP) ? bpf_get_current_cgroup_id() : 0;
	case PMT_FSRC_TASK: return pmt_uses_src(PMT_FSRC_TASK) ? bpf_get_current_task() : 0;
	case PMT_FSRC_NSECS: return pmt_uses_src(PMT_FSRC_NSECS) ? bpf_ktime_get_ns() : 0;
	case PMT_FSRC_ELAPSED:
		return pmt_uses_src(PMT_FSRC_ELAPSED) ? bpf_ktime_get_ns() - pmt_elapsed_origin : 0;
	case PMT_FSRC_CPID: return pmt_uses_src(PMT_FSRC_CPID) ? pmt_cpid : 0;
	case PMT_FSRC_PROBE: return pmt_uses_src(PMT_FSRC_PROBE) ? c->probe : 0;
	}
	return 0;
}

#ifdef PMT_RAW_CTX
/*
 * The same, a global function in a tracepoint's program: the verifier
 * checks it once, on its own, where a static one's cases were walked
 * again at every call and every state reaching it (16,000 of the 36,000
 * instructions it walked in opensnoop.bt's program). It is given no
 * pointer to the caller's frame, whose pointers the verifier would then
 * forget: the record is found again in the scratch buffer, where every
 * program builds it (has_rec: there is one), the context where
 * pmt_ctx_fill left it. A thread's ids are read inline, from the
 * caller's cache.
 */
__noinline __u64 pmt_tp_fetch(const struct pmt_operand *e, __u32 probe, __u32 has_rec)
{
	struct pmt_fctx c = {.probe = probe};
	const __u32 zero = 0;
	struct pmt_event *s;

	if (!e)
		return 0;
	if (!has_rec)
		return pmt_fetch_base_rec(e, &c, NULL);
	s = bpf_map_lookup_elem(&pmt_scratch, &zero);
	return pmt_fetch_base_rec(e, &c, s ? s->data : NULL);
}

static __always_inline __u64 pmt_fetch_base(const struct pmt_operand *e, struct pmt_fctx *c)
{
	if (pmt_uses_src(PMT_FSRC_PID) && e->src == PMT_FSRC_PID)
		return pmt_pid_tgid(c) >> 32;
	if (pmt_uses_src(PMT_FSRC_TID) && e->src == PMT_FSRC_TID)
		return (__u32)pmt_pid_tgid(c);
	return pmt_tp_fetch(e, c->probe, c->rec != NULL);
}
#else
#define pmt_fetch_base(e, c) pmt_fetch_base_rec(e, c, (c)->rec)
#endif

#endif
