/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Operands: the values of an event a filter compares, a key holds or an
 * aggregation adds up (struct pmt_operand, bpf/abi/filter.h), loaded from
 * the raw record, the program's context or the task. The kernel side of
 * src/filter/operand.c, which names them; read by the filter interpreter
 * (filter.bpf.h) and the aggregation (aggregate.bpf.h).
 */
#ifndef PMTRACE_OPERAND_BPF_H
#define PMTRACE_OPERAND_BPF_H

#include "emit.bpf.h"
#include "expr.bpf.h"

/* An operand's value: an expression's (pmt_x_prepare ran the probe's
 * program), or a plain operand loaded */
static __always_inline __u64 pmt_fetch_num(const struct pmt_operand *e, struct pmt_fctx *c)
{
	if (pmt_uses_src(PMT_FSRC_EXPR) && e->src == PMT_FSRC_EXPR)
		return c->xslot ? c->xslot[e->off & (PMT_XSLOTS - 1)] : 0;
	return pmt_fetch_base(e, c);
}

/* x86-64: user addresses have the top bit clear, the kernel's set */
#define PMT_IS_USER_ADDR(a) ((__s64)(a) >= 0)

/* The address a PTR_STR operand reads at: field F's, or its expression
 * slot's (PMT_FFLAG_XADDR) */
static __always_inline __u64 pmt_ptr_of(const struct pmt_operand *e, struct pmt_fctx *c)
{
	struct pmt_operand f = *e;

	f.src = PMT_FSRC_FIELD;
	if (pmt_uses_src(PMT_FSRC_EXPR) && (e->flags & PMT_FFLAG_XADDR))
		return c->xslot ? c->xslot[e->off & (PMT_XSLOTS - 1)] : 0;
	return pmt_fetch_base(&f, c);
}

/* str(F): the string at the address in field F (a FIELD operand but for
 * src), into dst (n bytes, NUL included); user or kernel memory as the
 * address says. Returns the helper's result: < 0 when it faulted (and
 * counted), dst then empty. */
static __always_inline long pmt_read_ptr_str(const struct pmt_operand *e, struct pmt_fctx *c,
					     char *dst, __u32 n)
{
	__u64 p = pmt_ptr_of(e, c), m = n;
	long r;

	/* n is at most every caller's buffer (128 bytes), tested in the
	 * register the helper takes. arm64's build kept n across pmt_ptr_of
	 * in a stack slot where 6.1's verifier knew only a byte's bound
	 * (255; the callers' own tests had been on another copy), and
	 * dropped a plain test as known true: the first barrier hides what
	 * the compiler knows, the second makes the value passed the one
	 * tested; 64 bits, so no zero-extension comes between. */
	_Static_assert(PMT_KEY_MAX == PMT_STR_MAX && PMT_STREAM_STR_LEN == PMT_STR_MAX,
		       "pmt_read_ptr_str's bound");
	barrier_var(m);
	if (m > PMT_STR_MAX)
		m = PMT_STR_MAX;
	barrier_var(m);
	r = PMT_IS_USER_ADDR(p) ? bpf_probe_read_user_str(dst, m, (const void *)p)
				: bpf_probe_read_kernel_str(dst, m, (const void *)p);
	if (r < 0) {
		dst[0] = 0;
		pmt_read_failed(c, false);
	}
	return r;
}

/* --str: string slot i of a streamed record, right before --counter's
 * counts (struct pmt_event; pmt_emit_frames sends them). A function of
 * its own: four copies inline would stretch the program's jumps past
 * their reach. */
static __noinline __attribute__((unused)) void pmt_stream_str(const struct pmt_probe_cfg *cfg,
							      struct pmt_fctx *c,
							      struct pmt_event *e, __u32 i)
{
	char *dst;

	i &= PMT_STREAM_STRS - 1;
	dst = (char *)&e->counts[PMT_COUNTERS - pmt_stream_ncounts()] -
	      (pmt_stream_nstrs() - i) * PMT_STREAM_STR_LEN;

	/* an empty string's second byte says whether the read faulted */
	dst[0] = '\0';
	dst[1] = 0;
	if (cfg->strs[i].src != PMT_FSRC_PTR_STR)
		return;
	if (cfg->strs[i].flags & PMT_FFLAG_BYTES) {
		/* bytes as they are (ntop()'s IPv6 address) */
		__u64 p = pmt_ptr_of(&cfg->strs[i], c);
		__u32 len = cfg->strs[i].size & (PMT_STREAM_STR_LEN - 1);
		long r = PMT_IS_USER_ADDR(p) ? bpf_probe_read_user(dst, len, (const void *)p)
					     : bpf_probe_read_kernel(dst, len, (const void *)p);

		if (r < 0) {
			dst[0] = 0;
			dst[1] = 1;
			pmt_read_failed(c, false);
		}
		return;
	}
	if (pmt_read_ptr_str(&cfg->strs[i], c, dst, PMT_STREAM_STR_LEN) < 0)
		dst[1] = 1;
}

/* --printf's numbers of the streamed record built in e: the first
 * bytes sent (pmt_emit_frames), right before --str's strings */
static __always_inline void pmt_stream_vals_fill(const struct pmt_probe_cfg *cfg,
						 struct pmt_fctx *c, struct pmt_event *e)
{
	/* a positive offset, bounded: 6.1's verifier loses a constant
	 * through the negation clang makes of "end - size" */
	__u64 off = __builtin_offsetof(struct pmt_event, hdr) - pmt_stream_pre();
	__u64 *dst;
	__u32 i;

	if (off > __builtin_offsetof(struct pmt_event, hdr))
		return;
	dst = (__u64 *)((char *)e + off);

