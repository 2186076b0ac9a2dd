/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The aggregation's kernel maps: sized before load from what the
 * aggregation asks for (pmt_agg__maps), read at each snapshot. */
#ifndef PMT_AGGMAPS_H
#define PMT_AGGMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include "aggregate/aggregate.h"
#include "output/output.h"

struct pmtrace_bpf;
struct pmt_syms;

/* Before load: size pmt_agg, pmt_agg_flat, pmt_lat and the rodata that
 * goes with them (agg NULL: not aggregating, everything minimal). */
void pmt_aggmaps__size(struct pmtrace_bpf *skel, const struct pmt_agg *agg);
/* Read the maps and print one snapshot; 0 or -errno. */
int pmt_aggmaps__print(struct pmtrace_bpf *skel, struct pmt_agg *agg, struct pmt_syms *syms,
		       struct pmt_output *out, uint64_t now_ns);
/* Read the maps and append their metrics to b (see pmt_agg__metrics);
 * safe to call from another thread than the one printing. */
int pmt_aggmaps__metrics(struct pmtrace_bpf *skel, const struct pmt_agg *agg, struct pmt_syms *syms,
			 const char *name, bool om, struct pmt_buf *b);

#endif
