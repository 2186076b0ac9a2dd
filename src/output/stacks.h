/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Streamed call stacks: records a provider's program builds (PMU samples,
 * calls) end with a struct pmt_stack_rec and the frames. */
#ifndef PMT_STACKS_H
#define PMT_STACKS_H

#include <stdbool.h>
#include "output/output.h"

/* The frames of r (r->frames, or those after the record a program
 * built): how many, their addresses, and how many of them are the
 * kernel's (innermost first). */
uint32_t pmt_stacks__frames(const struct pmt_record *r, const uint64_t **frames, uint32_t *nkernel);
/* The frames after r's record (when r->stack asks for them): text, one
 * frame a line as perf script -g prints them; JSON, a "stack" array of
 * {addr, sym}. Also a provider's extra ops (struct pmt_record). */
void pmt_stacks__text(const struct pmt_record *r, struct pmt_buf *b);
void pmt_stacks__json(const struct pmt_record *r, struct pmt_json *j);

#endif
