/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Strings in pages not yet touched, for uprobes and USDT probes: a
 * sleepable program (bpf/fault.bpf.c) faults in the strings a probe's
 * str() reads, attached after the probe so the kernel runs it first.
 * Where the kernel cannot (sleepable uprobes came in 5.19), such reads
 * fail as before: <fault>, counted.
 */
#ifndef PMT_FAULT_H
#define PMT_FAULT_H

#include <stdbool.h>
#include <stdint.h>
#include "probes/provider.h"

/* The argument slots (bit N: argN, N < nslots) whose strings probe p
 * reads from the addresses they hold: str(argN) in its filter, keys or
 * value, and --str's. */
uint64_t pmt_fault__mask(const struct pmt_probe *p, unsigned nslots);
/* Can this kernel run sleepable uprobe programs? (found out once) */
bool pmt_fault__possible(void);
/* Choose prog when a probe needs it (mask != 0) and the kernel can. */
void pmt_fault__prepare(struct bpf_program *prog, bool needed);
/* Attach the fault program made by attach() (NULL: it failed, errno
 * set) to p's site as one more of its links; a failure is a warning:
 * such strings then read as <fault>, counted. */
void pmt_fault__keep(struct pmt_probe *p, struct bpf_link *link);

#endif
