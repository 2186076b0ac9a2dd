// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one error sink. Messages often quote what the user typed (a probe
 * name, a filter, a path): control bytes in them are written as \xNN, as
 * event output writes them, so nothing reaches the terminal raw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/log.h"

int pmt_verbose;
bool pmt_quiet;

/* Escape s into out (room for 4 bytes each, and the NUL): control bytes
 * (but the newline) as \xNN. Returns the length written. */
static size_t escape(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;
	char *o = out;

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		} else {
			*o++ = (char)*p;
		}
	}
	*o = 0;
	return (size_t)(o - out);
}

/* One message, one write: the loader thread's lines and the main
 * thread's never interleave within a line (stderr is unbuffered, and a
 * byte at a time they did: a test waiting for "Ctrl-C" met "Ctr" and the
 * rest of another line). */
static void vsay(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	char small[512], line[2048], *text = small, *buf = line;
	size_t lp = strlen(prefix), ls = strlen(suffix), need, n;
	va_list copy;
	int len;

	va_copy(copy, ap);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small) && (text = malloc((size_t)len + 1)))
		vsnprintf(text, (size_t)len + 1, fmt, copy);
	va_end(copy);
	if (!text)
		text = small; /* out of memory: the message cut short */
	need = lp + 4 * strlen(text) + ls + 1;
	if (need > sizeof(line) && !(buf = malloc(need))) {
		buf = line; /* out of memory: the message cut short */
		text[(sizeof(line) - lp - ls - 1) / 4] = 0;
	}
	memcpy(buf, prefix, lp);
	n = lp + escape(buf + lp, text);
	memcpy(buf + n, suffix, ls);
	n += ls;
	flockfile(stderr);
	fwrite(buf, 1, n, stderr);
	funlockfile(stderr);
	if (buf != line)
		free(buf);
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
