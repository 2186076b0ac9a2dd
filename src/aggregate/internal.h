/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to src/aggregate/: the state compile.c builds and print.c reads. */
#ifndef PMT_AGG_INTERNAL_H
#define PMT_AGG_INTERNAL_H

#include "aggregate/aggregate.h"

/* How a key part is shown. */
enum pmt_key_disp {
	PMT_DISP_PLAIN,
	PMT_DISP_HIDDEN, /* pid behind a sym key */
	PMT_DISP_SYM,	 /* address -> symbol (pid: the part before) */
	PMT_DISP_KSTACK, /* stack id -> kernel frames */
	PMT_DISP_USTACK, /* tgid << 32 | stack id -> user frames */
};

/* What the printer needs to know about the keys, from the options. */
struct pmt_keylayout {
	int n;
	char *names[PMT_AGG_KEYS];
	uint8_t kind[PMT_AGG_KEYS]; /* enum pmt_key_kind */
	uint8_t disp[PMT_AGG_KEYS]; /* enum pmt_key_disp */
	uint8_t at[PMT_AGG_KEYS];
	uint8_t len[PMT_AGG_KEYS];
	bool is_signed[PMT_AGG_KEYS];
};

struct pmt_agg {
	const struct pmt_agg_opts *opts;
	struct pmt_keylayout keys;
	char **probe_names; /* PMT_KEY_PROBE keys show these */
	size_t nprobes;
	struct pmt_agg_entries prev;	   /* last snapshot, sorted; for deltas */
	int key_bytes;			   /* of pmt_agg_key.data that --by uses */
	uint32_t flat_slots;		   /* no keys: slots of pmt_agg_flat, else 0 */
	bool value_signed;		   /* a probe's value can be negative */
	uint32_t lat_unit_ns;		   /* --latency: ns per unit of the values */
	const char *prof_type, *prof_unit; /* --pprof's second sample type, or NULL */
	int64_t prof_period;
	int64_t start_wall_ns;
};

/* --pprof: write entries e[0..n) as a profile to path. 0 or -errno. */
int pmt_agg__pprof(const struct pmt_agg *a, const struct pmt_agg_entry *e, size_t n,
		   const struct pmt_agg_io *io, const char *path);
int pmt_agg_entry__cmp(const void *a, const void *b);
/* Does --by hold stack, kstack or ustack? */
bool pmt_agg__has_stack_key(const struct pmt_agg *a);
/* t takes v in: counts and sums add, min and max widen. */
void pmt_agg_val__merge(struct pmt_agg_val *t, const struct pmt_agg_val *v);
/* The frames of a stack key part (value v, shown as disp) into
 * ips[PMT_STACK_DEPTH], innermost first; *pid: the process for user
 * frames (0 for kernel ones). Returns how many. */
int pmt_agg__stack_frames(const struct pmt_agg_io *io, uint8_t disp, uint64_t v, uint64_t *ips,
			  uint32_t *pid);
/* Key part i (not a stack) as text, or as a JSON value. */
void pmt_agg__key_part(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k, int i, bool json);

#endif
