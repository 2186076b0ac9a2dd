/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rule of a frame's pc, for the DWARF unwinder (unwind.bpf.h): its VMA
 * and file (the VMAs this walk met first, then the process's cache and
 * the kernel, vma.bpf.h), the file's rows (pmt_cfi_files), then the row
 * at the file offset: from this CPU's memo of rules found, else by a
 * binary search of the rows.
 */
#ifndef PMTRACE_UNWIND_ROWS_BPF_H
#define PMTRACE_UNWIND_ROWS_BPF_H

#include "unwind_state.bpf.h"
#include "python.bpf.h"
#include "vma.bpf.h"

/* The VMA of u->pc from those the walk met: true if there. */
static __always_inline bool pmt_unwind_met(struct pmt_unwind *u, const struct pmt_stack_snap *s)
{
	__u32 k;

#pragma unroll
	for (k = 0; k < PMT_WALK_VMAS; k++) {
		const struct pmt_walk_vma *w = &s->met[k];

		if (!w->count || u->pc < w->start || u->pc >= w->end)
			continue;
		u->vm_start = w->start;
		u->vm_end = w->end;
		u->vm_off = w->off;
		u->file = w->file;
		u->first = w->first;
		u->count = w->count;
		u->vm_py = w->py;
		u->vm_file = u->vm_exec = true;
		u->vm_unknown = u->vm_pending = false;
		return true;
	}
	return false;
}

/* ... and the VMA found now, kept among them (its file has rows) */
static __always_inline void pmt_unwind_meet(struct pmt_unwind *u, struct pmt_stack_snap *s)
{
	struct pmt_walk_vma *w = &s->met[s->met_next & (PMT_WALK_VMAS - 1)];

	w->start = u->vm_start;
	w->end = u->vm_end;
	w->off = u->vm_off;
	w->file = u->file;
	w->first = u->first;
	w->count = u->count;
	w->py = u->vm_py;
	s->met_next++;
}

/* The rows of the file mapped at u->pc, into u->first/count. */
static __always_inline void pmt_unwind_file(struct pmt_unwind *u)
{
	struct pmt_stack_snap *s;
	struct pmt_cfi_file *cf;
	__u32 zero = 0;

	if (u->pc >= u->vm_start && u->pc < u->vm_end)
		return;
	s = bpf_map_lookup_elem(&pmt_stack_snap, &zero);
	if (s && pmt_unwind_met(u, s))
		return;
	u->vm_start = u->vm_end = 0;
	u->vm_file = false;
	u->vm_py = false;
	u->vm_unknown = false;
	u->vm_pending = false;
	u->count = 0;
	if (!pmt_unwind_vma_of(u))
		return;
	if (!u->vm_file) {
		if (u->vm_exec)
			pmt_jit_met(u);
		return;
	}
	/* an interpreter's file: asked once a VMA, not at each frame */
	u->vm_py = pmt_python && bpf_map_lookup_elem(&pmt_py_files, &u->file);
	cf = bpf_map_lookup_elem(&pmt_cfi_files, &u->file);
	if (cf) {
		u->first = cf->first;
		u->count = cf->count;
		if (s && u->count && u->vm_exec)
			pmt_unwind_meet(u, s);
	} else {
		pmt_want_rows(u);
		u->pending = true;
		u->vm_pending = true;
	}
}

/* The rule of the last row of [first, first + count) at or below pc. */
static __always_inline struct pmt_cfi_rule *pmt_unwind_row(__u32 first, __u32 count, __u32 pc)
{
	struct pmt_cfi_krow *r;
	__u32 base = first, n = count, half, i, mid;

	/* the row at base is the answer once n is 1: halve n, keeping the
	 * half whose first row is at or below pc (22 rounds: count is at
	 * most 2^22, the largest pmt_cfi_rows, src/unwind/tables_bpf.c) */
	for (i = 0; i < 22; i++) {
		if (n <= 1)
			break;
		half = n / 2;
		mid = base + half;
		r = bpf_map_lookup_elem(&pmt_cfi_rows, &mid);
		if (!r)
			break;
		/* base moves to mid when mid's row is at or below pc: by
		 * arithmetic, not a branch (one path less for the verifier
		 * each round) */
		base += half * (__u32)(((__u64)r->pc - pc - 1) >> 63);
		n -= half;
	}
	r = count ? bpf_map_lookup_elem(&pmt_cfi_rows, &base) : NULL;
	if (!r || r->pc > pc)
		return NULL;
	base = r->rule;
	return bpf_map_lookup_elem(&pmt_cfi_rules, &base);
}

/* The memo slot of offset at of u's file (NULL: no memo map). */
static __always_inline struct pmt_rule_memo *pmt_memo_slot(const struct pmt_unwind *u, __u32 at)
{
	__u32 zero = 0;
	struct pmt_rule_memos *ms = bpf_map_lookup_elem(&pmt_rule_memo, &zero);
	__u64 k;

	if (!ms)
		return NULL;
	k = (u->file.ino * 0x9e3779b97f4a7c15ULL) ^ ((__u64)at * 0xff51afd7ed558ccdULL) ^
	    u->file.dev;
	return &ms->m[(k >> 32) & (PMT_RULE_MEMOS - 1)];
}

/*
 * The rule at file offset at of u's file (NULL: no row holds at): from
 * the CPU's memo of rules found, else by the search of the file's rows,
 * then kept there (the rule returned is the memo's copy either way). A
 * memo names the file (its inode) and where its rows begin: rows given
 * back are not searched (u->count is 0), and rows read again begin
 * elsewhere. The search is 22 dependent loads in a table of megabytes;
 * a hot path meets the same few pcs again and again. The slot is found
 * again after the search, not kept across it: what lives across the
 * search is spilled to the stack, which 6.1 bounds.
 */
static __always_inline const struct pmt_cfi_rule *pmt_unwind_rule(struct pmt_unwind *u, __u32 at)
{
	struct pmt_rule_memo *m = pmt_memo_slot(u, at);
	struct pmt_cfi_rule *r;

	if (m && m->ino == u->file.ino && m->dev == u->file.dev && m->at == at &&
	    m->first == u->first && m->ino)
		return &m->rule;
	r = pmt_unwind_row(u->first, u->count, at);
	m = r ? pmt_memo_slot(u, at) : NULL;
	if (!m)
		return r;
	m->ino = u->file.ino;
	m->dev = u->file.dev;
	m->at = at;
	m->first = u->first;
	m->rule = *r;
	return &m->rule;
}

#endif /* PMTRACE_UNWIND_ROWS_BPF_H */
