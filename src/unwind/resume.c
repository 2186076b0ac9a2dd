// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The kernel's walk (bpf/unwind.bpf.h, pmt_unwind_step) over a copy of
 * the stack: the same rules, so a stack finished here is the one the
 * kernel would have written had it had the tables. Python frames are
 * not read here but by the kernel, from the live process at the event:
 * they are put before their eval loop frames as the kernel puts them.
 */
#include <string.h>
#include "unwind/resume.h"

struct walk {
	const struct pmt_ustack_dump *d;
	const unsigned char *stack;
	bool beyond;
};

/* The word at addr of the copy; false (and beyond) outside it. */
static bool word(struct walk *w, uint64_t addr, uint64_t *v)
{
	if (addr < w->d->sp || addr - w->d->sp > w->d->size || w->d->size - (addr - w->d->sp) < 8) {
		w->beyond = true;
		return false;
	}
	memcpy(v, w->stack + (addr - w->d->sp), 8);
	return true;
}

/* A pc found by frame pointers names a frame only where user text can
 * be (as the kernel checks): else the "frame pointer" was any register. */
static bool user_text(uint64_t pc)
{
	return pc >= 0x1000 && pc < PMT_USER_END;
}

/* The caller's return address by the row, into ra, and bx: x86-64's rbx
 * where the row saved it; arm64's x30, where the return address is
 * when the row has not saved it (known in the first frame alone).
 * False where the walk stops. */
static bool return_address(struct walk *w, const struct pmt_cfi_row *row, uint64_t cfa,
			   uint64_t *bx, uint64_t *ra)
{
#if defined(__aarch64__)
	if (row->bx == PMT_FP_SAVED) {
		if (!word(w, cfa + (int64_t)row->bx_off, ra))
			return false;
	} else {
		*ra = *bx;
	}
	*bx = 0;
	*ra &= PMT_USER_END - 1; /* a signed address's authentication code */
	return *ra != 0;
#else
	if (!word(w, cfa - 8, ra))
		return false;
	return row->bx != PMT_FP_SAVED || word(w, cfa + (int64_t)row->bx_off, bx);
#endif
}

/* An eval loop call's Python frames, up to its entry frame, from *k. */
static void python_frames(const struct pmt_ustack_dump *d, const uint64_t *py, uint32_t *k,
			  struct pmt_resume *r, uint64_t *out, uint32_t max)
{
	uint64_t f;

	while (*k < d->npy && r->n < max) {
		f = py[(*k)++];
		out[r->n++] = f & ~PMT_PY_ENTRY;
		if (f & PMT_PY_ENTRY)
			break;
	}
}

/* The CFA by the row's rule: false where the walk stops. after_fp: this
 * frame was found by frame pointers (sp a guess). */
static bool frame_cfa(const struct pmt_cfi_row *row, uint64_t pc, uint64_t sp, uint64_t fp,
		      uint64_t bx, bool after_fp, uint64_t *cfa)
{
	switch (row->cfa) {
	case PMT_CFA_SP:
#if defined(__aarch64__)
		/* past a frame found by its frame record, sp is not known:
		 * the CFA from x29, where the function saved it (as the
		 * kernel's pmt_unwind_cfi) */
		if (after_fp && row->fp == PMT_FP_SAVED) {
			*cfa = fp - (int64_t)row->fp_off;
			return true;
		}
#else
		(void)after_fp;
#endif
		*cfa = sp + (int64_t)row->cfa_off;
		return true;
	case PMT_CFA_FP: *cfa = fp + (int64_t)row->cfa_off; return true;
	case PMT_CFA_PLT: *cfa = sp + ((pc & 15) >= (uint64_t)row->cfa_off ? 16 : 8); return true;
	case PMT_CFA_BX: *cfa = bx + (int64_t)row->cfa_off; return bx != 0;
	default: return false;
	}
}

struct pmt_resume pmt_resume(const struct pmt_ustack_dump *d, const void *stack, const uint64_t *py,
			     pmt_resume_row_fn row_of, void *ctx, uint64_t *out, uint32_t max)
{
	struct walk w = {d, stack, false};
	struct pmt_resume r = {.end = PMT_RESUME_UNREAD};
	uint64_t pc = d->pc, sp = d->sp, fp = d->fp, bx = d->bx, cfa, ra, v[2];
	bool caller = d->caller, by_fp = false, after_fp, eval;
	struct pmt_cfi_row row;
	uint32_t k = 0;
	int found;

	while (r.n < max) {
		if (!pc) { /* the caller of the outermost frame */
			r.end = PMT_RESUME_WHOLE;
			break;
		}
		eval = false;
		found = row_of(ctx, pc, caller, &row, &eval);
		if (by_fp && (!user_text(pc) || found < 0)) {
			r.end = PMT_RESUME_NO_TEXT;
			break;
		}
		if (eval) {
			r.py_short |= k >= d->npy;
			python_frames(d, py, &k, &r, out, max);
		}
		if (r.n >= max)
			break;
		out[r.n++] = caller ? pc - 1 : pc;
		caller = true;
		after_fp = by_fp;
		by_fp = found <= 0 || row.cfa == PMT_CFA_NONE;
		if (by_fp) {
			if (!fp) { /* _start clears the frame pointer */
				r.end = PMT_RESUME_WHOLE;
				break;
			}
			if (!word(&w, fp, &v[0]) || !word(&w, fp + 8, &v[1]))
				break;
			sp = fp + 16;
			fp = v[0];
			pc = v[1];
			bx = 0; /* not known past a frame-pointer step */
			continue;
		}
		if (row.cfa == PMT_CFA_END) {
			r.end = PMT_RESUME_WHOLE; /* the outermost frame */
			break;
		}
		if (!frame_cfa(&row, pc, sp, fp, bx, after_fp, &cfa))
			break;
		if (!return_address(&w, &row, cfa, &bx, &ra))
			break;
		if (row.fp == PMT_FP_SAVED && !word(&w, cfa + (int64_t)row.fp_off, &fp))
			break;
#if defined(__aarch64__)
		if (cfa < sp) /* a leaf's CFA may be its sp: the first frame */
#else
		if (cfa <= sp)
#endif
			break; /* the stack grows down: no loops */
		sp = cfa;
		pc = ra;
	}
	/* a copy shorter than the dump's room holds the stack up to its
	 * top, or up to memory the kernel could not read: no deeper stack
	 * lies past it */
	if (r.end == PMT_RESUME_WHOLE || r.end == PMT_RESUME_NO_TEXT)
		return r;
	if (w.beyond)
		r.end = d->size < PMT_DUMP_BYTES ? PMT_RESUME_UNREAD : PMT_RESUME_BEYOND;
	else if (r.n >= max)
		r.end = PMT_RESUME_DEPTH;
	return r;
}
