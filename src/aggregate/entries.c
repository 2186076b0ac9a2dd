// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A snapshot of the aggregation maps as entries: each key's per-CPU
 * values merged into one, taking the kernel's per-CPU key cache into
 * account (bpf/abi.h, struct pmt_agg_cache).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/grow.h"
#include "aggregate/aggregate_internal.h"

/* Where the kernel caches key (bpf/abi.h): the same slot it computes from
 * the key's words, which are zero past the map's key size on both sides. */
const struct pmt_agg_cslot *pmt_agg_cache__slot(const struct pmt_agg_cache *c,
						const struct pmt_agg_key *key)
{
	uint64_t w[PMT_AGG_KEY_WORDS], sum = 0;
	size_t i;

	memcpy(w, key, sizeof(w));
	for (i = 0; i < PMT_AGG_KEY_WORDS; i++)
		sum += w[i];
	return &c->slot[PMT_AGG_CSLOT(sum) & (PMT_AGG_CACHE - 1)];
}

const struct pmt_agg_cslot *pmt_agg_cache__holding(const struct pmt_agg_cache *c,
						   const struct pmt_agg_key *key)
{
	const struct pmt_agg_cslot *sl = pmt_agg_cache__slot(c, key);

	return sl->val.count && !memcmp(&sl->key, key, sizeof(*key)) ? sl : NULL;
}

/* Each CPU's value of key: its cache slot's while the hash still holds
 * what the slot was loaded with, else the hash's. The caches were read
 * first: a slot written back meanwhile left the hash as far on, and one
 * whose key was deleted and came back is counted once written back
 * (bpf/abi.h), so no event counts twice. */
static void apply_cache(const struct pmt_agg_cache *cache, const struct pmt_agg_key *key,
			struct pmt_agg_val *pc, int ncpu)
{
	int c;

	for (c = 0; cache && c < ncpu; c++) {
		const struct pmt_agg_cslot *sl = pmt_agg_cache__holding(&cache[c], key);

		if (sl && pc[c].count == sl->base_count)
			pc[c] = sl->val;
	}
}

int pmt_agg_entries__add(struct pmt_agg_entries *v, const struct pmt_agg_key *key,
			 struct pmt_agg_val *pc, int ncpu, const struct pmt_agg_cache *cache)
{
	struct pmt_agg_entry *e;
	int c;

	apply_cache(cache, key, pc, ncpu);
	if (!(e = pmt_grow(v->v, &v->cap, v->n, sizeof(*e), 256)))
		return -ENOMEM;
	v->v = e;
	e = &v->v[v->n];
	memset(e, 0, sizeof(*e));
	e->key = *key;
	for (c = 0; c < ncpu; c++) {
		if (!pc[c].count)
			continue;
		if (!e->val.count || pc[c].min < e->val.min)
			e->val.min = pc[c].min;
		if (!e->val.count || pc[c].max > e->val.max)
			e->val.max = pc[c].max;
		e->val.count += pc[c].count;
		e->val.sum += pc[c].sum;
	}
	if (e->val.count)
		v->n++;
	return 0;
}

void pmt_agg_entries__free(struct pmt_agg_entries *e)
{
	free(e->v);
	memset(e, 0, sizeof(*e));
}

/* By key data, then by bucket as a number: a key's entries are adjacent
 * and its buckets ascend, (..., 0) first. (A memcmp of the whole key put
 * the bucket first and compared its bytes: bucket -1 sorted last, 256
 * before 1, and one key's buckets were split by the others'.) */
int pmt_agg_entry__cmp(const void *a, const void *b)
{
	const struct pmt_agg_key *x = &((const struct pmt_agg_entry *)a)->key;
	const struct pmt_agg_key *y = &((const struct pmt_agg_entry *)b)->key;
	int d = memcmp(x->data, y->data, sizeof(x->data));

	if (d)
		return d;
	return (x->bucket > y->bucket) - (x->bucket < y->bucket);
}

/* An empty side has no min or max to give (its fields may be zero). */
void pmt_agg_val__merge(struct pmt_agg_val *t, const struct pmt_agg_val *v)
{
	if (!v->count)
		return;
	if (!t->count) {
		*t = *v;
		return;
	}
	if (v->min < t->min)
		t->min = v->min;
	if (v->max > t->max)
		t->max = v->max;
	t->count += v->count;
	t->sum += v->sum;
}

void pmt_agg_entries__sort(struct pmt_agg_entries *e)
{
	size_t i;

	for (i = 1; i < e->n; i++)
		if (pmt_agg_entry__cmp(&e->v[i - 1], &e->v[i]) > 0) {
			pmt_sort(e->v, e->n, sizeof(*e->v), pmt_agg_entry__cmp);
			return;
		}
}
