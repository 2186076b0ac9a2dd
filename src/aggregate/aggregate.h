/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Aggregations (--count, --sum, --hist, ... --by, --latency). The kernel
 * side (bpf/aggregate.bpf.h) keeps one per-CPU entry per (key, bucket);
 * this module is everything else, and pure (no libbpf):
 *
 *   compile.c  options + probe formats -> each probe's struct pmt_agg_cfg,
 *              the key layout and the maps' sizes (struct pmt_agg_maps)
 *   entries.c  the CPUs' values of one key merged into one entry (the
 *              per-CPU key cache taken into account), sorted, and deltas
 *   snapshot.c one print's snapshot (sorted deltas, groups of entries by
 *              key) handed to the sinks the options chose (aggregate_internal.h)
 *   sink_text.c, sink_stacks.c, pprof.c: the sinks: bpftrace's text,
 *              JSON, folded stacks, a flame graph, a pprof profile
 *   metrics.c  the maps' totals as Prometheus/OpenMetrics (--listen)
 *
 * The loader (src/aggregate/maps_bpf.c) sizes and reads the maps; the session
 * owns a struct pmt_agg and never looks inside.
 */
#ifndef PMT_AGGREGATE_H
#define PMT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "abi.h"
#include "tracefs/format.h"
#include "options/opts.h"
#include "output/output.h"
#include "util/error.h"

struct pmt_syms;
struct pmt_agg;

/* One probe as the aggregation sees it; compile fills in action and cfg. */
struct pmt_agg_probe {
	const char *name;
	const char *probe; /* the probe key's text, as bpftrace's probe builtin says
			    * it ("tracepoint:sched:sched_switch"); NULL: name */
	const struct pmt_format *fmt;
	/* a program's: the condition its update is under (if), or NULL;
	 * its keys and value where another block's update gives the map
	 * its own (NULL: the map's, ao->by and ao->expr) */
	const char *guard, *by, *expr;
	uint8_t action;		/* out: enum pmt_action */
	struct pmt_agg_cfg cfg; /* out */
};

/* The name of the session's probe id as bpftrace spells it, into buf;
 * NULL: no such probe */
typedef const char *pmt_agg_probe_name_fn(const void *ctx, uint32_t id, char *buf, size_t len);

/* What the kernel maps must hold for this aggregation. */
struct pmt_agg_maps {
	uint32_t hash_entries; /* pmt_agg; 0: not used */
	uint32_t key_size;     /* of pmt_agg's keys */
	uint32_t flat_slots;   /* pmt_agg_flat (no --by); 0: not used */
	uint32_t lat_entries;  /* pmt_lat (--latency); 0: not used */
	bool lat_start_keys;   /* pmt_lat_keys too: the keys are the start's */
};

/* Frames of a stack key (innermost first) into ips[PMT_STACK_DEPTH];
 * returns how many (0 when the key is not known). key: a kstack key, or
 * with user a whole ustack key (tgid << 32 | id). */
typedef int (*pmt_stack_lookup_fn)(void *ctx, bool user, uint64_t key, uint64_t *ips);

/* What printing reads besides the entries. */
struct pmt_agg_io {
	struct pmt_syms *syms; /* may be NULL: names print as [unknown] */
	pmt_stack_lookup_fn stack;
	void *stack_ctx;
};

/* Fill probes[i].action/.cfg from the options; *stack gets the stack kinds
 * --by asks for (PMT_STACK_*). -errno with err set. *out is NULL when
 * ao->fn is none. */
struct pmt_exprs;
/* Keys and values that compute something add their expressions to
 * exprs (the session's table, filter/expr.h). */
int pmt_agg__compile(const struct pmt_agg_opts *ao, struct pmt_agg_probe *probes, size_t n,
		     struct pmt_exprs *exprs, uint8_t *stack, struct pmt_agg **out,
		     struct pmt_error *err);
void pmt_agg__free(struct pmt_agg *a);
/* A program's next map, compiled alike (its probes' cfg.map set to the
 * index it gets, returned): a prints it as map index, top entries (0:
 * its options'). Both then keep their keys in the hash, none flat.
 * -ENOSPC past PMT_AGG_MAPS. */
int pmt_agg__add_map(struct pmt_agg *a, struct pmt_agg *map);

/* How a's maps name the session's probes (keys read from a program's
 * saved func or probe) */
void pmt_agg__name_probes(struct pmt_agg *a, pmt_agg_probe_name_fn *fn, const void *ctx);
size_t pmt_agg__nmaps(const struct pmt_agg *a);
/* What bpftrace prints after a program's map of n entries (ao: its
 * options): for none, "@NAME: 0" (a count without keys) or a blank
 * line; then a blank line after an avg() or stats() map */
void pmt_agg__program_tail(const struct pmt_agg_opts *ao, size_t n, struct pmt_buf *b);
/* map index's name after '@' (its options'), or NULL past the last */
const char *pmt_agg__map_name(const struct pmt_agg *a, size_t index);
void pmt_agg__maps(const struct pmt_agg *a, struct pmt_agg_maps *m);
/* pmt_lat's entries on a machine of cpus possible CPUs: each CPU's LRU
 * list holds an equal share of them, at least PMT_LAT_CPU_SHARE. */
