// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A probe's expression programs as one BPF program (xgen.h). The machine
 * (bpf/expr.bpf.c) takes ~30 ns a step here, a bpf_loop call and a
 * dispatch over every kind of operation; what it steps through is known
 * to user space before the run, so each operation becomes the few
 * instructions it stands for. The frame:
 *
 *   r10 - 8               the lookups' key (0)
 *   r10 - 32 .. - 9       a saved value's key (struct pmt_var_key)
 *   r10 - 40              what a member's read brings
 *   r10 - 48              a counter's key
 *   r10 - 56 - 8 * i      the machine's stack, value i (PMT_EXPR_STACK)
 *   below                 the statements' own slots (PMT_XSLOTS)
 *
 * r6 holds the context, r7 the CPU's pmt_xmem; every value lives in the
 * frame between operations (helpers take r1-r5). The aggregation's
 * program stores its slots in pmt_xmem, where the update reads them; the
 * statements' program, which the machine runs after the update, keeps its
 * own on the frame, so that it cannot change what the update reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "filter/xgen.h"

#define FP 10 /* the frame pointer register */
#define CTX 6
#define XMEM 7
#define OFF_KEY0 (-8)
#define OFF_VKEY (-32)
#define OFF_TMP (-40)
#define OFF_CKEY (-48)
#define OFF_ST(i) (-56 - 8 * (int)(i))
#define OFF_LSLOT(k) (OFF_ST(PMT_EXPR_STACK) - 8 * (int)(k))

_Static_assert(-OFF_LSLOT(PMT_XSLOTS) <= 512, "xgen: the frame within BPF's 512 bytes");

struct gen {
	struct bpf_insn *v;
	size_t n, cap;
	bool oom, unsupported;
	const struct pmt_xgen_probe *p;
	const struct pmt_xgen_maps *m;
	bool stmts;	  /* the statements' program: slots on the frame */
	uint32_t lstored; /* its slots stored so far (bit k) */
	uint32_t d;	  /* values on the machine's stack */
};

