// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/kallsyms' text symbols in a compact table (ksyms.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/ksyms.h"
#include "util/grow.h"
#include "util/strutil.h"

struct pmt_ksym {
	uint32_t lo;   /* the address's low 32 bits */
	uint32_t name; /* offset in names; PMT_KSYM_PFX: a __pfx_ symbol
			* lies k->pfx bytes before it */
};

/* Symbols [first, the next run's first) have these high 32 bits. */
struct pmt_ksym_run {
	uint32_t hi;
	uint32_t first;
};

/* A symbol as read: its whole address (sorted, then made compact) */
struct read_sym {
	uint64_t addr;
	uint32_t name;
};

static int cmp_read(const void *a, const void *b)
{
	const struct read_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The symbols read, sorted, as k's compact table; -ENOMEM */
static int compact(struct pmt_ksyms *k, struct read_sym *r, size_t n)
{
	size_t i, runs = 0;

	pmt_sort(r, n, sizeof(*r), cmp_read);
	for (i = 0; i < n; i++)
		runs += !i || r[i].addr >> 32 != r[i - 1].addr >> 32;
	k->v = malloc((n ? n : 1) * sizeof(*k->v));
	k->runs = malloc((runs ? runs : 1) * sizeof(*k->runs));
	if (!k->v || !k->runs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!i || r[i].addr >> 32 != r[i - 1].addr >> 32)
			k->runs[k->nruns++] =
				(struct pmt_ksym_run){(uint32_t)(r[i].addr >> 32), (uint32_t)i};
		k->v[i] = (struct pmt_ksym){(uint32_t)r[i].addr, r[i].name};
	}
	k->n = n;
	return 0;
}

/* A name stored: its offset in k->names; -ENOMEM */
static int64_t add_name(struct pmt_ksyms *k, size_t *cap, const char *name)
{
	size_t len = strlen(name) + 1;
	char *p;

	/* (offsets are 31 bits, the top one PFX: 2 GB of names is no
	 * kernel's) */
	if (k->names_len + len > PMT_KSYM_PFX ||
	    !(p = pmt_grow_to(k->names, cap, k->names_len + len, 1, 1 << 20)))
		return -ENOMEM;
	k->names = p;
	memcpy(k->names + k->names_len, name, len);
	k->names_len += len;
	return (int64_t)(k->names_len - len);
}

/* A symbol read into r[n] (grown); -ENOMEM */
static int add_sym(struct read_sym **r, size_t *cap, size_t n, uint64_t addr, int64_t name)
{
	struct read_sym *g = name >= 0 ? pmt_grow(*r, cap, n, sizeof(**r), 65536) : NULL;

	if (!g)
		return -ENOMEM;
	*r = g;
	g[n] = (struct read_sym){addr, (uint32_t)name};
	return 0;
}

int pmt_ksyms__read(struct pmt_ksyms *k, FILE *f)
{
	size_t cap = 0, ncap = 0, n = 0, zeros = 0;
	struct read_sym *r = NULL;
	char line[512], type, name[256], pfx[256] = "", *p;
	unsigned long long addr, pfx_addr = 0;
	int err = 0;

	/* "ffffffff81000000 T _stext [mod]" */
	while (!err && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr) {
			zeros++;
			continue;
		}
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* the function just after its padding's __pfx_ symbol, at the
		 * distance the first pair set: one symbol, flagged */
		if (pfx[0] && !strcmp(pfx + 6, name) &&
		    (k->pfx ? addr - pfx_addr == k->pfx : addr - pfx_addr <= 256)) {
			k->pfx = (uint32_t)(addr - pfx_addr);
			pfx[0] = '\0';
			err = add_sym(&r, &cap, n++, addr, add_name(k, &ncap, name));
			if (!err)
				r[n - 1].name |= PMT_KSYM_PFX;
			continue;
		}
		/* a __pfx_ symbol not followed by its function: as it is */
		if (pfx[0] && (err = add_sym(&r, &cap, n++, pfx_addr, add_name(k, &ncap, pfx))))
			break;
		pfx[0] = '\0';
		if (!strncmp(name, "__pfx_", 6)) {
			memcpy(pfx, name, sizeof(pfx));
			pfx_addr = addr;
			continue;
		}
		err = add_sym(&r, &cap, n++, addr, add_name(k, &ncap, name));
	}
	if (!err && pfx[0])
		err = add_sym(&r, &cap, n++, pfx_addr, add_name(k, &ncap, pfx));
	if (err)
		n--;
	k->hidden = !n && zeros;
	/* the names' block as long as they are (doubling left up to half
	 * of it spare) */
	if (k->names_len && (p = realloc(k->names, k->names_len)))
		k->names = p;
	if (compact(k, r, n))
		err = -ENOMEM;
	free(r);
	return err;
}

/* Symbol i's whole address (its run r, or one before it) */
static uint64_t start_of(const struct pmt_ksyms *k, size_t r, size_t i)
{
	while (r && k->runs[r].first > i)
		r--;
	return (uint64_t)k->runs[r].hi << 32 | k->v[i].lo;
}

bool pmt_ksyms__find(const struct pmt_ksyms *k, uint64_t addr, struct pmt_ksym_found *out)
{
	uint32_t hi = (uint32_t)(addr >> 32);
	size_t r, end, at;
	uint64_t next;

	/* the last run at or below addr's high bits */
	r = pmt_count_le(k->runs, k->nruns, sizeof(*k->runs), offsetof(struct pmt_ksym_run, hi), 4,
			 hi);
	at = 0;
	if (r--) {
		end = r + 1 < k->nruns ? k->runs[r + 1].first : k->n;
		/* how many symbols lie at or below addr: all of the run's
		 * where its high bits are below addr's */
		at = end;
		if (k->runs[r].hi == hi)
			at = k->runs[r].first + pmt_count_le(k->v + k->runs[r].first,
							     end - k->runs[r].first, sizeof(*k->v),
							     offsetof(struct pmt_ksym, lo), 4,
							     (uint32_t)addr);
	}
	/* in the padding of the function after: its __pfx_ symbol */
	if (at < k->n && k->v[at].name & PMT_KSYM_PFX) {
		next = start_of(k, r + 1 < k->nruns ? r + 1 : r, at);
		if (addr >= next - k->pfx) {
			out->prefix = "__pfx_";
			out->name = k->names + (k->v[at].name & ~PMT_KSYM_PFX);
			out->start = next - k->pfx;
			return true;
		}
	}
	if (!at)
		return false;
	at--;
	out->prefix = "";
	out->name = k->names + (k->v[at].name & ~PMT_KSYM_PFX);
	out->start = start_of(k, r, at);
	return true;
}

size_t pmt_ksyms__bytes(const struct pmt_ksyms *k)
{
	return k->n * sizeof(*k->v) + k->nruns * sizeof(*k->runs) + k->names_len;
}

void pmt_ksyms__free(struct pmt_ksyms *k)
{
	free(k->v);
	free(k->runs);
	free(k->names);
	memset(k, 0, sizeof(*k));
}
