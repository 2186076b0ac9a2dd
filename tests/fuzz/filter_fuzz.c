// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the filter lexer, parser, type checker, compiler and
 * diagnostics. The first byte picks the probe layout (sched_switch,
 * sched_process_exec, or none); the rest is the expression.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "filter/filter.h"
#include "tracefs/format.h"

static struct pmt_format *fmts[2];

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
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
	if (pmt_filter__compile(expr, data[0] % 3 == 2 ? NULL : fmts[data[0] % 3 == 1],
				"fuzz:probe", &f, &err)) {
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
		pmt_filter__dump(&b, &f);
	}
	pmt_buf__free(&b);
	free(expr);
	return 0;
}
