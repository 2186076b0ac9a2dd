/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rules the kernel's rows index (pmt_cfi_rules, bpf/abi/unwind.h):
 * each rule once, whatever files its rows are in, in the order first met.
 * A rule stays for the run: there are a few thousand (bounded by
 * PMT_CFI_RULES), where rows are millions and come and go with files.
 */
#ifndef PMT_RULES_H
#define PMT_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "abi.h"

struct pmt_cfi_rules {
	struct pmt_cfi_rule *v; /* by index */
	uint32_t n, max;
	size_t cap;
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	uint32_t nslots; /* a power of two, at least twice n */
};

void pmt_cfi_rules__init(struct pmt_cfi_rules *r, uint32_t max);
void pmt_cfi_rules__free(struct pmt_cfi_rules *r);
/* The rule of a row as the reader makes it (pad zeroed). */
struct pmt_cfi_rule pmt_cfi_rule__of(const struct pmt_cfi_row *row);
/* The row at pc of rule. */
struct pmt_cfi_row pmt_cfi_rule__row(uint32_t pc, const struct pmt_cfi_rule *rule);
/* rule's index, added if new (*added set then): -ENOSPC when max rules
 * are held, -ENOMEM. */
int64_t pmt_cfi_rules__intern(struct pmt_cfi_rules *r, const struct pmt_cfi_rule *rule,
			      bool *added);

#endif
