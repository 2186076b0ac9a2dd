// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Generated programs (src/filter/xgen.c) against the machine's reference
 * (pmt_expr__eval): random programs of every operation, type and operand
 * run through a small BPF interpreter here, with helpers and maps of its
 * own, must store what the reference stores; saved values and member
 * reads as bpf/expr.bpf.c has them; and what cannot be generated is
 * refused. The kernel runs the same programs in tests/runtime/programs.sh.
 */
#include <stdlib.h>
#include <string.h>
#include "filter/expr.h"
#include "filter/xgen.h"
#include "test.h"

enum { FD_XMEM = 11, FD_VARS, FD_STRVARS, FD_HITS, FD_STATS, FD_FAULTS, FD_PROGS };

#define NVARS 64
#define ORIGIN 5000ULL
#define CPID 4242ULL
#define PROBE 7u

/* What the interpreter's helpers and maps hold */
struct vm {
	uint8_t ctx[PMT_CTX_DIRECT];
	struct pmt_xmem xmem;
	struct pmt_var_key vkeys[NVARS];
	uint64_t vvals[NVARS];
	int nvars;
	uint64_t counters[8][2 * PMT_MAX_PROBES];
	int tail_calls;
};

static const struct pmt_xgen_maps maps = {FD_XMEM,  FD_VARS,   FD_STRVARS, FD_HITS,
					  FD_STATS, FD_FAULTS, FD_PROGS};

static uint64_t *var_find(struct vm *vm, const void *key)
{
	int i;

	for (i = 0; i < vm->nvars; i++)
		if (!memcmp(&vm->vkeys[i], key, sizeof(vm->vkeys[i])))
			return &vm->vvals[i];
	return NULL;
}

static uint64_t helper(struct vm *vm, int32_t fn, uint64_t *r)
{
	uint64_t *v;
	uint32_t k;

	switch (fn) {
	case BPF_FUNC_map_lookup_elem:
		k = *(const uint32_t *)(uintptr_t)r[2];
		if (r[1] == FD_XMEM)
			return k ? 0 : (uintptr_t)&vm->xmem;
		if (r[1] == FD_VARS)
			return (uintptr_t)var_find(vm, (const void *)(uintptr_t)r[2]);
		if (r[1] >= FD_HITS && r[1] <= FD_FAULTS && k < 2 * PMT_MAX_PROBES)
			return (uintptr_t)&vm->counters[r[1] - FD_HITS][k];
		return 0;
	case BPF_FUNC_map_update_elem:
		if (r[1] != FD_VARS || vm->nvars == NVARS)
			return (uint64_t)-1;
		if (!(v = var_find(vm, (const void *)(uintptr_t)r[2]))) {
			memcpy(&vm->vkeys[vm->nvars], (const void *)(uintptr_t)r[2],
			       sizeof(vm->vkeys[0]));
			v = &vm->vvals[vm->nvars++];
		}
		*v = *(const uint64_t *)(uintptr_t)r[3];
		return 0;
	case BPF_FUNC_map_delete_elem:
		if ((v = var_find(vm, (const void *)(uintptr_t)r[2])))
			*v = 0; /* (none read back here after a delete) */
		return 0;
	case BPF_FUNC_ktime_get_ns: return 123456789;
	case BPF_FUNC_get_current_pid_tgid: return 0x1c8000001c9ULL;
	case BPF_FUNC_get_current_uid_gid: return 0x3e9000003e8ULL;
	case BPF_FUNC_get_smp_processor_id: return 1;
	case BPF_FUNC_probe_read_user:
	case BPF_FUNC_probe_read_kernel:
		/* every address faults here, as pmt_expr__eval reads 0 */
		memset((void *)(uintptr_t)r[1], 0, r[2]);
		return (uint64_t)-14;
	case BPF_FUNC_tail_call:
		/* (the back entry: the aggregation's update) */
		vm->tail_calls += r[2] == FD_PROGS && r[3] == 9;
		return (uint64_t)-2;
	default: return 0xdead;
	}
}

static uint64_t alu(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_DIV: return b ? a / b : 0;
	case BPF_MOD: return b ? a % b : a;
	case BPF_OR: return a | b;
	case BPF_AND: return a & b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 63);
	case BPF_RSH: return a >> (b & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)a >> (b & 63));
	case BPF_NEG: return -a;
	case BPF_MOV: return b;
	default: return 0xbad;
	}
}

