/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --counter EVENT with --latency: the thread's own count of EVENT from
 * START to END instead of time. One counting perf event per CPU in
 * pmt_counters, read by the programs where the thread runs, and shared
 * out at context switches (bpf/count.bpf.c, struct pmt_lat_val).
 */
#ifndef PMT_COUNTER_H
#define PMT_COUNTER_H

#include <stdbool.h>
#include "events/pmu.h"
#include "options/opts.h"
#include "util/error.h"

struct pmtrace_bpf;

struct pmt_counter {
	bool on;
	bool stream; /* streamed probes: each record with its thread's count */
	struct pmt_pmu_event ev;
};

/* The event of --counter, checked countable here (a usage error if not). */
int pmt_counter__resolve(struct pmt_counter *c, const struct pmt_opts *o, struct pmt_error *err);
/* Before load: the map's size, the programs, the switch. */
void pmt_counter__prepare(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus);
/* After load, before the probes: the per-CPU counters in the map, and
 * the context-switch program attached. */
int pmt_counter__start(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus,
		       struct pmt_error *err);

#endif
