// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the loader drained from the kernel's hash (src/aggregate/maps_bpf.c):
 * one entry a key, its values merged across drains, found through an
 * open-addressing index; and a copy of each stack the keys refer to, so
 * the kernel's stack table only holds what its live keys need.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/grow.h"
#include "aggregate/aggregate_internal.h"

static uint64_t mix(uint64_t h)
{
	h *= 0x9E3779B97F4A7C15ULL;
	return h ^ h >> 29;
}

static uint64_t key_hash(const struct pmt_agg_key *k)
{
	uint64_t w[sizeof(*k) / 8], h = 0;
	size_t i;

	memcpy(w, k, sizeof(w));
	for (i = 0; i < sizeof(w) / 8; i++)
		h = mix(h ^ w[i]);
	return h;
}

/* Index slots of 0..n-1 items (at + 1; 0 empty), a power of two at least
 * twice n, filled from scratch by hash(ctx, i). */
static int reindex(uint32_t **index, size_t *cap, size_t n,
		   uint64_t (*hash)(const void *ctx, size_t i), const void *ctx)
{
	size_t c = 64, i, j;
	uint32_t *x;

	while (c < 2 * n)
		c <<= 1;
	x = calloc(c, sizeof(*x));
	if (!x) {
		/* no index, and none needed until the next add makes one */
		free(*index);
		*index = NULL;
		*cap = 0;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		for (j = hash(ctx, i) & (c - 1); x[j]; j = (j + 1) & (c - 1))
			;
		x[j] = (uint32_t)i + 1;
	}
	free(*index);
	*index = x;
	*cap = c;
	return 0;
}

/* --- totals ------------------------------------------------------------------ */

static uint64_t entry_hash(const void *ctx, size_t i)
{
	return key_hash(&((const struct pmt_agg_entries *)ctx)->v[i].key);
}

/* The entry of x's key, or where it would go: *slot (the index's) */
static struct pmt_agg_entry *find(const struct pmt_agg_totals *t, const struct pmt_agg_key *k,
				  size_t *slot)
{
	size_t j;

	for (j = key_hash(k) & (t->cap - 1); t->index[j]; j = (j + 1) & (t->cap - 1)) {
		struct pmt_agg_entry *have = &t->e.v[t->index[j] - 1];

		if (!memcmp(&have->key, k, sizeof(*k)))
			return have;
	}
	*slot = j;
	return NULL;
}

/* x's values into its key's entry (merged, or set), made if new */
static int put(struct pmt_agg_totals *t, const struct pmt_agg_entry *x, bool merge)
{
	struct pmt_agg_entries *e = &t->e;
	struct pmt_agg_entry *v;
	size_t j = 0;
	int err;

	if (!x->val.count)
		return 0;
	if (t->cap < 2 * (e->n + 1) && (err = reindex(&t->index, &t->cap, e->n, entry_hash, e)))
		return err;
	if ((v = find(t, &x->key, &j))) {
		if (merge)
			pmt_agg_val__merge(&v->val, &x->val);
		else
			v->val = x->val;
		return 0;
	}
	if (t->limit && e->n >= t->limit)
		return -ENOSPC;
	if (!(v = pmt_grow(e->v, &e->cap, e->n, sizeof(*v), 256)))
		return -ENOMEM;
	e->v = v;
	v = &e->v[e->n];
	*v = *x;
	v->idle = false;
	v->base_count = 0;
	v->base_sum = 0;
	t->index[j] = (uint32_t)++e->n;
	t->sorted = false;
	return 0;
}

int pmt_agg_totals__add(struct pmt_agg_totals *t, const struct pmt_agg_entry *x)
{
	return put(t, x, true);
}

int pmt_agg_totals__set(struct pmt_agg_totals *t, const struct pmt_agg_entry *x)
{
	return put(t, x, false);
}

static uint32_t map_of(const struct pmt_agg_entry *e)
{
	return e->key.pad >> PMT_AGG_MAP_SHIFT;
}

/* By map, then as a print sorts (pmt_agg_entry__cmp) */
static int cmp_by_map(const void *a, const void *b)
{
	uint32_t x = map_of(a), y = map_of(b);

	return x != y ? (x > y) - (x < y) : pmt_agg_entry__cmp(a, b);
}

int pmt_agg_totals__map(struct pmt_agg_totals *t, uint32_t map, struct pmt_agg_entries *view)
{
	struct pmt_agg_entries *e = &t->e;
	size_t lo, hi;
	int err;

	memset(view, 0, sizeof(*view));
	if (!t->sorted && e->n) {
		pmt_sort(e->v, e->n, sizeof(*e->v), cmp_by_map);
		/* (the index is of positions: made again for the new ones) */
		if ((err = reindex(&t->index, &t->cap, e->n, entry_hash, e)))
			return err;
		t->sorted = true;
	}
	for (lo = 0; lo < e->n && map_of(&e->v[lo]) < map; lo++)
		;
	for (hi = lo; hi < e->n && map_of(&e->v[hi]) == map; hi++)
		;
	view->v = e->v + lo;
	view->n = hi - lo;
	return 0;
}

void pmt_agg_totals__cut(struct pmt_agg_totals *t, size_t at, size_t n)
{
	struct pmt_agg_entries *e = &t->e;

	if (!n || at + n > e->n)
		return;
	memmove(e->v + at, e->v + at + n, (e->n - at - n) * sizeof(*e->v));
	e->n -= n;
	/* (order kept: still sorted if it was) */
	reindex(&t->index, &t->cap, e->n, entry_hash, e);
}

