/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --stat: PMU counters totalled as perf stat totals them (stat.c). */
#ifndef PMT_STAT_H
#define PMT_STAT_H

#include "options/opts.h"

/* The whole run; returns the exit status (a command's own, or 1/2). */
int pmt_stat__run(const struct pmt_opts *o);

#endif
