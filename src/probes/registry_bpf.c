// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every provider, one per probe kind, and what they share (provider.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "elf/elfsym.h"
#include "probes/provider.h"
#include "pmtrace.skel.h"

/* Each provider of the table of kinds (src/options/kinds.h), by kind. */
#define PROV_DECL(id, prefix, option, s, arg, needs, help, ret, prov) \
	extern const struct pmt_provider prov;
PMT_PROBE_KINDS(PROV_DECL)
#undef PROV_DECL

static const struct pmt_provider *const by_kind[PMT_PROBE__COUNT] = {
#define PROV_OF(id, prefix, option, s, arg, needs, help, ret, prov) [PMT_PROBE_##id] = &prov,
	PMT_PROBE_KINDS(PROV_OF)
#undef PROV_OF
};

const struct pmt_provider *pmt_provider__get(enum pmt_probe_kind kind)
{
	return by_kind[kind];
}

/* The i-th provider, each once (one may serve several kinds). */
const struct pmt_provider *pmt_provider__nth(size_t i)
{
	size_t k, j;

	for (k = 0; k < PMT_PROBE__COUNT; k++) {
		for (j = 0; j < k && by_kind[j] != by_kind[k]; j++)
			;
		if (j == k && !i--)
			return by_kind[k];
	}
	return NULL;
}

int pmt_prov__store_cfg(struct pmt_prov_ctx *c, struct pmt_probe *p, struct pmt_probe_cfg *cfg)
{
	if (p->filter)
		cfg->filter = *p->filter;
	memcpy(cfg->strs, p->strs, sizeof(cfg->strs));
	memcpy(cfg->vals, p->vals, sizeof(cfg->vals));
	cfg->str_xprog = p->str_xprog;
	cfg->sprog = p->sprog;
	cfg->print_guard = p->print_guard;
	cfg->join_slot = p->join_slot;
	cfg->action = p->action;
	cfg->agg = p->agg;
	cfg->next_agg = p->next_agg;
	cfg->stack = c->stack;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.pmt_probes), &p->id, cfg, BPF_ANY))
		return pmt_error__runtime(c->err, -errno, "%s: cannot store the probe settings: %s",
					  p->name, strerror(errno));
	return 0;
}

int pmt_prov__binary(struct pmt_prov_ctx *c, const char *opt, const char *spec, const char *file,
		     char *path, size_t len)
{
	int r = pmt_elf__resolve(file, path, len);

	if (r == -ENOENT && !strchr(file, '/'))
		return pmt_error__usage(
			c->err,
			"--%s '%s': no executable or library named %s in $PATH or the library directories",
			opt, spec, file);
	if (r)
		return pmt_error__usage(c->err, "--%s '%s': %s: %s", opt, spec, file, strerror(-r));
	return 0;
}

int pmt_prov__add(struct pmt_prov_ctx *c, const struct pmt_provider *prov, const char *name,
		  struct pmt_format *fmt, const char *filter, size_t priv_size, void **priv)
{
	uint32_t n = c->probes->n;
	int r;

	if (priv)
		*priv = NULL;
	if (!fmt)
		return pmt_error__set(c->err)
			       ? -EINVAL
			       : pmt_error__runtime(c->err, -ENOMEM, "%s: out of memory", name);
	r = pmt_probes__add(c->probes, prov, name, fmt, filter, c->err);
	if (r || c->probes->n == n || !priv_size)
		return r;
	c->probes->v[n].priv = calloc(1, priv_size);
	if (!c->probes->v[n].priv)
		return pmt_error__runtime(c->err, -ENOMEM, "%s: out of memory", name);
	*priv = c->probes->v[n].priv;
	return 0;
}
