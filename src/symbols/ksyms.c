// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Kernel addresses to names: /proc/kallsyms' text symbols, read at the
 * first kernel address named, behind a direct-mapped cache. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/symbols_internal.h"
#include "util/grow.h"

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms ("ffffffff81000000 T _stext [mod]"). */
static void read_kallsyms(struct pmt_syms *s)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t cap = 0, used = 0, kcap = 0;
	char line[512], type, name[256];
	unsigned long long addr;
	size_t zeros = 0;

	s->ksyms_read = true;
	if (!f)
		return;
	/* names into one growing block, found by offset */
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr) {
			zeros++;
			continue;
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		struct ksym *k = pmt_grow(s->ksyms, &cap, s->nksyms, sizeof(*k), 65536);
		char *p;

		if (!k)
			break;
		s->ksyms = k;
		n = strlen(name) + 1;
		if (!(p = pmt_grow_to(s->knames, &kcap, used + n, 1, 1 << 20)))
			break;
		s->knames = p;
		memcpy(s->knames + used, name, n);
		s->ksyms[s->nksyms].addr = addr;
		s->ksyms[s->nksyms].name = used;
		s->nksyms++;
		used += n;
	}
	fclose(f);
	/* the kernel shows this user zeros for every address */
	s->ksyms_hidden = !s->nksyms && zeros;
	if (s->nksyms > 1)
		pmt_sort(s->ksyms, s->nksyms, sizeof(*s->ksyms), cmp_ksym);
}

const struct ksym *syms_ksym(struct pmt_syms *s, uint64_t addr)
{
	struct kcached *c = &s->kcache[(addr ^ addr >> 10) % KCACHE];
	size_t lo;

	if (c->addr == addr)
		return c->k;
	if (!s->ksyms_read)
		read_kallsyms(s);
	/* the last symbol at or below addr */
	lo = pmt_count_le(s->ksyms, s->nksyms, sizeof(*s->ksyms), offsetof(struct ksym, addr), 8,
			  addr);
	c->addr = addr;
	c->k = lo ? &s->ksyms[lo - 1] : NULL;
	return c->k;
}
