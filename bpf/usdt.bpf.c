// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT probes' kernel side: one program for every probe, attached by
 * libbpf's bpf_program__attach_usdt (src/probes/usdt.c), which writes each
 * site's argument places into usdt.bpf.h's maps; its cookie is our probe
 * id. Builds a struct pmt_usdt and hands it to bpf/record.bpf.h.
 */
#include "record.bpf.h"
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

/* The strings --str prints: slot i holds the user string argument
 * cfg->str_arg[i] - 1 points at (empty when it cannot be read: counted) */
static __always_inline void pmt_usdt_strs(const struct pmt_probe_cfg *cfg, struct pmt_usdt *u)
{
	__u32 i;

	for (i = 0; i < PMT_USDT_STRS; i++) {
		/* 64-bit and checked after the subtraction, in a register:
		 * 6.1's verifier loses the bound of a 32-bit a - 1 */
		__u64 k = (__u64)cfg->str_arg[i] - 1;

		asm volatile("" : "+r"(k));
		u->str[i][0] = '\0';
		if (k >= PMT_CALL_SLOTS)
			continue;
		if (bpf_probe_read_user_str(u->str[i], PMT_USDT_STR_LEN, (const void *)u->arg[k]) <
		    0) {
			u->str[i][0] = '\0';
			pmt_stat_inc(PMT_STAT_STR_FAULT);
		}
	}
}

SEC("usdt") int pmt_usdt(struct pt_regs *ctx)
{
	__u32 id = pmt_only_probe >= 0 ? (__u32)pmt_only_probe : (__u32)bpf_usdt_cookie(ctx);
	struct pmt_fctx fc = {.ctx = ctx};
	const struct pmt_probe_cfg *cfg;
	struct pmt_event *e = pmt_record_begin(id, &fc, &cfg);
	struct pmt_usdt *u;
	int i, n;

	if (!e)
		return 0;
	u = (struct pmt_usdt *)e->data;
	if (!pmt_record_needed(cfg))
		goto finish;
	n = bpf_usdt_arg_cnt(ctx);
	for (i = 0; i < PMT_CALL_SLOTS; i++) {
		long v = 0;

		if (i < n && bpf_usdt_arg(ctx, (__u64)i, &v))
			v = 0;
		u->arg[i] = (__u64)v;
	}
	pmt_usdt_strs(cfg, u);
finish:
	pmt_record_finish(cfg, e, sizeof(*u), id, &fc);
	return 0;
}
