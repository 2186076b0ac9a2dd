// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The PMU provider's kernel side: runs on every counter overflow of the
 * perf events src/probes/perf_event_bpf.c opened (one per CPU, or per task). It builds
 * a struct pmt_sample, and bpf/record.bpf.h filters, streams (with its
 * stack frames) or aggregates it (with stack ids as keys).
 */
#include "record.bpf.h"

/* A perf_event program's return value decides whether perf writes its own
 * sample to the event's ring: ours have no ring, so always 0. */
SEC("perf_event")
int pmt_pe(struct bpf_perf_event_data *ctx)
{
	PMT_LEAN_CUT(0);
	__u32 id = pmt_only_probe >= 0 ? (__u32)pmt_only_probe : (__u32)bpf_get_attach_cookie(ctx);
	struct pmt_perf_value cnt;
	struct pmt_fctx fc = {.ctx = ctx};
	const struct pmt_probe_cfg *cfg;
	struct pmt_sample *smp;
	struct pmt_event *e = pmt_record_begin(id, &fc, &cfg);

	if (!e)
		return 0;
	smp = (struct pmt_sample *)e->data;
	smp->addr = ctx->addr;
	smp->period = ctx->sample_period;
#if defined(__TARGET_ARCH_arm64)
	/* user_pt_regs: EL0 in pstate's mode bits is user mode */
	smp->ip = ctx->regs.pc;
	smp->mode = (ctx->regs.pstate & 0xf) == 0 ? PMT_MODE_USER : PMT_MODE_KERNEL;
#else
	smp->ip = ctx->regs.ip;
	/* the ctx is read in whole words: cs as the u64 it sits in (the
	 * pt_regs layout is user ABI) */
	smp->mode =
		(*(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs)) & 3) == 3
			? PMT_MODE_USER
			: PMT_MODE_KERNEL;
#endif
	/* the counter costs a helper call: only when something shows it */
	smp->value = 0;
	if (cfg->want_value && !bpf_perf_prog_read_value(ctx, (void *)&cnt, sizeof(cnt)))
		smp->value = cnt.counter;
	pmt_record_finish(cfg, e, sizeof(*smp), id, &fc);
	return 0;
}
