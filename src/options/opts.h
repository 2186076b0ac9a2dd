/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Command-line options. Parsing is pure: no kernel access, no output. */
#ifndef PMT_OPTS_H
#define PMT_OPTS_H

#include "options/kinds.h"
#include "util/error.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PMT_MAX_MAPS 16	    /* a program's maps (PMT_AGG_MAPS) */
#define PMT_BLOCK_UPDATES 8 /* map updates a program's block makes */

/* PMT_PROBE_TRACEPOINT, PMT_PROBE_PERF, ...: the table of kinds.h */
enum pmt_probe_kind {
#define KIND_ENUM(id, prefix, option, s, arg, needs, help, ret, prov) PMT_PROBE_##id,
	PMT_PROBE_KINDS(KIND_ENUM)
#undef KIND_ENUM
		PMT_PROBE__COUNT,
	PMT_PROBE_NONE = -1,
};

/* --kprobe-mode: how kernel function probes attach */
enum pmt_kprobe_mode {
	PMT_KMODE_AUTO, /* fentry/fexit where the kernel can, else kprobes */
	PMT_KMODE_FENTRY,
	PMT_KMODE_KPROBE,
	/* a program's kprobe: probes (no option names it): kprobes where the
	 * kernel has them, as bpftrace attaches them, else fentry/fexit */
	PMT_KMODE_PROGRAM,
};

/* "kprobe:vfs_read" -> PMT_PROBE_KPROBE and "vfs_read"; a spec with no
 * known prefix is a tracepoint ("tracepoint:" and "tp:" are taken too). */
enum pmt_probe_kind pmt_probe_kind_of(const char *spec, const char **rest);
/* "kprobe", "kretprobe", ...: the prefix of a kind ("event" for -e's) */
const char *pmt_probe_kind_name(enum pmt_probe_kind kind);
/* The kind probing the return of a kind's function (--latency FUNC), or
 * PMT_PROBE_NONE */
enum pmt_probe_kind pmt_probe_kind_return(enum pmt_probe_kind kind);

struct pmt_probe_arg {
	enum pmt_probe_kind kind;
	const char *spec;   /* as given: "sched:sched_*" */
	const char *filter; /* --filter after it, or NULL */
	const char *printf; /* --printf after it ('"FMT", ARGS...'), or NULL */
	const char *where;  /* a program's: "FILE:LINE" of the probe, or NULL */
	int block;	    /* a program's: its block's number (a list shares it); -1 */
	/* a program's block's statements (saving values: filter/expr.h's
	 * pmt_expr__statements), or NULL; stmts_only: all its block does */
	const char *stmts;
	bool stmts_only;
	/* a program's block's printf inside an if: the condition it is
	 * under, or NULL */
	const char *print_guard;
	/* a program's block's map updates, in order: which maps (0 the
	 * options' agg, i their more[i - 1]), each under its condition (if;
	 * NULL: none), with keys and value of the block's own where they
	 * are not the map's (NULL: the map's). nupd 0: agg's alone, as the
	 * options give it */
	int upd[PMT_BLOCK_UPDATES];
	const char *upd_guard[PMT_BLOCK_UPDATES];
	const char *upd_keys[PMT_BLOCK_UPDATES], *upd_value[PMT_BLOCK_UPDATES];
	int nupd;
	/* a program's interval:s:N block that prints: one CPU's cpu-clock
	 * sampled every every_ns, whatever the target (bpftrace's
	 * interval); 0 otherwise */
	uint64_t every_ns;
};

enum pmt_mode {
	PMT_MODE_TRACE,
	PMT_MODE_LIST,
	PMT_MODE_INFO,
	PMT_MODE_HELP,
	PMT_MODE_VERSION,
};

#define PMT_DEFAULT_PAGES 256 /* per CPU: 1 MiB with 4 KiB pages */
/* ... streaming stacks, records 5-20 times a bare one's: 4 MiB */
#define PMT_STACK_PAGES 1024
/* ... at most this much over all CPUs when chosen by the probes' number */
#define PMT_RING_BUDGET (256ul << 20)
#define PMT_DEFAULT_MAX_KEYS 10240
#define PMT_LHIST_MAX_BUCKETS 10000
#define PMT_DEFAULT_FREQ 4000  /* samples/s per CPU, as perf record */
#define PMT_DEFAULT_STR_LEN 64 /* --str-len: bpftrace's default */
#define PMT_MAX_COUNTERS 4     /* --counter events a run (PMT_COUNTERS) */

enum pmt_agg_fn {
	PMT_FN_NONE, /* stream events */
	PMT_FN_COUNT,
	PMT_FN_SUM,
	PMT_FN_AVG,
	PMT_FN_MIN,
	PMT_FN_MAX,
	PMT_FN_STATS,
	PMT_FN_HIST,
	PMT_FN_LHIST,
};

