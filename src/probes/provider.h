/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A provider is one kind of probe: tracepoint, PMU event, kernel function
 * (kprobe/fentry), user function (uprobe), USDT probe. The session drives
 * each through these ops, and a provider sees of the run only its context
 * (struct pmt_prov_ctx): the options, the probe list, the BPF object,
 * where the events come from, and the error to fill. Its own data stays
 * in pmt_probe.priv.
 *
 *   resolve (per --option, before load; required) -> imply (once)
 *   -> prepare (once, before load, if it has probes: autoload, map sizes)
 *   -> attach (per probe, after load; required) -> links let go by the
 *   session
 */
#ifndef PMT_PROVIDER_H
#define PMT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "options/opts.h"
#include "output/output.h"
#include "probes/probe.h"
#include "util/error.h"
#include "util/machine.h"

struct pmtrace_bpf;

struct pmt_prov_ctx {
	const struct pmt_opts *opts;
	struct pmt_probes *probes;     /* resolve adds to it */
	struct pmtrace_bpf *skel;      /* open from prepare on, loaded at attach */
	struct pmt_error *err;	       /* set with the reason of a failure */
	pid_t child;		       /* -- CMD, held before its exec; or 0 */
	int ncpus;		       /* possible CPUs */
	const uint64_t *cpu_mask;      /* -C: the CPUs to trace; NULL: all */
	uint8_t stack;		       /* PMT_STACK_*: stacks with each event */
	const struct pmt_exprs *exprs; /* the probes' expression programs */
};

/*
 * The tail of every provider's resolve: the probe name with its record's
 * format fmt added (NULL: making it failed, err set or out of memory),
 * and its provider's part, priv_size zeroed bytes, made and hung on it
 * (priv_size 0: none). 0 with *priv NULL when the probe is one already
 * traced; -errno with the context's err set.
 */
int pmt_prov__add(struct pmt_prov_ctx *c, const struct pmt_provider *prov, const char *name,
		  struct pmt_format *fmt, const char *filter, size_t priv_size, void **priv);

/* What one sample of a probe stands for in a profile (--pprof's second
 * sample type): e.g. {"cpu", "nanoseconds", ns a sample}. */
struct pmt_sample_value {
	const char *type, *unit;
	int64_t period;
};

/* Which provider serves which kind: the table of kinds
 * (src/options/kinds.h), read by registry.c. */
struct pmt_provider {
	const char *name;
	/* Expand one user spec into probes (pmt_probes__add). */
	int (*resolve)(struct pmt_prov_ctx *c, const struct pmt_probe_arg *arg);
	/* Probes the options call for beyond those listed (--offcpu's
	 * sched_switch): once, after every listed probe is resolved. */
	int (*imply)(struct pmt_prov_ctx *c);
	/* Choose the BPF programs its probes need (autoload) and set their
	 * read-only settings and map sizes. */
	void (*prepare)(struct pmt_prov_ctx *c);
	/* Its probes, as the options have them, need only tracepoint
	 * programs without stacks, which the lean objects keep whole
	 * (bpf/lean.bpf.h): asked before any object is open (c->skel NULL).
	 * NULL: never. */
	bool (*lean)(const struct pmt_prov_ctx *c);
	/* Write the probe's settings into the maps and attach it. */
	int (*attach)(struct pmt_prov_ctx *c, struct pmt_probe *p);
	/* The address its streamed record r is named by (a PMU sample's
	 * ip: perf script's "sym"); false for none in r. NULL: none. */
	bool (*record_ip)(const struct pmt_record *r, uint64_t *ip);
	/* What a sample of p stands for beside being one (false: only that). */
	bool (*sample_value)(const struct pmt_prov_ctx *c, const struct pmt_probe *p,
			     struct pmt_sample_value *v);
	/* Its streamed tracepoint records print by their print format. */
	bool renders;
	/* Its records carry user addresses named through the processes. */
	bool user_addrs;
};

/* The provider that serves kind; the i-th provider, NULL past the last. */
const struct pmt_provider *pmt_provider__get(enum pmt_probe_kind kind);
const struct pmt_provider *pmt_provider__nth(size_t i);

/* Complete cfg with what every probe has (filter, action, aggregation,
 * stack) and store it as probe p's settings in the kernel. */
int pmt_prov__store_cfg(struct pmt_prov_ctx *c, struct pmt_probe *p, struct pmt_probe_cfg *cfg);
/* The binary of a --uprobe/--usdt spec: file as a path (made absolute),
 * or a name found in $PATH or the library directories, into path. 0, or
 * a usage error naming option opt and its spec. */
int pmt_prov__binary(struct pmt_prov_ctx *c, const char *opt, const char *spec, const char *file,
		     char *path, size_t len);

#endif
