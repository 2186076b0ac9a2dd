/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One tracing session: the BPF skeleton, its probes and its targets. */
#ifndef PMT_SESSION_H
#define PMT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "tracefs/format.h"
#include "options/opts.h"
#include "probes/provider.h"
#include "counting/counter.h"
#include "filter/expr.h"
#include "btf/btftypes.h"
#include "target/target.h"
#include "unwind/tables.h"

struct pmtrace_bpf;
struct pmt_syms;
struct pmt_agg;
struct pmt_aggmaps;

struct pmt_session {
	const struct pmt_opts *opts;
	struct pmtrace_bpf *skel;
	struct pmt_probes probes;
	struct pmt_error err;	  /* why the run failed (pmt_session__fail) */
	struct pmt_prov_ctx prov; /* what the providers see (provider.h) */
	int ncpus;		  /* possible CPUs */
	bool filter_cpu;
	uint64_t cpu_mask[PMT_MAX_CPUS / 64];
	int cgroup_fd; /* --cgroup's directory, open when cgroup_fd_open */
	bool cgroup_fd_open;
	struct pmt_child child;	   /* -- CMD */
	struct pmt_agg *agg;	   /* --count, --hist, ...: NULL when streaming */
	struct pmt_exprs exprs;	   /* what keys and values compute (pmt_exprs) */
	struct pmt_btftypes types; /* the kernel's, where an expression walks them */
	struct pmt_varnames vars;  /* a program's saved values (exprs.vars) */
	/* a program's blocks' updates of their second, third, ... maps: the
	 * entries of pmt_probes after the probes' (struct pmt_probe's
	 * next_agg) */
	struct pmt_probe_cfg *sibs;
	uint32_t nsibs;
	struct pmt_aggmaps *aggmaps; /* its maps, drained: made at load */
	struct pmt_syms *syms;	     /* symbolizer, made when needed */
	uint8_t stack;		     /* --stack: PMT_STACK_* */
	struct pmt_unwinder unwind;  /* --unwind dwarf */
	struct pmt_counter counter;  /* --counter */
	/* --str: the strings each streamed record carries, "str(F)" */
	char str_names[PMT_STREAM_STRS][160];
	const char *str_name_v[PMT_STREAM_STRS]; /* each of those */
	uint32_t nstrs;
	uint32_t nvals;	 /* --printf: the numbers each streamed record carries */
	bool join;	 /* a printf's join(): each carries a struct pmt_join_rec */
	uint64_t origin; /* elapsed's (CLOCK_MONOTONIC ns): when the session began */
	pid_t closer;	 /* closes the links after we exit */
	int closer_fd;	 /* its pipe: EOF lets it go */
};

/* Each returns 0, or -errno with s->err set (see pmt_session__fail). */
/* Build the probe list from the options. */
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

/* Events of probe id a filter rejected, all CPUs. */
uint64_t pmt_session__filtered(struct pmt_session *s, uint32_t id);
/* Events of probe id that were aggregated (streamed: received). */
uint64_t pmt_session__hits(struct pmt_session *s, uint32_t id);
/* What is printed at the end, after the probes are detached and their
 * events drained: a program's END steps (printf, print(@MAP, N)), then
 * the maps it left (aggregations and saved values, not cleared) in
 * their names' order, as bpftrace prints them; the options' aggregation
 * (unless a program's END cleared it). 0, or -errno with err filled. */
int pmt_session__print_end(struct pmt_session *s, struct pmt_output *out, struct pmt_error *err);
/* Probe id's reads that failed: str()'s, or (member) members' */
uint64_t pmt_session__read_faults(struct pmt_session *s, uint32_t id, bool member);
struct pmt_probe *pmt_session__probe(struct pmt_session *s, uint32_t id);
/* A failed step: print the session's error and return the exit status
 * of its class (1 when a step failed without one: its message is out). */
int pmt_session__fail(struct pmt_session *s);
/* The session's symbolizer, made on first use (NULL if out of memory;
 * pmt_syms__* take NULL). */
struct pmt_syms *pmt_session__syms(struct pmt_session *s);
/* Each possible CPU's value of a kernel-side counter (malloc'd), or NULL. */
uint64_t *pmt_session__stat_cpus(struct pmt_session *s, enum pmt_stat which);
/* Sum of a per-CPU kernel-side counter (enum pmt_stat). */
uint64_t pmt_session__stat(struct pmt_session *s, enum pmt_stat which);
/* Events the kernel skipped: one of our programs was already running on
 * that CPU (an event in an interrupt that came during it). */
uint64_t pmt_session__missed(struct pmt_session *s);

#endif
