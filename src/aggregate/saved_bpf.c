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

struct saved {
	struct pmt_var_key k;
	int64_t v;
};

/* by value, then key */
static int by_value(const void *a, const void *b)
{
	const struct saved *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return (int64_t)x->k.key < (int64_t)y->k.key ? -1 : (int64_t)x->k.key > (int64_t)y->k.key;
}

struct saved_str {
	int64_t key;
	char s[PMT_SAVED_STR_LEN];
};

static int by_key(const void *a, const void *b)
{
	const struct saved_str *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* A map of saved strings, by key */
static int print_strs(struct pmtrace_bpf *skel, const struct pmt_varnames *names, uint32_t var,
		      struct pmt_output *out, struct pmt_error *err)
{
	int fd = bpf_map__fd(skel->maps.pmt_strvars);
	struct pmt_var_key k, *prev = NULL;
	struct saved_str *v = NULL, *g;
	size_t n = 0, cap = 0, i;
	char line[PMT_SAVED_STR_LEN + 128];

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (k.var != var)
			continue;
		if (!(g = pmt_grow(v, &cap, n, sizeof(*v), 64))) {
			free(v);
			return pmt_error__runtime(err, -ENOMEM,
						  "out of memory for the saved strings");
		}
		v = g;
		if (bpf_map_lookup_elem(fd, &k, v[n].s))
			continue;
		v[n].s[PMT_SAVED_STR_LEN - 1] = '\0';
		v[n++].key = (int64_t)k.key;
	}
	pmt_sort(v, n, sizeof(*v), by_key);
	for (i = 0; i < n; i++) {
		int len = names->keyed[var]
				  ? snprintf(line, sizeof(line), "@%s[%lld]: %s\n",
					     names->name[var], (long long)v[i].key, v[i].s)
				  : snprintf(line, sizeof(line), "@%s: %s\n", names->name[var],
					     v[i].s);

		pmt_output__line(out, line, (size_t)len);
	}
	if (!n)
		pmt_output__line(out, "\n", 1);
	free(v);
	return 0;
}

int pmt_saved__print(struct pmtrace_bpf *skel, const struct pmt_varnames *names, uint32_t var,
		     struct pmt_output *out, struct pmt_error *err)
{
	if (names->str[var])
		return print_strs(skel, names, var, out, err);
	int fd = bpf_map__fd(skel->maps.pmt_vars);
	struct pmt_var_key k, *prev = NULL;
	struct saved *v = NULL, *g;
	size_t n = 0, cap = 0, i;
	char line[256];
	uint64_t val;

	while (!bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (k.var != var || bpf_map_lookup_elem(fd, &k, &val))
			continue;
		if (!(g = pmt_grow(v, &cap, n, sizeof(*v), 64))) {
			free(v);
			return pmt_error__runtime(err, -ENOMEM,
						  "out of memory for the saved values");
		}
		v = g;
		v[n].k = k;
		v[n++].v = (int64_t)val;
	}
	pmt_sort(v, n, sizeof(*v), by_value);
	for (i = 0; i < n; i++) {
		int len = names->keyed[var] ? snprintf(line, sizeof(line), "@%s[%lld]: %lld\n",
						       names->name[var], (long long)v[i].k.key,
						       (long long)v[i].v)
					    : snprintf(line, sizeof(line), "@%s: %lld\n",
						       names->name[var], (long long)v[i].v);

		pmt_output__line(out, line, (size_t)len);
	}
	if (!n)
		pmt_output__line(out, "\n", 1);
	free(v);
	return 0;
}
