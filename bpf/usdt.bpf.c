// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT probes' kernel side: one program for every probe, attached by
 * libbpf's bpf_program__attach_usdt (src/probes/usdt_bpf.c), which writes each
 * site's argument places into usdt.bpf.h's maps; its cookie is our probe
 * id. Builds a struct pmt_usdt and hands it to bpf/record.bpf.h (which
 * reads --str's strings, as for every probe).
 */
#include "record.bpf.h"
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

SEC("usdt") int pmt_usdt(struct pt_regs *ctx)
{
	PMT_LEAN_CUT(0);
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
finish:
	pmt_record_finish(cfg, e, sizeof(*u), id, &fc);
	return 0;
}
