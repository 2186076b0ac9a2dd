/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process's libtraceevent handle (the library perf and trace-cmd
 * use), the one reader of tracepoint format files: tracefs/format.c takes
 * each event's field table from it, tracefs/render.c its print fmt.
 *
 * Every event parsed holds the handle; it is freed with the last of them
 * (formats are parsed at start-up, so the events it keeps are bounded by
 * the session's probes). Plugins are never loaded and the library's own
 * messages are off: callers say what failed.
 */
#ifndef PMT_TEP_H
#define PMT_TEP_H

#include "util/error.h"
#include <stddef.h>

struct tep_event;
struct trace_seq;
struct tep_handle;

/* Parse the text of a format file of category sys; *ev then holds the
 * handle. An event whose print fmt cannot be evaluated still has its
 * fields (TEP_EVENT_FL_FAILED). -errno with a message in err. */
int pmt_tep__parse(const char *text, const char *sys, struct tep_event **ev, struct pmt_error *err);
/* Drop the hold of an event from pmt_tep__parse (NULL: nothing). */
void pmt_tep__put(struct tep_event *ev);
/* Load a file into the handle with one of libtraceevent's parsers
 * (tep_parse_kallsyms, tep_parse_printk_formats), once per parser.
 * Needs a hold. */
void pmt_tep__load(const char *path, int (*parse)(struct tep_handle *, const char *));
/* The handle's line buffer, emptied. Needs a hold. */
struct trace_seq *pmt_tep__line(void);

#endif