static void emit(struct gen *g, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 256;
		struct bpf_insn *v = realloc(g->v, cap * sizeof(*v));

		if (!v) {
			g->oom = true;
			return;
		}
		g->v = v;
		g->cap = cap;
	}
	g->v[g->n++] = (struct bpf_insn){
		.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

#define ALU_K(g, op, dst, imm) emit(g, BPF_ALU64 | BPF_K | (op), dst, 0, 0, imm)
#define ALU_X(g, op, dst, src) emit(g, BPF_ALU64 | BPF_X | (op), dst, src, 0, 0)
#define LDX(g, sz, dst, src, off) emit(g, BPF_LDX | BPF_MEM | (sz), dst, src, off, 0)
#define STX(g, sz, dst, src, off) emit(g, BPF_STX | BPF_MEM | (sz), dst, src, off, 0)
#define ST_K(g, sz, dst, off, imm) emit(g, BPF_ST | BPF_MEM | (sz), dst, 0, off, imm)
#define JMP_K(g, op, dst, imm, off) emit(g, BPF_JMP | BPF_K | (op), dst, 0, off, imm)
#define JMP_X(g, op, dst, src, off) emit(g, BPF_JMP | BPF_X | (op), dst, src, off, 0)
#define CALL(g, fn) emit(g, BPF_JMP | BPF_CALL, 0, 0, 0, fn)

static void ld_imm64(struct gen *g, uint8_t dst, uint8_t src, uint64_t v)
{
	emit(g, BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, (int32_t)(uint32_t)v);
	emit(g, 0, 0, 0, 0, (int32_t)(uint32_t)(v >> 32));
}

static void ld_map(struct gen *g, uint8_t dst, int fd)
{
	ld_imm64(g, dst, BPF_PSEUDO_MAP_FD, (uint32_t)fd);
}

/* A forward jump's place, and its target set to here */
static size_t jmp_from(const struct gen *g)
{
	return g->n;
}

static void jmp_here(struct gen *g, size_t at)
{
	if (!g->oom)
		g->v[at].off = (int16_t)(g->n - at - 1);
}

/* r (64 bits) brought to type f (PMT_XF_32, PMT_XF_SIGNED) */
static void to_type(struct gen *g, uint8_t r, uint8_t f)
{
	if (!(f & PMT_XF_32))
		return;
	ALU_K(g, BPF_LSH, r, 32);
	ALU_K(g, (f & PMT_XF_SIGNED) ? BPF_ARSH : BPF_RSH, r, 32);
}

/* r's low bytes (1 to 8) extended */
static void extend(struct gen *g, uint8_t r, uint32_t bytes, bool sg)
{
	if (bytes >= 8)
		return;
	ALU_K(g, BPF_LSH, r, (int32_t)(64 - 8 * bytes));
	ALU_K(g, sg ? BPF_ARSH : BPF_RSH, r, (int32_t)(64 - 8 * bytes));
}

/* (*map[key])++ for a per-CPU array of counters */
static void count(struct gen *g, int fd, uint32_t key)
{
	ST_K(g, BPF_W, FP, OFF_CKEY, (int32_t)key);
	ld_map(g, 1, fd);
	ALU_X(g, BPF_MOV, 2, FP);
	ALU_K(g, BPF_ADD, 2, OFF_CKEY);
	CALL(g, BPF_FUNC_map_lookup_elem);
	JMP_K(g, BPF_JEQ, 0, 0, 3);
	LDX(g, BPF_DW, 1, 0, 0);
	ALU_K(g, BPF_ADD, 1, 1);
	STX(g, BPF_DW, 0, 1, 0);
}

/* A tracepoint field read from the context itself (PMT_FFLAG_CTX):
 * naturally aligned, as the verifier takes a context's loads */
static bool leaf_ctx(struct gen *g, const struct pmt_operand *o)
{
	static const uint8_t sizes[9] = {[1] = BPF_B, [2] = BPF_H, [4] = BPF_W, [8] = BPF_DW};

	if ((o->size != 1 && o->size != 2 && o->size != 4 && o->size != 8) || o->off % o->size ||
	    o->off + o->size > PMT_CTX_DIRECT)
		return false;
	LDX(g, sizes[o->size], 0, CTX, (int16_t)o->off);
	if (o->flags & PMT_FFLAG_SIGNED)
		extend(g, 0, o->size, true);
	return true;
}

/* A common value: the helper that gives it, then its part */
static bool leaf_common(struct gen *g, const struct pmt_operand *o)
{
	switch (o->src) {
	case PMT_FSRC_PID:
		CALL(g, BPF_FUNC_get_current_pid_tgid);
		ALU_K(g, BPF_RSH, 0, 32);
		break;
	case PMT_FSRC_TID:
		CALL(g, BPF_FUNC_get_current_pid_tgid);
		extend(g, 0, 4, false);
		break;
	case PMT_FSRC_CPU: CALL(g, BPF_FUNC_get_smp_processor_id); break;
	case PMT_FSRC_UID:
		CALL(g, BPF_FUNC_get_current_uid_gid);
		extend(g, 0, 4, false);
		break;
	case PMT_FSRC_GID:
		CALL(g, BPF_FUNC_get_current_uid_gid);
		ALU_K(g, BPF_RSH, 0, 32);
		break;
	case PMT_FSRC_CGROUP: CALL(g, BPF_FUNC_get_current_cgroup_id); break;
	case PMT_FSRC_TASK: CALL(g, BPF_FUNC_get_current_task); break;
	case PMT_FSRC_NSECS: CALL(g, BPF_FUNC_ktime_get_ns); break;
	case PMT_FSRC_ELAPSED:
		CALL(g, BPF_FUNC_ktime_get_ns);
		ld_imm64(g, 1, 0, g->p->elapsed_origin);
		ALU_X(g, BPF_SUB, 0, 1);
		break;
	case PMT_FSRC_CPID: ld_imm64(g, 0, 0, g->p->cpid); break;
	case PMT_FSRC_PROBE: ALU_K(g, BPF_MOV, 0, (int32_t)g->p->probe); break;
	default: return false;
	}
	return true;
}

/* Push operand o's value (pmt_x_leaf) */
static void push_leaf(struct gen *g, const struct pmt_operand *o)
{
	bool ok;

	if (o->src == PMT_FSRC_EXPR) {
		uint32_t k = o->off & (PMT_XSLOTS - 1);

		/* a slot the statements stored is theirs; any other is what
		 * the aggregation's program left, as the machine has it */
		ok = g->p->use_vars;
		if (g->stmts && (g->lstored & (1u << k)))
			LDX(g, BPF_DW, 0, FP, (int16_t)OFF_LSLOT(k));
		else
			LDX(g, BPF_DW, 0, XMEM, (int16_t)(offsetof(struct pmt_xmem, slot) + 8 * k));
	} else if (o->src == PMT_FSRC_FIELD) {
		ok = (o->flags & PMT_FFLAG_CTX) && leaf_ctx(g, o);
	} else {
		ok = leaf_common(g, o);
	}
	if (!ok || g->d >= PMT_EXPR_STACK) {
		g->unsupported = true;
		return;
	}
	STX(g, BPF_DW, FP, 0, (int16_t)OFF_ST(g->d));
	g->d++;
}

static void push_k(struct gen *g, uint64_t k)
{
	if (g->d >= PMT_EXPR_STACK) {
		g->unsupported = true;
		return;
	}
	ld_imm64(g, 0, 0, k);
	STX(g, BPF_DW, FP, 0, (int16_t)OFF_ST(g->d));
	g->d++;
}

/* r1 = r1 OP r2 signed (PMT_X_DIV, PMT_X_MOD) through unsigned
 * division of their magnitudes, as pmt_x_sdiv; BPF's x / 0 is 0 and
 * x % 0 is x, which the signs then leave as the machine's */
static void sdiv(struct gen *g, bool mod)
{
	ALU_X(g, BPF_MOV, 3, 1);
	JMP_K(g, BPF_JSGE, 3, 0, 1);
	ALU_K(g, BPF_NEG, 3, 0);
	ALU_X(g, BPF_MOV, 4, 2);
	JMP_K(g, BPF_JSGE, 4, 0, 1);
	ALU_K(g, BPF_NEG, 4, 0);
	ALU_X(g, mod ? BPF_MOD : BPF_DIV, 3, 4);
	ALU_X(g, BPF_MOV, 5, 1);
	if (!mod)
		ALU_X(g, BPF_XOR, 5, 2);
	JMP_K(g, BPF_JSGE, 5, 0, 1);
	ALU_K(g, BPF_NEG, 3, 0);
	ALU_X(g, BPF_MOV, 1, 3);
}

/* r1 = (r1 OP r2) as 0 or 1: a comparison, or && / || of both */
static void truth(struct gen *g, uint8_t code, bool sg)
{
	static const uint8_t jumps[2][4] = {{BPF_JEQ, BPF_JNE, BPF_JLT, BPF_JLE},
					    {BPF_JEQ, BPF_JNE, BPF_JSLT, BPF_JSLE}};

	if (code == PMT_X_LAND || code == PMT_X_LOR) {
		bool and = code == PMT_X_LAND;

		ALU_K(g, BPF_MOV, 0, !and);
		JMP_K(g, and? BPF_JEQ : BPF_JNE, 1, 0, 2);
		JMP_K(g, and? BPF_JEQ : BPF_JNE, 2, 0, 1);
		ALU_K(g, BPF_MOV, 0, and);
	} else {
		ALU_K(g, BPF_MOV, 0, 1);
		JMP_X(g, jumps[sg][code - PMT_X_EQ], 1, 2, 1);
		ALU_K(g, BPF_MOV, 0, 0);
	}
	ALU_X(g, BPF_MOV, 1, 0);
}

/* A binary operation of the two values on top (pmt_x_binary) */
static void binary(struct gen *g, uint8_t code, uint8_t f)
{
	static const uint8_t alu[] = {
		[PMT_X_ADD] = BPF_ADD, [PMT_X_SUB] = BPF_SUB, [PMT_X_MUL] = BPF_MUL,
		[PMT_X_DIV] = BPF_DIV, [PMT_X_MOD] = BPF_MOD, [PMT_X_AND] = BPF_AND,
		[PMT_X_OR] = BPF_OR,   [PMT_X_XOR] = BPF_XOR, [PMT_X_SHL] = BPF_LSH,
		[PMT_X_SHR] = BPF_RSH,
	};
	bool sg = f & PMT_XF_SIGNED, rev = f & PMT_XF_REV;

	if (g->d < 2) {
		g->unsupported = true;
		return;
	}
	/* the left operand into r1, the right into r2 */
	LDX(g, BPF_DW, rev ? 2 : 1, FP, (int16_t)OFF_ST(g->d - 2));
	LDX(g, BPF_DW, rev ? 1 : 2, FP, (int16_t)OFF_ST(g->d - 1));
	to_type(g, 1, f);
	to_type(g, 2, f);
	if (code >= PMT_X_EQ) {
		truth(g, code, sg);
	} else if (sg && (code == PMT_X_DIV || code == PMT_X_MOD)) {
		sdiv(g, code == PMT_X_MOD);
	} else {
		if (code == PMT_X_SHL || code == PMT_X_SHR)
			ALU_K(g, BPF_AND, 2, (f & PMT_XF_32) ? 31 : 63);
		ALU_X(g, code == PMT_X_SHR && sg ? BPF_ARSH : alu[code], 1, 2);
	}
	if (code < PMT_X_EQ)
		to_type(g, 1, f);
	STX(g, BPF_DW, FP, 1, (int16_t)OFF_ST(g->d - 2));
	g->d--;
}

/* NEG, NOT, LNOT, BSWAP of the top (pmt_x_unary) */
static void unary(struct gen *g, const struct pmt_expr_op *op, uint8_t code)
{
	LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(g->d - 1));
	to_type(g, 1, op->flags);
	switch (code) {
	case PMT_X_NEG:
		ALU_K(g, BPF_NEG, 1, 0);
		to_type(g, 1, op->flags);
		break;
	case PMT_X_NOT:
		ALU_K(g, BPF_XOR, 1, -1);
		to_type(g, 1, op->flags);
		break;
	case PMT_X_LNOT:
		ALU_K(g, BPF_MOV, 0, 0);
		JMP_K(g, BPF_JNE, 1, 0, 1);
		ALU_K(g, BPF_MOV, 0, 1);
		ALU_X(g, BPF_MOV, 1, 0);
		break;
	default: /* BSWAP: to big-endian on a little-endian machine */
		emit(g, BPF_ALU | BPF_END | BPF_TO_BE, 1, 0, 0,
		     op->k == 2	  ? 16
		     : op->k == 4 ? 32
				  : 64);
		break;
	}
	STX(g, BPF_DW, FP, 1, (int16_t)OFF_ST(g->d - 1));
}

