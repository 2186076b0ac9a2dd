/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* "Did you mean": close names for a misspelt one. */
#ifndef PMT_SUGGEST_H
#define PMT_SUGGEST_H

#include <stddef.h>

/* Edit distance (insert, delete, substitute, transpose), capped at cap+1. */
int pmt_edit_distance(const char *a, const char *b, int cap);

/*
 * Pick up to max names from cands[0..n) close to word: small edit distance,
 * or, for "cat:name" words, the same name in another category. Best first.
 * Returns how many were written to out.
 */
int pmt_suggest(const char *word, char *const *cands, size_t n, const char **out, int max);

#endif