/* --count/--sum/--hist/... --by, --latency: aggregated in the kernel */
struct pmt_agg_opts {
	enum pmt_agg_fn fn;
	const char *expr;	   /* value: FIELD[*|/N]; NULL for count/latency */
	int64_t lmin, lmax, lstep; /* --lhist */
	char *expr_copy;	   /* expr when made by the parser: freed with the options */
	uint32_t lbuckets;	   /* --lhist: steps from MIN to MAX, rounded up */
	const char *by;		   /* "comm,pid" */
	int top;		   /* 0 = all */
	double interval;	   /* 0 = at exit only */
	/* a program's interval: what its time("FORMAT") prints before the
	 * map (strftime's format), for the clock's line; NULL: that line */
	const char *head;
	bool no_end_print; /* a program's END clears the map: not printed then */
	bool keep;	   /* intervals accumulate */
	int max_keys;
	/* --latency START,END; END NULL: START's return (kprobe:F, uprobe:P:S) */
	const char *lat_start, *lat_end;
	const char *match; /* START_FIELD=END_FIELD */
	/* a program's predicates on START and END (NULL: none) */
	const char *lat_filters[2];
	const char *unit; /* latency: ns us ms s */
	/* --counter EVENT...: what latency counts instead of time; with
	 * several, each call updates one entry a counter (key "counter") */
	const char *counter; /* the first, or NULL */
	const char *const *counters;
	int ncounters;
	/* --offcpu: time off the CPU (us) by stack, from sched_switch */
	bool offcpu;
	int offcpu_state;	       /* --state: 0 all, 1 blocked, 2 runnable */
	uint64_t min_block, max_block; /* --min-block/--max-block, us (max 0: none) */
	bool folded;		       /* --folded: stacks as folded lines */
	const char *flamegraph;	       /* --flamegraph FILE.svg */
	const char *pprof;	       /* --pprof FILE.pb.gz */
	bool json;		       /* --json: maps printed as JSON */
	/* --str-len: bytes str(F) reads, NUL included (keys, filters) */
	int str_len;
	const char *map; /* a program's map name after '@' ("" for @), or NULL */
	/* a program's maps saving func or probe (" NAME NAME "): a key read
	 * from one shows the probe's function or name */
	const char *func_maps, *probe_maps;
	/* ... saving kstack: a key read from one is a kernel stack */
	const char *kstack_maps;
};

/* --listen [ADDR:]PORT: serve the aggregation as metrics */
struct pmt_listen_opts {
	const char *addr;	/* as given; NULL: loopback */
	char host[64];		/* ADDR without brackets; "" for loopback */
	int port;		/* 0: any free port */
	const char *metric;	/* --metric NAME, or NULL for the default */
	const char *web_config; /* --web-config FILE: TLS, basic auth; or NULL */
};

/* "count", "hist", ...: the option's and the JSON output's name. */
const char *pmt_agg_fn__name(enum pmt_agg_fn fn);

struct pmt_opts {
	enum pmt_mode mode;
	struct pmt_probe_arg *probes;
	int nr_probes;
	size_t probes_cap;
	pid_t pid;	    /* -p; 0 = none */
	bool system_wide;   /* -a, or the default without -p/CMD */
	const char *cpus;   /* -C list as given, NULL = all */
	const char *cgroup; /* --cgroup: only its processes and its descendants' */
	const char *output; /* -o */
	bool json;
	bool raw; /* text: every field as name=value, not the print fmt */
	bool quiet;
	int verbose;
	double duration;       /* -d seconds; 0 = until stopped */
	int buffer_pages;      /* per CPU, power of two (the base, unless set) */
	bool buffer_pages_set; /* --buffer-pages given: used as it is */
	char **cmd;	       /* -- CMD ARGS..., NULL-terminated; NULL = none */
	bool cmd_after_stack;  /* COMMAND right after a bare --stack: maybe a typo */
	struct pmt_agg_opts agg;
	struct pmt_listen_opts listen;
	/* PMU sampling (-e) */
	uint64_t period;	 /* --period; 0 = use freq */
	unsigned freq;		 /* --freq; PMT_DEFAULT_FREQ unless --period */
	uint8_t stack;		 /* --stack: PMT_STACK_KERNEL | PMT_STACK_USER */
	bool unwind_fp;		 /* --unwind fp: user stacks by frame pointers */
	bool no_demangle;	 /* --no-demangle: C++/Rust names as the files have them */
	bool no_inline;		 /* --no-inline: no inlined frames nor source lines from DWARF */
	bool no_python;		 /* --no-python: no Python frames among user frames */
	bool no_debug_cache;	 /* --no-debug-cache: compressed DWARF inflated in memory */
	const char *debug_cache; /* --debug-cache DIR; NULL: the default */
	enum pmt_kprobe_mode kprobe_mode;
	/* counting */
	bool stat;				/* --stat: -e events counted */
	const char *counters[PMT_MAX_COUNTERS]; /* --counter EVENT (--latency) */
	int nr_counters;
	const char *str_args;  /* --str F[,G]: strings streamed, as given */
	const char *list_glob; /* --list [GLOB] */
	const char *info_spec; /* --info CAT:NAME */
	/* a bpftrace program (-e 'PROGRAM', or FILE.bt): read into the
	 * probes and the aggregation above (lang/program.h) */
	const char *program;	  /* its text */
	const char *program_name; /* "-e", or the file */
	char *program_file;	  /* FILE.bt's text, owned */
	struct pmt_program *prog; /* what it was read into, owned */
	const char *begin;	  /* what its BEGIN prints, or NULL */
	/* its maps after the first (which is agg): each as agg says one */
	struct pmt_agg_opts more[PMT_MAX_MAPS - 1];
	int nmore;
	char **cmd_words; /* -c CMD split at spaces, owned */
};

/* Parse argv; on a usage error returns -EINVAL with a message in err. */
int pmt_opts__parse(int argc, char **argv, struct pmt_opts *o, struct pmt_error *err);
/* Perf ring pages per CPU for nprobes probes streamed on ncpus CPUs of
 * page_size bytes: --buffer-pages as given, else the base times the
 * probes' sixteens (up to 16 times), within PMT_RING_BUDGET in all. */
int pmt_opts__ring_pages(const struct pmt_opts *o, uint32_t nprobes, int ncpus, long page_size);
void pmt_opts__free(struct pmt_opts *o);
/* --help (usage.c) */
const char *pmt_usage(void);
/* The i-th long option name, NULL past the last (completion, tests). */
const char *pmt_opts__name(size_t i);

#endif