	for (i = 0; i < PMT_STREAM_VALS; i++) {
		if (i >= pmt_stream_nvals())
			break;
		dst[i] = pmt_fetch_num(&cfg->vals[i], c);
	}
}

/* join()'s strings of the streamed record built in e, right before
 * --str's: the array's address one of the numbers (cfg->join_slot), its
 * pointers and their strings read from user or kernel memory as the
 * address says. A function of its own: its loop's calls off the caller's
 * stack frame. */
static __noinline __attribute__((unused)) void pmt_stream_join_fill(const struct pmt_probe_cfg *cfg,
								    struct pmt_fctx *c,
								    struct pmt_event *e)
{
	struct pmt_join_rec *j =
		(struct pmt_join_rec *)((char *)&e->counts[PMT_COUNTERS - pmt_stream_ncounts()] -
					pmt_stream_nstrs() * PMT_STREAM_STR_LEN - sizeof(*j));
	__u64 argv, p;
	__u32 i;

	j->n = 0;
	j->fault = 0;
	if (!cfg->join_slot)
		return;
	argv = pmt_fetch_num(&cfg->vals[(cfg->join_slot - 1) & (PMT_STREAM_VALS - 1)], c);
	for (i = 0; i < PMT_JOIN_ARGS; i++) {
		const void *at = (const void *)(argv + i * 8);
		long r;

		r = PMT_IS_USER_ADDR(argv) ? bpf_probe_read_user(&p, sizeof(p), at)
					   : bpf_probe_read_kernel(&p, sizeof(p), at);
		if (r) {
			j->fault = 1;
			break;
		}
		if (!p)
			break;
		r = PMT_IS_USER_ADDR(p)
			    ? bpf_probe_read_user_str(j->arg[i], PMT_JOIN_ARG_LEN, (const void *)p)
			    : bpf_probe_read_kernel_str(j->arg[i], PMT_JOIN_ARG_LEN,
							(const void *)p);
		if (r < 0) {
			j->arg[i][0] = '\0';
			j->fault = 1;
		}
		j->n = i + 1;
	}
}

/* --str's strings, --printf's numbers and join()'s strings of the
 * streamed record built in e */
static __always_inline void pmt_stream_strs_fill(const struct pmt_probe_cfg *cfg,
						 struct pmt_fctx *c, struct pmt_event *e)
{
	c->rec = e->data;
	if (pmt_stream_strs > 0 || pmt_stream_vals > 0)
		pmt_x_prepare(cfg->str_xprog, c);
	if (pmt_stream_strs > 0)
		pmt_stream_str(cfg, c, e, 0);
	if (pmt_stream_strs > 1)
		pmt_stream_str(cfg, c, e, 1);
	if (pmt_stream_strs > 2)
		pmt_stream_str(cfg, c, e, 2);
	if (pmt_stream_strs > 3)
		pmt_stream_str(cfg, c, e, 3);
	if (pmt_stream_vals > 0)
		pmt_stream_vals_fill(cfg, c, e);
	if (pmt_stream_join)
		pmt_stream_join_fill(cfg, c, e);
}

/* A printf inside an if whose condition does not hold (cfg->print_guard,
 * one of the numbers pmt_stream_strs_fill computed): nothing streamed */
static __always_inline bool pmt_print_skipped(const struct pmt_probe_cfg *cfg, struct pmt_fctx *c)
{
	return pmt_stream_vals > 0 && cfg->print_guard &&
	       !pmt_fetch_num(&cfg->vals[(cfg->print_guard - 1) & (PMT_STREAM_VALS - 1)], c);
}

/* Fill buf with the string operand; returns how many bytes to look at (the
 * matcher also stops at a NUL). No scan here: a loop returning its index
 * hands the verifier one constant per exit to explore the matcher with. */
static __always_inline __u32 pmt_fetch_str(const struct pmt_operand *e, struct pmt_fctx *c,
					   char *buf)
{
	__u64 off = e->off, start, len;
	__u32 w;

	switch (e->src) {
	case PMT_FSRC_COMM:
		if (!pmt_uses_src(PMT_FSRC_COMM))
			return 0;
		pmt_current_comm(buf);
		len = PMT_COMM_LEN;
		break;
	case PMT_FSRC_FIELD_STR:
		if (!pmt_uses_src(PMT_FSRC_FIELD_STR) || !c->rec ||
		    off > PMT_MAX_DATA - PMT_STR_MAX)
			return 0;
		len = e->size < PMT_STR_MAX ? e->size : PMT_STR_MAX;
		bpf_probe_read_kernel(buf, PMT_STR_MAX, c->rec + off);
		break;
	case PMT_FSRC_FIELD_DSTR:
		if (!pmt_uses_src(PMT_FSRC_FIELD_DSTR) || !c->rec || off > PMT_MAX_DATA - 4)
			return 0;
		w = *(__u32 *)(c->rec + off);
		start = w & 0xffff;
		if (e->flags & PMT_FFLAG_REL)
			start += off + 4;
		len = w >> 16;
		if (len > PMT_STR_MAX)
			len = PMT_STR_MAX;
		/* the bound in the register read next: 6.1's verifier does not
		 * carry a bound to a copy the compiler spilled before the test */
		barrier_var(len);
		bpf_probe_read_kernel(buf, len, (char *)c->ctx + start);
		break;
	case PMT_FSRC_PTR_STR:
		if (!pmt_uses_src(PMT_FSRC_PTR_STR))
			return 0;
		pmt_read_ptr_str(e, c, buf, pmt_str_len < PMT_STR_MAX ? pmt_str_len : PMT_STR_MAX);
		len = PMT_STR_MAX;
		break;
	default: return 0;
	}
	return len;
}

#endif