/* SEL: C on top, then B, then A: C ? A : B in the operation's type */
static void sel(struct gen *g, uint8_t f)
{
	if (g->d < 3) {
		g->unsupported = true;
		return;
	}
	LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(g->d - 1));
	LDX(g, BPF_DW, 2, FP, (int16_t)OFF_ST(g->d - 3));
	JMP_K(g, BPF_JNE, 1, 0, 1);
	LDX(g, BPF_DW, 2, FP, (int16_t)OFF_ST(g->d - 2));
	to_type(g, 2, f);
	STX(g, BPF_DW, FP, 2, (int16_t)OFF_ST(g->d - 3));
	g->d -= 2;
}

/* LOAD: the top, an address, replaced by the bytes at it + k: user
 * memory below the canonical split, the kernel's above; 0 and counted
 * where the read fails (pmt_x_load, pmt_read_failed) */
static void load(struct gen *g, const struct pmt_expr_op *op)
{
	uint32_t n = op->o.size > 8 ? 8 : op->o.size;
	size_t to_kernel, done, ok;

	if (!n) {
		g->unsupported = true;
		return;
	}
	ST_K(g, BPF_DW, FP, OFF_TMP, 0);
	LDX(g, BPF_DW, 3, FP, (int16_t)OFF_ST(g->d - 1));
	ALU_X(g, BPF_MOV, 4, 3);
	if (op->k) {
		ld_imm64(g, 2, 0, op->k);
		ALU_X(g, BPF_ADD, 3, 2);
	}
	ALU_X(g, BPF_MOV, 1, FP);
	ALU_K(g, BPF_ADD, 1, OFF_TMP);
	ALU_K(g, BPF_MOV, 2, (int32_t)n);
	to_kernel = jmp_from(g);
	JMP_K(g, BPF_JSLT, 4, 0, 0);
	CALL(g, BPF_FUNC_probe_read_user);
	done = jmp_from(g);
	emit(g, BPF_JMP | BPF_JA, 0, 0, 0, 0);
	jmp_here(g, to_kernel);
	CALL(g, BPF_FUNC_probe_read_kernel);
	jmp_here(g, done);
	ok = jmp_from(g);
	JMP_K(g, BPF_JEQ, 0, 0, 0);
	ST_K(g, BPF_DW, FP, OFF_TMP, 0);
	count(g, g->m->stats, PMT_STAT_MEMBER_FAULT);
	count(g, g->m->faults, (g->p->probe & (PMT_MAX_PROBES - 1)) * 2 + 1);
	jmp_here(g, ok);
	LDX(g, BPF_DW, 1, FP, OFF_TMP);
	extend(g, 1, n, op->flags & PMT_XF_SIGNED);
	STX(g, BPF_DW, FP, 1, (int16_t)OFF_ST(g->d - 1));
}

