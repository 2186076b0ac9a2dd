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
 *   cmp     := "==" | "!=" | "<" | "<=" | ">" | ">=" | "&" | "~"
 *   literal := integer [kKmMgG] | "-" integer | "string"
 */
#ifndef PMT_FILTER_H
#define PMT_FILTER_H

#include <stddef.h>
#include "abi.h"
#include "events/format.h"
#include "util/strutil.h"

struct pmt_filter_error {
	int pos, len; /* byte span in the expression */
	char msg[256];
	char hint[768]; /* may be empty */
};

/*
 * Compile expr for a probe with the given record layout (fmt may be NULL
 * when the probe has no record fields). probe names it in messages.
 * Returns 0, or -EINVAL with err filled.
 */
int pmt_filter__compile(const char *expr, const struct pmt_format *fmt, const char *probe,
			struct pmt_filter *out, struct pmt_filter_error *err);

/* "--filter: MSG\n  EXPR\n  ^~~~\nhint: HINT\n" (without "pmtrace: "). */
void pmt_filter__format_error(struct pmt_buf *b, const char *expr,
			      const struct pmt_filter_error *err);

/* Human-readable listing of a compiled program (tests, -v). */
void pmt_filter__dump(struct pmt_buf *b, const struct pmt_filter *f);

#endif
