// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event-parse.h>
#include <trace-seq.h>
#include "util/error.h"
#include "tracefs/tep.h"
#include "util/strutil.h"

/* The process's libtraceevent handle; each parsed event holds it once. */
static struct {
	struct tep_handle *tep;
	unsigned long holds;
	struct trace_seq seq;
	/* the parsers whose file is loaded */
	int (*loaded[2])(struct tep_handle *, const char *);
} shared;

static struct tep_handle *hold(void)
{
	enum tep_endian order =
		__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN;

	if (shared.tep) {
		shared.holds++;
		return shared.tep;
	}
	shared.tep = tep_alloc();
	if (!shared.tep)
		return NULL;
	/* our messages say what failed; the library's would repeat it */
	tep_set_loglevel(TEP_LOG_NONE);
	tep_set_long_size(shared.tep, (int)sizeof(long));
	tep_set_page_size(shared.tep, (int)sysconf(_SC_PAGESIZE));
	tep_set_file_bigendian(shared.tep, order);
	tep_set_local_bigendian(shared.tep, order);
	trace_seq_init(&shared.seq);
	shared.holds = 1;
	return shared.tep;
}

static void release(void)
{
	if (!shared.holds || --shared.holds)
		return;
	trace_seq_destroy(&shared.seq);
	tep_free(shared.tep);
	memset(&shared, 0, sizeof(shared));
}

void pmt_tep__put(struct tep_event *ev)
{
	if (ev)
		release();
}

int pmt_tep__parse(const char *text, const char *sys, struct tep_event **ev, struct pmt_error *err)
{
	struct tep_handle *tep = hold();
	enum tep_errno ret;
	char msg[128];

	*ev = NULL;
	if (!tep)
		return -ENOMEM;
	ret = tep_parse_format(tep, ev, text, strlen(text), sys);
	if (*ev && ((*ev)->flags & TEP_EVENT_FL_FAILED) && !(*ev)->print_fmt.format) {
		/* it failed before the print fmt: in the field table */
		pmt_error__runtime(err, -EINVAL, "%s: malformed field table", (*ev)->name);
		ret = TEP_ERRNO__READ_FORMAT_FAILED;
	} else if (!*ev) {
		tep_strerror(tep, ret ? ret : TEP_ERRNO__READ_ID_FAILED, msg, sizeof(msg));
		pmt_error__runtime(err, -EINVAL, "%s", msg);
	}
	if (!*ev || ret) {
		/* a failed event stays in the handle, freed with it */
		*ev = NULL;
		release();
		return -EINVAL;
	}
	return 0;
}

void pmt_tep__load(const char *path, int (*parse)(struct tep_handle *, const char *))
{
	char *text;
	size_t i;

	for (i = 0; i < 2 && shared.loaded[i]; i++)
		if (shared.loaded[i] == parse)
			return;
	if (i == 2)
		return;
	shared.loaded[i] = parse;
	if (!pmt_read_file(path, &text, NULL)) {
		parse(shared.tep, text);
		free(text);
	}
}

struct trace_seq *pmt_tep__line(void)
{
	trace_seq_reset(&shared.seq);
	return &shared.seq;
}
