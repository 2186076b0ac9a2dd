/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * USDT probes (sys/sdt.h, DTRACE_PROBE) of an ELF file, as its
 * .note.stapsdt notes describe them: provider, name, semaphore and each
 * argument's size and signedness. Read for --list, for names and for the
 * argument types; libbpf's bpf_program__attach_usdt reads the notes again
 * to attach (locations, argument places), so nothing here decides where
 * a probe goes.
 */
#ifndef PMT_USDT_H
#define PMT_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"

#define PMT_USDT_MAX_ARGS 12 /* as libbpf's BPF_USDT_MAX_ARG_CNT */

struct pmt_usdt_arg {
	uint8_t size; /* bytes: 1, 2, 4 or 8 */
	bool is_signed;
	bool readable; /* an operand form libbpf 1.1 can read */
	char spec[40]; /* as the note writes it, "-4@%eax" (maybe cut) */
};

struct pmt_usdt_note {
	char *provider, *name;
	uint64_t pc;	    /* the probe's address (link-time) */
	uint64_t semaphore; /* its semaphore's address, 0: none */
	int nargs;
	struct pmt_usdt_arg args[PMT_USDT_MAX_ARGS];
	int sites; /* notes of this provider:name (inlined copies) */
	/* an argument some site has in a form libbpf cannot read: index, or
	 * -1 (its spec in args[].spec, from that site) */
	int unreadable;
};

struct pmt_usdt_notes {
	struct pmt_usdt_note *v; /* one a provider:name, sorted by it */
	size_t n;
};

/* The USDT probes of the ELF file at path (none: n == 0). 0, or -errno
 * with err set (usage: path is no ELF file; runtime: out of memory). */
int pmt_usdt__read(const char *path, struct pmt_usdt_notes *out, struct pmt_error *err);
void pmt_usdt__free(struct pmt_usdt_notes *n);

/* Parse a note's argument string ("-4@%eax 8@-16(%rbp) 8@$5") into types;
 * the number of arguments, or -EINVAL for a spec it cannot read. */
int pmt_usdt__parse_args(const char *spec, struct pmt_usdt_arg *args, int max);
/* "s32", "u64", ... of an argument. */
const char *pmt_usdt__type(const struct pmt_usdt_arg *a);

#endif
