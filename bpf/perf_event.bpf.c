// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The PMU provider's kernel side: runs on every counter overflow of the
 * perf events src/perf_event.c opened (one per CPU, or per task). It builds
 * a struct pmt_sample, runs the filter on it, and then streams it (with its
 * stack frames) or aggregates it (with stack ids as keys).
 */
#include "aggregate.bpf.h"

/* --stack with an aggregation: stacks are keys, stored once each */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PMT_STACK_DEPTH * sizeof(__u64));
} pmt_stacks SEC(".maps") __weak;

#define PMT_STACK_BYTES (PMT_STACK_DEPTH * sizeof(__u64))

/* A perf_event program's return value decides whether perf writes its own
 * sample to the event's ring: ours have no ring, so always 0. */
SEC("perf_event")
int pmt_pe(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id = pmt_only_probe >= 0 ? (__u32)pmt_only_probe : (__u32)bpf_get_attach_cookie(ctx);
	struct bpf_perf_event_value cnt;
	const struct pmt_probe_cfg *cfg;
	struct pmt_fctx fc = { .ctx = ctx, .pid_tgid = pid_tgid };
	struct pmt_sample *smp;
	struct pmt_event *e;
	__u32 zero = 0;
	__u64 size = sizeof(*smp);
	long kb = 0, ub = 0;

	if (pmt_stop || !pmt_target_ok(pid_tgid >> 32) || !pmt_cpu_ok())
		return 0;
	cfg = bpf_map_lookup_elem(&pmt_probes, &id);
	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	if (!cfg || !e)
		return 0;
	smp = (struct pmt_sample *)e->data;
	smp->ip = ctx->regs.ip;
	smp->addr = ctx->addr;
	smp->period = ctx->sample_period;
	/* the ctx is read in whole words: cs as the u64 it sits in (the
	 * pt_regs layout is user ABI) */
	smp->mode = (*(__u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs)) & 3) == 3 ?
		    PMT_MODE_USER : PMT_MODE_KERNEL;
	/* the counter costs a helper call: only when something shows it */
	smp->value = 0;
	if (cfg->want_value && !bpf_perf_prog_read_value(ctx, &cnt, sizeof(cnt)))
		smp->value = cnt.counter;
	smp->kstack = -1;
	smp->ustack = -1;
	smp->nkernel = 0;
	smp->nuser = 0;
	fc.rec = e->data;
	if (pmt_use_filter && cfg->filter.n && !pmt_filter_run(&cfg->filter, &fc)) {
		__u64 *n = bpf_map_lookup_elem(&pmt_filtered, &id);

		if (n)
			(*n)++;
		return 0;
	}
	if (pmt_use_agg && cfg->action != PMT_ACT_STREAM) {
		if (cfg->stack & PMT_STACK_KERNEL)
			smp->kstack = bpf_get_stackid(ctx, &pmt_stacks, 0);
		if (cfg->stack & PMT_STACK_USER)
			smp->ustack = (pid_tgid & ~0xffffffffULL) |
				      (__u32)bpf_get_stackid(ctx, &pmt_stacks, BPF_F_USER_STACK);
		pmt_aggregate(cfg, &fc, id);
		return 0;
	}
	if (cfg->stack & PMT_STACK_KERNEL) {
		kb = bpf_get_stack(ctx, smp->frames, PMT_STACK_BYTES, 0);
		if (kb < 0 || kb > (long)PMT_STACK_BYTES)
			kb = 0;
		smp->nkernel = (__u16)((__u64)kb / 8);
	}
	if (cfg->stack & PMT_STACK_USER) {
		/* offset kept in a 64-bit masked form the verifier can bound */
		__u64 off = (__u64)kb & (PMT_STACK_BYTES | (PMT_STACK_BYTES - 1));

		if (off <= PMT_STACK_BYTES) {
			ub = bpf_get_stack(ctx, (__u8 *)smp->frames + off, PMT_STACK_BYTES,
					   BPF_F_USER_STACK);
			if (ub < 0 || ub > (long)PMT_STACK_BYTES)
				ub = 0;
			smp->nuser = (__u16)((__u64)ub / 8);
		}
	}
	size += (__u64)(smp->nkernel + smp->nuser) * 8;
	pmt_emit(ctx, e, pid_tgid, id, size);
	return 0;
}

