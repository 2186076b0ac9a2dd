/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_ABI_XGEN_H
#define PMT_ABI_XGEN_H

/*
 * Generated programs (src/filter/xgen.c): a tracepoint probe's expression
 * programs, its aggregation's (agg.xprog) and its statements' (sprog),
 * translated by user space into a BPF program of their own, loaded beside
 * the skeleton's, instead of being stepped through by the machine
 * (bpf/expr.bpf.c), which is what bpftrace's LLVM does for it and what
 * ply does by hand. The tracepoint's program (pmt_tp_xgen) checks the
 * target and the filter and tail-calls the probe's entry of
 * pmt_xgen_tp; the generated program runs the programs, keeps the
 * aggregation's values in pmt_xmem's slots and tail-calls the array's
 * last entry (the session's probes' number), pmt_tp_xback, which does the
 * aggregation's update alone. A probe with statements only counts its
 * hit and ends there. A program the kernel refuses leaves its probe to
 * the machine (cfg->xgen 0), as a failed tail call into it does.
 */
#endif
