// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the filter and expression lexers, parsers, type
 * checkers, compilers and diagnostics, member chains included. The first
 * byte picks the probe layout (% 3: sched_switch, sched_process_exec, or
 * none), the compiler (/ 3 % 2: the filter's, or the expressions' of --by
 * and values, whose code is then run) and the types (/ 6 % 2: none, or
 * the running kernel's BTF, for curtask->a->b.c[i] chains), or (/ 12 %
 * 2) bpftrace's program reader instead; the rest is the text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "filter/expr.h"
#include "filter/filter.h"
#include "btf/btftypes.h"
#include "tracefs/format.h"
#include "lang/program.h"
#include "output/printf.h"
#include "output/record.h"

static struct pmt_format *fmts[2];
/* the kernel's types, kaddr() left out (each would read kallsyms); NULL
 * where this machine has no BTF */
static struct pmt_btftypes btf;
static struct pmt_typesys kernel_types;
static const struct pmt_typesys *types;

static struct pmt_format *load(const char *path)
{
	struct pmt_format *fmt = NULL;
	struct pmt_error err = {0};
	char *text;

	if (pmt_read_file(path, &text, NULL))
		abort();
	if (pmt_format__parse(text, "test", &fmt, &err))
		abort();
	free(text);
	return fmt;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fmts[0] = load("tests/data/sched_switch.format");
	fmts[1] = load("tests/data/sched_process_exec.format");
	if (!pmt_btftypes__open(&btf)) {
		kernel_types = btf.sys;
		kernel_types.ksym = NULL;
		types = &kernel_types;
	} else {
		fprintf(stderr, "filter_fuzz: no kernel BTF: member chains are not fuzzed\n");
	}
	return 0;
}

static uint64_t load_value(const struct pmt_operand *o, void *arg)
{
	(void)arg;
	return (uint64_t)o->off * 0x9e3779b97f4a7c15ULL + o->src;
}

/* An expression: an error points into the text; code stays within its
 * bounds (operations, values pending) and runs. */
static void fuzz_expr(const char *text, const struct pmt_format *fmt, const struct pmt_typesys *ts)
{
	struct pmt_varnames names = {0};
	struct pmt_error err = {0};
	struct pmt_exprs t = {.vars = &names};
	struct pmt_opinfo info;
	struct pmt_buf b = {0};
	uint32_t i;
	int sp = 0;

	t.types = ts;
	if (pmt_expr__compile(&t, text, fmt, "fuzz:probe", "--by", ts, &info, &err)) {
		if (err.pos < 0 || err.pos > (int)strlen(text) || err.len < 1 || !err.msg[0] || t.n)
			abort();
		pmt_error__format(&b, &err);
	} else if (info.o.src == PMT_FSRC_EXPR) {
		const struct pmt_expr *x = &t.v[info.o.off];

		if (info.o.off >= t.n || !x->n || x->n > PMT_EXPR_OPS)
			abort();
		for (i = 0; i < x->n; i++) {
			/* pushes, unary ones (LOAD: *E; VLOAD: @m[K], a key of two
			 * popping one more), SEL's three and binary ones */
			sp += x->op[i].code <= PMT_X_CONST ? 1
			      : x->op[i].code <= PMT_X_LNOT || x->op[i].code == PMT_X_LOAD ||
					      x->op[i].code == PMT_X_VLOAD
				      ? -(x->op[i].code == PMT_X_VLOAD &&
					  (x->op[i].flags & PMT_XF_KEY2))
			      : x->op[i].code == PMT_X_SEL ? -2
							   : -1;
			if (sp < 1 || sp > PMT_EXPR_STACK || x->op[i].o.src == PMT_FSRC_EXPR)
				abort();
		}
		if (sp != 1)
			abort();
		pmt_expr__eval(x, load_value, NULL, NULL);
		pmt_expr__dump(&b, x);
	}
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
}

/* A probe's printf text, read when it was checked: its format checked
 * again with its arguments numbers and strings in turn, and rendered
 * over a record of zeros when that passes. */
