// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Function probes' kernel side. Each program builds a struct pmt_call (the
 * argument slots and the return value) and hands it to bpf/record.bpf.h.
 *
 *   pmt_kp      kprobe, kretprobe, uprobe and uretprobe perf-event links:
 *               one program type, the registers as context
 *   pmt_kpm     the same for kprobe.multi links (many functions, one link)
 *   pmt_fe<N>   fentry/fexit placeholders: the loader points slot N at its
 *   pmt_fx<N>   function before load (bpf_program__set_attach_target), as
 *               libbpf-tools' funclatency does; pmt_fn_probe[] has their probes
 *   pmt_rt<N>   tp_btf placeholders (typed raw tracepoints), retargeted the
 *               same way; pmt_rt_probe[] has their probes, pmt_rt_nargs[]
 *               how many arguments each tracepoint passes
 */
#include "record.bpf.h"
#include <bpf/bpf_tracing.h>

/* the probe id of fentry slot N at [N], of fexit slot N at [PMT_FN_SLOTS + N] */
const volatile __u32 pmt_fn_probe[2 * PMT_FN_SLOTS] __weak = {};
/* tp_btf slot N's probe id, and its tracepoint's arguments (BTF's btf_trace_NAME
 * less the first void *) */
const volatile __u32 pmt_rt_probe[PMT_RT_SLOTS] __weak = {};
const volatile __u32 pmt_rt_nargs[PMT_RT_SLOTS] __weak = {};

/* Where a call's argument slots come from */
enum pmt_call_from {
	PMT_FROM_REGS,	 /* the registers of the calling convention */
	PMT_FROM_FUNC,	 /* fentry/fexit's helpers */
	PMT_FROM_TP_BTF, /* the array of a typed tracepoint's arguments */
};

static __always_inline void pmt_call_fill(struct pmt_call *c, void *ctx, enum pmt_call_from from,
					  bool ret, __u32 n)
{
	struct pt_regs *regs = ctx;
	__u32 i;

	switch (from) {
	case PMT_FROM_REGS:
		/* user ABI: pt_regs is the context itself; at a return only
		 * ret means anything */
		c->arg[0] = PT_REGS_PARM1(regs);
		c->arg[1] = PT_REGS_PARM2(regs);
		c->arg[2] = PT_REGS_PARM3(regs);
		c->arg[3] = PT_REGS_PARM4(regs);
		c->arg[4] = PT_REGS_PARM5(regs);
#if defined(__TARGET_ARCH_x86)
		c->arg[5] = regs->r9;
#elif defined(__TARGET_ARCH_arm64)
		c->arg[5] = ((const struct user_pt_regs *)regs)->regs[5];
#else
		c->arg[5] = 0;
#endif
		c->ret = PT_REGS_RC(regs);
		break;
	case PMT_FROM_FUNC:
		for (i = 0; i < PMT_CALL_SLOTS; i++)
			if (bpf_get_func_arg(ctx, i, &c->arg[i]))
				c->arg[i] = 0;
		c->ret = 0;
		if (ret)
			bpf_get_func_ret(ctx, &c->ret);
		break;
	case PMT_FROM_TP_BTF:
		/* copied, not loaded: a load past the last argument would be
		 * refused, and a direct load of a pointer argument is a typed
		 * pointer the record has no use for (chains read through it
		 * with offsets from BTF) */
		for (i = 0; i < PMT_CALL_SLOTS; i++)
			c->arg[i] = 0;
		c->ret = 0;
		if (n > PMT_CALL_SLOTS)
			n = PMT_CALL_SLOTS;
		if (n && bpf_probe_read_kernel(c->arg, n * sizeof(__u64), ctx))
			c->arg[0] = 0;
		break;
	}
}

/* The one record of every function probe: its slots filled only when
 * the probe keeps or tests them. */
static __always_inline int pmt_call_record(__u32 id, struct pmt_fctx *fc, enum pmt_call_from from,
					   bool ret, __u32 nargs)
{
	const struct pmt_probe_cfg *cfg;
	struct pmt_event *e = pmt_record_begin(id, fc, &cfg);
	struct pmt_call *c;

	if (!e)
		return 0;
	c = (struct pmt_call *)e->data;
	if (pmt_record_needed(cfg))
		pmt_call_fill(c, fc->ctx, from, ret, nargs);
	pmt_record_finish(cfg, e, sizeof(*c), id, fc);
	return 0;
}

