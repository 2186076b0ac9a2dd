/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A tracepoint record as the kernel prints it: its format's print fmt
 * evaluated by libtraceevent (tracefs/tep.h), so a line reads as perf
 * script's does: prev_state=S ==> next_comm=..., function=hrtimer_wakeup
 * for %ps, flags as GFP_KERNEL|__GFP_ZERO. kallsyms is read only when a
 * format prints symbols, and the kernel's printk formats once, for string
 * pointers.
 */
#ifndef PMT_RENDER_H
#define PMT_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include "tracefs/format.h"
#include "util/strutil.h"

/* Let fmt's records render through its print fmt (fmt->render);
 * -errno when libtraceevent cannot evaluate it: then they do not. */
int pmt_render__enable(struct pmt_format *fmt);
/* Append the payload of one whole record (common fields included) of a
 * format enabled for rendering; control bytes escaped. */
void pmt_render__info(const struct pmt_format *fmt, const void *data, size_t len,
		      struct pmt_buf *b);

#endif
