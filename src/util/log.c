// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "util/log.h"

int pmt_verbose;
bool pmt_quiet;

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define PMT_SAY(prefix)                \
	do {                           \
		va_list ap;            \
		va_start(ap, fmt);     \
		vsay(prefix, fmt, ap); \
		va_end(ap);            \
	} while (0)

void pmt_err(const char *fmt, ...)
{
	PMT_SAY("pmtrace: ");
}
void pmt_warn(const char *fmt, ...)
{
	PMT_SAY("pmtrace: warning: ");
}
void pmt_hint(const char *fmt, ...)
{
	PMT_SAY("hint: ");
}

void pmt_info(const char *fmt, ...)
{
	if (!pmt_quiet)
		PMT_SAY("pmtrace: ");
}
