/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tracepoint record as the kernel prints it: its format's "print fmt"
 * evaluated by libtraceevent (the library perf and trace-cmd use), so a
 * line reads as perf script's does: prev_state=S ==> next_comm=...,
 * function=hrtimer_wakeup for %ps, flags as GFP_KERNEL|__GFP_ZERO.
 *
 * Plugins are never loaded (the text must not depend on what is
 * installed); kallsyms is read only when a format prints symbols, and the
 * kernel's printk formats once, for string pointers.
 */
#ifndef PMT_RENDER_H
#define PMT_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include "events/format.h"
#include "util/strutil.h"

struct pmt_render;

struct pmt_render *pmt_render__new(void);
void pmt_render__free(struct pmt_render *rd);
/* Parse fmt's format text (fmt->text, fmt->sys) into rd: afterwards
 * fmt->render renders its records. -errno: then it has none. */
int pmt_render__add(struct pmt_render *rd, struct pmt_format *fmt);
/* Append the payload of one whole record (common fields included) of a
 * format added to rd; control bytes escaped. */
void pmt_render__info(const struct pmt_format *fmt, const void *data, size_t len,
		      struct pmt_buf *b);

#endif
