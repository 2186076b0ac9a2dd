// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The Prometheus text format 0.0.4 and OpenMetrics 1.0: what both the
 * aggregation's metrics and the tracer's own need. */
#include <string.h>
#include "output/exposition.h"

/* Label values: backslash, quote and newline escaped as the formats ask;
 * other bytes outside printable ASCII as the text \xNN. */
void pmt_expo__label_value(struct pmt_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '"') {
			pmt_buf__putc(b, '\\');
			pmt_buf__putc(b, (char)c);
		} else if (c == '\n') {
			pmt_buf__puts(b, "\\n");
		} else if (c < 0x20 || c > 0x7e) {
			pmt_buf__puts(b, "\\\\x");
			pmt_buf__putc(b, hex[c >> 4]);
			pmt_buf__putc(b, hex[c & 15]);
		} else {
			pmt_buf__putc(b, (char)c);
		}
	}
}

/* HELP's text escaped: backslash and newline (and quote for OpenMetrics). */
static void help_line(struct pmt_buf *b, const char *name, const char *text, bool om)
{
	pmt_buf__printf(b, "# HELP %s ", name);
	for (; *text; text++) {
		if (*text == '\\' || (om && *text == '"'))
			pmt_buf__putc(b, '\\');
		if (*text == '\n')
			pmt_buf__puts(b, "\\n");
		else
			pmt_buf__putc(b, *text);
	}
	pmt_buf__putc(b, '\n');
}

void pmt_expo__family(struct pmt_buf *b, const char *name, const char *type, const char *unit,
		      const char *help, bool om)
{
	size_t n = strlen(name);
	char family[256];

	/* OpenMetrics names a counter's family without its _total */
	if (om && !strcmp(type, "counter") && n > 6 && !strcmp(name + n - 6, "_total"))
		n -= 6;
	if (n >= sizeof(family))
		n = sizeof(family) - 1;
	memcpy(family, name, n);
	family[n] = '\0';
	help_line(b, family, help, om);
	pmt_buf__printf(b, "# TYPE %s %s\n", family, type);
	if (om && unit)
		pmt_buf__printf(b, "# UNIT %s %s\n", family, unit);
}
