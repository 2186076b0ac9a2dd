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

#ifdef PMT_RAW_CTX
/* 4-byte words of the record every tracepoint of the session has in full
 * (set at load): the kernel refuses to attach a program that reads a
 * context further than the tracepoint's record, and the verifier sees
 * only the loads below this bound. */
const volatile __u32 pmt_ctx_words __weak = 0;
/* ... and the words the session's operands load (bit w, set at load):
 * the verifier then follows one load a field, not one a word */
const volatile __u32 pmt_ctx_used __weak = ~0u;

/* asm: clang would otherwise merge the loads into one through a computed
 * pointer, which the verifier refuses for a context */
#define PMT_CTX_LOAD(ctx, off)                                                       \
	({                                                                           \
		__u32 __v;                                                           \
		asm volatile("%0 = *(u32 *)(%1 + " #off ")" : "=r"(__v) : "r"(ctx)); \
		__v;                                                                 \
	})

#define PMT_CTX_NONE (~0ULL) /* not loadable: no u32 reads as this */

/* Each load guarded by the rodata first, then by its constant word: the
 * verifier drops the words the session does not load without a branch on
 * w (a switch would have it follow every word to the fallback below). */
#define PMT_CTX_CASE(w, off)                                            \
	if ((pmt_ctx_used & (1u << w)) && w < pmt_ctx_words && wv == w) \
	return PMT_CTX_LOAD(ctx, off)

/*
 * 4-byte word wv of a tracepoint's raw record, straight from the context:
 * a load at a constant offset (the verifier takes no other kind of
 * context access), where a copy would cost a bpf_probe_read_kernel call.
 * Only the tracepoint program defines PMT_RAW_CTX: other programs'
 * contexts are registers or function arguments. Words 0 and 1 are the
 * kernel's (common fields, not readable).
 */
static __always_inline __u64 pmt_ctx_u32(void *ctx, __u32 wv)
{
	PMT_CTX_CASE(2, 8);
	PMT_CTX_CASE(3, 12);
	PMT_CTX_CASE(4, 16);
	PMT_CTX_CASE(5, 20);
	PMT_CTX_CASE(6, 24);
	PMT_CTX_CASE(7, 28);
	PMT_CTX_CASE(8, 32);
	PMT_CTX_CASE(9, 36);
	PMT_CTX_CASE(10, 40);
	PMT_CTX_CASE(11, 44);
	PMT_CTX_CASE(12, 48);
	PMT_CTX_CASE(13, 52);
	PMT_CTX_CASE(14, 56);
	PMT_CTX_CASE(15, 60);
	PMT_CTX_CASE(16, 64);
	PMT_CTX_CASE(17, 68);
	PMT_CTX_CASE(18, 72);
	PMT_CTX_CASE(19, 76);
	PMT_CTX_CASE(20, 80);
	PMT_CTX_CASE(21, 84);
	PMT_CTX_CASE(22, 88);
	PMT_CTX_CASE(23, 92);
	PMT_CTX_CASE(24, 96);
	PMT_CTX_CASE(25, 100);
	PMT_CTX_CASE(26, 104);
	PMT_CTX_CASE(27, 108);
	PMT_CTX_CASE(28, 112);
	PMT_CTX_CASE(29, 116);
	PMT_CTX_CASE(30, 120);
	PMT_CTX_CASE(31, 124);
	return PMT_CTX_NONE;
}
_Static_assert(PMT_CTX_DIRECT == 32 * 4, "pmt_ctx_u32 covers PMT_CTX_DIRECT bytes");

/* A PMT_FFLAG_CTX field (naturally aligned, little-endian). A function
 * of its own: inline, its ladder of loads was 60% of a tracepoint
 * program, and each load the session does not use is a run of dead code
 * the kernel removes one at a time, moving the rest of the program (most
 * of the time a program took to load). */
static __noinline __u64 pmt_ctx_field(void *ctx, __u64 off, __u8 size, bool sign)
{
	__u32 w = (off / 4) & 31;
	__u64 v = pmt_ctx_u32(ctx, w), hi = 0;

	if (v == PMT_CTX_NONE ||
	    (size == 8 && (hi = pmt_ctx_u32(ctx, (w + 1) & 31)) == PMT_CTX_NONE)) {
		/* past a shorter record of the session's */
		v = 0;
		bpf_probe_read_kernel(&v, 8, (char *)ctx + off);
		return pmt_load_sized((const __u8 *)&v, size, sign);
	}
	if (size == 8)
		return v | hi << 32;
	v >>= (off % 4) * 8;
	return pmt_load_sized((const __u8 *)&v, size, sign);
}
#endif

/* An operand's value, but an expression's (pmt_fetch_num) */
static __always_inline __u64 pmt_fetch_base(const struct pmt_operand *e, struct pmt_fctx *c)
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
		if (!c->rec || off > PMT_TP_STACK + 8)
			return 0;
		return pmt_load_sized(c->rec + off, e->size, e->flags & PMT_FFLAG_SIGNED);
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

#endif
