/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Aggregations (--count, --sum, --hist, ... --by, --latency): compiling the
 * per-probe settings (struct pmt_agg_cfg) and printing what the kernel
 * gathered in pmt_agg.
 */
#ifndef PMT_AGGREGATE_H
#define PMT_AGGREGATE_H

#include <stdbool.h>
#include <stdint.h>
#include "abi.h"
#include "output.h"

struct pmt_session;

/* How a key part is shown. */
enum pmt_key_disp {
	PMT_DISP_PLAIN,
	PMT_DISP_HIDDEN,	/* pid behind a sym key */
	PMT_DISP_SYM,		/* address -> symbol (pid: the part before) */
	PMT_DISP_KSTACK,	/* stack id -> kernel frames */
	PMT_DISP_USTACK,	/* tgid << 32 | stack id -> user frames */
};

/* What the printer needs to know about the keys, from the options. */
struct pmt_keylayout {
	int n;
	char *names[PMT_AGG_KEYS];
	uint8_t kind[PMT_AGG_KEYS];	/* enum pmt_key_kind */
	uint8_t disp[PMT_AGG_KEYS];	/* enum pmt_key_disp */
	uint8_t at[PMT_AGG_KEYS];
	uint8_t len[PMT_AGG_KEYS];
	bool is_signed[PMT_AGG_KEYS];
};

/* One merged map entry. */
struct pmt_agg_entry {
	struct pmt_agg_key key;
	struct pmt_agg_val val;
};

struct pmt_agg_state {
	struct pmt_keylayout keys;
	struct pmt_agg_entry *prev;	/* last snapshot, sorted; for deltas */
	size_t nprev;
	uint64_t snapshots;
	int key_bytes;			/* of pmt_agg_key.data that --by uses */
	uint32_t flat_slots;		/* no keys: slots of pmt_agg_flat, else 0 */
};

/* Fill every probe's p->action and p->agg from the options. Usage errors
 * print a message and return -EINVAL. */
int pmt_agg__compile(struct pmt_session *s);
/* Read the map, merge CPUs, print one snapshot (delta unless --keep). */
int pmt_agg__print(struct pmt_session *s, struct pmt_output *out, uint64_t now_ns);
void pmt_agg__free(struct pmt_session *s);
/* Keys name processes whose mappings symbolization needs? */
bool pmt_agg__wants_pids(const struct pmt_session *s);
/* Read the mappings of the processes the map names, while they live. */
void pmt_agg__note_pids(struct pmt_session *s);

/* Pure pieces, unit-tested. */
int32_t pmt_agg__log2_bucket(int64_t v);
/* "[4, 8)", "[1K, 2K)", "[0]", "(..., 0)" */
void pmt_agg__log2_label(struct pmt_buf *b, int32_t bucket);
void pmt_agg__lhist_label(struct pmt_buf *b, int32_t bucket, int64_t min, int64_t step,
			  uint32_t nbuckets);
/* bpftrace's bar: |@@@@    | of width 52 */
void pmt_agg__bar(struct pmt_buf *b, uint64_t v, uint64_t max);

#endif
