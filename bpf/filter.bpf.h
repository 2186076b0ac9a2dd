/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The filter interpreter: walks a struct pmt_filter (bpf/abi/filter.h) for one
 * event. Shared by every probe kind; a probe fills struct pmt_fctx with what
 * it has (the raw record for tracepoints) and the sources it cannot serve
 * are rejected by the compiler in userspace.
 */
#ifndef PMTRACE_FILTER_BPF_H
#define PMTRACE_FILTER_BPF_H

#include "operand.bpf.h"

/* Shift-And over the string (see struct pmt_pattern): one pass, no
 * backtracking, nothing the verifier must track precisely. */
static __always_inline bool pmt_match(const struct pmt_filter *f, __u64 pat, const char *s,
				      __u32 slen)
{
	const struct pmt_pattern *p = &f->pats[pat & (PMT_FILTER_PATS - 1)];
	__u64 d = 1, star = p->star;
	__u32 i;

	for (i = 0; i < PMT_STR_MAX; i++) {
		if (i >= slen || !s[i])
			break;
		d = ((d << 1) & p->mask[f->cls[(__u8)s[i]] & (PMT_FILTER_NCLS - 1)]) | (d & star);
		if (!d)
			return false;
	}
	return d & p->final;
}

static __always_inline bool pmt_eval_num(const struct pmt_filter_entry *e, struct pmt_fctx *c)
{
	bool sign = e->o.flags & PMT_FFLAG_SIGNED;
	__u64 v = pmt_fetch_num(&e->o, c);

	switch (e->op) {
	case PMT_FOP_EQ: return pmt_uses_fop(PMT_FOP_EQ) && v == e->val;
	case PMT_FOP_LT:
		if (!pmt_uses_fop(PMT_FOP_LT))
			break;
		return sign ? (__s64)v < (__s64)e->val : v < e->val;
	case PMT_FOP_LE:
		if (!pmt_uses_fop(PMT_FOP_LE))
			break;
		return sign ? (__s64)v <= (__s64)e->val : v <= e->val;
	case PMT_FOP_BAND: return pmt_uses_fop(PMT_FOP_BAND) && (v & e->val);
	}
	return false;
}

static __always_inline bool pmt_eval(const struct pmt_filter *f, const struct pmt_filter_entry *e,
				     struct pmt_fctx *c)
{
	struct pmt_fstr *str;
	__u32 zero = 0, len;

	if (pmt_uses_fop(PMT_FOP_MATCH) && e->op == PMT_FOP_MATCH) {
		str = bpf_map_lookup_elem(&pmt_fstr_buf, &zero);
		if (!str)
			return false;
		len = pmt_fetch_str(&e->o, c, str->s);
		return pmt_match(f, e->val, str->s, len);
	}
	return pmt_eval_num(e, c);
}

struct pmt_walk {
	const struct pmt_filter *f;
	struct pmt_fctx *c;
	__u32 idx;
};

/* One step of the walk; under bpf_loop the verifier checks it once, not
 * once per step as an unrolled loop would need. */
static long pmt_walk_step(__u32 i __attribute__((unused)), void *ctx)
{
	struct pmt_walk *w = ctx;
	const struct pmt_filter_entry *e;

	if (w->idx >= PMT_FILTER_MAX)
		return 1;
	e = &w->f->e[w->idx];
	w->idx = pmt_eval(w->f, e, w->c) ? e->t : e->f;
	return w->idx >= PMT_FILTER_MAX;
}

/* Does the event pass? A walk that does not end rejects (and is counted). */
static __always_inline bool pmt_filter_run(const struct pmt_filter *f, struct pmt_fctx *c)
{
	const struct pmt_filter_entry *e = &f->e[f->start & (PMT_FILTER_MAX - 1)];
	struct pmt_walk w = {.f = f, .c = c, .idx = f->start};

	/* operands written as expressions (-ret, curtask->...): computed
	 * into their slots first */
	pmt_x_prepare(f->xprog, c);
	/* The first step inline when it compares numbers: a one-comparison
	 * filter (pid == 1) then pays for no call at all (a call and its
	 * return cost as much as the comparison's helper here). Patterns
	 * stay in the callback, verified once. */
	if (!pmt_uses_fop(PMT_FOP_MATCH) || e->op != PMT_FOP_MATCH)
		w.idx = pmt_eval_num(e, c) ? e->t : e->f;
	else
		pmt_walk_step(0, &w);
	if (w.idx < PMT_FILTER_MAX)
		bpf_loop(PMT_FILTER_MAX, pmt_walk_step, &w, 0);
	if (w.idx == PMT_FILTER_ACCEPT)
		return true;
	if (w.idx != PMT_FILTER_REJECT)
		pmt_stat_inc(PMT_STAT_FILTER_ABORT);
	return false;
}

#endif /* PMTRACE_FILTER_BPF_H */
