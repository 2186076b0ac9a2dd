/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A JSON writer over a pmt_buf, as bpftool's json_writer: callers open and
 * close objects and arrays and add keys and values; the writer places the
 * commas and colons and escapes every string (keys included), so what it
 * writes is well-formed whatever the data. Values are numbers, strings
 * (any bytes: non-UTF-8 ones become \u00XX), booleans and null.
 *
 *   struct pmt_json j;
 *   pmt_json__init(&j, &buf);
 *   pmt_json__object(&j);
 *   pmt_json__field_u64(&j, "ts", ts);
 *   pmt_json__key(&j, "stack");
 *   pmt_json__array(&j); ... pmt_json__end(&j);
 *   pmt_json__end(&j);
 *
 * Streaming writes one object per record: the functions are inline.
 */
#ifndef PMT_JSON_H
#define PMT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "util/strutil.h"

#define PMT_JSON_DEPTH 32

struct pmt_json {
	struct pmt_buf *b;
	int depth;		    /* open containers */
	bool after_key;		    /* a key was written: its value comes next */
	uint32_t items;		    /* bit d: container d holds a member already */
	char close[PMT_JSON_DEPTH]; /* '}' or ']' for each open container */
};

static inline void pmt_json__init(struct pmt_json *j, struct pmt_buf *b)
{
	memset(j, 0, sizeof(*j));
	j->b = b;
}

/* Before any member: the comma its container needs. */
static inline void pmt_json__sep(struct pmt_json *j)
{
	uint32_t bit = 1u << (j->depth & 31);

	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth && (j->items & bit))
		pmt_buf__putc(j->b, ',');
	j->items |= bit;
}

static inline void pmt_json__open(struct pmt_json *j, char open, char close)
{
	pmt_json__sep(j);
	pmt_buf__putc(j->b, open);
	if (j->depth < PMT_JSON_DEPTH - 1)
		j->close[++j->depth] = close;
	j->items &= ~(1u << (j->depth & 31));
}

static inline void pmt_json__object(struct pmt_json *j)
{
	pmt_json__open(j, '{', '}');
}

static inline void pmt_json__array(struct pmt_json *j)
{
	pmt_json__open(j, '[', ']');
}

/* Close the innermost object or array. */
static inline void pmt_json__end(struct pmt_json *j)
{
	if (j->depth <= 0)
		return;
	if (j->after_key) /* a key without a value: give it one */
		pmt_buf__puts(j->b, "null");
	j->after_key = false;
	pmt_buf__putc(j->b, j->close[j->depth--]);
}

static inline void pmt_json__key(struct pmt_json *j, const char *k)
{
	pmt_json__sep(j);
	pmt_buf__json_str(j->b, k, strlen(k));
	pmt_buf__putc(j->b, ':');
	j->after_key = true;
}

static inline void pmt_json__strn(struct pmt_json *j, const char *s, size_t n)
{
	pmt_json__sep(j);
	pmt_buf__json_str(j->b, s, n);
}

static inline void pmt_json__str(struct pmt_json *j, const char *s)
{
	pmt_json__strn(j, s, strlen(s));
}

static inline void pmt_json__u64(struct pmt_json *j, uint64_t v)
{
	pmt_json__sep(j);
	pmt_buf__u64(j->b, v);
}

static inline void pmt_json__s64(struct pmt_json *j, int64_t v)
{
	pmt_json__sep(j);
	pmt_buf__s64(j->b, v);
}

/* A finite double as %.15g; NaN and infinities (not JSON) as null. */
void pmt_json__double(struct pmt_json *j, double v);

static inline void pmt_json__bool(struct pmt_json *j, bool v)
{
	pmt_json__sep(j);
	pmt_buf__puts(j->b, v ? "true" : "false");
}

static inline void pmt_json__null(struct pmt_json *j)
{
	pmt_json__sep(j);
	pmt_buf__puts(j->b, "null");
}

/* "0x1f": addresses and hex values, as strings (JSON numbers lose bits
 * past 2^53 in most readers). */
static inline void pmt_json__hex(struct pmt_json *j, uint64_t v)
{
	pmt_json__sep(j);
	pmt_buf__putc(j->b, '"');
	pmt_buf__hex(j->b, v);
	pmt_buf__putc(j->b, '"');
}

static inline void pmt_json__field_str(struct pmt_json *j, const char *k, const char *s)
{
	pmt_json__key(j, k);
	pmt_json__str(j, s);
}

static inline void pmt_json__field_strn(struct pmt_json *j, const char *k, const char *s, size_t n)
{
	pmt_json__key(j, k);
	pmt_json__strn(j, s, n);
}

static inline void pmt_json__field_u64(struct pmt_json *j, const char *k, uint64_t v)
{
	pmt_json__key(j, k);
	pmt_json__u64(j, v);
}

static inline void pmt_json__field_s64(struct pmt_json *j, const char *k, int64_t v)
{
	pmt_json__key(j, k);
	pmt_json__s64(j, v);
}

static inline void pmt_json__field_bool(struct pmt_json *j, const char *k, bool v)
{
	pmt_json__key(j, k);
	pmt_json__bool(j, v);
}

#endif
