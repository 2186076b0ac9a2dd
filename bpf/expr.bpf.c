// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The expression machine (expr.bpf.h has its maps and the call): one
 * operation a bpf_loop step, in a global function. The kernel checks a
 * global function once for the program that calls it, with its arguments
 * as their types say; a static one, or the loop's callback itself, it
 * checks again at every call and for every state the caller reaches it
 * in: opensnoop.bt's tracepoint program, which runs expressions for its
 * filter, printf and statements, took 118,000 instructions of the
 * verifier's, 43,000 since. Every probe kind's program calls this one
 * copy (the objects are linked into one).
 */
#include "expr.bpf.h"

/* The loop's state, on the global function's frame: 56 bytes, as 6.1
 * bounds a chain of calls to 512 in all and a function probe's body
 * takes 448 of them (the program, pmt_xmem.idx, is looked up each step:
 * an array's lookup the kernel inlines) */
struct pmt_xrun {
	struct pmt_fctx c; /* the event, as the leaves read it */
	struct pmt_xmem *m;
};

/* v brought to the operation's type (PMT_XF_*), without a branch: each
 * would double the paths the verifier walks through every operation */
static __always_inline __u64 pmt_x_type(__u64 v, __u8 flags)
{
	__u64 shift = (__u64)(flags & PMT_XF_32) << 4; /* 32 or 0 */
	__u64 sign = -(__u64)(flags & PMT_XF_SIGNED);  /* all ones when signed */
	__u64 up = v << shift;

	return ((__u64)((__s64)up >> shift) & sign) | ((up >> shift) & ~sign);
}

/* signed division and remainder through unsigned ones (BPF before v4
 * has no signed division); b is not 0 */
static __always_inline __u64 pmt_x_sdiv(__u64 a, __u64 b, bool mod)
{
	__u64 ua = (__s64)a < 0 ? -a : a, ub = (__s64)b < 0 ? -b : b;

	if (mod)
		return (__s64)a < 0 ? -(ua % ub) : ua % ub;
	return ((__s64)a < 0) != ((__s64)b < 0) ? -(ua / ub) : ua / ub;
}

#define PMT_XST(m, i) ((m)->st[(i) & (PMT_EXPR_STACK - 1)])

/* LOAD: the o.size bytes at addr + k (1, 2, 4 or 8, little-endian),
 * extended; 0 where the kernel cannot read them (counted) */
static __always_inline __u64 pmt_x_load(const struct pmt_fctx *c, const struct pmt_expr_op *op,
					__u64 addr, bool sg)
{
	__u64 mem = 0, n = op->o.size;

	n = n > 8 ? 8 : n;
	/* x86-64: user addresses have the top bit clear (a syscall's
	 * pointer argument: args->rqtp->tv_sec), the kernel's set */
	if ((__s64)addr >= 0 ? bpf_probe_read_user(&mem, n & 15, (const void *)(addr + op->k))
			     : bpf_probe_read_kernel(&mem, n & 15, (const void *)(addr + op->k))) {
		mem = 0;
		pmt_read_failed(c, true);
	}
	n = (8 - n) * 8; /* the shift that drops the bytes not read */
	return sg ? (__u64)((__s64)(mem << n) >> n) : (mem << n) >> n;
}

/* SLOAD, SSTORE, SDEL (pmt_x_var: past the guard; vk its variable and
 * key, the key's first value at base, sp values on the stack) */