static __always_inline int pmt_regs_body(struct pt_regs *regs)
{
	__u32 id = pmt_only_probe >= 0 ? (__u32)pmt_only_probe : (__u32)bpf_get_attach_cookie(regs);
	struct pmt_fctx fc = {.ctx = regs};

	return pmt_call_record(id, &fc, PMT_FROM_REGS, false, 0);
}

SEC("kprobe") int pmt_kp(struct pt_regs *regs)
{
	PMT_LEAN_CUT(0);
	return pmt_regs_body(regs);
}
SEC("kprobe.multi") int pmt_kpm(struct pt_regs *regs)
{
	PMT_LEAN_CUT(0);
	return pmt_regs_body(regs);
}

/* The kernel stacks of BPF programs a trampoline or bpf_trace_run<N>
 * calls start with frames of ours: arm64's with one more than x86-64's
 * (Debian's 6.1 and 6.12 kernels: a frame for the program itself). */
#if defined(__TARGET_ARCH_arm64)
#define PMT_OWN_FRAMES 4
#else
#define PMT_OWN_FRAMES 3
#endif

/* fentry/fexit: the slots through the helpers the verifier inlines (a
 * direct ctx read past the function's own arguments would be refused). */
static __noinline int pmt_fn_body(__u64 *ctx, __u32 slot, bool ret)
{
	PMT_LEAN_CUT(0);
	__u32 id = pmt_fn_probe[(slot + (ret ? PMT_FN_SLOTS : 0)) & (2 * PMT_FN_SLOTS - 1)];
	/* its kernel stack from the function, as a kprobe's: past this
	 * function, pmt_fe<N>/pmt_fx<N> and the trampoline */
	struct pmt_fctx fc = {.ctx = ctx, .kskip = PMT_OWN_FRAMES};

	return pmt_call_record(id, &fc, PMT_FROM_FUNC, ret, 0);
}

#define PMT_FN_PAIR(n)                             \
	SEC("fentry") int pmt_fe##n(__u64 *ctx)    \
	{                                          \
		return pmt_fn_body(ctx, n, false); \
	}                                          \
	SEC("fexit") int pmt_fx##n(__u64 *ctx)     \
	{                                          \
		return pmt_fn_body(ctx, n, true);  \
	}

PMT_FN_PAIR(0)
PMT_FN_PAIR(1)
PMT_FN_PAIR(2)
PMT_FN_PAIR(3)
PMT_FN_PAIR(4)
PMT_FN_PAIR(5)
PMT_FN_PAIR(6)
PMT_FN_PAIR(7)

/* tp_btf: ctx is the array of the tracepoint's arguments, as many as it
 * passes. Its kernel stack starts from the tracepoint's __traceiter_NAME,
 * as a tracepoint's: past this function, pmt_rt<N> and bpf_trace_run<N>,
 * and on arm64 __bpf_trace_<class> too (x86-64's tail call leaves it
 * out). */
#if defined(__TARGET_ARCH_arm64)
#define PMT_RT_KSKIP (PMT_OWN_FRAMES + 1)
#else
#define PMT_RT_KSKIP PMT_OWN_FRAMES
#endif
static __noinline int pmt_rt_body(__u64 *ctx, __u32 slot)
{
	PMT_LEAN_CUT(0);
	__u32 id = pmt_rt_probe[slot & (PMT_RT_SLOTS - 1)];
	struct pmt_fctx fc = {.ctx = ctx, .kskip = PMT_RT_KSKIP};

	return pmt_call_record(id, &fc, PMT_FROM_TP_BTF, false,
			       pmt_rt_nargs[slot & (PMT_RT_SLOTS - 1)]);
}

#define PMT_RT_SLOT(n)                          \
	SEC("tp_btf") int pmt_rt##n(__u64 *ctx) \
	{                                       \
		return pmt_rt_body(ctx, n);     \
	}

PMT_RT_SLOT(0)
PMT_RT_SLOT(1)
PMT_RT_SLOT(2)
PMT_RT_SLOT(3)
PMT_RT_SLOT(4)
PMT_RT_SLOT(5)
PMT_RT_SLOT(6)
PMT_RT_SLOT(7)
