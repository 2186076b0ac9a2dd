// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Growing arrays (grow.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/grow.h"

void *pmt_grow_to(void *v, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t nc;

	if (need <= *cap)
		return v;
	nc = *cap ? *cap : first ? first : 1;
	while (nc < need)
		nc *= 2;
	if (nc > SIZE_MAX / size)
		return NULL;
	v = realloc(v, nc * size);
	if (v)
		*cap = nc;
	return v;
}

void *pmt_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
	return pmt_grow_to(v, cap, n + 1, size, first);
}

bool pmt_grow_insert(void **v, size_t *n, size_t *cap, size_t size, size_t at, size_t first)
{
	char *g = pmt_grow(*v, cap, *n, size, first);

	if (!g)
		return false;
	memmove(g + (at + 1) * size, g + at * size, (*n - at) * size);
	*v = g;
	(*n)++;
	return true;
}

void pmt_grow_remove(void *v, size_t *n, size_t size, size_t at)
{
	char *g = v;

	memmove(g + at * size, g + (at + 1) * size, (*n - at - 1) * size);
	(*n)--;
}

void pmt_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}
