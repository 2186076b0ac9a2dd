/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef PMT_ABI_EXPR_H
#define PMT_ABI_EXPR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/filter.h"

/*
 * Expressions (-ret, (flags & 0xff) | 1, ret < 0 as a value): compiled by
 * src/filter/expr.c into postfix code for a small stack machine,
 * bpf/expr.bpf.h, with C's types: each operation carries the type its
 * operands were converted to (flags), and its result is kept as C keeps
 * it, a 32-bit result sign- or zero-extended in the 64-bit register.
 *
 * A probe's expressions (its keys', its value's, its match key's) make
 * one program, run once an event before they are needed: each ends in a
 * STORE of its value into a slot, and an operand PMT_FSRC_EXPR reads slot
 * off. One run a probe keeps the verifier's work what one expression's
 * is, however many keys compute.
 */
#define PMT_EXPR_OPS 512  /* operations a probe's program */
#define PMT_EXPR_STACK 16 /* values pending */
#define PMT_XSLOTS 16	  /* values a program stores: keys, value, match, printf's */
#define PMT_EXPRS 256	  /* programs a session */
#define PMT_XPROG_NONE 0xffff

enum pmt_expr_code {
	PMT_X_OPERAND, /* push operand o (never an expression) */
	PMT_X_CONST,   /* push k */
	PMT_X_NEG,     /* unary, on the top */
	PMT_X_NOT,     /* ~ */
	PMT_X_LNOT,    /* ! */
	PMT_X_BSWAP,   /* the top's low k bytes (2, 4 or 8) in the other order */
	PMT_X_ADD,     /* binary: second from the top OP top */
	PMT_X_SUB,
	PMT_X_MUL,
	PMT_X_DIV, /* x / 0 is 0, as BPF's division */
	PMT_X_MOD, /* x % 0 is x, as BPF's */
	PMT_X_AND,
	PMT_X_OR,
	PMT_X_XOR,
	PMT_X_SHL, /* counts taken modulo the width, as BPF's shifts */
	PMT_X_SHR, /* arithmetic when signed */
	PMT_X_EQ,
	PMT_X_NE,
	PMT_X_LT, /* > and >= are < and <= of the operands swapped */
	PMT_X_LE,
	PMT_X_LAND, /* both evaluated: operands have no side effects */
	PMT_X_LOR,
	/* C ? A : B (C on top, then B, then A): each evaluated once, the
	 * result in the operation's type */
	PMT_X_SEL,
	PMT_X_STORE, /* pop the top into slot k */
	/* replace the top, an address, by the o.size bytes at it + k (kernel
	 * memory: a member of a struct), extended as PMT_XF_SIGNED says (the
	 * member's own signedness, not its promoted type's); 0 where the
	 * read fails (counted) */
	PMT_X_LOAD,
	/* a program's saved values (bpftrace's @name[key] = value: pmt_vars),
	 * variable k: replace the top, a key, by its value (0 where none) */
	PMT_X_VLOAD,
	PMT_X_VSTORE, /* pop a value, then its key: saved */
	PMT_X_VDEL,   /* pop a key: its value forgotten */
	/* saved strings (pmt_strvars: @name[key] = comm, str(P), a char
	 * array), variable k: replace the top, a key, by the address of
	 * its string, copied into the run's string buffer o.size ("" where
	 * none): a PMT_FSRC_PTR_STR operand reads it there */
	PMT_X_SLOAD,
	/* pop the address of a string (none with PMT_XF_COMM: the task's
	 * comm), then its key: the string there saved */
	PMT_X_SSTORE,
	PMT_X_SDEL, /* pop a key: its string forgotten */
	PMT_X__MAX,
};
/* An operation's code may carry a push before it, the operand the
 * operation before would have pushed (fused: a step of the machine
 * less): PMT_X_PUSH_O pushes the operand o, PMT_X_PUSH_K the number k,
 * where the operation itself uses neither (src/filter/expr.c: fuse) */
#define PMT_X_PUSH_O 0x40
#define PMT_X_PUSH_K 0x80
#define PMT_X_CODE 0x3f /* the operation itself */
_Static_assert(PMT_X__MAX <= PMT_X_CODE, "an operation's code below PMT_X_PUSH_*");

/* The type an operation works in (C's usual conversions of its
 * operands): its operands are brought to it first (a 32-bit one
 * truncated, then sign- or zero-extended), and an arithmetic result
 * after. */
#define PMT_XF_SIGNED 0x01 /* signed: division, >>, comparisons as such */
#define PMT_XF_32 0x02	   /* 32 bits wide */
/* VSTORE, VDEL: a guard on top, popped first: done only where non-zero
 * (a statement inside an if) */
#define PMT_XF_GUARD 0x04
/* SSTORE: the string saved is the task's comm (no address popped) */
#define PMT_XF_COMM 0x08
/* VLOAD ... SDEL: the key is two values, the first pushed first
 * (bpftrace's @map[a, b]) */
#define PMT_XF_KEY2 0x10
/* VLOAD: whether the key has a value or a string saved (has_key), not
 * the value */
#define PMT_XF_HAS 0x20
/* binary: the operands were pushed in the other order (the top is the
 * left one): a saved value is read before the event's clock that an
 * operation takes with it (nsecs - @start[tid]), as bpftrace's
 * statements read it where they stand, before the clock after them; the
 * other way round a start saved on another CPU between the two reads
 * made a negative latency */
#define PMT_XF_REV 0x40

struct pmt_expr_op {
	__u8 code;  /* enum pmt_expr_code, and PMT_X_PUSH_* */
	__u8 flags; /* PMT_XF_* */
	struct pmt_operand o;
	__u64 k;
};

struct pmt_expr {
	__u32 n; /* operations used */
	__u32 pad;
	struct pmt_expr_op op[PMT_EXPR_OPS];
};

_Static_assert(sizeof(struct pmt_expr_op) == 16, "pmt_expr_op");
/* Per CPU: the slots a program stores, its stack and the stack's depth
 * (in a map, not on the program's stack: the verifier then sees one
 * state for every step of the loop, not one a depth) */
#define PMT_XSTRS 16	     /* saved strings a program reads (SLOAD) */
#define PMT_SAVED_STR_LEN 64 /* a saved string's bytes, NUL included */
struct pmt_xmem {
	__u64 slot[PMT_XSLOTS];
	__u64 st[PMT_EXPR_STACK];
	__u64 sp;
	__u64 ctx; /* the calling program's context, as a number (pmt_x_run) */
	__u32 idx; /* the program running (pmt_exprs) */
	__u32 pad;
	/* SLOAD's copies, then SSTORE's */
	char str[PMT_XSTRS + 1][PMT_SAVED_STR_LEN];
};

_Static_assert(sizeof(struct pmt_expr) == 8 + 16 * PMT_EXPR_OPS, "pmt_expr");

/* Saved values: variables a session (names: the program's maps) */
#define PMT_VARS 64
#define PMT_VAR_ENTRIES 10240 /* LRU: a value never read back cannot pile up */

/* pmt_vars' key: the variable, and the key it is saved under (key2: the
 * second value of a two-value key, else 0) */
struct pmt_var_key {
	__u32 var;
	__u32 pad;
	__u64 key;
	__u64 key2;
};

_Static_assert(sizeof(struct pmt_var_key) == 24, "pmt_var_key");

#endif
