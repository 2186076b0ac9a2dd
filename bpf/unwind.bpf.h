/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * User stacks from DWARF CFI, unwound in the kernel (--unwind dwarf).
 *
 * For each frame: the VMA holding pc (bpf_find_vma: its file's inode and
 * the file offset of pc), the file's rows (pmt_cfi_files, filled by
 * src/unwind/tables_bpf.c from the file's .eh_frame), the row covering the
 * offset (a binary search) and its rule (pmt_cfi_rules), then the caller's
 * pc, sp and fp from the CFA the rule gives. Where no row covers pc (JIT
 * code, a file without tables yet), frame pointers take over for that
 * frame. A file seen without tables is
 * noted in pmt_cfi_wanted for user space to load. One frame per bpf_loop
 * iteration.
 */
#ifndef PMTRACE_UNWIND_BPF_H
#define PMTRACE_UNWIND_BPF_H

#include "unwind_state.bpf.h"
#include "python.bpf.h"
#include "vma.bpf.h"
#include "unwind_dump.bpf.h"
#include "unwind_rows.bpf.h"
#include <bpf/bpf_tracing.h>

/* The caller by frame pointers: [fp] is its fp, [fp + 8] its pc. */
static __always_inline int pmt_unwind_fp(struct pmt_unwind *u)
{
	__u64 w[2];

	if (!u->fp) { /* the outermost frame: _start clears the frame pointer */
		u->ended = true;
		return 1;
	}
	if (bpf_probe_read_user(w, sizeof(w), (void *)u->fp))
		return 1;
	u->sp = u->fp + 16;
	u->fp = w[0];
	u->bx = 0;
	u->pc = w[1];
	return 0;
}

/*
 * Write frame value v as frame i (each iteration writes one frame or
 * ends the walk). The slot comes from the loop's index, not from an
 * offset carried from one iteration to the next: a verifier that checks
 * a callback as a loop (6.8 on) then finds the iterations alike instead
 * of walking every one of them.
 */
static __always_inline bool pmt_unwind_put(struct pmt_unwind *u, __u32 i, __u64 v)
{
	struct pmt_event *e;
	__u32 zero = 0;
	__u64 *slot, at;

	e = bpf_map_lookup_elem(&pmt_scratch, &zero);
	at = (__u64)u->start + (__u64)i * 8;
	/* bounded in a register, where 6.1's verifier keeps the bound */
	asm volatile("" : "+r"(at));
	if (!e || at > PMT_DATA_ROOM - 8) {
		u->full = true;
		return false;
	}
	slot = (__u64 *)(e->data + at);
	*slot = v;
	u->n = i + 1;
	u->hash = pmt_hash_word(u->hash, v);
	return true;
}

/* The span [lo, hi) of CFA offsets a frame's saved words lie in, grown to
 * hold the word at off. */
static __always_inline void pmt_span_add(__s64 *lo, __s64 *hi, __s64 off)
{
	if (off < *lo)
		*lo = off;
	if (off + 8 > *hi)
		*hi = off + 8;
}

/*
 * Have the walk's copy of the stack (pmt_stack_snap) hold the words at
 * CFA + off that the rule wants, copying PMT_SNAP_BYTES from the lowest
 * of them where it does not: the frames above it (callers) are then
 * read from that copy as well. A read of user memory is a helper call
 * and a fault-guarded copy, most of a frame's cost, and a frame made
 * three (the return address, rbp, rbx); now a few frames make one.
 */
static __always_inline void pmt_frame_copy(struct pmt_stack_snap *snap,
					   const struct pmt_cfi_rule *r, __u64 cfa)
{
	__s64 lo = 0x7fff, hi = -0x8000;

#if defined(__TARGET_ARCH_arm64)
	if (r->bx == PMT_FP_SAVED)
		pmt_span_add(&lo, &hi, r->bx_off);
#else
	pmt_span_add(&lo, &hi, -8);
	if (r->bx == PMT_FP_SAVED)
		pmt_span_add(&lo, &hi, r->bx_off);
#endif
	if (r->fp == PMT_FP_SAVED)
		pmt_span_add(&lo, &hi, r->fp_off);
	if (hi <= lo || (cfa + lo >= snap->base && cfa + hi <= snap->base + snap->len))
		return;
	pmt_snap_take(snap, cfa + lo);
}

/* The word at CFA + off: from the walk's copy of the stack, else read
 * alone (a span the copy could not hold: the stack's end near). */
