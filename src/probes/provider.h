/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A provider is one kind of probe: tracepoint, PMU event, kernel function
 * (kprobe/fentry), user function (uprobe). The session drives every provider through these ops:
 *
 *   resolve (per --option, before load) -> prepare (before load)
 *   -> attach (per probe, after load) -> links destroyed by the session
 *
 * Any op may be NULL.
 */
#ifndef PMT_PROVIDER_H
#define PMT_PROVIDER_H

#include <stddef.h>
#include "options/opts.h"
#include "output/output.h"

struct pmt_session;
struct pmt_probe;

struct pmt_provider {
	const char *name;
	unsigned kinds; /* 1 << enum pmt_probe_kind, for each it serves */
	/* Expand one user spec into probes (pmt_session__add_probe).
	 * Usage errors print a message and return -EINVAL. */
	int (*resolve)(struct pmt_session *s, const struct pmt_probe_arg *arg);
	/* Choose the BPF programs this provider needs (autoload). */
	void (*prepare)(struct pmt_session *s);
	/* Write the probe's settings into the maps and attach it. */
	int (*attach)(struct pmt_session *s, struct pmt_probe *p);
	/* What a streamed record shows after its fields (see pmt_record). */
	void (*extra)(const struct pmt_record *r, struct pmt_buf *b, bool json);
};

extern const struct pmt_provider pmt_tracepoint_provider;
extern const struct pmt_provider pmt_perf_provider;
extern const struct pmt_provider pmt_kprobe_provider;
extern const struct pmt_provider pmt_uprobe_provider;

/* The provider that serves kind; the i-th provider, NULL past the last. */
const struct pmt_provider *pmt_provider__get(enum pmt_probe_kind kind);
const struct pmt_provider *pmt_provider__nth(size_t i);

#endif
