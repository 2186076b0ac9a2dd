/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A streamed record's named addresses laid out (symbols/named.h): the
 * sample's "sym", and its stack as perf script -g shows it. */
#ifndef PMT_STACKS_H
#define PMT_STACKS_H

#include "symbols/named.h"
#include "util/json.h"
#include "util/strutil.h"

/* Text: " sym=NAME", then one frame a line. */
void pmt_stacks__text(const struct pmt_named *nm, struct pmt_buf *b);
/* JSON: a "sym" member, and a "stack" array of {addr, sym, inlined,
 * dso, file, line}. */
void pmt_stacks__json(const struct pmt_named *nm, struct pmt_json *j);

#endif