static bool jump(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_JA: return true;
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSLT: return (int64_t)a < (int64_t)b;
	case BPF_JSLE: return (int64_t)a <= (int64_t)b;
	case BPF_JSGE: return (int64_t)a >= (int64_t)b;
	default: return false;
	}
}

static uint64_t load_sized(uintptr_t at, uint8_t size)
{
	switch (size) {
	case BPF_B: return *(const uint8_t *)at;
	case BPF_H: return *(const uint16_t *)at;
	case BPF_W: return *(const uint32_t *)at;
	default: return *(const uint64_t *)at;
	}
}

static void store_sized(uintptr_t at, uint8_t size, uint64_t v)
{
	switch (size) {
	case BPF_B: *(uint8_t *)at = (uint8_t)v; break;
	case BPF_H: *(uint16_t *)at = (uint16_t)v; break;
	case BPF_W: *(uint32_t *)at = (uint32_t)v; break;
	default: *(uint64_t *)at = v; break;
	}
}

/* BPF's semantics for what xgen.c emits; the exit value, or -1 where
 * the program ran off its end or too long */
static int64_t run(struct vm *vm, const struct bpf_insn *v, size_t n)
{
	uint64_t r[11] = {0}, stack[64] = {0}, b;
	size_t pc = 0, steps = 0;

	r[1] = (uintptr_t)vm->ctx;
	r[10] = (uintptr_t)&stack[64];
	while (pc < n && steps++ < 100000) {
		const struct bpf_insn *i = &v[pc++];
		uint8_t cls = BPF_CLASS(i->code), op = BPF_OP(i->code);

		b = BPF_SRC(i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;
		if (cls == BPF_ALU64) {
			r[i->dst_reg] = alu(op, r[i->dst_reg], b);
		} else if (cls == BPF_ALU && op == BPF_END) {
			b = r[i->dst_reg];
			r[i->dst_reg] = i->imm == 16   ? __builtin_bswap16((uint16_t)b)
					: i->imm == 32 ? __builtin_bswap32((uint32_t)b)
						       : __builtin_bswap64(b);
		} else if (i->code == (BPF_LD | BPF_DW | BPF_IMM)) {
			r[i->dst_reg] = (uint32_t)i->imm | (uint64_t)(uint32_t)v[pc++].imm << 32;
		} else if (cls == BPF_LDX) {
			r[i->dst_reg] = load_sized(r[i->src_reg] + i->off, BPF_SIZE(i->code));
		} else if (cls == BPF_STX || cls == BPF_ST) {
			store_sized(r[i->dst_reg] + i->off, BPF_SIZE(i->code),
				    cls == BPF_ST ? (uint64_t)(int64_t)i->imm : r[i->src_reg]);
		} else if (cls == BPF_JMP && op == BPF_CALL) {
			r[0] = helper(vm, i->imm, r);
		} else if (cls == BPF_JMP && op == BPF_EXIT) {
			return (int64_t)r[0];
		} else if (cls == BPF_JMP) {
			if (jump(op, r[i->dst_reg], b))
				pc += i->off;
		} else {
			return -1;
		}
	}
	return -1;
}

/* The operands' values, the same for the reference and the context */
static uint64_t value_of(const struct pmt_operand *o, void *arg)
{
	const struct vm *vm = arg;
	uint64_t v = 0;

	switch (o->src) {
	case PMT_FSRC_FIELD:
		memcpy(&v, vm->ctx + o->off, o->size);
		if ((o->flags & PMT_FFLAG_SIGNED) && o->size < 8)
			v = (uint64_t)((int64_t)(v << (64 - 8 * o->size)) >> (64 - 8 * o->size));
		return v;
	case PMT_FSRC_PID: return 0x1c8;
	case PMT_FSRC_TID: return 0x1c9;
	case PMT_FSRC_UID: return 0x3e8;
	case PMT_FSRC_GID: return 0x3e9;
	case PMT_FSRC_CPU: return 1;
	case PMT_FSRC_NSECS: return 123456789;
	case PMT_FSRC_ELAPSED: return 123456789 - ORIGIN;
	case PMT_FSRC_CPID: return CPID;
	case PMT_FSRC_PROBE: return PROBE;
	default: return 0;
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void random_operand(uint64_t *s, struct pmt_operand *o)
{
	static const uint8_t srcs[] = {PMT_FSRC_FIELD,	 PMT_FSRC_FIELD, PMT_FSRC_FIELD,
				       PMT_FSRC_PID,	 PMT_FSRC_TID,	 PMT_FSRC_UID,
				       PMT_FSRC_GID,	 PMT_FSRC_CPU,	 PMT_FSRC_NSECS,
				       PMT_FSRC_ELAPSED, PMT_FSRC_CPID,	 PMT_FSRC_PROBE};
	uint8_t size = (uint8_t)(1u << (rnd(s) % 4));

	memset(o, 0, sizeof(*o));
	o->src = srcs[rnd(s) % sizeof(srcs)];
	if (o->src != PMT_FSRC_FIELD)
		return;
	o->size = size;
	o->off = (uint16_t)(8 + size * (rnd(s) % ((PMT_CTX_DIRECT - 8) / size)));
	o->off -= o->off % size;
	o->flags = PMT_FFLAG_CTX | (rnd(s) % 2 ? PMT_FFLAG_SIGNED : 0);
}

static uint64_t random_const(uint64_t *s)
{
	static const uint64_t edges[] = {
		0,  1,		2,	    7,		31,	      32,	    63,
		64, 0x7fffffff, 0x80000000, 0xffffffff, (uint64_t)-1, (uint64_t)-7, 1ULL << 63};

	return rnd(s) % 2 ? edges[rnd(s) % (sizeof(edges) / 8)] : rnd(s);
}

/* A random program of the machine's operations (stack discipline kept),
 * its values stored in slots 0..3 */
static void random_program(uint64_t *s, struct pmt_expr *x)
{
	uint32_t d = 0, n = 0, len = 4 + rnd(s) % 40;

	memset(x, 0, sizeof(*x));
	while (n < len && n < PMT_EXPR_OPS - 1) {
		struct pmt_expr_op *op = &x->op[n++];
		uint64_t r = rnd(s) % 10;

		op->flags = (uint8_t)(rnd(s) & (PMT_XF_32 | PMT_XF_SIGNED | PMT_XF_REV));
		if (d < 2 || (r < 3 && d < PMT_EXPR_STACK - 1)) {
			op->code = rnd(s) % 2 ? PMT_X_CONST : PMT_X_OPERAND;
			op->k = random_const(s);
			random_operand(s, &op->o);
			d++;
		} else if (r == 3) {
			op->code = PMT_X_NEG + rnd(s) % 4;
			op->k = 2u << (rnd(s) % 3);
		} else if (r == 4 && d >= 3) {
			op->code = PMT_X_SEL;
			d -= 2;
		} else if (r == 5) {
			op->code = PMT_X_STORE;
			op->k = rnd(s) % 4;
			d--;
		} else {
			op->code = PMT_X_ADD + rnd(s) % (PMT_X_LOR - PMT_X_ADD + 1);
			if (r == 6 && d < PMT_EXPR_STACK - 1) { /* a fused push */
				op->code |= rnd(s) % 2 ? PMT_X_PUSH_K : PMT_X_PUSH_O;
				op->k = random_const(s);
				random_operand(s, &op->o);
				d++;
			}
			d--;
		}
	}
	x->n = n;
}

static void vm_init(struct vm *vm, uint64_t *s)
{
	size_t i;

	memset(vm, 0, sizeof(*vm));
	for (i = 0; i < sizeof(vm->ctx); i++)
		vm->ctx[i] = (uint8_t)rnd(s);
}

TEST(xgen_random_programs_as_the_reference)
{
	struct pmt_xgen_probe p = {.probe = PROBE,
				   .back = true,
				   .back_at = 9,
				   .use_vars = true,
				   .elapsed_origin = ORIGIN,
				   .cpid = CPID};
	static struct pmt_expr x;
	static struct vm vm;
	uint64_t seed = 0x9e3779b97f4a7c15ULL, slots[PMT_XSLOTS];
	struct bpf_insn *v;
	int i, bad = 0;
	size_t n;

	for (i = 0; i < 3000 && bad < 3; i++) {
		random_program(&seed, &x);
		vm_init(&vm, &seed);
		memset(slots, 0, sizeof(slots));
		pmt_expr__eval(&x, value_of, &vm, slots);
		p.xprog = &x;
		if (pmt_xgen__build(&p, &maps, &v, &n)) {
			FAIL_AT("program %d not generated", i);
			bad++;
			continue;
		}
		if (run(&vm, v, n) != 1 || vm.tail_calls != 1 ||
		    vm.counters[FD_STATS - FD_HITS][PMT_STAT_XGEN_BACK] != 1) {
			FAIL_AT("program %d: its end not the machine's return", i);
			bad++;
		}
		if (memcmp(slots, vm.xmem.slot, sizeof(slots))) {
			struct pmt_buf b = {0};

			pmt_expr__dump(&b, &x);
			FAIL_AT("program %d: slots 0-3 %#llx %#llx %#llx %#llx, the reference's %#llx "
				"%#llx %#llx %#llx:\n%.*s",
				i, (unsigned long long)vm.xmem.slot[0],
				(unsigned long long)vm.xmem.slot[1],
				(unsigned long long)vm.xmem.slot[2],
				(unsigned long long)vm.xmem.slot[3], (unsigned long long)slots[0],
				(unsigned long long)slots[1], (unsigned long long)slots[2],
				(unsigned long long)slots[3], (int)b.len, b.p);
			pmt_buf__free(&b);
			bad++;
		}
		free(v);
	}
}

static struct pmt_expr_op op_of(uint8_t code, uint8_t flags, uint64_t k)
{
	return (struct pmt_expr_op){.code = code, .flags = flags, .k = k};
}

/* @3[5, 6] = 40 under a guard that holds, read back into slot 0; @3[9]
 * = 1 under one that does not: none (slot 1); has_key @3[5, 6] (slot 2);
 * @4[5] = 77 read back by a VLOAD fused with its key, a field of the
 * context (slot 3). The statements' program then deletes @3[5, 6] and
 * counts the probe's hit. */
TEST(xgen_saved_values)
{
	static struct pmt_expr x, st;
	static struct vm vm;
	struct pmt_xgen_probe p = {.xprog = &x, .sprog = &st, .probe = PROBE, .use_vars = true};
	struct pmt_var_key k56 = {.var = 3, .key = 5, .key2 = 6};
	const struct pmt_expr_op ops[] = {
		op_of(PMT_X_CONST, 0, 5),
		op_of(PMT_X_CONST, 0, 6),
		op_of(PMT_X_CONST, 0, 40),
		op_of(PMT_X_CONST, 0, 1),
		op_of(PMT_X_VSTORE, PMT_XF_GUARD | PMT_XF_KEY2, 3),
		op_of(PMT_X_CONST, 0, 5),
		op_of(PMT_X_CONST, 0, 6),
		op_of(PMT_X_VLOAD, PMT_XF_KEY2, 3),
		op_of(PMT_X_STORE, 0, 0),
		op_of(PMT_X_CONST, 0, 9),
		op_of(PMT_X_CONST, 0, 1),
		op_of(PMT_X_CONST, 0, 0),
		op_of(PMT_X_VSTORE, PMT_XF_GUARD, 3),
		op_of(PMT_X_CONST, 0, 9),
		op_of(PMT_X_VLOAD, 0, 3),
		op_of(PMT_X_STORE, 0, 1),
		op_of(PMT_X_CONST, 0, 5),
		op_of(PMT_X_CONST, 0, 6),
		op_of(PMT_X_VLOAD, PMT_XF_HAS | PMT_XF_KEY2, 3),
		op_of(PMT_X_STORE, 0, 2),
		op_of(PMT_X_CONST, 0, 5),
		op_of(PMT_X_CONST, 0, 77),
		op_of(PMT_X_VSTORE, 0, 4),
		op_of(PMT_X_VLOAD | PMT_X_PUSH_O, 0, 4),
		op_of(PMT_X_STORE, 0, 3),
	};
	struct bpf_insn *v;
	size_t n;

	memcpy(x.op, ops, sizeof(ops));
	x.n = sizeof(ops) / sizeof(ops[0]);
	x.op[23].o = (struct pmt_operand){
		.src = PMT_FSRC_FIELD, .size = 8, .off = 8, .flags = PMT_FFLAG_CTX};
	st.op[0] = op_of(PMT_X_CONST, 0, 5);
	st.op[1] = op_of(PMT_X_CONST, 0, 6);
	st.op[2] = op_of(PMT_X_VDEL, PMT_XF_KEY2, 3);
	st.n = 3;
	memset(&vm, 0, sizeof(vm));
	vm.ctx[8] = 5;
	ASSERT_EQ(pmt_xgen__build(&p, &maps, &v, &n), 0);
	ASSERT_EQ(run(&vm, v, n), 1);
	free(v);
	ASSERT_EQ(vm.xmem.slot[0], 40);
	ASSERT_EQ(vm.xmem.slot[1], 0);
	ASSERT_EQ(vm.xmem.slot[2], 1);
	ASSERT_EQ(vm.xmem.slot[3], 77);
	ASSERT_TRUE(var_find(&vm, &k56) != NULL);
	ASSERT_EQ(*var_find(&vm, &k56), 0); /* deleted by the statements */
	ASSERT_EQ(vm.nvars, 2);		    /* @3[9]'s guard was 0 */
	ASSERT_EQ(vm.counters[0][PROBE], 1);
	ASSERT_EQ(vm.tail_calls, 0);
}

/* A member read that faults reads 0, counted twice (the probe's and the
 * run's), as pmt_read_failed */
TEST(xgen_member_fault)
{
	static struct pmt_expr x;
	static struct vm vm;
	struct pmt_xgen_probe p = {.xprog = &x, .probe = PROBE, .back = true, .use_vars = true};
	struct bpf_insn *v;
	size_t n;

	x.op[0] = op_of(PMT_X_CONST, 0, 0xffff888000001000ULL);
	x.op[1] = op_of(PMT_X_LOAD, PMT_XF_SIGNED, 16);
	x.op[1].o.size = 4;
	x.op[2] = op_of(PMT_X_STORE, 0, 2);
	x.n = 3;
	memset(&vm, 0, sizeof(vm));
	vm.xmem.slot[2] = 99;
	ASSERT_EQ(pmt_xgen__build(&p, &maps, &v, &n), 0);
	ASSERT_EQ(run(&vm, v, n), 1);
	free(v);
	ASSERT_EQ(vm.xmem.slot[2], 0);
	ASSERT_EQ(vm.counters[FD_STATS - FD_HITS][PMT_STAT_MEMBER_FAULT], 1);
	ASSERT_EQ(vm.counters[FD_FAULTS - FD_HITS][PROBE * 2 + 1], 1);
}

/* What the machine stops at, or what is not generated, is refused */
TEST(xgen_refusals)
{
	static struct pmt_expr x;

	memset(&x, 0, sizeof(x));
	x.op[0] = op_of(PMT_X_ADD, 0, 0); /* nothing on the stack */
	x.n = 1;
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
	x.op[0] = op_of(PMT_X_CONST, 0, 1);
	x.op[1] = op_of(PMT_X_SLOAD, 0, 0); /* strings: the machine's */
	x.n = 2;
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
	x.op[1] = op_of(PMT_X_VLOAD, 0, 0); /* saved values in a session of none */
	ASSERT_TRUE(!pmt_xgen__supported(&x, false));
	ASSERT_TRUE(pmt_xgen__supported(&x, true));
	/* has_key under a guard: a value or none, as the guard says */
	x.op[1] = op_of(PMT_X_CONST, 0, 1);
	x.op[2] = op_of(PMT_X_VDEL, PMT_XF_GUARD | PMT_XF_HAS, 0);
	x.n = 3;
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
	x.op[2] = op_of(PMT_X_VDEL, PMT_XF_GUARD, 0);
	ASSERT_TRUE(pmt_xgen__supported(&x, true));
	x.n = 2;
	x.op[1] = op_of(PMT_X_VLOAD, 0, 0);
	x.op[0] = op_of(PMT_X_OPERAND, 0, 0); /* a field not aligned */
	x.op[0].o = (struct pmt_operand){
		.src = PMT_FSRC_FIELD, .size = 4, .off = 10, .flags = PMT_FFLAG_CTX};
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
	x.op[0].o.off = 12;
	ASSERT_TRUE(pmt_xgen__supported(&x, true));
	x.op[0].o.flags = 0; /* a field of the record's copy */
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
	x.op[0].o = (struct pmt_operand){.src = PMT_FSRC_COMM}; /* a string */
	ASSERT_TRUE(!pmt_xgen__supported(&x, true));
}