static void store(struct gen *g, uint64_t k)
{
	uint32_t slot = k & (PMT_XSLOTS - 1);

	LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(g->d - 1));
	if (g->stmts) {
		STX(g, BPF_DW, FP, 1, (int16_t)OFF_LSLOT(slot));
		g->lstored |= 1u << slot;
	} else {
		STX(g, BPF_DW, XMEM, 1, (int16_t)(offsetof(struct pmt_xmem, slot) + 8 * slot));
	}
	g->d--;
}

/* r1 = map, r2 = the saved value's key */
static void var_args(struct gen *g, int fd)
{
	ld_map(g, 1, fd);
	ALU_X(g, BPF_MOV, 2, FP);
	ALU_K(g, BPF_ADD, 2, OFF_VKEY);
}

/* has_key: a value or a string saved under the key, into r1 */
static void var_has(struct gen *g)
{
	size_t one, one2, done;

	var_args(g, g->m->vars);
	CALL(g, BPF_FUNC_map_lookup_elem);
	one = jmp_from(g);
	JMP_K(g, BPF_JNE, 0, 0, 0);
	var_args(g, g->m->strvars);
	CALL(g, BPF_FUNC_map_lookup_elem);
	one2 = jmp_from(g);
	JMP_K(g, BPF_JNE, 0, 0, 0);
	ALU_K(g, BPF_MOV, 1, 0);
	done = jmp_from(g);
	emit(g, BPF_JMP | BPF_JA, 0, 0, 0, 0);
	jmp_here(g, one);
	jmp_here(g, one2);
	ALU_K(g, BPF_MOV, 1, 1);
	jmp_here(g, done);
}

