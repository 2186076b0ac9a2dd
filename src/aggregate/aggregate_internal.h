/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Private to src/aggregate/: the state compile.c builds, the snapshot
 * (snapshot.c) and the sinks that write it (sink_*.c, pprof.c). */
#ifndef PMT_AGG_INTERNAL_H
#define PMT_AGG_INTERNAL_H

#include "aggregate/aggregate.h"
#include "util/pieces.h"

/* How a key part is shown. */
enum pmt_key_disp {
	PMT_DISP_PLAIN,
	PMT_DISP_HIDDEN,    /* pid behind a sym key */
	PMT_DISP_SYM,	    /* address -> symbol (pid: the part before) */
	PMT_DISP_KSTACK,    /* stack key -> kernel frames */
	PMT_DISP_USTACK,    /* tgid << 32 | hash -> user frames */
	PMT_DISP_COUNTER,   /* index -> the --counter's event name */
	PMT_DISP_NTOP,	    /* an IPv4 address (4 bytes as in memory) -> a.b.c.d, an IPv6
			     * one (PMT_KEY_ADDR6) -> inet_ntop's */
	PMT_DISP_CGROUP,    /* cgroup v2 id -> its path */
	PMT_DISP_CONTAINER, /* cgroup v2 id -> the container id in its path */
	PMT_DISP_UNIT,	    /* cgroup v2 id -> the systemd unit */
	PMT_DISP_FUNC,	    /* probe index -> its function (bpftrace's func) */
	/* a session's probe id (a program's saved func or probe) -> its
	 * function, its name */
	PMT_DISP_FUNC_OF,
	PMT_DISP_PROBE_OF,
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

struct pmt_agg_snap;

/*
 * A sink writes one snapshot in one form. The sinks are chosen once, when
 * the aggregation is compiled (pmt_agg__sinks), from the options: text or
 * JSON (bpftrace's maps), folded stacks, a flame graph, a pprof profile.
 * A new form is a new sink, not a branch in the printer.
 */
struct pmt_agg_sink {
	const char *name;
	int (*write)(struct pmt_agg_snap *snap, struct pmt_output *out);
};

extern const struct pmt_agg_sink pmt_agg_sink_text, pmt_agg_sink_json, pmt_agg_sink_folded,
	pmt_agg_sink_flamegraph, pmt_agg_sink_pprof;

#define PMT_AGG_SINKS 4

struct pmt_agg {
	const struct pmt_agg_opts *opts;
	const struct pmt_agg_sink *sinks[PMT_AGG_SINKS]; /* NULL-ended */
	struct pmt_keylayout keys;
	char **probe_names; /* the probes' names (metrics, titles) */
	char **probe_keys;  /* PMT_KEY_PROBE keys show these (bpftrace's probe) */
	/* the session's probe id's name, for PMT_DISP_FUNC_OF and _PROBE_OF
	 * keys (NULL: shown as numbers) */
	pmt_agg_probe_name_fn *probe_name;
	const void *probe_ctx;
	size_t nprobes;
	int key_bytes;			   /* of pmt_agg_key.data that --by uses */
	uint32_t flat_slots;		   /* no keys: slots of pmt_agg_flat, else 0 */
	bool value_signed;		   /* a probe's value can be negative */
	uint32_t lat_unit_ns;		   /* --latency: ns per unit of the values */
	bool lat_start_keys;		   /* --latency: the start builds the keys */
	const char *prof_type, *prof_unit; /* --pprof's second sample type, or NULL */
	int64_t prof_period;
	int64_t start_wall_ns;
	/* a program's other maps (its 2nd, 3rd, ...: index 1 + i), each
	 * compiled alike; keys in the hash say which is theirs (pad) */
	struct pmt_agg *more[PMT_AGG_MAPS - 1];
	size_t nmore;
	int top;			 /* this print's top (print(@MAP, N)); 0: the options' */
	struct pmt_error *err;		 /* while compiling: where a problem is told */
	struct pmt_exprs *exprs;	 /* while compiling: the session's programs */
	struct pmt_exprs *probe_exprs;	 /* ... and the expressions of the probe at hand */
	const struct pmt_typesys *types; /* the kernel's, for member chains (or NULL) */
};

/* A run of entries with the same key data: one line or one histogram. */
struct pmt_agg_group {
	const struct pmt_agg_entry *e;
	size_t n;
	struct pmt_agg_val total;
	double sortval;
	/* symbolic keys: the key as shown (its pieces in the snapshot's),
	 * merged by; pmt_agg_snap__text reads it */
	uint32_t *text;
};

/* How a group's key reads when groups are merged by what they show. */
enum pmt_agg_form { PMT_FORM_KEY, PMT_FORM_FOLDED, PMT_FORM__MAX };

/*
 * One snapshot: the entries read from the maps as deltas since the last
 * print (totals under --keep), sorted by key; made once by pmt_agg__print
 * and handed to each sink. Groups are made on a sink's first asking.
 */
struct pmt_agg_snap {
	const struct pmt_agg *a;
	const struct pmt_agg_io *io;
	struct pmt_agg_entry *e;
	size_t n;
	uint64_t now_ns;
	struct pmt_error *err; /* what a sink could not do */
	struct pmt_agg_group *groups[PMT_FORM__MAX];
	size_t ngroups[PMT_FORM__MAX];
	struct pmt_pieces pieces; /* of the groups' texts */
	struct pmt_buf text;	  /* pmt_agg_snap__text's */
};

/* g's text (NULL: none, the key is shown from its entry), valid until
 * the next call. */
const char *pmt_agg_snap__text(struct pmt_agg_snap *s, const struct pmt_agg_group *g);

/* The groups with events in this snapshot, keys shown by name merged
 * where they read the same (form: as key text, or as folded stacks);
 * key text sorted by value, smallest first, folded stacks by name. NULL
 * when out of memory. */
struct pmt_agg_group *pmt_agg_snap__groups(struct pmt_agg_snap *s, enum pmt_agg_form form,
					   size_t *n);
/* The sinks the options ask for (compile.c). */
void pmt_agg__sinks(struct pmt_agg *a);
/* Key as text ("comm, pid"; stacks as indented frame lines). */
void pmt_agg__key_text(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k);
/* comm;user frames;kernel frames, outermost first: one folded stack. */
void pmt_agg__folded_text(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
			  const struct pmt_agg_key *k);
bool pmt_agg__is_stack(uint8_t disp);
int pmt_agg_entry__cmp(const void *a, const void *b);
/* e sorted by pmt_agg_entry__cmp, where it is not already (a map's view
 * of the totals is: nothing moves). */
void pmt_agg_entries__sort(struct pmt_agg_entries *e);
/* Does --by hold stack, kstack or ustack? */
bool pmt_agg__has_stack_key(const struct pmt_agg *a);
/* t takes v in: counts and sums add, min and max widen. */
void pmt_agg_val__merge(struct pmt_agg_val *t, const struct pmt_agg_val *v);
/* The frames of a stack key part (value v, shown as disp) into
 * ips[PMT_STACK_DEPTH], innermost first; *pid: the process for user
 * frames (0 for kernel ones). Returns how many. */
int pmt_agg__stack_frames(const struct pmt_agg_io *io, uint8_t disp, uint64_t v, uint64_t *ips,
			  uint32_t *pid);
/* A user frame of an entry, with its file (a hash of its path and
 * build-id) */
struct pmt_agg_frame {
	uint64_t file;
	uint64_t key, addr; /* key: its pid, 0 for a frame named alike in every process */
	uint32_t pid;
};
/* The distinct user frames of e[0..n) but those known(ctx, key, addr)
 * says are (NULL: none), sorted by file then address, *out malloc'd:
 * each file's names made together need its DWARF once. -ENOMEM */
int pmt_agg__frames_by_file(const struct pmt_agg *a, const struct pmt_agg_io *io,
			    const struct pmt_agg_entry *e, size_t n,
			    bool (*known)(void *ctx, uint64_t key, uint64_t addr), void *ctx,
			    struct pmt_agg_frame **out, size_t *out_len);
/* String key part i: its bytes (n in *len), or PMT_KEY_FAULT_TEXT for a
 * str() read that failed (PMT_KEY_FAULT). */
#define PMT_KEY_FAULT_TEXT "<fault>"
const char *pmt_agg__key_string(const struct pmt_agg *a, const struct pmt_agg_key *k, int i,
				size_t *len);
/* Key part i (not a stack) as text. */
void pmt_agg__key_part(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_buf *b,
		       const struct pmt_agg_key *k, int i);
/* Key part i (not a stack) as a JSON value. */
void pmt_agg__key_json(const struct pmt_agg *a, const struct pmt_agg_io *io, struct pmt_json *j,
		       const struct pmt_agg_key *k, int i);

/* A print's text handed to the output once it holds SPILL_AT bytes, so
 * that a print of many stacks is not built whole in memory (twice: here
 * and in the output's buffer). */
void pmt_agg__spill(struct pmt_output *out, struct pmt_buf *b);

#endif
