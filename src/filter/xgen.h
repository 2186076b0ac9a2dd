/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Generated programs (bpf/abi/xgen.h): a tracepoint probe's expression
 * programs (struct pmt_expr, its aggregation's and its statements')
 * translated into one BPF program, straight-line code with the machine's
 * stack at fixed places of the frame, so that no step of it is
 * interpreted in the kernel. The translation is exact or refused: an
 * operation, an operand or a stack depth the machine would stop at, or one
 * not translated (strings), leaves the probe to the machine.
 */
#ifndef PMT_XGEN_H
#define PMT_XGEN_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "abi.h"

/* The maps the program names, by their descriptors */
struct pmt_xgen_maps {
	int xmem, vars, strvars; /* pmt_xmem, pmt_vars, pmt_strvars */
	int hits, stats, faults; /* pmt_hits, pmt_stats, pmt_read_faults */
	int progs;		 /* pmt_xgen_tp */
};

struct pmt_xgen_probe {
	const struct pmt_expr *xprog; /* the aggregation's, or NULL */
	const struct pmt_expr *sprog; /* the statements', or NULL */
	uint32_t probe;		      /* its id */
	/* it aggregates: the program returns to pmt_tp_xgen's update; else
	 * it counts the probe's hit itself and ends */
	bool back;
	uint32_t back_at; /* pmt_xgen_tp's entry of pmt_tp_xback */
	bool use_vars;	  /* the session's pmt_use_vars */
	uint64_t elapsed_origin, cpid;
};

/* Can x be generated exactly (use_vars: the session's)? */
bool pmt_xgen__supported(const struct pmt_expr *x, bool use_vars);

/* The program of p, naming the maps m: *insns (the caller frees it) and
 * *n instructions. 0, -EOPNOTSUPP where a program cannot be generated,
 * -ENOMEM. */
int pmt_xgen__build(const struct pmt_xgen_probe *p, const struct pmt_xgen_maps *m,
		    struct bpf_insn **insns, size_t *n);

#endif