#define PMT_LAT_CPU_SHARE 512
uint32_t pmt_agg__lat_entries(const struct pmt_agg_maps *m, int cpus);
/* Kernel memory its maps take from their creation on (an estimate). */
uint64_t pmt_agg__kernel_bytes(const struct pmt_agg *a, int possible_cpus);
/* Do keys hold user addresses, named through processes' mappings? */
bool pmt_agg__wants_pids(const struct pmt_agg *a);

/* One merged map entry. */
struct pmt_agg_entry {
	struct pmt_agg_key key;
	struct pmt_agg_val val;
	/* val's count and sum at the last print (zero for a key new since):
	 * an interval's deltas */
	uint64_t base_count;
	int64_t base_sum;
	bool idle; /* no event in the interval last printed */
};

/* A snapshot being read: entries in any order until sorted. */
struct pmt_agg_entries {
	struct pmt_agg_entry *v;
	size_t n, cap;
};

/*
 * Totals drained from the kernel's hash (src/aggregate/totals.c): one
 * entry a key, values merged as drains bring them. A print reads them
 * where they are (sorted by map, then key), not a copy.
 */
struct pmt_agg_totals {
	struct pmt_agg_entries e;
	uint32_t *index; /* open addressing: at + 1 in e.v, 0 empty */
	size_t cap;	 /* of index: a power of two */
	size_t limit;	 /* keys at most (0: none) */
	bool sorted;	 /* e.v by pmt_agg_totals__map's order */
};
/* Merge x into the entry of its key (made if new). 0, -ENOSPC (a new key
 * past the limit) or -ENOMEM. */
int pmt_agg_totals__add(struct pmt_agg_totals *t, const struct pmt_agg_entry *x);
/* The same, x's values replacing the entry's (a keyless array's slots,
 * read whole each time); its base stays. */
int pmt_agg_totals__set(struct pmt_agg_totals *t, const struct pmt_agg_entry *x);
/* view: the entries of map (the key's pad >> PMT_AGG_MAP_SHIFT), sorted
 * as a print wants them, in place (view is not to be freed; valid until
 * the next add, set or cut). 0 or -ENOMEM. */
int pmt_agg_totals__map(struct pmt_agg_totals *t, uint32_t map, struct pmt_agg_entries *view);
/* Remove the n entries from e.v[at] on (those a forget left at the end of
 * a map's view). */
void pmt_agg_totals__cut(struct pmt_agg_totals *t, size_t at, size_t n);
void pmt_agg_totals__free(struct pmt_agg_totals *t);

/* Copies of the kernel's stored stacks (key: as aggregation keys hold it;
 * check: the stack's 64-bit hash, kept with its frames), found by key and
 * by content. */
struct pmt_stack_copy {
	uint64_t key, check;
	uint64_t *ips;
	uint32_t n;
	bool used;    /* marked by pmt_stack_copies__use before a sweep */
	bool rebased; /* its user frames rebased onto files (pmt_syms__rebase) */
};
struct pmt_stack_copies {
	struct pmt_stack_copy *v;
	size_t n, vcap;
	uint32_t *index;
	size_t cap;
	uint32_t *by_content; /* by owner (the key's high half) and check */
	size_t ccap;
};
const struct pmt_stack_copy *pmt_stack_copies__find(const struct pmt_stack_copies *s, uint64_t key);
/* 0 (copied, or held already with the same check), -EEXIST (another
 * stack held under key: the two cannot be told apart by key), -ENOMEM. */
int pmt_stack_copies__put(struct pmt_stack_copies *s, uint64_t key, uint64_t check,
			  const uint64_t *ips, uint32_t n);
/* The one key of a stack, whatever key the kernel stored it under: *id is
 * the key of a copy with hint's owner (its high half), this hash and
 * these frames, or else of a new copy under hint, or under the first key
 * of its owner no copy has (hint's low half stepped by the hash's high
 * half). 0 or -ENOMEM. Two stacks whose keys meet in the kernel (its
 * slots reused after a collection) so keep theirs apart here. */
int pmt_stack_copies__id(struct pmt_stack_copies *s, uint64_t hint, uint64_t hash,
			 const uint64_t *ips, uint32_t n, uint64_t *id);
/* Mark key's copy as used; the sweep frees the copies not marked since
 * the last sweep and returns how many. */
void pmt_stack_copies__use(struct pmt_stack_copies *s, uint64_t key);
size_t pmt_stack_copies__sweep(struct pmt_stack_copies *s);
void pmt_stack_copies__free(struct pmt_stack_copies *s);

/* Add key with its CPUs' values pc[0..ncpu) merged. cache (per CPU, read
 * before the hash; NULL for none) replaces a CPU's value where its slot
 * holds key further on. Entries with no events are not added. -ENOMEM. */
int pmt_agg_entries__add(struct pmt_agg_entries *e, const struct pmt_agg_key *key,
			 struct pmt_agg_val *pc, int ncpu, const struct pmt_agg_cache *cache);
