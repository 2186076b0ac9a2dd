// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --unwind dwarf's process tracking: text mappings learned where they are
 * made, in the process's own context, instead of one per sample (see
 * pmt_unwind_learn). Loaded with the unwinder.
 *
 * exec: the program's text and the dynamic loader's (where the new image
 * starts); mmap: every library the loader maps after. The syscall's own
 * tracepoint, not the raw sys_exit one, which would run for every system
 * call.
 */
#include "unwind.bpf.h"

/* A process traced (-p, -- CMD, or all), pmtrace not stopping? */
static __always_inline bool pmt_unwind_wanted(void *ctx)
{
	struct pmt_fctx fc = {.ctx = ctx};

	return !pmt_stop && pmt_target_ok(&fc);
}

/* The current task's text mapping at addr. Global: checked once, not
 * once per call (exec calls it twice). */
__noinline int pmt_unwind_learn_here(__u64 addr)
{
	PMT_LEAN_CUT(0);
	pmt_unwind_learn(bpf_get_current_task_btf(), addr);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int pmt_unwind_mmap(struct trace_event_raw_sys_exit *ctx)
{
	PMT_LEAN_CUT(0);
	long ret = ctx->ret;

	/* an address, not -errno */
	if ((unsigned long)ret >= (unsigned long)-4095L || !pmt_unwind_wanted(ctx))
		return 0;
	pmt_unwind_learn_here((__u64)ret);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int pmt_unwind_exec(void *ctx)
{
	PMT_LEAN_CUT(0);
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	__u64 text, entry;

	if (!pmt_unwind_wanted(ctx))
		return 0;
	/* the program's text; the loader's, where execution starts (or the
	 * program's again, when static) */
	text = BPF_CORE_READ(task, mm, start_code);
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	entry = regs ? PT_REGS_IP_CORE(regs) : 0;
	if (text)
		pmt_unwind_learn_here(text);
	if (entry && (entry < text || entry >= BPF_CORE_READ(task, mm, end_code)))
		pmt_unwind_learn_here(entry);
	return 0;
}
