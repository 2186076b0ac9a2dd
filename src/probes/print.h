/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A probe's --printf made: its arguments placed where the record brings
 * them. comm, pid, tid, cpu, nsecs, elapsed and probe are the header's
 * (or the run's); a plain field is the streamed record's own, decoded in
 * user space; str() reads a string slot in the kernel; any other number
 * (an expression, a member chain, uid, a builtin) a number slot the
 * kernel computes (struct pmt_probe_cfg.vals).
 */
#ifndef PMT_PRINT_H
#define PMT_PRINT_H

#include <stddef.h>
#include "filter/expr.h"
#include "probes/probe.h"
#include "util/error.h"

/* p's --printf text into p->print (p->nvals and p->nstrs_print say the
 * slots it uses; their operands in p->vals and p->strs), the
 * expressions compiled into mine (the caller makes them one program).
 * bt_name: the probe as bpftrace's probe builtin names it; str_max:
 * bytes a string shows at most; prog: the program the text is of (its
 * tables of strings), or NULL. 0, or -errno with err set. */
struct pmt_program;
int pmt_probe__print(struct pmt_probe *p, const char *text, const char *bt_name,
		     struct pmt_exprs *mine, const struct pmt_typesys *types, size_t str_max,
		     const struct pmt_program *prog, struct pmt_error *err);

#endif
