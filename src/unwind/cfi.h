/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwind tables for the in-kernel unwinder: an ELF file's DWARF CFI
 * (.eh_frame, found through .eh_frame_hdr's table of FDEs) flattened into
 * rows sorted by file offset, each saying how to find the caller's frame
 * (bpf/abi.h, struct pmt_cfi_row). Each FDE's program is run once, its
 * CIE's and entries parsed by elfutils' libdw; an FDE with anything this
 * reader does not follow is read through libdw's lookups, one a row.
 * Consecutive rows with the same rules are merged; a gap between FDEs
 * gets a PMT_CFA_NONE row, so a pc there falls back to frame pointers.
 */
#ifndef PMT_CFI_H
#define PMT_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/error.h"
#include "abi.h"

struct pmt_cfi {
	struct pmt_cfi_row *rows; /* sorted by pc */
	size_t n;
	size_t unsupported; /* rows whose rules the unwinder cannot follow */
};

/* The rows of the ELF file open at fd. -errno with a message in err
 * (-ENOENT: the file has no .eh_frame_hdr). */
int pmt_cfi__read(int fd, struct pmt_cfi *out, struct pmt_error *err);
/* The same; libdw_only: every row from libdw's lookups, as the unit test
 * compares them with this reader's own pass over each FDE. */
int pmt_cfi__read_with(int fd, struct pmt_cfi *out, bool libdw_only, struct pmt_error *err);
void pmt_cfi__free(struct pmt_cfi *c);
/* The row covering file offset pc, or NULL (before the first). */
const struct pmt_cfi_row *pmt_cfi__find(const struct pmt_cfi *c, uint32_t pc);

#endif
