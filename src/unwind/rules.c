// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind/rules.h"
#include "util/grow.h"
#include "util/strutil.h"

void pmt_cfi_rules__init(struct pmt_cfi_rules *r, uint32_t max)
{
	*r = (struct pmt_cfi_rules){.max = max};
}

void pmt_cfi_rules__free(struct pmt_cfi_rules *r)
{
	free(r->v);
	free(r->slots);
	pmt_cfi_rules__init(r, r->max);
}

struct pmt_cfi_rule pmt_cfi_rule__of(const struct pmt_cfi_row *row)
{
	struct pmt_cfi_rule rule;

	memset(&rule, 0, sizeof(rule));
	rule.cfa_off = row->cfa_off;
	rule.fp_off = row->fp_off;
	rule.bx_off = row->bx_off;
	rule.cfa = row->cfa;
	rule.fp = row->fp;
	rule.bx = row->bx;
	return rule;
}

struct pmt_cfi_row pmt_cfi_rule__row(uint32_t pc, const struct pmt_cfi_rule *rule)
{
	struct pmt_cfi_row row;

	memset(&row, 0, sizeof(row));
	row.pc = pc;
	row.cfa_off = rule->cfa_off;
	row.fp_off = rule->fp_off;
	row.bx_off = rule->bx_off;
	row.cfa = rule->cfa;
	row.fp = rule->fp;
	row.bx = rule->bx;
	return row;
}

static uint32_t hash(const struct pmt_cfi_rule *rule)
{
	uint64_t h = pmt_hash_bytes(PMT_HASH_SEED, rule, sizeof(*rule));

	return (uint32_t)(h ^ h >> 32);
}

/* The slot of rule, or of the empty one where it would go. */
static uint32_t *slot_of(const struct pmt_cfi_rules *r, const struct pmt_cfi_rule *rule)
{
	uint32_t i = hash(rule) & (r->nslots - 1);

	while (r->slots[i] && memcmp(&r->v[r->slots[i] - 1], rule, sizeof(*rule)))
		i = (i + 1) & (r->nslots - 1);
	return &r->slots[i];
}

static int rehash(struct pmt_cfi_rules *r, uint32_t nslots)
{
	uint32_t *old = r->slots, oldn = r->nslots, i;

	r->slots = calloc(nslots, sizeof(*r->slots));
	if (!r->slots) {
		r->slots = old;
		return -ENOMEM;
	}
	r->nslots = nslots;
	for (i = 0; i < oldn; i++)
		if (old[i])
			*slot_of(r, &r->v[old[i] - 1]) = old[i];
	free(old);
	return 0;
}

int64_t pmt_cfi_rules__intern(struct pmt_cfi_rules *r, const struct pmt_cfi_rule *rule, bool *added)
{
	struct pmt_cfi_rule *v;
	uint32_t *slot;

	*added = false;
	if (!r->nslots && rehash(r, 256))
		return -ENOMEM;
	slot = slot_of(r, rule);
	if (*slot)
		return *slot - 1;
	if (r->n >= r->max)
		return -ENOSPC;
	v = pmt_grow(r->v, &r->cap, r->n, sizeof(*v), 64);
	if (!v)
		return -ENOMEM;
	r->v = v;
	/* at most half the slots used: a probe ends soon at an empty one */
	if ((r->n + 1) * 2 > r->nslots) {
		if (rehash(r, r->nslots * 2))
			return -ENOMEM;
		slot = slot_of(r, rule);
	}
	r->v[r->n] = *rule;
	*slot = ++r->n;
	*added = true;
	return r->n - 1;
}
