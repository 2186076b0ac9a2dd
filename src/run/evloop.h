/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The perf-buffer consumer and the main loop of a streaming session. */
#ifndef PMT_EVLOOP_H
#define PMT_EVLOOP_H

#include <stdint.h>
#include "output/output.h"
#include "run/reorder.h"
#include "run/session.h"

struct perf_buffer;
struct pmt_sideband;

enum pmt_stop_reason {
	PMT_STOP_NONE,
	PMT_STOP_SIGNAL,
	PMT_STOP_DURATION,
	PMT_STOP_CHILD,
	PMT_STOP_TARGET_GONE, /* -p process exited */
	PMT_STOP_OUTPUT,      /* output closed (EPIPE) or failed */
	PMT_STOP_ERROR,
};

struct pmt_evloop {
	struct pmt_session *s;
	struct pmt_output *out;
	struct perf_buffer *pb;
	struct pmt_reorder ro;
	size_t ro_cpu_max; /* bytes ro holds of a CPU before its ring waits:
			    * its ring's, times the rings' growth */
	bool ro_full;	   /* a ring was left unread for that */
	int pages;	   /* of each CPU's ring (pmt_opts__ring_pages) */
	uint64_t *lost;	   /* per CPU, from PERF_RECORD_LOST */
	uint64_t lost_records_seen, lost_reported;
	uint64_t last_report_ns;
	uint64_t events;
	uint64_t malformed;		       /* samples too short to hold a header */
	bool user_syms;			       /* records carry user addresses to symbolize */
	struct pmt_syms *syms;		       /* the session's symbolizer (NULL: out of memory) */
	struct pmt_sideband *sb;	       /* processes followed for syms, or NULL */
	uint64_t agg_read_ns;		       /* the aggregation's last print read the maps */
	uint64_t settled_ns;		       /* exited processes last settled */
	uint64_t let_go_ns;		       /* idle DWARF last looked for */
	uint64_t keys_dropped, stacks_dropped; /* as of the last interval */
	/* user stacks the kernel left at a file without unwind tables,
	 * finished here from the copy of their stack; those of them that
	 * still end early */
	uint64_t resumed, resumed_short, resumed_nopy;
	uint64_t resume_ns; /* the CPU time that took (tables read here too) */
	uint64_t *frames;   /* a finished stack's frames */
	void *aligned;	    /* a record's frames and dump, copied aligned */
	size_t aligned_cap;
	struct pmt_named named; /* a streamed record's names (reused) */
	enum pmt_stop_reason stop;
	/* a profile aggregated (quiet_profile): the loop sleeps QUIET_MS
	 * while nothing waits in it; the hash looked at every look_ms at
	 * least */
	bool quiet;
	int look_ms;
};

int pmt_evloop__init(struct pmt_evloop *l, struct pmt_session *s, struct pmt_output *out);
/* Run until a stop condition; returns 0 or -errno. */
int pmt_evloop__run(struct pmt_evloop *l);
/* After detach: consume everything left and write it out. */
void pmt_evloop__drain(struct pmt_evloop *l);
/* Events the rings lost (per_cpu: each CPU's, or NULL): their lost
 * records, less the aggregation updates the programs kept themselves
 * when a ring had no room (a failed output is a lost record too:
 * PMT_STAT_DEFER_CUT), and no fewer than the programs counted of their
 * own (exact; the rings' records may hold some back). Reads the maps. */
uint64_t pmt_evloop__lost(const struct pmt_evloop *l, uint64_t *per_cpu);
void pmt_evloop__free(struct pmt_evloop *l);

#endif
