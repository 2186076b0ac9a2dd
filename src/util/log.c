// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one error sink. Messages often quote what the user typed (a probe
 * name, a filter, a path): control bytes in them are written as \xNN, as
 * event output writes them, so nothing reaches the terminal raw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "util/log.h"

int pmt_verbose;
bool pmt_quiet;

/* Write s to stderr with control bytes (but the newline) escaped. */
static void put_escaped(const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
}

static void vsay(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	char small[512], *text = small;
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small) && (text = malloc((size_t)n + 1)))
		vsnprintf(text, (size_t)n + 1, fmt, copy);
	va_end(copy);
	if (!text)
		text = small; /* out of memory: the message cut short */
	fputs(prefix, stderr);
	put_escaped(text);
	fputs(suffix, stderr);
	if (text != small)
		free(text);
}

#define PMT_SAY(prefix, suffix)                \
	do {                                   \
		va_list ap;                    \
		va_start(ap, fmt);             \
		vsay(prefix, suffix, fmt, ap); \
		va_end(ap);                    \
	} while (0)

void pmt_warn(const char *fmt, ...)
{
	PMT_SAY("pmtrace: warning: ", "\n");
}

void pmt_hint(const char *fmt, ...)
{
	PMT_SAY("hint: ", "\n");
}

void pmt_info(const char *fmt, ...)
{
	if (!pmt_quiet)
		PMT_SAY("pmtrace: ", "\n");
}

void pmt_eprintf(const char *fmt, ...)
{
	PMT_SAY("", "");
}
