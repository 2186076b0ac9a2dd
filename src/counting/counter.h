/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --counter EVENT (up to PMT_COUNTERS): a thread's own counts of the
 * events, with --latency from START to END instead of time, or with each
 * streamed record. One counting perf event per counter and CPU in
 * pmt_counters, read by the programs where the thread runs, and shared
 * out at context switches (bpf/count.bpf.c).
 */
#ifndef PMT_COUNTER_H
#define PMT_COUNTER_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "pmu/pmu.h"
#include "options/opts.h"
#include "util/error.h"

struct pmtrace_bpf;

struct pmt_counter {
	uint32_t n;  /* counters; 0: none */
	bool stream; /* streamed probes: each record with its thread's counts */
	struct pmt_pmu_event ev[PMT_COUNTERS];
	const char *names[PMT_COUNTERS]; /* ev[i].name */
};

/* The events of --counter, checked countable here (usage errors if not). */
int pmt_counter__resolve(struct pmt_counter *c, const struct pmt_opts *o, struct pmt_error *err);
/* Before load: the maps' sizes, the programs, the switches. */
void pmt_counter__prepare(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus);
/* After load, before the probes: the per-CPU counters in the map, and
 * the context-switch program attached. */
int pmt_counter__start(const struct pmt_counter *c, struct pmtrace_bpf *skel, int ncpus,
		       struct pmt_error *err);

#endif