void pmt_agg_totals__free(struct pmt_agg_totals *t)
{
	pmt_agg_entries__free(&t->e);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

/* --- stacks -------------------------------------------------------------- */

static uint64_t copy_hash(const void *ctx, size_t i)
{
	return mix(((const struct pmt_stack_copies *)ctx)->v[i].key);
}

/* a stack's content: its owner (the key's high half) and its hash */
static uint64_t content_hash(uint64_t key, uint64_t hash)
{
	return mix(mix(key >> 32) ^ hash);
}

static uint64_t copy_content_hash(const void *ctx, size_t i)
{
	const struct pmt_stack_copy *c = &((const struct pmt_stack_copies *)ctx)->v[i];

	return content_hash(c->key, c->check);
}

const struct pmt_stack_copy *pmt_stack_copies__find(const struct pmt_stack_copies *s, uint64_t key)
{
	size_t j;

	if (!s->cap)
		return NULL;
	for (j = mix(key) & (s->cap - 1); s->index[j]; j = (j + 1) & (s->cap - 1))
		if (s->v[s->index[j] - 1].key == key)
			return &s->v[s->index[j] - 1];
	return NULL;
}

/* both indexes anew: what failed leaves none, made again at the next put */
static int reindex_copies(struct pmt_stack_copies *s, size_t n)
{
	int err = reindex(&s->index, &s->cap, n, copy_hash, s);

	if (!err && (err = reindex(&s->by_content, &s->ccap, n, copy_content_hash, s))) {
		free(s->index);
		s->index = NULL;
		s->cap = 0;
	}
	return err;
}

int pmt_stack_copies__put(struct pmt_stack_copies *s, uint64_t key, uint64_t check,
			  const uint64_t *ips, uint32_t n)
{
	const struct pmt_stack_copy *have = pmt_stack_copies__find(s, key);
	struct pmt_stack_copy *c;
	size_t j;
	int err;

	if (have)
		return have->check == check ? 0 : -EEXIST;
	if (s->cap < 2 * (s->n + 1) && (err = reindex_copies(s, s->n)))
		return err;
	if (!(c = pmt_grow(s->v, &s->vcap, s->n, sizeof(*c), 256)))
		return -ENOMEM;
	s->v = c;
	c = &s->v[s->n];
	c->ips = malloc((n ? n : 1) * sizeof(*ips));
	if (!c->ips)
		return -ENOMEM;
	memcpy(c->ips, ips, n * sizeof(*ips));
	c->key = key;
	c->check = check;
	c->n = n;
	c->used = false;
	c->rebased = false;
	for (j = mix(key) & (s->cap - 1); s->index[j]; j = (j + 1) & (s->cap - 1))
		;
	s->index[j] = (uint32_t)s->n + 1;
	for (j = content_hash(key, check) & (s->ccap - 1); s->by_content[j];
	     j = (j + 1) & (s->ccap - 1))
		;
	s->by_content[j] = (uint32_t)++s->n;
	return 0;
}

int pmt_stack_copies__id(struct pmt_stack_copies *s, uint64_t hint, uint64_t hash,
			 const uint64_t *ips, uint32_t n, uint64_t *id)
{
	uint32_t step = (uint32_t)(hash >> 32) | 1, slot = (uint32_t)hint;
	const struct pmt_stack_copy *c;
	uint64_t owner = hint >> 32 << 32;
	size_t j;

	/* held already: the same owner, hash and frames */
	for (j = s->ccap ? content_hash(hint, hash) & (s->ccap - 1) : 0;
	     s->ccap && s->by_content[j]; j = (j + 1) & (s->ccap - 1)) {
		c = &s->v[s->by_content[j] - 1];
		if (c->key >> 32 == hint >> 32 && c->check == hash && c->n == n &&
		    !memcmp(c->ips, ips, n * sizeof(*ips))) {
			*id = c->key;
			return 0;
		}
	}
	/* a new one: under hint, or the first free key of its steps (the
	 * low halves that say "no stack" and "deferred" are no key) */
	while (slot >= PMT_USTACK_DEFERRED || pmt_stack_copies__find(s, owner | slot))
		slot += step;
	*id = owner | slot;
	return pmt_stack_copies__put(s, *id, hash, ips, n);
}

void pmt_stack_copies__use(struct pmt_stack_copies *s, uint64_t key)
{
	const struct pmt_stack_copy *c = pmt_stack_copies__find(s, key);

	if (c)
		s->v[c - s->v].used = true;
}

size_t pmt_stack_copies__sweep(struct pmt_stack_copies *s)
{
	size_t i, kept = 0, n = s->n;

	for (i = 0; i < n; i++) {
		if (s->v[i].used) {
			s->v[i].used = false;
			s->v[kept++] = s->v[i];
		} else {
			free(s->v[i].ips);
		}
	}
	s->n = kept;
	if (kept < n)
		reindex_copies(s, kept);
	return n - kept;
}

void pmt_stack_copies__free(struct pmt_stack_copies *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].ips);
	free(s->v);
	free(s->index);
	free(s->by_content);
	memset(s, 0, sizeof(*s));
}
