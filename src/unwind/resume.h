/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rest of a streamed user stack the kernel stopped at a file whose
 * unwind tables were not read yet (bpf/unwind.bpf.h, pmt_unwind_defer):
 * the kernel's walk again, rule for rule, from the registers it left and
 * on the copy of the stack it sent (struct pmt_ustack_dump), once the
 * tables are there. What it reads beyond the copy ends the stack.
 */
#ifndef PMT_RESUME_H
#define PMT_RESUME_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"

/* The row of the file mapped at pc that covers the instruction at pc -
 * back (1 for a return address: the call before it): 1 and *row, 0 when
 * a file is mapped there but no row covers it (frame pointers then), -1
 * when no file is mapped at pc. *eval: that instruction lies in the eval
 * loop of a CPython interpreter the kernel knows (pmt_py_files), whose
 * Python frames come before its own. */
typedef int (*pmt_resume_row_fn)(void *ctx, uint64_t pc, unsigned back, struct pmt_cfi_row *row,
				 bool *eval);

/* Where a finished stack ended: at its outermost frame, or short of it
 * and why. */
enum pmt_resume_end {
	PMT_RESUME_WHOLE,   /* the outermost frame */
	PMT_RESUME_DEPTH,   /* the frames a stack keeps (max) */
	PMT_RESUME_BEYOND,  /* a read past a full copy: the stack is deeper */
	PMT_RESUME_NO_TEXT, /* a frame-pointer caller in no text mapping */
	/* a read past a copy that held all the kernel could read (less than
	 * PMT_DUMP_BYTES), or a rule that led nowhere (a CFA not above the
	 * last): as the kernel's walk would have ended */
	PMT_RESUME_UNREAD,
	PMT_RESUME__MAX,
};

struct pmt_resume {
	uint32_t n; /* frames written */
	enum pmt_resume_end end;
	/* an eval loop frame met with no Python frame left for it: the
	 * kernel read none (it did not know the interpreter yet) */
	bool py_short;
};

/* Up to max frames into out (innermost first, a caller's at its call
 * instruction, as the kernel writes them); stack: d->size bytes from
 * d->sp; py: the d->npy Python frames the kernel read (each eval loop
 * frame is preceded by those of its call, up to one with PMT_PY_ENTRY,
 * as the kernel puts them). */
struct pmt_resume pmt_resume(const struct pmt_ustack_dump *d, const void *stack, const uint64_t *py,
			     pmt_resume_row_fn row, void *ctx, uint64_t *out, uint32_t max);

#endif
