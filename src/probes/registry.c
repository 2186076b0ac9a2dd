// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Every provider, one per probe kind (see provider.h). */
#include <stddef.h>
#include "probes/provider.h"

static const struct pmt_provider *const providers[] = {
	&pmt_tracepoint_provider,
	&pmt_perf_provider,
	&pmt_kprobe_provider,
	&pmt_uprobe_provider,
};

const struct pmt_provider *pmt_provider__nth(size_t i)
{
	return i < sizeof(providers) / sizeof(providers[0]) ? providers[i] : NULL;
}

const struct pmt_provider *pmt_provider__get(enum pmt_probe_kind kind)
{
	const struct pmt_provider *p;
	size_t i;

	for (i = 0; (p = pmt_provider__nth(i)); i++)
		if (p->kinds & (1u << kind))
			return p;
	return NULL;
}
