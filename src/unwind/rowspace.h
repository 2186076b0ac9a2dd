/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Room in the kernel's array of CFI rows (pmt_cfi_rows): every file's rows
 * are one run of it. Rows are given out from the start up; the rows of a
 * file no process maps any more are given back (src/unwind/tables_bpf.c) and
 * taken again by a later file, once no program can still be reading them
 * (ripe: a time after they were given back). A run of hours that meets
 * thousands of files (builds, containers, upgraded libraries) then holds
 * the rows of what runs now, not of everything it ever met.
 */
#ifndef PMT_ROWSPACE_H
#define PMT_ROWSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_rowhole {
	uint32_t first, count;
	uint64_t ripe_ns; /* free to take from this time on */
};

struct pmt_rowspace {
	uint32_t cap;		   /* rows in the array */
	uint32_t used;		   /* rows [0, used) have been given out (holes aside) */
	struct pmt_rowhole *holes; /* given back, by first, none adjacent */
	size_t n, alloc;
	uint64_t given_back, taken_again; /* rows, for the summary */
};

void pmt_rowspace__init(struct pmt_rowspace *s, uint32_t cap);
void pmt_rowspace__free(struct pmt_rowspace *s);
/* n rows (n > 0): the smallest ripe hole they fit, else the room never
 * given out; *first their first. False if neither has room at now_ns. */
bool pmt_rowspace__take(struct pmt_rowspace *s, uint32_t n, uint64_t now_ns, uint32_t *first);
/* Could n rows be taken from a hole, ripe or not: then *ripe_ns is when
 * (the earliest of those that fit). */
bool pmt_rowspace__hole_for(const struct pmt_rowspace *s, uint32_t n, uint64_t *ripe_ns);
/* Could n rows be taken, now or once a hole ripens? */
bool pmt_rowspace__fits(const struct pmt_rowspace *s, uint32_t n);
/* Rows [first, first + n) back, free from ripe_ns on (merged with the
 * holes beside them, which then ripen at the later time). -ENOMEM. */
int pmt_rowspace__give(struct pmt_rowspace *s, uint32_t first, uint32_t n, uint64_t ripe_ns);
/* Rows free now or later (holes and the room never given out). */
uint64_t pmt_rowspace__free_rows(const struct pmt_rowspace *s);

#endif
