/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The expression machine: runs a probe's struct pmt_expr (bpf/abi/expr.h),
 * the postfix code src/filter/expr.c compiles, over one event's operands,
 * storing each expression's value in its slot of pmt_xmem. The machine
 * itself is expr.bpf.c's global function pmt_x_exec; here are its maps and
 * the call. Included by operand.bpf.h between the plain operands
 * (pmt_fetch_base) and pmt_fetch_num, which reads the slots.
 */
#ifndef PMTRACE_EXPR_BPF_H
#define PMTRACE_EXPR_BPF_H

#include "fetch.bpf.h"

/* the session's programs (written by the loader before attaching) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PMT_EXPRS);
	__type(key, __u32);
	__type(value, struct pmt_expr);
} pmt_exprs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pmt_xmem);
} pmt_xmem SEC(".maps") __weak;

/* a program's saved values (PMT_X_VLOAD ...), where the session has any */
const volatile bool pmt_use_vars __weak = false;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PMT_VAR_ENTRIES);
	__type(key, struct pmt_var_key);
	__type(value, __u64);
} pmt_vars SEC(".maps") __weak;

/* a program's saved strings (PMT_X_SLOAD ...): sized 1 where none */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PMT_VAR_ENTRIES);
	__type(key, struct pmt_var_key);
	__type(value, char[PMT_SAVED_STR_LEN]);
} pmt_strvars SEC(".maps") __weak;

/* expr.bpf.c: program idx over this event; probe its id, has_rec whether
 * pmt_scratch holds the record's copy (fctx.rec), the context's address
 * in pmt_xmem.ctx */
extern int pmt_x_exec(__u32 idx, __u32 probe, __u32 has_rec);

/* Run program idx for this event (pmt_x_prepare, pmt_x_statements) */
static __always_inline void pmt_x_run(__u32 idx, struct pmt_fctx *c)
{
	struct pmt_xmem *m;
	__u32 zero = 0;

	if (idx == PMT_XPROG_NONE)
		return;
	m = bpf_map_lookup_elem(&pmt_xmem, &zero);
	if (!m)
		return;
	/* a number to the machine (it reads the record by copy): the
	 * verifier types a global function's arguments, and takes no
	 * tracepoint context there on 6.1 */
	m->ctx = (__u64)c->ctx;
	pmt_x_exec(idx, c->probe, c->rec != NULL);
	c->xslot = m->slot;
}

/* Run program idx (a probe's expressions) for this event: its values in
 * the slots c->xslot points at, read by pmt_fetch_num */
static __always_inline void pmt_x_prepare(__u32 idx, struct pmt_fctx *c)
{
	if (pmt_uses_src(PMT_FSRC_EXPR))
		pmt_x_run(idx, c);
}

/* A block's statements (cfg->sprog: values saved and forgotten), once
 * the event passed and what the block reads was read: the slots are
 * then free to reuse */
static __always_inline void pmt_x_statements(__u16 sprog, struct pmt_fctx *c)
{
	if (pmt_use_vars)
		pmt_x_run(sprog, c);
}

#endif /* PMTRACE_EXPR_BPF_H */
