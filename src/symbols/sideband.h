/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's account of processes, for naming user addresses: a dummy
 * perf event per CPU reporting every fork, exec, mmap of an executable
 * file and exit (as perf record's tracking event does), read each round
 * of the event loop before the samples and handed to the symbolizer in
 * the order they happened: a stream's up to each sample's time.
 */
#ifndef PMT_SIDEBAND_H
#define PMT_SIDEBAND_H

#include <stdint.h>

struct pmt_error;
struct pmt_syms;
struct pmt_sideband;

/* 0, or -errno with e filled. */
int pmt_sideband__open(struct pmt_sideband **out, struct pmt_syms *syms, struct pmt_error *e);
/* Apply what the rings hold (and what was held back). */
void pmt_sideband__read(struct pmt_sideband *sb);
/* Take in what the rings hold, applying nothing... */
void pmt_sideband__fetch(struct pmt_sideband *sb);
/* ...then apply what was taken in, up to time (CLOCK_MONOTONIC ns, the
 * samples' clock), in the order it happened. */
void pmt_sideband__apply_until(struct pmt_sideband *sb, uint64_t time);
/* Records lost: the kernel could not write them (rings full), or there
 * was no memory to hold them. */
uint64_t pmt_sideband__lost(const struct pmt_sideband *sb);
/* A descriptor readable once a CPU's ring is half full (its watermark):
 * a loop that sleeps long waits on it too. -1 without sb. */
int pmt_sideband__fd(const struct pmt_sideband *sb);
void pmt_sideband__free(struct pmt_sideband *sb);

#endif
