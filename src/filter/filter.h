/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --filter expressions: parsed, type-checked against a probe's fields and
 * compiled into the DAG program the BPF interpreter walks (bpf/abi.h,
 * bpf/filter.bpf.h). Pure code: no kernel access.
 *
 *   expr    := or
 *   or      := and { "||" and }
 *   and     := unary { "&&" unary }
 *   unary   := "!" unary | "(" expr ")" | test
 *   test    := operand [ cmp literal ] | literal cmp operand
 *   operand := a field, str(F), or an expression (filter/expr.h: -ret,
 *              (flags & 3), curtask->real_parent->pid, str(p->name)),
 *              which ends at a comparison, '&', '~', && or || outside
 *              its parentheses
 *   cmp     := "==" | "!=" | "<" | "<=" | ">" | ">=" | "&" | "~"
 *   literal := integer [kKmMgG] | "-" integer | "string"
 */
#ifndef PMT_FILTER_H
#define PMT_FILTER_H

#include <stddef.h>
#include "abi.h"
#include "tracefs/format.h"
#include "util/error.h"
#include "util/strutil.h"

/*
 * Compile expr for a probe with the given record layout (fmt may be NULL
 * when the probe has no record fields). probe names it in messages.
 * Operands written as expressions become one program of exprs (the
 * session's; its types walk member chains), run before the filter
 * (out->xprog); exprs NULL refuses them.
 * Returns 0, or -EINVAL with err set: a usage error "--filter: ..." with
 * the expression quoted and a caret under the bad token.
 */
struct pmt_exprs;
int pmt_filter__compile(const char *expr, const struct pmt_format *fmt, const char *probe,
			struct pmt_exprs *exprs, struct pmt_filter *out, struct pmt_error *err);

/* Human-readable listing of a compiled program (tests, -v). */
void pmt_filter__dump(struct pmt_buf *b, const struct pmt_filter *f);

#endif
