// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A program's saved values printed at its end (maps.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "aggregate/maps.h"
#include "filter/expr.h"
#include "util/grow.h"
#include "util/strutil.h"
#include "pmtrace.skel.h"

/* A saved value or string and its key */
struct saved {
	int64_t key, key2, v;
	char s[PMT_SAVED_STR_LEN];
};

/* numbers: by value, then key */
static int by_value(const void *a, const void *b)
{
	const struct saved *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->key2 < y->key2 ? -1 : x->key2 > y->key2;
}

/* strings: by key */
static int by_key(const void *a, const void *b)
{
	const struct saved *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->key2 < y->key2 ? -1 : x->key2 > y->key2;
}

/* Variable var's entries of the kernel's map fd (strings: pmt_strvars),
 * into *out (*n of them); 0 or -ENOMEM */
static int collect(int fd, uint32_t var, bool strs, struct saved **out, size_t *n)
{
	struct pmt_var_key k, *prev = NULL;
	struct saved *v = NULL, *g;
	size_t cap = 0;
	uint64_t val;

	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (k.var != var)
			continue;
		if (!(g = pmt_grow(v, &cap, *n, sizeof(*v), 64))) {
			free(v);
			return -ENOMEM;
		}
		v = g;
		if (bpf_map_lookup_elem(fd, &k, strs ? (void *)v[*n].s : (void *)&val))
			continue;
		v[*n].s[PMT_SAVED_STR_LEN - 1] = '\0';
		v[*n].v = strs ? 0 : (int64_t)val;
		v[*n].key2 = (int64_t)k.key2;
		v[(*n)++].key = (int64_t)k.key;
	}
	*out = v;
	return 0;
}

int pmt_saved__print(struct pmtrace_bpf *skel, const struct pmt_varnames *names, uint32_t var,
		     struct pmt_output *out, struct pmt_error *err)
{
	bool strs = names->str[var];
	int fd = bpf_map__fd(strs ? skel->maps.pmt_strvars : skel->maps.pmt_vars);
	char line[PMT_SAVED_STR_LEN + 128], num[32], key[48];
	struct saved *v;
	size_t n, i;

	if (collect(fd, var, strs, &v, &n))
		return pmt_error__runtime(err, -ENOMEM, "out of memory for the saved %s",
					  strs ? "strings" : "values");
	pmt_sort(v, n, sizeof(*v), strs ? by_key : by_value);
	for (i = 0; i < n; i++) {
		int len;

		snprintf(num, sizeof(num), "%lld", (long long)v[i].v);
		/* a key of two values as bpftrace prints a tuple's: "a, b" */
		if (names->nkeys[var] == 2)
			snprintf(key, sizeof(key), "%lld, %lld", (long long)v[i].key,
				 (long long)v[i].key2);
		else
			snprintf(key, sizeof(key), "%lld", (long long)v[i].key);
		len = names->keyed[var] ? snprintf(line, sizeof(line), "@%s[%s]: %s\n",
						   names->name[var], key, strs ? v[i].s : num)
					: snprintf(line, sizeof(line), "@%s: %s\n",
						   names->name[var], strs ? v[i].s : num);
		pmt_output__line(out, line, (size_t)len);
	}
	if (!n)
		pmt_output__line(out, "\n", 1);
	free(v);
	return 0;
}
