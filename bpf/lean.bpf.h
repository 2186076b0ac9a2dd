/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMTRACE_LEAN_BPF_H
#define PMTRACE_LEAN_BPF_H

/*
 * The lean object (built with PMT_LEAN=1 beside the whole one): the same
 * maps, settings and programs, but only a plain tracepoint stream's
 * programs (pmt_tp_lean and the targets' own) keep their bodies; the
 * others return at once, so the code they alone call is not in it. The
 * loader opens it for a session that loads nothing else: libbpf then
 * reads, relocates and loads a tenth of the code (src/run/session_bpf.c).
 * PMT_LEAN_CUT(ret) opens every other program.
 */
#ifndef PMT_LEAN
#define PMT_LEAN 0
#endif
#define PMT_LEAN_CUT(ret)           \
	do {                        \
		if (PMT_LEAN)       \
			return ret; \
	} while (0)

#endif
