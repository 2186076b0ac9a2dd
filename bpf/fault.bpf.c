// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Strings in pages the process has not touched yet. A probe's own program
 * runs where a page fault cannot be served, so its bpf_probe_read_user_str
 * of such a string fails (a <fault> key, counted). These sleepable
 * programs (uprobes only, kernel 5.19+) run just before it at the same
 * site and copy the first bytes of each string argument it reads with
 * bpf_copy_from_user, which faults the pages in; the probe's read then
 * finds them. They read nothing else, write no map and send nothing:
 * sleepable programs may not use the perf buffer, and need not.
 *
 * The cookie is the mask of argument slots (bit N: argN) whose strings
 * the probe reads (src/probes/fault_bpf.c). The probe's program runs second
 * because the kernel calls a uprobe's consumers newest first, and these
 * are attached after it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "abi.h"
#include "lean.bpf.h"

static __always_inline void pmt_fault_in(__u64 p)
{
	char buf[PMT_STR_MAX];

	/* a copy that faults past the string's mapping leaves the pages
	 * before it in; its error is no one's concern here */
	if (p)
		bpf_copy_from_user(buf, sizeof(buf), (const void *)p);
}

SEC("uprobe.s") int pmt_fault_up(struct pt_regs *ctx)
{
	PMT_LEAN_CUT(0);
	__u64 mask = bpf_get_attach_cookie(ctx);

	if (mask & 1)
		pmt_fault_in(PT_REGS_PARM1(ctx));
	if (mask & 2)
		pmt_fault_in(PT_REGS_PARM2(ctx));
	if (mask & 4)
		pmt_fault_in(PT_REGS_PARM3(ctx));
	if (mask & 8)
		pmt_fault_in(PT_REGS_PARM4(ctx));
	if (mask & 16)
		pmt_fault_in(PT_REGS_PARM5(ctx));
#if defined(__TARGET_ARCH_x86)
	if (mask & 32)
		pmt_fault_in(ctx->r9);
#elif defined(__TARGET_ARCH_arm64)
	if (mask & 32)
		pmt_fault_in(((const struct user_pt_regs *)ctx)->regs[5]);
#endif
	return 0;
}

/* made sleepable by the loader (libbpf 1.1 has no "usdt.s") */
SEC("usdt") int pmt_fault_usdt(struct pt_regs *ctx)
{
	PMT_LEAN_CUT(0);
	__u64 mask = bpf_usdt_cookie(ctx);
	long v;
	int i;

	for (i = 0; i < PMT_CALL_SLOTS; i++)
		if ((mask & (1ULL << i)) && !bpf_usdt_arg(ctx, (__u64)i, &v))
			pmt_fault_in((__u64)v);
	return 0;
}
