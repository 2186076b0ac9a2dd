/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How often each file's unwind rows were read, so that a file read again
 * after giving its rows back holds them longer before it may give them
 * back once more (src/unwind/tables_bpf.c's reclaim): 1 s after its second read,
 * twice that after each later one, up to PMT_REREAD_HOLD_MAX_NS. A file
 * that goes and comes back in a loop (stacks of a process gone finished
 * late, files mapped on and off) is read a handful of times, not hundreds;
 * a file read once gives its rows back as soon as no process maps it.
 *
 * An open-addressed table of a fixed size, made at the first read: full
 * to three quarters, it starts again empty (the holds of the files met
 * before are forgotten, nothing else).
 */
#ifndef PMT_REREADS_H
#define PMT_REREADS_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"

#define PMT_REREAD_HOLD_NS 1000000000ULL      /* after a second read */
#define PMT_REREAD_HOLD_MAX_NS 64000000000ULL /* after the eighth and on */

struct pmt_reread {
	struct pmt_cfi_file_key key; /* pad 1: slot used */
	uint32_t reads;
	uint64_t held_until_ns;
};

struct pmt_rereads {
	struct pmt_reread *v; /* cap slots, made at the first read */
	uint32_t cap, n;
	uint64_t files, reads; /* read again: files and reads, for the summary */
};

/* cap: a power of two. */
void pmt_rereads__init(struct pmt_rereads *t, uint32_t cap);
void pmt_rereads__free(struct pmt_rereads *t);
/* The file's rows were read at now_ns: how many times before (0: first). */
uint32_t pmt_rereads__read(struct pmt_rereads *t, const struct pmt_cfi_file_key *k,
			   uint64_t now_ns);
/* How many times the file's rows were read (as far as remembered). */
uint32_t pmt_rereads__count(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k);
/* Must the file keep its rows at now_ns, no process mapping it? */
bool pmt_rereads__held(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k,
		       uint64_t now_ns);

#endif
