// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "tracefs/render.h"
#include "tracefs/tep.h"
#include "tracefs/tracefs.h"

/* Does the print fmt name kernel symbols (%ps, %pS, %pF, %pf, %pB)? */
static bool prints_symbols(const char *p)
{
	while (p && (p = strstr(p, "%p")))
		if (p[2] && strchr("sSfFB", p[2]))
			return true;
		else
			p += 2;
	return false;
}

int pmt_render__enable(struct pmt_format *fmt)
{
	struct tep_event *ev = fmt->tep_ev;
	struct pmt_error quiet = {0};
	const char *root;
	char path[512];

	if (!ev || (ev->flags & TEP_EVENT_FL_FAILED))
		return -EINVAL;
	if (!pmt_tracefs__root(&root, &quiet)) { /* else: no symbols in prints */
		snprintf(path, sizeof(path), "%s/printk_formats", root);
		pmt_tep__load(path, tep_parse_printk_formats);
		if (prints_symbols(ev->print_fmt.format))
			pmt_tep__load("/proc/kallsyms", tep_parse_kallsyms);
	}
	fmt->render = true;
	return 0;
}

void pmt_render__info(const struct pmt_format *fmt, const void *data, size_t len, struct pmt_buf *b)
{
	struct tep_record rec = {.data = (void *)data, .size = (int)len};
	struct tep_event *ev = fmt->tep_ev;
	struct trace_seq *seq = pmt_tep__line();
	size_t i;

	tep_print_event(ev->tep, seq, &rec, "%s", TEP_PRINT_INFO);
	for (i = 0; i < (size_t)seq->len; i++) {
		unsigned char c = (unsigned char)seq->buffer[i];

		if (c < 0x20 || c == 0x7f)
			pmt_buf__printf(b, "\\x%02x", c);
		else
			pmt_buf__putc(b, (char)c);
	}
}
