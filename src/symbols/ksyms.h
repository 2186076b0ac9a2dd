/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel addresses to names: /proc/kallsyms' text symbols in a compact
 * table. 8 bytes a symbol beside its name: the low 32 bits of its
 * address and its name's offset, sorted; the high 32 bits, which few
 * runs of them share (x86-64's kernel, modules and BPF programs all lie
 * in the top 2 GB), once a run; a function and its padding's __pfx_
 * symbol as one. 121,000 symbols on 6.18 took 6.3 MB as 16-byte entries
 * grown by doubling, 2 MB so. */
#ifndef PMT_KSYMS_H
#define PMT_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pmt_ksym_run;
struct pmt_ksym;

/* A name offset's top bit: the symbol has a __pfx_ twin (below) */
#define PMT_KSYM_PFX 0x80000000u

struct pmt_ksyms {
	struct pmt_ksym *v; /* by address */
	size_t n;
	struct pmt_ksym_run *runs; /* by their high 32 bits */
	size_t nruns;
	char *names; /* every name, each NUL-terminated */
	size_t names_len;
	/* a kernel built with function padding (x86-64's call depth
	 * tracking) has a __pfx_NAME symbol this many bytes before each
	 * function NAME (57,000 of 121,000 symbols on 6.18, 1.6 MB of
	 * names): one flagged symbol stands for the pair */
	uint32_t pfx;
	/* every address read was 0: the kernel hides them from this user
	 * (kptr_restrict, CAP_SYSLOG) */
	bool hidden;
};

/* The text symbols (t, T, w, W) of f, a /proc/kallsyms, into an empty k;
 * -ENOMEM (k then holds those read so far). */
int pmt_ksyms__read(struct pmt_ksyms *k, FILE *f);
/* A symbol found: its name is prefix then name */
struct pmt_ksym_found {
	const char *prefix, *name;
	uint64_t start;
};

/* The symbol at or below addr; false if none. */
bool pmt_ksyms__find(const struct pmt_ksyms *k, uint64_t addr, struct pmt_ksym_found *out);
/* The table's heap bytes */
size_t pmt_ksyms__bytes(const struct pmt_ksyms *k);
void pmt_ksyms__free(struct pmt_ksyms *k);

#endif
