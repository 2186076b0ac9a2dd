// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include "util/error.h"
#include "tracefs/format.h"
#include "util/strutil.h"
#include "filter/expr.h"
#include "test.h"

static struct pmt_test *head, **tail = &head;

void pmt_test__register(struct pmt_test *t)
{
	*tail = t;
	tail = &t->next;
}

char *pmt_test__data(const char *name)
{
	char path[512], *text = NULL;

	snprintf(path, sizeof(path), "tests/data/%s", name);
	if (pmt_read_file(path, &text, NULL))
		fprintf(stderr, "  cannot read %s\n", path);
	return text;
}

struct pmt_exprs pmt_test_exprs;

struct pmt_format *pmt_test__format(const char *name)
{
	char *text = pmt_test__data(name);
	struct pmt_format *fmt = NULL;
	struct pmt_error err = {0};

	if (text && pmt_format__parse(text, "test", &fmt, &err))
		fprintf(stderr, "  %s: %s\n", name, err.msg);
	free(text);
	return fmt;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	struct pmt_test *t;

	for (t = head; t; t = t->next) {
		int f = 0;

		if (argc > 1 && !strstr(t->name, argv[1]))
			continue;
		t->fn(&f);
		printf("%s unit/%s\n", f ? "FAIL" : "ok  ", t->name);
		if (f)
			failed++;
		else
			passed++;
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	pmt_exprs__free(&pmt_test_exprs);
	return failed ? 1 : 0;
}