static __always_inline bool pmt_frame_word(const struct pmt_stack_snap *snap, __u64 cfa, __s64 off,
					   __u64 *v)
{
	if (pmt_snap_word(snap, cfa + off, v))
		return true;
	return !bpf_probe_read_user(v, sizeof(*v), (void *)(cfa + off));
}

/* The caller by the row's rules: 0, or 1 where the walk ends. after_fp:
 * this frame was found by frame pointers (u->sp a guess). */
static __always_inline int pmt_unwind_cfi(struct pmt_unwind *u, const struct pmt_cfi_rule *r,
					  bool after_fp)
{
	struct pmt_stack_snap *snap;
	__u64 cfa, ra, fp;
	__u32 zero = 0;

	switch (r->cfa) {
	case PMT_CFA_END: u->ended = true; return 1; /* the outermost frame */
	case PMT_CFA_SP:
#if defined(__TARGET_ARCH_arm64)
		/* arm64 keeps a frame record at the bottom of its frame,
		 * not just below the caller's sp as x86 does, so a walk by
		 * records does not know sp (fp + 16 is the callee's frame,
		 * less what it keeps above its record: V8's JSEntry saves
		 * ten registers there). A function that saved x29 points
		 * x29 at where it saved it, CFA + fp_off: the CFA from fp. */
		if (after_fp && r->fp == PMT_FP_SAVED) {
			cfa = u->fp - (__s64)r->fp_off;
			break;
		}
#else
		(void)after_fp;
#endif
		cfa = u->sp + (__s64)r->cfa_off;
		break;
	case PMT_CFA_FP: cfa = u->fp + (__s64)r->cfa_off; break;
	case PMT_CFA_PLT: cfa = u->sp + ((u->pc & 15) >= (__u64)r->cfa_off ? 16 : 8); break;
	case PMT_CFA_BX:
		if (!u->bx)
			return 1;
		cfa = u->bx + (__s64)r->cfa_off;
		break;
	default: return 1;
	}
	snap = bpf_map_lookup_elem(&pmt_stack_snap, &zero);
	if (!snap)
		return 1;
	pmt_frame_copy(snap, r, cfa);
#if defined(__TARGET_ARCH_arm64)
	/* the return address: saved at CFA + bx_off, or still in x30 (a
	 * function that has not saved it: only the first frame knows x30);
	 * a signed one's authentication code stripped (48-bit user space) */
	if (r->bx == PMT_FP_SAVED) {
		if (!pmt_frame_word(snap, cfa, r->bx_off, &ra))
			return 1;
	} else {
		ra = u->bx;
	}
	u->bx = 0;
	ra &= PMT_USER_END - 1;
	if (!ra)
		return 1;
#else
	__u64 bx;

	if (!pmt_frame_word(snap, cfa, -8, &ra))
		return 1;
	if (r->bx == PMT_FP_SAVED) {
		if (!pmt_frame_word(snap, cfa, r->bx_off, &bx))
			return 1;
		u->bx = bx;
	}
#endif
	if (r->fp == PMT_FP_SAVED) {
		if (!pmt_frame_word(snap, cfa, r->fp_off, &fp))
			return 1;
		u->fp = fp;
	}
#if defined(__TARGET_ARCH_arm64)
	/* a leaf that has not moved sp has its CFA there: met once, the
	 * first frame, whose x30 is known */
	if (cfa < u->sp)
#else
	if (cfa <= u->sp)
#endif
		return 1; /* the stack grows down: no loops */
	u->sp = cfa;
	u->pc = ra;
	return 0;
}

