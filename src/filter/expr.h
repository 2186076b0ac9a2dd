/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Expressions over an event's values (-ret, (flags & 3) == 1, len / 1024
 * + 1): compiled to postfix code for bpf/expr.bpf.h (struct pmt_expr,
 * bpf/abi/expr.h), typed as C types them. The grammar, C's precedence:
 *
 *   expr    := binary
 *   binary  := unary { OP unary }     OP: * / %  + -  << >>  < <= > >=
 *                                         == !=  &  ^  |  &&  ||
 *   unary   := ("-" | "~" | "!") unary | "(" expr ")" | INTEGER | NAME
 *
 * NAME is a field of the probe or a common value (pid tid cpu uid gid
 * cgroup); strings are refused. Integers: decimal or 0x hex, typed as C
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

/* A session's expressions: what PMT_FSRC_EXPR operands number. */
struct pmt_exprs {
	struct pmt_expr *v;
	size_t n, cap;
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
		      const char *probe, const char *what, struct pmt_opinfo *out,
		      struct pmt_error *err);
/* One program of t (abi/expr.h) computing, in turn, each expression of
 * mine the n operands ops name (PMT_FSRC_EXPR), each rewritten to read
 * its slot; *prog its index, or PMT_XPROG_NONE without expressions. An
 * equal program is shared. 0, or -EINVAL past the bounds (probe named). */
int pmt_exprs__program(struct pmt_exprs *t, const struct pmt_exprs *mine,
		       struct pmt_operand *const *ops, size_t n, uint16_t *prog, const char *probe,
		       struct pmt_error *err);
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
 * NULL, PMT_XSLOTS of them). Returns the value on top at the end (an
 * expression's value), or the last stored. */
typedef uint64_t (*pmt_expr_load_fn)(const struct pmt_operand *o, void *arg);
uint64_t pmt_expr__eval(const struct pmt_expr *x, pmt_expr_load_fn load, void *arg,
			uint64_t *slots);
/* The code as text, one operation a line (tests, -vv). */
void pmt_expr__dump(struct pmt_buf *b, const struct pmt_expr *x);

#endif
