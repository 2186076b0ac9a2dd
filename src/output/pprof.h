/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pprof profiles: perftools.profiles.Profile (profile.proto) encoded by
 * hand (varints and length-delimited fields; the few messages pprof
 * needs) and gzip'd with zlib, as go tool pprof, Pyroscope and Parca
 * read them. Strings, functions, mappings and locations are interned:
 * each distinct one is stored once, with a bound set by the caller's
 * input (the aggregation's keys).
 */
#ifndef PMT_PPROF_H
#define PMT_PPROF_H

#include <stdbool.h>
#include <stdint.h>

struct pmt_pprof;

/* A profile of samples/count, and (type, unit) when not NULL (e.g.
 * cpu/nanoseconds) whose value is count * period, or each sample's own
 * value when period is 0 (off-cpu/nanoseconds). */
struct pmt_pprof *pmt_pprof__new(const char *type, const char *unit, int64_t period);
void pmt_pprof__free(struct pmt_pprof *p);
void pmt_pprof__times(struct pmt_pprof *p, int64_t time_ns, int64_t duration_ns);

/* The id of a mapping (interned by key: a process and its start); file
 * and build_id (hex) may be NULL. */
uint64_t pmt_pprof__mapping(struct pmt_pprof *p, uint64_t key, uint64_t start, uint64_t limit,
			    uint64_t offset, const char *file, const char *build_id);
/* A location's line: its function (interned by name and file; file
 * NULL or "" when unknown), and line (0 when unknown). */
struct pmt_pprof_line {
	const char *name, *file;
	int64_t line;
};
/* The id of the location of addr (interned by key and addr; shown as
 * address shown) in mapping (0: none), at lines[0..n): the functions
 * inlined there, innermost first, then the one holding it (pprof's
 * order). */
uint64_t pmt_pprof__location(struct pmt_pprof *p, uint64_t key, uint64_t addr, uint64_t shown,
			     uint64_t mapping, const struct pmt_pprof_line *lines, int n);

/* The id of the location of addr (key as above) if it has one, else 0. */
uint64_t pmt_pprof__location_id(struct pmt_pprof *p, uint64_t key, uint64_t addr);

/* A sample label: a string value, or a number when str is NULL. */
struct pmt_pprof_label {
	const char *key;
	const char *str;
	int64_t num;
};

/* Frames locs[0..n) innermost first, seen count times (value: the second
 * type's, where its period is 0). 0 or -ENOMEM. */
int pmt_pprof__sample(struct pmt_pprof *p, const uint64_t *locs, int n, uint64_t count,
		      uint64_t value, const struct pmt_pprof_label *labels, int nlabels);
/* Encode and gzip into *out (caller frees). 0 or -errno. */
int pmt_pprof__gzip(struct pmt_pprof *p, uint8_t **out, size_t *len);
/* Encode, gzip and write to path. 0 or -errno. */
int pmt_pprof__write(struct pmt_pprof *p, const char *path);
/* The encoded Profile (not gzip'd), for tests; caller frees. */
int pmt_pprof__encode(struct pmt_pprof *p, uint8_t **out, size_t *len);

#endif
