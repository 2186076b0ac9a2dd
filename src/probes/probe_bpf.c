// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probe list (probe.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "util/grow.h"
#include "filter/filter.h"
#include "output/printf.h"
#include "probes/probe.h"
#include "util/log.h"

static int compile_filter(struct pmt_probe *p, const char *expr, struct pmt_exprs *exprs,
			  struct pmt_error *err)
{
	struct pmt_buf b = {0};

	p->filter = calloc(1, sizeof(*p->filter));
	if (!p->filter)
		return pmt_error__runtime(err, -ENOMEM, "%s: out of memory for its filter",
					  p->name);
	if (pmt_filter__compile(expr, p->fmt, p->name, exprs, p->filter, err))
		return -EINVAL; /* its message names the probe where it helps */
	if (pmt_verbose) {
		pmt_filter__dump(&b, p->filter);
		pmt_eprintf("pmtrace: %s: filter program:\n%s", p->name, pmt_buf__cstr(&b));
		pmt_buf__free(&b);
	}
	return 0;
}

/* Copies of name so far (the n-th gets name#n); 0: the same probe with
 * the same filter, for the same block, is there already. */
static int copies(const struct pmt_probes *l, const char *name, const char *filter)
{
	int dup = 1;
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		const struct pmt_probe *p = &l->v[i];

		if (strcmp(p->base, name))
			continue;
		if (p->block == l->block &&
		    ((!filter && !p->filter_expr) ||
		     (filter && p->filter_expr && !strcmp(filter, p->filter_expr))))
			return 0;
		dup++;
	}
	return dup;
}

int pmt_probes__add(struct pmt_probes *l, const struct pmt_provider *prov, const char *name,
		    struct pmt_format *fmt, const char *filter, struct pmt_error *err)
{
	int dup = copies(l, name, filter), ret = 0;
	struct pmt_probe *p;
	char label[512];

	if (!dup)
		goto out;
	if (dup > PMT_TP_INSTANCES) {
		ret = pmt_error__usage(err, "%s given %d times: at most %d (join filters with ||)",
				       name, dup, PMT_TP_INSTANCES);
		goto out;
	}
	if (l->n >= PMT_MAX_PROBES) {
		ret = pmt_error__usage(err, "too many probes: at most %d", PMT_MAX_PROBES);
		goto out;
	}
	snprintf(label, sizeof(label), dup > 1 ? "%s#%d" : "%s", name, dup);
	p = pmt_grow(l->v, &l->cap, l->n, sizeof(*p), 16);
	if (!p) {
		ret = pmt_error__runtime(err, -ENOMEM, "%s: out of memory", name);
		goto out;
	}
	l->v = p;
	p = &l->v[l->n];
	memset(p, 0, sizeof(*p));
	p->str_xprog = PMT_XPROG_NONE;
	p->sprog = PMT_XPROG_NONE;
	p->id = l->n++; /* from here on pmt_probes__free frees it */
	p->prov = prov;
	p->fmt = fmt;
	if (fmt)
		fmt->builtins_first = l->builtins_first;
	p->name = strdup(label);
	p->base = strdup(name);
	p->filter_expr = filter;
	p->instance = dup - 1;
	p->block = l->block;
	if (!p->name || !p->base)
		return pmt_error__runtime(err, -ENOMEM, "%s: out of memory", name);
	return filter ? compile_filter(p, filter, l->exprs, err) : 0;
out:
	pmt_format__free(fmt);
	return ret;
}

bool pmt_probes__linked(const struct pmt_probes *l)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].link)
			return true;
	return false;
}

void pmt_probes__unlink(struct pmt_probes *l)
{
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		struct pmt_probe *p = &l->v[i];

		bpf_link__destroy(p->link);
		p->link = NULL;
		while (p->nlinks > 0)
			bpf_link__destroy(p->links[--p->nlinks]);
		free(p->links);
		p->links = NULL;
	}
}

void pmt_probes__free(struct pmt_probes *l)
{
	uint32_t i;

	pmt_probes__unlink(l);
	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].base);
		free(l->v[i].filter);
		free(l->v[i].priv);
		pmt_print__free(l->v[i].print);
		free(l->v[i].print);
		pmt_format__free(l->v[i].fmt);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

bool pmt_probe__link_room(struct pmt_probe *p)
{
	struct bpf_link **links =
		pmt_grow(p->links, &p->links_cap, (size_t)p->nlinks, sizeof(*links), 8);

	if (!links)
		return false;
	p->links = links;
	return true;
}

void pmt_probes__uses(const struct pmt_probes *l, struct pmt_uses *u)
{
	uint32_t i, j;

	*u = (struct pmt_uses){0};
	for (i = 0; i < l->n; i++) {
		pmt_uses__add(u, l->v[i].filter, l->v[i].action, &l->v[i].agg);
		for (j = 0; j < PMT_STREAM_STRS; j++)
			if (l->v[i].strs[j].src == PMT_FSRC_PTR_STR)
				pmt_uses__operand(u, &l->v[i].strs[j]);
		for (j = 0; j < l->v[i].nvals; j++)
			pmt_uses__operand(u, &l->v[i].vals[j]);
	}
}
