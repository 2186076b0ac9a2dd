// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "unwind/rowspace.h"
#include "util/grow.h"

void pmt_rowspace__init(struct pmt_rowspace *s, uint32_t cap)
{
	*s = (struct pmt_rowspace){.cap = cap};
}

void pmt_rowspace__free(struct pmt_rowspace *s)
{
	free(s->holes);
	s->holes = NULL;
	s->n = s->alloc = 0; /* the counts stay for the summary */
}

bool pmt_rowspace__take(struct pmt_rowspace *s, uint32_t n, uint64_t now_ns, uint32_t *first)
{
	size_t i, best = s->n;

	if (!n)
		return false;
	/* best fit: a large hole stays whole for a large file */
	for (i = 0; i < s->n; i++)
		if (s->holes[i].count >= n && s->holes[i].ripe_ns <= now_ns &&
		    (best == s->n || s->holes[i].count < s->holes[best].count))
			best = i;
	if (best < s->n) {
		struct pmt_rowhole *h = &s->holes[best];

		*first = h->first;
		h->first += n;
		h->count -= n;
		if (!h->count)
			pmt_grow_remove(s->holes, &s->n, sizeof(*h), best);
		s->taken_again += n;
		return true;
	}
	if (n > s->cap - s->used)
		return false;
	*first = s->used;
	s->used += n;
	return true;
}

bool pmt_rowspace__hole_for(const struct pmt_rowspace *s, uint32_t n, uint64_t *ripe_ns)
{
	bool found = false;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->holes[i].count >= n && (!found || s->holes[i].ripe_ns < *ripe_ns)) {
			*ripe_ns = s->holes[i].ripe_ns;
			found = true;
		}
	return found;
}

bool pmt_rowspace__fits(const struct pmt_rowspace *s, uint32_t n)
{
	uint64_t ripe;

	return n <= s->cap - s->used || pmt_rowspace__hole_for(s, n, &ripe);
}

int pmt_rowspace__give(struct pmt_rowspace *s, uint32_t first, uint32_t n, uint64_t ripe_ns)
{
	struct pmt_rowhole *h;
	size_t at = 0;

	if (!n)
		return 0;
	while (at < s->n && s->holes[at].first < first)
		at++;
	s->given_back += n;
	/* after the hole before it */
	if (at && s->holes[at - 1].first + s->holes[at - 1].count == first) {
		h = &s->holes[at - 1];
		h->count += n;
		if (ripe_ns > h->ripe_ns)
			h->ripe_ns = ripe_ns;
		/* ... and before the next one: the three are one */
		if (at < s->n && h->first + h->count == s->holes[at].first) {
			h->count += s->holes[at].count;
			if (s->holes[at].ripe_ns > h->ripe_ns)
				h->ripe_ns = s->holes[at].ripe_ns;
			pmt_grow_remove(s->holes, &s->n, sizeof(*h), at);
		}
		return 0;
	}
	/* before the next one */
	if (at < s->n && first + n == s->holes[at].first) {
		h = &s->holes[at];
		h->first = first;
		h->count += n;
		if (ripe_ns > h->ripe_ns)
			h->ripe_ns = ripe_ns;
		return 0;
	}
	if (!pmt_grow_insert((void **)&s->holes, &s->n, &s->alloc, sizeof(*h), at, 16)) {
		s->given_back -= n;
		return -ENOMEM;
	}
	s->holes[at] = (struct pmt_rowhole){first, n, ripe_ns};
	return 0;
}

uint64_t pmt_rowspace__free_rows(const struct pmt_rowspace *s)
{
	uint64_t n = s->cap - s->used;
	size_t i;

	for (i = 0; i < s->n; i++)
		n += s->holes[i].count;
	return n;
}
