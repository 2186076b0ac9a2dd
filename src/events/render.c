// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "events/render.h"
#include "events/tracefs.h"

struct pmt_render {
	struct tep_handle *tep;
	struct trace_seq seq;
	bool kallsyms, printk; /* loaded */
};

struct pmt_render *pmt_render__new(void)
{
	struct pmt_render *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return NULL;
	rd->tep = tep_alloc();
	if (!rd->tep) {
		free(rd);
		return NULL;
	}
	tep_set_long_size(rd->tep, (int)sizeof(long));
	tep_set_page_size(rd->tep, (int)sysconf(_SC_PAGESIZE));
	tep_set_file_bigendian(rd->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN
									       : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(rd->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
						 ? TEP_BIG_ENDIAN
						 : TEP_LITTLE_ENDIAN);
	trace_seq_init(&rd->seq);
	return rd;
}

void pmt_render__free(struct pmt_render *rd)
{
	if (!rd)
		return;
	trace_seq_destroy(&rd->seq);
	tep_free(rd->tep);
	free(rd);
}

/* Feed a whole file to one of libtraceevent's parsers (once). */
static void load(struct pmt_render *rd, const char *path, bool *done,
		 int (*parse)(struct tep_handle *, const char *))
{
	char *text;

	if (*done)
		return;
	*done = true;
	if (!pmt_read_file(path, &text, NULL)) {
		parse(rd->tep, text);
		free(text);
	}
}

/* Does the print fmt name kernel symbols (%ps, %pS, %pF, %pf, %pB)? */
static bool prints_symbols(const char *text)
{
	const char *p = strstr(text, "\nprint fmt:");

	while (p && (p = strstr(p, "%p")))
		if (p[2] && strchr("sSfFB", p[2]))
			return true;
		else
			p += 2;
	return false;
}

int pmt_render__add(struct pmt_render *rd, struct pmt_format *fmt)
{
	struct tep_event *ev = NULL;
	const char *root;
	char path[512];

	if (!fmt->text || !fmt->sys)
		return -EINVAL;
	if (!pmt_tracefs__root(&root)) {
		snprintf(path, sizeof(path), "%s/printk_formats", root);
		load(rd, path, &rd->printk, tep_parse_printk_formats);
		if (prints_symbols(fmt->text))
			load(rd, "/proc/kallsyms", &rd->kallsyms, tep_parse_kallsyms);
	}
	/* the same tracepoint again (another --tp with a filter): parsed */
	ev = tep_find_event(rd->tep, fmt->id);
	if (!ev && (tep_parse_event(rd->tep, fmt->text, strlen(fmt->text), fmt->sys) ||
		    !(ev = tep_find_event(rd->tep, fmt->id))))
		return -EINVAL;
	fmt->render = rd;
	fmt->render_ev = ev;
	return 0;
}

void pmt_render__info(const struct pmt_format *fmt, const void *data, size_t len, struct pmt_buf *b)
{
	struct pmt_render *rd = fmt->render;
	struct tep_record rec = {.data = (void *)data, .size = (int)len};
	size_t i;

	trace_seq_reset(&rd->seq);
	tep_print_event(rd->tep, &rd->seq, &rec, "%s", TEP_PRINT_INFO);
	for (i = 0; i < rd->seq.len; i++) {
		unsigned char c = (unsigned char)rd->seq.buffer[i];

		if (c < 0x20 || c == 0x7f)
			pmt_buf__printf(b, "\\x%02x", c);
		else
			pmt_buf__putc(b, (char)c);
	}
}
