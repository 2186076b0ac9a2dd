/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Addresses to names. Kernel addresses from /proc/kallsyms; user addresses
 * through elfutils' libdwfl (the library perf uses) over the files mapped
 * in the process: executables, PIE, shared libraries, the vDSO, separate
 * debuginfo by build-id. A process's mappings are read the first time it
 * is seen (pmt_syms__note_pid), so a process that has exited since still
 * resolves; each process is read once.
 */
#ifndef PMT_SYMBOLS_H
#define PMT_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include "util/strutil.h"

struct pmt_syms;

struct pmt_syms *pmt_syms__new(void);
void pmt_syms__free(struct pmt_syms *s);
/* Read pid's mappings now, if not yet read. */
void pmt_syms__note_pid(struct pmt_syms *s, uint32_t pid);
/* s may be NULL (out of memory): every name is then unknown. */
/* Append the name of addr in process pid (kernel addresses need no pid):
 * "func", or "func+0x1a" with offset; "[unknown]" when nothing is known
 * (with " 0x..." the address when with_addr_if_unknown). Returns whether
 * a symbol was found. */
bool pmt_syms__name(struct pmt_syms *s, uint32_t pid, uint64_t addr, bool offset,
		    bool with_addr_if_unknown, struct pmt_buf *b);
/* The file addr of process pid lies in (kernel addresses: the kernel). */
struct pmt_module {
	const char *file;    /* valid until the next call; "[kernel.kallsyms]" */
	char build_id[41];   /* hex, "" when unknown */
	uint64_t start, end; /* where it is mapped */
};
/* false when addr is in no known file. */
bool pmt_syms__module(struct pmt_syms *s, uint32_t pid, uint64_t addr, struct pmt_module *m);
/* Is addr in the kernel half of the address space? */
static inline bool pmt_is_kernel_addr(uint64_t addr)
{
	return addr >= 0xffff800000000000ULL;
}

#endif