void pmt_agg_entries__free(struct pmt_agg_entries *e);
/* The slot of one CPU's cache (struct pmt_agg_cache) that may hold key;
 * that slot if it does hold it (some of its events there), else NULL. */
const struct pmt_agg_cslot *pmt_agg_cache__slot(const struct pmt_agg_cache *c,
						const struct pmt_agg_key *key);
const struct pmt_agg_cslot *pmt_agg_cache__holding(const struct pmt_agg_cache *c,
						   const struct pmt_agg_key *key);

/* Read the symbols of every file the user stacks of cur name (asking
 * debuginfod for stripped ones' debug files), so they may come before
 * the print. */
void pmt_agg__touch_files(const struct pmt_agg *a, const struct pmt_agg_entries *cur,
			  const struct pmt_agg_io *io);
/* Print cur: every entry of the aggregation (values since the start,
 * each with its base: its values at the last print, zero for a key new
 * since), sorted here unless it is. The deltas printed are the values
 * less the base (all of them under --keep); each base is then set to
 * the values, and idle to whether the delta was empty. 0, or -errno
 * with err filled (a flame graph that cannot be written, out of
 * memory); every sink writes what it can. */
int pmt_agg__print(struct pmt_agg *a, struct pmt_agg_entries *cur, const struct pmt_agg_io *io,
		   struct pmt_output *out, uint64_t now_ns, struct pmt_error *err);

/*
 * --interval (deltas): after a print, each entry of cur it printed is
 * offered to drop(ctx, key, idle) (idle: no event in the interval
 * printed); those it takes (it returns true) are removed from cur (the
 * rest moved down, in order), so a long run holds what is live, not all
 * it ever saw. A key that comes back counts from zero. Returns how many.
 */
size_t pmt_agg__forget(const struct pmt_agg *a, struct pmt_agg_entries *cur,
		       bool (*drop)(void *ctx, const struct pmt_agg_key *key, bool idle),
		       void *ctx);
/* fn(ctx, user, v) for each stack part of key: the values
 * pmt_stack_lookup_fn takes. */
void pmt_agg__key_stacks(const struct pmt_agg *a, const struct pmt_agg_key *key,
			 void (*fn)(void *ctx, bool user, uint64_t v), void *ctx);
/* Each stack part of key replaced by what fn(ctx, user, v) returns. */
void pmt_agg__key_stacks_set(const struct pmt_agg *a, struct pmt_agg_key *key,
			     uint64_t (*fn)(void *ctx, bool user, uint64_t v), void *ctx);
/* A stack part that names no stack (the kernel stored none). */
bool pmt_agg__stack_none(bool user, uint64_t v);
uint64_t pmt_agg__stack_none_of(bool user, uint64_t v);

/* --pprof: the second sample type (e.g. "cpu", "nanoseconds") whose value
 * is count * period; type NULL: samples only. Also notes the start time. */
void pmt_agg__profile_info(struct pmt_agg *a, const char *type, const char *unit, int64_t period);
/* Keys holding stacks: --listen serves the aggregation as profiles
 * (pmt_agg__pprof), not as metrics (stacks make no labels). */
bool pmt_agg__is_profile(const struct pmt_agg *a);
/* A key names an address in its process (sym, usym()): the process must
 * be known when the key is printed. */
bool pmt_agg__names_in_process(const struct pmt_agg *a);
/* Entries e[0..n) as a gzip'd pprof profile, as --pprof writes it, of
 * the duration_ns from start_wall_ns (CLOCK_REALTIME); *gz the caller's
 * to free. 0 or -errno. */
int pmt_agg__pprof(const struct pmt_agg *a, const struct pmt_agg_entry *e, size_t n,
		   const struct pmt_agg_io *io, int64_t start_wall_ns, int64_t duration_ns,
		   uint8_t **gz, size_t *len);
/* The default metric name: pmtrace_PROBE_events, ..._latency_seconds. */
void pmt_agg__metric_name(const struct pmt_agg *a, struct pmt_buf *b);
/* Append the aggregation's metric families to b (name NULL: the default;
 * om: OpenMetrics, else the text format 0.0.4). cur holds the maps'
 * cumulative entries; it is sorted here and left to the caller. a is only
 * read: another thread may print it meanwhile. 0 or -ENOMEM. */
int pmt_agg__metrics(const struct pmt_agg *a, struct pmt_agg_entries *cur,
		     const struct pmt_agg_io *io, const char *name, bool om, struct pmt_buf *b);

/* Pure pieces, unit-tested. */
int32_t pmt_agg__log2_bucket(int64_t v);
/* "[4, 8)", "[1K, 2K)", "[0]", "(..., 0)" */
void pmt_agg__log2_label(struct pmt_buf *b, int32_t bucket);
void pmt_agg__lhist_label(struct pmt_buf *b, int32_t bucket, int64_t min, int64_t step,
			  uint32_t nbuckets);
/* bpftrace's bar: |@@@@    | of width 52 */
void pmt_agg__bar(struct pmt_buf *b, uint64_t v, uint64_t max);

#endif
