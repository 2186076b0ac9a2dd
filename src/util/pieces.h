/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Texts kept as their pieces, each piece once: a piece runs up to and
 * with a '\n' or ';' (a stack's frame line, a folded stack's frame). A
 * print's thousands of stacks share most of their frames: 3,900 texts of
 * 750 bytes held 2.9 MB of the always-on print's peak.
 */
#ifndef PMT_PIECES_H
#define PMT_PIECES_H

#include <stdbool.h>
#include <stdint.h>
#include "util/strutil.h"

struct pmt_pieces {
	struct pmt_buf chars; /* the pieces, each NUL-ended */
	uint32_t *at;	      /* a piece's offset in chars, by its id */
	size_t n, cap;
	uint32_t *index; /* open addressing: id + 1, 0 empty */
	size_t icap;	 /* of index: a power of two */
};

/* A text as its pieces: its count, then their ids ([n, id, ...]), the
 * caller's to free. NULL when memory ran out. */
uint32_t *pmt_pieces__add(struct pmt_pieces *p, const char *text);
/* The text back, appended to b. */
void pmt_pieces__join(const struct pmt_pieces *p, const uint32_t *t, struct pmt_buf *b);
bool pmt_pieces__same(const uint32_t *a, const uint32_t *b);
uint64_t pmt_pieces__hash(const uint32_t *t);
/* As strcmp of the two texts. */
int pmt_pieces__cmp(const struct pmt_pieces *p, const uint32_t *a, const uint32_t *b);
void pmt_pieces__free(struct pmt_pieces *p);

#endif