static __always_inline long pmt_x_str(const struct pmt_expr_op *op, __u8 code, struct pmt_xmem *m,
				      __u64 sp, __u64 base, struct pmt_var_key *vk)
{
	char *buf;
	__u64 a;
	void *v;

	if (code == PMT_X_SLOAD) {
		buf = m->str[op->o.size & (PMT_XSTRS - 1)];
		v = bpf_map_lookup_elem(&pmt_strvars, vk);
		if (!v || bpf_probe_read_kernel(buf, PMT_SAVED_STR_LEN, v))
			buf[0] = '\0';
		PMT_XST(m, base) = (__u64)buf;
		m->sp = base + 1;
		return 0;
	}
	m->sp = base;
	if (code == PMT_X_SDEL) {
		bpf_map_delete_elem(&pmt_strvars, vk);
		return 0;
	}
	if (code != PMT_X_SSTORE)
		return 1;
	buf = m->str[PMT_XSTRS];
	if (op->flags & PMT_XF_COMM) {
		__builtin_memset(buf, 0, PMT_SAVED_STR_LEN);
		bpf_get_current_comm(buf, 16);
	} else {
		a = PMT_XST(m, sp - 1);
		/* user memory below the canonical split, the kernel's above */
		if ((__s64)a >= 0
			    ? bpf_probe_read_user_str(buf, PMT_SAVED_STR_LEN, (void *)a) < 0
			    : bpf_probe_read_kernel_str(buf, PMT_SAVED_STR_LEN, (void *)a) < 0)
			buf[0] = '\0';
	}
	bpf_map_update_elem(&pmt_strvars, vk, buf, BPF_ANY);
	return 0;
}

/* VLOAD, VSTORE, VDEL (and the strings' SLOAD ...): the saved value of
 * variable op->k under the key on the stack, one value or two
 * (PMT_XF_KEY2) below what the operation pops besides (sp > 0 values
 * there) */
static __always_inline long pmt_x_var(const struct pmt_expr_op *op, __u8 code, struct pmt_xmem *m,
				      __u64 sp)
{
	struct pmt_var_key vk = {.var = (__u32)op->k};
	__u64 two = !!(op->flags & PMT_XF_KEY2), base, *v;
	__u64 n = (code == PMT_X_VSTORE	  ? 2
		   : code == PMT_X_SSTORE ? 2 - !!(op->flags & PMT_XF_COMM)
					  : 1) +
		  two;

	if ((op->flags & PMT_XF_GUARD) && code != PMT_X_VLOAD) {
		/* a constant bound first: 6.1's verifier learns none from a
		 * comparison of two registers, and the mask of sp - 1 below
		 * is one clang drops */
		if (sp < 2 || sp < n + 1)
			return 1;
		sp--;
		m->sp = sp;
		if (!PMT_XST(m, sp)) {
			m->sp = sp - n; /* not done: its operands dropped */
			return 0;
		}
	}
	if (sp < n)
		return 1;
	base = sp - n;
	vk.key = PMT_XST(m, base);
	if (two)
		vk.key2 = PMT_XST(m, base + 1);
	if (op->flags & PMT_XF_HAS) {
		/* a key of a map of numbers or of strings */
		PMT_XST(m, base) = bpf_map_lookup_elem(&pmt_vars, &vk) ||
				   bpf_map_lookup_elem(&pmt_strvars, &vk);
		m->sp = base + 1;
		return 0;
	}
	if (code >= PMT_X_SLOAD)
		return pmt_x_str(op, code, m, sp, base, &vk);
	if (code == PMT_X_VLOAD) {
		v = bpf_map_lookup_elem(&pmt_vars, &vk);
		PMT_XST(m, base) = v ? *v : 0;
		m->sp = base + 1;
		return 0;
	}
	m->sp = base;
	if (code == PMT_X_VDEL) {
		bpf_map_delete_elem(&pmt_vars, &vk);
		return 0;
	}
	if (code != PMT_X_VSTORE)
		return 1;
	bpf_map_update_elem(&pmt_vars, &vk, &PMT_XST(m, sp - 1), BPF_ANY);
	return 0;
}

/* NEG, NOT, LNOT, BSWAP of a */
static __always_inline __u64 pmt_x_unary(const struct pmt_expr_op *op, __u8 code, __u64 a, __u8 f)
{
	return code == PMT_X_NEG    ? pmt_x_type(-a, f)
	       : code == PMT_X_NOT  ? pmt_x_type(~a, f)
	       : code == PMT_X_LNOT ? !a
	       : op->k == 2	    ? __builtin_bswap16((__u16)a)
	       : op->k == 4	    ? __builtin_bswap32((__u32)a)
				    : __builtin_bswap64(a);
}

