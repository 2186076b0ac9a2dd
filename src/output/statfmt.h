/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --stat's output, laid out as perf stat (6.1) lays it out: the value
 * (clocks in msec), the event, and after '#' the ratio perf derives
 * (CPUs utilized, /sec, GHz, insn per cycle, miss rates); values scaled by
 * enabled/running time when the kernel multiplexed the counter, with the
 * share of time counted; <not supported> and <not counted> as perf shows
 * them. Numbers take the locale's thousands separators, as perf's do.
 * JSON Lines as perf stat -j writes them. Pure: unit-tested against perf.
 */
#ifndef PMT_STATFMT_H
#define PMT_STATFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/json.h"
#include "util/strutil.h"

enum pmt_stat_state {
	PMT_STAT_COUNTED,
	PMT_STAT_UNSUPPORTED, /* the kernel or the PMU cannot count it */
	PMT_STAT_NOT_COUNTED, /* it never ran (in this interval) */
};

/* One counter's reading (summed over CPUs or threads). */
struct pmt_stat_count {
	const char *name; /* "page-faults", "cycles:u" */
	uint32_t type;	  /* perf_event_attr type and config: the ratios */
	uint64_t config;
	enum pmt_stat_state state;
	uint64_t count;		   /* raw */
	uint64_t enabled, running; /* ns */
};

/* What a line shows: the value as perf scales it, and the ratio. */
struct pmt_stat_line {
	double value;	    /* count, scaled; clocks in msec */
	const char *unit;   /* "msec" or "" */
	double ratio;	    /* metric-value */
	const char *runit;  /* metric-unit; NULL: no ratio */
	const char *rfmt;   /* printf format of the ratio */
	double pct_running; /* 100 unless multiplexed */
};

/* Is this a clock counted in ns (task-clock, cpu-clock)? */
bool pmt_stat__is_clock(const struct pmt_stat_count *c);
/* Line i of counts c[0..n), over elapsed_ns of wall time. */
void pmt_stat__line(const struct pmt_stat_count *c, size_t n, size_t i, uint64_t elapsed_ns,
		    struct pmt_stat_line *l);

/* "\n Performance counter stats for WHAT:\n\n" (WHAT: "'CMD'", "process id '1'") */
void pmt_stat__header(struct pmt_buf *b, const char *what);
/* "#           time             counts unit events\n" */
void pmt_stat__interval_header(struct pmt_buf *b);
/* The counters' lines; at >= 0: an interval's, prefixed with its time. */
void pmt_stat__text(struct pmt_buf *b, const struct pmt_stat_count *c, size_t n,
		    uint64_t elapsed_ns, double at);
/* Elapsed time, and a command's user and system time (user < 0: none). */
void pmt_stat__footer(struct pmt_buf *b, uint64_t elapsed_ns, double user_s, double sys_s);
/* One JSON object a counter, each on its own line, as perf stat -j;
 * "interval" first when at >= 0. */
void pmt_stat__json(struct pmt_buf *b, const struct pmt_stat_count *c, size_t n,
		    uint64_t elapsed_ns, double at);

#endif
