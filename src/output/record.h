/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A streamed event decoded, as the writers (output.h) and --printf
 * (printf.h) read it. */
#ifndef PMT_RECORD_H
#define PMT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmt_format;
struct pmt_named;
struct pmt_print;
struct pmt_join_rec;

/* One decoded event as the writers see it. */
struct pmt_record {
	uint64_t ts; /* ns, CLOCK_MONOTONIC */
	uint32_t cpu, pid, tid;
	const char *comm; /* up to comm_len bytes, maybe not terminated */
	size_t comm_len;
	const char *event;	      /* "sched:sched_switch" */
	const struct pmt_format *fmt; /* NULL: no fields */
	const void *data;	      /* raw record */
	size_t len;
	bool truncated; /* the kernel side cut the record short */
	/* Its addresses by name, after its fields (PMU samples: the ip's
	 * symbol; the stack): text appends " sym=..." and frame lines before
	 * the newline; JSON adds members to the record's object. NULL:
	 * none. Named before output sees the record. */
	const struct pmt_named *named;
	/* --counter: each event's count for the thread so far and since its
	 * previous record, ncounters (value, delta) u64 pairs at counts */
	const char *const *counters;
	uint32_t ncounters;
	const void *counts;
	/* --str: nstrs slots of PMT_STREAM_STR_LEN bytes at strs, named
	 * str_names; bit i of str_mask: the probe reads slot i (an empty
	 * string whose second byte is 1: the read faulted) */
	const char *strs;
	const char *const *str_names;
	uint32_t nstrs, str_mask;
	/* --printf: the record is printed as this says (output/printf.h),
	 * from its nvals numbers at vals (u64s, maybe unaligned) and its
	 * strings; NULL: as the kernel's print format */
	const struct pmt_print *print;
	const char *vals;
	uint32_t nvals;
	/* a printf's join(): its strings (NULL: none) */
	const struct pmt_join_rec *join;
};

#endif