/* SEL: C ? A : B without a branch, a mask of the condition */
static __always_inline long pmt_x_sel(struct pmt_xmem *m, __u64 sp, __u8 f)
{
	__u64 v;

	if (sp < 3)
		return 1;
	v = -(__u64)(PMT_XST(m, sp - 1) != 0);
	v = (PMT_XST(m, sp - 3) & v) | (PMT_XST(m, sp - 2) & ~v);
	PMT_XST(m, sp - 3) = pmt_x_type(v, f);
	m->sp = sp - 2;
	return 0;
}

/* A leaf's value: a plain operand, but a tracepoint's field in its
 * context (PMT_FFLAG_CTX) taken from the words the calling program
 * copied (pmt_ctx_fill), or read by copy at the context's address, which
 * the machine has as a number (loads straight from a context must be at
 * a constant offset): the copy was 30 ns less a field here (a helper
 * call each), a fifth of runqlat.bt's sched_switch program */
static __always_inline __u64 pmt_x_leaf(const struct pmt_operand *e, struct pmt_fctx *c,
					const struct pmt_xmem *m)
{
	/* a saved value the program read once into a slot (read_once) */
	if (pmt_use_vars && e->src == PMT_FSRC_EXPR)
		return m->slot[e->off & (PMT_XSLOTS - 1)];
	if (e->src != PMT_FSRC_FIELD || !(e->flags & PMT_FFLAG_CTX))
		return pmt_fetch_base(e, c);
	return pmt_ctx_field((void *)m->ctx, e->off, e->size, e->flags & PMT_FFLAG_SIGNED);
}

/* A binary operation of a and b, in its type f: false if code is none */
static __always_inline bool pmt_x_binary(__u8 code, __u64 a, __u64 b, __u8 f, __u64 *v)
{
	bool sg = f & PMT_XF_SIGNED;

	switch (code) {
	case PMT_X_ADD: *v = a + b; break;
	case PMT_X_SUB: *v = a - b; break;
	case PMT_X_MUL: *v = a * b; break;
	case PMT_X_DIV: *v = !b ? 0 : sg ? pmt_x_sdiv(a, b, false) : a / b; break;
	case PMT_X_MOD: *v = !b ? a : sg ? pmt_x_sdiv(a, b, true) : a % b; break;
	case PMT_X_AND: *v = a & b; break;
	case PMT_X_OR: *v = a | b; break;
	case PMT_X_XOR: *v = a ^ b; break;
	case PMT_X_SHL: *v = a << (b & (f & PMT_XF_32 ? 31 : 63)); break;
	case PMT_X_SHR:
		b &= f & PMT_XF_32 ? 31 : 63;
		*v = sg ? (__u64)((__s64)a >> b) : a >> b;
		break;
	case PMT_X_EQ: *v = a == b; break;
	case PMT_X_NE: *v = a != b; break;
	/* signed order is unsigned order with the sign bits flipped */
	case PMT_X_LT: *v = (a ^ ((__u64)sg << 63)) < (b ^ ((__u64)sg << 63)); break;
	case PMT_X_LE: *v = (a ^ ((__u64)sg << 63)) <= (b ^ ((__u64)sg << 63)); break;
	case PMT_X_LAND: *v = a && b; break;
	case PMT_X_LOR: *v = a || b; break;
	default: return false;
	}
	return true;
}