/* VLOAD, VSTORE, VDEL of variable op->k (pmt_x_var): the key's values
 * below the value stored, a guard on top where PMT_XF_GUARD says */
static void var(struct gen *g, const struct pmt_expr_op *op, uint8_t code)
{
	uint32_t two = !!(op->flags & PMT_XF_KEY2), n = (code == PMT_X_VSTORE ? 2 : 1) + two, base;
	size_t skip = 0;
	bool guard = (op->flags & PMT_XF_GUARD) && code != PMT_X_VLOAD;

	if (guard) {
		/* has_key under a guard: the machine leaves a value or none,
		 * as the guard says; this code's stack has one depth */
		if (g->d < 2 || g->d < n + 1 || (op->flags & PMT_XF_HAS)) {
			g->unsupported = true;
			return;
		}
		g->d--;
		LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(g->d));
		skip = jmp_from(g);
		JMP_K(g, BPF_JEQ, 1, 0, 0);
	}
	if (g->d < n) {
		g->unsupported = true;
		return;
	}
	base = g->d - n;
	ST_K(g, BPF_W, FP, OFF_VKEY, (int32_t)(uint32_t)op->k);
	ST_K(g, BPF_W, FP, OFF_VKEY + 4, 0);
	LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(base));
	STX(g, BPF_DW, FP, 1, OFF_VKEY + 8);
	if (two) {
		LDX(g, BPF_DW, 1, FP, (int16_t)OFF_ST(base + 1));
		STX(g, BPF_DW, FP, 1, OFF_VKEY + 16);
	} else {
		ST_K(g, BPF_DW, FP, OFF_VKEY + 16, 0);
	}
	g->d = base;
	if (op->flags & PMT_XF_HAS) {
		var_has(g);
		STX(g, BPF_DW, FP, 1, (int16_t)OFF_ST(base));
		g->d = base + 1;
	} else if (code == PMT_X_VLOAD) {
		var_args(g, g->m->vars);
		CALL(g, BPF_FUNC_map_lookup_elem);
		ALU_K(g, BPF_MOV, 1, 0);
		JMP_K(g, BPF_JEQ, 0, 0, 1);
		LDX(g, BPF_DW, 1, 0, 0);
		STX(g, BPF_DW, FP, 1, (int16_t)OFF_ST(base));
		g->d = base + 1;
	} else if (code == PMT_X_VDEL) {
		var_args(g, g->m->vars);
		CALL(g, BPF_FUNC_map_delete_elem);
	} else {
		var_args(g, g->m->vars);
		ALU_X(g, BPF_MOV, 3, FP);
		ALU_K(g, BPF_ADD, 3, OFF_ST(base + n - 1));
		ALU_K(g, BPF_MOV, 4, BPF_ANY);
		CALL(g, BPF_FUNC_map_update_elem);
	}
	if (guard)
		jmp_here(g, skip);
}