static void fuzz_printf(const char *text)
{
	static char zeros[PMT_STREAM_VALS * 8 + PMT_STREAM_STRS * PMT_STREAM_STR_LEN];
	struct pmt_record r = {.comm = zeros,
			       .comm_len = 16,
			       .vals = zeros,
			       .nvals = PMT_STREAM_VALS,
			       .strs = zeros + PMT_STREAM_VALS * 8,
			       .nstrs = PMT_STREAM_STRS};
	struct pmt_printf_text t;
	struct pmt_error err = {0};
	struct pmt_print p = {.str_max = 63};
	struct pmt_buf b = {0};
	char why[256];
	int i;

	/* the reader passes its text on; a text it could not tell bad
	 * (a $variable's value that is no expression) is refused here, said */
	if (pmt_printf__split(text, "printf", &t, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	p.fmt = t.fmt.p;
	p.len = t.fmt.len;
	p.nargs = t.nargs;
	for (i = 0; i < t.nargs; i++)
		p.args[i].kind = i % 2 ? PMT_PARG_STR : PMT_PARG_NUM;
	if (!pmt_print__check(&p, why, sizeof(why)))
		pmt_print__render(&b, &p, &r);
	pmt_buf__free(&b);
	pmt_printf__free(&t);
}

/* What op i of x does to the machine's stack (bpf/expr.bpf.c); a store
 * into a slot anywhere but right after a saved value's read (read_once)
 * aborts */
static int stack_change(const struct pmt_expr *x, uint32_t i)
{
	const struct pmt_expr_op *op = &x->op[i];
	uint8_t c = op->code, f = op->flags;
	int push = 0, two = !!(f & PMT_XF_KEY2), guard = !!(f & PMT_XF_GUARD);

	/* a push fused with its operation (PMT_X_PUSH_*) */
	if (c & (PMT_X_PUSH_O | PMT_X_PUSH_K)) {
		push = 1;
		c &= PMT_X_CODE;
	}
	if (c == PMT_X_STORE && (i < 1 || (x->op[i - 1].code & PMT_X_CODE) != PMT_X_VLOAD))
		abort();
	if (c <= PMT_X_CONST)
		return 1;
	if (c <= PMT_X_BSWAP || c == PMT_X_LOAD)
		return push;
	if (c <= PMT_X_LOR || c == PMT_X_STORE)
		return push - 1;
	if (c == PMT_X_SEL)
		return push - 2;
	if (c == PMT_X_VLOAD || c == PMT_X_SLOAD)
		return push - two;
	if (c == PMT_X_VSTORE)
		return push - 2 - two - guard;
	if (c == PMT_X_SSTORE)
		return push - 2 + !!(f & PMT_XF_COMM) - two - guard;
	if (c == PMT_X_VDEL || c == PMT_X_SDEL)
		return push - 1 - two - guard;
	abort();
}

/* A block's statements (fmt: sched_switch's fields): a program that
 * leaves nothing pending, or an error pointing into the text. */
static void fuzz_statements(const char *text, const struct pmt_format *fmt)
{
	struct pmt_varnames names = {0};
	struct pmt_exprs t = {.vars = &names};
	struct pmt_error err = {0};
	struct pmt_buf b = {0};
	uint16_t prog;
	uint32_t i;
	int sp = 0;

	if (pmt_expr__statements(&t, text, fmt, "fuzz:probe", "fuzz", NULL, &prog, &err)) {
		if (err.pos < 0 || err.pos > (int)strlen(text) || err.len < 1 || !err.msg[0])
			abort();
	} else if (prog != PMT_XPROG_NONE) {
		for (i = 0; i < t.v[prog].n; i++) {
			sp += stack_change(&t.v[prog], i);
			if (sp < 0 || sp > PMT_EXPR_STACK)
				abort();
		}
		if (sp || names.n > PMT_VARS)
			abort();
		pmt_expr__dump(&b, &t.v[prog]);
	}
	pmt_buf__free(&b);
	pmt_exprs__free(&t);
}

/* A program: read whole, or refused with a message and a caret. */
static void fuzz_program(const char *text)
{
	struct pmt_error err = {0};
	struct pmt_program p;
	struct pmt_buf b = {0};
	size_t i;

	if (pmt_program__parse(text, "fuzz.bt", &p, &err)) {
		if (!err.msg[0] || err.pos < 0 || err.len < 0)
			abort();
		pmt_error__format(&b, &err);
		pmt_buf__free(&b);
		return;
	}
	if (!p.nprobes && !p.begin && !p.nends && p.interval <= 0)
		abort(); /* read: probes, or what BEGIN, END or an interval do */
	for (i = 0; i < (size_t)p.nmaps; i++)
		if (!p.maps[i].name || !p.maps[i].fn)
			abort(); /* each map named, with its function */
	for (i = 0; i < p.nprobes; i++) {
		const struct pmt_prog_probe *q = &p.probes[i];

		if (!q->nupd && !q->printf && !q->stmts && !q->role)
			abort(); /* each probe prints, saves values, or updates maps */
		for (int k = 0; k < q->nupd; k++)
			if (q->upd[k] < 0 || q->upd[k] >= p.nmaps)
				abort(); /* ... that the program has */
	}
	for (i = 0; i < p.nprobes; i++) {
		if (p.probes[i].printf)
			fuzz_printf(p.probes[i].printf);
		if (p.probes[i].stmts)
			fuzz_statements(p.probes[i].stmts, fmts[0]);
	}
	pmt_program__free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmt_exprs fuzz_exprs = {0};
	struct pmt_error err = {0};
	struct pmt_filter f;
	struct pmt_buf b = {0};
	char *expr;
	int i;

	if (!size)
		return 0;
	expr = malloc(size);
	memcpy(expr, data + 1, size - 1);
	expr[size - 1] = '\0';
	if (data[0] / 12 % 2) {
		fuzz_program(expr);
		free(expr);
		return 0;
	}
	fuzz_exprs.types = data[0] / 6 % 2 ? types : NULL;
	if (data[0] / 3 % 2) {
		fuzz_expr(expr, data[0] % 3 == 2 ? NULL : fmts[data[0] % 3 == 1], fuzz_exprs.types);
		free(expr);
		return 0;
	}
	if (pmt_filter__compile(expr, data[0] % 3 == 2 ? NULL : fmts[data[0] % 3 == 1],
				"fuzz:probe", &fuzz_exprs, &f, &err)) {
		if (err.pos < 0 || err.pos > (int)strlen(expr) || err.len < 1 || !err.msg[0])
			abort(); /* every error points into the expression */
		pmt_error__format(&b, &err);
	} else {
		/* every edge leads to an entry or to accept/reject */
		for (i = 0; i < f.n; i++)
			if ((f.e[i].t >= f.n && f.e[i].t < PMT_FILTER_ACCEPT) ||
			    (f.e[i].f >= f.n && f.e[i].f < PMT_FILTER_ACCEPT))
				abort();
		if (f.n && f.start >= f.n)
			abort();
		/* a program of the filter's own expressions, when it has some */
		if (f.xprog != PMT_XPROG_NONE && f.xprog >= fuzz_exprs.n)
			abort();
		pmt_filter__dump(&b, &f);
	}
	pmt_exprs__free(&fuzz_exprs);
	pmt_buf__free(&b);
	free(expr);
	return 0;
}
