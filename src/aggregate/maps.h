/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The aggregation's kernel maps: sized before load from what the
 * aggregation asks for (pmt_agg__maps), read at each snapshot. */
#ifndef PMT_AGG_MAPS_H
#define PMT_AGG_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "output/output.h"

struct pmtrace_bpf;
struct pmt_syms;
struct pmt_varnames;

/* A program's saved values in map var (an index in names) at its end,
 * as bpftrace prints a map: "@name[key]: value" by value, or a blank
 * line for none. 0, or -errno with err filled. */
int pmt_saved__print(struct pmtrace_bpf *skel, const struct pmt_varnames *names, uint32_t var,
		     struct pmt_output *out, struct pmt_error *err);

/* Before load: size pmt_agg, pmt_agg_flat, pmt_lat and the rodata that
 * goes with them (agg NULL: not aggregating, everything minimal). */
void pmt_aggmaps__size(struct pmtrace_bpf *skel, const struct pmt_agg *agg);
struct pmt_aggmaps;

/* After load: what drains the kernel's maps into totals (see aggmaps.c);
 * stacks: keys hold stacks. NULL when out of memory. */
struct pmt_aggmaps *pmt_aggmaps__new(struct pmtrace_bpf *skel, struct pmt_agg *agg, bool stacks);
void pmt_aggmaps__free(struct pmt_aggmaps *m);
/* The files the aggregated user stacks name read now (debuginfod asked
 * for stripped ones' debug files), before the last print. */
void pmt_aggmaps__touch_files(struct pmt_aggmaps *m, struct pmt_syms *syms);
/* Drain the maps and print one snapshot of the totals; 0, or -errno
 * with err filled. */
int pmt_aggmaps__print(struct pmt_aggmaps *m, struct pmt_syms *syms, struct pmt_output *out,
		       uint64_t now_ns, struct pmt_error *err);
/* The same for a program's map index (pmt_agg__add_map), its top
 * entries alone where top > 0 (bpftrace's print(@MAP, N)) */
int pmt_aggmaps__print_map(struct pmt_aggmaps *m, size_t map, int top, struct pmt_syms *syms,
			   struct pmt_output *out, uint64_t now_ns, struct pmt_error *e);
/* Drain the maps and append the totals' metrics to b (see
 * pmt_agg__metrics); safe to call from another thread than the one
 * printing. */
int pmt_aggmaps__metrics(struct pmt_aggmaps *m, struct pmt_syms *syms, const char *name, bool om,
			 struct pmt_buf *b);
/* While tracing: drain when the kernel's hash took a quarter of its room
 * in new keys since the last drain. *next_ms (in: the most the caller
 * waits) is lowered to when the next look is due at the rate new keys
 * came since the last (a burst fills the hash in less than the caller's
 * wait). 0 or -errno. */
int pmt_aggmaps__poll(struct pmt_aggmaps *m, int *next_ms);
/* Samples whose stack was dropped while draining: its key named another
 * stack already copied (two stacks of one owner with the same 32 bits of
 * hash, one of them gone from the kernel's table). */
uint64_t pmt_aggmaps__lost_stacks(struct pmt_aggmaps *m);
/* An update the kernel sent because it could not finish its user stack
 * (struct pmt_agg_deferred), the stack finished here: its n frames of
 * process tgid kept under the key the kernel would give them, the key's
 * deferred user stack part set to it, value added under the key (and in
 * the windows open since ts, the sample's CLOCK_MONOTONIC time). 0 or
 * -ENOMEM. */
int pmt_aggmaps__add_finished(struct pmt_aggmaps *m, struct pmt_agg_key *key, int64_t value,
			      uint32_t tgid, const uint64_t *ips, uint32_t n, uint64_t ts);
/* The totals hold PMT_TOTALS_PER_KEY keys per --max-keys at most: the
 * samples of new keys past that, dropped. */
#define PMT_TOTALS_PER_KEY 64
uint64_t pmt_aggmaps__lost_keys(struct pmt_aggmaps *m);

/* Stacks of exited processes can be settled: keys hold user stacks, and
 * no key names an address in its process otherwise (sym, usym()). */
bool pmt_aggmaps__settles(const struct pmt_aggmaps *m);
/* Drain, then rebase the copied stacks of the processes that exited onto
 * their files (pmt_syms__rebase): every sample of a process whose exit
 * was seen before the call is then named without it, and it may be
 * reaped. 0 or -errno. */
int pmt_aggmaps__settle(struct pmt_aggmaps *m, struct pmt_syms *syms);

/* Profiles of a window of time (--listen's /debug/pprof/profile): what
 * the drains bring from the opening to the closing, kept apart from the
 * totals (an --interval print forgets neither). At most this many open
 * at once. */
#define PMT_AGG_WINDOWS 4
/* Open one: its index, or -EBUSY (as many are open) or -errno. */
int pmt_aggmaps__window_open(struct pmt_aggmaps *m);
/* Close window w: its entries as a gzip'd pprof profile into *gz (the
 * caller frees), named by syms. 0 or -errno; the window is closed
 * either way. */
int pmt_aggmaps__window_close(struct pmt_aggmaps *m, int w, struct pmt_syms *syms, uint8_t **gz,
			      size_t *len);
/* When the oldest open window opened (CLOCK_MONOTONIC), UINT64_MAX when
 * none is: the processes that exited since must keep their names. */
uint64_t pmt_aggmaps__windows_since(struct pmt_aggmaps *m);

#endif
