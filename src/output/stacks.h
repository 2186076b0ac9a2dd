/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Streamed call stacks: records a provider's program builds (PMU samples,
 * calls) end with a struct pmt_stack_rec and the frames. */
#ifndef PMT_STACKS_H
#define PMT_STACKS_H

#include <stdbool.h>
#include "output/output.h"

/* The frames after r's record (when r->stack asks for them): text, one
 * frame a line as perf script -g prints them; JSON, a "stack" array.
 * Also a provider's extra op (struct pmt_record) for such records. */
void pmt_stacks__print(const struct pmt_record *r, struct pmt_buf *b, bool json);

#endif