static long pmt_x_step(__u32 i, void *ctx)
{
	struct pmt_xrun *r = ctx;
	const struct pmt_expr_op *op;
	struct pmt_xmem *m = r->m;
	const struct pmt_expr *x = bpf_map_lookup_elem(&pmt_exprs, &m->idx);
	__u64 sp = m->sp, a, b, v, k = i;
	__u8 f, code;
	bool sg;

	if (!x || i >= x->n || i >= PMT_EXPR_OPS)
		return 1;
	/* masked in the register the load uses: clang drops a mask it knows
	 * to change nothing, and the verifier bounds only the copy checked */
	asm volatile("%0 &= %1" : "+r"(k) : "i"(PMT_EXPR_OPS - 1));
	op = &x->op[k];
	f = op->flags;
	sg = f & PMT_XF_SIGNED;
	code = op->code;
	/* a push: an operand's or a number's, alone or before the
	 * operation it was fused with (PMT_X_PUSH_*) */
	if (code <= PMT_X_CONST || (code & (PMT_X_PUSH_O | PMT_X_PUSH_K))) {
		if (sp >= PMT_EXPR_STACK)
			return 1;
		PMT_XST(m, sp) = code == PMT_X_CONST || (code & PMT_X_PUSH_K)
					 ? op->k
					 : pmt_x_leaf(&op->o, &r->c, m);
		m->sp = ++sp;
		if (code <= PMT_X_CONST)
			return 0;
		code &= PMT_X_CODE;
	}
	if (!sp || sp > PMT_EXPR_STACK)
		return 1;
	if (pmt_use_vars && code >= PMT_X_VLOAD)
		return pmt_x_var(op, code, m, sp);
	a = pmt_x_type(PMT_XST(m, sp - 1), f);
	if (code == PMT_X_LOAD) {
		PMT_XST(m, sp - 1) = pmt_x_load(&r->c, op, PMT_XST(m, sp - 1), sg);
		return 0;
	}
	if (code == PMT_X_STORE) {
		m->slot[op->k & (PMT_XSLOTS - 1)] = PMT_XST(m, sp - 1);
		m->sp = sp - 1;
		return 0;
	}
	if (code <= PMT_X_BSWAP) {
		PMT_XST(m, sp - 1) = pmt_x_unary(op, code, a, f);
		return 0;
	}
	if (sp < 2)
		return 1;
	if (code == PMT_X_SEL)
		return pmt_x_sel(m, sp, f);
	b = a;
	a = pmt_x_type(PMT_XST(m, sp - 2), f);
	/* PMT_XF_REV: pushed the other way round; swapped without a branch */
	v = (a ^ b) & -(__u64) !!(f & PMT_XF_REV);
	a ^= v;
	b ^= v;
	if (!pmt_x_binary(code, a, b, f, &v))
		return 1;
	if (code < PMT_X_EQ)
		v = pmt_x_type(v, f);
	PMT_XST(m, sp - 2) = v;
	m->sp = sp - 1;
	return 0;
}

/* Program idx (pmt_exprs) over this event: probe the probe's id, has_rec
 * whether pmt_scratch holds the copy of its record. Numbers only: the
 * verifier would see a pointer the caller passed in memory as a number. */
/* the key of the per-CPU maps, in .rodata: not a slot of the frame */
static const __u32 pmt_x_key0 = 0;

__noinline int pmt_x_exec(__u32 idx, __u32 probe, __u32 has_rec)
{
	/* pid_tgid fetched now, not by the first leaf that wants it: a
	 * callback's state that changes the caller's frame (0, then a number)
	 * is one more pass of the kernel's check of the loop (6.7 on checks
	 * a callback until its states repeat) */
	struct pmt_xrun r = {.c = {.probe = probe, .pid_tgid = bpf_get_current_pid_tgid()}};
	struct pmt_event *e;

	r.m = bpf_map_lookup_elem(&pmt_xmem, &pmt_x_key0);
	if (!r.m)
		return 0;
	if (has_rec) {
		e = bpf_map_lookup_elem(&pmt_scratch, &pmt_x_key0);
		r.c.rec = e ? e->data : NULL;
	}
	r.m->idx = idx;
	r.m->sp = 0;
	bpf_loop(PMT_EXPR_OPS, pmt_x_step, &r, 0);
	return 0;
}
