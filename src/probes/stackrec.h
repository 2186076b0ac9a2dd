/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records a provider's program builds itself (PMU samples, calls) end with
 * a struct pmt_stack_rec (bpf/abi.h); these serve them all.
 */
#ifndef PMT_STACKREC_H
#define PMT_STACKREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tracefs/format.h"

/* The hidden kstack/ustack key fields of the pmt_stack_rec that ends a
 * record of f->fixed_size bytes; -ENOMEM. */
int pmt_stackrec__add_fields(struct pmt_format *f);
/* A tracepoint's: the keys at PMT_TP_STACK of the program's copy of the
 * record (bpf/tracepoint.bpf.c), past any record. */
int pmt_stackrec__add_tp_fields(struct pmt_format *f);
/* The frames a program put after the record of format f it built (len
 * bytes at data): how many, their addresses, and how many of them are
 * the kernel's (innermost first); 0 for none. */
uint32_t pmt_stackrec__frames(const struct pmt_format *f, const void *data, size_t len,
			      const uint64_t **frames, uint32_t *nkernel);
/* Does this record format carry stacks (--stack, --by stack)? */
bool pmt_stackrec__has(const struct pmt_format *f);

#endif
