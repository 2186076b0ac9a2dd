// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include "unwind/rereads.h"

void pmt_rereads__init(struct pmt_rereads *t, uint32_t cap)
{
	*t = (struct pmt_rereads){.cap = cap};
}

void pmt_rereads__free(struct pmt_rereads *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0; /* the counts stay for the summary */
}

static uint32_t slot_of(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k)
{
	uint64_t h = (k->ino ^ ((uint64_t)k->dev << 40)) * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(h >> 32) & (t->cap - 1);
}

/* The key's slot, or the empty one where it would go. */
static struct pmt_reread *find(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k)
{
	uint32_t i = slot_of(t, k);

	/* never full: at most three quarters of it used */
	while (t->v[i].key.pad && (t->v[i].key.dev != k->dev || t->v[i].key.ino != k->ino))
		i = (i + 1) & (t->cap - 1);
	return &t->v[i];
}

uint32_t pmt_rereads__read(struct pmt_rereads *t, const struct pmt_cfi_file_key *k, uint64_t now_ns)
{
	struct pmt_reread *e;
	uint64_t hold;

	if (!t->cap)
		return 0;
	if (!t->v && !(t->v = calloc(t->cap, sizeof(*t->v))))
		return 0;
	e = find(t, k);
	if (!e->key.pad) {
		if (t->n + 1 > t->cap / 4 * 3) {
			memset(t->v, 0, (size_t)t->cap * sizeof(*t->v));
			t->n = 0;
			e = find(t, k);
		}
		*e = (struct pmt_reread){.key = {.dev = k->dev, .pad = 1, .ino = k->ino}};
		t->n++;
	}
	if (e->reads == 1)
		t->files++;
	if (e->reads) {
		t->reads++;
		hold = e->reads >= 7 ? PMT_REREAD_HOLD_MAX_NS
				     : PMT_REREAD_HOLD_NS << (e->reads - 1);
		e->held_until_ns = now_ns + hold;
	}
	return e->reads++;
}

bool pmt_rereads__held(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k,
		       uint64_t now_ns)
{
	const struct pmt_reread *e;

	if (!t->v)
		return false;
	e = find(t, k);
	return e->key.pad && now_ns < e->held_until_ns;
}

uint32_t pmt_rereads__count(const struct pmt_rereads *t, const struct pmt_cfi_file_key *k)
{
	const struct pmt_reread *e;

	if (!t->v)
		return 0;
	e = find(t, k);
	return e->key.pad ? e->reads : 0;
}
