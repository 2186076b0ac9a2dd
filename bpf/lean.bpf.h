/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMTRACE_LEAN_BPF_H
#define PMTRACE_LEAN_BPF_H

/*
 * The lean objects, built beside the whole one from the same sources:
 * the same maps, settings and programs, but only some programs keep their
 * bodies; the others return at once, so the code only they call is not in
 * it. PMT_LEAN=1, the stream object: a plain tracepoint stream's programs
 * (pmt_tp_lean and the targets' own). PMT_LEAN=2, the flat object: those
 * and the tracepoint programs that aggregate without stacks (pmt_tp_flat,
 * pmt_tp_xgen, pmt_tp_xback). The loader opens the smallest that has all
 * the programs a session loads: libbpf then reads, relocates and loads a
 * fraction of the code (src/run/session_bpf.c). PMT_LEAN_CUT(ret) opens
 * every program cut in both, PMT_FLAT_CUT(ret) those cut in the stream
 * object alone.
 */
#ifndef PMT_LEAN
#define PMT_LEAN 0
#endif
#define PMT_LEAN_CUT(ret)           \
	do {                        \
		if (PMT_LEAN)       \
			return ret; \
	} while (0)
#define PMT_FLAT_CUT(ret)           \
	do {                        \
		if (PMT_LEAN == 1)  \
			return ret; \
	} while (0)

#endif
