/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Names users give for event values: a probe's fields, then the common
 * ones every probe has (pid tid comm cpu uid gid cgroup). */
#ifndef PMT_OPERAND_H
#define PMT_OPERAND_H

#include <stdbool.h>
#include "abi.h"
#include "tracefs/format.h"
#include "util/strutil.h"

struct pmt_opinfo {
	struct pmt_operand o;
	bool is_str;
	bool is_signed;
	const struct pmt_field *field; /* NULL for common values */
};

enum {
	PMT_OPERAND_UNKNOWN = -1, /* no such name */
	PMT_OPERAND_ARRAY = -2,	  /* a field that is an array */
	PMT_OPERAND_NOT_PTR = -3, /* str(F) of an F that holds no address */
};

/* 0, or PMT_OPERAND_UNKNOWN / _ARRAY / _NOT_PTR. fmt may be NULL.
 * str(F), for an 8-byte field F, is the string at the address F holds
 * (PMT_FSRC_PTR_STR). */
int pmt_operand__resolve(const struct pmt_format *fmt, const char *name, struct pmt_opinfo *out);
/* Does the BPF program need its copy of the record for this operand? Not
 * for common values, nor for tracepoint fields it loads from its context. */
bool pmt_operand__needs_record(const struct pmt_operand *o);
/* Is name FN(ARG) as a whole? ARG then into arg (len bytes, room
 * checked): str(filename), usym(arg2), ntop(daddr). */
bool pmt_operand__call_arg(const char *name, const char *fn, char *arg, size_t len);
/* Why str(F) was refused (PMT_OPERAND_NOT_PTR): info as resolve left it */
void pmt_operand__not_ptr(struct pmt_buf *b, const char *name, const struct pmt_opinfo *info);
/* "did you mean X? PROBE has: f1 f2; every probe has: pid tid ..." */
void pmt_operand__hint(struct pmt_buf *b, const struct pmt_format *fmt, const char *probe,
		       const char *name);

/* What a session's filters and aggregations use: operand sources (bit
 * PMT_FSRC_*), key kinds (bit PMT_KEY_*), comparisons (bit PMT_FOP_*),
 * aggregations (bit PMT_AGG_*), the most key parts of one probe, the
 * 4-byte words of a tracepoint's context loaded. The BPF programs are told before they load
 * (bpf/common.bpf.h), and the code serving anything else is dropped
 * before the verifier sees it. */
struct pmt_uses {
	uint32_t srcs, key_kinds, fops, agg_kinds, nparts;
	uint32_t ctx_words;
};
/* Add what one operand uses (its source; a context word it loads). */
void pmt_uses__operand(struct pmt_uses *u, const struct pmt_operand *o);
/* Add one probe's: its compiled filter (or NULL), action (enum
 * pmt_action) and aggregation (read unless the action streams). */
void pmt_uses__add(struct pmt_uses *u, const struct pmt_filter *f, uint8_t action,
		   const struct pmt_agg_cfg *a);

#endif