/* One operation, its fused push first (pmt_x_step) */
static void op_gen(struct gen *g, const struct pmt_expr_op *op)
{
	uint8_t code = op->code;

	if (code == PMT_X_OPERAND || (code & PMT_X_PUSH_O))
		push_leaf(g, &op->o);
	else if (code == PMT_X_CONST || (code & PMT_X_PUSH_K))
		push_k(g, op->k);
	if (code <= PMT_X_CONST || g->unsupported)
		return;
	code &= PMT_X_CODE;
	if (!g->d) {
		g->unsupported = true;
		return;
	}
	if (code >= PMT_X_VLOAD) {
		if (!g->p->use_vars || code > PMT_X_VDEL)
			g->unsupported = true;
		else
			var(g, op, code);
	} else if (code == PMT_X_LOAD) {
		load(g, op);
	} else if (code == PMT_X_STORE) {
		store(g, op->k);
	} else if (code <= PMT_X_BSWAP) {
		unary(g, op, code);
	} else if (code == PMT_X_SEL) {
		sel(g, op->flags);
	} else if (code <= PMT_X_LOR) {
		binary(g, code, op->flags);
	} else {
		g->unsupported = true;
	}
}

static void prog_gen(struct gen *g, const struct pmt_expr *x, bool stmts)
{
	uint32_t i;

	if (!x)
		return;
	g->stmts = stmts;
	g->d = 0;
	for (i = 0; i < x->n && i < PMT_EXPR_OPS && !g->unsupported; i++)
		op_gen(g, &x->op[i]);
}

/* The program's start: the context kept, the CPU's pmt_xmem found */
static void prologue(struct gen *g)
{
	ALU_X(g, BPF_MOV, CTX, 1);
	ST_K(g, BPF_DW, FP, OFF_KEY0, 0);
	ld_map(g, 1, g->m->xmem);
	ALU_X(g, BPF_MOV, 2, FP);
	ALU_K(g, BPF_ADD, 2, OFF_KEY0);
	CALL(g, BPF_FUNC_map_lookup_elem);
	JMP_K(g, BPF_JNE, 0, 0, 2);
	ALU_K(g, BPF_MOV, 0, 1);
	emit(g, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	ALU_X(g, BPF_MOV, XMEM, 0);
}

/* Back to the update (pmt_tp_xback), or the hit counted here (1:
 * tracepoint programs' value) */
static void epilogue(struct gen *g)
{
	if (g->p->back) {
		ALU_X(g, BPF_MOV, 1, CTX);
		ld_map(g, 2, g->m->progs);
		ALU_K(g, BPF_MOV, 3, (int32_t)g->p->back_at);
		CALL(g, BPF_FUNC_tail_call);
		count(g, g->m->stats, PMT_STAT_XGEN_BACK);
	} else {
		count(g, g->m->hits, g->p->probe);
	}
	ALU_K(g, BPF_MOV, 0, 1);
	emit(g, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

int pmt_xgen__build(const struct pmt_xgen_probe *p, const struct pmt_xgen_maps *m,
		    struct bpf_insn **insns, size_t *n)
{
	struct gen g = {.p = p, .m = m};

	prologue(&g);
	prog_gen(&g, p->xprog, false);
	prog_gen(&g, p->sprog, true);
	epilogue(&g);
	if (g.oom || g.unsupported || g.n > BPF_MAXINSNS) {
		free(g.v);
		return g.oom ? -ENOMEM : -EOPNOTSUPP;
	}
	*insns = g.v;
	*n = g.n;
	return 0;
}

bool pmt_xgen__supported(const struct pmt_expr *x, bool use_vars)
{
	struct pmt_xgen_probe p = {.xprog = x, .use_vars = use_vars};
	struct pmt_xgen_maps m = {0};
	struct bpf_insn *v;
	size_t n;

	if (pmt_xgen__build(&p, &m, &v, &n))
		return false;
	free(v);
	return true;
}
