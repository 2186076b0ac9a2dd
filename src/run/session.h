/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One tracing session: the BPF skeleton, its probes and its targets. */
#ifndef PMT_SESSION_H
#define PMT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "events/format.h"
#include "options/opts.h"
#include "probes/provider.h"
#include "run/target.h"
#include "run/unwind.h"

struct pmtrace_bpf;
struct bpf_link;
struct pmt_pmu_event;
struct pmt_syms;
struct pmt_agg;

struct pmt_probe {
	uint32_t id; /* attach cookie, index in pmt_probes */
	const struct pmt_provider *prov;
	char *name;		   /* "sched:sched_switch", "...#2" */
	char *base;		   /* "sched:sched_switch" */
	const char *filter_expr;   /* as given, or NULL */
	int instance;		   /* 0, or n-1 for the n-th copy of base */
	uint8_t action;		   /* enum pmt_action */
	struct pmt_agg_cfg agg;	   /* action != STREAM */
	struct pmt_format *fmt;	   /* record layout; NULL: no fields */
	struct pmt_filter *filter; /* compiled --filter, or NULL */
	struct bpf_link *link;
	struct bpf_link **links; /* probes attached many times (PMU) */
	int nlinks;
	struct pmt_pmu_event *pmu; /* PMU events: what to open */
	void *priv;		   /* the provider's, freed with free() */
	uint64_t events;	   /* received */
};

struct pmt_session {
	const struct pmt_opts *opts;
	struct pmtrace_bpf *skel;
	struct pmt_probe *probes;
	uint32_t nr_probes;
	int ncpus; /* possible CPUs */
	bool filter_cpu;
	uint64_t cpu_mask[PMT_MAX_CPUS / 64];
	struct pmt_child child;	    /* -- CMD */
	struct pmt_agg *agg;	    /* --count, --hist, ...: NULL when streaming */
	struct pmt_syms *syms;	    /* symbolizer, made when needed */
	uint8_t stack;		    /* --stack: PMT_STACK_* */
	struct pmt_unwinder unwind; /* --unwind dwarf */
	pid_t closer;		    /* closes the links after we exit */
	int closer_fd;		    /* its pipe: EOF lets it go */
};

/* Build the probe list from the options; usage errors return -EINVAL. */
int pmt_session__resolve(struct pmt_session *s, const struct pmt_opts *opts);
/* Open, configure and load the BPF object. */
int pmt_session__load(struct pmt_session *s);
/* Fill the maps and attach every probe. Open the perf rings before this:
 * an event with no ring on its CPU would be lost. */
int pmt_session__attach(struct pmt_session *s);
/* Stop every program at once and let go of the links (their kernel-side
 * teardown finishes in a background closer, see session.c). */
void pmt_session__detach(struct pmt_session *s);
void pmt_session__free(struct pmt_session *s);

/* Takes fmt; compiles the filter expr (may be NULL) against it: usage
 * errors print the expression with a caret and return -EINVAL. */
int pmt_session__add_probe(struct pmt_session *s, const struct pmt_provider *prov, const char *name,
			   struct pmt_format *fmt, const char *filter);
/* Complete cfg with what every probe has (filter, action, aggregation,
 * stack) and store it as probe p's settings; -errno, message printed. */
int pmt_session__store_cfg(struct pmt_session *s, struct pmt_probe *p, struct pmt_probe_cfg *cfg);
/* Events of probe id a filter rejected, all CPUs. */
uint64_t pmt_session__filtered(struct pmt_session *s, uint32_t id);
/* Events of probe id that were aggregated (streamed: received). */
uint64_t pmt_session__hits(struct pmt_session *s, uint32_t id);
struct pmt_probe *pmt_session__probe(struct pmt_session *s, uint32_t id);
/* The online CPUs as a PMT_MAX_CPUS-bit mask; -errno. */
int pmt_online_cpus(uint64_t *mask);
/* Lowest online CPU (0 if that cannot be read). */
int pmt_first_online_cpu(void);
/* The session's symbolizer, made on first use (NULL if out of memory;
 * pmt_syms__* take NULL). */
struct pmt_syms *pmt_session__syms(struct pmt_session *s);
/* Each possible CPU's value of a kernel-side counter (malloc'd), or NULL. */
uint64_t *pmt_session__stat_cpus(struct pmt_session *s, enum pmt_stat which);
/* Sum of a per-CPU kernel-side counter (enum pmt_stat). */
uint64_t pmt_session__stat(struct pmt_session *s, enum pmt_stat which);

#endif