static long pmt_unwind_step(__u32 i, void *data)
{
	const struct pmt_cfi_rule *r = NULL;
	struct pmt_unwind *u;
	__u64 v, at;
	__u32 zero = 0;
	bool caller, after_fp;

	(void)data;
	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	if (!u)
		return 1;
	if (!u->pc) { /* the caller of the outermost frame */
		u->ended = true;
		return 1;
	}
	if (i >= u->max)
		return 1;
	/* here, not before the loop: the caller's stack is at 6.1's bound */
	if (!i)
		pmt_snap_clear();
	/* a new pc (not one whose Python frames are being written) */
	if (!u->py_emit) {
		pmt_unwind_file(u);
		/* A caller found by frame pointers (no CFI covers the
		 * callee, or its file's rows are not read yet) is a frame
		 * only where user text can be: not past the user half, not
		 * in a mapping the kernel says is no text. Else the "frame
		 * pointer" was any register, and the stack ends here,
		 * counted, instead of inventing callers. */
		if (u->by_fp && (u->pc < 0x1000 || u->pc >= PMT_USER_END ||
				 (!u->vm_unknown &&
				  (u->pc < u->vm_start || u->pc >= u->vm_end || !u->vm_exec)))) {
			u->no_text = true;
			return 1;
		}
		if (pmt_unwind_deferred_here(u))
			return pmt_unwind_defer(u, i);
		/* the eval loop of an interpreter: u->py_emit */
		pmt_py_at_eval(u);
	}
	/* an eval loop's Python frames first, one per step, then (a frame
	 * that cannot be read ends them) its native frame; one call site,
	 * so the verifier checks the Python code once */
	if (u->py_emit && (v = pmt_py_frame(u)))
		return !pmt_unwind_put(u, i, v);
	u->py_done = false;
	/* a caller as perf's DWARF mode shows it: at its call instruction
	 * (the return address - 1), so a call that ends a function (to a
	 * noreturn one) is named after its caller */
	at = pmt_unwind_at(u);
	caller = u->native;
	u->native = true;
	if (!pmt_unwind_put(u, i, caller ? u->pc - 1 : u->pc))
		return 1;

	if (u->count && at <= 0xffffffffULL)
		r = pmt_unwind_rule(u, (__u32)at);
	after_fp = u->by_fp;
	u->by_fp = !r || r->cfa == PMT_CFA_NONE;
	if (u->by_fp)
		return pmt_unwind_fp(u);
	return pmt_unwind_cfi(u, r, after_fp);
}

/* Why a walk that did not reach the outermost frame, and did not leave
 * the rest to user space, ended: one reason a stack, counted, said at
 * exit. A file whose rows were not read yet comes before what the frame
 * pointers it fell back on led to (that is the cost of reading tables
 * late: a busy machine). */
static __always_inline __u32 pmt_unwind_short(const struct pmt_unwind *u)
{
	if (u->n >= u->max || u->full)
		return PMT_STAT_UNWIND_DEPTH;
	if (u->pending)
		return PMT_STAT_UNWIND_PENDING;
	if (u->no_text)
		return PMT_STAT_UNWIND_ENDED;
	return PMT_STAT_UNWIND_UNREAD;
}

/*
 * Unwind the current task's user stack into the scratch buffer from byte
 * off, at most max frames. Returns the frames written; *hash is their
 * hash (for aggregation keys). defer (a stream's, a constant of the
 * caller's): a stack that meets a file without rows stops there, its
 * dump after the frames (pmt_unwind_dumped).
 */
static __always_inline __u32 pmt_unwind_user(__u32 off, __u32 max, __u64 *hash, const bool defer)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	struct pmt_unwind *u;
	__u32 zero = 0;

	u = bpf_map_lookup_elem(&pmt_unwind_state, &zero);
	if (!u || task->flags & PMT_PF_KTHREAD)
		return 0;
	/* in user mode at the sample: its registers; else the task's saved
	 * user registers */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	__builtin_memset(u, 0, sizeof(*u));
	u->pc = PT_REGS_IP_CORE(regs);
	u->sp = PT_REGS_SP_CORE(regs);
	u->fp = PT_REGS_FP_CORE(regs);
#if defined(__TARGET_ARCH_arm64)
	/* bx holds x30, the link register: the return address of a
	 * function that has not saved it yet */
	u->bx = BPF_CORE_READ(regs, regs[30]);
#else
	u->bx = BPF_CORE_READ(regs, bx);
#endif
	pmt_unwind_of(u, task);
	u->start = off;
	u->max = max;
	u->defer = defer;
	u->hash = PMT_STACK_HASH_SEED;
	/* a process past exit_mm (its memory being torn down): the pc its
	 * registers hold, and nothing walked or looked up. x86 refuses
	 * user reads then (the mm loaded is not the task's); arm64 reads
	 * what is not freed yet, and its VMAs are gone: a walk there gave
	 * runs of frames no file holds. */
	if (!u->mm) {
		if (pmt_unwind_put(u, 0, u->pc))
			pmt_stat_inc(PMT_STAT_UNWIND_EXITING);
		*hash = u->hash;
		return u->n;
	}
	bpf_loop(PMT_STACK_DEPTH, pmt_unwind_step, NULL, 0);
	if (u->deferred)
		pmt_py_dump(u, task);
	else if (!u->ended)
		pmt_stat_inc(pmt_unwind_short(u));
	*hash = u->hash;
	return u->n;
}

#endif /* PMTRACE_UNWIND_BPF_H */
