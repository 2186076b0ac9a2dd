/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Expressions over an event's values (-ret, (flags & 3) == 1, len / 1024
 * + 1): compiled to postfix code for bpf/expr.bpf.h (struct pmt_expr,
 * bpf/abi/expr.h), typed as C types them. The grammar, C's precedence:
 *
 *   expr    := binary
 *   binary  := unary { OP unary }     OP: * / %  + -  << >>  < <= > >=
 *                                         == !=  &  ^  |  &&  ||
 *   unary   := ("-" | "~" | "!" | "*") unary | "(" expr ")" | INTEGER | NAME
 *              | kaddr("SYMBOL") | "@" [NAME] ["[" expr "]"]
 *
 * NAME is a field of the probe or a common value (pid tid cpu uid gid
 * cgroup), nsecs (the time now), or curtask (the current task_struct, with types). Postfix
 * "->m", ".m" and "[N]" walk the kernel's types (PMT_CHAIN_MAX members):
 * integers and pointers are read (8 bytes a pointer), a char array is a
 * string; str(E) is the string at the address E; *E the value at the
 * kernel address E (its pointee's type, else 8 bytes); kaddr("SYM") a
 * kernel symbol's address (/proc/kallsyms); @NAME[KEY] a program's saved
 * value (0 where none is saved under KEY). A string is a whole
 * expression's value only (a key), never an operand of an operator. Integers: decimal or 0x hex, typed as C
 * types a literal (int, then long, then unsigned long).
 */
#ifndef PMT_EXPR_H
#define PMT_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "abi.h"
#include "filter/operand.h"
#include "util/error.h"

/* A type of kernel memory, as the loader's BTF describes it (typedefs,
 * const and volatile seen through). */
enum pmt_tkind { PMT_TK_OTHER, PMT_TK_INT, PMT_TK_PTR, PMT_TK_STRUCT, PMT_TK_ARRAY };

struct pmt_tinfo {
	enum pmt_tkind kind;
	uint32_t size;	/* bytes */
	bool is_signed; /* INT (enums: as their values) */
	int target;	/* PTR: the pointee; ARRAY: the element */
	uint32_t nelem; /* ARRAY */
	char name[64];	/* "struct task_struct", "int", "char *": for messages */
};

/* The kernel's types, for member chains (curtask->real_parent->comm);
 * made by the loader from the kernel's BTF (src/btf/btftypes_bpf.c). Each
 * returns 0 or -ENOENT. */
struct pmt_typesys {
	void *ctx;
	/* the type id of struct name */
	int (*find_struct)(void *ctx, const char *name, int *id);
	int (*describe)(void *ctx, int id, struct pmt_tinfo *out);
	/* member name of struct or union id (anonymous members searched):
	 * its byte offset and type; -EOPNOTSUPP for a bitfield */
	int (*member)(void *ctx, int id, const char *name, uint32_t *off, int *type);
	/* up to max member names of id, for "did you mean" (they live as
	 * long as the type system) */
	size_t (*member_names)(void *ctx, int id, const char **names, size_t max);
	/* the address of kernel symbol name (kaddr("avenrun")); may be NULL */
	int (*ksym)(void *ctx, const char *name, uint64_t *addr);
	/* the value of enumerator name of a kernel enum
	 * (SKB_DROP_REASON_NOT_SPECIFIED: tcpdrop.bt's); may be NULL */
	int (*enumerator)(void *ctx, const char *name, int64_t *value);
};

/* Members a chain may walk (curtask->a->b.c is 3) */
#define PMT_CHAIN_MAX 8

/* A program's saved values (bpftrace's @name[key] = value, read back as
 * @name[key]): each variable's name, its number its index. */
struct pmt_varnames {
	char name[PMT_VARS][64];
	bool keyed[PMT_VARS];	 /* read or saved with a [key] */
	uint8_t nkeys[PMT_VARS]; /* its key's values: 1 or 2 (0: not keyed) */
	bool str[PMT_VARS];	 /* holds strings (pmt_strvars) */
	bool read_num[PMT_VARS]; /* read as a number somewhere */
	uint32_t n;
};

/* The number of the saved value named name (len bytes), new ones
 * numbered on first sight; -1 when there are PMT_VARS already or the
 * name is too long */
int pmt_varnames__id(struct pmt_varnames *v, const char *name, size_t len);

/* A session's expressions: what PMT_FSRC_EXPR operands number. */
struct pmt_exprs {
	struct pmt_expr *v;
	size_t n, cap;
	/* the kernel's types, for member chains: set by the owner (the
	 * session), NULL where none */
	const struct pmt_typesys *types;
	/* the session's saved values' names (a program's): NULL where none
	 * may be named; a probe's table shares the session's */
	struct pmt_varnames *vars;
};

/*
 * Compile text, an expression over the values of probe (its format fmt;
 * NULL: the common values alone), into *out: a bare name as its operand
 * (no code to run), a constant or anything else as an expression of t
 * (an equal one shared; out->o.off its index until pmt_exprs__program
 * makes it a slot), out->o.src PMT_FSRC_EXPR. what: the option, for
 * messages ("--by"). 0, or -EINVAL with a message and a caret in err.
 */
int pmt_expr__compile(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
		      const char *probe, const char *what, const struct pmt_typesys *types,
		      struct pmt_opinfo *out, struct pmt_error *err);
/* pmt_expr__compile where a string is wanted (printf's %s): a saved
 * value read bare is then a saved string (the map holds strings). */
int pmt_expr__compile_str(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
			  const char *probe, const char *what, const struct pmt_typesys *types,
			  struct pmt_opinfo *out, struct pmt_error *err);
/* One program of t (abi/expr.h) computing, in turn, each expression of
 * mine the n operands ops name (PMT_FSRC_EXPR), each rewritten to read
 * its slot; *prog its index, or PMT_XPROG_NONE without expressions. An
 * equal program is shared. 0, or -EINVAL past the bounds (probe named). */
int pmt_exprs__program(struct pmt_exprs *t, const struct pmt_exprs *mine,
		       struct pmt_operand *const *ops, size_t n, uint16_t *prog, const char *probe,
		       struct pmt_error *err);
/*
 * A program block's statements, text: "@NAME[KEY] = EXPR" (a value
 * saved) and "delete(@NAME[KEY])" (forgotten), ';' between them, into
 * one program of t run in turn (*prog its index; PMT_XPROG_NONE for an
 * empty text). Keys and values are numbers. 0, or -EINVAL with a caret.
 */
int pmt_expr__statements(struct pmt_exprs *t, const char *text, const struct pmt_format *fmt,
			 const char *probe, const char *what, const struct pmt_typesys *types,
			 uint16_t *prog, struct pmt_error *err);
/* Does a program of t save or read values (PMT_X_VLOAD...)? */
bool pmt_exprs__uses_vars(const struct pmt_exprs *t);
/* Is text more than a name (an operator, a number, parentheses)? */
bool pmt_expr__is_expression(const char *text);
/* What t's operands use (their sources, context words), into u. */
void pmt_exprs__uses(const struct pmt_exprs *t, struct pmt_uses *u);
/* Does the program need its copy of the record for operand o (an
 * expression of t's: for one of its operands)? */
bool pmt_exprs__needs_record(const struct pmt_exprs *t, const struct pmt_operand *o);
void pmt_exprs__free(struct pmt_exprs *t);

/* Run x as bpf/expr.bpf.h does: load gives an operand's value (canonical:
 * sign- or zero-extended as it is signed); STOREs fill slots (if not
 * NULL, PMT_XSLOTS of them); a LOAD of kernel memory reads 0 here.
 * Returns the value on top at the end (an expression's value), or the
 * last stored. */
typedef uint64_t (*pmt_expr_load_fn)(const struct pmt_operand *o, void *arg);
uint64_t pmt_expr__eval(const struct pmt_expr *x, pmt_expr_load_fn load, void *arg,
			uint64_t *slots);
/* The code as text, one operation a line (tests, -vv). */
void pmt_expr__dump(struct pmt_buf *b, const struct pmt_expr *x);

#endif
