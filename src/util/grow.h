/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Growing arrays: every array of pmtrace that grows, grows here, by
 * doubling (amortised O(1) appends; a run of hours reallocates as often as
 * its arrays double, not once an element).
 */
#ifndef PMT_GROW_H
#define PMT_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* An array v of n items of size bytes, with room for *cap: v itself when
 * it has room for one more, else v moved to twice the room (first at
 * first), *cap updated; NULL when out of memory (v left as it was). */
void *pmt_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

/* Room for need items in all: as pmt_grow, doubling until need fits. */
void *pmt_grow_to(void *v, size_t *cap, size_t need, size_t size, size_t first);

/* One slot opened at index at of the array *v of *n items (those from at
 * on moved up one), *n counted up; false when out of memory (nothing
 * changed). */
bool pmt_grow_insert(void **v, size_t *n, size_t *cap, size_t size, size_t at, size_t first);

/* The slot at index at removed, those after it moved down; *n counted down. */
void pmt_grow_remove(void *v, size_t *n, size_t size, size_t at);

/* qsort of the n items of v; nothing for fewer than two (an empty
 * array's v may be NULL, which qsort must not be given). */
void pmt_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

#endif
